/* SPDX-License-Identifier: MIT */
/* The fds callers pass, closed by helpers on the daemon's loop; see server-closer.c. The
 * transport (server.h) holds one, and every module closes a caller's fd through
 * zd_server_close_caller_fd(). */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <sys/types.h>

#include "fork-gate.h"

struct zc_fd_closer;

struct zd_closer {
        struct ev_loop *loop;
        struct zc_fd_closer *helpers; /* common/fd-closer.h; NULL: the fds are closed here */
        bool disabled;                /* set before start: close here (ZYGOTE_DISABLE_FEATURES=fd_closer) */
        int error;                    /* why there are no helpers: a negative errno, or 0 */
        ev_io watch;                  /* the helpers' acks */
        ev_timer timer;               /* the deadline of the oldest fd handed over */
        /* With helpers, before a fork (fork-gate.h, the settle stage): waits (a bounded time)
         * until no fd handed over is still in the fd table (closed, or its helper is inside
         * close() for it): common/fd-closer.h. */
        struct zd_fork_holder fork_holder;
        /* The sink: one process, not sharing the fd table, that closes the connection sockets
         * whose receive queue still holds a caller's unread data (and with it, maybe, fds the
         * daemon never took). See server-closer.c. */
        bool sink_alive;       /* sink_fd and sink_pidfd hold only while it is */
        int sink_fd;           /* our end of its socket */
        int sink_error;        /* why it went: a negative errno, or 0 */
        bool sink_commit_owed; /* the last socket sent is ours closed, the sink not told yet */
        int sink_pidfd;
        ev_io sink_watch; /* its socket writable again, or the sink gone */
        ev_io sink_exit;
        int *sink_queue; /* sockets waiting while the sink's socket is full */
        size_t n_sink_queue;
};

/* The most fds one message can carry on a Unix socket (the kernel's SCM_MAX_FD): every read
 * leaves room for that many, so that the kernel never drops an fd in the daemon's thread. */
#define ZD_SCM_MAX_FD 253
/* Connection sockets that may wait for the sink; past that they go to the helpers. */
#define ZD_SINK_QUEUE_MAX 1024

/* Starts the helpers and watches them on loop. A negative errno when none can start. */
int zd_closer_start(struct zd_closer *c, struct ev_loop *loop);
/* Closes fd (-EBADF: nothing), a caller of uid's, through the helpers when there are any,
 * never waiting for it. */
void zd_closer_close(struct zd_closer *c, int fd, uid_t uid);
/* Whether a caller of uid may pass fds now: not while its fds hold up ZD_CLOSER_HELD_PER_UID
 * helpers (a non-root uid), nor while fewer than one message's worth of helpers are left for
 * anyone but root. Fds refused are dropped by the kernel unread, with no close (no FLUSH). */
#define ZD_CLOSER_HELD_PER_UID 8
bool zd_closer_may_take(const struct zd_closer *c, uid_t uid);
/* Closes one of the daemon's own connection sockets whose receive queue is not empty: the
 * kernel then releases what is queued there, a caller's fds among it, and the last close of one
 * of them may wait (a TCP socket lingering on unsent data). That happens in the sink, or, with
 * no sink, in a helper as a caller fd of uid. Never waits. */
void zd_closer_sink(struct zd_closer *c, int fd, uid_t uid);
/* Stops watching them and lets them go once their work is done; nothing without helpers. */
void zd_closer_stop(struct zd_closer *c);
