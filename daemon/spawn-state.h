/* SPDX-License-Identifier: MIT */
/*
 * What one spawn holds between its steps, shared by the spawn module's files (not for other
 * modules: spawner.h is its API). One spawn passes through them in this order, each calling only
 * the ones below it:
 *   spawn.c           the recipe: the steps below, in order, then park or start
 *   spawn-request.c   parse, authorize, the fd map (spawn-request.h)
 *   spawn-identity.c  the caller now, who the worker runs as, the caller's confinement
 *   spawn-park.c      the inherit tier's parked spawns, waiting for the reference's replies
 *   spawn-plan.c      request + caller + profile -> struct ze_plan, its tier and pipes
 *   spawn-start.c     the worker started and tracked, a worker it cannot keep, a spawn's end
 *   spawn-reply.c     every Spawn reply (also task.c's), success and SpawnFailed
 */
#pragma once

#include <json-c/json.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "call.h"
#include "caller.h"
#include "caller-filter.h"
#include "child.h"
#include "registry.h"

struct spawn_req {
        json_object *argv;
        const char *profile;
        json_object *env;
        const char *cwd;
        json_object *fds;
        const char *user;
        const char *group;
        json_object *drop_caps;
        const char *id;
        bool hold;
        bool terminal;
        bool outlive;
        bool record; /* recorded with eBPF (record-bpf.h) */
};

struct identity {
        bool set_ids;
        uid_t uid;
        gid_t gid;
        gid_t *groups; /* owned */
        size_t n_groups;
};

/* Everything one spawn holds between its steps; zd_spawn_free() releases it. */
struct spawn {
        struct zd_call *call;
        struct spawn_req req;
        struct zd_entry *entry;
        uint64_t keep;         /* the bounding set the worker keeps */
        uint64_t capbset_drop; /* what the worker's bounding set loses, whoever forks it */
        struct identity id;
        struct zd_caller caller;                 /* what confines the caller, for its task to carry */
        struct zd_caller_filters caller_filters; /* its own seccomp programs, oldest first */
        /* who the caller is for this call: a root connection's process as it is now, any other
         * the connection's (zd_spawn_identify()); the groups are borrowed */
        struct ucred who;
        const gid_t *who_groups;
        size_t who_n_groups;
        bool set_sched; /* the worker takes sched (step 0c) */
        struct ze_sched sched;
        char **argv, **envp, *path_buf;
        size_t argv_bytes;  /* zd_task_argv_bytes() of the request's argv */
        const char *search; /* PATH of the request's env, NULL for the default */
        size_t path_len;
        struct ze_fdmap *map;
        size_t n_map;
        struct sock_fprog prog;
        struct ze_plan plan;
        enum zd_tier tier;
        const struct zr_pidns *ns; /* the profile's pid namespace; NULL: zygoted's (fallback) */
        int status[2], hold[2];
        char *profile_name; /* the entry's profile may be replaced while the spawn is parked */
        bool parked;
        /* the worker waits at its gate until the manager moved it into a scope of its own
         * (spawn-scope.c): the caller asked it to outlive it, or a user's zygoted may not put it
         * in the caller's cgroup */
        bool scope;
};
