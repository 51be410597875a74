/* SPDX-License-Identifier: MIT */
/*
 * zygote-bench cpu: the CPU one spawn-to-exit of /bin/true costs, per process class, from the
 * kernel's accounting (docs/BENCHMARKS.md, "CPU per spawn").
 *
 *   zygote-bench cpu --tier NAME=SOCKET... --pid NAME=DAEMON_PID... [--threads 1,16] [--spawns N]
 *                    [--rounds N]
 *
 * A caller of T threads (T - 1 of them idle: zygoted reads every thread of its caller) runs N
 * spawns one after the other, through posix_spawn and through each tier. The classes:
 * posix_spawn's parent (this process, RUSAGE_SELF) and child (RUSAGE_CHILDREN, reaped here);
 * zygote's client (RUSAGE_SELF), zygoted (its threads' schedstat), the profile's reference (the
 * same, its pid from GetStatus) and worker plus task (zygoted's cutime + cstime: the workers are
 * zygoted's children, reaped by it). Clock ticks for the last: N is chosen large enough that a
 * tick is a few percent at most.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zygote.h>

#include "bench-opts.h"
#include "bench.h"
#include "util.h"

#define CPU_MAX_TIERS 8

struct cpu_tier {
        char *name;
        const char *socket;
        long daemon_pid;
};

/* The CPU time of process pid in us: its own (every thread's sum_exec_runtime in
 * /proc/PID/task/TID/schedstat, in ns) and its reaped children's (cutime + cstime of
 * /proc/PID/stat, in clock ticks: the kernel keeps no finer sum of them). */
static int proc_cpu(long pid, double *ret_own, double *ret_children) {
        _cleanup_free_ char *text = NULL;
        unsigned long long f[2], own = 0;
        char path[96];
        const char *p;
        struct dirent *de;
        DIR *dir;
        int r;

        snprintf(path, sizeof(path), "/proc/%ld/task", pid);
        dir = opendir(path);
        if (!dir)
                return negative_errno();
        while ((de = readdir(dir))) {
                _cleanup_free_ char *st = NULL;
                unsigned long long ns;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%ld/task/%.20s/schedstat", pid, de->d_name);
                if (bench_read_file(path, &st, NULL) >= 0 && sscanf(st, "%llu", &ns) == 1)
                        own += ns;
        }
        closedir(dir);
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        r = bench_read_file(path, &text, NULL);
        if (r < 0)
                return r;
        /* after "(comm)", which may hold blanks: field 3 on; cutime is field 16 */
        p = strrchr(text, ')');
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %llu %llu", &f[0], &f[1]) != 2)
                return -EBADMSG;
        *ret_own = (double) own / 1000.0;
        *ret_children = (double) (f[0] + f[1]) * 1e6 / (double) sysconf(_SC_CLK_TCK);
        return 0;
}

static double tv_us(struct timeval tv) {
        return (double) tv.tv_sec * 1e6 + (double) tv.tv_usec;
}

static double rusage_us(int who) {
        struct rusage ru;

        getrusage(who, &ru);
        return tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
}

/* The idle threads of a caller of many. */
static int idle_pipe[2] = { -1, -1 };

static void *idle_thread(void *arg) {
        char c;

        (void) arg;
        (void) !read(idle_pipe[0], &c, 1); /* until the pipe's write end closes */
        return NULL;
}

static long reference_pid(const char *socket) {
        struct zy_daemon_status *st = NULL;
        zy_conn *c = NULL;
        long pid = 0;

        if (zy_connect(socket, &c) >= 0 && zy_get_status(c, &st) >= 0)
                for (size_t i = 0; st->profiles && i < st->profiles->n_profiles; i++)
                        if (strcmp(st->profiles->profiles[i]->name, "default") == 0)
                                pid = st->profiles->profiles[i]->reference_pid;
        zy_daemon_status_free(st);
        zy_conn_free(c);
        return pid;
}

static char *const true_argv[] = { (char *) "/bin/true", NULL };
static char *const empty_envp[] = { NULL };

static int run_posix(const posix_spawn_file_actions_t *fa, unsigned long spawns, json_object *out) {
        double self0 = rusage_us(RUSAGE_SELF), kids0 = rusage_us(RUSAGE_CHILDREN);

        for (unsigned long i = 0; i < spawns; i++) {
                pid_t pid;
                int r = posix_spawn(&pid, "/bin/true", fa, NULL, true_argv, empty_envp);

                if (r != 0)
                        return -r;
                r = bench_wait(pid, NULL);
                if (r < 0)
                        return r;
        }
        bench_push(json_object_object_get(out, "parent"), (rusage_us(RUSAGE_SELF) - self0) / (double) spawns);
        bench_push(json_object_object_get(out, "child"), (rusage_us(RUSAGE_CHILDREN) - kids0) / (double) spawns);
        return 0;
}

static int run_tier(const struct cpu_tier *t, unsigned long spawns, json_object *out) {
        double d0, dk0, r0 = 0, rk0, d1, dk1, r1 = 0, rk1, self0;
        long ref = reference_pid(t->socket);
        json_object *params = json_object_new_object(), *argv = json_object_new_array();
        zy_conn *c = NULL;
        int r;

        json_object_array_add(argv, json_object_new_string("/bin/true"));
        json_object_object_add(params, "argv", argv);
        json_object_object_add(params, "profile", json_object_new_string("default"));
        r = zy_connect(t->socket, &c);
        /* one spawn first: the connection's first call opens what later ones keep */
        if (r >= 0) {
                struct bench_spawn_stamps st;
                r = bench_zygote_spawn(c, params, t->name, &st);
        }
        if (r >= 0)
                r = proc_cpu(t->daemon_pid, &d0, &dk0);
        if (r >= 0 && ref > 0)
                r = proc_cpu(ref, &r0, &rk0);
        self0 = rusage_us(RUSAGE_SELF);
        for (unsigned long i = 0; r >= 0 && i < spawns; i++) {
                struct bench_spawn_stamps st;
                r = bench_zygote_spawn(c, params, t->name, &st);
        }
        if (r >= 0)
                r = proc_cpu(t->daemon_pid, &d1, &dk1);
        if (r >= 0 && ref > 0)
                r = proc_cpu(ref, &r1, &rk1);
        if (r >= 0) {
                bench_push(json_object_object_get(out, "client"), (rusage_us(RUSAGE_SELF) - self0) / (double) spawns);
                bench_push(json_object_object_get(out, "zygoted"), (d1 - d0) / (double) spawns);
                bench_push(json_object_object_get(out, "reference"), (r1 - r0) / (double) spawns);
                bench_push(json_object_object_get(out, "worker_task"), (dk1 - dk0) / (double) spawns);
        }
        zy_conn_free(c);
        json_object_put(params);
        return r;
}

static json_object *classes(const char *const *names) {
        json_object *o = json_object_new_object();

        for (; *names; names++)
                json_object_object_add(o, *names, json_object_new_array());
        return o;
}

struct cpu_opts {
        struct cpu_tier *tiers;
        size_t n;
};

static int tier_opt(const char *arg, void *dest) {
        struct cpu_opts *o = dest;

        if (o->n >= CPU_MAX_TIERS || bench_split_pair(arg, &o->tiers[o->n].name, &o->tiers[o->n].socket) < 0) {
                fprintf(stderr, "zygote-bench cpu: --tier wants NAME=SOCKET (at most %d)\n", CPU_MAX_TIERS);
                return -EINVAL;
        }
        o->n++;
        return 0;
}

static int pid_opt(const char *arg, void *dest) {
        struct cpu_opts *o = dest;
        _cleanup_free_ char *name = NULL;
        const char *v;

        if (bench_split_pair(arg, &name, &v) < 0)
                return -EINVAL;
        for (size_t i = 0; i < o->n; i++)
                if (strcmp(o->tiers[i].name, name) == 0) {
                        o->tiers[i].daemon_pid = atol(v);
                        return 0;
                }
        fprintf(stderr, "zygote-bench cpu: --pid %s names no --tier given before it\n", arg);
        return -EINVAL;
}

static int threads_opt(const char *arg, void *dest) {
        unsigned long *v = dest;
        char *end;

        v[0] = strtoul(arg, &end, 10);
        v[1] = *end == ',' ? strtoul(end + 1, &end, 10) : 0;
        if (*end || v[0] == 0 || v[0] > 64 || v[1] > 64) {
                fprintf(stderr, "zygote-bench cpu: --threads wants one or two counts 1..64\n");
                return -EINVAL;
        }
        return 0;
}

/* One caller of n_threads threads: every variant, rounds times. */
static int run_level(struct cpu_opts *o, unsigned long n_threads, unsigned long spawns, unsigned long rounds,
                     const posix_spawn_file_actions_t *fa, json_object *level) {
        static const char *const posix_names[] = { "parent", "child", NULL };
        static const char *const tier_names[] = { "client", "zygoted", "reference", "worker_task", NULL };
        pthread_t th[64];
        unsigned long started = 0;
        int r = 0;

        if (pipe2(idle_pipe, O_CLOEXEC) < 0)
                return negative_errno();
        for (; started + 1 < n_threads; started++)
                if (pthread_create(&th[started], NULL, idle_thread, NULL) != 0)
                        break;
        json_object_object_add(level, "posix_spawn", classes(posix_names));
        for (size_t i = 0; i < o->n; i++)
                json_object_object_add(level, o->tiers[i].name, classes(tier_names));
        for (unsigned long round = 0; r >= 0 && round < rounds; round++) {
                r = run_posix(fa, spawns, json_object_object_get(level, "posix_spawn"));
                for (size_t i = 0; r >= 0 && i < o->n; i++)
                        r = run_tier(&o->tiers[i], spawns, json_object_object_get(level, o->tiers[i].name));
        }
        idle_pipe[1] = safe_close(idle_pipe[1]);
        for (unsigned long i = 0; i < started; i++)
                pthread_join(th[i], NULL);
        idle_pipe[0] = safe_close(idle_pipe[0]);
        return started + 1 < n_threads ? -EAGAIN : r;
}

int bench_cmd_cpu(int argc, char **argv) {
        struct cpu_tier tiers[CPU_MAX_TIERS] = {};
        struct cpu_opts o = { tiers, 0 };
        unsigned long threads[2] = { 1, 16 }, spawns = 400, rounds = 2;
        const struct bench_opt opts[] = {
                { "tier", BENCH_OPT_CALL, &o, tier_opt },
                { "pid", BENCH_OPT_CALL, &o, pid_opt },
                { "threads", BENCH_OPT_CALL, threads, threads_opt },
                { "spawns", BENCH_OPT_COUNT, &spawns, NULL },
                { "rounds", BENCH_OPT_COUNT, &rounds, NULL },
                {},
        };
        posix_spawn_file_actions_t fa;
        json_object *out = NULL, *levels;
        int devnull, r = 0, ret = 1;

        if (bench_parse_opts(argc, argv, "zygote-bench cpu", opts) != argc)
                goto finish;
        for (size_t i = 0; i < o.n; i++)
                if (tiers[i].daemon_pid <= 0) {
                        fprintf(stderr, "zygote-bench cpu: --tier %s wants its --pid\n", tiers[i].name);
                        goto finish;
                }
        devnull = bench_devnull_stdio("zygote-bench cpu", &fa);
        if (devnull < 0)
                goto finish;
        out = json_object_new_object();
        levels = json_object_new_object();
        json_object_object_add(out, "unit", json_object_new_string("us CPU per spawn"));
        json_object_object_add(out, "spawns", json_object_new_int64((int64_t) spawns));
        json_object_object_add(out, "samples", levels);
        for (size_t k = 0; r >= 0 && k < 2 && threads[k]; k++) {
                json_object *level = json_object_new_object();
                char key[16];

                snprintf(key, sizeof(key), "%lu", threads[k]);
                json_object_object_add(levels, key, level);
                r = run_level(&o, threads[k], spawns, rounds, &fa, level);
        }
        posix_spawn_file_actions_destroy(&fa);
        close(devnull);
        if (r < 0)
                fprintf(stderr, "zygote-bench cpu: %s\n", strerror(-r));
        else
                ret = bench_print(out) < 0 ? 1 : 0;
finish:
        for (size_t i = 0; i < o.n; i++)
                free(tiers[i].name);
        json_object_put(out);
        return ret;
}
