/* SPDX-License-Identifier: MIT */
/* The Events streams of the callers that subscribed; see events.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define ZD_MAX_SUBSCRIBERS 64        /* Events streams */
#define ZD_MAX_SUBSCRIBERS_PER_UID 8 /* Events streams of one non-root uid */

struct zd_conn;

/* Wall-clock time in seconds, to the microsecond: the times the protocol reports (a task's
 * createdAt, startedAt, exitedAt, an event's time). */
static inline double zd_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) (ts.tv_nsec / 1000) / 1e6;
}

/* The streams, oldest first (zd_daemon's events). */
struct zd_events {
        struct zd_conn *subscribers[ZD_MAX_SUBSCRIBERS];
        size_t n_subscribers;
};

/* One event of a task, as its stream says it. */
struct zd_event {
        const char *type; /* "create", "start", "exit", "delete" */
        const char *id;
        uid_t uid;       /* the task's owner: who (besides root) may see it */
        pid_t pid;       /* 0: none (yet) */
        bool has_status; /* exited with a known status: signal, else exit_code */
        int signal, exit_code;
};

/* Events: c receives every event of the tasks it may see. -EDQUOT past
 * ZD_MAX_SUBSCRIBERS_PER_UID streams of a non-root caller's uid. At ZD_MAX_SUBSCRIBERS, the oldest
 * stream of the uid holding the most ends (LimitExceeded "subscribers") if c's uid holds at least
 * two fewer; -ENOSPC otherwise. */
int zd_events_subscribe(struct zd_events *es, struct zd_conn *c);
/* The event to every stream that may see it. */
void zd_event_emit(struct zd_events *es, const struct zd_event *ev);
/* How many streams are open. */
size_t zd_events_n_subscribers(const struct zd_events *es);
/* c's stream, if it has one, ends (the connection went away). */
void zd_events_drop_conn(struct zd_events *es, struct zd_conn *c);
