/* SPDX-License-Identifier: MIT */
/*
 * Events: the streams of the callers that subscribed (oldest first, struct zd_events), their limits
 * per uid and in all, and one event of a task to each stream that may see it (root, or the
 * task's owner). The task table (task.c) emits; this file knows events, not tasks (events.h).
 */
#include <stdint.h>

#include "events.h"
#include "server.h"
#include "util.h"
#include "zygote-protocol.h"

void zd_event_emit(struct zd_events *es, const struct zd_event *e) {
        if (es->n_subscribers == 0)
                return;
        double now = zd_now();
        for (size_t i = 0; i < es->n_subscribers; i++) {
                struct zd_conn *c = es->subscribers[i];
                if (!zd_conn_is_root(c) && zd_conn_cred(c)->uid != e->uid)
                        continue;
                json_object *ev = json_object_new_object();
                json_object_object_add(ev, "type", json_object_new_string(e->type));
                json_object_object_add(ev, "id", json_object_new_string(e->id));
                json_object_object_add(ev, "owner", json_object_new_int64(e->uid)); /* whose id (task-names.c) */
                json_object_object_add(ev, "time", json_object_new_double(now));
                if (e->pid > 0)
                        json_object_object_add(ev, "pid", json_object_new_int(e->pid));
                if (e->has_status) {
                        if (e->signal)
                                json_object_object_add(ev, "signal", json_object_new_int(e->signal));
                        else
                                json_object_object_add(ev, "exitCode", json_object_new_int(e->exit_code));
                }
                json_object *p = json_object_new_object();
                json_object_object_add(p, "event", ev);
                zd_reply(c, p, true, -EBADF);
        }
}

/* Streams of one account (server.h): a user's subordinate uids are that user. */
static unsigned subscribers_of_account(const struct zd_events *es, uid_t account) {
        unsigned n = 0;
        for (size_t i = 0; i < es->n_subscribers; i++)
                if (zd_conn_account(es->subscribers[i]) == account)
                        n++;
        return n;
}

/* subscribers[] is oldest first: removal keeps the order. */
static void subscriber_remove(struct zd_events *es, size_t i) {
        memmove(&es->subscribers[i], &es->subscribers[i + 1], (es->n_subscribers - i - 1) * sizeof(es->subscribers[0]));
        es->n_subscribers--;
}

int zd_events_subscribe(struct zd_events *es, struct zd_conn *c) {
        uid_t account = zd_conn_account(c);
        unsigned mine = subscribers_of_account(es, account);

        /* So that one user cannot lock every other (a shim, root) out of Events. */
        if (account != 0 && mine >= ZD_MAX_SUBSCRIBERS_PER_UID)
                return -EDQUOT;
        if (es->n_subscribers >= ZD_MAX_SUBSCRIBERS) {
                /* Full: the uid holding the most streams gives up its oldest to a uid holding
                 * fewer, so that many uids (or root) cannot lock the rest out either. Only while
                 * the newcomer stays below it (mine + 1 < most): two uids never take turns. */
                size_t victim = SIZE_MAX;
                unsigned most = 0;
                for (size_t i = 0; i < es->n_subscribers; i++) {
                        unsigned n = subscribers_of_account(es, zd_conn_account(es->subscribers[i]));
                        if (n > most) { /* the first stream of the top uid is its oldest */
                                most = n;
                                victim = i;
                        }
                }
                if (victim == SIZE_MAX || mine + 1 >= most)
                        return -ENOSPC;
                struct zd_conn *old = es->subscribers[victim];
                subscriber_remove(es, victim);
                json_object *p = json_object_new_object();
                json_object_object_add(p, "limit", json_object_new_string("subscribers"));
                json_object_object_add(p, "max", json_object_new_int64(ZD_MAX_SUBSCRIBERS));
                zd_reply_error(old, ZY_ERROR_LIMIT_EXCEEDED, p); /* ends its stream */
        }
        es->subscribers[es->n_subscribers++] = c;
        return 0;
}

void zd_events_drop_conn(struct zd_events *es, struct zd_conn *c) {
        for (size_t i = 0; i < es->n_subscribers; i++)
                if (es->subscribers[i] == c) {
                        subscriber_remove(es, i);
                        break;
                }
}

size_t zd_events_n_subscribers(const struct zd_events *es) {
        return es->n_subscribers;
}
