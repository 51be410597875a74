/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of common/pidref.c: a real child held as one handle (opened by pid, signalled,
 * waited for, killed and reaped through it), and what an empty handle answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pidfd-util.h"
#include "pidref.h"
#include "testutil.h"

static void test_child(void **state) {
        struct zc_pidref p = ZC_PIDREF_NULL;
        siginfo_t si;
        int pidfd = -1;
        pid_t pid = clone_with_pidfd(0, &pidfd);

        assert_true(pid >= 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        assert_int_equal(zc_pidref_set_pid(&p, pid), 0);
        assert_true(zc_pidref_is_set(&p));
        assert_int_equal(p.pid, pid);
        assert_true(fcntl(p.fd, F_GETFD) & FD_CLOEXEC);
        /* still running: WNOHANG reports nothing */
        assert_int_equal(zc_pidref_wait(&p, WEXITED | WNOHANG, &si), 0);
        assert_int_equal(si.si_pid, 0);
        assert_int_equal(zc_pidref_kill(&p, SIGKILL), 0);
        /* seen but left to reap (WNOWAIT), then killed again (gone: fine) and reaped */
        assert_int_equal(zc_pidref_wait(&p, WEXITED | WNOWAIT, &si), 0);
        assert_int_equal(si.si_code, CLD_KILLED);
        assert_int_equal(si.si_pid, pid);
        zc_pidref_kill_and_reap(&p);
        assert_false(zc_pidref_is_set(&p));
        assert_int_equal(p.pid, 0);
        /* reaped: the other pidfd of the same child has nothing left to wait for */
        assert_int_equal(pidfd_wait(pidfd, WEXITED | WNOHANG, &si), -ECHILD);
        close(pidfd);
}

static void test_take_and_done(void **state) {
        struct zc_pidref p;
        int fd;

        assert_int_equal(zc_pidref_set_pid(&p, getpid()), 0);
        assert_int_equal(zc_pidref_kill(&p, 0), 0);
        fd = zc_pidref_take_fd(&p);
        assert_true(fd >= 0);
        assert_false(zc_pidref_is_set(&p));
        p = zc_pidref_make(getpid(), fd);
        assert_true(zc_pidref_is_set(&p));
        zc_pidref_done(&p);
        assert_int_equal(p.fd, -EBADF);
        assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed */
}

static void test_empty(void **state) {
        struct zc_pidref p = ZC_PIDREF_NULL, q = zc_pidref_make(123, 456);
        siginfo_t si;

        assert_false(zc_pidref_is_set(&p));
        assert_false(zc_pidref_is_set(NULL));
        assert_int_equal(zc_pidref_kill(&p, SIGKILL), -ESRCH);
        assert_int_equal(zc_pidref_wait(&p, WEXITED, &si), -ECHILD);
        zc_pidref_kill_and_reap(&p);
        zc_pidref_kill_and_reap(NULL);
        zc_pidref_done(&p);
        zc_pidref_done(NULL);
        /* failure leaves the out-parameter as it was */
        assert_int_equal(zc_pidref_set_pid(&q, 0), -EINVAL);
        assert_int_equal(q.pid, 123);
        assert_int_equal(q.fd, 456);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                tu_test(test_child),
                tu_test(test_take_and_done),
                tu_test(test_empty),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
