/* SPDX-License-Identifier: MIT */
/*
 * The transport: the listening socket, connections, NUL-framed JSON messages with SCM_RIGHTS
 * fds, the caller's credentials, and every limit a client could push on. It knows nothing of
 * methods or tasks: a complete message goes to on_call, a connection that goes away to
 * on_disconnect. See server.c.
 */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fork-gate.h"
#include "server-closer.h"

#define ZD_MAX_CONNECTIONS 1024                         /* all callers */
#define ZD_ROOT_RESERVE 64                              /* of those, only root of zygoted's user namespace gets */
#define ZD_MAX_CONNECTIONS_PER_UID 128                  /* one account other than root's (server-owner.h) */
#define ZD_MAX_OUTPUT (4u * 1024u * 1024u)              /* unsent replies before a client is dropped */
#define ZD_MAX_OUTPUT_PER_ACCOUNT (16u * 1024u * 1024u) /* the same, over one account's connections */
#define ZD_MAX_INPUT_PER_ACCOUNT (256u * 1024u)         /* bytes read, not yet taken by a call, per account */
#define ZD_PARTIAL_TIMEOUT 10.0                         /* seconds a partial message may sit idle */
#define ZD_IDLE_TIMEOUT 120.0                           /* seconds a connection may sit with nothing in progress */
#define ZD_DISPATCH_SLICE 0.002                         /* seconds of calls before the loop looks at its fds again */
#define ZD_ACCOUNT_SHARE 0.5        /* of the loop's time, what one account other than root's may take */
#define ZD_ACCOUNT_BURST 0.020      /* seconds of calls it may take at once within that share */
#define ZD_ACCEPT_RETRY 1.0         /* seconds before accept() is tried again, out of fds */
#define ZD_ACCEPT_LOG_INTERVAL 60.0 /* seconds between two "out of fds" lines */

struct zd_conn;        /* private to server.c */
struct zd_account;     /* server-conn.h */
struct zd_caller_conn; /* caller.h */
struct zd_sched_ops;   /* server-conn.h */

/* A call: msg is a JSON object; the fds came with it and belong to the callee, which must close
 * them. The callee replies (now or later) with zd_reply()/zd_reply_error(). */
typedef void (*zd_server_call_fn)(void *userdata, struct zd_conn *c, json_object *msg, int *fds, size_t n_fds);
/* c is closing: nothing may reply to it or keep it after this returns. */
typedef void (*zd_server_disconnect_fn)(void *userdata, struct zd_conn *c);

struct zd_server {
        struct ev_loop *loop;
        const char *socket_path;
        bool socket_activated; /* listen_fd is systemd's: never unlinked */
        int listen_fd;         /* -EBADF: zd_server_listen() binds socket_path */
        ev_io listen_watch;
        /* Out of fds (EMFILE), accept() fails while the listening socket stays readable: the
         * watcher stops until a connection closes or the retry timer fires. */
        ev_timer accept_retry;
        bool accept_paused;
        ev_tstamp accept_logged;  /* when the last "out of fds" line went out */
        unsigned accept_unlogged; /* pauses since, not logged */
        struct zd_conn *conns;
        unsigned n_conns;
        /* Accounts (server-owner.h): the connections of one owner, served in turn, one message
         * of each account with a message waiting before the next of any (server-sched.c). */
        struct zd_account *accounts;
        struct zd_account *ring_head, *ring_tail;
        ev_check dispatch;            /* active while the ring is not empty */
        ev_idle dispatch_spin;        /* likewise: poll does not block meanwhile */
        struct zd_account *rest_head; /* accounts past their share, until rest_timer */
        ev_timer rest_timer;
        const struct zd_sched_ops *sched_ops; /* what the turns call up (server-conn.h) */
        ev_tstamp idle_timeout;               /* 0: ZD_IDLE_TIMEOUT */
        uint64_t own_userns;                  /* zygoted's user namespace (server-owner.h), read at listen */
        bool owner_by_proc;                   /* set before listen: find owners by /proc/PID/ns/user only */
        /* Closes the fds callers pass, in helper processes (server-closer.h): a close may wait
         * on the caller (a FUSE file's FLUSH), and this loop must not. */
        struct zd_closer closer;
        /* While listening: before a fork, a connection holding the fds of a message not yet
         * complete is dropped (they go to the closer, the caller gets InvalidParameter "fds"). */
        struct zd_fork_holder fork_holder;
        zd_server_call_fn on_call;
        zd_server_disconnect_fn on_disconnect;
        void *userdata;
};

/* Without helpers to close callers' fds (they could not start, or disabled), the fds are closed
 * on the loop as before: closer.error says why; the daemon serves all the same. */
int zd_server_listen(struct zd_server *s);
/* Closes an fd a caller of uid passed (or -EBADF: nothing), never waiting for it. */
static inline void zd_server_close_caller_fd(struct zd_server *s, int fd, uid_t uid) {
        zd_closer_close(&s->closer, fd, uid);
}
void zd_server_stop(struct zd_server *s);
/* How many connections are open. */
static inline unsigned zd_server_n_conns(const struct zd_server *s) {
        return s->n_conns;
}

/* Replies to the current call. With continues=true the call stays open. fd (or -EBADF) is sent
 * as SCM_RIGHTS and closed here. */
void zd_reply(struct zd_conn *c, json_object *params, bool continues, int fd);
/* An error reply (params taken, may be NULL); ends the call. */
void zd_reply_error(struct zd_conn *c, const char *error, json_object *params);

/* Who calls: SO_PEERCRED's, or for a root connection what its process is now (methods.c reads
 * it at each call: zd_conn_set_acting). Ownership and every permission go by it. */
const struct ucred *zd_conn_cred(const struct zd_conn *c);
/* SO_PEERCRED as at connect: to find the process that connected (caller.c). */
const struct ucred *zd_conn_peer_cred(const struct zd_conn *c);
bool zd_conn_root_at_connect(const struct zd_conn *c);
void zd_conn_set_acting(struct zd_conn *c, uid_t uid, gid_t gid);
const gid_t *zd_conn_groups(const struct zd_conn *c, size_t *ret_n);
/* The connection's socket, for what the kernel says of its peer (SO_PEERPIDFD); borrowed. */
int zd_conn_fd(const struct zd_conn *c);
bool zd_conn_is_root(const struct zd_conn *c);
/* The account the connection's calls count in, for every per-user budget (tasks, argv bytes,
 * Events streams, fds held, compiles, cached programs): the uid that owns the caller's user
 * namespace chain (server-owner.h), or for a caller in zygoted's own user namespace the uid it
 * calls as (zd_conn_cred). 0 only for root of zygoted's own user namespace, which no per-user
 * budget limits; ZD_ACCOUNT_ROOT_NS and ZD_ACCOUNT_UNKNOWN are limited like any user. */
uid_t zd_conn_account(const struct zd_conn *c);
/* Runs fn(userdata) for c's caller outside its turn (a spawn resumed when a child it waited for
 * ended) and charges what it took to c's account, as a turn's cost: an account's work never
 * escapes its share of the loop. c stays valid during fn, even if fn's reply closes it. */
void zd_conn_run_charged(struct zd_conn *c, void (*fn)(void *userdata), void *userdata);
/* Whether the current call asked for more replies ("more": true). */
bool zd_conn_more(const struct zd_conn *c);
/* One pointer for the layer above (the task a call waits on); NULL at first. */
void *zd_conn_get_data(const struct zd_conn *c);
void zd_conn_set_data(struct zd_conn *c, void *data);
/* What the layer above keeps of the process that connected between its calls (caller.h), NULL at
 * first; the layer above frees it in on_disconnect. */
struct zd_caller_conn **zd_conn_caller(struct zd_conn *c);

/* Test seams (tests/fuzz). fd, a connected non-blocking AF_UNIX stream socket, becomes a
 * connection of the caller cred with these supplementary groups (copied), as if accepted; no
 * limit is checked. Takes fd on success. */
int zd_server_add_conn(struct zd_server *s, int fd, const struct ucred *cred, const gid_t *groups, size_t n_groups);
/* Fires one armed partial-message timer at once, as if its time had passed; false when none is
 * armed. */
bool zd_server_expire_partial(struct zd_server *s);
/* One line per connection, for a finding. */
void zd_server_dump(struct zd_server *s, FILE *f);
