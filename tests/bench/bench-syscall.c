/* SPDX-License-Identifier: MIT */
/*
 * What a filter costs the sandboxed program on every system call: ns per call of an
 * argument-checked syscall (personality, which Docker's profile allows for five argument values
 * only) and of getpid (allowed whatever its arguments) under zygote's compiled profile (binary
 * tree), under the same profile compiled in libseccomp's default linear layout (what Docker and
 * runc load), and under no filter. Plus the BPF path lengths
 * that explain the difference, and two tools: `compile` (the profile's program for bwrap's
 * --seccomp FD) and `same-profile` (do zygote's program and the OCI rules decide alike?).
 *
 * Since Linux 5.11 seccomp caches, per architecture, the syscalls a filter allows whatever their
 * arguments and skips the BPF program for them: getpid measures that path, personality the
 * program itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-opts.h"
#include "bench.h"
#include "bpf.h"
#include "profile.h"
#include "seccomp-compile.h"
#include "util.h"

#define PERSONALITY_QUERY 0xffffffffUL /* returns the current persona, changes nothing */
#define WORST_NR_RANGE 1024u

struct filter {
        const char *name;
        const struct sock_filter *insns; /* NULL: no filter */
        size_t len;
        unsigned flags;
};

static const struct {
        const char *name;
        long nr;
        unsigned long arg0;
} probes[] = {
        { "personality", SYS_personality, PERSONALITY_QUERY },
        { "getpid", SYS_getpid, 0 },
};

static int build_exported(json_object *oci, unsigned optimize, struct sock_filter **ret, size_t *ret_len) {
        scmp_filter_ctx ctx = NULL;
        int r = bench_oci_build(oci, optimize, &ctx);
        if (r < 0)
                return r;
        r = zp_seccomp_export_bpf(ctx, ret, ret_len);
        seccomp_release(ctx);
        return r;
}

/* In a fresh child: load f, then `batches` times time `calls` calls of each probe. The child
 * sends batches * ELEMENTSOF(probes) doubles (ns per call), batch-major. */
static int measure_child(const struct filter *f, unsigned batches, unsigned calls, double *ret) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        size_t n = (size_t) batches * ELEMENTSOF(probes);
        pid_t pid;
        int st = -1, r;

        pid = bench_fork_measure(p);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                double *v = calloc(n, sizeof(double));
                if (!v || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(1);
                if (f->insns) {
                        struct sock_fprog prog = { .len = (unsigned short) f->len,
                                                   .filter = (struct sock_filter *) f->insns };
                        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, f->flags, &prog) < 0)
                                _exit(2);
                }
                /* A denied call would time the error path, not the allowed one. */
                for (size_t k = 0; k < ELEMENTSOF(probes); k++)
                        if (syscall(probes[k].nr, probes[k].arg0) < 0)
                                _exit(3);
                for (unsigned b = 0; b < batches; b++)
                        for (size_t k = 0; k < ELEMENTSOF(probes); k++) {
                                int64_t t0 = bench_now_ns();
                                for (unsigned i = 0; i < calls; i++)
                                        syscall(probes[k].nr, probes[k].arg0);
                                v[b * ELEMENTSOF(probes) + k] = (double) (bench_now_ns() - t0) / calls;
                        }
                _exit(write(p[1], v, n * sizeof(double)) == (ssize_t) (n * sizeof(double)) ? 0 : 4);
        }
        size_t got = 0;
        while (got < n * sizeof(double)) {
                ssize_t k = read(p[0], (char *) ret + got, n * sizeof(double) - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                got += (size_t) k;
        }
        r = bench_wait(pid, &st);
        if (r < 0) {
                if (st != -1) /* reaped: it failed */
                        fprintf(stderr, "zygote-bench: syscall child for %s failed (status %d%s)\n", f->name, st,
                                WIFEXITED(st) && WEXITSTATUS(st) == 3 ? ": the filter denies a probed syscall" : "");
                return r;
        }
        return got == n * sizeof(double) ? 0 : -EIO;
}

/* The profile a command names; NULL after saying why it does not load. */
static struct zp_profile *profile_arg(const char *path) {
        _cleanup_free_ char *perr = NULL;
        struct zp_profile *p = NULL;
        int r = zp_profile_load_file(path, &p, &perr);

        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s\n", perr ? perr : strerror(-r));
                return NULL;
        }
        return p;
}

/* `zygote-bench CMD PROFILE ARG`: the profile loaded, and 0; else the exit code, 2 after the
 * usage line or 1 after why the profile does not load. */
static int command_profile(int argc, char **argv, const char *usage, struct zp_profile **ret) {
        if (argc != 3) {
                fprintf(stderr, "usage: zygote-bench %s\n", usage);
                return 2;
        }
        *ret = profile_arg(argv[1]);
        return *ret ? 0 : 1;
}

static json_object *paths_json(const struct filter *f) {
        json_object *j = json_object_new_object();
        uint32_t arch = seccomp_arch_native(); /* SCMP_ARCH_* tokens are the AUDIT_ARCH_* values */
        unsigned steps;
        uint32_t worst_nr = 0;

        json_object_object_add(j, "bpf_instructions", json_object_new_int64((int64_t) f->len));
        for (size_t k = 0; k < ELEMENTSOF(probes); k++) {
                char key[64];
                /* What the measured call executes (its exact arguments), and the worst any
                 * arguments of that syscall can make it execute. */
                struct seccomp_data d = { .nr = (int) probes[k].nr, .arch = arch, .args = { probes[k].arg0 } };
                uint32_t action;
                if (zp_bpf_run(f->insns, f->len, &d, &action, &steps) >= 0)
                        json_object_object_add(j, probes[k].name, json_object_new_int64(steps));
                snprintf(key, sizeof(key), "%s_longest", probes[k].name);
                if (zp_bpf_longest_path(f->insns, f->len, arch, (uint32_t) probes[k].nr, &steps) >= 0)
                        json_object_object_add(j, key, json_object_new_int64(steps));
        }
        if (zp_bpf_longest_path_range(f->insns, f->len, arch, 0, WORST_NR_RANGE, &steps, &worst_nr) >= 0) {
                json_object_object_add(j, "longest", json_object_new_int64(steps));
                json_object_object_add(j, "longest_nr", json_object_new_int64(worst_nr));
        }
        return j;
}

int bench_cmd_syscall(int argc, char **argv) {
        const char *profile_path = NULL;
        unsigned long rounds = 9, batches = 100, calls = 500;
        uint64_t seed = 0x5ca11;
        const struct bench_opt opts[] = {
                { "profile", BENCH_OPT_STRING, &profile_path, NULL },
                { "rounds", BENCH_OPT_ULONG, &rounds, NULL },
                { "batches", BENCH_OPT_ULONG, &batches, NULL },
                { "calls", BENCH_OPT_ULONG, &calls, NULL },
                { "seed", BENCH_OPT_U64, &seed, NULL },
                {},
        };
        struct zp_profile *profile = NULL, *linear = NULL;
        const struct zp_profile_options linear_opts = { .optimize = 1 };
        _cleanup_free_ double *v = NULL;
        json_object *out = NULL;
        int r, ret = 1;

        if (bench_parse_opts(argc, argv, "zygote-bench syscall", opts) != argc)
                goto finish;
        if (!profile_path || rounds == 0 || batches == 0 || batches > 1000 || calls == 0 || calls > 100000000) {
                fprintf(stderr, "zygote-bench syscall: --profile is required; counts must be > 0\n");
                goto finish;
        }
        profile = profile_arg(profile_path);
        if (!profile)
                goto finish;
        /* The same rules, compiled by the same code, only in libseccomp's default layout. */
        r = zp_profile_load_file_with(profile_path, &linear_opts, &linear, NULL);
        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s: linear layout: %s\n", profile_path, strerror(-r));
                goto finish;
        }

        const struct filter filters[] = {
                { "none", NULL, 0, 0 },
                { "zygote", profile->bpf, profile->bpf_len, profile->filter_flags },
                { "libseccomp_linear", linear->bpf, linear->bpf_len, linear->filter_flags },
        };
        unsigned order[ELEMENTSOF(filters)];
        for (size_t i = 0; i < ELEMENTSOF(filters); i++)
                order[i] = (unsigned) i;
        v = calloc(batches * ELEMENTSOF(probes), sizeof(double));
        if (!v)
                goto finish;

        out = json_object_new_object();
        json_object *jsamples = json_object_new_object();
        for (size_t k = 0; k < ELEMENTSOF(probes); k++) {
                json_object *jp = json_object_new_object();
                for (size_t i = 0; i < ELEMENTSOF(filters); i++)
                        json_object_object_add(jp, filters[i].name, json_object_new_array());
                json_object_object_add(jsamples, probes[k].name, jp);
        }
        /* Round 0 warms up (page cache, CPU frequency) and is not recorded. */
        for (unsigned long round = 0; round <= rounds; round++) {
                bench_shuffle(order, ELEMENTSOF(filters), &seed);
                for (size_t i = 0; i < ELEMENTSOF(filters); i++) {
                        const struct filter *f = &filters[order[i]];
                        r = measure_child(f, (unsigned) batches, (unsigned) calls, v);
                        if (r < 0)
                                goto finish;
                        if (round == 0)
                                continue;
                        for (unsigned b = 0; b < batches; b++)
                                for (size_t k = 0; k < ELEMENTSOF(probes); k++) {
                                        json_object *jp, *ja;
                                        json_object_object_get_ex(jsamples, probes[k].name, &jp);
                                        json_object_object_get_ex(jp, f->name, &ja);
                                        bench_push(ja, v[b * ELEMENTSOF(probes) + k]);
                                }
                }
        }

        json_object *jpaths = json_object_new_object();
        for (size_t i = 1; i < ELEMENTSOF(filters); i++)
                json_object_object_add(jpaths, filters[i].name, paths_json(&filters[i]));
        json_object_object_add(out, "unit", json_object_new_string("ns"));
        json_object_object_add(out, "rounds", json_object_new_int64((int64_t) rounds));
        json_object_object_add(out, "batches", json_object_new_int64((int64_t) batches));
        json_object_object_add(out, "calls_per_batch", json_object_new_int64((int64_t) calls));
        json_object_object_add(out, "profile_longest_path", json_object_new_int64(profile->longest_path));
        json_object_object_add(out, "paths", jpaths);
        json_object_object_add(out, "samples", jsamples);
        ret = bench_print(out) < 0 ? 1 : 0;
finish:
        json_object_put(out);
        zp_profile_free(profile);
        zp_profile_free(linear);
        return ret;
}

/* ---- compile ------------------------------------------------------------------------------------ */

int bench_cmd_compile(int argc, char **argv) {
        struct zp_profile *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = command_profile(argc, argv, "compile PROFILE OUT.bpf", &p);
        if (r != 0)
                return r;
        size_t size = p->bpf_len * sizeof(struct sock_filter);
        fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, p->bpf, size) != (ssize_t) size) {
                fprintf(stderr, "zygote-bench: %s: %m\n", argv[2]);
                zp_profile_free(p);
                return 1;
        }
        json_object *out = json_object_new_object();
        json_object_object_add(out, "name", json_object_new_string(p->name));
        json_object_object_add(out, "hash", json_object_new_string(p->hash));
        json_object_object_add(out, "bpf_instructions", json_object_new_int64((int64_t) p->bpf_len));
        json_object_object_add(out, "longest_path", json_object_new_int64(p->longest_path));
        json_object_object_add(out, "filter_flags", json_object_new_int64(p->filter_flags));
        json_object_object_add(out, "no_new_privs", json_object_new_boolean(p->no_new_privs));
        r = bench_print(out);
        json_object_put(out);
        zp_profile_free(p);
        return r < 0 ? 1 : 0;
}

/* ---- same-profile --------------------------------------------------------------------------------- */

/* Argument values where the rules of Docker-like profiles change their mind: personality's five
 * personas, socket families around AF_VSOCK (40), clone's namespace mask, and the extremes. */
static const uint64_t arg_samples[] = {
        0,
        1,
        2,
        8,
        38,
        39,
        40,
        41,
        0x20000,
        0x20008,
        0xffffffff,
        0x10000000,
        0x7e020000,
        0x00010000,
        0x100000000ull,
        0xffffffff00000000ull,
        UINT64_MAX,
};

struct arch_range {
        uint32_t arch; /* AUDIT_ARCH_* */
        uint32_t nr_first;
        uint32_t n_nr;
};

int bench_cmd_same_profile(int argc, char **argv) {
        struct zp_profile *p = NULL;
        _cleanup_free_ struct sock_filter *prog = NULL;
        size_t len = 0;
        json_object *oci = NULL;
        unsigned long checked = 0, differences = 0;
        int r, ret = 1;

        r = command_profile(argc, argv, "same-profile PROFILE OCI.json", &p);
        if (r != 0)
                return r;
        if (bench_json_file(argv[2], &oci) < 0)
                goto finish;
        r = build_exported(oci, 1, &prog, &len);
        if (r < 0) {
                fprintf(stderr, "zygote-bench: %s: libseccomp build: %s\n", argv[2], strerror(-r));
                goto finish;
        }

        /* The native arch, its x32 half, i386, and one foreign arch that both must refuse alike. */
        const struct arch_range ranges[] = {
#if defined(__x86_64__)
                { AUDIT_ARCH_X86_64, 0, 1024 },
                { AUDIT_ARCH_X86_64, 0x40000000u, 1024 },
                { AUDIT_ARCH_I386, 0, 1024 },
                { AUDIT_ARCH_AARCH64, 0, 64 },
#else
                { seccomp_arch_native(), 0, 1024 },
                { AUDIT_ARCH_X86_64, 0, 64 },
#endif
        };
        for (size_t a = 0; a < ELEMENTSOF(ranges); a++)
                for (uint32_t i = 0; i < ranges[a].n_nr; i++)
                        for (unsigned argi = 0; argi < 3; argi++)
                                for (size_t s = 0; s < ELEMENTSOF(arg_samples); s++) {
                                        struct seccomp_data d = { .nr = (int) (ranges[a].nr_first + i),
                                                                  .arch = ranges[a].arch };
                                        uint32_t az, ao;
                                        d.args[argi] = arg_samples[s];
                                        if (zp_bpf_run(p->bpf, p->bpf_len, &d, &az, NULL) < 0 ||
                                            zp_bpf_run(prog, len, &d, &ao, NULL) < 0) {
                                                fprintf(stderr, "zygote-bench: a program fails the BPF check\n");
                                                goto finish;
                                        }
                                        checked++;
                                        if (az == ao)
                                                continue;
                                        if (differences++ < 10) {
                                                char bz[64], bo[64];
                                                fprintf(stderr,
                                                        "differ: arch 0x%x nr %d arg%u=0x%llx: zygote %s, libseccomp "
                                                        "%s\n",
                                                        d.arch, d.nr, argi, (unsigned long long) arg_samples[s],
                                                        zp_bpf_action_to_string(az, bz, sizeof(bz)),
                                                        zp_bpf_action_to_string(ao, bo, sizeof(bo)));
                                        }
                                }

        json_object *out = json_object_new_object();
        json_object_object_add(out, "equal", json_object_new_boolean(differences == 0));
        json_object_object_add(out, "checked", json_object_new_int64((int64_t) checked));
        json_object_object_add(out, "differences", json_object_new_int64((int64_t) differences));
        json_object_object_add(out, "zygote_hash", json_object_new_string(p->hash));
        json_object_object_add(out, "zygote_instructions", json_object_new_int64((int64_t) p->bpf_len));
        json_object_object_add(out, "libseccomp_instructions", json_object_new_int64((int64_t) len));
        r = bench_print(out);
        json_object_put(out);
        ret = r < 0 ? 1 : differences == 0 ? 0 : 1;
finish:
        json_object_put(oci);
        zp_profile_free(p);
        return ret;
}
