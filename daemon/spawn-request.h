/* SPDX-License-Identifier: MIT */
/* Spawn's request: its parameters, whether the caller may have it, its fd map; see spawn-request.c. */
#pragma once

struct zd_call;
struct spawn;
struct spawn_req;

/* The parameters through one dispatch table; InvalidParameter naming the bad one. */
int zd_spawn_parse(struct zd_call *call, struct spawn_req *req);
/* Whether the caller (s->who) may have this at all: the profile and its access list, the id, the
 * task limits, the capabilities it drops (s->keep). */
int zd_spawn_authorize(struct spawn *s);
/* The fd map: the call's fd index -> target number, each target once. */
int zd_spawn_fdmap(struct spawn *s);
