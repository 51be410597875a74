/* SPDX-License-Identifier: MIT */
/* A task's own scope unit, when it does not live in its caller's cgroup; see spawn-scope.c. */
#pragma once

struct spawn;
struct zd_task;

/* Decides whether the task gets a scope of its own (s->scope); a user's zygoted that may not
 * join the caller's cgroups then drops them. A spawn step: 0, or the error recorded. */
int zd_spawn_place(struct spawn *s);

/* The worker of t waits at its gate (write end: gate, taken): asks for its scope, and opens the
 * gate once the manager moved it there, or closes it with the reason recorded in t. */
void zd_spawn_scope_begin(struct spawn *s, struct zd_task *t, int gate);
