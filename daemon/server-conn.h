/* SPDX-License-Identifier: MIT */
/* The transport's own header (not for other modules: server.h is its API): a connection, and
 * what server.c, server-read.c and server-sched.c call of one another (one way: below). */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "server.h"
#include "server-owner.h"
#include "zygote-protocol.h"

/* An account: the connections of one owner (server-owner.h), what they hold, and their turn in
 * the loop (server-sched.c). */
struct zd_account {
        struct zd_account *next;      /* the server's list */
        struct zd_account *ring_next; /* in the ring of accounts with calls to serve */
        uid_t uid;
        bool in_ring;
        bool resting;     /* out of its share of the loop's time: in the server's rest list */
        ev_tstamp credit; /* seconds of calls it may take before it rests (not root's) */
        ev_tstamp credit_at;
        bool read_blocked; /* a connection stopped reading for the account's input bytes */
        unsigned n_conns;
        size_t in_bytes;                     /* read and not yet taken by a call, over all its connections */
        size_t out_bytes;                    /* replies not yet sent, likewise */
        struct zd_conn *run_head, *run_tail; /* its connections with a message to serve */
};

struct zd_conn {
        struct zd_server *s;
        struct zd_conn *prev, *next;
        int fd;
        ev_io io;
        ev_timer partial;
        ev_timer idle;            /* no call in progress, nothing to read or send: closed (server-sched.c) */
        ev_tstamp last_active;    /* the last byte read, reply queued or call ended */
        struct zd_owner owner;    /* whose account (server-owner.h) */
        struct zd_account *acct;  /* NULL once closed */
        struct zd_conn *run_next; /* in acct's run queue */
        bool queued;              /* in it */
        struct ucred cred;        /* SO_PEERCRED: who connected (the connection's limits go by it) */
        struct ucred acting;      /* who calls now: cred, or less for a root connection whose process
                              * dropped its ids since (zd_conn_set_acting) */
        gid_t *groups;
        size_t n_groups;
        char *in;
        size_t in_len, in_size;
        int in_fds[ZY_FDS_MAX];
        size_t n_in_fds;
        struct zd_out *out_head, *out_tail;
        size_t out_bytes;
        bool busy;    /* a call is waiting for its (last) reply */
        bool more;    /* the current call asked for more replies */
        bool closing; /* close once the output is flushed */
        bool dead;
        bool processing;               /* inside zd_conn_process() */
        void *data;                    /* the layer above's */
        struct zd_caller_conn *caller; /* the layer above's: what it keeps of the caller's process */
        unsigned refs;
};

struct zd_out {
        struct zd_out *next;
        size_t len, off;
        int fd; /* sent with the first byte, -EBADF if none */
        char data[];
};

/* Three layers, each calling by name only the ones below it: server.c (sockets, connections,
 * replies: what a message does) over server-read.c (bytes and fds in, messages out) over
 * server-sched.c (accounts, their budgets and turns: whose message is next). */

/* server.c */
void zd_conn_unref(struct zd_conn *c);
void zd_conn_close(struct zd_conn *c);
/* Sends what is queued; closes the connection when it is gone, or closing with nothing left. */
void zd_conn_flush(struct zd_conn *c);
/* Queues msg (and fd, taken, with its first byte) and flushes. */
void zd_conn_send(struct zd_conn *c, json_object *msg, int fd);
void zd_conn_reply_errorf(struct zd_conn *c, const char *error, const char *key, const char *value);
/* Watches for what the connection waits for now: reading while there is room, writing while
 * replies wait; closes one that is closing with nothing left to send. */
void zd_conn_update_events(struct zd_conn *c);

/* server-read.c */
/* The fds of a message not yet complete, to the closer. */
void zd_conn_drop_fds(struct zd_conn *c);
/* Reads what is there. Returns 0; -EPROTO (fds it may not take: not SCM_RIGHTS, too many, or
 * while a call is in progress) or -ETOOMANYREFS (its account's fds hold up too many closer
 * helpers) when its fds were dropped and the caller must be told and dropped; or -ECONNRESET when
 * it must close. */
int zd_conn_read(struct zd_conn *c);
/* Takes the first message buffered out of the input, with the fds that came for it (fds holds
 * ZY_FDS_MAX). Returns 0 with *ret_msg a JSON object; -EBADMSG when it is not one (its fds are
 * closed); -EMSGSIZE when the input is full with no message end (nothing taken). Only when
 * zd_conn_runnable(). */
int zd_conn_take_message(struct zd_conn *c, json_object **ret_msg, int *fds, size_t *ret_n_fds);

/* server-sched.c: accounts, their turns, their limits */
/* What the turns call up, passed by server.c to zd_server_sched_init(). The scheduler decides
 * when a connection is served, woken or dropped, never how: serving a message means replies,
 * on_call and closes, which are server.c's, and server.c calls the scheduler for every message
 * it queues and every byte it sends. So the scheduler sits below, knows a connection by its
 * fields, and reaches up through these three alone, as libev reaches its watchers. */
struct zd_sched_ops {
        /* c's turn: one message, then c's next turn, if any, queued (zd_conn_schedule()). c is
         * out of its account's queue. */
        void (*serve)(struct zd_conn *c);
        /* c's account may read again (a call took some of its input). */
        void (*may_read)(struct zd_conn *c);
        /* c is idle past its time: close it. */
        void (*close)(struct zd_conn *c);
};
int zd_account_attach(struct zd_server *s, struct zd_conn *c, uid_t uid);
/* c is closing: out of its account, whose bytes it held are given back. */
void zd_account_detach(struct zd_conn *c);
unsigned zd_account_n_conns(struct zd_server *s, uid_t uid);
/* How many more bytes c may read for its account now (SIZE_MAX: root, no account limit). */
size_t zd_account_read_room(struct zd_conn *c);
/* n bytes of c's input were taken by a call (or dropped): its account's other connections may
 * read again. */
void zd_account_consumed(struct zd_conn *c, size_t n);
/* Whether n more bytes of replies fit in c's account. */
bool zd_account_may_send(struct zd_conn *c, size_t n);
/* What a turn of c's cost the loop, in seconds, taken from its account's credit. */
void zd_account_charge(struct zd_conn *c, ev_tstamp cost);
/* Whether a complete message (or one too long) waits and no call is in progress. */
bool zd_conn_runnable(const struct zd_conn *c);
/* Queues c for a turn when a complete message waits and no call is in progress; (re)arms or
 * stops its partial-message timer otherwise. Never serves it itself. */
void zd_conn_schedule(struct zd_conn *c);
/* The idle timer of a new connection, and its callback's. */
void zd_conn_idle_start(struct zd_conn *c);
/* The dispatcher's watchers, with what they call up (ops, static). */
void zd_server_sched_init(struct zd_server *s, const struct zd_sched_ops *ops);
