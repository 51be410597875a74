/* SPDX-License-Identifier: MIT */
/*
 * Spawn-to-exit of /bin/true, through zygoted (one daemon per forced tier, libzygote's generic
 * call: Spawn with "more", whose final reply comes at the exit) and without it (posix_spawn;
 * fork + libseccomp build + load + exec, the runc/systemd way). Plus the filter step alone,
 * timed inside a child, and throughput with concurrent clients.
 *
 * Every variant is measured once per round, in a shuffled order, so that drift of this noisy
 * machine hits all of them alike; ratios are then taken between samples of the same run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zygote.h>

#include "../bench/bench-opts.h"

#include "bench-opts.h"
#include "bench.h"
#include "profile.h"
#include "util.h"

#define BENCH_MAX_TIERS 8
#define SPAWN_METHOD "io.zygote.Launcher.Spawn"

static char *const true_argv[] = { (char *) "/bin/true", NULL };
static char *const empty_envp[] = { NULL };

struct tier_arg {
        char *name;         /* "inherit", "load", "clone" */
        const char *socket; /* points into argv */
};

static void tier_args_free(struct tier_arg *t, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(t[i].name);
}

static int add_tier_arg(struct tier_arg *t, size_t *n, const char *arg) {
        if (*n >= BENCH_MAX_TIERS) {
                fprintf(stderr, "zygote-bench: at most %d --tier\n", BENCH_MAX_TIERS);
                return -E2BIG;
        }
        if (bench_split_pair(arg, &t[*n].name, &t[*n].socket) < 0) {
                fprintf(stderr, "zygote-bench: --tier wants NAME=SOCKET, not '%s'\n", arg);
                return -EINVAL;
        }
        (*n)++;
        return 0;
}

/* --tier NAME=SOCKET, through bench_parse_opts: dest is a struct tier_opt. */
struct tier_opt {
        struct tier_arg *tiers;
        size_t *n;
};

static int tier_opt(const char *arg, void *dest) {
        struct tier_opt *o = dest;
        return add_tier_arg(o->tiers, o->n, arg);
}

static json_object *spawn_params(void) {
        json_object *p = json_object_new_object(), *argv = json_object_new_array();
        json_object_array_add(argv, json_object_new_string("/bin/true"));
        json_object_object_add(p, "argv", argv);
        json_object_object_add(p, "profile", json_object_new_string("default"));
        return p;
}

int bench_zygote_spawn(struct zy_conn *c, json_object *params, const char *tier, struct bench_spawn_stamps *ret) {
        struct zy_reply *first = NULL, *last = NULL;
        json_object *jt, *jpid, *jtask, *jcode;
        int r;

        ret->send = bench_now_ns();
        r = zy_call_send(c, SPAWN_METHOD, params, NULL, 0, ZY_CALL_MORE);
        if (r < 0)
                return r;
        r = zy_reply_read(c, 1, &first);
        if (r < 0)
                return r;
        ret->first = bench_now_ns();
        if (!first->continues) {
                /* The daemon answered once: it does not keep Spawn open until the exit. */
                zy_reply_free(first);
                return -EPROTO;
        }
        r = zy_reply_read(c, 0, &last);
        ret->exit = bench_now_ns();
        if (r < 0) {
                zy_reply_free(first);
                return r;
        }
        /* A daemon forced to one tier must really use it, or the figure means nothing. */
        /* NAME@VARIANT (two daemons of one tier, say with and without a feature): the tier is NAME */
        if (tier && (!json_object_object_get_ex(first->parameters, "tier", &jt) ||
                     strncmp(json_object_get_string(jt), tier, strcspn(tier, "@")) != 0 ||
                     json_object_get_string(jt)[strcspn(tier, "@")] != 0))
                r = -EMEDIUMTYPE;
        else if (!json_object_object_get_ex(first->parameters, "pid", &jpid))
                r = -EBADMSG;
        else if (!json_object_object_get_ex(last->parameters, "task", &jtask) ||
                 !json_object_object_get_ex(jtask, "exitCode", &jcode) || json_object_get_int(jcode) != 0)
                r = -ECHILD;
        else
                ret->pid = (long) json_object_get_int64(jpid);
        zy_reply_free(first);
        zy_reply_free(last);
        return r;
}

/* ret_ns[0]: to the exit; ret_ns[1]: to the spawn reply, which the daemon sends once the worker
 * has exec'd (EOF on its status pipe), the counterpart of posix_spawn returning. */
static int zygote_once(zy_conn *c, json_object *params, const char *tier, int64_t ret_ns[2]) {
        struct bench_spawn_stamps st;
        int r = bench_zygote_spawn(c, params, tier, &st);

        if (r < 0)
                return r;
        ret_ns[0] = st.exit - st.send;
        ret_ns[1] = st.first - st.send;
        return 0;
}

/* ret_ns[0]: to the exit; ret_ns[1]: to posix_spawn's return, which glibc makes wait until
 * the child has exec'd (CLONE_VFORK). */
static int posix_once(const posix_spawn_file_actions_t *fa, int64_t ret_ns[2]) {
        pid_t pid;
        int64_t t0 = bench_now_ns();
        int r = posix_spawn(&pid, "/bin/true", fa, NULL, true_argv, empty_envp);
        if (r != 0)
                return -r;
        int64_t t_spawned = bench_now_ns();
        r = bench_wait(pid, NULL);
        if (r < 0)
                return r;
        ret_ns[0] = bench_now_ns() - t0;
        ret_ns[1] = t_spawned - t0;
        return 0;
}

/* fork, then in the child what a runtime does per launch: build the filter with libseccomp,
 * load it, exec. The OCI JSON is parsed once in the parent (a runtime parses its config before
 * forking too), so the baseline is not charged for parsing. The child also times its build and
 * load and sends both through a CLOEXEC pipe before exec: the per-launch cost zygote removes,
 * from the very launches measured. ret_ns: spawn-to-exit, build + load, load alone. */
static int libseccomp_once(json_object *oci, int devnull, int64_t ret_ns[3]) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        int64_t d[2], t0;
        pid_t pid;
        int r;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        t0 = bench_now_ns();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                scmp_filter_ctx ctx;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(125);
                int64_t b0 = bench_now_ns();
                if (bench_oci_build(oci, 1, &ctx) < 0)
                        _exit(125);
                int64_t b1 = bench_now_ns();
                if (seccomp_load(ctx) < 0)
                        _exit(125);
                int64_t b2 = bench_now_ns();
                d[0] = b2 - b0;
                d[1] = b2 - b1;
                if (write(p[1], d, sizeof(d)) != (ssize_t) sizeof(d))
                        _exit(125);
                if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
                        _exit(125);
                execve("/bin/true", true_argv, empty_envp);
                _exit(127);
        }
        r = bench_wait(pid, NULL);
        int64_t t1 = bench_now_ns();
        if (r < 0)
                return r;
        p[1] = safe_close(p[1]);
        if (read(p[0], d, sizeof(d)) != (ssize_t) sizeof(d))
                return -EIO;
        ret_ns[0] = t1 - t0;
        ret_ns[1] = d[0];
        ret_ns[2] = d[1];
        return 0;
}

/* The filter step alone, timed inside a fresh child: what the load tier's worker does. */
static int filter_load_once(const struct sock_fprog *prog, unsigned flags, int64_t *ret_ns) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        int64_t dt;
        pid_t pid;
        int r;

        pid = bench_fork_measure(p);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(1);
                int64_t t0 = bench_now_ns();
                long k = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
                int64_t d = bench_now_ns() - t0;
                _exit(k == 0 && write(p[1], &d, sizeof(d)) == (ssize_t) sizeof(d) ? 0 : 1);
        }
        ssize_t n = read(p[0], &dt, sizeof(dt));
        r = bench_wait(pid, NULL);
        if (r < 0)
                return r;
        if (n != (ssize_t) sizeof(dt))
                return -EIO;
        *ret_ns = dt;
        return 0;
}

static void report_conn_error(const char *what, zy_conn *c, int r) {
        const char *step = NULL, *msg = NULL;
        int err = 0;
        fprintf(stderr, "zygote-bench: %s: %s", what, strerror(-r));
        if (c && zy_conn_error_name(c))
                fprintf(stderr, " (%s)", zy_conn_error_name(c));
        if (c && zy_conn_spawn_failure(c, &step, &err, &msg) >= 0)
                fprintf(stderr, " at step %s: %s", step, strerror(err));
        if (r == -EMEDIUMTYPE)
                fprintf(stderr, " (the daemon used another tier than the one it was forced to)");
        fputc('\n', stderr);
}

enum variant_kind {
        V_POSIX,
        V_TIER,
        V_LIBSECCOMP,
        V_FILTER_LOAD,
};

struct variant {
        enum variant_kind kind;
        size_t tier;      /* V_TIER: index into spawn_ctx.tiers */
        const char *name; /* key of its samples */
};

struct spawn_ctx {
        struct tier_arg tiers[BENCH_MAX_TIERS];
        size_t n_tiers;
        zy_conn *conns[BENCH_MAX_TIERS];
        json_object *params;
        json_object *oci;
        struct zp_profile *profile;
        struct sock_fprog prog;
        posix_spawn_file_actions_t fa;
        int devnull;
};

/* Runs v once; samples (NULL during warm-up) gets the result in us under v->name. */
static int run_variant(struct spawn_ctx *s, const struct variant *v, json_object *samples) {
        int64_t ns = 0, pair[2] = { 0, 0 }, lib[3] = { 0, 0, 0 };
        json_object *ja;
        int r = -EINVAL;

        switch (v->kind) {
        case V_TIER:
                r = zygote_once(s->conns[v->tier], s->params, s->tiers[v->tier].name, pair);
                if (r < 0) {
                        report_conn_error(v->name, s->conns[v->tier], r);
                        return r;
                }
                ns = pair[0];
                break;
        case V_POSIX:
                r = posix_once(&s->fa, pair);
                ns = pair[0];
                break;
        case V_LIBSECCOMP:
                r = libseccomp_once(s->oci, s->devnull, lib);
                ns = lib[0];
                break;
        case V_FILTER_LOAD:
                r = filter_load_once(&s->prog, s->profile->filter_flags, &ns);
                break;
        }
        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s: %s\n", v->name, strerror(-r));
                return r;
        }
        if (!samples)
                return 0;
        if (json_object_object_get_ex(samples, v->name, &ja))
                bench_push(ja, bench_us(ns));
        if (v->kind == V_POSIX || v->kind == V_TIER) {
                char key[64];
                snprintf(key, sizeof(key), "%s_to_exec", v->name);
                if (json_object_object_get_ex(samples, key, &ja))
                        bench_push(ja, bench_us(pair[1]));
        }
        if (v->kind == V_LIBSECCOMP) {
                if (json_object_object_get_ex(samples, "libseccomp_build_load", &ja))
                        bench_push(ja, bench_us(lib[1]));
                if (json_object_object_get_ex(samples, "libseccomp_load_only", &ja))
                        bench_push(ja, bench_us(lib[2]));
        }
        return 0;
}

int bench_cmd_spawn(int argc, char **argv) {
        struct spawn_ctx s = { .devnull = -EBADF };
        struct tier_opt to = { s.tiers, &s.n_tiers };
        const char *profile_path = NULL, *oci_path = NULL;
        unsigned long rounds = 2000, warmup = 50, max_seconds = 0, min_rounds = 200, done = 0;
        uint64_t seed = 0x5eed;
        const struct bench_opt opts[] = {
                { "tier", BENCH_OPT_CALL, &to, tier_opt },
                { "profile", BENCH_OPT_STRING, &profile_path, NULL },
                { "oci", BENCH_OPT_STRING, &oci_path, NULL },
                { "rounds", BENCH_OPT_ULONG, &rounds, NULL },
                { "warmup", BENCH_OPT_ULONG, &warmup, NULL },
                { "seed", BENCH_OPT_U64, &seed, NULL },
                { "max-seconds", BENCH_OPT_ULONG, &max_seconds, NULL },
                {},
        };
        _cleanup_free_ char *perr = NULL;
        json_object *out = NULL, *samples;
        int r, ret = 1;

        if (bench_parse_opts(argc, argv, "zygote-bench spawn", opts) != argc)
                goto finish;
        if (!profile_path || !oci_path || rounds == 0) {
                fprintf(stderr, "zygote-bench spawn: --profile, --oci and --rounds > 0 are required\n");
                goto finish;
        }

        r = zp_profile_load_file(profile_path, &s.profile, &perr);
        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s\n", perr ? perr : strerror(-r));
                goto finish;
        }
        s.prog = (struct sock_fprog){ .len = (unsigned short) s.profile->bpf_len, .filter = s.profile->bpf };
        if (bench_json_file(oci_path, &s.oci) < 0)
                goto finish;
        s.devnull = bench_devnull_stdio("zygote-bench", &s.fa);
        if (s.devnull < 0)
                goto finish;
        s.params = spawn_params();
        for (size_t i = 0; i < s.n_tiers; i++)
                if (bench_connect("zygote-bench", s.tiers[i].name, s.tiers[i].socket, &s.conns[i]) < 0)
                        goto finish;

        struct variant variants[3 + BENCH_MAX_TIERS];
        size_t n_variants = 0;
        variants[n_variants++] = (struct variant){ V_POSIX, 0, "posix_spawn" };
        for (size_t i = 0; i < s.n_tiers; i++)
                variants[n_variants++] = (struct variant){ V_TIER, i, s.tiers[i].name };
        variants[n_variants++] = (struct variant){ V_LIBSECCOMP, 0, "libseccomp_fork" };
        variants[n_variants++] = (struct variant){ V_FILTER_LOAD, 0, "filter_load" };
        unsigned order[3 + BENCH_MAX_TIERS];
        for (size_t i = 0; i < n_variants; i++)
                order[i] = (unsigned) i;

        out = json_object_new_object();
        samples = json_object_new_object();
        for (size_t i = 0; i < n_variants; i++) {
                json_object_object_add(samples, variants[i].name, json_object_new_array());
                if (variants[i].kind == V_POSIX || variants[i].kind == V_TIER) {
                        char key[64];
                        snprintf(key, sizeof(key), "%s_to_exec", variants[i].name);
                        json_object_object_add(samples, key, json_object_new_array());
                }
        }
        json_object_object_add(samples, "libseccomp_build_load", json_object_new_array());
        json_object_object_add(samples, "libseccomp_load_only", json_object_new_array());

        int64_t start = bench_now_ns();
        for (unsigned long round = 0; round < warmup + rounds; round++) {
                bench_shuffle(order, n_variants, &seed);
                for (size_t i = 0; i < n_variants; i++) {
                        r = run_variant(&s, &variants[order[i]], round < warmup ? NULL : samples);
                        if (r < 0)
                                goto finish;
                }
                if (round >= warmup)
                        done++;
                /* A time budget keeps a run on a loaded machine bounded; whole rounds only, so
                 * every variant keeps the same number of samples, paired by round. */
                if (max_seconds > 0 && done >= min_rounds &&
                    bench_now_ns() - start > (int64_t) max_seconds * 1000000000)
                        break;
        }

        json_object_object_add(out, "rounds", json_object_new_int64((int64_t) done));
        json_object_object_add(out, "rounds_asked", json_object_new_int64((int64_t) rounds));
        json_object_object_add(out, "warmup", json_object_new_int64((int64_t) warmup));
        json_object_object_add(out, "unit", json_object_new_string("us"));
        json_object *jp = json_object_new_object();
        json_object_object_add(jp, "name", json_object_new_string(s.profile->name));
        json_object_object_add(jp, "hash", json_object_new_string(s.profile->hash));
        json_object_object_add(jp, "bpf_instructions", json_object_new_int64((int64_t) s.profile->bpf_len));
        json_object_object_add(jp, "filter_flags", json_object_new_int64(s.profile->filter_flags));
        json_object_object_add(out, "profile", jp);
        json_object_object_add(out, "samples", samples);
        ret = bench_print(out) < 0 ? 1 : 0;
finish:
        for (size_t i = 0; i < s.n_tiers; i++)
                zy_conn_free(s.conns[i]);
        tier_args_free(s.tiers, s.n_tiers);
        json_object_put(out);
        json_object_put(s.params);
        json_object_put(s.oci);
        zp_profile_free(s.profile);
        if (s.devnull >= 0)
                posix_spawn_file_actions_destroy(&s.fa);
        safe_close(s.devnull);
        return ret;
}

/* ---- throughput --------------------------------------------------------------------------------- */

struct tp_shared {
        atomic_long remaining;
        atomic_int error;
        pthread_barrier_t start;
        const posix_spawn_file_actions_t *fa;
        const char *tier; /* NULL: posix_spawn */
};

struct tp_thread {
        pthread_t thread;
        struct tp_shared *shared;
        zy_conn *conn;
        json_object *params; /* one per thread: json-c objects are not thread-safe */
};

static void *tp_run(void *arg) {
        struct tp_thread *t = arg;
        struct tp_shared *s = t->shared;
        int64_t ns[2];
        int r = 0;

        pthread_barrier_wait(&s->start);
        while (atomic_fetch_sub(&s->remaining, 1) > 0) {
                r = s->tier ? zygote_once(t->conn, t->params, s->tier, ns) : posix_once(s->fa, ns);
                if (r < 0) {
                        int expected = 0;
                        atomic_compare_exchange_strong(&s->error, &expected, r);
                        /* Stop the others too: a round with a failure is not a measurement. */
                        atomic_store(&s->remaining, 0);
                        break;
                }
        }
        return NULL;
}

/* One round: n clients share `tasks` spawn-to-exit runs; returns tasks per second. */
static int tp_round(const char *tier, const char *socket, unsigned n, long tasks, const posix_spawn_file_actions_t *fa,
                    double *ret_rate) {
        struct tp_shared s = { .fa = fa, .tier = tier };
        struct tp_thread *th;
        size_t started = 0;
        int64_t t0, t1;
        int r = 0;

        atomic_init(&s.remaining, tasks);
        atomic_init(&s.error, 0);
        th = calloc(n, sizeof(*th));
        if (!th)
                return -ENOMEM;
        for (unsigned i = 0; i < n && r >= 0; i++) {
                th[i].shared = &s;
                if (tier) {
                        th[i].params = spawn_params();
                        r = zy_connect(socket, &th[i].conn);
                }
        }
        if (r >= 0 && pthread_barrier_init(&s.start, NULL, n + 1) != 0)
                r = -ENOMEM;
        if (r >= 0) {
                for (; started < n; started++)
                        if (pthread_create(&th[started].thread, NULL, tp_run, &th[started]) != 0)
                                break;
                if (started < n) {
                        /* Cannot release a barrier sized for n + 1: nothing sane is left to do. */
                        fprintf(stderr, "zygote-bench: pthread_create failed\n");
                        _exit(1);
                }
                pthread_barrier_wait(&s.start);
                t0 = bench_now_ns();
                for (unsigned i = 0; i < n; i++)
                        pthread_join(th[i].thread, NULL);
                t1 = bench_now_ns();
                pthread_barrier_destroy(&s.start);
                r = atomic_load(&s.error);
                if (r >= 0)
                        *ret_rate = (double) tasks / ((double) (t1 - t0) / 1e9);
        }
        for (unsigned i = 0; i < n; i++) {
                zy_conn_free(th[i].conn);
                json_object_put(th[i].params);
        }
        free(th);
        return r;
}

/* --clients 1,4,16 */
struct clients_opt {
        unsigned *v;
        size_t *n;
        size_t max;
};

static int clients_opt(const char *arg, void *dest) {
        struct clients_opt *o = dest;
        const char *p = arg;
        char *end;

        *o->n = 0;
        while (*p && *o->n < o->max) {
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || v == 0 || v > 256) {
                        fprintf(stderr, "zygote-bench: --clients wants counts 1..256, not '%s'\n", arg);
                        return -EINVAL;
                }
                o->v[(*o->n)++] = (unsigned) v;
                p = *end == ',' ? end + 1 : end;
        }
        return 0;
}

int bench_cmd_throughput(int argc, char **argv) {
        struct tier_arg tiers[BENCH_MAX_TIERS];
        size_t n_tiers = 0;
        unsigned clients[8] = { 1, 4, 16 };
        size_t n_clients = 3;
        unsigned long rounds = 8, tasks = 64;
        uint64_t seed = 0x7e57;
        struct tier_opt to = { tiers, &n_tiers };
        struct clients_opt co = { clients, &n_clients, ELEMENTSOF(clients) };
        const struct bench_opt opts[] = {
                { "tier", BENCH_OPT_CALL, &to, tier_opt },    { "clients", BENCH_OPT_CALL, &co, clients_opt },
                { "rounds", BENCH_OPT_COUNT, &rounds, NULL }, { "tasks", BENCH_OPT_COUNT, &tasks, NULL },
                { "seed", BENCH_OPT_U64, &seed, NULL },       {},
        };
        posix_spawn_file_actions_t fa;
        json_object *out = NULL;
        int r, ret = 1;
        _cleanup_close_ int devnull = -EBADF;

        if (bench_parse_opts(argc, argv, "zygote-bench throughput", opts) != argc)
                goto finish;
        if (n_clients == 0) {
                fprintf(stderr, "zygote-bench throughput: --clients must name at least one count\n");
                goto finish;
        }
        devnull = bench_devnull_stdio("zygote-bench throughput", &fa);
        if (devnull < 0)
                goto finish;

        out = json_object_new_object();
        json_object *jsamples = json_object_new_object(), *jtasks = json_object_new_object();
        size_t n_variants = 1 + n_tiers;
        unsigned order[1 + BENCH_MAX_TIERS];
        for (size_t i = 0; i < n_variants; i++)
                order[i] = (unsigned) i;

        for (size_t ci = 0; ci < n_clients; ci++) {
                unsigned n = clients[ci];
                /* Enough tasks that every client runs several: the round must not end with
                 * most clients idle. */
                long per_round = (long) (tasks > 8ul * n ? tasks : 8ul * n);
                char key[16];
                snprintf(key, sizeof(key), "%u", n);
                json_object *jlevel = json_object_new_object();
                json_object_object_add(jlevel, "posix_spawn", json_object_new_array());
                for (size_t i = 0; i < n_tiers; i++)
                        json_object_object_add(jlevel, tiers[i].name, json_object_new_array());
                json_object_object_add(jsamples, key, jlevel);
                json_object_object_add(jtasks, key, json_object_new_int64(per_round));

                /* One unrecorded warm-up round per variant. */
                for (unsigned long round = 0; round < rounds + 1; round++) {
                        bench_shuffle(order, n_variants, &seed);
                        for (size_t k = 0; k < n_variants; k++) {
                                unsigned v = order[k];
                                const char *tier = v == 0 ? NULL : tiers[v - 1].name;
                                double rate = 0;
                                r = tp_round(tier, v == 0 ? NULL : tiers[v - 1].socket, n, per_round, &fa, &rate);
                                if (r < 0) {
                                        fprintf(stderr, "zygote-bench: throughput %s x%u: %s\n",
                                                tier ? tier : "posix_spawn", n, strerror(-r));
                                        posix_spawn_file_actions_destroy(&fa);
                                        goto finish;
                                }
                                if (round > 0) {
                                        json_object *ja;
                                        json_object_object_get_ex(jlevel, tier ? tier : "posix_spawn", &ja);
                                        bench_push(ja, rate);
                                }
                        }
                }
        }
        posix_spawn_file_actions_destroy(&fa);
        json_object_object_add(out, "rounds", json_object_new_int64((int64_t) rounds));
        json_object_object_add(out, "unit", json_object_new_string("tasks/s"));
        json_object_object_add(out, "tasks_per_round", jtasks);
        json_object_object_add(out, "samples", jsamples);
        ret = bench_print(out) < 0 ? 1 : 0;
finish:
        tier_args_free(tiers, n_tiers);
        json_object_put(out);
        return ret;
}

/* ---- status ------------------------------------------------------------------------------------ */

int bench_cmd_status(int argc, char **argv) {
        zy_conn *c = NULL;
        struct zy_daemon_status *st = NULL;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: zygote-bench status SOCKET\n");
                return 2;
        }
        r = zy_connect(argv[1], &c);
        if (r >= 0)
                r = zy_get_status(c, &st);
        if (r < 0) {
                report_conn_error(argv[1], c, r);
                zy_conn_free(c);
                return 1;
        }
        json_object *out = json_object_new_object(), *jf = json_object_new_object(), *jps = json_object_new_array();
        json_object_object_add(out, "version", json_object_new_string(st->version));
        json_object_object_add(jf, "clone_filter", json_object_new_boolean(st->clone_filter));
        json_object_object_add(jf, "capbset_drop_mask", json_object_new_boolean(st->capbset_drop_mask));
        json_object_object_add(out, "features", jf);
        for (size_t i = 0; st->profiles && i < st->profiles->n_profiles; i++) {
                const struct zy_profile_info *p = st->profiles->profiles[i];
                json_object *jp = json_object_new_object();
                json_object_object_add(jp, "name", json_object_new_string(p->name));
                json_object_object_add(jp, "tier", json_object_new_string(p->tier));
                json_object_object_add(jp, "tier_reason", json_object_new_string(p->tier_reason ? p->tier_reason : ""));
                json_object_object_add(jp, "bpf_instructions", json_object_new_int64(p->bpf_instructions));
                json_object_object_add(jp, "longest_path", json_object_new_int64(p->longest_path));
                json_object_object_add(jp, "hash", json_object_new_string(p->hash ? p->hash : ""));
                json_object_object_add(jp, "reference_pid", json_object_new_int64(p->reference_pid));
                json_object_array_add(jps, jp);
        }
        json_object_object_add(out, "profiles", jps);
        r = bench_print(out);
        json_object_put(out);
        zy_daemon_status_free(st);
        zy_conn_free(c);
        return r < 0 ? 1 : 0;
}
