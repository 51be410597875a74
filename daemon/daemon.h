/* SPDX-License-Identifier: MIT */
/*
 * zygoted's shared state. One process, one thread, one libev loop; main.c owns the struct and
 * every module works on its own part of it. Who may call whom (docs/ARCHITECTURE.md):
 *
 *   main.c          options, start-up, signals, shutdown, systemd status   (calls anyone)
 *   adopt.c         tasks and references of an earlier zygoted, from the fd store
 *   methods.c       the dispatch table: every varlink method and its permission
 *   spawn.c         request + caller + profile -> struct ze_plan -> worker (all tiers): the
 *                   recipe over spawn-request.c, spawn-identity.c, spawn-plan.c, then
 *   spawn-park.c    the inherit tier's spawns parked until the reference replies
 *   spawn-start.c   the worker started and tracked, a spawn's end
 *   filter.c        GetFilter: compiled seccomp programs as sealed memfds (filter-cache.c)
 *   registry.c      profiles, their reference processes and tiers, reloads, restarts
 *   reference-client.c  a reference's requests in flight, each with its sender's completion
 *   task.c          the task table: pidfd watchers, exit status, waiters, audit lines
 *   spawn-reply.c   every Spawn reply, success and SpawnFailed
 *   events.c        the Events streams: subscribers, their limits, one task's event
 *   task-fdname.c   a task's name in systemd's fd store, and back
 *   server.c        the transport: socket, connections, framing, fds, limits
 *   fork-gate.c     before a fork: the holders of other callers' fds, registered, let them go
 *   sd.c            systemd primitives: activation, notify, the fd store
 *   session.c       a task's session, through /proc
 *   tier.c          tier names
 *   log.c           logging to the journal (structured) or stderr
 *
 * No module calls one above it in this list, and no two modules call each other.
 */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "filter-cache.h"
#include "probe.h"
#include "scope.h"
#include "sd.h"
#include "nspool.h"
#include "record-bpf.h"
#include "server.h"
#include "tier.h"

struct zd_entry;
struct zd_task;
struct zd_parked;
struct zd_container_start;
struct zd_container_delete;
struct lh_table;

struct zd_daemon {
        struct ev_loop *loop;
        char **profile_dirs;
        size_t n_profile_dirs;
        enum zd_tier forced_tier;
        unsigned pool_max; /* pre-forked workers per profile, at most (inherit tier); 0: no pool */
        char helper[4096];
        int helper_fd; /* the helper, opened once: references and probes are exec'd through it */

        bool privileged;         /* running as root: workers switch to the callers' ids */
        bool own_filter;         /* zygoted runs under a seccomp filter of its own (own-filter.c) */
        unsigned shared_filters; /* of them, those every process of its pid namespace has, or 0 */
        bool fork_workers;       /* --fork-workers: references fork every worker (no worker-nocopy.h) */
        unsigned caller_cache;   /* what connections keep of their caller between calls (caller.h's ZD_CALLER_KEEP*) */
        bool caller_filters;  /* privileged, and reads a caller's own seccomp filters for its task (caller-filter.h) */
        uint64_t nofile_soft; /* RLIMIT_NOFILE soft limit before we raised it (0: unchanged) */
        uid_t uid;
        gid_t gid;
        struct ze_features features;

        struct zd_entry **entries;
        size_t n_entries;
        json_object *profile_failures;  /* "PATH: why" of each file the last load or reload refused */
        struct zd_filter_cache filters; /* GetFilter's compiled programs */

        struct lh_table *tasks;
        unsigned long next_task;
        unsigned n_tasks;
        struct zd_task *dying;   /* deleted tasks whose exit has not been seen (task.c) */
        struct zd_events events; /* Events streams (events.h) */

        struct zd_server server;
        const char *container_root; /* the containers' state (--container-root) */
        char *container_root_buf;
        struct zd_container_start *container_starts;   /* CreateContainer calls whose worker runs (container.c) */
        struct zd_container_delete *container_deletes; /* Deletes whose child runs (container-delete.c) */
        struct zd_recorder recorder;                   /* eBPF recordings (record-bpf.c) */
        struct zd_nspool nspool;                       /* namespaces made ahead for containers (nspool.c) */
        struct zd_parked *parked;           /* inherit-tier spawns the references have in hand (spawn-park.c) */
        struct zd_sd_activation activation; /* passed fds, until adopted */
        struct zd_scopes scopes;            /* transient scope units asked of the manager (scope.c) */
        ev_timer watchdog;
        ev_timer status_timer;

        ev_signal sig_term, sig_int, sig_hup;
        bool stopping;
        unsigned long spawned, failed;
};
