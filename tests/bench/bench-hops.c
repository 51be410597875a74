/* SPDX-License-Identifier: MIT */
/*
 * zygote-bench hops: the client's half of the per-hop breakdown (docs/BENCHMARKS.md, "Where the
 * time goes"). Each round runs, in a shuffled order, one posix_spawn of /bin/true and one Spawn
 * of /bin/true per tier, and records absolute CLOCK_MONOTONIC stamps (send, first reply or
 * posix_spawn's return, exit known) with the worker's pid. bench.py records the kernel's side
 * with `perf record -k mono` (the same clock) attached to this process, the daemons and their
 * references, and joins both by pid and time (report.hops_from_events()).
 *
 * The handshake with bench.py: after the warm-up rounds this process writes "ready\n" on stderr
 * and waits for one line on stdin, so that perf is attached before the measured rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zygote.h>

#include "bench-opts.h"
#include "bench.h"
#include "util.h"

#define HOPS_MAX_TIERS 4
#define SPAWN_METHOD "io.zygote.Launcher.Spawn"

static char *const true_argv[] = { (char *) "/bin/true", NULL };
static char *const empty_envp[] = { NULL };

struct hops_tier {
        char *name;
        const char *socket;
        zy_conn *conn;
};

struct hops_tiers {
        struct hops_tier t[HOPS_MAX_TIERS];
        size_t n;
};

static int hops_tier_opt(const char *arg, void *dest) {
        struct hops_tiers *ts = dest;

        if (ts->n >= HOPS_MAX_TIERS) {
                fprintf(stderr, "zygote-bench hops: at most %d --tier\n", HOPS_MAX_TIERS);
                return -E2BIG;
        }
        if (bench_split_pair(arg, &ts->t[ts->n].name, &ts->t[ts->n].socket) < 0) {
                fprintf(stderr, "zygote-bench hops: --tier wants NAME=SOCKET, not '%s'\n", arg);
                return -EINVAL;
        }
        ts->n++;
        return 0;
}

static int posix_sample(const posix_spawn_file_actions_t *fa, struct bench_spawn_stamps *ret) {
        pid_t pid;
        int r;

        ret->send = bench_now_ns();
        r = posix_spawn(&pid, "/bin/true", fa, NULL, true_argv, empty_envp);
        if (r != 0)
                return -r;
        ret->first = bench_now_ns();
        r = bench_wait(pid, NULL);
        ret->exit = bench_now_ns();
        ret->pid = pid;
        return r;
}

static void push_sample(json_object *array, const struct bench_spawn_stamps *s, unsigned long round) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "round", json_object_new_int64((int64_t) round));
        json_object_object_add(o, "pid", json_object_new_int64(s->pid));
        json_object_object_add(o, "send_ns", json_object_new_int64(s->send));
        json_object_object_add(o, "first_ns", json_object_new_int64(s->first));
        json_object_object_add(o, "exit_ns", json_object_new_int64(s->exit));
        json_object_array_add(array, o);
}

int bench_cmd_hops(int argc, char **argv) {
        struct hops_tiers ts = {};
        unsigned long rounds = 300, warmup = 20;
        uint64_t seed = 0x5eed;
        bool handshake = false;
        const struct bench_opt opts[] = {
                { "tier", BENCH_OPT_CALL, &ts, hops_tier_opt },    { "rounds", BENCH_OPT_COUNT, &rounds, NULL },
                { "warmup", BENCH_OPT_ULONG, &warmup, NULL },      { "seed", BENCH_OPT_U64, &seed, NULL },
                { "handshake", BENCH_OPT_FLAG, &handshake, NULL }, {},
        };
        posix_spawn_file_actions_t fa;
        json_object *params = NULL, *out = NULL, *samples = NULL;
        unsigned order[1 + HOPS_MAX_TIERS];
        int devnull = -EBADF, r, ret = 1;

        if (bench_parse_opts(argc, argv, "zygote-bench hops", opts) != argc)
                goto finish;
        devnull = bench_devnull_stdio("zygote-bench hops", &fa);
        if (devnull < 0)
                goto finish;
        params = json_object_new_object();
        json_object *jargv = json_object_new_array();
        json_object_array_add(jargv, json_object_new_string("/bin/true"));
        json_object_object_add(params, "argv", jargv);
        json_object_object_add(params, "profile", json_object_new_string("default"));
        for (size_t i = 0; i < ts.n; i++)
                if (bench_connect("zygote-bench hops", ts.t[i].name, ts.t[i].socket, &ts.t[i].conn) < 0)
                        goto finish;

        out = json_object_new_object();
        samples = json_object_new_object();
        json_object_object_add(samples, "posix_spawn", json_object_new_array());
        for (size_t i = 0; i < ts.n; i++)
                json_object_object_add(samples, ts.t[i].name, json_object_new_array());
        for (size_t i = 0; i <= ts.n; i++)
                order[i] = (unsigned) i;

        for (unsigned long round = 0; round < warmup + rounds; round++) {
                if (handshake && round == warmup) {
                        char line[16];
                        fputs("ready\n", stderr);
                        fflush(stderr);
                        if (!fgets(line, sizeof(line), stdin)) {
                                fprintf(stderr, "zygote-bench hops: no go on stdin\n");
                                goto finish;
                        }
                }
                bench_shuffle(order, ts.n + 1, &seed);
                for (size_t k = 0; k <= ts.n; k++) {
                        unsigned v = order[k];
                        struct bench_spawn_stamps s = {};
                        const char *name = v == 0 ? "posix_spawn" : ts.t[v - 1].name;

                        r = v == 0 ? posix_sample(&fa, &s) : bench_zygote_spawn(ts.t[v - 1].conn, params, name, &s);
                        if (r < 0) {
                                fprintf(stderr, "zygote-bench hops: %s: %s\n", name, strerror(-r));
                                goto finish;
                        }
                        if (round >= warmup)
                                push_sample(json_object_object_get(samples, name), &s, round - warmup);
                }
        }
        json_object_object_add(out, "rounds", json_object_new_int64((int64_t) rounds));
        json_object_object_add(out, "warmup", json_object_new_int64((int64_t) warmup));
        json_object_object_add(out, "pid", json_object_new_int64(getpid()));
        json_object_object_add(out, "clock", json_object_new_string("CLOCK_MONOTONIC"));
        json_object_object_add(out, "samples", samples);
        samples = NULL;
        ret = bench_print(out) < 0 ? 1 : 0;
finish:
        for (size_t i = 0; i < ts.n; i++) {
                zy_conn_free(ts.t[i].conn);
                free(ts.t[i].name);
        }
        json_object_put(samples);
        json_object_put(out);
        json_object_put(params);
        if (devnull >= 0)
                posix_spawn_file_actions_destroy(&fa);
        safe_close(devnull);
        return ret;
}
