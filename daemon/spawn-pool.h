/* SPDX-License-Identifier: MIT */
/* The inherit tier's spawns served by a pool worker (spawn-pool.c), for spawn.c. */
#pragma once

struct spawn;

/* The plan to an idle pool worker of the profile, which is tracked as the spawn's task: 1. 0: the
 * pool had none (empty, stopped, or its workers gone): the spawn goes to the reference. < 0: the
 * worker was taken but its task could not be made (the worker is dropped at its gate). */
int zd_spawn_pooled(struct spawn *s);
