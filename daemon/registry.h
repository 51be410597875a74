/* SPDX-License-Identifier: MIT */
/* The profile registry: profiles, their reference processes and tiers; see registry.c. */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "pidns.h"
#include "profile.h"
#include "reference.h"
#include "reference-client.h"
#include "reference-pool.h"
#include "tier.h"

struct zd_daemon;

struct zd_entry {
        struct zd_daemon *d;
        struct zp_profile *profile;
        struct zr_reference ref;
        struct zr_pidns ns;   /* the profile's pid namespace (pidns.h); pidfd < 0: none */
        ev_io ns_watch;       /* its init's pidfd: its death */
        uint64_t ref_capbset; /* what the reference dropped from its bounding set */
        bool ref_up;
        enum zd_tier tier;           /* what spawns use now */
        enum zd_tier best_tier;      /* what spawns use while the reference is up */
        char reason[256];            /* why this tier */
        ev_io ref_watch;             /* reference pidfd: its death */
        struct zd_ref_client client; /* the requests in its hands (reference-client.h) */
        struct zd_ref_pool pool;     /* its pre-forked workers, in the inherit tier (reference-pool.h) */
        ev_timer restart;            /* backoff restart */
        double backoff;
        double ref_started_at;
        unsigned restarts;
};

int zd_registry_load(struct zd_daemon *d); /* start-up: fatal errors only when nothing loads */
int zd_registry_reload(struct zd_daemon *d, json_object **ret_loaded, json_object **ret_failed);
void zd_registry_free(struct zd_daemon *d);
struct zd_entry *zd_registry_find(struct zd_daemon *d, const char *name);
/* Adds "failedFiles" (the profile files the last load or reload refused, each "PATH: why") to
 * params, when there are any: a caller told NoSuchProfile learns that its profile may be one. */
void zd_registry_add_failures(const struct zd_daemon *d, json_object *params);
/* NoSuchProfile for name, with the failed files. */
struct zd_call;
int zd_registry_no_such_profile(struct zd_call *call, const char *name);
/* The pid namespace this profile's tasks are born in: NULL with *ret_err 0 when the daemon has
 * none to give (unprivileged, no CONFIG_PID_NS, or disabled); its init is started again here if
 * it died (NULL and the errno when that fails: the spawn must fail, never run outside). */
const struct zr_pidns *zd_entry_pidns(struct zd_entry *e, int *ret_err);
json_object *zd_entry_to_json(const struct zd_entry *e);
