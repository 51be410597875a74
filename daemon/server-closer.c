/* SPDX-License-Identifier: MIT */
/*
 * The fds callers pass, closed off the loop: common/fd-closer.h's helpers, which share zygoted's
 * fd table, on zygoted's libev loop (their acks, and a deadline after which a helper that does
 * not answer is replaced). A close may wait on the caller (a FUSE file's FLUSH); this loop must
 * not. Without helpers they are closed here, on the loop.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-closer.h"
#include "pidfd-util.h"
#include "zygote-protocol.h"
#include "server-closer.h"
#include "util.h"

#define SINK_COMM "zygote-sink"

/* The helpers' next deadline, ms from now. */
static void closer_arm(struct zd_closer *c, int ms) {
        ev_timer_set(&c->timer, ms / 1000., 0.);
        ev_timer_start(c->loop, &c->timer);
}

static void closer_dispatch(struct zd_closer *c) {
        int ms = zc_fd_closer_dispatch(c->helpers, zc_fd_closer_now_ms());
        ev_timer_stop(c->loop, &c->timer);
        if (ms >= 0)
                closer_arm(c, ms);
}

static void on_closer_ack(struct ev_loop *loop, ev_io *w, int revents) {
        (void) loop;
        (void) revents;
        closer_dispatch(w->data);
}

static void on_closer_timer(struct ev_loop *loop, ev_timer *w, int revents) {
        (void) loop;
        (void) revents;
        closer_dispatch(w->data);
}

void zd_closer_close(struct zd_closer *c, int fd, uid_t uid) {
        if (fd < 0)
                return;
        zc_fd_closer_close_owned(c->helpers, fd, (uint32_t) uid);
        /* its deadline: a helper that does not answer in time is replaced */
        if (c->helpers && !ev_is_active(&c->timer))
                closer_arm(c, ZC_FD_CLOSER_STUCK_MS);
}

bool zd_closer_may_take(const struct zd_closer *c, uid_t uid) {
        if (!c->helpers || uid == 0)
                return true;
        if (zc_fd_closer_held(c->helpers, (uint32_t) uid) >= ZD_CLOSER_HELD_PER_UID)
                return false;
        /* one message's fds may each need a helper of its own (each held in its close) */
        return zc_fd_closer_helpers(c->helpers) + ZY_FDS_MAX < ZC_FD_CLOSER_MAX_HELPERS;
}

/* The fork gate's settle stage (fork-gate.h). */
static int closer_settle(void *userdata) {
        struct zd_closer *c = userdata;
        int r;

        if (!c->helpers)
                return 0;
        r = zc_fd_closer_settle(c->helpers, ZC_FD_CLOSER_STUCK_MS);
        closer_dispatch(c); /* the deadline of what it handed to a new helper */
        return r;
}

/* ---- the sink ------------------------------------------------------------------------------
 *
 * A connection socket whose receive queue still holds bytes may hold a caller's fds there too
 * (sent after the message the daemon acted on, or refused unread): the socket's last close
 * releases them, and the last release of a TCP socket with SO_LINGER and unsent data waits for
 * up to its linger time. The helpers share our fd table, so one stuck there is a helper held;
 * the sink shares nothing: it gets the socket over its own socket (SCM_RIGHTS, one per
 * message), and our close of our copy is then not the last. It closes them one after the other:
 * a stuck one delays only the sockets behind it, which wait in its socket or in our queue. It is
 * forked once, when the daemon starts listening, before any caller's fd is in the table; it is
 * not restarted (that fork would need the fork gate, whose settle stage is the closer's own):
 * without it, the helpers close such sockets. */

/* Each socket comes in two messages: the socket, then (once our copy is closed) a commit. The
 * sink closes a socket only at its commit: closed before ours, our close would be the last. */
static _noreturn_ void sink_run(int fd) {
        int held = -EBADF;

        for (;;) {
                union {
                        struct cmsghdr align;
                        char buf[CMSG_SPACE(sizeof(int) * ZD_SCM_MAX_FD)];
                } control;
                char byte = 0;
                struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
                struct msghdr mh = { .msg_iov = &iov,
                                     .msg_iovlen = 1,
                                     .msg_control = control.buf,
                                     .msg_controllen = sizeof(control.buf) };
                ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        _exit(0); /* the daemon is gone or let us go: what we hold goes with us */
                if (byte == 'c')
                        held = safe_close(held);
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
                                continue;
                        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int x;
                                memcpy(&x, (int *) CMSG_DATA(cm) + i, sizeof(int));
                                /* one at a time: a second before its commit is not the daemon's way */
                                safe_close(held);
                                held = x;
                        }
                }
        }
}

static int sink_start(struct zd_closer *c) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        pid_t parent = getpid(), pid;
        int pidfd = -EBADF;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
                return negative_errno();
        pid = clone_with_pidfd(0, &pidfd);
        if (pid < 0)
                return (int) pid;
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
                (void) prctl(PR_SET_NAME, (unsigned long) SINK_COMM, 0UL, 0UL, 0UL);
                if (getppid() != parent)
                        _exit(0);
                /* our end only: it holds nothing else of the daemon's */
                if (dup3(sv[1], 3, O_CLOEXEC) < 0 && sv[1] != 3)
                        _exit(1);
                (void) close_range(4, ~0U, 0);
                int fl = fcntl(3, F_GETFL);
                (void) fcntl(3, F_SETFL, fl & ~O_NONBLOCK);
                sink_run(3);
        }
        c->sink_fd = TAKE_FD(sv[0]);
        c->sink_pidfd = pidfd;
        c->sink_alive = true;
        return 0;
}

/* The sink is gone, or no longer takes what it is sent: it is killed (never waited for here: it
 * may be inside a close that waits), reaped when its pidfd says it exited, and no longer used. */
static void sink_lost(struct zd_closer *c, int error) {
        ev_io_stop(c->loop, &c->sink_watch);
        c->sink_fd = safe_close(c->sink_fd);
        if (c->sink_pidfd >= 0)
                (void) pidfd_kill(c->sink_pidfd, SIGKILL);
        c->sink_alive = false;
        c->sink_error = error;
        /* what waited for it goes to the helpers */
        for (size_t i = 0; i < c->n_sink_queue; i++)
                zc_fd_closer_close_owned(c->helpers, c->sink_queue[i], ZC_FD_CLOSER_NO_OWNER);
        c->n_sink_queue = 0;
}

/* One message to the sink: fd (or -EBADF) with the byte kind. 0, -EAGAIN when its socket is full,
 * or why it failed. */
static int sink_message(struct zd_closer *c, char kind, int fd) {
        struct iovec iov = { .iov_base = &kind, .iov_len = 1 };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (fd >= 0) {
                mh.msg_control = control.buf;
                mh.msg_controllen = sizeof(control.buf);
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        }
        if (sendmsg(c->sink_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? -EAGAIN : negative_errno();
        return 0;
}

static void sink_flush(struct zd_closer *c) {
        size_t i = 0;
        int r = 0;

        /* the commit of the last one first: the sink holds it until then */
        if (c->sink_commit_owed && (r = sink_message(c, 'c', -EBADF)) == 0)
                c->sink_commit_owed = false;
        while (r == 0 && i < c->n_sink_queue) {
                r = sink_message(c, 's', c->sink_queue[i]);
                if (r < 0)
                        break;
                /* the sink holds it and waits for the commit: this close is not the last */
                (void) close(c->sink_queue[i++]);
                r = sink_message(c, 'c', -EBADF);
                c->sink_commit_owed = r < 0;
        }
        memmove(c->sink_queue, c->sink_queue + i, (c->n_sink_queue - i) * sizeof(int));
        c->n_sink_queue -= i;
        if (r < 0 && r != -EAGAIN) {
                sink_lost(c, r);
                return;
        }
        if (c->n_sink_queue > 0 || c->sink_commit_owed)
                ev_io_start(c->loop, &c->sink_watch);
        else
                ev_io_stop(c->loop, &c->sink_watch);
}

static void on_sink_writable(struct ev_loop *loop, ev_io *w, int revents) {
        (void) loop;
        (void) revents;
        sink_flush(w->data);
}

static void on_sink_exit(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_closer *c = w->data;
        siginfo_t si = {};

        (void) revents;
        if (pidfd_wait(c->sink_pidfd, WEXITED | WNOHANG, &si) < 0 || si.si_pid == 0)
                return;
        ev_io_stop(loop, w);
        c->sink_pidfd = safe_close(c->sink_pidfd);
        if (c->sink_alive)
                sink_lost(c, -ECHILD);
}

void zd_closer_sink(struct zd_closer *c, int fd, uid_t uid) {
        if (fd < 0)
                return;
        if (c->sink_alive && c->n_sink_queue < ZD_SINK_QUEUE_MAX) {
                if (!c->sink_queue)
                        c->sink_queue = calloc(ZD_SINK_QUEUE_MAX, sizeof(int));
                if (c->sink_queue) {
                        c->sink_queue[c->n_sink_queue++] = fd;
                        sink_flush(c);
                        return;
                }
        }
        zd_closer_close(c, fd, uid);
}

int zd_closer_start(struct zd_closer *c, struct ev_loop *loop) {
        int r;

        c->loop = loop;
        c->sink_fd = c->sink_pidfd = -EBADF;
        /* Before the helpers: the sink's fork copies nothing of theirs. Without it, the
         * helpers close such sockets too. */
        if (!c->sink_alive && sink_start(c) >= 0) {
                ev_io_init(&c->sink_watch, on_sink_writable, c->sink_fd, EV_WRITE);
                c->sink_watch.data = c;
                ev_io_init(&c->sink_exit, on_sink_exit, c->sink_pidfd, EV_READ);
                c->sink_exit.data = c;
                ev_io_start(loop, &c->sink_exit);
        }
        r = zc_fd_closer_new(0, &c->helpers);
        if (r < 0)
                return r;
        ev_io_init(&c->watch, on_closer_ack, zc_fd_closer_fd(c->helpers), EV_READ);
        c->watch.data = c;
        ev_init(&c->timer, on_closer_timer);
        c->timer.data = c;
        ev_io_start(loop, &c->watch);
        c->fork_holder =
                (struct zd_fork_holder){ .stage = ZD_FORK_SETTLE, .close_before_fork = closer_settle, .userdata = c };
        zd_fork_gate_register(&c->fork_holder);
        return 0;
}

void zd_closer_stop(struct zd_closer *c) {
        if (c->loop) {
                /* what still waits goes to the helpers (or is closed here without them); the
                 * sink leaves at EOF, after what it holds, or with us (PR_SET_PDEATHSIG) */
                for (size_t i = 0; i < c->n_sink_queue; i++)
                        zc_fd_closer_close_owned(c->helpers, c->sink_queue[i], ZC_FD_CLOSER_NO_OWNER);
                c->n_sink_queue = 0;
                ev_io_stop(c->loop, &c->sink_watch);
                ev_io_stop(c->loop, &c->sink_exit);
                c->sink_fd = safe_close(c->sink_fd);
                c->sink_pidfd = safe_close(c->sink_pidfd);
                c->sink_alive = false;
        }
        free(c->sink_queue);
        c->sink_queue = NULL;
        if (!c->helpers)
                return;
        zd_fork_gate_unregister(&c->fork_holder);
        ev_io_stop(c->loop, &c->watch);
        ev_timer_stop(c->loop, &c->timer);
        zc_fd_closer_free(TAKE_PTR(c->helpers));
}
