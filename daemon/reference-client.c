/* SPDX-License-Identifier: MIT */
/*
 * The asynchronous client of a reference process: the requests sent to it and not yet answered,
 * each with the completion its sender gave (the sd-varlink reply-callback shape). The reference
 * answers in order, so the replies read from its control socket complete the requests oldest
 * first; a reply late by ZR_REF_TIMEOUT_MS has the reference killed; a reference lost with
 * requests in its hands has each one's worker, if it forked one, found and killed before exec,
 * and each request completed with -ECONNRESET. What a request stands for (a parked spawn) is
 * its sender's business, never stored here.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>

#include "daemon.h"
#include "log.h"
#include "pidfd-util.h"
#include "reference-client.h"
#include "task.h"
#include "util.h"

struct zd_ref_request {
        struct zd_ref_request *next;
        zd_ref_done_fn done;
        void *userdata;
        int status_r;   /* borrowed: how its worker is found if the reference is lost */
        ino_t sock_ino; /* or, for a pool worker (status_r -EBADF), the inode of its channel end */
        double sent_at;
};

static void client_arm(struct zd_ref_client *c) {
        struct ev_loop *loop = c->d->loop;

        if (!c->requests) {
                ev_io_stop(loop, &c->watch);
                ev_timer_stop(loop, &c->timer);
                return;
        }
        if (!ev_is_active(&c->watch) && c->ref->ctl_fd >= 0) {
                ev_io_set(&c->watch, c->ref->ctl_fd, EV_READ);
                ev_io_start(loop, &c->watch);
        }
        /* the oldest request in flight has until sent_at + the timeout */
        ev_timer_stop(loop, &c->timer);
        double left = c->requests->sent_at + ZR_REF_TIMEOUT_MS / 1000.0 - ev_now(loop);
        ev_timer_set(&c->timer, left > 0 ? left : 0., 0.);
        ev_timer_start(loop, &c->timer);
}

static struct zd_ref_request *request_pop(struct zd_ref_client *c) {
        struct zd_ref_request *q = c->requests;

        if (q) {
                c->requests = q->next;
                c->n_requests--;
                q->next = NULL;
        }
        return q;
}

/* Off the queue first: the completion may fork, or send the next request. */
static void request_complete(struct zd_ref_request *q, int r, struct zc_pidref worker) {
        zd_ref_done_fn done = q->done;
        void *userdata = q->userdata;

        free(q);
        done(userdata, r, worker);
}

/* A request sent: queued behind those in flight. */
static void request_queue(struct zd_ref_client *c, struct zd_ref_request *q, zd_ref_done_fn done, void *userdata) {
        struct zd_ref_request **tail;

        q->done = done;
        q->userdata = userdata;
        q->sent_at = ev_now(c->d->loop);
        for (tail = &c->requests; *tail; tail = &(*tail)->next)
                ;
        *tail = q;
        c->n_requests++;
        client_arm(c);
}

int zd_ref_client_send(struct zd_ref_client *c, const struct ze_plan *plan, int status_r, zd_ref_done_fn done,
                       void *userdata) {
        struct zd_ref_request *q;
        int r;

        if (c->n_requests >= ZR_REF_MAX_QUEUED)
                return -ENOBUFS;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        r = zr_reference_request(c->ref, plan);
        if (r < 0) {
                free(q);
                return r;
        }
        q->status_r = status_r;
        request_queue(c, q, done, userdata);
        return 0;
}

int zd_ref_client_send_pool(struct zd_ref_client *c, int chan_fd, zd_ref_done_fn done, void *userdata) {
        struct zd_ref_request *q;
        struct stat st;
        int r;

        if (c->n_requests >= ZR_REF_MAX_QUEUED)
                return -ENOBUFS;
        if (fstat(chan_fd, &st) < 0)
                return -errno;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        r = zr_reference_pool_request(c->ref, chan_fd);
        if (r < 0) {
                free(q);
                return r;
        }
        q->status_r = -EBADF;
        q->sock_ino = st.st_ino;
        request_queue(c, q, done, userdata);
        return 0;
}

unsigned zd_ref_client_pending(const struct zd_ref_client *c) {
        return c->n_requests;
}

static void on_reply(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_ref_client *c = w->data;

        while (c->requests) {
                struct zc_pidref worker;
                int r = zr_reference_reply(c->ref, &worker);

                if (r == -EAGAIN)
                        break;
                if (r < 0 && worker.pid == ZR_REF_WORKER_UNKNOWN) {
                        /* killed (zr_reference_reply): the reference's death, seen on its pidfd,
                         * settles every request (zd_ref_client_lost) */
                        ev_io_stop(loop, w);
                        ev_timer_stop(loop, &c->timer);
                        return;
                }
                request_complete(request_pop(c), r, worker);
        }
        if (!c->requests) {
                /* a message nobody asked for: the reference is out of step */
                struct zc_pidref worker;
                int r = zr_reference_reply(c->ref, &worker);
                if (r != -EAGAIN) {
                        if (r >= 0)
                                zd_task_reap_orphan(c->d, worker); /* a worker nobody asked for */
                        zd_log(LOG_WARNING,
                               "profile %s: the reference answered what it was not asked; it is "
                               "killed",
                               c->name);
                        (void) zc_pidref_kill(&c->ref->pidref, SIGKILL);
                        ev_io_stop(loop, w);
                        return;
                }
        }
        client_arm(c);
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_ref_client *c = w->data;

        if (!c->requests)
                return;
        zd_log(LOG_WARNING, "profile %s: the reference did not answer within %d ms; it is killed", c->name,
               ZR_REF_TIMEOUT_MS);
        ev_io_stop(loop, &c->watch);
        if (c->ref->ctl_fd >= 0)
                (void) shutdown(c->ref->ctl_fd, SHUT_RDWR);
        (void) zc_pidref_kill(&c->ref->pidref, SIGKILL); /* its death settles the requests */
}

/* A lost reference's worker, waiting at its gate: killed, never runs, and reaped. */
static void kill_lost_worker(struct zd_ref_client *c, pid_t pid) {
        struct zc_pidref worker;

        if (zc_pidref_set_pid(&worker, pid) < 0) {
                /* by pid, which stays this worker's until we reap it */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, __WALL);
                return;
        }
        zd_task_reap_orphan(c->d, worker);
}

void zd_ref_client_lost(struct zd_ref_client *c) {
        struct ev_loop *loop;
        struct zd_ref_request *q;

        if (!c->d)
                return;
        loop = c->d->loop;
        ev_io_stop(loop, &c->watch);
        ev_timer_stop(loop, &c->timer);
        if (!c->requests)
                return;
        (void) zc_pidref_kill(&c->ref->pidref, SIGKILL); /* so that any fork it started is complete */
        /* every lost worker first, then the completions: a worker a completion forks is never
         * looked at as another request's */
        for (q = c->requests; q; q = q->next) {
                pid_t lost = q->status_r >= 0 ? zr_reference_find_worker(c->ref, q->status_r)
                                              : zr_reference_find_socket_holder(c->ref, q->sock_ino);

                if (lost > 0) {
                        zd_log(LOG_WARNING, "profile %s: worker %d of a lost reference is killed before exec", c->name,
                               (int) lost);
                        kill_lost_worker(c, lost);
                } else if (lost < 0)
                        zd_log(LOG_WARNING, "profile %s: looking for the worker of a lost reference: %s", c->name,
                               strerror(-lost));
        }
        while ((q = request_pop(c)))
                request_complete(q, -ECONNRESET, ZC_PIDREF_NULL);
}

int zd_ref_client_init(struct zd_ref_client *c, struct zd_daemon *d, struct zr_reference *ref, const char *name) {
        char *copy = strdup(name);

        if (!copy)
                return -ENOMEM;
        *c = (struct zd_ref_client){ .d = d, .ref = ref, .name = copy };
        ev_io_init(&c->watch, on_reply, -1, EV_READ);
        c->watch.data = c;
        ev_timer_init(&c->timer, on_timeout, 0., 0.);
        c->timer.data = c;
        return 0;
}

void zd_ref_client_done(struct zd_ref_client *c) {
        if (!c->d)
                return;
        zd_ref_client_lost(c);
        free(c->name);
        c->name = NULL;
        c->d = NULL;
}
