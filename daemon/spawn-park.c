/* SPDX-License-Identifier: MIT */
/*
 * The inherit tier's parked spawns: a spawn whose plan went to the profile's reference waits
 * (at most ZR_REF_MAX_QUEUED per profile) while the daemon serves on. Each is a request of the
 * reference's client (reference-client.h) with this file's completion: the reference's reply
 * finishes it (spawn-start.c), and a reference lost with it in hand (its worker, if any,
 * killed before exec) has it run once in the load tier. While any is parked, their callers' fds
 * are let go before another fork (fork-gate.h).
 */
#include <syslog.h>

#include "daemon.h"
#include "fork-gate.h"
#include "log.h"
#include "server.h"
#include "spawn-filters.h"
#include "spawn-park.h"
#include "spawn-plan.h"
#include "spawn-reply.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "spawner.h"
#include "util.h"

/* A spawn of the inherit tier whose request is in the reference's hands: the daemon goes on
 * serving, and the reference's reply (on its control socket, in order) finishes it. It owns its
 * call's parameters and fds now (the dispatcher's copies are handed over). */
struct zd_parked {
        struct zd_parked *next; /* zd_daemon.parked: every profile's */
        struct zd_call call;    /* conn NULL once the caller is gone */
        int *fds;
        bool fds_released; /* to the closer before another fork: no load tier if the reference is lost */
        uid_t uid;         /* the caller's account: whose fds these are */
        struct spawn *s;
};

static void parked_free(struct zd_parked *p) {
        if (p->s)
                zd_spawn_free(p->s);
        /* the caller's fds: their close may wait on the caller (server.c's closer) */
        for (size_t i = 0; i < p->call.n_fds; i++)
                zd_server_close_caller_fd(&p->call.d->server, p->fds[i], p->uid);
        free(p->fds);
        json_object_put(p->call.params);
        json_object_put(p->call.error_params);
        free(p);
}

/* Another fork is about to copy the daemon's fd table (fork-gate.h, the release stage): the
 * caller fds that parked spawns keep (only to run them in the load tier should their reference
 * be lost) go to the closer now, or the child would hold copies whose close may wait on their
 * caller (a FUSE file's FLUSH). A spawn run again in the load tier was taken off the list before
 * its own fork, so its fds are never among these. */
static int park_release_fds(void *userdata) {
        struct zd_daemon *d = userdata;
        unsigned n = 0;

        for (struct zd_parked *p = d->parked; p; p = p->next) {
                for (size_t k = 0; k < p->call.n_fds; k++)
                        zd_server_close_caller_fd(&d->server, p->fds[k], p->uid);
                n += p->call.n_fds;
                p->fds_released = p->fds_released || p->call.n_fds > 0;
                p->call.n_fds = 0;
        }
        if (n > 0)
                zd_log(LOG_DEBUG, "%u fds of parked spawns released before a fork", n);
        return (int) n;
}

/* Registered while any spawn is parked. */
static struct zd_fork_holder park_holder = { .stage = ZD_FORK_RELEASE, .close_before_fork = park_release_fds };

static void parked_add(struct zd_daemon *d, struct zd_parked *p) {
        p->next = d->parked;
        d->parked = p;
        park_holder.userdata = d;
        zd_fork_gate_register(&park_holder);
}

static void parked_remove(struct zd_daemon *d, struct zd_parked *p) {
        for (struct zd_parked **q = &d->parked; *q; q = &(*q)->next)
                if (*q == p) {
                        *q = p->next;
                        p->next = NULL;
                        break;
                }
        if (!d->parked)
                zd_fork_gate_unregister(&park_holder);
}

static void parked_done(void *userdata, int r, struct zc_pidref worker);

/* The request goes to the reference and the spawn waits in its profile's queue: 1. Nothing
 * reached the reference: 0, and the spawn loads. < 0: refused (the queue is full). */
int zd_spawn_park(struct spawn *s) {
        struct zd_entry *e = s->entry;
        struct zd_call *call = s->call;
        struct zd_parked *p;
        int r;

        if (zd_ref_client_pending(&e->client) >= ZR_REF_MAX_QUEUED)
                return zd_call_limit(call, "pendingSpawnsPerProfile", ZR_REF_MAX_QUEUED);
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        if (call->n_fds > 0) {
                p->fds = calloc(call->n_fds, sizeof(int));
                if (!p->fds) {
                        free(p);
                        return -ENOMEM;
                }
        }
        r = zd_ref_client_send(&e->client, &s->plan, s->status[0], parked_done, p);
        if (r < 0) {
                free(p->fds);
                free(p);
                zd_log(LOG_WARNING, "profile %s: request to the reference failed (%s); using the load tier",
                       s->profile_name, strerror(-r));
                r = zd_spawn_set_load(s);
                return r < 0 ? r : 0;
        }
        /* The reference has its copies of the worker's ends of the pipes (in the message): ours go
         * now, or a worker forked here meanwhile would hold them too until its exec, and be taken
         * for this spawn's lost worker (zr_reference_find_worker()) if the reference died. */
        s->status[1] = safe_close(s->status[1]);
        s->hold[0] = safe_close(s->hold[0]);
        /* the call is ours now: its fds (the plan names them by number) and its parameters */
        p->call = *call;
        p->call.fds = p->fds;
        p->uid = zd_conn_account(call->conn);
        if (call->n_fds > 0)
                memcpy(p->fds, call->fds, call->n_fds * sizeof(int));
        call->n_fds = 0;
        json_object_get(p->call.params);
        p->call.error = NULL;
        p->call.error_params = NULL;
        p->s = s;
        s->call = &p->call;
        parked_add(call->d, p);
        return 1;
}

/* The parked spawn's end: answered (now, or by its task later), or dropped with its caller. */
static void parked_finish(struct zd_parked *p, int r) {
        if (r < 0 && p->call.conn)
                (void) zd_spawn_fail(p->s, r);
        parked_free(p);
}

/* The reference's answer to the oldest parked spawn: the worker's pid (and a pidfd for it, at
 * its gate), or an error (nothing forked: the spawn loads). */
static void parked_answer(struct zd_parked *p, int r, pid_t pid, int pidfd) {
        struct spawn *s = p->s;

        if (r >= 0 && !p->call.conn) {
                /* the caller is gone: its worker is killed at the gate, never runs */
                zd_log(LOG_INFO,
                       "profile %s: the caller left before its worker %d was tracked; it is "
                       "killed at its gate",
                       s->profile_name, (int) pid);
                zd_spawn_drop_worker(s, pid, pidfd);
                parked_free(p);
                return;
        }
        if (r >= 0) {
                parked_finish(p, zd_spawn_start(s, pid, pidfd));
                return;
        }
        if (pid > 0) {
                zd_log(LOG_WARNING, "profile %s: no pidfd for worker %d (%s); it is killed before exec",
                       s->profile_name, (int) pid, strerror(-r));
                zd_spawn_drop_worker(s, pid, -EBADF);
                parked_finish(p, r);
                return;
        }
        if (!p->call.conn) {
                parked_free(p);
                return;
        }
        if (p->fds_released) {
                /* its fds went before another fork (park_release_fds): nothing ran, and
                 * nothing can run it again here; the caller may retry */
                zd_log(LOG_WARNING,
                       "profile %s: reference spawn failed (%s); its fds are released, so it "
                       "fails (nothing ran)",
                       s->profile_name, strerror(-r));
                (void) zd_spawn_fail_call(&p->call, r, ZD_SPAWN_STEP_REFERENCE,
                                          "the profile's reference process was lost before it started the "
                                          "task; nothing ran");
                parked_finish(p, r);
                return;
        }
        zd_log(LOG_WARNING, "profile %s: reference spawn failed (%s); using the load tier", s->profile_name,
               strerror(-r));
        r = zd_spawn_set_load(s);
        parked_finish(p, r < 0 ? r : zd_spawn_start(s, 0, -EBADF));
}

/* The reference client's completion: off the list before anything forks. */
static void parked_done(void *userdata, int r, struct zc_pidref worker) {
        struct zd_parked *p = userdata;

        parked_remove(p->call.d, p);
        parked_answer(p, r, worker.pid, worker.fd);
}

/* A caller went away: its parked spawn, when the reference answers, kills its worker at the
 * gate. */
void zd_spawn_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (struct zd_parked *p = d->parked; p; p = p->next)
                if (p->call.conn == c)
                        p->call.conn = NULL;
        zd_spawn_filters_drop_conn(d, c);
}

bool zd_spawn_parked_id(struct zd_daemon *d, uid_t owner, const char *id) {
        for (struct zd_parked *p = d->parked; p; p = p->next)
                if (p->s->req.id && streq(p->s->req.id, id) && p->uid == owner)
                        return true;
        return zd_spawn_filters_id(d, owner, id);
}
