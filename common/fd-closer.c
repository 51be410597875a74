/* SPDX-License-Identifier: MIT */
/* Closing a caller's fds in helper processes that share the fd table: see fd-closer.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-closer.h"
#include "pidfd-util.h"
#include "signal-util.h"

/* At most this many fds written to a helper and not yet acknowledged: one write() of them all
 * is atomic (under PIPE_BUF), and its pipe never fills. */
#define BATCH 64
/* How long a helper may make no progress in zc_fd_closer_settle() before the fds it has not
 * read are taken back: above a runnable task's wait on two busy cores (CFS: 12 ms). One that
 * has not said hello yet is still starting (a copy of a large process, slower under ASan): it
 * gets ZC_FD_CLOSER_STUCK_MS. */
#define GRACE_MS 20

enum { ACK_CLOSED, ACK_HELLO };

struct ack {
        uint32_t helper; /* the helper's serial number */
        int32_t kind;    /* ACK_CLOSED: fd closed; ACK_HELLO: up, fd is its /proc/self/syscall or -1 */
        int32_t fd;
};

enum head_state {
        HEAD_OPEN,     /* the fifo's head may still be in the table */
        HEAD_IN_CLOSE, /* seen asleep in close(head): it has left the table */
        HEAD_GIVEN_UP, /* a settle waited its whole timeout for it: not waited for again */
};

struct helper {
        uint32_t serial;
        pid_t pid;
        int pidfd;
        int cmd_w;                  /* ours; -1 once the helper is let go */
        int cmd_r;                  /* the helper's end (O_NONBLOCK), in the one table: it closes it at EOF */
        int sysfd;                  /* its /proc/self/syscall (its hello names it), ours to close; -1 none */
        int fifo[BATCH];            /* written and not acknowledged, in order: fifo[head] it holds or reads next */
        uint32_t fifo_owner[BATCH]; /* whose each one is (zc_fd_closer_close_owned()) */
        size_t fifo_head, fifo_n;
        enum head_state head_state;
        bool hello;       /* it is up */
        int64_t progress; /* when it last acknowledged, or got work while idle */
        int64_t deadline; /* progress + ZC_FD_CLOSER_STUCK_MS: past it, work left makes it stuck */
};

struct zc_fd_closer {
        uint64_t clone_flags;
        bool no_syscall_file;
        int ack_r, ack_w;
        uint32_t next_serial;
        struct helper helpers[ZC_FD_CLOSER_MAX_HELPERS];
        size_t n_helpers;
        struct helper *current; /* the one that takes new work; NULL when none */
        int *queue;             /* FIFO: queue[head..n) */
        uint32_t *owners;       /* whose each queued fd is, in step with queue */
        size_t head, n, size;
};

int64_t zc_fd_closer_now_ms(void) {
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

static void ack_write(int ack_w, const struct ack *a) {
        while (write(ack_w, a, sizeof(*a)) < 0 && errno == EINTR)
                ;
}

/* The helper: close what comes, acknowledge each after its close returns, leave at EOF. It shares
 * the table, so it must not close anything it was not given, and it leaves with _exit (no atexit
 * handlers of the parent's copy of memory). It reads one fd at a time from a non-blocking pipe:
 * whatever it has not read, the parent can take back with one read() (steal()); so it holds at
 * most one. It leaves with 0 only at EOF, having closed cmd_r; any other way out leaves cmd_r to
 * the parent, with what is unread in it. */
_Noreturn static void helper_main(int cmd_r, int ack_w, uint32_t serial, pid_t parent, bool no_syscall_file) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
        (void) prctl(PR_SET_NAME, (unsigned long) ZC_FD_CLOSER_COMM, 0UL, 0UL, 0UL);
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
        zc_signals_reset(NULL);
        (void) signal(SIGPIPE, SIG_IGN);
        /* Opened here, not by the parent: a reference's helpers sit in a pid namespace whose
         * /proc may not name them by the pid clone() returned. Non-dumpable and unprivileged, the
         * open fails (EACCES): the parent then relies on acks alone. The parent closes it. */
        int sysfd = no_syscall_file ? -1 : open("/proc/self/syscall", O_RDONLY | O_CLOEXEC);
        ack_write(ack_w, &(struct ack){ .helper = serial, .kind = ACK_HELLO, .fd = sysfd < 0 ? -1 : sysfd });
        for (;;) {
                int fd;
                ssize_t n = read(cmd_r, &fd, sizeof(fd));

                if (n == (ssize_t) sizeof(fd)) {
                        (void) close(fd);
                        ack_write(ack_w, &(struct ack){ .helper = serial, .kind = ACK_CLOSED, .fd = fd });
                        continue;
                }
                if (n == 0)
                        break;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        struct pollfd p = { .fd = cmd_r, .events = POLLIN };

                        if (poll(&p, 1, -1) >= 0 || errno == EINTR)
                                continue;
                }
                _exit(1); /* cannot wait (poll refused?): the parent takes back what is unread */
        }
        (void) close(cmd_r);
        _exit(0);
}

static int helper_start(struct zc_fd_closer *c) {
        struct helper *h;
        int p[2], pidfd = -1;
        pid_t pid, self = getpid();

        if (c->n_helpers >= ZC_FD_CLOSER_MAX_HELPERS)
                return -EMFILE;
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        pid = clone_with_pidfd(CLONE_FILES | c->clone_flags, &pidfd);
        if (pid == 0)
                helper_main(p[0], c->ack_w, c->next_serial, self, c->no_syscall_file);
        if (pid < 0) {
                close_keep_errno(p[0]);
                close_keep_errno(p[1]);
                return (int) pid;
        }
        /* Both ends non-blocking: ours, since at most BATCH ints are in the pipe, and a write
         * that does not fit must fail rather than wait; the helper's, so that steal() can take
         * back what it has not read without blocking. */
        h = &c->helpers[c->n_helpers++];
        *h = (struct helper){
                .serial = c->next_serial++, .pid = pid, .pidfd = pidfd, .cmd_w = p[1], .cmd_r = p[0], .sysfd = -1
        };
        c->current = h;
        return 0;
}

int zc_fd_closer_new(uint64_t extra_clone_flags, struct zc_fd_closer **ret) {
        struct zc_fd_closer *c;
        int p[2], r;

        if (!ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->no_syscall_file = extra_clone_flags & ZC_FD_CLOSER_NO_SYSCALL_FILE;
        c->clone_flags = extra_clone_flags & ~ZC_FD_CLOSER_NO_SYSCALL_FILE;
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

int zc_fd_closer_fd(const struct zc_fd_closer *c) {
        return c ? c->ack_r : -EBADF;
}

size_t zc_fd_closer_pending(const struct zc_fd_closer *c) {
        size_t n;

        if (!c)
                return 0;
        n = c->n - c->head;
        for (size_t i = 0; i < c->n_helpers; i++)
                n += c->helpers[i].fifo_n;
        return n;
}

pid_t zc_fd_closer_current_pid(const struct zc_fd_closer *c) {
        return c && c->current ? c->current->pid : 0;
}

size_t zc_fd_closer_helpers(const struct zc_fd_closer *c) {
        return c ? c->n_helpers : 0;
}

size_t zc_fd_closer_held(const struct zc_fd_closer *c, uint32_t owner) {
        size_t n = 0;

        if (!c)
                return 0;
        for (size_t i = 0; i < c->n_helpers; i++) {
                const struct helper *h = &c->helpers[i];

                /* its head seen in close(), given up, or past its deadline with the helper let
                 * go: a helper taken for as long as that close lasts */
                if (h->fifo_n > 0 && (h->head_state != HEAD_OPEN || h->cmd_w < 0) &&
                    (owner == ZC_FD_CLOSER_ANY_OWNER || h->fifo_owner[h->fifo_head] == owner))
                        n++;
        }
        return n;
}

static int fifo_at(const struct helper *h, size_t i) {
        return h->fifo[(h->fifo_head + i) % BATCH];
}

/* Makes room for k more in the queue; false when it cannot grow. */
static bool queue_reserve(struct zc_fd_closer *c, size_t k) {
        size_t live = c->n - c->head;

        if (c->n + k <= c->size)
                return true;
        if (c->head > 0) {
                memmove(c->queue, c->queue + c->head, live * sizeof(int));
                memmove(c->owners, c->owners + c->head, live * sizeof(uint32_t));
                c->head = 0;
                c->n = live;
        }
        if (live + k <= c->size)
                return true;
        size_t size = c->size ? c->size * 2 : 64;
        while (size < live + k)
                size *= 2;
        int *q = realloc(c->queue, size * sizeof(int));
        if (!q)
                return false;
        c->queue = q;
        uint32_t *o = realloc(c->owners, size * sizeof(uint32_t));
        if (!o)
                return false; /* the queue is larger than size says: harmless */
        c->owners = o;
        c->size = size;
        return true;
}

/* Puts fds taken back from a helper in front of the queue: they were handed over first. */
static void queue_front(struct zc_fd_closer *c, const int *fds, const uint32_t *owners, size_t k) {
        if (c->head < k) {
                size_t live = c->n - c->head;

                if (!queue_reserve(c, k)) {
                        for (size_t i = 0; i < k; i++)
                                close_keep_errno(fds[i]); /* the last resort: it may block */
                        return;
                }
                memmove(c->queue + k, c->queue + c->head, live * sizeof(int));
                memmove(c->owners + k, c->owners + c->head, live * sizeof(uint32_t));
                c->head = k;
                c->n = k + live;
        }
        c->head -= k;
        memcpy(c->queue + c->head, fds, k * sizeof(int));
        memcpy(c->owners + c->head, owners, k * sizeof(uint32_t));
}

/* Writes as much of the queue as the current helper may have outstanding, in one write(). */
static void let_go(struct zc_fd_closer *c, struct helper *h);
static bool in_close(const struct helper *h);

static void feed(struct zc_fd_closer *c, int64_t now) {
        struct helper *h = c->current;
        size_t k;

        /* One held in close() (a FLUSH nobody answers, maybe: a settle saw it, or its head is
         * older than a millisecond and it is there now) takes nothing more: what comes now goes
         * to a new helper at once, not after its deadline. */
        if (h && h->fifo_n > 0 && h->head_state == HEAD_OPEN && c->head < c->n && now - h->progress >= 1 && in_close(h))
                h->head_state = HEAD_IN_CLOSE;
        if (h && h->fifo_n > 0 && h->head_state != HEAD_OPEN && c->head < c->n) {
                let_go(c, h);
                (void) helper_start(c); /* failing (the limit): the queue waits for dispatch */
                h = c->current;
        }
        if (!h || c->head == c->n || h->fifo_n == BATCH)
                return;
        k = c->n - c->head;
        if (k > BATCH - h->fifo_n)
                k = BATCH - h->fifo_n;
        if (write(h->cmd_w, &c->queue[c->head], k * sizeof(int)) != (ssize_t) (k * sizeof(int)))
                return; /* cannot happen (at most BATCH ints in its pipe); they stay queued */
        if (h->fifo_n == 0) {
                h->head_state = HEAD_OPEN;
                h->progress = now;
                h->deadline = now + ZC_FD_CLOSER_STUCK_MS;
        }
        for (size_t i = 0; i < k; i++, c->head++, h->fifo_n++) {
                h->fifo[(h->fifo_head + h->fifo_n) % BATCH] = c->queue[c->head];
                h->fifo_owner[(h->fifo_head + h->fifo_n) % BATCH] = c->owners[c->head];
        }
        if (c->head == c->n)
                c->head = c->n = 0;
}

void zc_fd_closer_close(struct zc_fd_closer *c, int fd) {
        zc_fd_closer_close_owned(c, fd, ZC_FD_CLOSER_NO_OWNER);
}

void zc_fd_closer_close_owned(struct zc_fd_closer *c, int fd, uint32_t owner) {
        if (fd < 0)
                return;
        if (!c) {
                close_keep_errno(fd);
                return;
        }
        if (!queue_reserve(c, 1)) {
                close_keep_errno(fd); /* the last resort: it may block */
                return;
        }
        c->owners[c->n] = owner;
        c->queue[c->n++] = fd;
        feed(c, zc_fd_closer_now_ms());
}

/* Takes back, with one read(), every fd in h's pipe that it has not read: the tail of its fifo.
 * Only while nothing else can close cmd_r: h not let go yet (it closes cmd_r only at EOF), or
 * dead without having seen EOF. A single read of the whole pipe is atomic against the helper's
 * reads, so each fd is either in its hands or back in ours, never both. */
static void steal(struct zc_fd_closer *c, struct helper *h) {
        int fds[BATCH];
        uint32_t owners[BATCH];
        ssize_t n;
        size_t k;

        if (h->fifo_n == 0)
                return;
        n = read(h->cmd_r, fds, sizeof(fds));
        if (n <= 0 || n % sizeof(int) != 0)
                return;
        k = (size_t) n / sizeof(int);
        if (k > h->fifo_n)
                return; /* cannot happen; better leave them open than close one twice */
        for (size_t i = 0; i < k; i++) {
                if (fds[i] != fifo_at(h, h->fifo_n - k + i))
                        return; /* cannot happen either */
                owners[i] = h->fifo_owner[(h->fifo_head + h->fifo_n - k + i) % BATCH];
        }
        h->fifo_n -= k;
        queue_front(c, fds, owners, k);
}

/* Lets h go: what it has not read comes back to the queue, then EOF on its pipe once it is done
 * with what it holds. Its slot stays until it is reaped. */
static void let_go(struct zc_fd_closer *c, struct helper *h) {
        if (h->cmd_w >= 0) {
                steal(c, h); /* before the close: after it the helper may close cmd_r at EOF */
                close_keep_errno(h->cmd_w);
                h->cmd_w = -1;
        }
        if (c->current == h)
                c->current = NULL;
}

static struct helper *helper_of(struct zc_fd_closer *c, uint32_t serial) {
        for (size_t i = 0; i < c->n_helpers; i++)
                if (c->helpers[i].serial == serial)
                        return &c->helpers[i];
        return NULL;
}

static void read_acks(struct zc_fd_closer *c, int64_t now) {
        struct ack acks[64];
        ssize_t n;

        while ((n = read(c->ack_r, acks, sizeof(acks))) > 0)
                for (size_t i = 0; i < (size_t) n / sizeof(acks[0]); i++) {
                        struct helper *h = helper_of(c, acks[i].helper);

                        if (acks[i].kind == ACK_HELLO) {
                                if (h && !h->hello) {
                                        h->hello = true;
                                        h->sysfd = acks[i].fd;
                                        h->progress = now; /* none was possible before */
                                } else
                                        close_keep_errno(acks[i].fd); /* its, and nobody closed it */
                                continue;
                        }
                        if (!h || h->fifo_n == 0 || fifo_at(h, 0) != acks[i].fd)
                                continue;
                        h->fifo_head = (h->fifo_head + 1) % BATCH;
                        h->fifo_n--;
                        h->head_state = HEAD_OPEN;
                        h->progress = now;
                        h->deadline = now + ZC_FD_CLOSER_STUCK_MS;
                        /* a helper let go while stuck has nothing more to do */
                        if (h->fifo_n == 0 && h != c->current)
                                let_go(c, h);
                }
}

static void reap(struct zc_fd_closer *c, int64_t now) {
        for (size_t i = 0; i < c->n_helpers;) {
                struct helper *h = &c->helpers[i];
                siginfo_t si = { 0 };

                if (pidfd_wait(h->pidfd, WEXITED | WNOHANG, &si) < 0 || si.si_pid == 0) {
                        i++;
                        continue;
                }
                /* Gone: what it wrote is in the ack pipe already (its hello among it). */
                read_acks(c, now);
                h = &c->helpers[i];
                /* Leaving on EOF (0) it closed its cmd_r itself. Any other way (killed, which only
                 * root can do, or no poll()) before it was let go, cmd_r is still open: what is
                 * unread there was never read, so it is ours again; the fd it held is left (closed
                 * or not, its number may be reused already). Killed after it was let go, cmd_r may
                 * have been closed at EOF: left alone, never closed twice. */
                if (h->cmd_w >= 0) {
                        steal(c, h);
                        close_keep_errno(h->cmd_w);
                        h->cmd_w = -1;
                        if (!(si.si_code == CLD_EXITED && si.si_status == 0))
                                close_keep_errno(h->cmd_r);
                }
                close_keep_errno(h->sysfd);
                close_keep_errno(h->pidfd);
                if (c->current == h)
                        c->current = NULL;
                c->helpers[i] = c->helpers[--c->n_helpers];
                if (c->current == &c->helpers[c->n_helpers])
                        c->current = &c->helpers[i];
        }
}

int zc_fd_closer_dispatch(struct zc_fd_closer *c, int64_t now) {
        int64_t next = -1;

        if (!c)
                return -1;
        read_acks(c, now);
        if (c->current && c->current->fifo_n > 0 && now >= c->current->deadline)
                let_go(c, c->current); /* stuck, or slow: it finishes the one it holds alone */
        reap(c, now);
        if (!c->current && c->head < c->n)
                (void) helper_start(c); /* at the limit (or failing): the queue waits */
        feed(c, now);
        if (c->current && c->current->fifo_n > 0)
                next = c->current->deadline - now;
        else if (!c->current && c->head < c->n)
                next = ZC_FD_CLOSER_STUCK_MS; /* try again to start one */
        else
                for (size_t i = 0; i < c->n_helpers; i++)
                        if (c->helpers[i].cmd_w < 0) /* a zombie to reap once it has left */
                                next = ZC_FD_CLOSER_STUCK_MS;
        return next < 0 ? -1 : next > INT32_MAX ? INT32_MAX : (int) (next < 1 ? 1 : next);
}

/* Whether h is asleep inside close() of its fifo's head, as its /proc/self/syscall tells ("NR
 * ARG0 ...", or "running"): the kernel takes the fd out of the table before it flushes, and
 * the file reads a syscall only of a task that is not running. pread() at 0 makes it anew. */
static bool in_close(const struct helper *h) {
        char buf[160], *end;
        ssize_t n;
        long nr;
        unsigned long long arg0;

        if (h->sysfd < 0 || h->fifo_n == 0)
                return false;
        n = pread(h->sysfd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        errno = 0;
        nr = strtol(buf, &end, 10);
        if (end == buf || *end != ' ' || nr != SYS_close)
                return false;
        arg0 = strtoull(end + 1, &end, 16);
        return errno == 0 && *end == ' ' && arg0 == (unsigned long long) (unsigned) fifo_at(h, 0);
}

/* fds still in the table as far as we know: queued, or in a helper's fifo and not known out. */
static bool unsettled(const struct zc_fd_closer *c) {
        if (c->head < c->n)
                return true;
        for (size_t i = 0; i < c->n_helpers; i++) {
                const struct helper *h = &c->helpers[i];

                if (h->fifo_n > (h->head_state == HEAD_OPEN ? 0 : 1))
                        return true;
        }
        return false;
}

int zc_fd_closer_settle(struct zc_fd_closer *c, int timeout_ms) {
        int64_t now, end;

        if (!c || !unsettled(c))
                return 0;
        now = zc_fd_closer_now_ms();
        end = now + (timeout_ms > 0 ? timeout_ms : 0);
        for (;;) {
                read_acks(c, now);
                reap(c, now);
                if (!c->current && c->head < c->n && helper_start(c) < 0)
                        return -EMFILE; /* at the limit (or clone failing): the queue waits */
                feed(c, now);
                for (size_t i = 0; i < c->n_helpers; i++) {
                        struct helper *h = &c->helpers[i];

                        if (h->fifo_n == 0)
                                continue;
                        if (h->head_state == HEAD_OPEN && in_close(h))
                                h->head_state = HEAD_IN_CLOSE;
                        if (h->head_state != HEAD_OPEN) {
                                /* held there, maybe for long (still the current one, it was
                                 * given more since): the rest go to a new helper */
                                if (h->fifo_n > 1)
                                        let_go(c, h);
                        } else if (h->cmd_w >= 0 && now - h->progress >= (h->hello ? GRACE_MS : ZC_FD_CLOSER_STUCK_MS))
                                let_go(c, h); /* stalled: what it has not read comes back */
                }
                if (!unsettled(c))
                        return 0;
                if (c->head < c->n && !c->current)
                        continue; /* taken back: to a new helper at once */
                if (now >= end)
                        break;
                struct pollfd p = { .fd = c->ack_r, .events = POLLIN };
                (void) poll(&p, 1, 1); /* an ack, or 1 ms: a helper entering close() acks nothing */
                now = zc_fd_closer_now_ms();
        }
        /* What helpers hold and were never seen in close(): not waited for again, so that a
         * stopped helper costs one timeout, not one per fork. What they have not read comes back
         * to the queue (for a new helper, at the next call). */
        for (size_t i = 0; i < c->n_helpers; i++) {
                struct helper *h = &c->helpers[i];

                if (h->fifo_n > 0 && h->head_state == HEAD_OPEN) {
                        h->head_state = HEAD_GIVEN_UP;
                        let_go(c, h);
                }
        }
        return -ETIMEDOUT;
}

void zc_fd_closer_free(struct zc_fd_closer *c) {
        if (!c)
                return;
        (void) zc_fd_closer_dispatch(c, zc_fd_closer_now_ms());
        /* Exiting: the rest go to the current helper in one batch, as far as its pipe takes
         * them (a stuck one among them holds up only those after it, in a helper of its own). */
        if (c->current && c->current->cmd_w >= 0)
                while (c->head < c->n &&
                       write(c->current->cmd_w, &c->queue[c->head], sizeof(int)) == (ssize_t) sizeof(int))
                        c->head++;
        while (c->head < c->n)
                close_keep_errno(c->queue[c->head++]);
        for (size_t i = 0; i < c->n_helpers; i++) {
                struct helper *h = &c->helpers[i];

                if (h->cmd_w >= 0) { /* not let_go(): nothing comes back now */
                        close_keep_errno(h->cmd_w);
                        h->cmd_w = -1;
                }
                close_keep_errno(h->sysfd); /* the helper never touches it after its hello */
                close_keep_errno(h->pidfd); /* reaped by whoever inherits them */
        }
        close_keep_errno(c->ack_r);
        close_keep_errno(c->ack_w);
        free(c->queue);
        free(c->owners);
        free(c);
}
