/* SPDX-License-Identifier: MIT */
/* The fds callers pass, closed by helpers on the daemon's loop; see server-closer.c. The
 * transport (server.h) holds one, and every module closes a caller's fd through
 * zd_server_close_caller_fd(). */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <sys/types.h>

struct zy_fd_closer;

struct zd_closer {
        struct ev_loop *loop;
        struct zy_fd_closer *helpers; /* common/fd-closer.h; NULL: the fds are closed here */
        bool disabled;                /* set before start: close here (ZYGOTE_DISABLE_FEATURES=fd_closer) */
        int error;                    /* why there are no helpers: a negative errno, or 0 */
        ev_io watch;                  /* the helpers' acks */
        ev_timer timer;               /* the deadline of the oldest fd handed over */
};

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
/* Before a fork: waits (a bounded time) until no fd handed over is still in the fd table
 * (closed, or its helper is inside close() for it): common/fd-closer.h. 0, or why it could not. */
int zd_closer_settle(struct zd_closer *c);
/* Stops watching them and lets them go once their work is done; nothing without helpers. */
void zd_closer_stop(struct zd_closer *c);
