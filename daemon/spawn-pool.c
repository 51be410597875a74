/* SPDX-License-Identifier: MIT */
/*
 * The inherit tier's fast path: a spawn's plan goes straight to an idle worker of the profile's
 * pool (reference-pool.h), forked by the reference ahead of demand, rather than to the reference
 * for a fork. The worker is the daemon's child already and its pidfd known, so the spawn is a
 * task at once (spawn-start.c), its gate opened as for a worker the reference answered. With no
 * idle worker the spawn takes the reference's path (spawn-park.c).
 *
 * What the worker gets is what the reference's worker would: the same plan, packed the same way,
 * the same filter (inherited from the same reference), the fds of this spawn and nothing else
 * (before its request it held only its channel).
 */
#include <syslog.h>

#include "daemon.h"
#include "log.h"
#include "reference.h"
#include "spawn-pool.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "task.h"
#include "util.h"

int zd_spawn_pooled(struct spawn *s) {
        struct zd_ref_pool *pool = &s->entry->pool;
        struct zc_pidref worker;
        int chan, r;

        if (s->scope)
                return 0; /* its gate is ours to open (spawn-scope.c): a worker forked for it */
        /* a worker of the reference that runs now: the pool is stopped with it */
        while (zd_ref_pool_take(pool, &worker, &chan) >= 0) {
                r = zr_pool_send(chan, &s->plan);
                /* the plan and its fds are in the worker's queue: our end has nothing more to say */
                safe_close(chan);
                /* before the task takes the status pipe: the refill follows this spawn's answer */
                zd_ref_pool_refill_after(pool, r >= 0 ? s->status[0] : -EBADF);
                if (r >= 0) {
                        r = zd_spawn_start(s, worker.pid, worker.fd);
                        return r < 0 ? r : 1;
                }
                /* gone while idle (its death not seen yet), or the plan does not fit: killed,
                 * reaped on the loop, and the next one or the reference */
                zd_task_reap_orphan(s->call->d, worker);
                if (r != -EPIPE && r != -ECONNREFUSED && r != -ECONNRESET) {
                        zd_log(LOG_WARNING, "profile %s: a pool worker refused the plan (%s); asking the reference",
                               s->profile_name, strerror(-r));
                        return 0;
                }
        }
        return 0;
}
