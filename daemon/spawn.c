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
#include "spawn-pool.h"
#include "spawn-request.h"
#include "spawn-scope.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "spawner.h"
#include "util.h"

static int spawn_parse(struct spawn *s) {
        return zd_spawn_parse(s->call, &s->req);
}

/* Who a root connection's process is now (it may have dropped its uid or capabilities since
 * connect) decides what the checks below allow: read it first. Any other connection's identity
 * is the kernel's record, and its process is read with its confinement, after those checks
 * (spawn_caller_late); so is root's by an unprivileged zygoted, which switches no ids for
 * anyone. */
static int spawn_caller_early(struct spawn *s) {
        if (s->call->d->privileged && zd_conn_root_at_connect(s->call->conn))
                return zd_spawn_read_caller(s);
        zd_spawn_identify(s);
        return 0;
}

/* A root connection's process was read before authorize; any other's is read here, after the
 * checks that need only the connection's identity. */
static int spawn_caller_late(struct spawn *s) {
        return s->caller.pidfd < 0 ? zd_spawn_read_caller(s) : 0;
}

/* The worker: a pool worker, else through the reference (inherit: parked until it answers), or
 * forked here (clone, load). 1: parked. */
static int spawn_fork(struct spawn *s) {
        if (s->tier == ZD_TIER_INHERIT) {
                int r = zd_spawn_pooled(s);
                if (r == 1)
                        return 0; /* a task already, as one forked here */
                if (r == 0)
                        r = zd_spawn_park(s);
                if (r != 0)
                        return r;
        }
        return zd_spawn_start(s, 0, -EBADF);
}

/* The recipe, in order. Each step returns 0 to go on, or the error recorded in the call; the
 * last, 1 when the spawn is parked. */
static int (*const spawn_steps[])(struct spawn *s) = {
        spawn_parse,              /* the parameters, through one table */
        spawn_caller_early,       /* who calls: root's process as it is now, else the connection */
        zd_spawn_authorize,       /* the profile and its access list, the id, the limits */
        zd_spawn_fdmap,           /* the fds it passes, each to one target */
        zd_spawn_decide_identity, /* who the worker runs as: never more than the caller */
        spawn_caller_late,        /* any other caller's process, as it is now */
        zd_spawn_confine,         /* what confines the caller, which its task carries */
        zd_spawn_place,           /* its caller's cgroups, or a scope unit of its own */
        zd_spawn_plan,            /* one struct ze_plan, its tier and pipes */
        spawn_fork,               /* the worker, forked here or by the reference */
};

int zd_spawn(struct zd_call *call) {
        struct spawn *s = calloc(1, sizeof(*s));
        int r = 0;

        if (!s)
                return -ENOMEM;
        *s = (struct spawn){
                .call = call, .caller = ZD_CALLER_INIT, .status = { -EBADF, -EBADF }, .hold = { -EBADF, -EBADF }
        };
        for (size_t i = 0; i < ELEMENTSOF(spawn_steps) && r >= 0; i++)
                r = spawn_steps[i](s);
        if (r == 1) {
                s->parked = true; /* the reference's reply finishes it */
                return 0;
        }
        if (r < 0)
                r = zd_spawn_fail(s, r);
        zd_spawn_free(s);
        return r;
}
