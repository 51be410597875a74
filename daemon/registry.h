/* SPDX-License-Identifier: MIT */
/* The profile registry: profiles, their reference processes and tiers; see registry.c. */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "profile.h"
#include "reference.h"
#include "tier.h"

struct zy_daemon;

struct zy_entry {
        struct zy_daemon *d;
        struct zy_profile *profile;
        struct zy_reference ref;
        bool ref_up;
        enum zy_tier tier;       /* what spawns use now */
        enum zy_tier best_tier;  /* what spawns use while the reference is up */
        char reason[256];        /* why this tier */
        ev_io ref_watch;         /* reference pidfd: its death */
        ev_timer restart;        /* backoff restart */
        double backoff;
        double ref_started_at;
        unsigned restarts;
};

int zy_registry_load(struct zy_daemon *d);   /* start-up: fatal errors only when nothing loads */
int zy_registry_reload(struct zy_daemon *d, json_object **ret_loaded, json_object **ret_failed);
void zy_registry_free(struct zy_daemon *d);
struct zy_entry *zy_registry_find(struct zy_daemon *d, const char *name);
json_object *zy_entry_to_json(const struct zy_entry *e);
