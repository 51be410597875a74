/* SPDX-License-Identifier: MIT */
/*
 * The inherit tier's parked spawns: a spawn whose plan went to the profile's reference waits in
 * the profile's queue (at most ZR_REF_MAX_QUEUED) while the daemon serves on; the reference's
 * replies, read in order from its control socket, finish them (spawn-start.c), a reply late by
 * ZR_REF_TIMEOUT_MS kills the reference, and a lost reference has each parked spawn's worker
 * killed before exec and the spawn run once in the load tier. The registry reaches this file
 * only through the hooks main.c sets (registry.h).
 */
#include <signal.h>
#include <sys/socket.h>
#include <syslog.h>

#include "daemon.h"
#include "log.h"
#include "pidfd-util.h"
#include "server.h"
#include "spawn-park.h"
#include "spawn-plan.h"
#include "spawn-reply.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "spawner.h"
#include "task.h"
#include "util.h"

/* A spawn of the inherit tier whose request is in the reference's hands: the daemon goes on
 * serving, and the reference's reply (on its control socket, in order) finishes it. It owns its
 * call's parameters and fds now (the dispatcher's copies are handed over). */
struct zd_parked {
        struct zd_parked *next;
        struct zd_call call; /* conn NULL once the caller is gone */
        int *fds;
        bool fds_released; /* to the closer before another fork: no load tier if the reference is lost */
        uid_t uid;         /* the caller's: whose fds these are */
        struct spawn *s;
        double sent_at;
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

static void ref_arm(struct zd_entry *e) {
        struct ev_loop *loop = e->d->loop;

        if (!e->parked) {
                ev_io_stop(loop, &e->ctl_watch);
                ev_timer_stop(loop, &e->ctl_timer);
                return;
        }
        if (!ev_is_active(&e->ctl_watch) && e->ref.ctl_fd >= 0) {
                ev_io_set(&e->ctl_watch, e->ref.ctl_fd, EV_READ);
                ev_io_start(loop, &e->ctl_watch);
        }
        /* the oldest request in flight has until sent_at + the timeout */
        ev_timer_stop(loop, &e->ctl_timer);
        double left = e->parked->sent_at + ZR_REF_TIMEOUT_MS / 1000.0 - ev_now(loop);
        ev_timer_set(&e->ctl_timer, left > 0 ? left : 0., 0.);
        ev_timer_start(loop, &e->ctl_timer);
}

/* The request goes to the reference and the spawn waits in its profile's queue: 1. Nothing
 * reached the reference: 0, and the spawn loads. < 0: refused (the queue is full). */
int zd_spawn_park(struct spawn *s) {
        struct zd_entry *e = s->entry;
        struct zd_call *call = s->call;
        struct zd_parked *p, **tail;
        int r;

        if (e->n_parked >= ZR_REF_MAX_QUEUED)
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
        r = zr_reference_request(&e->ref, &s->plan);
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
        p->uid = zd_conn_cred(call->conn)->uid;
        if (call->n_fds > 0)
                memcpy(p->fds, call->fds, call->n_fds * sizeof(int));
        call->n_fds = 0;
        json_object_get(p->call.params);
        p->call.error = NULL;
        p->call.error_params = NULL;
        p->s = s;
        s->call = &p->call;
        p->sent_at = ev_now(e->d->loop);
        for (tail = &e->parked; *tail; tail = &(*tail)->next)
                ;
        *tail = p;
        e->n_parked++;
        ref_arm(e);
        return 1;
}

static struct zd_parked *parked_pop(struct zd_entry *e) {
        struct zd_parked *p = e->parked;

        if (p) {
                e->parked = p->next;
                e->n_parked--;
                p->next = NULL;
        }
        return p;
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
                zd_log(LOG_INFO, "profile %s: the caller left before its worker %d was tracked; it is "
                       "killed at its gate", s->profile_name, (int) pid);
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
                /* its fds went before another fork (zd_spawn_park_release_fds): nothing ran, and
                 * nothing can run it again here; the caller may retry */
                zd_log(LOG_WARNING, "profile %s: reference spawn failed (%s); its fds are released, so it "
                       "fails (nothing ran)", s->profile_name, strerror(-r));
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

void zd_spawn_on_ref_reply(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_entry *e = w->data;

        while (e->parked) {
                pid_t pid = 0;
                int pidfd = -EBADF;
                int r = zr_reference_reply(&e->ref, &pid, &pidfd);

                if (r == -EAGAIN)
                        break;
                if (r < 0 && pid == ZR_REF_WORKER_UNKNOWN) {
                        /* killed (zr_reference_reply): the reference's death, seen on its pidfd,
                         * settles every parked spawn (zd_spawn_ref_lost) */
                        ev_io_stop(loop, w);
                        ev_timer_stop(loop, &e->ctl_timer);
                        return;
                }
                parked_answer(parked_pop(e), r, pid, pidfd);
        }
        if (!e->parked) {
                /* a message nobody asked for: the reference is out of step */
                pid_t pid = 0;
                int pidfd = -EBADF;
                int r = zr_reference_reply(&e->ref, &pid, &pidfd);
                if (r != -EAGAIN) {
                        if (r >= 0)
                                zd_task_reap_orphan(e->d, pid, pidfd); /* a worker nobody asked for */
                        zd_log(LOG_WARNING, "profile %s: the reference answered what it was not asked; it is "
                               "killed", e->profile->name);
                        (void) pidfd_kill(e->ref.pidfd, SIGKILL);
                        ev_io_stop(loop, w);
                        return;
                }
        }
        ref_arm(e);
}

void zd_spawn_on_ref_timeout(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_entry *e = w->data;

        if (!e->parked)
                return;
        zd_log(LOG_WARNING, "profile %s: the reference did not answer within %d ms; it is killed",
               e->profile->name, ZR_REF_TIMEOUT_MS);
        ev_io_stop(loop, &e->ctl_watch);
        if (e->ref.ctl_fd >= 0)
                (void) shutdown(e->ref.ctl_fd, SHUT_RDWR);
        (void) pidfd_kill(e->ref.pidfd, SIGKILL); /* its death settles the parked spawns */
}

/* The reference is dead or about to be stopped (its pidfd fired; a reload; shutdown): each
 * parked spawn's worker, if it made one, is killed before exec, and the spawn runs once in the
 * load tier, or is dropped when its caller is gone. */
void zd_spawn_ref_lost(struct zd_entry *e) {
        struct ev_loop *loop = e->d->loop;
        struct zd_parked *p;

        ev_io_stop(loop, &e->ctl_watch);
        ev_timer_stop(loop, &e->ctl_timer);
        if (!e->parked)
                return;
        if (e->ref.pidfd >= 0)
                (void) pidfd_kill(e->ref.pidfd, SIGKILL); /* so that any fork it started is complete */
        /* every lost worker first, then the spawns again: a worker forked here for one of them
         * is never looked at as another's */
        for (p = e->parked; p; p = p->next) {
                struct spawn *s = p->s;
                pid_t lost = zr_reference_find_worker(&e->ref, s->status[0]);

                if (lost > 0) {
                        zd_log(LOG_WARNING, "profile %s: worker %d of a lost reference is killed before exec",
                               s->profile_name, (int) lost);
                        zd_spawn_drop_worker(s, lost, pidfd_open_pid(lost));
                } else if (lost < 0)
                        zd_log(LOG_WARNING, "profile %s: looking for the worker of a lost reference: %s",
                               s->profile_name, strerror(-lost));
        }
        while ((p = parked_pop(e)))
                parked_answer(p, -ECONNRESET, 0, -EBADF);
}

/* A caller went away: its parked spawn, when the reference answers, kills its worker at the
 * gate. */
void zd_spawn_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (size_t i = 0; i < d->n_entries; i++)
                for (struct zd_parked *p = d->entries[i]->parked; p; p = p->next)
                        if (p->call.conn == c)
                                p->call.conn = NULL;
}

bool zd_spawn_parked_id(struct zd_daemon *d, const char *id) {
        for (size_t i = 0; i < d->n_entries; i++)
                for (struct zd_parked *p = d->entries[i]->parked; p; p = p->next)
                        if (p->s->req.id && streq(p->s->req.id, id))
                                return true;
        return false;
}

/* Another fork is about to copy the daemon's fd table: the caller fds that parked spawns keep
 * (only to run them in the load tier should their reference be lost) go to the closer now, or
 * the child would hold copies whose close may wait on their caller (a FUSE file's FLUSH). A
 * spawn run again in the load tier was taken off its queue before its own fork, so its fds are
 * never among these. */
unsigned zd_spawn_park_release_fds(struct zd_daemon *d) {
        unsigned n = 0;

        for (size_t i = 0; i < d->n_entries; i++)
                /* NULL: an entry a reload is moving to its new table (registry.c) */
                for (struct zd_parked *p = d->entries[i] ? d->entries[i]->parked : NULL; p; p = p->next) {
                        for (size_t k = 0; k < p->call.n_fds; k++)
                                zd_server_close_caller_fd(&d->server, p->fds[k], p->uid);
                        n += p->call.n_fds;
                        p->fds_released = p->fds_released || p->call.n_fds > 0;
                        p->call.n_fds = 0;
                }
        return n;
}
