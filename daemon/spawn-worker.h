/* SPDX-License-Identifier: MIT */
/*
 * The spawn module's private header (not for other modules: spawner.h is its API). One spawn
 * passes through three files, each calling only the ones below it:
 *   spawn.c         parse, authorize, plan; the worker through the reference or forked here
 *   spawn-park.c    the inherit tier's parked spawns, waiting for the reference's replies
 *   spawn-worker.c  (this header) a plan's tier and pipes, starting and tracking the worker, a
 *                   worker it cannot keep, a spawn's failure and end
 */
#pragma once

#include <json-c/json.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "call.h"
#include "caller.h"
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
        uint64_t keep;            /* the bounding set the worker keeps */
        uint64_t capbset_drop;    /* what the worker's bounding set loses, whoever forks it */
        struct identity id;
        struct zd_caller caller;  /* what confines the caller, for its task to carry */
        /* who the caller is for this call: a root connection's process as it is now, any other
         * the connection's (spawn.c, caller_identity()); the groups are borrowed */
        struct ucred who;
        const gid_t *who_groups;
        size_t who_n_groups;
        bool set_sched;           /* the worker takes sched (step 0c) */
        struct ze_sched sched;
        char **argv, **envp, *path_buf;
        size_t argv_bytes; /* zd_task_argv_bytes() of the request's argv */
        const char *search;       /* PATH of the request's env, NULL for the default */
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
};

/* The plan's tier: its filter mode, the reference's pidfd (clone), what the bounding set loses. */
void zd_spawn_set_tier(struct spawn *s, enum zd_tier tier);
/* The status pipe, and the hold pipe for hold or as the inherit tier's gate, new for the plan's
 * tier: a fallback to load gets pipes no lost worker holds. */
int zd_spawn_pipes(struct spawn *s);
/* The spawn again in the load tier (the reference did not take it), with the entry's program
 * (the profile may have been reloaded meanwhile) and new pipes. */
int zd_spawn_set_load(struct spawn *s);
/* The worker: forked here (pid 0) or by the reference (its pid and pidfd, at its gate), then
 * tracked as a task that answers the Spawn. */
int zd_spawn_start(struct spawn *s, pid_t pid, int pidfd);
/* A worker forked for this spawn that it cannot keep: killed at its gate, reaped. */
void zd_spawn_drop_worker(struct spawn *s, pid_t pid, int pidfd);
/* The failed spawn's error (SpawnFailed, step fork, when none was recorded); a parked spawn's is
 * answered here. Returns the error. */
int zd_spawn_fail(struct spawn *s, int r);
void zd_spawn_free(struct spawn *s);
