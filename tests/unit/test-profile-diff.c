/* SPDX-License-Identifier: MIT */
/*
 * Differential test of profile compilation against the container engines' own default profiles:
 * Podman's (containers/common's seccomp.json, which Debian installs as
 * /usr/share/containers/seccomp.json) and, where a copy is at hand, Docker's docker-default.json.
 *
 *  1. for each of those files, zygote's program (binary tree) decides exactly as a program this
 *     test builds directly with libseccomp's default settings (no optimize attribute) from the
 *     same rules, applying the includes/excludes and runc's argument rules itself;
 *  2. zygote's bundled profiles/default.json decides exactly as docker-default.json loaded as a
 *     plain file: this is how we prove default.json carries Docker's decisions (skipped, with the
 *     reason, when no docker-default.json was given);
 *  3. the longest path through zygote's default, and its program for docker-default.json, is at
 *     most 24 instructions.
 *
 * Decisions are compared for every syscall number 0..1023 on x86_64 and i386, the x32 range,
 * out-of-range numbers, an architecture absent from the filter, and argument samples around every
 * constant of every argument-checked syscall. Figures (instructions, longest paths, compile times)
 * are printed for the report.
 *
 * Usage: test-profile-diff PROFILES_DIR PROFILE.json...
 *   Each PROFILE.json that exists is compared (1, 3); one named docker-default.json is Docker's (2).
 *   Exit 77 when none exists.
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <linux/audit.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "bpf.h"
#include "profile.h"
#include "seccomp-compile.h"

static const char *profiles_dir;
/* The engine profiles given on the command line that exist, and Docker's among them (or NULL). */
#define MAX_SOURCES 8
static const char *sources[MAX_SOURCES];
static size_t n_sources;
static const char *docker_file;

/* ---------------------------------------------------------------------------------------------
 * The reference: the engine's rules straight into libseccomp, default settings. Written apart
 * from the profile module on purpose; it handles what docker-default.json and Podman's
 * seccomp.json use and fails on the rest. */

static const char *const docker_caps[] = { ZP_DOCKER_DEFAULT_CAPS };

static bool in_list(json_object *list, const char *s) {
        for (size_t i = 0; list && i < json_object_array_length(list); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(list, i)), s) == 0)
                        return true;
        return false;
}

static bool cap_kept(const char *c) {
        for (size_t i = 0; i < sizeof(docker_caps) / sizeof(docker_caps[0]); i++)
                if (strcmp(docker_caps[i], c) == 0)
                        return true;
        return false;
}

static bool kernel_at_least(const char *v) {
        struct utsname u;
        unsigned a, b, ka, kb;

        assert_int_equal(uname(&u), 0);
        assert_int_equal(sscanf(u.release, "%u.%u", &ka, &kb), 2);
        assert_int_equal(sscanf(v, "%u.%u", &a, &b), 2);
        return ka > a || (ka == a && kb >= b);
}

/* moby's setupSeccomp: excludes first (any match drops), then includes (all must match). */
static bool docker_applies(json_object *rule) {
        json_object *inc = NULL, *exc = NULL, *v;

        json_object_object_get_ex(rule, "includes", &inc);
        json_object_object_get_ex(rule, "excludes", &exc);
        if (exc) {
                if (json_object_object_get_ex(exc, "arches", &v) && in_list(v, "amd64"))
                        return false;
                if (json_object_object_get_ex(exc, "caps", &v))
                        for (size_t i = 0; i < json_object_array_length(v); i++)
                                if (cap_kept(json_object_get_string(json_object_array_get_idx(v, i))))
                                        return false;
                if (json_object_object_get_ex(exc, "minKernel", &v) && kernel_at_least(json_object_get_string(v)))
                        return false;
        }
        if (inc) {
                if (json_object_object_get_ex(inc, "arches", &v) && json_object_array_length(v) > 0 &&
                    !in_list(v, "amd64"))
                        return false;
                if (json_object_object_get_ex(inc, "caps", &v))
                        for (size_t i = 0; i < json_object_array_length(v); i++)
                                if (!cap_kept(json_object_get_string(json_object_array_get_idx(v, i))))
                                        return false;
                if (json_object_object_get_ex(inc, "minKernel", &v) && !kernel_at_least(json_object_get_string(v)))
                        return false;
        }
        return true;
}

static uint32_t docker_action(json_object *o, const char *key, const char *ret_key) {
        json_object *a, *e;
        const char *name;
        uint32_t err = EPERM;

        assert_true(json_object_object_get_ex(o, key, &a));
        name = json_object_get_string(a);
        if (json_object_object_get_ex(o, ret_key, &e))
                err = (uint32_t) json_object_get_int(e);
        if (strcmp(name, "SCMP_ACT_ALLOW") == 0)
                return SCMP_ACT_ALLOW;
        if (strcmp(name, "SCMP_ACT_ERRNO") == 0)
                return SCMP_ACT_ERRNO(err);
        fail_msg("reference builder: action %s not handled", name);
        return 0;
}

static enum scmp_compare docker_op(const char *op) {
        static const struct {
                const char *name;
                enum scmp_compare op;
        } t[] = { { "SCMP_CMP_NE", SCMP_CMP_NE },
                  { "SCMP_CMP_LT", SCMP_CMP_LT },
                  { "SCMP_CMP_LE", SCMP_CMP_LE },
                  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
                  { "SCMP_CMP_GE", SCMP_CMP_GE },
                  { "SCMP_CMP_GT", SCMP_CMP_GT },
                  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ } };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (strcmp(t[i].name, op) == 0)
                        return t[i].op;
        fail_msg("reference builder: operator %s not handled", op);
        return SCMP_CMP_EQ;
}

static void build_reference(json_object *root, struct sock_filter **ret, size_t *ret_len) {
        uint32_t def = docker_action(root, "defaultAction", "defaultErrnoRet");
        scmp_filter_ctx ctx = seccomp_init(def);
        json_object *map, *calls;

        assert_non_null(ctx);
        /* Docker's archMap: the native entry and its sub-architectures. */
        assert_true(json_object_object_get_ex(root, "archMap", &map));
        for (size_t i = 0; i < json_object_array_length(map); i++) {
                json_object *e = json_object_array_get_idx(map, i), *a, *subs;
                assert_true(json_object_object_get_ex(e, "architecture", &a));
                if (strcmp(json_object_get_string(a), "SCMP_ARCH_X86_64") != 0)
                        continue;
                assert_true(json_object_object_get_ex(e, "subArchitectures", &subs));
                for (size_t j = 0; j < json_object_array_length(subs); j++) {
                        const char *s = json_object_get_string(json_object_array_get_idx(subs, j));
                        uint32_t arch = strcmp(s, "SCMP_ARCH_X86") == 0   ? SCMP_ARCH_X86
                                        : strcmp(s, "SCMP_ARCH_X32") == 0 ? SCMP_ARCH_X32
                                                                          : 0;
                        assert_int_not_equal(arch, 0);
                        assert_int_equal(seccomp_arch_add(ctx, arch), 0);
                }
        }

        assert_true(json_object_object_get_ex(root, "syscalls", &calls));
        for (size_t i = 0; i < json_object_array_length(calls); i++) {
                json_object *rule = json_object_array_get_idx(calls, i), *names, *args = NULL;
                uint32_t action;
                struct scmp_arg_cmp cmp[6];
                unsigned n_cmp = 0, count[6] = {};
                bool repeated = false;

                if (!docker_applies(rule))
                        continue;
                action = docker_action(rule, "action", "errnoRet");
                if (action == def)
                        continue;
                json_object_object_get_ex(rule, "args", &args);
                for (size_t k = 0; args && k < json_object_array_length(args); k++) {
                        json_object *a = json_object_array_get_idx(args, k), *f;
                        assert_true(n_cmp < 6);
                        memset(&cmp[n_cmp], 0, sizeof(cmp[n_cmp]));
                        assert_true(json_object_object_get_ex(a, "index", &f));
                        cmp[n_cmp].arg = (unsigned) json_object_get_int(f);
                        assert_true(json_object_object_get_ex(a, "op", &f));
                        cmp[n_cmp].op = docker_op(json_object_get_string(f));
                        if (json_object_object_get_ex(a, "value", &f))
                                cmp[n_cmp].datum_a = json_object_get_uint64(f);
                        if (json_object_object_get_ex(a, "valueTwo", &f))
                                cmp[n_cmp].datum_b = json_object_get_uint64(f);
                        if (++count[cmp[n_cmp].arg] > 1)
                                repeated = true;
                        n_cmp++;
                }
                assert_true(json_object_object_get_ex(rule, "names", &names));
                for (size_t j = 0; j < json_object_array_length(names); j++) {
                        int nr = seccomp_syscall_resolve_name(
                                json_object_get_string(json_object_array_get_idx(names, j)));
                        if (nr == __NR_SCMP_ERROR)
                                continue;
                        if (!repeated)
                                assert_int_equal(seccomp_rule_add_array(ctx, action, nr, n_cmp, cmp), 0);
                        else /* runc: one rule per condition when an argument repeats */
                                for (unsigned k = 0; k < n_cmp; k++)
                                        assert_int_equal(seccomp_rule_add_array(ctx, action, nr, 1, &cmp[k]), 0);
                }
        }
        assert_int_equal(zp_seccomp_export_bpf(ctx, ret, ret_len), 0);
        seccomp_release(ctx);
}

/* ---------------------------------------------------------------------------------------------
 * Argument samples: for every syscall with argument rules in either file, values around every
 * constant, per argument index. */

#define MAX_SAMPLED 64
#define MAX_VALUES 512

struct sampled {
        char name[64];
        uint64_t values[6][MAX_VALUES];
        size_t n_values[6];
};

static struct sampled sampled[MAX_SAMPLED];
static size_t n_sampled;

static void add_value(struct sampled *s, unsigned idx, uint64_t v) {
        for (size_t i = 0; i < s->n_values[idx]; i++)
                if (s->values[idx][i] == v)
                        return;
        assert_true(s->n_values[idx] < MAX_VALUES);
        s->values[idx][s->n_values[idx]++] = v;
}

static void add_constant(const char *name, unsigned idx, uint64_t value, uint64_t value_two) {
        struct sampled *s = NULL;
        const uint64_t hi = UINT64_C(1) << 32;
        uint64_t base[] = { value, value_two };

        for (size_t i = 0; i < n_sampled; i++)
                if (strcmp(sampled[i].name, name) == 0)
                        s = &sampled[i];
        if (!s) {
                assert_true(n_sampled < MAX_SAMPLED);
                s = &sampled[n_sampled++];
                snprintf(s->name, sizeof(s->name), "%s", name);
                for (unsigned i = 0; i < 6; i++) {
                        add_value(s, i, 0);
                        add_value(s, i, UINT64_MAX);
                        add_value(s, i, 0xffffffff);
                }
        }
        for (size_t b = 0; b < 2; b++) {
                uint64_t v = base[b];
                add_value(s, idx, v - 1);
                add_value(s, idx, v);
                add_value(s, idx, v + 1);
                add_value(s, idx, v | hi); /* same low half, high half set */
                add_value(s, idx, v & 0xffffffff);
                add_value(s, idx, ~v);
        }
        /* masked variants: the datum with bits outside the mask set, and with one mask bit flipped */
        add_value(s, idx, value_two | ~value);
        add_value(s, idx, value_two | (~value & 0xffffffff));
        for (unsigned bit = 0; bit < 64; bit++)
                if (value & (UINT64_C(1) << bit))
                        add_value(s, idx, value_two ^ (UINT64_C(1) << bit));
}

static void collect_constants(json_object *seccomp) {
        json_object *calls;

        if (!json_object_object_get_ex(seccomp, "syscalls", &calls))
                return;
        for (size_t i = 0; i < json_object_array_length(calls); i++) {
                json_object *rule = json_object_array_get_idx(calls, i), *args = NULL, *names;
                if (!json_object_object_get_ex(rule, "args", &args) || !args)
                        continue;
                assert_true(json_object_object_get_ex(rule, "names", &names));
                for (size_t k = 0; k < json_object_array_length(args); k++) {
                        json_object *a = json_object_array_get_idx(args, k), *f;
                        unsigned idx;
                        uint64_t v = 0, v2 = 0;
                        assert_true(json_object_object_get_ex(a, "index", &f));
                        idx = (unsigned) json_object_get_int(f);
                        if (json_object_object_get_ex(a, "value", &f))
                                v = json_object_get_uint64(f);
                        if (json_object_object_get_ex(a, "valueTwo", &f))
                                v2 = json_object_get_uint64(f);
                        for (size_t j = 0; j < json_object_array_length(names); j++)
                                add_constant(json_object_get_string(json_object_array_get_idx(names, j)), idx, v, v2);
                }
        }
}

/* ---------------------------------------------------------------------------------------------
 * Comparison */

struct prog {
        const char *what;
        const struct sock_filter *bpf;
        size_t len;
};

static unsigned long n_compared, n_differ;

static void compare_one(const struct prog *a, const struct prog *b, const struct seccomp_data *d) {
        uint32_t ra, rb;

        assert_int_equal(zp_bpf_run(a->bpf, a->len, d, &ra, NULL), 0);
        assert_int_equal(zp_bpf_run(b->bpf, b->len, d, &rb, NULL), 0);
        n_compared++;
        if (ra != rb) {
                char sa[32], sb[32];
                if (n_differ++ < 20)
                        fprintf(stderr,
                                "differ: arch 0x%08x nr %d args %#" PRIx64 " %#" PRIx64 " %#" PRIx64 ": %s %s, %s %s\n",
                                d->arch, d->nr, (uint64_t) d->args[0], (uint64_t) d->args[1], (uint64_t) d->args[2],
                                a->what, zp_bpf_action_to_string(ra, sa, sizeof(sa)), b->what,
                                zp_bpf_action_to_string(rb, sb, sizeof(sb)));
        }
}

/* Every argument vector for one syscall: the product of the per-index samples over the indices
 * that have constants, capped; the other arguments 0. */
static void compare_args(const struct prog *a, const struct prog *b, uint32_t arch, int nr, const struct sampled *s) {
        unsigned idx[6], n_idx = 0;
        size_t pos[6] = {};
        uint64_t combos = 1;

        for (unsigned i = 0; i < 6; i++)
                if (s->n_values[i] > 3) /* more than the three defaults: the rules check this index */
                        idx[n_idx++] = i, combos *= s->n_values[i];
        assert_true(combos <= 1000000);

        for (;;) {
                struct seccomp_data d = { .nr = nr, .arch = arch };
                for (unsigned k = 0; k < n_idx; k++) {
                        uint64_t v = s->values[idx[k]][pos[k]];
                        /* 32-bit tasks pass zero-extended 32-bit registers */
                        d.args[idx[k]] = arch == AUDIT_ARCH_I386 ? (uint32_t) v : v;
                }
                compare_one(a, b, &d);
                unsigned k = 0;
                for (; k < n_idx; k++) {
                        if (++pos[k] < s->n_values[idx[k]])
                                break;
                        pos[k] = 0;
                }
                if (k == n_idx)
                        break;
        }
}

static void compare_programs(const struct prog *a, const struct prog *b) {
        static const uint32_t specials[] = { 0x3fffffff, 0x40000000 + 1024, 0x7fffffff,
                                             0x80000000, 0xfffffffe,        0xffffffff };
        const struct {
                uint32_t arch;
                uint32_t first, count;
        } ranges[] = {
                { AUDIT_ARCH_X86_64, 0, 1024 },
                { AUDIT_ARCH_X86_64, 0x40000000, 1024 }, /* x32 */
                { AUDIT_ARCH_I386, 0, 1024 },
                { AUDIT_ARCH_AARCH64, 0, 64 }, /* not in the filters */
        };
        unsigned long before = n_differ, compared_before = n_compared;

        for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
                for (uint32_t i = 0; i < ranges[r].count; i++) {
                        struct seccomp_data d = { .nr = (int) (ranges[r].first + i), .arch = ranges[r].arch };
                        compare_one(a, b, &d);
                }
                for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
                        struct seccomp_data d = { .nr = (int) specials[i], .arch = ranges[r].arch };
                        compare_one(a, b, &d);
                }
        }

        for (size_t i = 0; i < n_sampled; i++) {
                static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
                for (size_t k = 0; k < 2; k++) {
                        int nr = seccomp_syscall_resolve_name_arch(arches[k], sampled[i].name);
                        if (nr >= 0) {
                                compare_args(a, b, arches[k], nr, &sampled[i]);
                                if (arches[k] == AUDIT_ARCH_X86_64) /* the x32 number too */
                                        compare_args(a, b, arches[k], nr | 0x40000000, &sampled[i]);
                        }
                }
        }

        /* Random argument vectors on the sampled syscalls, fixed seed. */
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (int round = 0; round < 20000; round++) {
                const struct sampled *s = &sampled[round % n_sampled];
                struct seccomp_data d = { .arch = AUDIT_ARCH_X86_64 };
                d.nr = seccomp_syscall_resolve_name(s->name);
                if (d.nr < 0)
                        continue;
                for (int k = 0; k < 6; k++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        d.args[k] = (round & 1) ? (x & 0xffffffff) : x;
                }
                compare_one(a, b, &d);
        }

        printf("# %s vs %s: %lu decisions compared, %lu differ\n", a->what, b->what, n_compared - compared_before,
               n_differ - before);
        assert_int_equal(n_differ, before);
}

/* Longest path the way seccomp-compile.c measures it: 0..1023 on each architecture, the x32 range, -1. */
static unsigned longest(const struct sock_filter *bpf, size_t len) {
        unsigned best = 0, s;

        assert_int_equal(zp_bpf_longest_path_range(bpf, len, AUDIT_ARCH_X86_64, 0, 1024, &s, NULL), 0);
        best = s > best ? s : best;
        assert_int_equal(zp_bpf_longest_path_range(bpf, len, AUDIT_ARCH_X86_64, 0x40000000, 1024, &s, NULL), 0);
        best = s > best ? s : best;
        assert_int_equal(zp_bpf_longest_path_range(bpf, len, AUDIT_ARCH_I386, 0, 1024, &s, NULL), 0);
        best = s > best ? s : best;
        assert_int_equal(zp_bpf_longest_path(bpf, len, AUDIT_ARCH_X86_64, UINT32_MAX, &s), 0);
        best = s > best ? s : best;
        return best;
}

static struct zp_profile *load(const char *path, unsigned optimize) {
        struct zp_profile_options o = { .optimize = optimize };
        struct zp_profile *p = NULL;
        char *err = NULL;

        if (zp_profile_load_file_with(path, &o, &p, &err) < 0)
                fail_msg("%s", err);
        return p;
}

/* state: the path of one engine profile. */
static void test_engine_vs_libseccomp(void **state) {
        const char *path = *state;
        json_object *root = json_object_from_file(path);
        struct sock_filter *ref;
        size_t ref_len;
        struct zp_profile *zy;
        char *what_a, *what_b;

        assert_non_null(root);
        collect_constants(root);
        build_reference(root, &ref, &ref_len);
        zy = load(path, 2);

        assert_true(asprintf(&what_a, "zygote(%s)", path) > 0);
        assert_true(asprintf(&what_b, "libseccomp-default(%s)", path) > 0);
        struct prog a = { what_a, zy->bpf, zy->bpf_len };
        struct prog b = { what_b, ref, ref_len };
        compare_programs(&a, &b);

        unsigned ref_longest = longest(ref, ref_len);
        printf("# %s: %zu instructions, longest path %u (zygote binary tree); "
               "%zu instructions, longest path %u (libseccomp default, the engine's layout)\n",
               path, zy->bpf_len, zy->longest_path, ref_len, ref_longest);
        assert_int_equal(longest(zy->bpf, zy->bpf_len), zy->longest_path);
        /* The bound is the one on zygote's default, which carries Docker's decisions; other
         * profiles may be longer (Podman's allows more syscalls with argument checks). */
        if (path == docker_file)
                assert_true(zy->longest_path <= 24);

        zp_profile_free(zy);
        free(ref);
        free(what_a);
        free(what_b);
        json_object_put(root);
}

/* The bound on the default profile holds whether or not Docker's file is at hand. */
static void test_default_longest(void **state) {
        char *zpath;
        struct zp_profile *def;

        assert_true(asprintf(&zpath, "%s/default.json", profiles_dir) > 0);
        def = load(zpath, 2);
        assert_int_equal(longest(def->bpf, def->bpf_len), def->longest_path);
        assert_true(def->longest_path <= 24);
        assert_true(def->no_new_privs);
        zp_profile_free(def);
        free(zpath);
}

static void test_default_vs_docker(void **state) {
        const char *dpath = docker_file;
        char *zpath;
        json_object *droot, *zroot, *sec;
        struct zp_profile *docker, *def;

        if (!dpath) {
                printf("# skipped: no docker-default.json given; profiles/default.json is compared with Docker's "
                       "profile only where a copy of it is at hand\n");
                skip();
        }
        droot = json_object_from_file(dpath);
        assert_true(asprintf(&zpath, "%s/default.json", profiles_dir) > 0);
        zroot = json_object_from_file(zpath);
        assert_non_null(droot);
        assert_non_null(zroot);
        assert_true(json_object_object_get_ex(zroot, "seccomp", &sec));
        collect_constants(droot);
        collect_constants(sec);

        docker = load(dpath, 2);
        def = load(zpath, 2);
        struct prog a = { "zygote(profiles/default.json)", def->bpf, def->bpf_len };
        struct prog b = { "zygote(docker-default.json)", docker->bpf, docker->bpf_len };
        compare_programs(&a, &b);

        assert_true(def->caps_keep == docker->caps_keep);
        assert_true(def->no_new_privs);
        printf("# profiles/default.json: longest path %u instructions (limit 24), %zu instructions\n",
               def->longest_path, def->bpf_len);
        assert_true(def->longest_path <= 24);

        zp_profile_free(docker);
        zp_profile_free(def);
        json_object_put(droot);
        json_object_put(zroot);
        free(zpath);
}

static double ms_since(const struct timespec *t0) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (double) (t1.tv_sec - t0->tv_sec) * 1e3 + (double) (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Figures for the report; nothing here is asserted except that both layouts decide alike. */
static void test_figures(void **state) {
        static const char *const names[] = { "default", "nonet", "strict" };

        printf("# %-8s %6s %6s %8s %8s %10s %10s\n", "profile", "insns", "insns", "longest", "longest", "load ms",
               "libseccomp");
        printf("# %-8s %6s %6s %8s %8s %10s %10s\n", "", "tree", "linear", "tree", "linear", "(min of 10)", "ms");
        for (size_t i = 0; i < 3 + n_sources; i++) {
                char *path;
                struct zp_profile *tree, *lin;
                double best = 1e9, lib = 1e9;

                if (i < 3)
                        assert_true(asprintf(&path, "%s/%s.json", profiles_dir, names[i]) > 0);
                else
                        path = strdup(sources[i - 3]);
                for (int k = 0; k < 10; k++) {
                        struct timespec t0;
                        clock_gettime(CLOCK_MONOTONIC, &t0);
                        tree = load(path, 2);
                        double ms = ms_since(&t0);
                        best = ms < best ? ms : best;
                        lib = (double) tree->compile_nsec / 1e6 < lib ? (double) tree->compile_nsec / 1e6 : lib;
                        zp_profile_free(tree);
                }
                tree = load(path, 2);
                lin = load(path, 1);
                for (int nr = 0; nr < 1024; nr++) {
                        struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
                        uint32_t ra, rb;
                        assert_int_equal(zp_bpf_run(tree->bpf, tree->bpf_len, &d, &ra, NULL), 0);
                        assert_int_equal(zp_bpf_run(lin->bpf, lin->bpf_len, &d, &rb, NULL), 0);
                        assert_int_equal(ra, rb);
                }
                printf("# %-8s %6zu %6zu %8u %8u %10.2f %10.2f\n",
                       i < 3                           ? names[i]
                       : sources[i - 3] == docker_file ? "docker"
                                                       : "podman",
                       tree->bpf_len, lin->bpf_len, tree->longest_path, lin->longest_path, best, lib);
                zp_profile_free(tree);
                zp_profile_free(lin);
                free(path);
        }
}

int main(int argc, char **argv) {
        struct CMUnitTest tests[MAX_SOURCES + 3];
        size_t n = 0;

        if (argc < 3 || argc - 2 > MAX_SOURCES) {
                fprintf(stderr, "usage: %s PROFILES_DIR PROFILE.json... (at most %d)\n", argv[0], MAX_SOURCES);
                return 2;
        }
        profiles_dir = argv[1];
        if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
                fprintf(stderr, "skip: the differential test is written for x86_64\n");
                return 77;
        }
        for (int i = 2; i < argc; i++) {
                const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
                if (access(argv[i], R_OK) < 0) {
                        printf("# %s: not there, not compared\n", argv[i]);
                        continue;
                }
                sources[n_sources++] = argv[i];
                if (strcmp(base, "docker-default.json") == 0)
                        docker_file = argv[i];
        }
        if (n_sources == 0) {
                fprintf(stderr, "skip: none of the engine profiles to compare with is there; "
                                "/usr/share/containers/seccomp.json comes with Debian's package "
                                "golang-github-containers-common (scripts/deps.sh --test installs it)\n");
                return 77;
        }
        for (size_t i = 0; i < n_sources; i++) {
                tests[n] =
                        (struct CMUnitTest) cmocka_unit_test_prestate(test_engine_vs_libseccomp, (void *) sources[i]);
                tests[n].name = sources[i];
                n++;
        }
        tests[n++] = (struct CMUnitTest) cmocka_unit_test(test_default_longest);
        tests[n++] = (struct CMUnitTest) cmocka_unit_test(test_default_vs_docker);
        tests[n++] = (struct CMUnitTest) cmocka_unit_test(test_figures);
        return _cmocka_run_group_tests("test-profile-diff", tests, n, NULL, NULL);
}
