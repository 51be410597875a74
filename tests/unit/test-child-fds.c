/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the task worker's fd step (engine/child.c): the fd map put in place, every other
 * fd closed, bad maps refused. Helpers in child-run.h.
 *
 *   test-child-fds        tests that need no privilege
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

#include "child.h"
#include "child-run.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "probe.h"
#include "util.h"

static int memfd_at(const char *name, int fd) {
        _cleanup_close_ int m = memfd_create(name, MFD_CLOEXEC);

        assert_true(m >= 0);
        assert_int_equal(dup3(m, fd, O_CLOEXEC), fd);
        return fd;
}

/* Parses `ls -l /proc/self/fd` into fd -> link target. */
static int parse_ls(const struct result *res, char links[][128], int max) {
        int n = 0;

        for (const char *l = res->out; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0) {
                const char *arrow = strstr(l, " -> "), *e = strchrnul(l, '\n'), *num;
                int fd;

                if (!arrow || arrow > e)
                        continue;
                num = arrow;
                while (num > l && num[-1] != ' ')
                        num--;
                fd = atoi(num);
                assert_true(fd >= 0 && fd < max);
                assert_true((size_t) (e - arrow - 4) < 128);
                memcpy(links[fd], arrow + 4, (size_t) (e - arrow - 4));
                links[fd][e - arrow - 4] = 0;
                n++;
        }
        return n;
}

static void test_fd_map(void **state) {
        static char *const argv[] = { "/bin/ls", "-l", "/proc/self/fd", NULL };
        char links[64][128];
        struct ze_plan p;
        struct result res;
        int leak, a, b, c, n, open_fds = 0;
        bool dir_seen = false;

        a = memfd_at("zy-a", 20);
        b = memfd_at("zy-b", 21);
        c = memfd_at("zy-c", 22);
        /* Not CLOEXEC in the parent, not in the map: the worker must close it. */
        leak = memfd_at("zy-leak", 30);
        assert_return_code(fcntl(leak, F_SETFD, 0), errno);

        struct ze_fdmap map[] = {
                { .src = a, .target = b }, /* a swap: each source is the other's target */
                { .src = b, .target = a },
                { .src = c, .target = c }, /* src == target */
        };
        plan_init(&p, argv);
        p.fds = map;
        p.n_fds = ELEMENTSOF(map);
        run_ok(&p, &res);

        memset(links, 0, sizeof(links));
        n = parse_ls(&res, links, 64);
        assert_string_equal(links[0], "/dev/null");
        assert_true(strncmp(links[1], "pipe:[", 6) == 0);
        assert_string_equal(links[2], "/dev/null");
        assert_string_equal(links[20], "/memfd:zy-b (deleted)");
        assert_string_equal(links[21], "/memfd:zy-a (deleted)");
        assert_string_equal(links[22], "/memfd:zy-c (deleted)");
        for (int fd = 0; fd < 64; fd++) {
                size_t len = strlen(links[fd]);

                if (!len)
                        continue;
                open_fds++;
                /* ls's own directory fd is the only other fd allowed */
                if (fd != 0 && fd != 1 && fd != 2 && fd != 20 && fd != 21 && fd != 22) {
                        assert_false(dir_seen);
                        assert_true(strncmp(links[fd], "/proc/", 6) == 0);
                        assert_string_equal(links[fd] + len - 3, "/fd");
                        dir_seen = true;
                }
        }
        assert_int_equal(open_fds, n);
        assert_int_equal(n, 7); /* 0, 1, 2, 20, 21, 22 and ls's directory: status fd closed */

        /* The parent's fds are untouched. */
        assert_int_equal(fcntl(a, F_GETFD), FD_CLOEXEC);
        safe_close(a);
        safe_close(b);
        safe_close(c);
        safe_close(leak);
}

static void test_fd_bad_source(void **state) {
        struct ze_fdmap map[] = { { .src = 999, .target = 5 } };
        struct ze_plan p;
        struct result res;

        assert_true(fcntl(999, F_GETFD) < 0);
        plan_init(&p, argv_true);
        p.fds = map;
        p.n_fds = 1;
        run_fails(&p, false, &res, ZE_STEP_FDS, EBADF, ZE_EXIT_SETUP_FAILED);
}

static void test_fd_duplicate_target(void **state) {
        struct ze_fdmap map[] = { { .src = 0, .target = 5 }, { .src = 1, .target = 5 } };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        p.fds = map;
        p.n_fds = 2;
        run_fails(&p, false, &res, ZE_STEP_FDS, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_status_fd_low(void **state) {
        /* The status fd sits at a number the map targets: it must be moved, not clobbered. */
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF, saved = -EBADF;
        struct ze_fdmap map[] = { { .src = 0, .target = 0 } };
        char *const argv[] = { "/nonexistent/zy", NULL };
        struct ze_plan p;
        struct result res = { 0 };
        pid_t pid;

        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
        assert_true(saved >= 0);
        plan_init(&p, argv);
        p.fds = map;
        p.n_fds = 1;
        pid = clone_with_pidfd(0, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                /* the status pipe on fd 1 and fd 2, sources on fd 0 */
                if (dup3(status[1], 1, O_CLOEXEC) < 0 || dup3(status[1], 2, O_CLOEXEC) < 0)
                        _exit(99);
                p.status_fd = 1;
                ze_child_run(&p);
        }
        status[1] = safe_close(status[1]);
        read_records(status[0], &res);
        res.code = tu_wait_code(pidfd);
        assert_failed(&res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
}

static const struct CMUnitTest plain[] = {
        tu_test(test_fd_map),
        tu_test(test_fd_bad_source),
        tu_test(test_fd_duplicate_target),
        tu_test(test_status_fd_low),
};

CHILD_TESTS_MAIN(CHILD_TEST_GROUP("plain", "child-fds", plain))
