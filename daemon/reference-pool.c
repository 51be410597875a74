/* SPDX-License-Identifier: MIT */
/*
 * A reference's pool of pre-forked workers (the inherit tier). The reference forks each one as it
 * forks a worker (CLONE_PARENT: zygoted's child, under the reference's filter, in the profile's
 * namespaces), but ahead of demand and with nothing but a channel of its own; the worker blocks
 * on it for exactly one plan. A spawn takes an idle worker and sends it the plan itself: no
 * reference round trip and no fork on the spawn's path. The pool refills once that spawn is
 * answered (its worker exec'd, or failed, or is held) and the loop has nothing else to do, through
 * the reference's client (in order with the spawns it parks): the reference's fork never competes
 * with a worker that is specializing.
 *
 * Its size adapts: it starts at ZD_POOL_START, doubles (up to max) each time a spawn found it
 * empty, and loses a worker each ZD_POOL_SHRINK_S without a spawn. A worker that dies while idle
 * is reaped and replaced; a pool whose workers keep dying (ZD_POOL_MAX_FAILURES in a row) stops
 * asking until the reference starts again. Every worker belongs to the reference that runs now:
 * its loss, a restart or a reload that replaces the profile stops the pool (its idle workers let
 * go, its requests in flight settled by the client's loss), and a new pool starts with the new
 * reference.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "reference-pool.h"
#include "task.h"
#include "util.h"

/* A spawn a pool worker took, until it is answered: the pool refills after that, not while the
 * worker specializes (a fork of the reference then would compete with it for the CPU). */
struct zd_pool_spawn {
        struct zd_pool_spawn *next;
        struct zd_ref_pool *pool;
        int fd;      /* a copy of the read end of its status pipe: watched, never read */
        ev_io watch; /* readable: EOF (the exec, the reply sent), or a record (held, failed) */
};

struct zd_pool_worker {
        struct zd_pool_worker *next;
        struct zd_ref_pool *pool;
        struct zc_pidref pidref; /* known once the reference answered */
        int chan;                /* the daemon's end of its channel */
        ev_io watch;             /* its pidfd, while idle: a death */
};

static void refill_due(struct zd_ref_pool *p) {
        if (p->running && p->n_idle + p->n_forking < p->target && p->failures < ZD_POOL_MAX_FAILURES)
                ev_idle_start(p->d->loop, &p->refill);
}

static void spawn_free(struct zd_ref_pool *p, struct zd_pool_spawn *sp) {
        for (struct zd_pool_spawn **q = &p->spawns; *q; q = &(*q)->next)
                if (*q == sp) {
                        *q = sp->next;
                        break;
                }
        ev_io_stop(p->d->loop, &sp->watch);
        safe_close(sp->fd);
        free(sp);
}

/* The spawn is answered (task.c reads the same pipe, at the same event): refill when idle. */
static void on_spawn_answered(struct ev_loop *loop, ev_io *io, int revents) {
        struct zd_pool_spawn *sp = io->data;
        struct zd_ref_pool *p = sp->pool;

        spawn_free(p, sp);
        refill_due(p);
}

void zd_ref_pool_refill_after(struct zd_ref_pool *p, int status_fd) {
        struct zd_pool_spawn *sp = calloc(1, sizeof(*sp));
        int fd = sp ? fcntl(status_fd, F_DUPFD_CLOEXEC, 3) : -1;

        if (fd < 0) {
                /* no way to know when: now, when the loop is idle */
                free(sp);
                refill_due(p);
                return;
        }
        *sp = (struct zd_pool_spawn){ .pool = p, .fd = fd, .next = p->spawns };
        ev_io_init(&sp->watch, on_spawn_answered, fd, EV_READ);
        sp->watch.data = sp;
        ev_io_start(p->d->loop, &sp->watch);
        p->spawns = sp;
}

/* A worker the pool does not keep: its channel closed (an idle one exits at the EOF), then
 * reaped on the loop; killed first when it may not exit by itself. */
static void worker_let_go(struct zd_ref_pool *p, struct zd_pool_worker *w, bool kill) {
        ev_io_stop(p->d->loop, &w->watch);
        w->chan = safe_close(w->chan);
        if (w->pidref.fd >= 0) {
                if (kill)
                        zd_task_reap_orphan(p->d, w->pidref);
                else
                        zd_task_reap_child(p->d, w->pidref);
        }
        free(w);
}

static struct zd_pool_worker *idle_unlink(struct zd_ref_pool *p, struct zd_pool_worker *w) {
        for (struct zd_pool_worker **q = &p->idle; *q; q = &(*q)->next)
                if (*q == w) {
                        *q = w->next;
                        w->next = NULL;
                        p->n_idle--;
                        break;
                }
        return w;
}

/* An idle worker died (killed from outside, or it failed before it blocked): reaped, replaced. */
static void on_worker_death(struct ev_loop *loop, ev_io *io, int revents) {
        struct zd_pool_worker *w = io->data;
        struct zd_ref_pool *p = w->pool;

        zd_log(LOG_INFO, "profile %s: idle pool worker %d died; it is replaced", p->client->name, (int) w->pidref.pid);
        worker_let_go(p, idle_unlink(p, w), false);
        p->failures++;
        p->replaced++;
        if (p->failures == ZD_POOL_MAX_FAILURES)
                zd_log(LOG_WARNING, "profile %s: %u pool workers lost in a row; no pool until the reference restarts",
                       p->client->name, p->failures);
        refill_due(p);
}

/* The reference's answer to a POOL request: the worker joins the idle ones. */
static void on_worker_forked(void *userdata, int r, struct zc_pidref worker) {
        struct zd_pool_worker *w = userdata;
        struct zd_ref_pool *p = w->pool;

        p->n_forking--;
        if (r < 0) {
                if (worker.pid > 0) {
                        /* forked, but no pidfd: by pid, which stays this worker's until we reap it */
                        (void) kill(worker.pid, SIGKILL);
                        (void) waitpid(worker.pid, NULL, __WALL);
                }
                if (p->running)
                        zd_log(LOG_WARNING, "profile %s: the reference could not fork a pool worker: %s",
                               p->client->name, strerror(-r));
                p->failures++;
                worker_let_go(p, w, false);
                refill_due(p);
                return;
        }
        w->pidref = worker;
        if (!p->running) {
                /* stopped meanwhile: never used, nor kept */
                worker_let_go(p, w, true);
                return;
        }
        ev_io_init(&w->watch, on_worker_death, w->pidref.fd, EV_READ);
        w->watch.data = w;
        ev_io_start(p->d->loop, &w->watch);
        w->next = p->idle;
        p->idle = w;
        p->n_idle++;
        refill_due(p);
}

/* One more worker asked of the reference. */
static int pool_ask(struct zd_ref_pool *p) {
        _cleanup_close_pair_ int chan[2] = { -EBADF, -EBADF };
        struct zd_pool_worker *w;
        int r;

        r = zr_pool_channel(chan);
        if (r < 0)
                return r;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (struct zd_pool_worker){ .pool = p, .pidref = ZC_PIDREF_NULL, .chan = -EBADF };
        r = zd_ref_client_send_pool(p->client, chan[1], on_worker_forked, w);
        if (r < 0) {
                free(w);
                return r;
        }
        /* the worker's end is in the message: ours goes, so that only it and the reference hold it */
        w->chan = TAKE_FD(chan[0]);
        p->n_forking++;
        return 0;
}

static void on_refill(struct ev_loop *loop, ev_idle *idle, int revents) {
        struct zd_ref_pool *p = idle->data;

        ev_idle_stop(loop, idle);
        while (p->running && p->n_idle + p->n_forking < p->target && p->failures < ZD_POOL_MAX_FAILURES) {
                int r = pool_ask(p);
                if (r < 0) {
                        zd_log(LOG_WARNING, "profile %s: asking the reference for a pool worker: %s", p->client->name,
                               strerror(-r));
                        p->failures++;
                        break;
                }
        }
}

/* Not drawn from for a while: one worker fewer, down to one. */
static void on_shrink(struct ev_loop *loop, ev_timer *t, int revents) {
        struct zd_ref_pool *p = t->data;

        if (!p->running || ev_now(loop) - p->last_take < ZD_POOL_SHRINK_S || p->target <= 1)
                return;
        p->target--;
        if (p->n_idle > p->target && p->idle)
                worker_let_go(p, idle_unlink(p, p->idle), false);
}

void zd_ref_pool_init(struct zd_ref_pool *p, struct zd_daemon *d, struct zd_ref_client *client, unsigned max) {
        *p = (struct zd_ref_pool){ .d = d, .client = client, .max = max };
        ev_idle_init(&p->refill, on_refill);
        p->refill.data = p;
        /* after the replies and everything else the loop has to do */
        ev_set_priority(&p->refill, EV_MINPRI);
        ev_timer_init(&p->shrink, on_shrink, ZD_POOL_SHRINK_S, ZD_POOL_SHRINK_S);
        p->shrink.data = p;
}

void zd_ref_pool_start(struct zd_ref_pool *p) {
        if (!p->d || p->max == 0 || p->running)
                return;
        p->running = true;
        p->failures = 0;
        p->target = ZD_POOL_START < p->max ? ZD_POOL_START : p->max;
        p->last_take = ev_now(p->d->loop);
        ev_timer_again(p->d->loop, &p->shrink);
        refill_due(p);
}

void zd_ref_pool_stop(struct zd_ref_pool *p) {
        struct zd_pool_worker *w;

        if (!p->d)
                return;
        p->running = false;
        ev_idle_stop(p->d->loop, &p->refill);
        ev_timer_stop(p->d->loop, &p->shrink);
        while (p->spawns)
                spawn_free(p, p->spawns);
        /* killed, not only let go: a worker of a reference that is gone is never used, and need
         * not be asked */
        while ((w = p->idle))
                worker_let_go(p, idle_unlink(p, w), true);
}

void zd_ref_pool_done(struct zd_ref_pool *p) {
        /* p->d stays: the client's loss may still complete requests of ours */
        zd_ref_pool_stop(p);
}

int zd_ref_pool_take(struct zd_ref_pool *p, struct zc_pidref *ret_worker, int *ret_chan) {
        struct zd_pool_worker *w;

        if (!p->d || !p->running)
                return -ENOENT;
        p->last_take = ev_now(p->d->loop);
        w = p->idle;
        if (!w) {
                p->misses++;
                p->target = p->target * 2 > p->max ? p->max : p->target * 2;
                if (p->target == 0)
                        p->target = 1;
                refill_due(p);
                return -ENOENT;
        }
        idle_unlink(p, w);
        ev_io_stop(p->d->loop, &w->watch);
        p->hits++;
        p->failures = 0;
        *ret_worker = w->pidref;
        *ret_chan = w->chan;
        free(w);
        /* the refill waits for this spawn's answer (zd_ref_pool_refill_after()) */
        return 0;
}

json_object *zd_ref_pool_to_json(const struct zd_ref_pool *p) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "size", json_object_new_int64(p->n_idle));
        json_object_object_add(o, "forking", json_object_new_int64(p->n_forking));
        json_object_object_add(o, "target", json_object_new_int64(p->running ? p->target : 0));
        json_object_object_add(o, "max", json_object_new_int64(p->max));
        json_object_object_add(o, "hits", json_object_new_int64((int64_t) p->hits));
        json_object_object_add(o, "misses", json_object_new_int64((int64_t) p->misses));
        json_object_object_add(o, "replaced", json_object_new_int64((int64_t) p->replaced));
        json_object *pids = json_object_new_array();
        for (const struct zd_pool_worker *w = p->idle; w; w = w->next)
                json_object_array_add(pids, json_object_new_int(w->pidref.pid));
        json_object_object_add(o, "pids", pids);
        return o;
}
