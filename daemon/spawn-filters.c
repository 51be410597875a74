/* SPDX-License-Identifier: MIT */
/*
 * Spawns waiting for their callers' own seccomp filters. Reading them (caller-filter.c) takes a
 * child that stops every thread of the caller, and a thread that cannot stop (a vfork parent
 * whose child blocks) makes it last its whole ZD_CALLER_FILTER_TIMEOUT_MS: were the loop to wait
 * for it, each such Spawn would hold every other caller. So the spawn waits here as the inherit
 * tier's wait for their reference (spawn-park.c): it owns its call's parameters and fds, the
 * child's pidfd (readable once it ended) and a timer are watched by the loop, and either one
 * resumes the spawn's steps (spawn.c) or refuses it.
 *
 * Fairness: one read runs per owner (zd_conn_account(): a user's subordinate uids are that user)
 * and ZD_FILTER_READS_MAX in all; the others wait, in the order they came, and a read's end
 * starts the next. A waiting spawn's connection is busy (no second call is read from it), so each
 * owner has at most as many waiting as it has connections. The fds a waiting spawn holds wait in
 * a socket's queue, out of the fd table (fds_stash()), and the reading child shares zygoted's fd
 * table rather than copying it: neither holds another caller's files across a fork.
 */
#include <errno.h>
#include <stddef.h>
#include <ev.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>

#include "caller-filter.h"
#include "daemon.h"
#include "log.h"
#include "server.h"
#include "spawn-filters.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "util.h"

struct zd_filter_wait {
        struct zd_filter_wait *next; /* zd_daemon.filter_waits, oldest first */
        struct zd_daemon *d;
        struct zd_call call; /* conn NULL once the caller is gone */
        int *fds;            /* the call's fds; while stashed, the numbers they had */
        int stash;           /* the socket holding them meanwhile, or -EBADF */
        size_t n_stashed;
        uid_t owner; /* the caller's account */
        uid_t uid;   /* the connection's uid, for task ids */
        struct spawn *s;
        zd_spawn_resume_t resume;
        struct spawn *resumed; /* for run_resume(), with the read's answer */
        int result;
        bool running;
        struct zd_filter_read rd;
        ev_io exit_watch;
        ev_timer deadline;
};

static void wait_free(struct zd_filter_wait *w) {
        if (w->s)
                zd_spawn_free(w->s);
        for (size_t i = 0; i < w->call.n_fds; i++)
                zd_server_close_caller_fd(&w->d->server, w->fds[i], w->owner);
        safe_close(w->stash); /* fds still in it go with it: a socket's close waits on nothing */
        free(w->fds);
        json_object_put(w->call.params);
        json_object_put(w->call.error_params);
        free(w);
}

/* The call's fds leave zygoted's fd table while the spawn waits, into a socket's queue (fds in
 * flight are in no table): a fork meanwhile (another spawn's worker) copies the socket, whose
 * close is nothing, rather than a caller's file, whose close may wait on that caller (a FUSE
 * file's FLUSH: fork-gate.c). Our copies go to the closer, which the fork gate waits for. */
static int fds_stash(struct zd_filter_wait *w) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * ZE_MAX_FDS)];
        } u = {};
        struct msghdr mh = { .msg_iov = &(struct iovec){ .iov_base = "f", .iov_len = 1 }, .msg_iovlen = 1 };
        int sv[2];

        if (w->call.n_fds == 0)
                return 0;
        if (w->call.n_fds > ZE_MAX_FDS)
                return -E2BIG;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        mh.msg_control = u.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * w->call.n_fds);
        CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
        CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
        CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * w->call.n_fds);
        memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), w->fds, sizeof(int) * w->call.n_fds);
        if (sendmsg(sv[0], &mh, MSG_NOSIGNAL) != 1) {
                int r = -errno;
                safe_close(sv[0]);
                safe_close(sv[1]);
                return r < 0 ? r : -EIO;
        }
        safe_close(sv[0]);
        w->stash = sv[1];
        for (size_t i = 0; i < w->call.n_fds; i++)
                zd_server_close_caller_fd(&w->d->server, w->fds[i], w->owner);
        w->n_stashed = w->call.n_fds;
        w->call.n_fds = 0;
        return 0;
}

/* The fds back in the table, where the spawn's fd map expects them (by their new numbers). */
static int fds_unstash(struct zd_filter_wait *w) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * ZE_MAX_FDS)];
        } u;
        char c;
        struct msghdr mh = { .msg_iov = &(struct iovec){ .iov_base = &c, .iov_len = 1 },
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *h;
        int fds[ZE_MAX_FDS];
        size_t n;

        if (w->stash < 0)
                return 0;
        if (recvmsg(w->stash, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1)
                return -EIO;
        w->stash = safe_close(w->stash);
        h = CMSG_FIRSTHDR(&mh);
        if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len < CMSG_LEN(0))
                return -EIO;
        n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        memcpy(fds, CMSG_DATA(h), n * sizeof(int));
        if (n != w->n_stashed || (mh.msg_flags & MSG_CTRUNC)) {
                for (size_t i = 0; i < n; i++)
                        zd_server_close_caller_fd(&w->d->server, fds[i], w->owner);
                return -EIO;
        }
        for (size_t i = 0; i < w->s->n_map; i++)
                for (size_t k = 0; k < n; k++)
                        if (w->s->map[i].src == w->fds[k]) {
                                w->s->map[i].src = fds[k];
                                break;
                        }
        memcpy(w->fds, fds, n * sizeof(int));
        w->call.n_fds = n;
        return 0;
}

static void wait_remove(struct zd_daemon *d, struct zd_filter_wait *w) {
        for (struct zd_filter_wait **q = &d->filter_waits; *q; q = &(*q)->next)
                if (*q == w) {
                        *q = w->next;
                        w->next = NULL;
                        break;
                }
}

static void on_read_end(struct ev_loop *loop, ev_io *io, int revents);
static void on_read_deadline(struct ev_loop *loop, ev_timer *t, int revents);
static void pump(struct zd_daemon *d);

#define WAIT_OF(ptr, member) ((struct zd_filter_wait *) ((char *) (ptr) -offsetof(struct zd_filter_wait, member)))

static void run_resume(void *userdata) {
        struct zd_filter_wait *w = userdata;

        w->resume(w->resumed, w->result);
}

/* The read's end (its child ended, or its time is up): the spawn resumes with the answer, or
 * leaves with its caller; then the next waiting read starts. */
static void read_end(struct zd_filter_wait *w) {
        struct zd_daemon *d = w->d;
        struct spawn *s = w->s;
        int r;

        ev_io_stop(d->loop, &w->exit_watch);
        ev_timer_stop(d->loop, &w->deadline);
        wait_remove(d, w);
        r = zd_caller_filters_finish(&w->rd, s->caller.pidfd, &s->caller_filters);
        if (w->call.conn && r >= 0)
                r = fds_unstash(w);
        if (w->call.conn) {
                w->s = NULL; /* resume() finishes it, or parks it (its call copied) */
                w->resumed = s;
                w->result = r;
                zd_conn_run_charged(w->call.conn, run_resume, w);
        }
        wait_free(w);
        pump(d);
}

static void on_read_end(struct ev_loop *loop, ev_io *io, int revents) {
        (void) loop;
        (void) revents;
        read_end(WAIT_OF(io, exit_watch));
}

/* Its time is up: the child is killed, and its end (its pidfd readable: soon, but it needs a
 * CPU to exit on a loaded machine, which the loop does not wait for) refuses the spawn. */
static void on_read_deadline(struct ev_loop *loop, ev_timer *t, int revents) {
        (void) loop;
        (void) revents;
        zd_caller_filters_stop(&WAIT_OF(t, deadline)->rd);
}

/* Whether an owner has a read running, and how many run. */
static bool owner_reading(struct zd_daemon *d, uid_t owner, unsigned *ret_running) {
        bool reading = false;
        unsigned n = 0;

        for (struct zd_filter_wait *w = d->filter_waits; w; w = w->next)
                if (w->running) {
                        n++;
                        reading = reading || w->owner == owner;
                }
        *ret_running = n;
        return reading;
}

/* The oldest waiting spawns whose owners have no read running start theirs, up to
 * ZD_FILTER_READS_MAX. One that cannot start is refused now. */
static void pump(struct zd_daemon *d) {
        for (struct zd_filter_wait *w = d->filter_waits, *next; w; w = next) {
                unsigned running;
                int r;

                next = w->next;
                if (w->running || owner_reading(d, w->owner, &running))
                        continue;
                if (running >= ZD_FILTER_READS_MAX)
                        return;
                r = zd_caller_filters_start(w->s->caller.pid, &w->rd);
                if (r < 0) {
                        /* as its end: the spawn resumes with the error (refused), or goes */
                        wait_remove(d, w);
                        if (w->call.conn) {
                                w->resumed = TAKE_PTR(w->s);
                                w->result = r;
                                zd_conn_run_charged(w->call.conn, run_resume, w);
                        }
                        wait_free(w);
                        next = d->filter_waits; /* the list may have changed: from its head */
                        continue;
                }
                w->running = true;
                ev_io_init(&w->exit_watch, on_read_end, w->rd.child_fd, EV_READ);
                ev_io_start(d->loop, &w->exit_watch);
                /* from now, not from the loop's cached time: this iteration may have run long */
                ev_now_update(d->loop);
                ev_timer_init(&w->deadline, on_read_deadline, ZD_CALLER_FILTER_TIMEOUT_MS / 1000., 0.);
                ev_timer_start(d->loop, &w->deadline);
        }
}

int zd_spawn_wait_filters(struct spawn *s, zd_spawn_resume_t resume) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        struct zd_filter_wait *w, **q;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fds = call->n_fds > 0 ? calloc(call->n_fds, sizeof(int)) : NULL;
        if (call->n_fds > 0 && !w->fds) {
                free(w);
                return -ENOMEM;
        }
        /* the call is ours now: its fds and its parameters (as spawn-park.c takes them) */
        w->d = d;
        w->stash = -EBADF;
        w->call = *call;
        w->call.fds = w->fds;
        w->owner = zd_conn_account(call->conn);
        w->uid = zd_conn_cred(call->conn)->uid;
        if (call->n_fds > 0)
                memcpy(w->fds, call->fds, call->n_fds * sizeof(int));
        r = fds_stash(w);
        if (r < 0) {
                free(w->fds);
                free(w);
                return r;
        }
        call->n_fds = 0;
        json_object_get(w->call.params);
        w->call.error = NULL;
        w->call.error_params = NULL;
        w->s = s;
        w->resume = resume;
        s->call = &w->call;
        for (q = &d->filter_waits; *q; q = &(*q)->next)
                ;
        *q = w; /* at the tail: the reads start in the order the spawns came */
        pump(d);
        return 1;
}

void zd_spawn_filters_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (struct zd_filter_wait *w = d->filter_waits; w; w = w->next)
                if (w->call.conn == c) {
                        w->call.conn = NULL;
                        if (w->running)
                                zd_caller_filters_stop(&w->rd); /* its end comes soon */
                }
        /* those not running yet have nothing to wait for */
        for (struct zd_filter_wait **q = &d->filter_waits; *q;) {
                struct zd_filter_wait *w = *q;

                if (w->call.conn || w->running) {
                        q = &w->next;
                        continue;
                }
                *q = w->next;
                wait_free(w);
        }
}

bool zd_spawn_filters_id(struct zd_daemon *d, uid_t owner, const char *id) {
        for (struct zd_filter_wait *w = d->filter_waits; w; w = w->next)
                if (w->s && w->s->req.id && streq(w->s->req.id, id) && w->uid == owner)
                        return true;
        return false;
}
