/* SPDX-License-Identifier: MIT */
/*
 * filter-step: the seccomp step of a container start, alone, the way zygote-runc does it:
 *
 *   local    the `linux.seccomp` object serialized and compiled here by the profile module
 *            (what zygote-runc --no-zygote, and in kind runc and crun, do at every start);
 *   zygoted  zygote-runc's own call (container/filter-remote.c): connect, check zygoted's
 *            SO_PEERCRED, GetFilter by the object's key (a cache hit: the first, compiling call
 *            is made before timing), the object only on a miss, read the sealed memfd;
 *   none     no program at all: the cost of the harness below.
 *
 * Each sample then forks a child that loads the program (prctl NO_NEW_PRIVS, seccomp(2)) and
 * exits, and is timed until the child is reaped: the kernel's own check of the program counts,
 * and "none" is the fork and reap alone. The modes take turns within each round.
 *
 *   filter-step [--socket PATH] [--runs N] [--json] PROFILE.json...
 *
 * Without --socket the zygoted rows are left out. Prints a table (milliseconds, median
 * [p10-p90]) or, with --json, {"profile": {"mode": [samples in ms]}}.
 */
#include <errno.h>
#include <json-c/json.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-opts.h"
#include "profile.h"
#include "libcontainer.h"
#include "util.h"
#include "zygote.h"

enum mode { M_NONE, M_LOCAL, M_ZYGOTED, N_MODES };
static const char *const mode_names[N_MODES] = { "none", "local", "zygoted" };

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* The program for one mode: *ret_prog/len malloc'd (NULL for none). */
static int get_program(enum mode m, json_object *seccomp, const char *socket_path, struct sock_filter **ret_prog,
                       size_t *ret_len, unsigned *ret_flags) {
        *ret_prog = NULL;
        *ret_len = 0;
        *ret_flags = 0;
        if (m == M_LOCAL) {
                const char *text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
                struct zp_profile *p = NULL;
                _cleanup_free_ char *err = NULL;
                int r = zp_profile_load_buffer_with("seccomp", text, strlen(text), NULL, &p, &err);
                if (r < 0) {
                        fprintf(stderr, "filter-step: %s\n", err ? err : strerror(-r));
                        return r;
                }
                *ret_prog = TAKE_PTR(p->bpf);
                *ret_len = p->bpf_len;
                *ret_flags = p->filter_flags;
                zp_profile_free(p);
        } else if (m == M_ZYGOTED) {
                /* zygote-runc's own code (container/filter-remote.c): its trust check, the key first,
                 * the object on a miss, the memfd read; ZCT_FILTER_ZYGOTED makes a failure an
                 * error instead of a local compile */
                const struct zct_ctx c = { .filter = { .from = ZCT_FILTER_ZYGOTED, .socket = socket_path } };
                _cleanup_free_ char *err = NULL;
                struct zp_profile *p = NULL;
                char source[512];
                int r = zct_runc_filter_load(&c, "filter-step", seccomp, &p, source, sizeof(source), &err);
                if (r < 0) {
                        fprintf(stderr, "filter-step: GetFilter from %s: %s\n", socket_path, err ? err : strerror(-r));
                        return r;
                }
                *ret_prog = TAKE_PTR(p->bpf);
                *ret_len = p->bpf_len;
                *ret_flags = p->filter_flags;
                zp_profile_free(p);
        }
        return 0;
}

/* A child loads the program and exits; 0 when it did. */
static int load_in_child(const struct sock_filter *prog, size_t len, unsigned flags) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                struct sock_fprog fp = { .len = (unsigned short) len, .filter = (struct sock_filter *) prog };
                if (prog && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                             syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp) < 0))
                        _exit(1);
                _exit(0);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, size_t n, double q) {
        size_t i = (size_t) (q * (double) (n - 1) + 0.5);
        return sorted[i < n ? i : n - 1];
}

int main(int argc, char **argv) {
        const char *socket_path = NULL;
        unsigned long runs = 30;
        bool as_json = false;
        const struct bench_opt opts[] = {
                { "socket", BENCH_OPT_STRING, &socket_path, NULL },
                { "runs", BENCH_OPT_COUNT, &runs, NULL },
                { "json", BENCH_OPT_FLAG, &as_json, NULL },
                {},
        };
        json_object *out = json_object_new_object();
        int first = bench_parse_opts(argc, argv, "filter-step", opts);

        if (first < 0 || first >= argc) {
                fprintf(stderr, "usage: filter-step [--socket PATH] [--runs N] [--json] PROFILE.json...\n");
                return 2;
        }
        if (!as_json)
                printf("%-28s %-8s %6s  %s\n", "profile", "mode", "insns", "ms: median [p10-p90]");
        for (int a = first; a < argc; a++) {
                json_object *seccomp = json_object_from_file(argv[a]);
                size_t n_modes = socket_path ? N_MODES : M_ZYGOTED;
                double *samples[N_MODES];
                size_t lens[N_MODES] = {};
                json_object *per = json_object_new_object();

                if (!seccomp) {
                        fprintf(stderr, "filter-step: %s: %s\n", argv[a], json_util_get_last_err());
                        return 1;
                }
                for (size_t m = 0; m < n_modes; m++) {
                        struct sock_filter *prog;
                        unsigned flags;
                        /* Warm-up, outside the timing: for zygoted this is the one compile. */
                        if (get_program((enum mode) m, seccomp, socket_path, &prog, &lens[m], &flags) < 0)
                                return 1;
                        if (load_in_child(prog, lens[m], flags) < 0) {
                                fprintf(stderr, "filter-step: %s: the %s program does not load\n", argv[a],
                                        mode_names[m]);
                                return 1;
                        }
                        free(prog);
                        samples[m] = calloc(runs, sizeof(double));
                }
                for (unsigned long i = 0; i < runs; i++)
                        for (size_t k = 0; k < n_modes; k++) {
                                size_t m = (k + i) % n_modes; /* turns rotate */
                                struct sock_filter *prog;
                                size_t len;
                                unsigned flags;
                                double t0 = now_ms();
                                if (get_program((enum mode) m, seccomp, socket_path, &prog, &len, &flags) < 0 ||
                                    load_in_child(prog, len, flags) < 0)
                                        return 1;
                                samples[m][i] = now_ms() - t0;
                                free(prog);
                        }
                for (size_t m = 0; m < n_modes; m++) {
                        json_object *arr = json_object_new_array();
                        for (unsigned long i = 0; i < runs; i++)
                                json_object_array_add(arr, json_object_new_double(samples[m][i]));
                        json_object_object_add(per, mode_names[m], arr);
                        qsort(samples[m], runs, sizeof(double), cmp_double);
                        if (!as_json) {
                                const char *base = strrchr(argv[a], '/');
                                printf("%-28s %-8s %6zu  %.2f [%.2f-%.2f]\n", base ? base + 1 : argv[a], mode_names[m],
                                       lens[m], quantile(samples[m], runs, 0.5), quantile(samples[m], runs, 0.1),
                                       quantile(samples[m], runs, 0.9));
                        }
                        free(samples[m]);
                }
                json_object_object_add(out, argv[a], per);
                json_object_put(seccomp);
        }
        if (as_json)
                printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY));
        json_object_put(out);
        return 0;
}
