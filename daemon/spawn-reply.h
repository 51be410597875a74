/* SPDX-License-Identifier: MIT */
/*
 * Every reply to a Spawn, written here: the task started (its id, pid, tier and pidfd), or
 * SpawnFailed with the step that failed, its errno and a message. Below the task table: task.c
 * answers from the status pipe, spawn-start.c and spawn-park.c before there is a task. See
 * spawn-reply.c.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "tier.h"

struct zd_call;
struct zd_conn;

/* The step named in a SpawnFailed that happened in the daemon, before the worker ran. */
#define ZD_SPAWN_STEP_FORK "fork"           /* the worker could not be started */
#define ZD_SPAWN_STEP_REFERENCE "reference" /* the reference was lost with the spawn */

/* The worker runs (or is held): its id, pid, tier and pidfd (-EBADF: none; taken). more: the
 * call stays open until the task's exit. */
void zd_spawn_reply_spawned(struct zd_conn *c, const char *id, pid_t pid, enum zd_tier tier, int pidfd, bool more);
/* The worker's own failure record: SpawnFailed naming the step (child.h's) and errno; a
 * container hook's, with the hook's index and how it ended in the message. */
struct ze_status;
void zd_spawn_reply_failed(struct zd_conn *c, const struct ze_status *st);
/* SpawnFailed from a step the daemon names, with a message (NULL: the errno's text). */
void zd_spawn_reply_failed_text(struct zd_conn *c, const char *step, int err, const char *message);
/* SpawnFailed recorded in the call (the dispatcher, or zd_spawn_reply_recorded(), answers it):
 * step, errno -r, and message (NULL: the errno's text). Returns r. */
int zd_spawn_fail_call(struct zd_call *call, int r, const char *step, const char *message);
/* The error recorded in the call, answered now: a call that left its handler (parked). */
void zd_spawn_reply_recorded(struct zd_call *call);
