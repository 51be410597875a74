/* SPDX-License-Identifier: MIT */
/*
 * Spawn: from a request, the caller's credentials and a profile to one struct ze_plan, and from
 * the plan to a worker in the profile's tier. zd_spawn() is the recipe, a line per step, each in
 * the file of its facet (spawn-state.h: the files, layered):
 *   the request parsed and authorized (spawn-request.c), for the caller as it is now
 *   (spawn-identity.c: every decision about identity and privilege), the plan built
 *   (spawn-plan.c), and the worker started (spawn-start.c), through the reference's queue
 *   (spawn-park.c) in the inherit tier. Every reply is written by spawn-reply.c.
 */
#include "call.h"
#include "caller.h"
#include "daemon.h"
#include "server.h"
#include "spawn-identity.h"
#include "spawn-park.h"
#include "spawn-plan.h"
#include "spawn-request.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "spawner.h"
#include "util.h"

/* The worker: through the reference (inherit: parked until it answers) or forked here (clone,
 * load). 1: parked. */
static int spawn_fork(struct spawn *s) {
        if (s->tier == ZD_TIER_INHERIT) {
                int r = zd_spawn_park(s);
                if (r != 0)
                        return r;
        }
        return zd_spawn_start(s, 0, -EBADF);
}

int zd_spawn(struct zd_call *call) {
        struct spawn *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        *s = (struct spawn){ .call = call, .caller = ZD_CALLER_INIT, .status = { -EBADF, -EBADF },
                             .hold = { -EBADF, -EBADF } };
        r = zd_spawn_parse(call, &s->req);
        /* Who a root connection's process is now (it may have dropped its uid or capabilities
         * since connect) decides what the checks below allow: read it first. Any other
         * connection's identity is the kernel's record, and its process is read with its
         * confinement, after those checks; so is root's by an unprivileged zygoted, which
         * switches no ids for anyone. */
        if (r >= 0 && call->d->privileged && zd_conn_root_at_connect(call->conn))
                r = zd_spawn_read_caller(s);
        else if (r >= 0)
                zd_spawn_identify(s);
        if (r >= 0)
                r = zd_spawn_authorize(s);
        if (r >= 0)
                r = zd_spawn_fdmap(s);
        if (r >= 0)
                r = zd_spawn_decide_identity(s);
        /* a root connection's process was read before authorize; any other's is read here, after
         * the checks that need only the connection's identity */
        if (r >= 0 && s->caller.pidfd < 0)
                r = zd_spawn_read_caller(s);
        if (r >= 0)
                r = zd_spawn_confine(s);
        if (r >= 0)
                r = zd_spawn_plan(s);
        if (r >= 0)
                r = spawn_fork(s);
        if (r == 1) {
                s->parked = true; /* the reference's reply finishes it */
                return 0;
        }
        if (r < 0)
                r = zd_spawn_fail(s, r);
        zd_spawn_free(s);
        return r;
}
