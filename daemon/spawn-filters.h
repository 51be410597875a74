/* SPDX-License-Identifier: MIT */
/* A spawn waiting for its caller's own seccomp filters to be read (spawn-filters.c), for spawn.c
 * and spawn-park.c. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct spawn;
struct zd_conn;
struct zd_daemon;

/* How many reads run at once: one per owner (the others of that owner wait their turn), and at
 * most this many in all. */
#define ZD_FILTER_READS_MAX 8

/* What the spawn does once the read ended (r: zd_caller_filters_finish()'s answer, the filters in
 * s->caller_filters): it goes on with its steps, and finishes or parks the spawn itself. Not
 * called for a spawn whose caller left meanwhile (it is freed). */
typedef void (*zd_spawn_resume_t)(struct spawn *s, int r);

/* The spawn waits, without holding the loop, for its caller's filters: 1 (the spawn and its
 * call's fds and parameters are this module's until resume is called), or a negative errno. */
int zd_spawn_wait_filters(struct spawn *s, zd_spawn_resume_t resume);
/* A caller gone: its waiting spawn is dropped (its read, if running, killed). */
void zd_spawn_filters_drop_conn(struct zd_daemon *d, struct zd_conn *c);
/* Whether a waiting spawn asked for this task id. */
bool zd_spawn_filters_id(struct zd_daemon *d, uid_t owner, const char *id);
