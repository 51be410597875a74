/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of engine/probe.c: the probe's answers must match an independent look at the
 * kernel, ZYGOTE_DISABLE_FEATURES must force features off, and probing must leave no trace on
 * the caller (no filter, no lost capability, no child left).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe.h"
#include "testutil.h"
#include "util.h"

/* "Key:\tvalue" from /proc/self/status, parsed as hex; -1 if absent. */
static int64_t status_hex(const char *key) {
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        size_t klen = strlen(key);
        int64_t v = -1;

        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        v = (int64_t) strtoull(line + klen + 1, NULL, 16);
                        break;
                }
        fclose(f);
        return v;
}

/* Runs fn in a forked child and returns what it wrote (an int). */
static int in_child(int (*fn)(void)) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        int v = -1, status;
        pid_t pid;

        assert_return_code(pipe2(p, O_CLOEXEC), errno);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int r = fn();
                _exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
        }
        p[1] = safe_close(p[1]);
        assert_int_equal(read(p[0], &v, sizeof(v)), sizeof(v));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return v;
}

/* Independent check of op 4: an unpatched kernel's seccomp() rejects an unknown op with EINVAL
 * before looking at anything else; a kernel that knows op 4 rejects the bad pidfd (EBADF). */
static int seccomp_op4_errno(void) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -1;
        if (syscall(SYS_seccomp, 4, 0, (void *) (intptr_t) -1) == 0)
                return 0;
        return errno;
}

/* Independent check of prctl 82: its effect as /proc shows it (not PR_CAPBSET_READ). */
static int capbset_mask_works(void) {
        int64_t before = status_hex("CapBnd"), after;
        uint64_t bit = UINT64_C(1) << CAP_MKNOD;

        if (!(before & (int64_t) bit))
                return -1;
        if (prctl(82, (unsigned long) bit, 0UL, 0UL, 0UL) < 0)
                return 0;
        after = status_hex("CapBnd");
        return after == (before & ~(int64_t) bit);
}

static void test_matches_kernel(void **state) {
        struct ze_features f;
        int op4, mask;

        unsetenv("ZYGOTE_DISABLE_FEATURES");
        assert_int_equal(ze_probe_features(&f), 0);
        fprintf(stderr, "clone_filter=%d (%s)\ncapbset_drop_mask=%d (%s)\ncap_last=%u\n", f.clone_filter,
                f.clone_filter_reason, f.capbset_drop_mask, f.capbset_drop_mask_reason, f.cap_last);

        op4 = in_child(seccomp_op4_errno);
        if (op4 == EINVAL) {
                assert_false(f.clone_filter);
                assert_non_null(strstr(f.clone_filter_reason, "seccomp op 4"));
                assert_non_null(strstr(f.clone_filter_reason, strerror(EINVAL)));
        } else if (op4 == EBADF)
                assert_true(f.clone_filter);
        else
                fail_msg("seccomp op 4 with a bad pidfd: errno %d", op4);

        if (geteuid() == 0) {
                mask = in_child(capbset_mask_works);
                assert_true(mask >= 0);
                assert_int_equal(f.capbset_drop_mask, mask == 1);
        } else
                assert_false(f.capbset_drop_mask); /* needs CAP_SETPCAP */
        assert_non_null(strstr(f.capbset_drop_mask_reason, "prctl 82"));
}

static void test_cap_last(void **state) {
        FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "re");
        struct ze_features f;
        unsigned want, got;

        assert_non_null(file);
        assert_int_equal(fscanf(file, "%u", &want), 1);
        fclose(file);
        assert_int_equal(ze_cap_last(&got), 0);
        assert_int_equal(got, want);
        assert_int_equal(ze_probe_features(&f), 0);
        assert_int_equal(f.cap_last, want);
        /* and the kernel agrees: want is known, want + 1 is not */
        assert_true(prctl(PR_CAPBSET_READ, want, 0, 0, 0) >= 0);
        assert_true(prctl(PR_CAPBSET_READ, want + 1, 0, 0, 0) < 0);
}

static void test_forcing(void **state) {
        static const char *const lists[] = { "clone_filter,capbset_drop_mask", " capbset_drop_mask , clone_filter",
                                             "all" };
        struct ze_features f;

        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                assert_int_equal(setenv("ZYGOTE_DISABLE_FEATURES", lists[i], 1), 0);
                assert_int_equal(ze_probe_features(&f), 0);
                assert_false(f.clone_filter);
                assert_false(f.capbset_drop_mask);
                assert_non_null(strstr(f.clone_filter_reason, "ZYGOTE_DISABLE_FEATURES"));
                assert_non_null(strstr(f.capbset_drop_mask_reason, "ZYGOTE_DISABLE_FEATURES"));
        }

        /* only the named feature is forced; the other one is probed */
        assert_int_equal(setenv("ZYGOTE_DISABLE_FEATURES", "capbset_drop_mask", 1), 0);
        assert_int_equal(ze_probe_features(&f), 0);
        assert_non_null(strstr(f.capbset_drop_mask_reason, "ZYGOTE_DISABLE_FEATURES"));
        assert_null(strstr(f.clone_filter_reason, "ZYGOTE_DISABLE_FEATURES"));
        assert_non_null(strstr(f.clone_filter_reason, "seccomp op 4"));

        /* a name that merely contains a feature's name forces nothing */
        assert_int_equal(setenv("ZYGOTE_DISABLE_FEATURES", "clone_filterx,xcapbset_drop_mask", 1), 0);
        assert_int_equal(ze_probe_features(&f), 0);
        assert_null(strstr(f.clone_filter_reason, "ZYGOTE_DISABLE_FEATURES"));
        assert_null(strstr(f.capbset_drop_mask_reason, "ZYGOTE_DISABLE_FEATURES"));
        unsetenv("ZYGOTE_DISABLE_FEATURES");
}

static void test_no_trace(void **state) {
        int64_t bnd = status_hex("CapBnd"), eff = status_hex("CapEff");
        struct ze_features f;

        unsetenv("ZYGOTE_DISABLE_FEATURES");
        assert_int_equal(ze_probe_features(&f), 0);
        assert_int_equal(status_hex("Seccomp"), 0);
        assert_int_equal(status_hex("NoNewPrivs"), 0);
        assert_int_equal(status_hex("CapBnd"), bnd);
        assert_int_equal(status_hex("CapEff"), eff);
        /* every probe child was reaped */
        tu_assert_no_children();
}

TU_MAIN_GROUP("probe", NULL, tu_test(test_matches_kernel), tu_test(test_cap_last), tu_test(test_forcing),
              tu_test(test_no_trace))
