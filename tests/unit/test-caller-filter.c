/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of daemon/caller-filter.c: the seccomp programs of a real child, read through
 * PTRACE_SECCOMP_GET_FILTER as zygoted reads a caller's: each program as loaded, oldest first;
 * none for a child without a filter; threads whose chains differ refused; a thread that cannot
 * be traced (this test traces it already) refused; a child that is gone; and the child untouched
 * afterwards (not traced, its blocking read restarted, not failed).
 *
 *   test-caller-filter   (root: the kernel gives the programs to CAP_SYS_ADMIN only; skips else)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "caller-filter.h"
#include "pidfd-util.h"
#include "util.h"

/* Denies system call nr with err (any architecture: the test only reads the programs back). */
#define DENY(call, err) \
        { \
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (call), 0, 1), \
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err)), \
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) \
        }

static struct sock_filter deny_mkdirat[] = DENY(SYS_mkdirat, EPERM);
static struct sock_filter deny_uname[] = DENY(SYS_uname, EACCES);

static int load(struct sock_filter *insns, size_t n) {
        struct sock_fprog prog = { .len = (unsigned short) n, .filter = insns };

        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0 ? -errno : 0;
}

enum { NONE = 0, TWO = 1 << 0, THREAD_DIFFERS = 1 << 1 };

struct child {
        pid_t pid;
        int pidfd;
        int go;   /* write end: a byte lets the child exit */
        int said; /* read end: what the child's blocking read returned, once released */
};

static int ready_pipe[2];
static int thread_pipe[2]; /* the child's: its thread has loaded its filter */

static void *thread_main(void *arg) {
        int *go = arg;
        char c;

        if (load(deny_uname, ELEMENTSOF(deny_uname)) < 0)
                _exit(3);
        (void) !write(thread_pipe[1], "t", 1);
        (void) !read(*go, &c, 1);
        return NULL;
}

/* A child with the filters of how, blocked in read() on a pipe until released; its read's result
 * comes back on said ("ok" or "EINTR"). */
static void start_child(unsigned how, struct child *ret) {
        int go[2], said[2];
        char c;

        assert_int_equal(pipe2(go, O_CLOEXEC), 0);
        assert_int_equal(pipe2(said, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ready_pipe, O_CLOEXEC), 0);
        ret->pid = clone_with_pidfd(0, &ret->pidfd);
        assert_true(ret->pid >= 0);
        if (ret->pid == 0) {
                pthread_t t;
                ssize_t n;

                if (how != NONE &&
                    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || load(deny_mkdirat, ELEMENTSOF(deny_mkdirat)) < 0))
                        _exit(2);
                if ((how & TWO) && load(deny_uname, ELEMENTSOF(deny_uname)) < 0)
                        _exit(2);
                if (how & THREAD_DIFFERS) {
                        if (pipe2(thread_pipe, O_CLOEXEC) < 0 || pthread_create(&t, NULL, thread_main, &go[0]) != 0)
                                _exit(2);
                        (void) !read(thread_pipe[0], &c, 1);
                }
                (void) !write(ready_pipe[1], "r", 1);
                n = read(go[0], &c, 1);
                (void) !write(said[1], n == 1 ? "ok" : "EINTR", n == 1 ? 2 : 5);
                _exit(0);
        }
        close(go[0]);
        close(said[1]);
        assert_int_equal(read(ready_pipe[0], &c, 1), 1);
        assert_int_equal(c, 'r');
        close(ready_pipe[0]);
        close(ready_pipe[1]);
        ret->go = go[1];
        ret->said = said[0];
}

/* Releases the child and reaps it; what its read returned, in buf. */
static void finish_child(struct child *c, char *buf, size_t size) {
        ssize_t n;

        memset(buf, 0, size);
        assert_int_equal(write(c->go, "gg", 2), 2);
        n = read(c->said, buf, size - 1);
        assert_true(n > 0);
        assert_int_equal(pidfd_reap(c->pidfd, NULL), 0);
        close(c->pidfd);
        close(c->go);
        close(c->said);
}

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0) {
                fprintf(stderr, "skipped: not root (the kernel gives seccomp programs to CAP_SYS_ADMIN only)\n");
                exit(77);
        }
        return 0;
}

static void assert_prog(const struct sock_fprog *p, const struct sock_filter *insns, size_t n) {
        assert_int_equal(p->len, n);
        assert_memory_equal(p->filter, insns, n * sizeof(*insns));
}

static void test_reads_each_program_oldest_first(void **state) {
        struct zd_caller_filters f = {};
        struct child c;
        char said[16];

        (void) state;
        start_child(TWO, &c);
        assert_int_equal(zd_caller_read_filters(c.pid, c.pidfd, &f), 0);
        assert_int_equal(f.n, 2);
        assert_prog(&f.progs[0], deny_mkdirat, ELEMENTSOF(deny_mkdirat));
        assert_prog(&f.progs[1], deny_uname, ELEMENTSOF(deny_uname));
        zd_caller_filters_done(&f);
        /* the child was paused for the read and went on: its blocking read restarted, not EINTR */
        finish_child(&c, said, sizeof(said));
        assert_string_equal(said, "ok");
}

static void test_no_filter_reads_none(void **state) {
        struct zd_caller_filters f = {};
        struct child c;
        char said[16];

        (void) state;
        start_child(NONE, &c);
        assert_int_equal(zd_caller_read_filters(c.pid, c.pidfd, &f), 0);
        assert_int_equal(f.n, 0);
        zd_caller_filters_done(&f);
        finish_child(&c, said, sizeof(said));
}

static void test_threads_that_differ_are_refused(void **state) {
        struct zd_caller_filters f = {};
        struct child c;
        char said[16];

        (void) state;
        start_child(THREAD_DIFFERS, &c);
        assert_int_equal(zd_caller_read_filters(c.pid, c.pidfd, &f), -ENOTUNIQ);
        assert_null(f.insns);
        finish_child(&c, said, sizeof(said));
}

static void test_traced_child_is_refused(void **state) {
        struct zd_caller_filters f = {};
        struct child c;
        char said[16];

        (void) state;
        start_child(TWO, &c);
        /* traced already (a debugger): the reading child may not seize it */
        assert_int_equal(ptrace(PTRACE_SEIZE, c.pid, NULL, NULL), 0);
        assert_int_equal(zd_caller_read_filters(c.pid, c.pidfd, &f), -EPERM);
        assert_null(f.insns);
        /* a seized tracee that runs: interrupted and let go, so that it can be released */
        assert_int_equal(ptrace(PTRACE_INTERRUPT, c.pid, NULL, NULL), 0);
        assert_int_equal(waitpid(c.pid, NULL, __WALL), c.pid);
        assert_int_equal(ptrace(PTRACE_DETACH, c.pid, NULL, NULL), 0);
        finish_child(&c, said, sizeof(said));
}

static void test_gone_child_is_esrch(void **state) {
        struct zd_caller_filters f = {};
        struct child c;
        char said[16];
        int pidfd;

        (void) state;
        start_child(TWO, &c);
        pidfd = fcntl(c.pidfd, F_DUPFD_CLOEXEC, 3);
        assert_true(pidfd >= 0);
        finish_child(&c, said, sizeof(said));
        assert_int_equal(zd_caller_read_filters(c.pid, pidfd, &f), -ESRCH);
        close(pidfd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reads_each_program_oldest_first),
                cmocka_unit_test(test_no_filter_reads_none),
                cmocka_unit_test(test_threads_that_differ_are_refused),
                cmocka_unit_test(test_traced_child_is_refused),
                cmocka_unit_test(test_gone_child_is_esrch),
        };

        return cmocka_run_group_tests(tests, setup, NULL);
}
