/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of common/fd-util.c and common/pidfd-util.c: fds through real socketpairs (what
 * arrives, CLOEXEC, truncation, too many, nothing leaked), and real children forked, signalled
 * and reaped through their pidfds, on clone3 and on the clone() fallback; and of the signal
 * names of common/signal-util.c; and the procfs mounts outside /proc that common/mountinfo.c
 * finds in a mountinfo file; and common/pidref.c's handle on a real child and empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "mountinfo.h"
#include "testutil.h"
#include "pidfd-util.h"
#include "pidref.h"
#include "signal-util.h"

static void same_file(int a, int b) {
        struct stat sa, sb;

        assert_int_equal(fstat(a, &sa), 0);
        assert_int_equal(fstat(b, &sb), 0);
        assert_true(sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static struct iovec iov_of(void *p, size_t len) {
        return (struct iovec){ .iov_base = p, .iov_len = len };
}

/* n fds open on distinct files (pipes' read ends), not CLOEXEC so that CLOEXEC on arrival shows. */
static void make_fds(int *fds, int *others, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int p[2];

                assert_int_equal(pipe(p), 0);
                fds[i] = p[0];
                others[i] = p[1];
        }
}

static void close_all(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
}

/* ---- fd-util ------------------------------------------------------------------------------ */

static void test_pass_fds(void **state) {
        int sv[2], fds[3], others[3], got[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
        char out[] = "hello", in[16] = "";
        struct iovec o = iov_of(out, sizeof(out)), i = iov_of(in, sizeof(in));
        size_t n_got = 99;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        make_fds(fds, others, 3);
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 3, 0), (ssize_t) sizeof(out));
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 8, &n_got, 0), (ssize_t) sizeof(out));
        assert_string_equal(in, "hello");
        assert_int_equal(n_got, 3);
        for (size_t k = 0; k < 3; k++) {
                same_file(fds[k], got[k]);
                assert_true(fcntl(got[k], F_GETFD) & FD_CLOEXEC);
        }
        assert_int_equal(got[3], -1); /* nothing written past what arrived */
        close_all(got, 3);

        /* no fds: a plain message, n_fds 0 */
        assert_int_equal(send_fds(sv[0], &o, 1, NULL, 0, 0), (ssize_t) sizeof(out));
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 8, &n_got, 0), (ssize_t) sizeof(out));
        assert_int_equal(n_got, 0);

        /* a peer that is gone: -EPIPE, and no SIGPIPE kills the test */
        close(sv[1]);
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 1, 0), -EPIPE);
        /* EAGAIN goes back to the caller */
        close(sv[0]);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 8, &n_got, MSG_DONTWAIT), -EAGAIN);
        assert_int_equal(n_got, 0); /* untouched */
        close_all(sv, 2);
        close_all(fds, 3);
        close_all(others, 3);
}

/* More fds than the receiver has room for: an error, and every fd that arrived is closed. */
static void test_too_many_for_receiver(void **state) {
        int sv[2], fds[6], others[6], got[6] = { -1, -1, -1, -1, -1, -1 };
        char b = 'x', in;
        struct iovec o = iov_of(&b, 1), i = iov_of(&in, 1);
        size_t n_got = 99;
        int before;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        make_fds(fds, others, 6);
        before = tu_count_open_fds();
        /* 6 where 2 fit: the kernel truncates (MSG_CTRUNC) */
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 6, 0), 1);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 2, &n_got, 0), -EMSGSIZE);
        /* 2 where 1 fits: CMSG_SPACE's rounding lets the second through, the count catches it */
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 2, 0), 1);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 1, &n_got, 0), -EMSGSIZE);
        /* fds where none are wanted */
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 1, 0), 1);
        assert_int_equal(recv_fds(sv[1], &i, 1, NULL, 0, &n_got, 0), -EMSGSIZE);
        assert_int_equal(n_got, 99);
        assert_int_equal(got[0], -1);
        assert_int_equal(tu_count_open_fds(), before);

        /* the caller passes no ret_n_fds: what arrived is closed, the bytes are still read */
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 2, 0), 1);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 4, NULL, 0), 1);
        assert_int_equal(got[0], -1);
        assert_int_equal(tu_count_open_fds(), before);
        close_all(sv, 2);
        close_all(fds, 6);
        close_all(others, 6);
}

/* A datagram longer than the buffer (MSG_TRUNC) loses data: an error, its fds closed. */
static void test_truncated_datagram(void **state) {
        int sv[2], fds[1], others[1], got[2] = { -1, -1 };
        char out[64] = "a datagram longer than the reader's buffer", in[8];
        struct iovec o = iov_of(out, sizeof(out)), i = iov_of(in, sizeof(in));
        size_t n_got = 99;
        int before;

        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        make_fds(fds, others, 1);
        before = tu_count_open_fds();
        assert_int_equal(send_fds(sv[0], &o, 1, fds, 1, 0), (ssize_t) sizeof(out));
        assert_int_equal(recv_fds(sv[1], &i, 1, got, 2, &n_got, 0), -EMSGSIZE);
        assert_int_equal(n_got, 99);
        assert_int_equal(tu_count_open_fds(), before);

        /* two iovecs on both sides, as zygote-ref's header + payload */
        char h[4] = "hdr", p[4] = "pay", h2[4], p2[4];
        struct iovec o2[2] = { iov_of(h, 4), iov_of(p, 4) }, i2[2] = { iov_of(h2, 4), iov_of(p2, 4) };
        assert_int_equal(send_fds(sv[0], o2, 2, fds, 1, 0), 8);
        assert_int_equal(recv_fds(sv[1], i2, 2, got, 2, &n_got, 0), 8);
        assert_string_equal(h2, "hdr");
        assert_string_equal(p2, "pay");
        assert_int_equal(n_got, 1);
        same_file(got[0], fds[0]);
        close(got[0]);
        close_all(sv, 2);
        close(fds[0]);
        close(others[0]);
}

/* Limits: the kernel's SCM_MAX_FD is the most either side takes. */
static void test_fd_limits(void **state) {
        int sv[2], fds[FD_UTIL_FDS_MAX + 1], got[FD_UTIL_FDS_MAX + 1];
        char b = 'x', in;
        struct iovec o = iov_of(&b, 1), i = iov_of(&in, 1);
        size_t n_got = 0;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        for (size_t k = 0; k < FD_UTIL_FDS_MAX + 1; k++)
                fds[k] = sv[0];
        assert_int_equal(send_fds(sv[0], &o, 1, fds, FD_UTIL_FDS_MAX + 1, 0), -EINVAL);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, FD_UTIL_FDS_MAX + 1, &n_got, 0), -EINVAL);
        /* exactly the limit passes */
        assert_int_equal(send_fds(sv[0], &o, 1, fds, FD_UTIL_FDS_MAX, 0), 1);
        assert_int_equal(recv_fds(sv[1], &i, 1, got, FD_UTIL_FDS_MAX, &n_got, 0), 1);
        assert_int_equal(n_got, FD_UTIL_FDS_MAX);
        close_many(got, n_got);
        assert_int_equal(got[0], -EBADF);
        close_all(sv, 2);
}

/* ---- pidfd-util --------------------------------------------------------------------------- */

static void test_clone_reap(void **state) {
        siginfo_t si;
        int pidfd = -1;
        pid_t pid = clone_with_pidfd(0, &pidfd);

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(7);
        assert_true(pidfd >= 0);
        assert_true(fcntl(pidfd, F_GETFD) & FD_CLOEXEC);
        assert_int_equal(pidfd_reap(pidfd, &si), 0);
        assert_int_equal(si.si_pid, pid);
        assert_int_equal(si.si_code, CLD_EXITED);
        assert_int_equal(si.si_status, 7);
        /* reaped: nothing more to wait for, nobody left to signal */
        assert_int_equal(pidfd_reap(pidfd, &si), -ECHILD);
        assert_int_equal(pidfd_kill(pidfd, SIGKILL), -ESRCH);
        close(pidfd);
        assert_int_equal(clone_with_pidfd(CLONE_VM, &pidfd), -EINVAL);
        assert_int_equal(clone_with_pidfd(0, NULL), -EINVAL);
}

static void test_kill_wait(void **state) {
        siginfo_t si;
        int pidfd = -1, self;
        pid_t pid = clone_with_pidfd(0, &pidfd);

        assert_true(pid >= 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        /* still running: WNOHANG reports nothing */
        assert_int_equal(pidfd_wait(pidfd, WEXITED | WNOHANG, &si), 0);
        assert_int_equal(si.si_pid, 0);
        assert_int_equal(pidfd_kill(pidfd, SIGKILL), 0);
        /* seen but left to reap (WNOWAIT), then reaped */
        assert_int_equal(pidfd_wait(pidfd, WEXITED | WNOWAIT, &si), 0);
        assert_int_equal(si.si_code, CLD_KILLED);
        assert_int_equal(pidfd_reap(pidfd, NULL), 0);
        close(pidfd);

        self = pidfd_open_pid(getpid());
        assert_true(self >= 0);
        assert_true(fcntl(self, F_GETFD) & FD_CLOEXEC);
        assert_int_equal(pidfd_kill(self, 0), 0);
        close(self);
        assert_int_equal(pidfd_open_pid(0), -EINVAL);
        assert_int_equal(pidfd_kill(-EBADF, SIGKILL), -EBADF);
        assert_int_equal(pidfd_wait(-EBADF, WEXITED, NULL), -EBADF);
}

/* In a child: optionally a seccomp filter that answers clone3 with ENOSYS (as Docker's does),
 * then clone_with_pidfd(CLONE_PARENT): the grandchild must be the test's own child. Writes the
 * grandchild's pid to fd w. */
enum clone3_filter { CLONE3_ALLOWED, CLONE3_ENOSYS, CLONE3_KILLS };

static _Noreturn void clone_parent_child(int w, enum clone3_filter filter) {
        if (filter != CLONE3_ALLOWED) {
                struct sock_filter f[] = TU_FILTER_BLOCKING(
                        __NR_clone3, filter == CLONE3_KILLS ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | ENOSYS);
                struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        _exit(10);
                if (filter == CLONE3_ENOSYS && (syscall(SYS_clone3, NULL, 0) >= 0 || errno != ENOSYS))
                        _exit(11);
        }
        int pidfd = -1;
        pid_t pid = clone_with_pidfd(CLONE_PARENT | (filter == CLONE3_KILLS ? CLONE_WITH_PIDFD_NO_CLONE3 : 0), &pidfd);
        if (pid == 0)
                _exit(42);
        if (pid < 0)
                _exit(12);
        if (write(w, &pid, sizeof(pid)) != sizeof(pid))
                _exit(13);
        _exit(0);
}

static void clone_parent(enum clone3_filter filter) {
        int p[2], status, pidfd = -1;
        pid_t mid, grandchild = 0;
        siginfo_t si;

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        mid = clone_with_pidfd(0, &pidfd);
        assert_true(mid >= 0);
        if (mid == 0)
                clone_parent_child(p[1], filter);
        close(p[1]);
        assert_int_equal(pidfd_reap(pidfd, &si), 0);
        assert_int_equal(si.si_code, CLD_EXITED);
        assert_int_equal(si.si_status, 0);
        close(pidfd);
        assert_int_equal(read(p[0], &grandchild, sizeof(grandchild)), (ssize_t) sizeof(grandchild));
        close(p[0]);
        /* CLONE_PARENT: ours to reap, with SIGCHLD semantics (waitpid sees it) */
        assert_int_equal(waitpid(grandchild, &status, 0), grandchild);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 42);
}

/* Its cases: clone3 allowed; the fallback on purpose (clone3 refused by a filter, clone() takes
 * over); a filter that kills on clone3 (NO_CLONE3 must never try it). */
static const enum clone3_filter clone3_allowed = CLONE3_ALLOWED, clone3_enosys = CLONE3_ENOSYS,
                                clone3_kills = CLONE3_KILLS;

static void test_clone_parent(void **state) {
        clone_parent(*(const enum clone3_filter *) *state);
}

static void test_signal_names(void **state) {
        assert_int_equal(zc_signal_from_string("TERM"), SIGTERM);
        assert_int_equal(zc_signal_from_string("SIGTERM"), SIGTERM);
        assert_int_equal(zc_signal_from_string("sigkill"), SIGKILL);
        assert_int_equal(zc_signal_from_string("9"), SIGKILL);
        assert_int_equal(zc_signal_from_string("RTMIN"), SIGRTMIN);
        assert_int_equal(zc_signal_from_string("SIGRTMIN+2"), SIGRTMIN + 2);
        assert_int_equal(zc_signal_from_string("RTMAX-1"), SIGRTMAX - 1);
        assert_int_equal(zc_signal_from_string("BOGUS"), -EINVAL);
        assert_int_equal(zc_signal_from_string("0"), -EINVAL);
        assert_int_equal(zc_signal_from_string("9x"), -EINVAL);
        assert_int_equal(zc_signal_from_string("RTMIN-1"), -EINVAL);
        assert_int_equal(zc_signal_from_string(""), -EINVAL);
        assert_int_equal(zc_signal_from_string(NULL), -EINVAL);
}

struct seen {
        char points[4][64];
        size_t n, stop_at;
};

static int note_point(const char *mount_point, void *userdata) {
        struct seen *s = userdata;

        assert_true(s->n < 4);
        snprintf(s->points[s->n], sizeof(s->points[0]), "%s", mount_point);
        return ++s->n == s->stop_at ? 7 : 0;
}

static int mountinfo_fd(const char *text) {
        int fd = memfd_create("mountinfo", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

/* procfs only, /proc and beneath it left out, escapes undone, in order; fn's stop returned. */
static void test_mountinfo_procfs(void **state) {
        static const char text[] = "21 1 0:20 / /proc rw,nosuid shared:12 - proc proc rw\n"
                                   "22 21 0:21 / /proc/sys/fs/binfmt_misc rw - proc proc rw\n"
                                   "23 1 0:22 / /run rw - tmpfs tmpfs rw\n"
                                   "24 1 0:23 / /mnt/my\\040proc rw - proc proc rw\n"
                                   "25 1 0:24 / /procfs rw master:3 - proc none rw\n"
                                   "26 1 0:25 / /proc2 rw - sysfs sysfs rw\n"
                                   "broken line without a separator\n";
        struct seen s = { .n = 0 };

        assert_int_equal(zc_mountinfo_procfs_elsewhere(mountinfo_fd(text), note_point, &s), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.points[0], "/mnt/my proc");
        assert_string_equal(s.points[1], "/procfs");

        s = (struct seen){ .stop_at = 1 };
        assert_int_equal(zc_mountinfo_procfs_elsewhere(mountinfo_fd(text), note_point, &s), 7);
        assert_int_equal(s.n, 1);

        assert_int_equal(zc_mountinfo_procfs_elsewhere(-EBADF, note_point, &s), -EBADF);

        /* the same over the text */
        s = (struct seen){ .n = 0 };
        assert_int_equal(zc_mountinfo_procfs_elsewhere_text(text, note_point, &s), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.points[0], "/mnt/my proc");
        assert_string_equal(s.points[1], "/procfs");
        s = (struct seen){ .stop_at = 1 };
        assert_int_equal(zc_mountinfo_procfs_elsewhere_text(text, note_point, &s), 7);
        assert_int_equal(s.n, 1);
        /* a line without its separator does not borrow the next line's */
        s = (struct seen){ .n = 0 };
        assert_int_equal(zc_mountinfo_procfs_elsewhere_text("24 1 0:23 / /mnt/x rw\n - proc proc rw\n", note_point, &s),
                         0);
        assert_int_equal(s.n, 0);
}

/* ---- common/pidref.c: a real child held as one handle, and an empty handle ---------------- */

static void test_pidref_child(void **state) {
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

static void test_pidref_take_and_done(void **state) {
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

static void test_pidref_empty(void **state) {
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

/* no SIGPIPE: send_fds must turn a gone peer into -EPIPE by itself */
TU_MAIN(tu_test(test_pass_fds), tu_test(test_too_many_for_receiver), tu_test(test_truncated_datagram),
        tu_test(test_fd_limits), tu_test(test_clone_reap), tu_test(test_kill_wait),
        tu_test_case("test_clone_parent", test_clone_parent, &clone3_allowed),
        tu_test_case("test_clone_parent_fallback", test_clone_parent, &clone3_enosys),
        tu_test_case("test_clone_parent_no_clone3", test_clone_parent, &clone3_kills), tu_test(test_signal_names),
        tu_test(test_mountinfo_procfs), tu_test(test_pidref_child), tu_test(test_pidref_take_and_done),
        tu_test(test_pidref_empty))
