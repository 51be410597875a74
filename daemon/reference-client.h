/* SPDX-License-Identifier: MIT */
/* A reference's requests in flight, each with its completion; see reference-client.c. */
#pragma once

#include <ev.h>
#include <sys/types.h>

#include "reference.h"

struct zd_daemon;
struct zd_ref_request; /* private to reference-client.c */

/* A request's end, called exactly once, from the loop (never from zd_ref_client_send()):
 *   r >= 0: the worker (taken), waiting at its gate;
 *   r < 0 and worker.pid 0: the reference forked nothing for it (an error reply), or the
 *           reference was lost with the request in its hands (-ECONNRESET: its worker, if it had
 *           forked one, was found, killed before exec and reaped);
 *   r < 0 and worker.pid > 0: this worker was forked but no pidfd could be opened for it.
 * A completion may fork (it passes the fork gate), and may be told of requests that follow; it
 * must not free the client. */
typedef void (*zd_ref_done_fn)(void *userdata, int r, struct zc_pidref worker);

/* One per reference (a profile's entry, registry.h). It owns the watcher of the control socket
 * while requests are in flight and the deadline of the oldest one. */
struct zd_ref_client {
        struct zd_daemon *d;
        struct zr_reference *ref;        /* the entry's: started and stopped by the registry */
        char *name;                      /* the profile's, for the log */
        ev_io watch;                     /* its control socket, while requests are in flight */
        ev_timer timer;                  /* the oldest request's deadline */
        struct zd_ref_request *requests; /* in flight, oldest first: the reference answers in order */
        unsigned n_requests;
};

int zd_ref_client_init(struct zd_ref_client *c, struct zd_daemon *d, struct zr_reference *ref, const char *name);
/* Settles what is still in flight as lost (zd_ref_client_lost()), then frees. Safe on a client
 * zeroed and never initialized. */
void zd_ref_client_done(struct zd_ref_client *c);

/* Sends the plan to the reference without waiting and queues its completion (at most
 * ZR_REF_MAX_QUEUED in flight: -ENOBUFS past that). status_r: the read end of the plan's status
 * pipe, whose write end only the reference and the worker hold (a lost reference's worker is
 * found by it); it stays open until the completion. Returns 0, or a negative errno when nothing
 * reached the reference (then done is never called). */
int zd_ref_client_send(struct zd_ref_client *c, const struct ze_plan *plan, int status_r, zd_ref_done_fn done,
                       void *userdata);
/* The same for a pool worker (reference.h, POOL): chan_fd is its end of its channel, which the
 * reference gets a copy of (a lost reference's worker is found by it; the caller may close its
 * copy once this returns). Its completion gets the pool worker as a request's worker. */
int zd_ref_client_send_pool(struct zd_ref_client *c, int chan_fd, zd_ref_done_fn done, void *userdata);
/* How many requests are in flight. */
unsigned zd_ref_client_pending(const struct zd_ref_client *c);

/* The reference is dead or about to be stopped (its pidfd fired; a reload; shutdown): it is
 * killed, each request's worker, if it made one, is killed before exec, and every request is
 * completed with -ECONNRESET, oldest first. */
void zd_ref_client_lost(struct zd_ref_client *c);
