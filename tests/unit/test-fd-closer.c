/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of common/fd-closer.c with real helper processes: every fd handed over is closed
 * (the other end of a pipe sees EOF); a helper that does not answer (stopped with SIGSTOP) is
 * replaced within its deadline and what it never read is taken back and closed by the next one,
 * never twice; a helper that finished is reaped; free hands the queue over without waiting.
 * zc_fd_closer_settle(): a stopped helper's fds are taken back at once; a helper asleep in a
 * close() that lingers (a TCP socket with SO_LINGER and unsent data, as a FUSE FLUSH would hold
 * it) is seen there through /proc, and the fds behind it go to a new helper; without that file
 * settle waits for the ack, times out once, and gives that fd up; past the helper limit, -EMFILE;
 * under a filter that refuses poll(), helpers that cannot wait leave and what they never read
 * is taken back.
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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-closer.h"
#include "testutil.h"

/* Whether the write end of the pipe whose read end is r has been closed everywhere. */
static bool eof(int r) {
        struct pollfd p = { .fd = r, .events = POLLIN };

        return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* Runs the closer's events until done() or timeout_ms. */
static bool run_until(struct zc_fd_closer *c, bool (*done)(void *), void *arg, int timeout_ms) {
        int64_t end = zc_fd_closer_now_ms() + timeout_ms;
        int next = 0;

        while (!done(arg)) {
                struct pollfd p = { .fd = zc_fd_closer_fd(c), .events = POLLIN };
                int64_t left = end - zc_fd_closer_now_ms();

                if (left <= 0)
                        return false;
                (void) poll(&p, 1, next < 0 || next > left ? (int) left : next);
                next = zc_fd_closer_dispatch(c, zc_fd_closer_now_ms());
        }
        return true;
}

static bool none_pending(void *arg) {
        return zc_fd_closer_pending(arg) == 0;
}

/* Hands c the write ends of n new pipes (their read ends stay in p). */
static void close_pipes(struct zc_fd_closer *c, int (*p)[2], size_t n) {
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
                zc_fd_closer_close(c, p[i][1]);
        }
}

/* A new closer, handed the write ends of n new pipes (their read ends stay in p). */
static struct zc_fd_closer *closer_of_pipes(int (*p)[2], size_t n) {
        struct zc_fd_closer *c = NULL;

        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        close_pipes(c, p, n);
        return c;
}

/* settle(c, timeout) must return want; how long it took (ms), printed as what. */
static int64_t timed_settle(struct zc_fd_closer *c, int timeout_ms, int want, const char *what) {
        int64_t t0 = zc_fd_closer_now_ms(), took;

        assert_int_equal(zc_fd_closer_settle(c, timeout_ms), want);
        took = zc_fd_closer_now_ms() - t0;
        print_message("%s: %lld ms\n", what, (long long) took);
        return took;
}

static void test_closes_everything(void **state) {
        int p[100][2];
        struct zc_fd_closer *c = closer_of_pipes(p, 100);

        (void) state;
        assert_true(run_until(c, none_pending, c, 10000));
        for (int i = 0; i < 100; i++) {
                assert_true(eof(p[i][0]));
                close(p[i][0]);
        }
        assert_int_equal(zc_fd_closer_helpers(c), 1);
        /* NULL closes here; a negative fd is nothing */
        zc_fd_closer_close(NULL, dup(0));
        zc_fd_closer_close(c, -EBADF);
        zc_fd_closer_free(c);
}

struct stuck {
        struct zc_fd_closer *c;
        int b;
};

/* b closed by another helper, and its ack read: the queue is empty. EOF on b alone comes at the
 * helper's close(), before its ack reaches the loop. */
static bool b_closed_by_another(void *arg) {
        struct stuck *s = arg;
        return eof(s->b) && zc_fd_closer_pending(s->c) == 0;
}

static bool old_one_reaped(void *arg) {
        struct stuck *s = arg;
        return zc_fd_closer_helpers(s->c) == 1 && zc_fd_closer_pending(s->c) == 0;
}

/* Stops pid and waits until it is stopped: a stop still on its way would let it read. */
static void stop(pid_t pid) {
        siginfo_t si;

        assert_int_equal(kill(pid, SIGSTOP), 0);
        assert_int_equal(waitid(P_PID, (id_t) pid, &si, WSTOPPED), 0);
}

static void test_stuck_helper_is_replaced(void **state) {
        struct zc_fd_closer *c = NULL;
        int a[2], b[2], s_a, s_b;
        int64_t t0;
        pid_t first;

        (void) state;
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        first = zc_fd_closer_current_pid(c);
        assert_true(first > 0);
        /* idle: stopped, it reads neither a nor b */
        stop(first);
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        assert_int_equal(pipe2(b, O_CLOEXEC), 0);
        t0 = zc_fd_closer_now_ms();
        zc_fd_closer_close(c, a[1]);
        zc_fd_closer_close(c, b[1]);
        struct stuck s = { .c = c, .b = b[0] };
        assert_true(run_until(c, b_closed_by_another, &s, 10000));
        assert_true(zc_fd_closer_now_ms() - t0 >= ZC_FD_CLOSER_STUCK_MS);
        assert_true(eof(a[0])); /* taken back from its pipe, closed by the next one */
        assert_int_equal(zc_fd_closer_helpers(c), 2);
        /* Never twice: new files at a's and b's numbers stay open once the stopped one goes on
         * (it finds its pipe empty, then EOF) and is reaped. */
        s_a = fcntl(b[0], F_DUPFD_CLOEXEC, a[1]);
        s_b = fcntl(b[0], F_DUPFD_CLOEXEC, b[1]);
        assert_int_equal(s_a, a[1]);
        assert_int_equal(s_b, b[1]);
        assert_int_equal(kill(first, SIGCONT), 0);
        assert_true(run_until(c, old_one_reaped, &s, 10000));
        assert_true(fcntl(s_a, F_GETFD) >= 0);
        assert_true(fcntl(s_b, F_GETFD) >= 0);
        close(s_a);
        close(s_b);
        close(a[0]);
        close(b[0]);
        zc_fd_closer_free(c);
}

static int open_fds(void) {
        int n = 0;

        for (int fd = 0; fd < 1024; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

static bool a_closed(void *arg) {
        struct stuck *s = arg;
        return eof(s->b) && zc_fd_closer_helpers(s->c) == 1;
}

/* A helper killed (only root could) before it read the fd handed to it: the fd is still in its
 * pipe, so it is taken back and closed by the next helper; the dead one's pipe end is closed. */
static void test_killed_helper_gives_back_what_it_never_read(void **state) {
        struct zc_fd_closer *c = NULL;
        int a[2], base;
        pid_t first;

        (void) state;
        /* every test before ends with its helpers gone (tu_teardown_no_leftovers), so the
         * count below is steady */
        tu_assert_no_children();
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        /* once it has closed something, the helper has opened its /proc/self/syscall too */
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        zc_fd_closer_close(c, a[1]);
        assert_true(run_until(c, none_pending, c, 10000));
        close(a[0]);
        base = open_fds();
        first = zc_fd_closer_current_pid(c);
        assert_int_equal(kill(first, SIGKILL), 0);
        /* dead before the fd goes out: a read() woken by the kill could still take it first */
        siginfo_t si;
        assert_int_equal(waitid(P_PID, (id_t) first, &si, WEXITED | WNOWAIT), 0);
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        zc_fd_closer_close(c, a[1]);
        struct stuck s = { .c = c, .b = a[0] };
        assert_true(run_until(c, a_closed, &s, 10000));
        assert_true(zc_fd_closer_current_pid(c) != first);
        close(a[0]);
        assert_int_equal(open_fds(), base); /* the new helper's pipe for the dead one's */
        zc_fd_closer_free(c);
}

static void test_free_hands_over_the_queue(void **state) {
        int p[10][2];
        struct zc_fd_closer *c = closer_of_pipes(p, 10);

        (void) state;
        zc_fd_closer_free(c); /* never waits; the helper closes them and leaves */
        for (int i = 0; i < 10; i++) {
                struct pollfd q = { .fd = p[i][0], .events = POLLIN };
                assert_int_equal(poll(&q, 1, 10000), 1);
                assert_true(q.revents & POLLHUP);
                close(p[i][0]);
        }
}

/* Waits until the current helper is up (it has closed something): settle() gives one still
 * starting more time. */
static void warm_up(struct zc_fd_closer *c) {
        int p[2];

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        zc_fd_closer_close(c, p[1]);
        assert_true(run_until(c, none_pending, c, 10000));
        assert_true(eof(p[0]));
        close(p[0]);
}

static bool reaped_and_done(void *arg) {
        return zc_fd_closer_helpers(arg) == 1 && zc_fd_closer_pending(arg) == 0;
}

/* settle() hands out what a stopped idle helper never read at once, to a new helper, long
 * before its timeout (and before the 200 ms of dispatch's deadline). */
static void test_settle_takes_back_from_a_stopped_helper(void **state) {
        struct zc_fd_closer *c = NULL;
        int p[5][2];
        int64_t took;
        pid_t first;

        (void) state;
        assert_int_equal(zc_fd_closer_settle(NULL, 1000), 0);
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        assert_int_equal(zc_fd_closer_settle(c, 1000), 0); /* nothing pending */
        warm_up(c);
        first = zc_fd_closer_current_pid(c);
        stop(first);
        close_pipes(c, p, 5);
        took = timed_settle(c, 2000, 0, "settle with a stopped helper");
        assert_true(took < ZC_FD_CLOSER_STUCK_MS);
        for (int i = 0; i < 5; i++)
                assert_true(eof(p[i][0])); /* closed everywhere: by the new helper */
        assert_int_equal(zc_fd_closer_pending(c), 0);
        assert_true(zc_fd_closer_helpers(c) >= 2); /* 3 if the new one was slow, under load */
        assert_true(zc_fd_closer_current_pid(c) != first);
        assert_int_equal(kill(first, SIGCONT), 0);
        assert_true(run_until(c, reaped_and_done, c, 10000));
        for (int i = 0; i < 5; i++)
                close(p[i][0]);
        zc_fd_closer_free(c);
}

/* A TCP connection over loopback whose close() lingers: SO_LINGER 5 s, the send buffer full and
 * the peer reading nothing, so the last close of *ret_client sleeps until the peer reads or
 * closes (*ret_peer) or 5 s pass. */
static void lingering_socket(int *ret_client, int *ret_peer) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        struct linger l = { .l_onoff = 1, .l_linger = 5 };
        int small = 4096, l_fd, cl, peer;
        char buf[4096] = { 0 };

        l_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(l_fd >= 0);
        assert_int_equal(setsockopt(l_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        assert_int_equal(bind(l_fd, (struct sockaddr *) &a, sizeof(a)), 0);
        assert_int_equal(getsockname(l_fd, (struct sockaddr *) &a, &len), 0);
        assert_int_equal(listen(l_fd, 1), 0);
        cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(cl >= 0);
        assert_int_equal(setsockopt(cl, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
        assert_int_equal(connect(cl, (struct sockaddr *) &a, sizeof(a)), 0);
        peer = accept4(l_fd, NULL, NULL, SOCK_CLOEXEC);
        assert_true(peer >= 0);
        close(l_fd);
        assert_int_equal(setsockopt(cl, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
        for (;;) {
                ssize_t n = send(cl, buf, sizeof(buf), MSG_DONTWAIT);

                if (n < 0) {
                        assert_int_equal(errno, EAGAIN);
                        break;
                }
        }
        *ret_client = cl;
        *ret_peer = peer;
}

/* Whether fd is no longer the socket it was: closed, or its number taken by something else
 * (we open nothing, but a new helper opens its /proc/self/syscall at the lowest free number). */
static bool not_a_socket(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return errno == EBADF;
        return !S_ISSOCK(st.st_mode);
}

/* settle() finds a helper asleep in close() of a lingering socket through its
 * /proc/self/syscall: that fd has left the table, and the pipe ends behind it are taken back and
 * closed by a new helper, all long before the linger's 5 s. Twice: with the pipe ends handed
 * right behind the socket, and handed after a settle that found the helper (still the current
 * one) in close(). */
static void test_settle_sees_a_helper_inside_close(void **state) {
        struct zc_fd_closer *c = NULL;
        int p[3][2], sock[2], peer[2];
        int64_t took;

        (void) state;
        lingering_socket(&sock[0], &peer[0]);
        lingering_socket(&sock[1], &peer[1]);
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        zc_fd_closer_close(c, sock[0]);
        close_pipes(c, p, 2);
        took = timed_settle(c, 4000, 0, "settle past a helper in close()");
        assert_true(took < 2000);
        assert_true(not_a_socket(sock[0]));
        for (int i = 0; i < 2; i++)
                assert_true(eof(p[i][0]));
        assert_int_equal(zc_fd_closer_pending(c), 1); /* the socket, in close() still */
        assert_true(zc_fd_closer_helpers(c) >= 2);
        assert_int_equal(zc_fd_closer_settle(c, 4000), 0); /* known: at once */

        /* the socket alone: the helper in close() stays the current one */
        zc_fd_closer_close(c, sock[1]);
        assert_int_equal(zc_fd_closer_settle(c, 4000), 0);
        assert_true(not_a_socket(sock[1]));
        pid_t in_close = zc_fd_closer_current_pid(c);
        /* what it is handed now goes to a new helper at once, not behind it */
        assert_int_equal(pipe2(p[2], O_CLOEXEC), 0);
        zc_fd_closer_close(c, p[2][1]);
        assert_true(zc_fd_closer_current_pid(c) != in_close);
        took = timed_settle(c, 4000, 0, "settle behind a current helper in close()");
        assert_true(took < 2000);
        assert_true(eof(p[2][0]));
        assert_true(zc_fd_closer_current_pid(c) != in_close);
        assert_int_equal(zc_fd_closer_pending(c), 2); /* both sockets */

        /* the lingers end: the helpers acknowledge, leave, and are reaped */
        close(peer[0]);
        close(peer[1]);
        assert_true(run_until(c, reaped_and_done, c, 10000));
        for (int i = 0; i < 3; i++)
                close(p[i][0]);
        zc_fd_closer_free(c);
}

/* Whether process pid sleeps in close(fd), as its /proc/PID/syscall says. */
static bool sleeps_in_close(pid_t pid, int fd) {
        char path[64], buf[160];
        ssize_t n;
        int f;

        snprintf(path, sizeof(path), "/proc/%d/syscall", (int) pid);
        f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return false;
        n = read(f, buf, sizeof(buf) - 1);
        close(f);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        char want[64];
        snprintf(want, sizeof(want), "%d 0x%x ", SYS_close, (unsigned) fd);
        return strncmp(buf, want, strlen(want)) == 0;
}

/* The end of a test with a lingering socket: its peer closed, every helper reaped and done, the
 * pipe's read end closed, the closer freed. */
static void release_and_free(struct zc_fd_closer *c, int peer, int pipe_r) {
        close(peer);
        assert_true(run_until(c, reaped_and_done, c, 10000));
        close(pipe_r);
        zc_fd_closer_free(c);
}

/* Without a settle: a helper whose fd has waited in its hands for a while and that sleeps in
 * close() of it is found there at the next handoff, which goes to a new helper at once (not
 * after ZC_FD_CLOSER_STUCK_MS). */
static void test_handoff_passes_a_helper_inside_close(void **state) {
        struct zc_fd_closer *c = NULL;
        int p[2], sock, peer;
        pid_t first;

        (void) state;
        lingering_socket(&sock, &peer);
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        first = zc_fd_closer_current_pid(c);
        zc_fd_closer_close(c, sock);
        for (int i = 0; i < 5000 && !sleeps_in_close(first, sock); i++)
                usleep(1000);
        assert_true(sleeps_in_close(first, sock));
        (void) zc_fd_closer_dispatch(c, zc_fd_closer_now_ms()); /* its hello, as the loop reads it */
        usleep(2000); /* its head older than the 1 ms the handoff waits before it looks */
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        zc_fd_closer_close(c, p[1]);
        assert_true(zc_fd_closer_current_pid(c) != first);
        assert_int_equal(zc_fd_closer_helpers(c), 2);
        struct stuck s = { .c = c, .b = p[0] };
        assert_true(run_until(c, b_closed_by_another, &s, 10000));
        release_and_free(c, peer, p[0]);
}

/* The fallback without /proc/self/syscall (forced): nothing tells that the helper is in close(),
 * so settle() waits for the ack until its timeout, once: that fd is given up, and the next call
 * does not wait for it. The fds behind it still go to a new helper. */
static void test_settle_without_syscall_file_waits_once(void **state) {
        struct zc_fd_closer *c = NULL;
        int p[2], sock, peer;
        int64_t t0, took;

        (void) state;
        lingering_socket(&sock, &peer);
        assert_int_equal(zc_fd_closer_new(ZC_FD_CLOSER_NO_SYSCALL_FILE, &c), 0);
        zc_fd_closer_close(c, sock);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        zc_fd_closer_close(c, p[1]);
        took = timed_settle(c, 300, -ETIMEDOUT, "settle without the file");
        assert_true(took >= 300 && took < 2000);
        assert_true(eof(p[0]));
        assert_int_equal(zc_fd_closer_pending(c), 1);
        t0 = zc_fd_closer_now_ms();
        assert_int_equal(zc_fd_closer_settle(c, 300), 0); /* given up: not waited for again */
        assert_true(zc_fd_closer_now_ms() - t0 < 100);
        release_and_free(c, peer, p[0]);
}

/* Past ZC_FD_CLOSER_MAX_HELPERS (every helper stopped, none leaving), settle() cannot start one
 * for what it took back: -EMFILE, the fd stays queued, and goes out once helpers leave. */
static void test_settle_at_the_helper_limit(void **state) {
        struct zc_fd_closer *c = NULL;
        pid_t stopped[ZC_FD_CLOSER_MAX_HELPERS];
        int p[ZC_FD_CLOSER_MAX_HELPERS][2], r = 0;
        size_t n = 0;

        (void) state;
        assert_int_equal(zc_fd_closer_new(0, &c), 0);
        warm_up(c);
        /* each round stops the current helper and hands it a pipe end: settle() takes it back
         * and starts another (two, if the new one is slow under load), until it cannot */
        while (n < ZC_FD_CLOSER_MAX_HELPERS) {
                stopped[n] = zc_fd_closer_current_pid(c);
                assert_true(stopped[n] > 0);
                stop(stopped[n]);
                assert_int_equal(pipe2(p[n], O_CLOEXEC), 0);
                zc_fd_closer_close(c, p[n][1]);
                r = zc_fd_closer_settle(c, 2000);
                n++;
                if (r != 0)
                        break;
                assert_true(eof(p[n - 1][0]));
        }
        assert_int_equal(r, -EMFILE);
        assert_int_equal(zc_fd_closer_helpers(c), ZC_FD_CLOSER_MAX_HELPERS);
        assert_false(eof(p[n - 1][0]));
        assert_int_equal(zc_fd_closer_pending(c), 1);
        assert_int_equal(zc_fd_closer_current_pid(c), 0);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(kill(stopped[i], SIGCONT), 0);
        assert_true(run_until(c, reaped_and_done, c, 10000));
        for (size_t i = 0; i < n; i++) {
                assert_true(eof(p[i][0]));
                close(p[i][0]);
        }
        zc_fd_closer_free(c);
}

/* In a child of ours under a seccomp filter that refuses poll() and ppoll() (EPERM), as a
 * caller's profile could: a helper that finds its pipe empty cannot wait, so it leaves (not at
 * EOF: what is unread is taken back), and a new one takes the queue; settle() cannot sleep
 * between its looks, but still returns once every fd is closed. Exits 0 when all went so. */
static int closes_without_poll(void) {
        struct sock_filter insns[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __NR_poll
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_poll, 2, 0),
#else
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ppoll, 2, 0),
#endif
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ppoll, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        };
        struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
        struct zc_fd_closer *c = NULL;
        int p[20][2];

        if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0UL, 0UL) < 0)
                return 10;
        struct pollfd q = { .fd = 0, .events = POLLIN };
        if (poll(&q, 1, 0) >= 0 || errno != EPERM)
                return 11;
        if (zc_fd_closer_new(0, &c) < 0)
                return 12;
        for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 10; i++) {
                        if (pipe2(p[round * 10 + i], O_CLOEXEC | O_NONBLOCK) < 0)
                                return 13;
                        zc_fd_closer_close(c, p[round * 10 + i][1]);
                }
                if (zc_fd_closer_settle(c, 5000) != 0)
                        return 14;
                for (int i = 0; i < 10; i++) {
                        /* poll() is refused here too: EOF is read() returning 0 */
                        char b;
                        if (read(p[round * 10 + i][0], &b, 1) != 0)
                                return 15;
                }
        }
        zc_fd_closer_free(c);
        return 0;
}

static void test_helpers_without_poll(void **state) {
        siginfo_t si;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(closes_without_poll());
        assert_int_equal(waitid(P_PID, (id_t) pid, &si, WEXITED), 0);
        assert_int_equal(si.si_code, CLD_EXITED);
        assert_int_equal(si.si_status, 0);
}

TU_MAIN(tu_test(test_closes_everything), tu_test(test_stuck_helper_is_replaced),
        tu_test(test_killed_helper_gives_back_what_it_never_read), tu_test(test_free_hands_over_the_queue),
        tu_test(test_settle_takes_back_from_a_stopped_helper), tu_test(test_settle_sees_a_helper_inside_close),
        tu_test(test_handoff_passes_a_helper_inside_close), tu_test(test_settle_without_syscall_file_waits_once),
        tu_test(test_settle_at_the_helper_limit), tu_test(test_helpers_without_poll))
