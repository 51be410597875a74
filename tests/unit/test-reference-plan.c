/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of engine/plan.c as the reference sees it: a plan packed and unpacked whole (round
 * trip, the caller's confinement and scheduling), corrupt buffers and limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "plan.h"
#include "reference.h"
#include "util.h"

#include "reference-fixtures.h"

/* ---- plan packing --------------------------------------------------------------------- */

static void test_plan_round_trip(void **state) {
        static char *const argv[] = { "/bin/echo", "", "two words", NULL };
        static char *const envp[] = { "A=1", "B=", NULL };
        static const gid_t groups[] = { 5, 100, 65534 };
        static const struct sock_fprog prog = { .len = ELEMENTSOF(block_personality), .filter = block_personality };
        struct ze_fdmap map[] = { { .src = 10, .target = 0 }, { .src = 11, .target = 7 } };
        struct ze_plan p = {
                .argv = argv,
                .envp = envp,
                .cwd = "/tmp",
                .search_path = "/a:/b",
                .fds = map,
                .n_fds = 2,
                .status_fd = 12,
                .hold_fd = 13,
                .hold_quiet = true,
                .ctty = true,
                .set_ids = true,
                .uid = 1000,
                .gid = 1001,
                .groups = groups,
                .n_groups = 3,
                .capbset_drop = UINT64_C(0xfffffffffe),
                .capbset_mask_prctl = true,
                .cap_last = 40,
                .caps_keep = 0x21,
                .set_caps = true,
                .no_new_privs = true,
                .filter_mode = ZE_FILTER_LOAD,
                .filter_early = true,
                .prog = &prog,
                .filter_flags = 3,
                .ref_pidfd = 14,
                .path_buf = path_buf,
                .path_buf_len = 300,
        };
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;
        const struct ze_plan *q = &s.plan;

        /* clone mode: the reference pidfd goes along, the program does not */
        p.filter_mode = ZE_FILTER_CLONE;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 5);
        assert_int_equal(fds[4], 14);
        int got5[] = { 20, 21, 22, 23, 24 };
        assert_int_equal(ze_plan_unpack(buf, len, got5, 5, &s), 0);
        assert_int_equal(s.plan.filter_mode, ZE_FILTER_CLONE);
        assert_int_equal(s.plan.ref_pidfd, 24);
        assert_null(s.plan.prog);
        ze_plan_storage_done(&s);
        free(buf);
        buf = NULL;

        p.filter_mode = ZE_FILTER_LOAD;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 4);
        assert_int_equal(fds[0], 10);
        assert_int_equal(fds[1], 11);
        assert_int_equal(fds[2], 12);
        assert_int_equal(fds[3], 13);
        /* the receiver gets other numbers */
        int got[] = { 20, 21, 22, 23 };
        assert_int_equal(ze_plan_unpack(buf, len, got, 4, &s), 0);

        assert_string_equal(q->argv[0], "/bin/echo");
        assert_string_equal(q->argv[1], "");
        assert_string_equal(q->argv[2], "two words");
        assert_null(q->argv[3]);
        assert_string_equal(q->envp[0], "A=1");
        assert_string_equal(q->envp[1], "B=");
        assert_null(q->envp[2]);
        assert_string_equal(q->cwd, "/tmp");
        assert_string_equal(q->search_path, "/a:/b");
        assert_int_equal(q->n_fds, 2);
        assert_int_equal(q->fds[0].src, 20);
        assert_int_equal(q->fds[0].target, 0);
        assert_int_equal(q->fds[1].src, 21);
        assert_int_equal(q->fds[1].target, 7);
        assert_int_equal(q->status_fd, 22);
        assert_int_equal(q->hold_fd, 23);
        assert_int_equal(q->ref_pidfd, -EBADF); /* only in clone mode */
        assert_true(q->ctty && q->set_ids && q->capbset_mask_prctl && q->set_caps && q->no_new_privs &&
                    q->filter_early && q->hold_quiet);
        assert_int_equal(q->uid, 1000);
        assert_int_equal(q->gid, 1001);
        assert_int_equal(q->n_groups, 3);
        assert_memory_equal(q->groups, groups, sizeof(groups));
        assert_int_equal(q->capbset_drop, UINT64_C(0xfffffffffe));
        assert_int_equal(q->cap_last, 40);
        assert_int_equal(q->caps_keep, 0x21);
        assert_int_equal(q->filter_mode, ZE_FILTER_LOAD);
        assert_int_equal(q->filter_flags, 3);
        assert_non_null(q->prog);
        assert_int_equal(q->prog->len, ELEMENTSOF(block_personality));
        assert_memory_equal(q->prog->filter, block_personality, sizeof(block_personality));
        assert_int_equal(q->path_buf_len, 300);
        assert_non_null(q->path_buf);
        memset(q->path_buf, 'x', q->path_buf_len); /* really that big (ASan would say) */
        ze_plan_storage_done(&s);
        assert_null(s.mem);

        /* the minimum: argv only, no status fd */
        static char *const one[] = { "x", NULL };
        struct ze_plan m = { .argv = one, .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        free(buf);
        buf = NULL;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&m, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 0);
        assert_int_equal(ze_plan_unpack(buf, len, NULL, 0, &s), 0);
        assert_string_equal(s.plan.argv[0], "x");
        assert_null(s.plan.envp[0]);
        assert_null(s.plan.cwd);
        assert_null(s.plan.search_path);
        assert_null(s.plan.prog);
        assert_null(s.plan.path_buf);
        assert_int_equal(s.plan.status_fd, -EBADF);
        assert_int_equal(s.plan.hold_fd, -EBADF);
        ze_plan_storage_done(&s);
}

/* A plan as zygoted hands the reference one for a caller: what the two tests below add to. */
static struct ze_plan caller_plan(void) {
        static char *const argv[] = { "/bin/true", NULL };

        return (struct ze_plan){
                .argv = argv, .status_fd = 12, .hold_fd = -1, .ref_pidfd = -1, .filter_mode = ZE_FILTER_INHERITED
        };
}

/* The caller's rlimits and cgroup directories travel to the reference; its namespaces and root
 * never do (the worker that joins them is forked by zygoted). */
static void test_plan_caller_confinement(void **state) {
        struct ze_plan p = caller_plan();
        int fds[ZE_PLAN_MAX_FDS], got[] = { 40, 41, 42 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;

        p.n_rlimits = 2;
        p.n_cgroups = 2;
        p.cgroup_fds[0] = 30;
        p.cgroup_fds[1] = 31;
        p.rlimits[0] = (struct ze_rlimit){ .resource = 6, .cur = 30, .max = 31 };
        p.rlimits[1] = (struct ze_rlimit){ .resource = 7, .cur = 64, .max = UINT64_MAX };
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 3);
        assert_int_equal(fds[0], 30);
        assert_int_equal(fds[1], 31);
        assert_int_equal(fds[2], 12);
        assert_int_equal(ze_plan_unpack(buf, len, got, 3, &s), 0);
        assert_int_equal(s.plan.n_cgroups, 2);
        assert_int_equal(s.plan.cgroup_fds[0], 40);
        assert_int_equal(s.plan.cgroup_fds[1], 41);
        assert_int_equal(s.plan.status_fd, 42);
        assert_int_equal(s.plan.n_rlimits, 2);
        assert_memory_equal(s.plan.rlimits, p.rlimits, 2 * sizeof(struct ze_rlimit));
        ze_plan_storage_done(&s);
        /* one fd short: the cgroup directories count */
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), -EBADMSG);

        p.ns_join = 0x40000000; /* CLONE_NEWNET */
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
        p.ns_join = 0;
        p.enter_root = true;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
        /* the caller's own filters: a reference's worker could not put them under the profile's */
        p.enter_root = false;
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog caller = { .len = 1, .filter = &allow };
        p.caller_progs = &caller;
        p.n_caller_progs = 1;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
}

/* The caller's scheduling and inheritable set travel to the reference as they are; a umask that
 * is not one is refused. */
static void test_plan_caller_sched(void **state) {
        struct ze_plan p = caller_plan();
        int fds[ZE_PLAN_MAX_FDS], got[] = { 40 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;
        uint32_t umask_bad = 01000;

        p.caps_keep = 0x3000;
        p.caps_inh_drop = ~0x2000ULL;
        p.set_sched = true;
        p.sched = (struct ze_sched){
                .policy = 3, .nice = 10, .ioprio = 3 << 13, .oom_score_adj = -17, .umask = 077, .affinity = { 1, 0, 4 }
        };
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), 0);
        assert_true(s.plan.set_sched);
        assert_memory_equal(&s.plan.sched, &p.sched, sizeof(p.sched));
        assert_int_equal(s.plan.caps_inh_drop, p.caps_inh_drop);
        assert_int_equal(s.plan.caps_keep, p.caps_keep);
        ze_plan_storage_done(&s);

        /* the umask sits at a fixed place in the header: after 18 words and 4 quadwords, 5 words in */
        memcpy((char *) buf + 18 * 4 + 4 * 8 + 5 * 4, &umask_bad, sizeof(umask_bad));
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), -EBADMSG);
}

static void test_plan_corrupt(void **state) {
        static char *const argv[] = { "/bin/true", "a", NULL };
        static char *const envp[] = { "X=y", NULL };
        struct ze_fdmap map[] = { { .src = 10, .target = 1 } };
        struct ze_plan p = { .argv = argv,
                             .envp = envp,
                             .cwd = "/",
                             .fds = map,
                             .n_fds = 1,
                             .status_fd = 11,
                             .hold_fd = -1,
                             .ref_pidfd = -1,
                             .path_buf = path_buf,
                             .path_buf_len = 64 };
        int fds[ZE_PLAN_MAX_FDS], got[] = { 30, 31, 32 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ char *buf = NULL;
        char *copy;
        struct ze_plan_storage s;
        unsigned ok = 0;

        assert_int_equal(ze_plan_pack(&p, (void **) &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 2);
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), 0);
        ze_plan_storage_done(&s);

        /* every truncation, and one byte too many */
        copy = malloc(len + 1);
        assert_non_null(copy);
        for (size_t l = 0; l < len; l++) {
                memcpy(copy, buf, l);
                assert_int_equal(ze_plan_unpack(copy, l, got, 2, &s), -EBADMSG);
        }
        memcpy(copy, buf, len);
        copy[len] = 0;
        assert_int_equal(ze_plan_unpack(copy, len + 1, got, 2, &s), -EBADMSG);

        /* wrong fd counts, a negative fd */
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), -EBADMSG);
        assert_int_equal(ze_plan_unpack(buf, len, got, 3, &s), -EBADMSG);
        got[1] = -1;
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), -EBADMSG);
        got[1] = 31;

        /* the last string loses its NUL */
        memcpy(copy, buf, len);
        copy[len - 1] = 'x';
        assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);

        /* string counts that do not match the string area (n_argv at 16, n_envp at 20) */
        {
                uint32_t v;

                memcpy(copy, buf, len);
                v = 0;
                memcpy(copy + 20, &v, sizeof(v));
                assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);
                memcpy(copy, buf, len);
                v = 3;
                memcpy(copy + 16, &v, sizeof(v));
                assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);
        }

        /* every single byte of the buffer set to each of a few values: never a crash; either
         * rejected or a consistent plan */
        static const unsigned char values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
        for (size_t i = 0; i < len; i++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        int r;

                        memcpy(copy, buf, len);
                        copy[i] = (char) values[v];
                        r = ze_plan_unpack(copy, len, got, 2, &s);
                        assert_true(r == 0 || r == -EBADMSG);
                        if (r == 0) {
                                ok++;
                                assert_non_null(s.plan.argv[0]);
                                for (char *const *a = s.plan.argv; *a; a++)
                                        (void) strlen(*a);
                                for (char *const *e = s.plan.envp; *e; e++)
                                        (void) strlen(*e);
                                assert_true(s.plan.n_fds <= ZE_MAX_FDS);
                                ze_plan_storage_done(&s);
                        }
                }
        assert_true(ok > 0); /* some bytes (uid, caps, string contents) are free-form */
        free(copy);
}

static void test_plan_limits(void **state) {
        static char *const argv[] = { "x", NULL };
        struct ze_fdmap map[ZE_MAX_FDS + 1];
        struct ze_plan p = { .argv = argv, .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        void *buf = NULL;
        char **big;

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                map[i] = (struct ze_fdmap){ .src = 3, .target = (int) i };
        p.fds = map;
        p.n_fds = ZE_MAX_FDS + 1;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -E2BIG);
        p.n_fds = ZE_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, ZE_MAX_FDS);
        free(buf);
        buf = NULL;

        /* a fd list too small */
        n_fds = 3;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -ENOBUFS);
        p.n_fds = 0;

        /* a quiet hold without a hold fd */
        p.hold_quiet = true;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
        p.hold_quiet = false;

        /* no argv */
        struct ze_plan none = { .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&none, &buf, &len, fds, &n_fds), -EINVAL);

        /* clone mode without a pidfd */
        p.filter_mode = ZE_FILTER_CLONE;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EBADF);
        p.filter_mode = ZE_FILTER_NONE;

        /* more than one message can carry */
        big = calloc(4, sizeof(char *));
        assert_non_null(big);
        big[0] = "x";
        big[1] = malloc(ZE_PLAN_MAX_SIZE);
        assert_non_null(big[1]);
        memset(big[1], 'a', ZE_PLAN_MAX_SIZE - 1);
        big[1][ZE_PLAN_MAX_SIZE - 1] = 0;
        p.argv = big;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -E2BIG);
        free(big[1]);
        free(big);
        assert_null(buf);
}

/* A pool worker's unpack: into its static buffer, the same plan as ze_plan_unpack() gives, nothing
 * to free; a buffer too small or misaligned refused; a corrupt message refused as ever. */
static void test_plan_unpack_into(void **state) {
        static char *const argv[] = { "/bin/echo", "a", NULL };
        static char *const envp[] = { "A=1", NULL };
        static const gid_t groups[] = { 5, 100 };
        static uint64_t mem[ZE_PLAN_UNPACK_MAX / 8 + 1];
        struct ze_fdmap map[] = { { .src = 10, .target = 1 } };
        struct ze_plan p = caller_plan();
        int fds[ZE_PLAN_MAX_FDS], got[] = { 20, 21 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;
        char *b;

        p.argv = argv;
        p.envp = envp;
        p.cwd = "/tmp";
        p.fds = map;
        p.n_fds = 1;
        p.set_ids = true;
        p.uid = 1000;
        p.groups = groups;
        p.n_groups = 2;
        p.path_buf = path_buf;
        p.path_buf_len = 64;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 2);
        memset(mem, 0xa5, sizeof(mem)); /* what an earlier request left: no zeroes are relied on */
        assert_int_equal(ze_plan_unpack_into(buf, len, got, 2, mem, sizeof(mem), &s), 0);
        assert_null(s.mem);
        assert_string_equal(s.plan.argv[0], "/bin/echo");
        assert_string_equal(s.plan.argv[1], "a");
        assert_null(s.plan.argv[2]);
        assert_string_equal(s.plan.envp[0], "A=1");
        assert_null(s.plan.envp[1]);
        assert_string_equal(s.plan.cwd, "/tmp");
        assert_int_equal(s.plan.fds[0].src, 20);
        assert_int_equal(s.plan.fds[0].target, 1);
        assert_int_equal(s.plan.status_fd, 21);
        assert_int_equal(s.plan.uid, 1000);
        assert_memory_equal(s.plan.groups, groups, sizeof(groups));
        assert_int_equal(s.plan.path_buf_len, 64);
        assert_int_equal(s.plan.path_buf[64], 0);
        b = (char *) mem;
        assert_true(s.plan.argv[0] >= b && s.plan.argv[0] < b + sizeof(mem));
        assert_true(s.plan.path_buf >= b && s.plan.path_buf + 64 < b + sizeof(mem));
        ze_plan_storage_done(&s); /* nothing allocated: nothing freed */

        assert_int_equal(ze_plan_unpack_into(buf, len, got, 2, mem, 64, &s), -E2BIG);
        assert_int_equal(ze_plan_unpack_into(buf, len, got, 2, b + 1, sizeof(mem) - 8, &s), -EINVAL);
        assert_int_equal(ze_plan_unpack_into(buf, len, got, 1, mem, sizeof(mem), &s), -EBADMSG);
        ((char *) buf)[0] ^= 1;
        assert_int_equal(ze_plan_unpack_into(buf, len, got, 2, mem, sizeof(mem), &s), -EBADMSG);
}

TU_MAIN_GROUP("plan", NULL, tu_test(test_plan_round_trip), tu_test(test_plan_caller_confinement),
              tu_test(test_plan_caller_sched), tu_test(test_plan_corrupt), tu_test(test_plan_limits),
              tu_test(test_plan_unpack_into))
