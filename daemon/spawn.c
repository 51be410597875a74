/* SPDX-License-Identifier: MIT */
/*
 * Spawn: from a request, the caller's credentials and a profile to one struct ze_plan, and from
 * the plan to a worker in the profile's tier. zd_spawn() is the recipe, a line per step, each in
 * the file of its facet (spawn-state.h: the files, layered):
 *   the request parsed and authorized (spawn-request.c), for the caller as it is now
 *   (spawn-identity.c: every decision about identity and privilege), the plan built
 *   (spawn-plan.c), and the worker started (spawn-start.c), through the reference's queue
 *   (spawn-park.c) in the inherit tier. A caller under its own seccomp filters waits for them to
 *   be read (spawn-filters.c) before its plan. Every reply is written by spawn-reply.c.
 */
#include "call.h"
#include "caller.h"
#include "daemon.h"
#include "server.h"
#include "spawn-filters.h"
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
                if (r == 1)
                        s->parked = true; /* the reference's reply finishes it */
                if (r != 0)
                        return r;
        }
        return zd_spawn_start(s, 0, -EBADF);
}

static void spawn_resume(struct spawn *s, int r);

/* The caller's own seccomp filters, when it has some to carry (zd_spawn_confine_seccomp() said so): read
 * while the loop serves on (spawn-filters.c), and the steps after this one resumed then. 1: the
 * spawn waits. */
static int spawn_filters(struct spawn *s) {
        int r;

        if (!s->read_filters)
                return 0;
        s->parked = true; /* its answer is ours from now on, whenever it comes */
        r = zd_spawn_wait_filters(s, spawn_resume);
        if (r < 0)
                s->parked = false; /* still the dispatcher's */
        return r;
}

/* The recipe, in order. Each step returns 0 to go on, or the error recorded in the call; 1 when
 * the spawn waits (its caller's filters) or is parked (its reference). */
static int (*const spawn_steps[])(struct spawn *s) = {
        spawn_parse,              /* the parameters, through one table */
        spawn_caller_early,       /* who calls: root's process as it is now, else the connection */
        zd_spawn_authorize,       /* the profile and its access list, the id, the limits */
        zd_spawn_fdmap,           /* the fds it passes, each to one target */
        zd_spawn_decide_identity, /* who the worker runs as: never more than the caller */
        spawn_caller_late,        /* any other caller's process, as it is now */
        zd_spawn_confine_seccomp, /* its seccomp mode, and whether its own filters are read */
        spawn_filters,            /* its own seccomp filters, read without holding the loop */
        zd_spawn_confine,         /* the rest of what confines it, which its task carries */
        zd_spawn_place,           /* its caller's cgroups, or a scope unit of its own */
        zd_spawn_plan,            /* one struct ze_plan, its tier and pipes */
        spawn_fork,               /* the worker, forked here or by the reference */
};

/* The steps from the from-th on: 0 done, 1 waiting or parked (the spawn is another's now), or
 * the error recorded in the call. */
static int spawn_run(struct spawn *s, size_t from) {
        int r = 0;

        for (size_t i = from; i < ELEMENTSOF(spawn_steps) && r == 0; i++)
                r = spawn_steps[i](s);
        return r;
}

/* Its caller's filters were read (or not: r < 0): the steps after spawn_filters, and the spawn's
 * end, answered here (it is parked: the dispatcher is gone). */
static void spawn_resume(struct spawn *s, int r) {
        size_t next = 0;

        while (spawn_steps[next] != spawn_filters)
                next++;
        r = zd_spawn_filters_read(s, r);
        if (r == 0)
                r = spawn_run(s, next + 1);
        if (r == 1)
                return; /* parked for its reference */
        if (r < 0)
                (void) zd_spawn_fail(s, r);
        zd_spawn_free(s);
}

int zd_spawn(struct zd_call *call) {
        struct spawn *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        *s = (struct spawn){
                .call = call, .caller = ZD_CALLER_INIT, .status = { -EBADF, -EBADF }, .hold = { -EBADF, -EBADF }
        };
        r = spawn_run(s, 0);
        if (r == 1)
                return 0; /* its end comes later (s may be gone already) */
        if (r < 0)
                r = zd_spawn_fail(s, r);
        zd_spawn_free(s);
        return r;
}
