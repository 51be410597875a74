/* SPDX-License-Identifier: MIT */
/* A reference's pool of pre-forked workers; see reference-pool.c. */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "pidref.h"
#include "reference-client.h"

struct zd_daemon;
struct zd_pool_worker; /* private to reference-pool.c */
struct zd_pool_spawn;  /* private to reference-pool.c */

/* Per profile, --pool-max. Off by default: on a machine without an idle core the refill's fork
 * lands on the next spawn's path, and back-to-back spawns are slower with the pool than without
 * (docs/BENCHMARKS.md). 4 is what the tests and the measurements use. */
#define ZD_POOL_MAX_DEFAULT 0
#define ZD_POOL_MAX_LIMIT 64
#define ZD_POOL_START 2       /* the size a reference's pool starts at */
#define ZD_POOL_SHRINK_S 30.0 /* a pool not drawn from for this long loses one worker */
#define ZD_POOL_MAX_FAILURES \
        4 /* pool workers lost in a row (died idle, not forked): no more, until
                                * the reference is started again */

/* One per profile entry (registry.h), for its reference (the one its client talks to). Its
 * workers all come from the reference that runs now: stopped with it, never used after. */
struct zd_ref_pool {
        struct zd_daemon *d;
        struct zd_ref_client *client;
        struct zd_pool_worker *idle;  /* forked, each blocked on its channel */
        struct zd_pool_spawn *spawns; /* taken, their spawns not answered yet */
        unsigned n_idle, n_forking;   /* n_forking: asked of the reference, not answered yet */
        unsigned target, max;         /* the size it refills to (adapts, at most max; 0: no pool) */
        unsigned failures;            /* workers lost in a row */
        bool running;                 /* the reference is up, in the inherit tier */
        unsigned long hits, misses, replaced;
        double last_take;
        ev_idle refill; /* asks the reference for more when the loop has nothing else to do */
        ev_timer shrink;
};

void zd_ref_pool_init(struct zd_ref_pool *p, struct zd_daemon *d, struct zd_ref_client *client, unsigned max);
/* The reference is up and serves the inherit tier: the pool fills (when the loop is idle). */
void zd_ref_pool_start(struct zd_ref_pool *p);
/* The reference is about to be stopped, or is lost, or its profile goes: every idle worker is let
 * go (its channel closed: it exits; reaped on the loop) and no more are asked for. Requests
 * still in flight are settled by the client's loss (zd_ref_client_lost()), after this. */
void zd_ref_pool_stop(struct zd_ref_pool *p);
void zd_ref_pool_done(struct zd_ref_pool *p);

/* An idle worker for one spawn: its pidref (the caller's now, watched by nobody) and the daemon's
 * end of its channel (the caller's, to send the plan and close). -ENOENT when the pool is empty
 * (a miss: it grows, and refills when the loop is idle), or stopped. */
int zd_ref_pool_take(struct zd_ref_pool *p, struct zc_pidref *ret_worker, int *ret_chan);
/* After a take: the refill waits until that spawn is answered, which status_fd (the read end of
 * its status pipe; copied, never read) tells (EOF at the exec, or a record), then for the loop to
 * be idle. The worker's specializing is the spawn's critical path: the reference's next fork
 * waits until it is over. Called once per successful take, whatever became of the spawn. */
void zd_ref_pool_refill_after(struct zd_ref_pool *p, int status_fd);

/* {"size", "forking", "target", "max", "hits", "misses", "replaced", "pids": the idle workers} */
json_object *zd_ref_pool_to_json(const struct zd_ref_pool *p);
