/* SPDX-License-Identifier: MIT */
/*
 * GetFilter's compile, away from the daemon's one thread: libseccomp can take seconds on an
 * object a caller makes expensive on purpose, and nothing may delay another caller that long. A
 * child forked for each compile (after the fork gate: it copies the fd table) compiles with the
 * profile module, exactly as the daemon did, and writes one answer to a pipe: a header, then
 * the program or the error's words. It runs under RLIMIT_CPU and at a lower priority; the daemon
 * adds a wall-clock deadline, watches its pidfd, reaps it and reads its CPU time (filter.c).
 *
 * The child is a copy of the daemon: it may allocate and use libseccomp (the daemon has one
 * thread, so no lock is held by another at the fork), and it leaves with _exit(), never through
 * the daemon's exit path.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "filter-compile.h"
#include "pidfd-util.h"
#include "profile.h"
#include "util.h"

#define ANSWER_MAGIC 0x7a79636dU /* "zycm" */

struct answer {
        uint32_t magic;
        int32_t error;
        uint32_t flags;
        uint32_t bpf_len;
        uint32_t message_len;
        char hash[2 * ZC_SHA256_DIGEST_SIZE + 1];
};

static int write_all(int fd, const void *p, size_t size) {
        while (size > 0) {
                ssize_t n = write(fd, p, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -EIO;
                p = (const char *) p + n;
                size -= (size_t) n;
        }
        return 0;
}

static _noreturn_ void compile_child(pid_t parent, const char *text, size_t size, unsigned cpu_sec, int fd) {
        struct rlimit cpu = { .rlim_cur = cpu_sec, .rlim_max = cpu_sec + 1 };
        struct answer a = { .magic = ANSWER_MAGIC };
        struct zp_profile *p = NULL;
        char *err = NULL;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
        if (getppid() != parent)
                _exit(1);
        (void) prctl(PR_SET_NAME, (unsigned long) "zygote-compile", 0UL, 0UL, 0UL);
        /* its end of the pipe as fd 3, and nothing else of the daemon's: a connection the daemon
         * closes must not stay open here (its caller waits for EOF) */
        if (fd != 3 && dup3(fd, 3, O_CLOEXEC) < 0)
                _exit(1);
        (void) close_range(4, ~0U, 0);
        /* the daemon and every other caller come first on a shared machine */
        (void) setpriority(PRIO_PROCESS, 0, 10);
        if (setrlimit(RLIMIT_CPU, &cpu) < 0)
                _exit(1);

        /* a container's object: its runtime hands a notifying filter's listener to the agent, so
         * SCMP_ACT_NOTIFY compiles (and the flags say NEW_LISTENER); a task's profile never does.
         * Compiled as zygote-runc compiles it, runc's -ENOSYS stub included: the same container
         * gets the same filter from either */
        a.error = zp_profile_load_buffer_with(
                "seccomp", text, size, &(const struct zp_profile_options){ .listener = true, .enosys_newer = true }, &p,
                &err);
        if (a.error >= 0 && (p->bpf_len > ZD_COMPILE_MAX_INSNS)) {
                a.error = -E2BIG;
                free(err);
                err = strdup("seccomp: the program is longer than any kernel loads");
        }
        if (a.error >= 0) {
                a.error = 0;
                a.flags = p->filter_flags;
                a.bpf_len = (uint32_t) p->bpf_len;
                snprintf(a.hash, sizeof(a.hash), "%s", p->hash);
        } else if (err)
                a.message_len = (uint32_t) strnlen(err, ZD_COMPILE_MAX_MESSAGE);
        if (write_all(3, &a, sizeof(a)) < 0 ||
            (a.bpf_len > 0 && write_all(3, p->bpf, a.bpf_len * sizeof(struct sock_filter)) < 0) ||
            (a.message_len > 0 && write_all(3, err, a.message_len) < 0))
                _exit(1);
        _exit(0);
}

pid_t zd_compile_fork(const char *text, size_t size, unsigned cpu_sec, int *ret_pidfd, int *ret_fd) {
        _cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
        pid_t parent = getpid(), pid;
        int pidfd = -EBADF;

        if (pipe2(pipefd, O_CLOEXEC) < 0 || fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0)
                return negative_errno();
        pid = clone_with_pidfd(0, &pidfd);
        if (pid < 0)
                return pid;
        if (pid == 0)
                compile_child(parent, text, size, cpu_sec, pipefd[1]);
        *ret_pidfd = pidfd;
        *ret_fd = TAKE_FD(pipefd[0]);
        return pid;
}

int zd_compile_result_parse(const void *buf, size_t size, struct zd_compile_result *ret) {
        struct answer a;
        _cleanup_free_ struct sock_filter *bpf = NULL;
        _cleanup_free_ char *message = NULL;

        if (size < sizeof(a))
                return -EBADMSG;
        memcpy(&a, buf, sizeof(a));
        if (a.magic != ANSWER_MAGIC || a.bpf_len > ZD_COMPILE_MAX_INSNS || a.message_len > ZD_COMPILE_MAX_MESSAGE ||
            a.error > 0 || (a.error == 0) != (a.bpf_len > 0) || memchr(a.hash, 0, sizeof(a.hash)) == NULL ||
            size != sizeof(a) + a.bpf_len * sizeof(struct sock_filter) + a.message_len)
                return -EBADMSG;
        if (a.bpf_len > 0) {
                bpf = malloc(a.bpf_len * sizeof(*bpf));
                if (!bpf)
                        return -ENOMEM;
                memcpy(bpf, (const char *) buf + sizeof(a), a.bpf_len * sizeof(*bpf));
        }
        if (a.message_len > 0) {
                message =
                        strndup((const char *) buf + sizeof(a) + a.bpf_len * sizeof(struct sock_filter), a.message_len);
                if (!message)
                        return -ENOMEM;
        }
        *ret = (struct zd_compile_result){ .error = a.error,
                                           .flags = a.flags,
                                           .bpf_len = a.bpf_len,
                                           .bpf = TAKE_PTR(bpf),
                                           .message = TAKE_PTR(message) };
        memcpy(ret->hash, a.hash, sizeof(ret->hash));
        return 0;
}

void zd_compile_result_done(struct zd_compile_result *r) {
        free(r->bpf);
        free(r->message);
        r->bpf = NULL;
        r->message = NULL;
}
