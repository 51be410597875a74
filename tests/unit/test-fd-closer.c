/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of common/fd-closer.c with real helper processes: every fd handed over is closed
 * (the other end of a pipe sees EOF); a helper that does not answer (stopped with SIGSTOP, as a
 * close waiting on a FUSE server would leave it) is replaced within its deadline and the fds
 * behind it are closed by the next one, while the fd in its hands stays open until it goes on;
 * a helper that finished is reaped; free hands the queue over without waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-closer.h"

/* Whether the write end of the pipe whose read end is r has been closed everywhere. */
static bool eof(int r) {
        struct pollfd p = { .fd = r, .events = POLLIN };

        return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* Runs the closer's events until done() or timeout_ms. */
static bool run_until(struct zy_fd_closer *c, bool (*done)(void *), void *arg, int timeout_ms) {
        int64_t end = zy_fd_closer_now_ms() + timeout_ms;
        int next = 0;

        while (!done(arg)) {
                struct pollfd p = { .fd = zy_fd_closer_fd(c), .events = POLLIN };
                int64_t left = end - zy_fd_closer_now_ms();

                if (left <= 0)
                        return false;
                (void) poll(&p, 1, next < 0 || next > left ? (int) left : next);
                next = zy_fd_closer_dispatch(c, zy_fd_closer_now_ms());
        }
        return true;
}

static bool none_pending(void *arg) {
        return zy_fd_closer_pending(arg) == 0;
}

/* A new closer, handed the write ends of n new pipes (their read ends stay in p). */
static struct zy_fd_closer *closer_of_pipes(int (*p)[2], size_t n) {
        struct zy_fd_closer *c = NULL;

        assert_int_equal(zy_fd_closer_new(0, &c), 0);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
                zy_fd_closer_close(c, p[i][1]);
        }
        return c;
}

static void test_closes_everything(void **state) {
        int p[100][2];
        struct zy_fd_closer *c = closer_of_pipes(p, 100);

        (void) state;
        assert_true(run_until(c, none_pending, c, 10000));
        for (int i = 0; i < 100; i++) {
                assert_true(eof(p[i][0]));
                close(p[i][0]);
        }
        assert_int_equal(zy_fd_closer_helpers(c), 1);
        /* NULL closes here; a negative fd is nothing */
        zy_fd_closer_close(NULL, dup(0));
        zy_fd_closer_close(c, -EBADF);
        zy_fd_closer_free(c);
}

struct stuck {
        struct zy_fd_closer *c;
        int b;
};

static bool b_closed_by_another(void *arg) {
        struct stuck *s = arg;
        return eof(s->b);
}

static bool old_one_reaped(void *arg) {
        struct stuck *s = arg;
        return zy_fd_closer_helpers(s->c) == 1 && zy_fd_closer_pending(s->c) == 0;
}

static void test_stuck_helper_is_replaced(void **state) {
        struct zy_fd_closer *c = NULL;
        int a[2], b[2];
        int64_t t0;
        pid_t first;

        (void) state;
        assert_int_equal(zy_fd_closer_new(0, &c), 0);
        first = zy_fd_closer_current_pid(c);
        assert_true(first > 0);
        /* idle in read(): stopped, it takes a's number and closes nothing */
        assert_int_equal(kill(first, SIGSTOP), 0);
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        assert_int_equal(pipe2(b, O_CLOEXEC), 0);
        t0 = zy_fd_closer_now_ms();
        zy_fd_closer_close(c, a[1]);
        zy_fd_closer_close(c, b[1]);
        struct stuck s = { .c = c, .b = b[0] };
        assert_true(run_until(c, b_closed_by_another, &s, 10000));
        assert_true(zy_fd_closer_now_ms() - t0 >= ZY_FD_CLOSER_STUCK_MS);
        assert_false(eof(a[0])); /* still the stopped one's: never given to two */
        assert_int_equal(zy_fd_closer_helpers(c), 2);
        assert_int_equal(kill(first, SIGCONT), 0);
        assert_true(run_until(c, old_one_reaped, &s, 10000));
        assert_true(eof(a[0]));
        close(a[0]);
        close(b[0]);
        zy_fd_closer_free(c);
}

static int open_fds(void) {
        int n = 0;

        for (int fd = 0; fd < 1024; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

static bool a_closed(void *arg) {
        struct stuck *s = arg;
        return eof(s->b) && zy_fd_closer_helpers(s->c) == 1;
}

/* A helper killed (only root could) before it read the fd handed to it: the fd is still in its
 * pipe, so it is taken back and closed by the next helper; the dead one's pipe end is closed. */
static void test_killed_helper_gives_back_what_it_never_read(void **state) {
        struct zy_fd_closer *c = NULL;
        int a[2], base;
        pid_t first;

        (void) state;
        /* the helpers of the tests before, let go, leave on their own and close their pipe
         * ends in our table as they go: reap them first, so that the count below is steady */
        siginfo_t gone;
        while (waitid(P_ALL, 0, &gone, WEXITED) == 0)
                ;
        assert_int_equal(zy_fd_closer_new(0, &c), 0);
        base = open_fds();
        first = zy_fd_closer_current_pid(c);
        assert_int_equal(kill(first, SIGKILL), 0);
        /* dead before the fd goes out: a read() woken by the kill could still take it first */
        siginfo_t si;
        assert_int_equal(waitid(P_PID, (id_t) first, &si, WEXITED | WNOWAIT), 0);
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        zy_fd_closer_close(c, a[1]);
        struct stuck s = { .c = c, .b = a[0] };
        assert_true(run_until(c, a_closed, &s, 10000));
        assert_true(zy_fd_closer_current_pid(c) != first);
        close(a[0]);
        assert_int_equal(open_fds(), base); /* the new helper's pipe for the dead one's */
        zy_fd_closer_free(c);
}

static void test_free_hands_over_the_queue(void **state) {
        int p[10][2];
        struct zy_fd_closer *c = closer_of_pipes(p, 10);

        (void) state;
        zy_fd_closer_free(c); /* never waits; the helper closes them and leaves */
        for (int i = 0; i < 10; i++) {
                struct pollfd q = { .fd = p[i][0], .events = POLLIN };
                assert_int_equal(poll(&q, 1, 10000), 1);
                assert_true(q.revents & POLLHUP);
                close(p[i][0]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_closes_everything),
                cmocka_unit_test(test_stuck_helper_is_replaced),
                cmocka_unit_test(test_killed_helper_gives_back_what_it_never_read),
                cmocka_unit_test(test_free_hands_over_the_queue),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
