/* SPDX-License-Identifier: MIT */
/* The processes of a task's session, found through /proc; see session.c. */
#pragma once

#include <json-c/json.h>
#include <sys/types.h>

/* The pids of every process in the session sid, as a JSON array. */
json_object *zd_session_pids(pid_t sid);
/* Signals every process in the session of leader (its sid), but leader itself, each through a
 * pidfd of its own. 0, or the first error (a negative errno) but ESRCH. */
int zd_session_kill(pid_t leader, int sig);
