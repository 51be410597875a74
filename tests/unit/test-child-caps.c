/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the task worker's credential and filter steps (engine/child.c over caps.c and
 * filter-load.c): no_new_privs, the filter loaded, cloned or refused, ids, the bounding set,
 * capabilities and the ambient set. Helpers in child-run.h.
 *
 *   test-child-caps              tests that need no privilege
 *   test-child-caps root         tests that switch ids and capabilities (exit 77 when not root)
 *   test-child-caps capbset-mask PR_CAPBSET_DROP_MASK path (exit 77 when the kernel lacks it)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "child.h"
#include "child-run.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "probe.h"
#include "util.h"

static void test_nnp(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        run_ok(&p, &res);
        assert_status(&res, "NoNewPrivs", "0");

        plan_init(&p, argv_status);
        p.no_new_privs = true;
        run_ok(&p, &res);
        assert_status(&res, "NoNewPrivs", "1");
}

static void test_filter_load(void **state) {
        char buf[PATH_MAX];
        char *argv[] = { (char *) helper("ZYGOTE_TRY_SYSCALL", "try-syscall", buf, sizeof(buf)), "personality",
                         "0xffffffff", NULL };
        struct ze_plan p;
        struct result res;

        plan_init_load(&p, argv_status, &block_personality_prog);
        run_ok(&p, &res);
        assert_status(&res, "Seccomp", "2");
        assert_status(&res, "Seccomp_filters", "1");
        assert_status(&res, "NoNewPrivs", "1");

        /* and it is the filter we gave */
        plan_init_load(&p, argv, &block_personality_prog);
        run_ok(&p, &res);
        assert_string_equal(res.out, "personality errno=95\n");

        /* without a filter the same call is allowed */
        plan_init(&p, argv);
        run_ok(&p, &res);
        assert_string_equal(res.out, "personality errno=0\n");
}

static void test_filter_invalid(void **state) {
        static struct sock_filter bad[] = { BPF_STMT(BPF_JMP | BPF_JA, 5) }; /* jumps out */
        static const struct sock_fprog bad_prog = { .len = 1, .filter = bad };
        struct ze_plan p;
        struct result res;

        plan_init_load(&p, argv_true, &bad_prog);
        run_fails(&p, false, &res, ZE_STEP_FILTER, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_filter_clone_absent(void **state) {
        _cleanup_close_ int self = -EBADF;
        struct ze_plan p;
        struct result res;

        if (features.clone_filter)
                skip(); /* covered by the kernel lane on a patched kernel */
        self = pidfd_open_pid(getpid());
        assert_true(self >= 0);
        plan_init(&p, argv_true);
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_CLONE;
        p.ref_pidfd = self;
        run(&p, false, NULL, &res);
        /* an unpatched kernel knows no seccomp op 4 */
        assert_failed(&res, ZE_STEP_FILTER, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_capbset_mask_absent(void **state) {
        struct ze_plan p;
        struct result res;

        if (features.capbset_drop_mask)
                skip(); /* the capbset-mask group runs it */
        if (geteuid() != 0)
                skip();
        plan_init(&p, argv_true);
        p.capbset_drop = UINT64_C(1) << CAP_MKNOD;
        p.capbset_mask_prctl = true;
        run(&p, false, NULL, &res);
        /* prctl 82 is unknown here: the worker must fail, not silently keep the capability */
        assert_failed(&res, ZE_STEP_CAPBSET, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_try_syscall(void **state) {
        char buf[PATH_MAX], line[128], want[160];
        char *list_argv[] = { (char *) helper("ZYGOTE_TRY_SYSCALL", "try-syscall", buf, sizeof(buf)), "--list", NULL };
        static const char *const required[] = {
                "getpid",
                "personality",
                "socket",
                "unshare",
                "mount",
                "umount2",
                "keyctl",
                "kexec_load",
                "bpf",
                "perf_event_open",
                "ptrace",
                "setns",
                "chroot",
                "clone3",
                "add_key",
                "init_module",
                "swapon",
                "reboot",
                "open_by_handle_at",
        };
        struct ze_plan p;
        struct result list, res;
        unsigned n = 0;

        plan_init(&p, list_argv);
        run(&p, true, NULL, &list);
        assert_exec_ok(&list);
        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                snprintf(want, sizeof(want), "\n%s\n", required[i]);
                if (!strstr(list.out, want) && strncmp(list.out, want + 1, strlen(want + 1)) != 0)
                        fail_msg("try-syscall lacks %s", required[i]);
        }

        for (const char *l = list.out; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0) {
                size_t len = (size_t) (strchrnul(l, '\n') - l);
                char *argv[] = { list_argv[0], line, NULL };
                struct sock_filter f[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | BLOCKED_ERRNO),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = { .len = ELEMENTSOF(f), .filter = f };
                int nr;

                if (len == 0)
                        continue;
                assert_true(len < sizeof(line));
                memcpy(line, l, len);
                line[len] = 0;
                nr = seccomp_syscall_resolve_name(line);
                assert_true(nr >= 0);
                f[4].k = (uint32_t) nr;

                /* allowed: the helper survives and answers, not with the filter's errno */
                plan_init(&p, argv);
                run_ok(&p, &res);
                snprintf(want, sizeof(want), "%s errno=", line);
                assert_true(strncmp(res.out, want, strlen(want)) == 0);
                assert_int_not_equal(atoi(res.out + strlen(want)), BLOCKED_ERRNO);

                /* blocked: the filter's errno, so it was that call */
                plan_init_load(&p, argv, &prog);
                run_ok(&p, &res);
                snprintf(want, sizeof(want), "%s errno=%d\n", line, BLOCKED_ERRNO);
                assert_string_equal(res.out, want);
                n++;
        }
        assert_true(n >= ELEMENTSOF(required));
}

/* ---- tests that need root ----------------------------------------------------------------- */

static void become_nobody(void) {
        if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 || syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
                _exit(99);
}

static void test_ids_as_nonroot(void **state) {
        static const gid_t groups[] = { 0 };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        plan_ids(&p, 0, 0);
        p.groups = groups;
        p.n_groups = 1;
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_GROUPS, EPERM, ZE_EXIT_SETUP_FAILED);

        /* capset beyond the permitted set */
        plan_init(&p, argv_true);
        plan_caps(&p, UINT64_C(1) << CAP_SYS_ADMIN);
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_CAPS, EPERM, ZE_EXIT_SETUP_FAILED);

        /* the bounding set needs CAP_SETPCAP */
        plan_init(&p, argv_true);
        p.capbset_drop = UINT64_C(1) << CAP_MKNOD;
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_CAPBSET, EPERM, ZE_EXIT_SETUP_FAILED);
}

/* A worker that becomes uid and gid 65534 and keeps no capabilities. */
static void plan_nobody_without_caps(struct ze_plan *p) {
        plan_init(p, argv_status);
        plan_ids(p, 65534, 65534);
        plan_caps(p, 0);
}

/* What such a worker's program saw: uid 65534 in every slot, no effective capability. */
static void assert_nobody_without_caps(const struct result *res) {
        assert_status(res, "Uid", "65534\t65534\t65534\t65534");
        assert_int_equal(status_hex(res, "CapEff"), 0);
}

static void test_ids_switch(void **state) {
        static const gid_t groups[] = { 65534, 100 };
        struct ze_plan p;
        struct result res;

        plan_nobody_without_caps(&p);
        p.groups = groups;
        p.n_groups = ELEMENTSOF(groups);
        run_ok(&p, &res);
        assert_nobody_without_caps(&res);
        assert_status(&res, "Gid", "65534\t65534\t65534\t65534");
        assert_status(&res, "Groups", "100 65534");
        assert_int_equal(status_hex(&res, "CapPrm"), 0);

        /* no groups at all */
        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        run_ok(&p, &res);
        assert_status(&res, "Groups", "");
}

/* Keeps only CAP_CHOWN and CAP_KILL in the bounding set, by one prctl or the loop. */
static const uint64_t capbset_keep = (UINT64_C(1) << CAP_CHOWN) | (UINT64_C(1) << CAP_KILL);

static void run_capbset(bool mask_prctl, struct ze_plan *p, struct result *res) {
        plan_init(p, argv_status);
        p->capbset_drop = all_caps() & ~capbset_keep;
        p->capbset_mask_prctl = mask_prctl;
        run_ok(p, res);
        assert_int_equal(status_hex(res, "CapBnd"), capbset_keep);
}

static void test_capbset_loop(void **state) {
        uint64_t keep = capbset_keep;
        struct ze_plan p;
        struct result res;

        run_capbset(false, &p, &res);
        /* root keeps uid 0: execve gives it the bounding set */
        assert_int_equal(status_hex(&res, "CapEff"), keep);

        /* cap_last unknown (0) must not mean "drop only CAP_CHOWN" */
        plan_init(&p, argv_status);
        p.cap_last = 0;
        p.capbset_drop = ~keep;
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);
}

static void drop_mknod_and_setpcap(void) {
        if (prctl(PR_CAPBSET_DROP, CAP_MKNOD, 0, 0, 0) < 0 || prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0) < 0)
                _exit(99);
        /* and lose CAP_SETPCAP from the effective set too */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
                _exit(99);
        d[0].effective &= ~(1u << CAP_SETPCAP);
        d[0].permitted &= ~(1u << CAP_SETPCAP);
        if (syscall(SYS_capset, &h, d) < 0)
                _exit(99);
}

static void test_capbset_skip_absent(void **state) {
        struct ze_plan p;
        struct result res;

        /* Without CAP_SETPCAP, dropping bits that are already gone must still succeed. */
        plan_init(&p, argv_status);
        p.capbset_drop = (UINT64_C(1) << CAP_MKNOD) | (UINT64_C(1) << CAP_SETPCAP);
        run(&p, true, drop_mknod_and_setpcap, &res);
        assert_exec_ok(&res);
        assert_int_equal(status_hex(&res, "CapBnd"), bounding_set() & ~p.capbset_drop);
}

static void test_caps(void **state) {
        uint64_t keep = (UINT64_C(1) << CAP_CHOWN) | (UINT64_C(1) << CAP_KILL) | (UINT64_C(1) << CAP_NET_BIND_SERVICE);
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        plan_caps(&p, keep);
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), keep);
        assert_int_equal(status_hex(&res, "CapPrm"), keep);
        assert_int_equal(status_hex(&res, "CapInh"), keep);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);
        assert_int_equal(status_hex(&res, "CapAmb"), 0);

        /* kept caps for a non-root uid: capset must work after the switch (KEEPCAPS); execve
         * as non-root then clears them, as for any non-root program */
        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        plan_ids(&p, 65534, 65534);
        plan_caps(&p, keep);
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), 0);
        assert_int_equal(status_hex(&res, "CapInh"), keep);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);

        /* an inheritable set narrower than the others (the caller's) */
        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        plan_caps(&p, keep);
        p.caps_inh_drop = ~(UINT64_C(1) << CAP_KILL);
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), keep);
        assert_int_equal(status_hex(&res, "CapInh"), UINT64_C(1) << CAP_KILL);
}

/* Step 0c: the caller's scheduling and umask, as the exec'd program sees them. */

static void raise_ambient(void) {
        /* CAP_KILL into inheritable, then ambient: ze_child_run must clear it */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                _exit(99);
        d[0].inheritable |= 1u << CAP_KILL;
        if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0) < 0)
                _exit(99);
}

static void test_ambient_cleared(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        run(&p, true, raise_ambient, &res);
        assert_exec_ok(&res);
        assert_int_equal(status_hex(&res, "CapAmb"), 0);
        assert_int_equal(status_hex(&res, "CapEff"), 0);
}

/* Without no_new_privs a filter loaded after the caps step is refused (EACCES); filter_early
 * loads it while CAP_SYS_ADMIN is still there. */
static void check_filter_needs_early(struct ze_plan *p, struct result *res) {
        p->filter_mode = ZE_FILTER_LOAD;
        p->prog = &block_personality_prog;
        run(p, true, NULL, res);
        assert_failed(res, ZE_STEP_FILTER, EACCES, ZE_EXIT_SETUP_FAILED);
        p->filter_early = true;
        run_ok(p, res);
        assert_status(res, "Seccomp_filters", "1");
}

static void test_filter_late_needs_nnp(void **state) {
        struct ze_plan p;
        struct result res;

        /* uid 65534 without no_new_privs: after the caps step nothing may load a filter */
        plan_nobody_without_caps(&p);
        check_filter_needs_early(&p, &res);
        assert_status(&res, "Seccomp", "2");
        assert_status(&res, "NoNewPrivs", "0");
        assert_nobody_without_caps(&res);

        /* the same for a worker that stays root but loses CAP_SYS_ADMIN (Docker's default) */
        plan_init(&p, argv_status);
        p.capbset_drop = UINT64_C(1) << CAP_SYS_ADMIN;
        plan_caps(&p, UINT64_C(1) << CAP_CHOWN);
        check_filter_needs_early(&p, &res);
        assert_int_equal(status_hex(&res, "CapBnd") & (UINT64_C(1) << CAP_SYS_ADMIN), 0);
}

/* A process in network and UTS namespaces of its own (once this returns), waiting until the
 * pipe it returns closes. */

/* ---- PR_CAPBSET_DROP_MASK --------------------------------------------------------------- */

static void test_capbset_mask(void **state) {
        struct ze_plan p;
        struct result res;

        run_capbset(true, &p, &res);
}

static const struct CMUnitTest plain[] = {
        tu_test(test_nnp),
        tu_test(test_filter_load),
        tu_test(test_filter_invalid),
        tu_test(test_filter_clone_absent),
        tu_test(test_try_syscall),
};
static const struct CMUnitTest root[] = {
        tu_test(test_ids_as_nonroot),      tu_test(test_ids_switch),
        tu_test(test_capbset_loop),        tu_test(test_capbset_skip_absent),
        tu_test(test_capbset_mask_absent), tu_test(test_caps),
        tu_test(test_ambient_cleared),     tu_test(test_filter_late_needs_nnp),
};
static const struct CMUnitTest mask[] = {
        tu_test(test_capbset_mask),
};

CHILD_TESTS_MAIN(CHILD_TEST_GROUP("plain", "child-caps", plain),
                 CHILD_TEST_GROUP("root", "child-caps-root", root, .needs_root = true),
                 CHILD_TEST_GROUP("capbset-mask", "child-capbset-mask", mask, .needs_root = true,
                                  .needs_capbset_mask = true))
