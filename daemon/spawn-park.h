/* SPDX-License-Identifier: MIT */
/* The inherit tier's parked spawns (spawn-park.c), for spawn.c and spawn-request.c;
 * zd_spawn_drop_conn() is in spawner.h. */
#pragma once

#include <stdbool.h>

struct spawn;
struct zd_daemon;

/* The plan goes to the profile's reference and the spawn waits in the profile's queue: 1 (the
 * spawn is the queue's now). 0: nothing reached the reference, the spawn is set up for the load
 * tier. < 0: refused (the queue is full) or no memory. */
int zd_spawn_park(struct spawn *s);
/* Whether a parked spawn asked for this task id. */
bool zd_spawn_parked_id(struct zd_daemon *d, uid_t owner, const char *id);
