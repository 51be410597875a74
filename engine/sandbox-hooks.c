/* SPDX-License-Identifier: MIT */
/*
 * The sandbox-setup module's hooks: the OCI createContainer and startContainer hooks, run by the
 * container init itself between clone and execve (sandbox.h). Same rules as the rest of the
 * module: raw system calls and async-signal-safe wrappers only, nothing allocated; everything
 * (argv, envp, the state text) was prepared by the runtime before the clone.
 *
 * Each hook is a child of the init (clone() with CLONE_PIDFD: no clone3, which seccomp filters
 * such as Docker's refuse, and the startContainer hooks run under the container's filter). The
 * state goes through a pipe on its stdin, written by the init without blocking while it waits
 * on the hook's pidfd with poll(), until the hook exits or its timeout passes (then SIGKILL).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "sandbox-hooks.h"

void ze_sb_hooks_set_pid(const struct ze_sb_hooks *h, int pid) {
        char *slot;
        unsigned v = pid > 0 ? (unsigned) pid : 0;

        if (h->n == 0 || !h->state || h->pid_at + ZE_SB_PID_SLOT > h->state_len)
                return;
        slot = h->state + h->pid_at;
        for (int i = ZE_SB_PID_SLOT - 1; i >= 0; i--) {
                slot[i] = v > 0 || i == ZE_SB_PID_SLOT - 1 ? (char) ('0' + v % 10) : ' ';
                v /= 10;
        }
}

/* The hook itself: the state on stdin, stdout to the init's stderr, nothing else open, SIGPIPE
 * back to its default (the init ignores it while it writes the state), the credentials of h.
 * Exits 127 (or 126) when the execve fails, as a shell reports a command that cannot run; 126
 * when its credentials cannot be set (it never runs with more). */
_Noreturn static void hook_child(const struct ze_sb_hooks *h, const struct ze_sb_hook *hk, int in) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };

        (void) sigaction(SIGPIPE, &dfl, NULL);
        if (dup2(in, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                _exit(127);
        (void) syscall(SYS_close_range, 3U, ~0U, 0U);
        if (ze_step_hook_creds(&h->creds) < 0)
                _exit(126);
        execve(hk->path, hk->argv, hk->envp);
        _exit(errno == ENOENT || errno == ENOTDIR ? 127 : 126);
}

static long long now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Feeds the state to the hook (in: the pipe's write end, non-blocking) while waiting for its end
 * on pidfd, then reaps it: its status in *ret_status; -ETIME when its timeout passed and it was
 * killed. A hook that does not read its stdin is not waited for on that account: a full pipe just
 * stops the writing, and a closed one (EPIPE) ends it. */
static int feed_and_wait(const struct ze_sb_hooks *h, const struct ze_sb_hook *hk, int in, int pidfd, int *ret_status) {
        long long deadline = hk->timeout_ms > 0 ? now_ms() + hk->timeout_ms : 0;
        size_t done = 0;
        bool timed_out = false;
        siginfo_t si = { 0 };
        int r;

        for (;;) {
                struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = in, .events = POLLOUT } };
                long long left = deadline ? deadline - now_ms() : -1;

                if (deadline && left <= 0) {
                        timed_out = true;
                        (void) pidfd_kill(pidfd, SIGKILL);
                        break;
                }
                r = poll(p, in >= 0 ? 2 : 1, left < 0 ? -1 : left > 1000000000 ? 1000000000 : (int) left);
                if (r < 0 && errno != EINTR) {
                        r = -errno;
                        (void) pidfd_kill(pidfd, SIGKILL);
                        (void) pidfd_reap(pidfd, NULL);
                        if (in >= 0)
                                close(in);
                        return r;
                }
                if (r > 0 && in >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
                        ssize_t n = write(in, h->state + done, h->state_len - done);

                        if (n > 0)
                                done += (size_t) n;
                        if ((n < 0 && errno != EAGAIN && errno != EINTR) || done >= h->state_len) {
                                close(in); /* all of it, or a hook that closed its stdin: EOF */
                                in = -1;
                        }
                }
                if (r > 0 && (p[0].revents & POLLIN))
                        break;
        }
        if (in >= 0)
                close(in);
        r = pidfd_reap(pidfd, &si);
        if (r < 0)
                return r;
        *ret_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        return timed_out ? -ETIME : 0;
}

/* One hook: 0 when it exited 0; else a negative errno (-EPROTO: it ran and failed, -ETIME: its
 * timeout) with its status in *ret_status (-1 when it never ran). */
static int run_one(const struct ze_sb_hooks *h, const struct ze_sb_hook *hk, int *ret_status) {
        int in[2], pidfd = -1, r;
        pid_t pid;

        *ret_status = -1;
        if (pipe2(in, O_CLOEXEC) < 0)
                return -errno;
        /* the init's end only: the hook's stdin stays a blocking pipe */
        if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                close(in[0]);
                close(in[1]);
                return r;
        }
        pid = clone_with_pidfd(CLONE_WITH_PIDFD_NO_CLONE3, &pidfd);
        if (pid == 0)
                hook_child(h, hk, in[0]);
        close(in[0]);
        if (pid < 0) {
                close(in[1]);
                return pid;
        }
        r = feed_and_wait(h, hk, in[1], pidfd, ret_status);
        close(pidfd);
        if (r < 0)
                return r;
        return *ret_status == 0 ? 0 : -EPROTO;
}

int ze_sb_run_hooks(const struct ze_sb_hooks *h, int *ret_index, int *ret_status) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
        int r = 0;

        *ret_index = -1;
        *ret_status = -1;
        if (h->n == 0)
                return 0;
        /* a hook that exits without reading its state must not kill the init with SIGPIPE; the
         * disposition goes back to the default (step 0's) for the rest of the init and the
         * container's process */
        if (sigaction(SIGPIPE, &ign, NULL) < 0)
                return -errno;
        for (size_t i = 0; i < h->n && r == 0; i++) {
                *ret_index = (int) i;
                r = run_one(h, &h->list[i], ret_status);
        }
        if (sigaction(SIGPIPE, &dfl, NULL) < 0 && r == 0)
                r = -errno;
        if (r == 0)
                *ret_index = -1;
        return r;
}
