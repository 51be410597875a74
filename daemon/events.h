/* SPDX-License-Identifier: MIT */
/* The Events streams of the callers that subscribed; see events.c. */
#pragma once

#define ZD_MAX_SUBSCRIBERS 64        /* Events streams */
#define ZD_MAX_SUBSCRIBERS_PER_UID 8 /* Events streams of one non-root uid */

struct zd_daemon;
struct zd_conn;
struct zd_task;

/* Events: c receives every event of the tasks it may see. -EDQUOT past
 * ZD_MAX_SUBSCRIBERS_PER_UID streams of a non-root caller's uid. At ZD_MAX_SUBSCRIBERS, the oldest
 * stream of the uid holding the most ends (LimitExceeded "subscribers") if c's uid holds at least
 * two fewer; -ENOSPC otherwise. */
int zd_events_subscribe(struct zd_daemon *d, struct zd_conn *c);
/* One event of t ("create", "start", "exit", "delete") to every stream that may see it. */
void zd_event_emit(struct zd_daemon *d, const char *type, const struct zd_task *t);
/* c's stream, if it has one, ends (the connection went away). */
void zd_events_drop_conn(struct zd_daemon *d, struct zd_conn *c);
