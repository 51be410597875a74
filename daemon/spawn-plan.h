/* SPDX-License-Identifier: MIT */
/* Spawn's plan: request + caller + profile -> struct ze_plan, its tier and pipes; see spawn-plan.c. */
#pragma once

#include "tier.h"

struct spawn;

/* The one plain struct the worker applies (s->plan), in the tier the profile and the caller
 * allow, with its pipes. */
int zd_spawn_plan(struct spawn *s);
/* The plan's tier: its filter mode, the reference's pidfd (clone), what the bounding set loses. */
void zd_spawn_set_tier(struct spawn *s, enum zd_tier tier);
/* The status pipe, and the hold pipe for hold or as the inherit tier's gate, new for the plan's
 * tier: a fallback to load gets pipes no lost worker holds. */
int zd_spawn_pipes(struct spawn *s);
/* The spawn again in the load tier (the reference did not take it), with the entry's program
 * (the profile may have been reloaded meanwhile) and new pipes. */
int zd_spawn_set_load(struct spawn *s);
