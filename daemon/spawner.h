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

/* The inherit tier's parked spawns (spawn-park.c), per profile entry (registry.h): the reference's
 * replies (an ev_io on its control socket), a reply late by ZR_REF_TIMEOUT_MS (an ev_timer: the
 * reference is killed), the reference lost (each parked spawn's worker killed before exec, the
 * spawn run once in the load tier), a caller gone (its worker killed at the gate). */
struct ev_loop;
struct ev_io;
struct ev_timer;
struct zd_entry;
struct zd_daemon;
struct zd_conn;
void zd_spawn_on_ref_reply(struct ev_loop *loop, struct ev_io *w, int revents);
void zd_spawn_on_ref_timeout(struct ev_loop *loop, struct ev_timer *w, int revents);
void zd_spawn_ref_lost(struct zd_entry *e);
void zd_spawn_drop_conn(struct zd_daemon *d, struct zd_conn *c);

/* Test seam (tests/fuzz only; NULL in zygoted): called instead of forking a worker in the clone
 * and load tiers, with the finished plan. Returns 0 with the pid and a pollable fd that stands
 * for its pidfd (taken), or a negative errno. */
extern int (*zd_spawn_fork_hook)(const struct ze_plan *plan, pid_t *ret_pid, int *ret_pidfd);
