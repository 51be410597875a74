/* SPDX-License-Identifier: MIT */
/*
 * The caller's own seccomp filters (caller-filter.h). The kernel gives a task's programs to a
 * tracer only (PTRACE_SECCOMP_GET_FILTER, CAP_SYS_ADMIN, no filter on the tracer), and only while
 * the task sits in a ptrace stop: no /proc file, pidfd call or listener fdinfo shows them. So a
 * child of zygoted seizes each thread (PTRACE_SEIZE: no signal, nothing the caller can see but
 * TracerPid) and interrupts it (PTRACE_INTERRUPT: a stop of its own, not a group stop: the
 * caller's parent hears nothing), all of them before waiting for any, then reads each chain and
 * lets every thread go, giving back a signal a stop had caught. The caller's thread that sent the call is waiting for the reply and is only paused;
 * another thread's interruptible system call is restarted, but one that cannot be restarted
 * (epoll_wait, a socket read with a timeout) returns EINTR, as after SIGSTOP and SIGCONT.
 *
 * Why a child and not zygoted itself: a thread that does not reach its stop (uninterruptible
 * sleep) cannot be detached from while it runs, and would stay traced; a child that takes too
 * long is killed, and a tracer's death detaches every thread it seized.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "caller-filter.h"
#include "pidfd-util.h"
#include "util.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* What the child writes: this head, then head.total instructions, the oldest filter's first. */
struct filters_head {
        int32_t err;
        uint32_t n, total;
        uint32_t lens[ZD_CALLER_MAX_FILTERS]; /* oldest first */
};

/* One thread's chain into buf (cap instructions), oldest first: the kernel numbers a task's filters
 * from the first installed (get_nth_filter() counts back from the newest). */
static int read_chain(pid_t tid, struct sock_filter *buf, size_t cap, uint32_t lens[], uint32_t *ret_n,
                      uint32_t *ret_total) {
        uint32_t n = 0, total = 0;

        for (;; n++) {
                long len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) (uintptr_t) n, NULL);

                /* ENOENT: past the newest; EINVAL at 0: a thread without a filter */
                if (len < 0 && (errno == ENOENT || (errno == EINVAL && n == 0)))
                        break;
                if (len < 0)
                        return -errno;
                if (n >= ZD_CALLER_MAX_FILTERS || (size_t) len > cap - total)
                        return -E2BIG;
                if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) (uintptr_t) n, buf + total) != len)
                        return -EIO;
                lens[n] = (uint32_t) len;
                total += (uint32_t) len;
        }
        *ret_n = n;
        *ret_total = total;
        return 0;
}

#define THREADS_MAX 1024 /* the caller has at most 64 (caller.c), more may have come since */

/* The caller's threads as the child holds them: each seized and interrupted before any is waited
 * for, so that their stops overlap (on a loaded machine each waits for a CPU), then read, then let
 * go, each with the signal whose delivery it stopped for (0: the interrupt's own stop, or a group
 * stop it stays in). */
struct seized {
        size_t n;
        pid_t tid[THREADS_MAX];
        int sig[THREADS_MAX];
        bool stopped[THREADS_MAX];
};

/* Every thread listed in /proc/PID/task seized and interrupted; one that ended since the listing
 * (ESRCH) is passed over. */
static int seize_all(pid_t pid, struct seized *t) {
        char path[64];
        struct dirent *de;
        DIR *dir;
        int r = 0;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? -ESRCH : -errno;
        while (r >= 0 && (de = readdir(dir))) {
                pid_t tid;

                if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
                        continue;
                if (t->n >= THREADS_MAX) {
                        r = -E2BIG;
                        break;
                }
                tid = (pid_t) atoi(de->d_name);
                if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0 || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
                        r = errno == ESRCH ? 0 : -errno;
                else
                        t->tid[t->n++] = tid;
        }
        closedir(dir);
        return r;
}

/* Waits for thread i's stop: 1 stopped, 0 ended meanwhile, or -errno. */
static int wait_stop(struct seized *t, size_t i) {
        int status;

        while (waitpid(t->tid[i], &status, __WALL) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFSTOPPED(status))
                return 0;
        t->sig[i] = status >> 16 == 0 ? WSTOPSIG(status) : 0;
        t->stopped[i] = true;
        return 1;
}

/* The child: every thread of pid, its chain read and compared with the first one's. */
static int child_read(pid_t pid, struct filters_head *h, struct sock_filter *buf, struct sock_filter *other) {
        static struct seized t;
        bool first = true;
        int r;

        r = seize_all(pid, &t);
        for (size_t i = 0; r >= 0 && i < t.n; i++) {
                uint32_t lens[ZD_CALLER_MAX_FILTERS], n = 0, total = 0;

                r = wait_stop(&t, i);
                if (r <= 0)
                        continue; /* ended since the listing (0), or r < 0 ends the loop */
                r = read_chain(t.tid[i], first ? buf : other, ZD_CALLER_MAX_FILTER_INSNS, lens, &n, &total);
                if (r < 0)
                        break;
                if (first) {
                        h->n = n;
                        h->total = total;
                        memcpy(h->lens, lens, n * sizeof(*lens));
                        first = false;
                } else if (n != h->n || total != h->total || memcmp(buf, other, total * sizeof(*buf)) != 0 ||
                           memcmp(lens, h->lens, n * sizeof(*lens)) != 0)
                        r = -ENOTUNIQ;
        }
        /* let go of every thread that stopped; one seized and not waited for is let go by this
         * child's exit, which detaches it (a tracee can be detached only in a stop) */
        for (size_t i = 0; i < t.n; i++)
                if (t.stopped[i])
                        (void) ptrace(PTRACE_DETACH, t.tid[i], NULL, (void *) (uintptr_t) t.sig[i]);
        if (r >= 0 && first)
                r = -ESRCH; /* no thread left */
        return r;
}

static int write_all(int fd, const void *p, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -EIO;
                p = (const char *) p + n;
                len -= (size_t) n;
        }
        return 0;
}

_Noreturn static void child_main(pid_t pid, pid_t parent, int wfd) {
        static struct filters_head h;
        struct sock_filter *buf = malloc(2 * ZD_CALLER_MAX_FILTER_INSNS * sizeof(*buf));
        sigset_t none;

        /* nothing of zygoted's but the pipe: other callers' fds are not ours to hold */
        if (wfd > 3)
                (void) syscall(SYS_close_range, 3, wfd - 1, 0);
        (void) syscall(SYS_close_range, wfd + 1, ~0U, 0);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(1);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        h.err = buf ? child_read(pid, &h, buf, buf + ZD_CALLER_MAX_FILTER_INSNS) : -ENOMEM;
        if (write_all(wfd, &h, sizeof(h)) < 0 || (h.err >= 0 && write_all(wfd, buf, h.total * sizeof(*buf)) < 0))
                _exit(1);
        _exit(0);
}

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* len bytes from fd into p, before the deadline (CLOCK_MONOTONIC, ms). */
static int read_until(int fd, void *p, size_t len, int64_t deadline) {
        while (len > 0) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                int64_t left = deadline - now_ms();
                ssize_t n;

                if (left <= 0)
                        return -ETIME;
                n = poll(&pfd, 1, (int) left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ETIME;
                n = read(fd, p, len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO; /* the child died without answering */
                p = (char *) p + n;
                len -= (size_t) n;
        }
        return 0;
}

static int receive(int rfd, struct zd_caller_filters *ret) {
        int64_t deadline = now_ms() + ZD_CALLER_FILTER_TIMEOUT_MS;
        _cleanup_free_ struct sock_filter *insns = NULL;
        struct filters_head h;
        size_t at = 0;
        int r;

        r = read_until(rfd, &h, sizeof(h), deadline);
        if (r < 0)
                return r;
        if (h.err < 0)
                return h.err;
        if (h.n > ZD_CALLER_MAX_FILTERS || h.total > ZD_CALLER_MAX_FILTER_INSNS)
                return -EBADMSG;
        insns = malloc((h.total ? h.total : 1) * sizeof(*insns));
        if (!insns)
                return -ENOMEM;
        r = read_until(rfd, insns, h.total * sizeof(*insns), deadline);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < h.n; i++) {
                if (h.lens[i] == 0 || h.lens[i] > h.total - at)
                        return -EBADMSG;
                ret->progs[i] = (struct sock_fprog){ .len = (unsigned short) h.lens[i], .filter = insns + at };
                at += h.lens[i];
        }
        ret->n = h.n;
        ret->insns = TAKE_PTR(insns);
        return 0;
}

int zd_caller_read_filters(pid_t pid, int pidfd, struct zd_caller_filters *ret) {
        _cleanup_close_ int child_fd = -EBADF;
        struct zd_caller_filters f = {};
        int fds[2], r;
        pid_t parent = getpid(), child;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        child = clone_with_pidfd(0, &child_fd);
        if (child == 0)
                child_main(pid, parent, fds[1]);
        safe_close(fds[1]);
        if (child < 0) {
                safe_close(fds[0]);
                return (int) child;
        }
        r = receive(fds[0], &f);
        safe_close(fds[0]);
        /* done or too late: a tracer's death detaches every thread it still holds */
        (void) pidfd_kill(child_fd, SIGKILL);
        (void) pidfd_reap(child_fd, NULL);
        if (r >= 0 && pidfd_kill(pidfd, 0) == -ESRCH)
                r = -ESRCH; /* what was read under its number may be another's */
        if (r < 0) {
                zd_caller_filters_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

void zd_caller_filters_done(struct zd_caller_filters *f) {
        if (!f)
                return;
        free(f->insns);
        f->insns = NULL;
        f->n = 0;
}
