/* SPDX-License-Identifier: MIT */
/*
 * The fds callers pass, closed off the loop: common/fd-closer.h's helpers, which share zygoted's
 * fd table, on zygoted's libev loop (their acks, and a deadline after which a helper that does
 * not answer is replaced). A close may wait on the caller (a FUSE file's FLUSH); this loop must
 * not. Without helpers they are closed here, on the loop.
 */
#include "fd-closer.h"
#include "zygote-protocol.h"
#include "server-closer.h"
#include "util.h"

static void closer_dispatch(struct zd_closer *c) {
        int ms = zy_fd_closer_dispatch(c->helpers, zy_fd_closer_now_ms());
        ev_timer_stop(c->loop, &c->timer);
        if (ms >= 0) {
                ev_timer_set(&c->timer, ms / 1000., 0.);
                ev_timer_start(c->loop, &c->timer);
        }
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
        zy_fd_closer_close_owned(c->helpers, fd, (uint32_t) uid);
        /* its deadline: a helper that does not answer in time is replaced */
        if (c->helpers && !ev_is_active(&c->timer)) {
                ev_timer_set(&c->timer, ZY_FD_CLOSER_STUCK_MS / 1000., 0.);
                ev_timer_start(c->loop, &c->timer);
        }
}

bool zd_closer_may_take(const struct zd_closer *c, uid_t uid) {
        if (!c->helpers || uid == 0)
                return true;
        if (zy_fd_closer_held(c->helpers, (uint32_t) uid) >= ZD_CLOSER_HELD_PER_UID)
                return false;
        /* one message's fds may each need a helper of its own (each held in its close) */
        return zy_fd_closer_helpers(c->helpers) + ZY_FDS_MAX < ZY_FD_CLOSER_MAX_HELPERS;
}

int zd_closer_settle(struct zd_closer *c) {
        int r;

        if (!c->helpers)
                return 0;
        r = zy_fd_closer_settle(c->helpers, ZY_FD_CLOSER_STUCK_MS);
        closer_dispatch(c); /* the deadline of what it handed to a new helper */
        return r;
}

int zd_closer_start(struct zd_closer *c, struct ev_loop *loop) {
        int r = zy_fd_closer_new(0, &c->helpers);
        if (r < 0)
                return r;
        c->loop = loop;
        ev_io_init(&c->watch, on_closer_ack, zy_fd_closer_fd(c->helpers), EV_READ);
        c->watch.data = c;
        ev_init(&c->timer, on_closer_timer);
        c->timer.data = c;
        ev_io_start(loop, &c->watch);
        return 0;
}

void zd_closer_stop(struct zd_closer *c) {
        if (!c->helpers)
                return;
        ev_io_stop(c->loop, &c->watch);
        ev_timer_stop(c->loop, &c->timer);
        zy_fd_closer_free(TAKE_PTR(c->helpers));
}
