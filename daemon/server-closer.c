/* SPDX-License-Identifier: MIT */
/*
 * The fds callers pass, closed off the loop: common/fd-closer.h's helpers, which share zygoted's
 * fd table, on zygoted's libev loop (their acks, and a deadline after which a helper that does
 * not answer is replaced). A close may wait on the caller (a FUSE file's FLUSH); this loop must
 * not. Without a closer they are closed here, on the loop.
 */
#include "fd-closer.h"
#include "server-closer.h"
#include "server.h"
#include "util.h"

static void closer_dispatch(struct zd_server *s) {
        int ms = zy_fd_closer_dispatch(s->closer, zy_fd_closer_now_ms());
        ev_timer_stop(s->loop, &s->closer_timer);
        if (ms >= 0) {
                ev_timer_set(&s->closer_timer, ms / 1000., 0.);
                ev_timer_start(s->loop, &s->closer_timer);
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

void zd_server_close_caller_fd(struct zd_server *s, int fd) {
        if (fd < 0)
                return;
        zy_fd_closer_close(s->closer, fd);
        /* its deadline: a helper that does not answer in time is replaced */
        if (s->closer && !ev_is_active(&s->closer_timer)) {
                ev_timer_set(&s->closer_timer, ZY_FD_CLOSER_STUCK_MS / 1000., 0.);
                ev_timer_start(s->loop, &s->closer_timer);
        }
}

int zd_server_closer_start(struct zd_server *s) {
        int r = zy_fd_closer_new(0, &s->closer);
        if (r < 0)
                return r;
        ev_io_init(&s->closer_watch, on_closer_ack, zy_fd_closer_fd(s->closer), EV_READ);
        s->closer_watch.data = s;
        ev_init(&s->closer_timer, on_closer_timer);
        s->closer_timer.data = s;
        ev_io_start(s->loop, &s->closer_watch);
        return 0;
}

void zd_server_closer_stop(struct zd_server *s) {
        if (!s->closer)
                return;
        ev_io_stop(s->loop, &s->closer_watch);
        ev_timer_stop(s->loop, &s->closer_timer);
        zy_fd_closer_free(TAKE_PTR(s->closer));
}
