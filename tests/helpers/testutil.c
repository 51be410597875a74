/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the unit tests (see testutil.h).
 */
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pidfd-util.h"
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
