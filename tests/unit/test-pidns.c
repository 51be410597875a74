/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of reference/pidns.c and `zygote-ref --init` (reference/zygote-init.c): a real init in a
 * new pid and mount namespace, a child cloned into it, what that child sees in /proc, the init
 * staying while its namespace holds a process after it is let go, and leaving after the last.
 * Needs root and CONFIG_PID_NS (skipped otherwise, exit 77).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "pidfd-util.h"
#include "pidns.h"
#include "probe.h"
#include "reference.h"
#include "util.h"

static int helper_fd = -EBADF;

static bool readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        return poll(&p, 1, timeout_ms) == 1;
}

/* In the child: what it sees, as one byte each (1 = as expected), written to fd. */
_Noreturn static void child_report(int fd, pid_t outside) {
        char r[4] = { 0 };
        char path[64];
        DIR *d;
        struct dirent *de;
        int n = 0;

        r[0] = getpid() > 1 && getpid() < 100; /* a pid of the new namespace */
        snprintf(path, sizeof(path), "/proc/%d", (int) outside);
        /* the test itself is outside: no such pid here (or one of the namespace's, not ours) */
        r[1] = kill(outside, 0) < 0 && errno == ESRCH;
        d = opendir("/proc");
        while (d && (de = readdir(d)))
                n += de->d_name[0] >= '0' && de->d_name[0] <= '9';
        if (d)
                closedir(d);
        r[2] = n >= 2 && n < 10; /* the init and us, nothing of the host's */
        r[3] = 1;
        (void) write(fd, r, sizeof(r));
        _exit(0);
}

static void test_clone_into_namespace(void **state) {
        struct zr_pidns ns = ZR_PIDNS_NULL;
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        char what[64] = "", r[4];
        int pidfd = -EBADF;
        pid_t pid, me = getpid();
        char own[64], theirs[64], path[64];
        ssize_t n;

        (void) state;
        assert_int_equal(zr_pidns_start(helper_fd, &ns, what, sizeof(what)), 0);
        assert_true(ns.pidref.pid > 0 && ns.pidref.fd >= 0 && ns.pidns_fd >= 0 && ns.mntns_fd >= 0);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);

        pid = zr_pidns_clone(&ns, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                if (syscall(SYS_setns, ns.mntns_fd, CLONE_NEWNS) < 0)
                        _exit(3);
                child_report(p[1], me);
        }
        p[1] = safe_close(p[1]);
        n = read(p[0], r, sizeof(r));
        assert_int_equal(n, sizeof(r));
        assert_true(r[0]); /* its pid is the namespace's */
        assert_true(r[1]); /* it cannot signal us */
        assert_true(r[2]); /* its /proc shows the namespace only */
        assert_int_equal(pidfd_reap(pidfd, NULL), 0);
        safe_close(pidfd);

        /* we went back: our next child is in our own namespace */
        pid = zr_pidns_clone(NULL, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int) getpid());
                _exit(access(path, F_OK) == 0 ? 0 : 4);
        }
        assert_int_equal(pidfd_reap(pidfd, NULL), 0);
        safe_close(pidfd);
        snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children", (int) me);
        n = readlink(path, own, sizeof(own) - 1);
        assert_true(n > 0);
        own[n] = 0;
        n = readlink("/proc/self/ns/pid", theirs, sizeof(theirs) - 1);
        assert_true(n > 0);
        theirs[n] = 0;
        assert_string_equal(own, theirs);

        zr_pidns_kill(&ns);
}

/* Let go of with a process inside, the init stays; it leaves after that process. */
static void test_init_outlives_release(void **state) {
        struct zr_pidns ns = ZR_PIDNS_NULL;
        _cleanup_close_pair_ int hold[2] = { -EBADF, -EBADF };
        char what[64] = "";
        int pidfd = -EBADF, init_fd;
        pid_t pid;

        (void) state;
        assert_int_equal(zr_pidns_start(helper_fd, &ns, what, sizeof(what)), 0);
        assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
        pid = zr_pidns_clone(&ns, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                char b;
                close(hold[1]);
                (void) read(hold[0], &b, 1); /* until the test closes its end */
                _exit(0);
        }
        hold[0] = safe_close(hold[0]);
        init_fd = fcntl(ns.pidref.fd, F_DUPFD_CLOEXEC, 3);
        assert_true(init_fd >= 0);
        zr_pidns_release(&ns);
        assert_false(readable(init_fd, 200)); /* stays: its namespace is not empty */
        hold[1] = safe_close(hold[1]);
        assert_int_equal(pidfd_reap(pidfd, NULL), 0);
        safe_close(pidfd);
        assert_true(readable(init_fd, 10000)); /* leaves after the last */
        assert_int_equal(pidfd_reap(init_fd, NULL), 0);
        safe_close(init_fd);
}

/* Its signals from inside are ignored: a process of its namespace cannot kill it. */
static void test_init_ignores_signals_from_inside(void **state) {
        struct zr_pidns ns = ZR_PIDNS_NULL;
        char what[64] = "";
        int pidfd = -EBADF;
        siginfo_t si;
        pid_t pid;

        (void) state;
        assert_int_equal(zr_pidns_start(helper_fd, &ns, what, sizeof(what)), 0);
        pid = zr_pidns_clone(&ns, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(kill(1, SIGKILL) == 0 && kill(1, SIGTERM) == 0 ? 0 : 5);
        assert_int_equal(pidfd_wait(pidfd, WEXITED, &si), 0);
        assert_int_equal(si.si_status, 0);
        safe_close(pidfd);
        assert_false(readable(ns.pidref.fd, 200));
        zr_pidns_kill(&ns);
}

int main(void) {
        char helper[PATH_MAX];
        char what[64] = "";
        struct zr_pidns ns = ZR_PIDNS_NULL;
        int r;

        if (geteuid() != 0) {
                fprintf(stderr, "needs root (CAP_SYS_ADMIN for a pid namespace)\n");
                return 77;
        }
        if (zr_helper_path(helper, sizeof(helper)) < 0 || (helper_fd = zr_helper_open(helper)) < 0) {
                fprintf(stderr, "zygote-ref not found: set ZYGOTE_REF_HELPER\n");
                return 1;
        }
        /* zygoted's own probe: where it gives tasks no pid namespace (a chrooted zygoted, whose
         * workers would leave its root by joining the namespace's mounts), nothing here applies */
        struct ze_features f;
        if (ze_probe_features(&f) == 0 && !f.pid_namespace) {
                fprintf(stderr, "zygoted would use no pid namespace here: %s\n", f.pid_namespace_reason);
                return 77;
        }
        r = zr_pidns_start(helper_fd, &ns, what, sizeof(what));
        if (r == -EINVAL || r == -EPERM) {
                fprintf(stderr, "no pid namespace here: %s\n", strerror(-r));
                return 77;
        }
        zr_pidns_kill(&ns);

        const struct CMUnitTest tests[] = {
                tu_test(test_clone_into_namespace),
                tu_test(test_init_outlives_release),
                tu_test(test_init_ignores_signals_from_inside),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
