/* SPDX-License-Identifier: MIT */
/*
 * The transport's turns and accounts (server.c's facet; server-conn.h).
 *
 * Every connection belongs to an account, the uid that owns its caller (server-owner.h). The
 * loop serves accounts in turn, not connections: a connection with a complete message waits in
 * its account's queue, and the dispatcher takes one message of the account at the head of the
 * ring, then one of the next, so that another account's call waits behind at most one message
 * of each account with calls to serve, however many connections each has. After
 * ZD_DISPATCH_SLICE of calls the dispatcher lets the loop read its fds again: it is an ev_check
 * watcher, run once in every iteration of the loop after the fds that were ready were handled
 * (an ev_idle one would wait for an iteration with none ready, which a busy attacker never
 * leaves), with an ev_idle watcher that keeps poll from blocking while calls wait. So a call
 * that just arrived takes its place in the ring within one slice.
 *
 * Nor may one account other than root's keep the loop busy: it takes at most ZD_ACCOUNT_SHARE of
 * the loop's time (ZD_ACCOUNT_BURST at once), and past that rests until it is owed some again,
 * while the others are served. So zygoted is never saturated by one user: an idle process is
 * one the kernel runs as soon as another caller's message wakes it, where a process that is
 * always busy waits its turn for a core behind every other busy one.
 *
 * An account other than root's also bounds what its connections hold together: bytes read and
 * not yet taken by a call (a connection past it stops reading until a call takes some), and
 * replies not yet sent (a connection past it is dropped, as one past its own limit is).
 *
 * Idle: a connection with no call in progress, nothing read and nothing to send for
 * idle_timeout seconds is closed. A call in progress is never idle, whatever it waits for (a
 * Wait for a task that runs for days, an Events stream with no event, a parked Spawn held
 * before exec): the call is what the connection is for, and closing it would end the call. A
 * reply that waits to be sent is not idle either: its client's slowness is bounded by
 * ZD_MAX_OUTPUT and the account's output instead. The timer runs again from the last byte read,
 * the last reply queued and the end of the last call.
 */
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "server-conn.h"

static struct zd_account *account_find(struct zd_server *s, uid_t uid) {
        for (struct zd_account *a = s->accounts; a; a = a->next)
                if (a->uid == uid)
                        return a;
        return NULL;
}

unsigned zd_account_n_conns(struct zd_server *s, uid_t uid) {
        struct zd_account *a = account_find(s, uid);
        return a ? a->n_conns : 0;
}

int zd_account_attach(struct zd_server *s, struct zd_conn *c, uid_t uid) {
        struct zd_account *a = account_find(s, uid);

        if (!a) {
                a = calloc(1, sizeof(*a));
                if (!a)
                        return -ENOMEM;
                a->uid = uid;
                a->credit = ZD_ACCOUNT_BURST;
                a->credit_at = ev_time();
                a->next = s->accounts;
                s->accounts = a;
        }
        a->n_conns++;
        c->acct = a;
        return 0;
}

static void ring_remove(struct zd_server *s, struct zd_account *a) {
        struct zd_account *prev = NULL;

        for (struct zd_account *r = s->ring_head; r; prev = r, r = r->ring_next) {
                if (r != a)
                        continue;
                if (prev)
                        prev->ring_next = a->ring_next;
                else
                        s->ring_head = a->ring_next;
                if (s->ring_tail == a)
                        s->ring_tail = prev;
                break;
        }
        a->ring_next = NULL;
        a->in_ring = false;
}

static void rest_remove(struct zd_server *s, struct zd_account *a) {
        for (struct zd_account **p = &s->rest_head; *p; p = &(*p)->ring_next)
                if (*p == a) {
                        *p = a->ring_next;
                        break;
                }
        a->ring_next = NULL;
        a->resting = false;
}

static void ring_push(struct zd_server *s, struct zd_account *a) {
        if (a->in_ring || a->resting)
                return;
        a->in_ring = true;
        a->ring_next = NULL;
        if (s->ring_tail)
                s->ring_tail->ring_next = a;
        else
                s->ring_head = a;
        s->ring_tail = a;
        ev_check_start(s->loop, &s->dispatch);
        ev_idle_start(s->loop, &s->dispatch_spin);
}

static void runq_remove(struct zd_conn *c) {
        struct zd_account *a = c->acct;
        struct zd_conn *prev = NULL;

        if (!c->queued)
                return;
        for (struct zd_conn *r = a->run_head; r; prev = r, r = r->run_next) {
                if (r != c)
                        continue;
                if (prev)
                        prev->run_next = c->run_next;
                else
                        a->run_head = c->run_next;
                if (a->run_tail == c)
                        a->run_tail = prev;
                break;
        }
        c->run_next = NULL;
        c->queued = false;
}

void zd_account_detach(struct zd_conn *c) {
        struct zd_account *a = c->acct;
        struct zd_server *s = c->s;

        if (!a)
                return;
        runq_remove(c);
        zd_account_consumed(c, c->in_len); /* its input is free: the others may read */
        a->out_bytes -= c->out_bytes;
        c->acct = NULL;
        if (--a->n_conns > 0)
                return;
        if (a->in_ring)
                ring_remove(s, a);
        if (a->resting)
                rest_remove(s, a);
        for (struct zd_account **p = &s->accounts; *p; p = &(*p)->next)
                if (*p == a) {
                        *p = a->next;
                        break;
                }
        free(a);
}

size_t zd_account_read_room(struct zd_conn *c) {
        struct zd_account *a = c->acct;

        if (!a || a->uid == 0)
                return SIZE_MAX;
        if (a->in_bytes >= ZD_MAX_INPUT_PER_ACCOUNT) {
                a->read_blocked = true;
                return 0;
        }
        return ZD_MAX_INPUT_PER_ACCOUNT - a->in_bytes;
}

void zd_account_consumed(struct zd_conn *c, size_t n) {
        struct zd_account *a = c->acct;

        if (!a)
                return; /* a connection already out of its account: nothing to give back */
        a->in_bytes -= n;
        /* half the limit free before its connections read again: each wake-up is a change of
         * every such connection's watcher, not one per message taken */
        if (!a->read_blocked || a->in_bytes > ZD_MAX_INPUT_PER_ACCOUNT / 2)
                return;
        a->read_blocked = false;
        /* not a closing one: its update may close it, under this loop */
        for (struct zd_conn *o = c->s->conns; o; o = o->next)
                if (o->acct == a && o != c && !o->closing)
                        c->s->sched_ops->may_read(o);
}

bool zd_account_may_send(struct zd_conn *c, size_t n) {
        struct zd_account *a = c->acct;

        return !a || a->uid == 0 || a->out_bytes + n <= ZD_MAX_OUTPUT_PER_ACCOUNT;
}

void zd_account_charge(struct zd_conn *c, ev_tstamp cost) {
        if (c->acct && c->acct->uid != 0)
                c->acct->credit -= cost;
}

uid_t zd_conn_account(const struct zd_conn *c) {
        /* In zygoted's own user namespace the uid is the owner, and a root connection's process
         * that became another user since counts as that user, as it calls as one. */
        return c->owner.own_ns ? c->acting.uid : c->owner.account;
}

bool zd_conn_runnable(const struct zd_conn *c) {
        if (c->busy || c->dead || c->closing)
                return false;
        return c->in_len >= ZY_MESSAGE_MAX || memchr(c->in, 0, c->in_len);
}

void zd_conn_schedule(struct zd_conn *c) {
        struct zd_account *a = c->acct;

        if (c->dead || c->queued || !a || c->busy || c->closing)
                return;
        if (!zd_conn_runnable(c)) {
                if (c->in_len > 0) {
                        /* A partial message: it must complete soon (slowloris). */
                        if (!ev_is_active(&c->partial)) {
                                ev_timer_set(&c->partial, ZD_PARTIAL_TIMEOUT, 0.);
                                ev_timer_start(c->s->loop, &c->partial);
                        }
                } else
                        ev_timer_stop(c->s->loop, &c->partial);
                return;
        }
        ev_timer_stop(c->s->loop, &c->partial);
        c->queued = true;
        c->run_next = NULL;
        if (a->run_tail)
                a->run_tail->run_next = c;
        else
                a->run_head = c;
        a->run_tail = c;
        ring_push(c->s, a);
}

/* The credit of a, refilled for the time since it was last looked at. */
static ev_tstamp account_credit(struct zd_account *a, ev_tstamp now) {
        a->credit += (now - a->credit_at) * ZD_ACCOUNT_SHARE;
        if (a->credit > ZD_ACCOUNT_BURST)
                a->credit = ZD_ACCOUNT_BURST;
        a->credit_at = now;
        return a->credit;
}

/* When a, resting, is owed some time again. */
static ev_tstamp account_wake(const struct zd_account *a) {
        return a->credit_at + (a->credit < 0 ? -a->credit / ZD_ACCOUNT_SHARE : 0) + 0.0005;
}

static void rest_arm(struct zd_server *s, ev_tstamp now) {
        ev_tstamp first = 0;

        for (struct zd_account *a = s->rest_head; a; a = a->ring_next)
                if (first == 0 || account_wake(a) < first)
                        first = account_wake(a);
        ev_timer_stop(s->loop, &s->rest_timer);
        if (first > 0) {
                ev_timer_set(&s->rest_timer, first > now ? first - now : 0., 0.);
                ev_timer_start(s->loop, &s->rest_timer);
        }
}

/* a is past its share: it rests, its connections queued, until it is owed time again. */
static void account_rest(struct zd_server *s, struct zd_account *a, ev_tstamp now) {
        a->resting = true;
        a->ring_next = s->rest_head;
        s->rest_head = a;
        rest_arm(s, now);
}

static void on_rest_timer(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_server *s = w->data;
        ev_tstamp now = ev_time();

        for (struct zd_account *a = s->rest_head, *next; a; a = next) {
                next = a->ring_next;
                if (account_credit(a, now) <= 0)
                        continue;
                rest_remove(s, a);
                if (a->run_head)
                        ring_push(s, a);
        }
        rest_arm(s, now);
}

/* One message of the account at the head of the ring, then the next account's, for a slice. */
static void on_dispatch(struct ev_loop *loop, ev_check *w, int revents) {
        struct zd_server *s = w->data;
        ev_tstamp start = ev_time();

        while (s->ring_head) {
                struct zd_account *a = s->ring_head;
                s->ring_head = a->ring_next;
                if (!s->ring_head)
                        s->ring_tail = NULL;
                a->in_ring = false;
                a->ring_next = NULL;
                struct zd_conn *c = a->run_head;
                if (!c)
                        continue;
                ev_tstamp now = ev_time();
                if (a->uid != 0 && account_credit(a, now) <= 0) {
                        account_rest(s, a, now);
                        continue;
                }
                a->run_head = c->run_next;
                if (!a->run_head)
                        a->run_tail = NULL;
                c->run_next = NULL;
                c->queued = false;
                if (a->run_head)
                        ring_push(s, a); /* its next connection's turn comes after the others' */
                s->sched_ops->serve(c);  /* charges its account, queues its next message */
                if (ev_time() - start >= ZD_DISPATCH_SLICE)
                        break;
        }
        if (!s->ring_head) {
                ev_check_stop(loop, w);
                ev_idle_stop(loop, &s->dispatch_spin);
        }
}

/* Only there to keep the loop from blocking in poll while calls wait. */
static void on_dispatch_spin(struct ev_loop *loop, ev_idle *w, int revents) {
}

static ev_tstamp idle_timeout(const struct zd_server *s) {
        return s->idle_timeout > 0 ? s->idle_timeout : ZD_IDLE_TIMEOUT;
}

static void on_idle_timeout(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_conn *c = w->data;
        ev_tstamp t = idle_timeout(c->s), since = ev_now(loop) - c->last_active;

        if (c->busy || c->out_head || c->in_len > 0 || c->queued || since < t) {
                w->repeat = c->busy || c->out_head || c->in_len > 0 || c->queued ? t : t - since;
                ev_timer_again(loop, w);
                return;
        }
        zd_log(LOG_INFO, "closing connection of uid %u: idle for %.0fs", (unsigned) c->cred.uid, t);
        c->s->sched_ops->close(c);
}

void zd_conn_idle_start(struct zd_conn *c) {
        c->last_active = ev_now(c->s->loop);
        ev_timer_init(&c->idle, on_idle_timeout, 0., idle_timeout(c->s));
        c->idle.data = c;
        ev_timer_again(c->s->loop, &c->idle);
}

void zd_server_sched_init(struct zd_server *s, const struct zd_sched_ops *ops) {
        s->sched_ops = ops;
        ev_check_init(&s->dispatch, on_dispatch);
        s->dispatch.data = s;
        ev_idle_init(&s->dispatch_spin, on_dispatch_spin);
        ev_timer_init(&s->rest_timer, on_rest_timer, 0., 0.);
        s->rest_timer.data = s;
}
