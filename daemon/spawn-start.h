/* SPDX-License-Identifier: MIT */
/* Spawn's last step: the worker started and tracked, and the spawn's end; see spawn-start.c. */
#pragma once

#include <sys/types.h>

struct spawn;

/* The worker: forked here (pid 0) or by the reference (its pid and pidfd, at its gate), then
 * tracked as a task that answers the Spawn. */
int zd_spawn_start(struct spawn *s, pid_t pid, int pidfd);
/* A worker forked for this spawn that it cannot keep: killed at its gate, reaped. */
void zd_spawn_drop_worker(struct spawn *s, pid_t pid, int pidfd);
/* The failed spawn's error (SpawnFailed, step fork, when none was recorded); a parked spawn's is
 * answered here. Returns the error. */
int zd_spawn_fail(struct spawn *s, int r);
void zd_spawn_free(struct spawn *s);
