/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the unit tests (see testutil.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "pidfd-util.h"
#include "proc-children.h"
#include "testutil.h"

void tu_wait_input(int fd) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&pfd, 1, TU_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r == 0)
                fail_msg("fd %d: nothing after %d ms (a leaked copy of a pipe's write end?)", fd, TU_TIMEOUT_MS);
        assert_int_equal(r, 1);
}

/* One read() after the wait, EINTR retried. */
static ssize_t read_once(int fd, void *buf, size_t size) {
        ssize_t n;

        tu_wait_input(fd);
        do
                n = read(fd, buf, size);
        while (n < 0 && errno == EINTR);
        assert_true(n >= 0);
        return n;
}

size_t tu_read_all(int fd, char *buf, size_t size) {
        size_t len = 0;
        ssize_t n;

        while ((n = read_once(fd, buf + len, size - 1 - len)) > 0) {
                len += (size_t) n;
                assert_true(len < size - 1);
        }
        buf[len] = 0;
        return len;
}

bool tu_read_record(int fd, void *rec, size_t size) {
        ssize_t n = read_once(fd, rec, size);

        if (n == 0)
                return false;
        assert_int_equal(n, (ssize_t) size);
        return true;
}

int tu_wait_code(int pidfd) {
        siginfo_t si = { 0 };

        assert_int_equal(pidfd_reap(pidfd, &si), 0);
        return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

int tu_recv_fd(int sock) {
        struct iovec iov = { .iov_base = (char[1]){}, .iov_len = 1 };
        int fd = -EBADF;
        size_t n = 0;

        assert_true(recv_fds(sock, &iov, 1, &fd, 1, &n, 0) >= 0);
        assert_int_equal(n, 1);
        return fd;
}

int tu_count_open_fds(void) {
        int n = 0;

        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

void tu_assert_no_children(void) {
        siginfo_t si;

        assert_int_equal(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
}

#define TU_STR_(x) #x
#define TU_STR(x) TU_STR_(x)
static void bound_exceeded(int sig) {
        static const char msg[] = "\ntestutil: the test above ran past its bound of " TU_STR(TU_TEST_BOUND_S) " s\n";
        (void) sig;
        ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void) n;
        _exit(1);
}

int tu_setup_bounded(void **state) {
        (void) state;
        signal(SIGALRM, bound_exceeded);
        alarm(TU_TEST_BOUND_S);
        return 0;
}

/* The live children of this process (exited ones are reaped on the way), at most max. */
static size_t live_children(pid_t *pids, size_t max) {
        siginfo_t si;

        for (;;) {
                si.si_pid = 0;
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL) < 0 || si.si_pid == 0)
                        break;
        }
        return proc_children(getpid(), pids, max);
}

int tu_teardown_no_leftovers(void **state) {
        pid_t pids[64];
        size_t n;
        int64_t end;
        struct timespec ts;

        (void) state;
        alarm(0);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        end = (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + TU_LEFTOVER_GRACE_MS;
        while ((n = live_children(pids, 64)) > 0) {
                clock_gettime(CLOCK_MONOTONIC, &ts);
                int64_t left = end - ((int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
                if (left <= 0)
                        break;
                /* wait for the first of them to exit, on its pidfd: no polling interval */
                struct pollfd p[64];
                nfds_t k = 0;
                for (size_t i = 0; i < n; i++) {
                        int fd = (int) syscall(SYS_pidfd_open, pids[i], 0);
                        if (fd >= 0)
                                p[k++] = (struct pollfd){ .fd = fd, .events = POLLIN };
                }
                (void) poll(p, k, (int) left);
                for (nfds_t i = 0; i < k; i++)
                        close(p[i].fd);
        }
        if (n == 0) {
                /* a child that became a zombie after live_children() reaped is reaped here */
                siginfo_t si;
                for (;;) {
                        si.si_pid = 0;
                        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL) < 0 || si.si_pid == 0)
                                break;
                }
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                char path[64], comm[64] = "";
                snprintf(path, sizeof(path), "/proc/%d/comm", (int) pids[i]);
                FILE *f = fopen(path, "re");
                if (f) {
                        if (!fgets(comm, sizeof(comm), f))
                                comm[0] = 0;
                        fclose(f);
                }
                comm[strcspn(comm, "\n")] = 0;
                fprintf(stderr, "testutil: the test left process %d (%s) running: killed\n", (int) pids[i], comm);
                (void) kill(pids[i], SIGKILL);
        }
        /* reaped here, so that the next test starts with no child at all */
        siginfo_t si;
        while (waitid(P_ALL, 0, &si, WEXITED | __WALL) == 0)
                ;
        return -1;
}

const char *tu_profiles_dir_arg(int argc, char **argv, const char *why_x86_64) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s PROFILES_DIR\n", argv[0]);
                exit(2);
        }
#if !defined(__x86_64__)
        fprintf(stderr, "skip: %s\n", why_x86_64);
        exit(77);
#else
        (void) why_x86_64;
#endif
        return argv[1];
}

const char *tu_cgroup_base(void) {
        const char *base =
                access("/sys/fs/cgroup/pids/cgroup.procs", F_OK) == 0 ? "/sys/fs/cgroup/pids" : "/sys/fs/cgroup";
        char procs[64];

        snprintf(procs, sizeof(procs), "%s/cgroup.procs", base);
        if (geteuid() != 0 || access(procs, F_OK) < 0 || access(base, W_OK) < 0)
                return NULL;
        return base;
}
