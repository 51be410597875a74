/* SPDX-License-Identifier: MIT */
/* Closing a caller's fds in helper processes that share the fd table: see fd-closer.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-closer.h"
#include "pidfd-util.h"

struct ack {
        uint32_t helper; /* the helper's serial number */
        int32_t fd;
};

struct helper {
        uint32_t serial;
        pid_t pid;
        int pidfd;
        int cmd_w;        /* ours; -1 once the helper is let go */
        int cmd_r;        /* the helper's end, in the one table: the helper closes it */
        int in_flight;    /* the fd it is on, -1 when idle */
        int64_t deadline; /* when an unanswered in_flight makes it stuck */
};

struct zy_fd_closer {
        uint64_t clone_flags;
        int ack_r, ack_w;
        uint32_t next_serial;
        struct helper helpers[ZY_FD_CLOSER_MAX_HELPERS];
        size_t n_helpers;
        struct helper *current; /* the one that takes new work; NULL when none */
        int *queue;             /* FIFO: queue[head..n) */
        size_t head, n, size;
};

int64_t zy_fd_closer_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_keep_errno(int fd) {
        int e = errno;

        if (fd >= 0)
                (void) close(fd);
        errno = e;
}

/* The helper: close what comes, acknowledge each after its close returns, leave at EOF. It shares
 * the table, so it must not close anything it was not given, and it leaves with _exit (no atexit
 * handlers of the parent's copy of memory). */
_Noreturn static void helper_main(int cmd_r, int ack_w, uint32_t serial, pid_t parent) {
        int fds[256];

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
        (void) prctl(PR_SET_NAME, (unsigned long) ZY_FD_CLOSER_COMM, 0UL, 0UL, 0UL);
        /* The parent died before PDEATHSIG was set: we were handed to a reaper. getppid() is 0
         * while a parent outside our pid namespace lives (zygote-ref's helpers, born in its
         * profile's namespace), and the namespace's init once it died. */
        pid_t pp = getppid();
        if (pp != parent && pp != 0) {
                (void) close(cmd_r);
                _exit(0);
        }
        /* Its own signals: the parent's handlers (an event loop's, writing to a pipe in the
         * shared table) are not for it; a stop signal ends it like any plain process; SIGPIPE
         * must not (the ack pipe outlives us). */
        for (int sig = 1; sig < _NSIG; sig++)
                (void) signal(sig, sig == SIGPIPE ? SIG_IGN : SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        for (;;) {
                ssize_t n = read(cmd_r, fds, sizeof(fds));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                for (size_t i = 0; i < (size_t) n / sizeof(int); i++) {
                        struct ack a = { .helper = serial, .fd = fds[i] };

                        (void) close(fds[i]);
                        while (write(ack_w, &a, sizeof(a)) < 0 && errno == EINTR)
                                ;
                }
        }
        (void) close(cmd_r);
        _exit(0);
}

static int helper_start(struct zy_fd_closer *c) {
        struct helper *h;
        int p[2], pidfd = -1;
        pid_t pid, self = getpid();

        if (c->n_helpers >= ZY_FD_CLOSER_MAX_HELPERS)
                return -EMFILE;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = clone_with_pidfd(CLONE_FILES | c->clone_flags, &pidfd);
        if (pid == 0)
                helper_main(p[0], c->ack_w, c->next_serial, self);
        if (pid < 0) {
                close_keep_errno(p[0]);
                close_keep_errno(p[1]);
                return (int) pid;
        }
        /* Ours never blocks: one fd at a time goes into an empty pipe, and at the end the
         * queue goes as far as the pipe takes it. */
        (void) fcntl(p[1], F_SETFL, O_NONBLOCK);
        h = &c->helpers[c->n_helpers++];
        *h = (struct helper){ .serial = c->next_serial++, .pid = pid, .pidfd = pidfd, .cmd_w = p[1], .cmd_r = p[0],
                              .in_flight = -1 };
        c->current = h;
        return 0;
}

int zy_fd_closer_new(uint64_t extra_clone_flags, struct zy_fd_closer **ret) {
        struct zy_fd_closer *c;
        int p[2], r;

        if (!ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->clone_flags = extra_clone_flags;
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = -errno;
                free(c);
                return r;
        }
        /* The helpers' writes block if we fall behind (they have time); our reads never do. */
        (void) fcntl(p[1], F_SETFL, 0);
        c->ack_r = p[0];
        c->ack_w = p[1];
        r = helper_start(c);
        if (r < 0) {
                close_keep_errno(c->ack_r);
                close_keep_errno(c->ack_w);
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int zy_fd_closer_fd(const struct zy_fd_closer *c) {
        return c ? c->ack_r : -EBADF;
}

size_t zy_fd_closer_pending(const struct zy_fd_closer *c) {
        size_t n;

        if (!c)
                return 0;
        n = c->n - c->head;
        for (size_t i = 0; i < c->n_helpers; i++)
                n += c->helpers[i].in_flight >= 0;
        return n;
}

pid_t zy_fd_closer_current_pid(const struct zy_fd_closer *c) {
        return c && c->current ? c->current->pid : 0;
}

size_t zy_fd_closer_helpers(const struct zy_fd_closer *c) {
        return c ? c->n_helpers : 0;
}

/* Hands the next queued fd to the current helper if it is idle. */
static void feed(struct zy_fd_closer *c, int64_t now) {
        struct helper *h = c->current;
        int fd;

        if (!h || h->in_flight >= 0 || c->head == c->n)
                return;
        fd = c->queue[c->head];
        if (write(h->cmd_w, &fd, sizeof(fd)) != (ssize_t) sizeof(fd))
                return; /* cannot happen on an empty pipe; the fd stays queued */
        c->head++;
        if (c->head == c->n)
                c->head = c->n = 0;
        h->in_flight = fd;
        h->deadline = now + ZY_FD_CLOSER_STUCK_MS;
}

void zy_fd_closer_close(struct zy_fd_closer *c, int fd) {
        if (fd < 0)
                return;
        if (!c) {
                close_keep_errno(fd);
                return;
        }
        if (c->n == c->size) {
                size_t live = c->n - c->head;

                if (c->head > 0) {
                        memmove(c->queue, c->queue + c->head, live * sizeof(int));
                        c->head = 0;
                        c->n = live;
                } else {
                        size_t size = c->size ? c->size * 2 : 64;
                        int *q = realloc(c->queue, size * sizeof(int));

                        if (!q) {
                                close_keep_errno(fd); /* the last resort: it may block */
                                return;
                        }
                        c->queue = q;
                        c->size = size;
                }
        }
        c->queue[c->n++] = fd;
        feed(c, zy_fd_closer_now_ms());
}

/* Lets h go: EOF on its pipe once it is done. Its slot stays until it is reaped. */
static void let_go(struct zy_fd_closer *c, struct helper *h) {
        if (h->cmd_w >= 0) {
                close_keep_errno(h->cmd_w);
                h->cmd_w = -1;
        }
        if (c->current == h)
                c->current = NULL;
}

static void reap(struct zy_fd_closer *c) {
        int requeue = -1;

        for (size_t i = 0; i < c->n_helpers;) {
                struct helper *h = &c->helpers[i];
                siginfo_t si = { 0 };

                if (h->cmd_w >= 0 || pidfd_wait(h->pidfd, WEXITED | WNOHANG, &si) < 0 || si.si_pid == 0) {
                        i++;
                        continue;
                }
                /* Gone. Leaving on EOF it closed its cmd_r itself; killed (only root can), it
                 * left cmd_r open, and the fd it was on, closed or not: cmd_r is closed here
                 * (nobody else would), the fd is left (its number may be reused already). */
                if (si.si_code != CLD_EXITED) {
                        int unread = -1;

                        /* still in its pipe: it never read it, so it is open and ours again */
                        (void) fcntl(h->cmd_r, F_SETFL, O_NONBLOCK);
                        if (h->in_flight >= 0 && read(h->cmd_r, &unread, sizeof(unread)) == (ssize_t) sizeof(unread) &&
                            unread == h->in_flight)
                                requeue = unread;
                        close_keep_errno(h->cmd_r);
                }
                close_keep_errno(h->pidfd);
                c->helpers[i] = c->helpers[--c->n_helpers];
                if (c->current == &c->helpers[c->n_helpers])
                        c->current = &c->helpers[i];
                if (requeue >= 0) {
                        zy_fd_closer_close(c, requeue); /* no helper may hold it now: queued */
                        requeue = -1;
                }
        }
}

int zy_fd_closer_dispatch(struct zy_fd_closer *c, int64_t now) {
        struct ack acks[64];
        ssize_t n;
        int64_t next = -1;

        if (!c)
                return -1;
        while ((n = read(c->ack_r, acks, sizeof(acks))) > 0)
                for (size_t i = 0; i < (size_t) n / sizeof(acks[0]); i++)
                        for (size_t k = 0; k < c->n_helpers; k++)
                                if (c->helpers[k].serial == acks[i].helper &&
                                    c->helpers[k].in_flight == acks[i].fd) {
                                        c->helpers[k].in_flight = -1;
                                        /* a helper let go while stuck has nothing more to do */
                                        if (&c->helpers[k] != c->current)
                                                let_go(c, &c->helpers[k]);
                                }
        if (c->current && c->current->in_flight >= 0 && now >= c->current->deadline)
                let_go(c, c->current); /* stuck, or slow: it finishes that one fd alone */
        reap(c);
        if (!c->current && c->head < c->n)
                (void) helper_start(c); /* at the limit (or failing): the queue waits */
        feed(c, now);
        if (c->current && c->current->in_flight >= 0)
                next = c->current->deadline - now;
        else if (!c->current && c->head < c->n)
                next = ZY_FD_CLOSER_STUCK_MS; /* try again to start one */
        else
                for (size_t i = 0; i < c->n_helpers; i++)
                        if (c->helpers[i].cmd_w < 0) /* a zombie to reap once it has left */
                                next = ZY_FD_CLOSER_STUCK_MS;
        return next < 0 ? -1 : next > INT32_MAX ? INT32_MAX : (int) (next < 1 ? 1 : next);
}

void zy_fd_closer_free(struct zy_fd_closer *c) {
        if (!c)
                return;
        (void) zy_fd_closer_dispatch(c, zy_fd_closer_now_ms());
        /* Exiting: the rest go to the current helper in one batch, as far as its pipe takes
         * them (a stuck one among them holds up only those after it, in a helper of its own). */
        if (c->current && c->current->cmd_w >= 0)
                while (c->head < c->n &&
                       write(c->current->cmd_w, &c->queue[c->head], sizeof(int)) == (ssize_t) sizeof(int))
                        c->head++;
        while (c->head < c->n)
                close_keep_errno(c->queue[c->head++]);
        for (size_t i = 0; i < c->n_helpers; i++) {
                let_go(c, &c->helpers[i]);
                close_keep_errno(c->helpers[i].pidfd); /* reaped by whoever inherits them */
        }
        close_keep_errno(c->ack_r);
        close_keep_errno(c->ack_w);
        free(c->queue);
        free(c);
}
