/* SPDX-License-Identifier: MIT */
/* Spawn: request + caller + profile -> plan -> worker; see spawn.c. Named spawner.h, not spawn.h:
 * the daemon folder is on the include path, where a spawn.h would hide libc's <spawn.h>. */
#pragma once

#include <sys/types.h>

#include "child.h"

#define ZD_MAX_ARGV 4096 /* argv entries */
#define ZD_MAX_ENV 4096  /* env entries */

struct zd_call;

/* Checks Spawn's parameters, decides the worker's identity, builds the plan and starts the
 * worker. Returns 0 when the worker runs (the reply goes out later, from task.c, when the status
 * pipe says exec or HELD), or the error recorded in call. */
int zd_spawn(struct zd_call *call);

/* A caller gone: its parked spawn (spawn-park.c), when the reference answers, has its worker
 * killed at the gate. */
struct zd_daemon;
struct zd_conn;
void zd_spawn_drop_conn(struct zd_daemon *d, struct zd_conn *c);

/* Test seam (tests/fuzz only; NULL in zygoted): called instead of forking a worker in the clone
 * and load tiers, with the finished plan. Returns 0 with the pid and a pollable fd that stands
 * for its pidfd (taken), or a negative errno. */
extern int (*zd_spawn_fork_hook)(const struct ze_plan *plan, pid_t *ret_pid, int *ret_pidfd);
