/* SPDX-License-Identifier: MIT */
/*
 * zygote-bench: the measuring half of the benchmarks (tests/bench/run.sh drives it through
 * bench.py). Every subcommand prints one JSON object on stdout with raw samples; statistics,
 * ratios and targets are computed by bench.py so that the raw numbers stay checkable.
 *
 * Times are wall-clock, CLOCK_MONOTONIC, in microseconds (double) unless a name says otherwise.
 */
#pragma once

#include <json-c/json.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct zy_conn;

/* ---- zygote-bench.c: shared helpers ---------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t bench_now_ns(void);

static inline double bench_us(int64_t ns) {
        return (double) ns / 1000.0;
}

/* Reads a whole file into a malloc'd NUL-terminated buffer. */
int bench_read_file(const char *path, char **ret, size_t *ret_size);

/* Parses a JSON file; -EINVAL (with a message on stderr, this is the tool's edge) when bad. */
int bench_json_file(const char *path, json_object **ret);

/* A deterministic xorshift generator, so that a run's interleaving order can be replayed. */
uint64_t bench_rand(uint64_t *state);
/* Shuffles order[0..n) in place. */
void bench_shuffle(unsigned *order, size_t n, uint64_t *state);

/* Appends v to a JSON array of doubles. */
void bench_push(json_object *array, double v);

/* Forks a child that measures something and sends it back on the pipe p (made here, CLOEXEC):
 * returns 0 in the child, which writes to p[1] and must _exit(); in the parent the child's pid,
 * with p[1] already closed; a negative errno when the pipe or the fork fails. */
pid_t bench_fork_measure(int p[2]);

/* Reaps pid: 0 when it exited with 0, else -ECHILD; its wait status in *ret_status (may be NULL). */
int bench_wait(pid_t pid, int *ret_status);

/* Prints obj on stdout (pretty) and returns 0, or -EIO. */
int bench_print(json_object *obj);

/* The posix_spawn baseline's stdio: 0, 1 and 2 on /dev/null, as the daemon gives a task by
 * default. Returns the /dev/null fd (close it after posix_spawn_file_actions_destroy(fa)), or a
 * negative errno with a message that starts with tool (fa is then not initialized). */
int bench_devnull_stdio(const char *tool, posix_spawn_file_actions_t *fa);

/* zy_connect() to a tier's socket, or a message naming tool, tier and socket. */
int bench_connect(const char *tool, const char *tier, const char *socket, struct zy_conn **ret);

/* "name=value" -> name (malloc'd) and value (points into arg). */
int bench_split_pair(const char *arg, char **ret_name, const char **ret_value);

/* ---- bench-spawn.c: one Spawn, shared with bench-hops.c ----------------------------------------- */

/* Stamps of one spawn-to-exit, CLOCK_MONOTONIC in ns: the request sent (or posix_spawn called),
 * the spawn reply, which the daemon sends once the worker has exec'd (or posix_spawn's return),
 * the final reply at the task's exit (or the child reaped); and the worker's pid. */
struct bench_spawn_stamps {
        int64_t send, first, exit;
        long pid;
};

/* Spawn with params through the daemon on c, with "more": the spawn reply, then the final one at
 * the exit. A tier ("NAME" or "NAME@VARIANT"; NULL: any) the reply must name, or -EMEDIUMTYPE: a
 * daemon forced to one tier must really use it. -ECHILD unless the task exited with 0. */
int bench_zygote_spawn(struct zy_conn *c, json_object *params, const char *tier, struct bench_spawn_stamps *ret);

/* The subcommands; argv[0] is the subcommand name. They return a process exit code. */
int bench_cmd_spawn(int argc, char **argv);
int bench_cmd_throughput(int argc, char **argv);
int bench_cmd_syscall(int argc, char **argv);
int bench_cmd_compile(int argc, char **argv);
int bench_cmd_same_profile(int argc, char **argv);
int bench_cmd_status(int argc, char **argv);
int bench_cmd_hops(int argc, char **argv);
int bench_cmd_cpu(int argc, char **argv);

/* ---- oci-seccomp.c: what runc does per launch -------------------------------------------------- */

/* Builds a libseccomp filter from a plain OCI `linux.seccomp` object (defaultAction,
 * defaultErrnoRet, architectures, syscalls[] with names/action/errnoRet/args), the way runc's
 * libcontainer/seccomp does: unknown syscall names are skipped, rules whose action equals the
 * default action are skipped, several conditions on one argument index become separate rules.
 * Docker-only fields (archMap, includes, excludes) must already be resolved (bench.py does it).
 * optimize: libseccomp's SCMP_FLTATR_CTL_OPTIMIZE, 1 = the default priority-sorted linear
 * layout, 2 = binary tree. Returns 0 or a negative errno; -EINVAL for content it cannot use.
 * Allocates: call it in the child only when that is what is being measured. */
int bench_oci_build(json_object *seccomp, unsigned optimize, scmp_filter_ctx *ret);
