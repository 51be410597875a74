/* SPDX-License-Identifier: MIT */
/* The transport's own header (not for other modules: server.h is its API): a connection, and
 * what server.c (sockets, connections, replies) and server-read.c (framing, fds, calls) call of
 * each other. */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "server.h"
#include "zygote-protocol.h"

struct zd_conn {
        struct zd_server *s;
        struct zd_conn *prev, *next;
        int fd;
        ev_io io;
        ev_timer partial;
        ev_idle kick;        /* process buffered calls after an asynchronous reply */
        struct ucred cred;   /* SO_PEERCRED: who connected (the connection's limits go by it) */
        struct ucred acting; /* who calls now: cred, or less for a root connection whose process
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

/* server.c */
void zd_conn_unref(struct zd_conn *c);
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
/* Reads what is there. Returns 0, -EPROTO when an error reply went out and the connection is
 * closing, or -ECONNRESET when it must close. */
int zd_conn_read(struct zd_conn *c);
/* Hands the complete messages buffered to on_call, one call at a time. */
void zd_conn_process(struct zd_conn *c);
/* The fork gate's release stage (fork-gate.h), registered while listening. */
int zd_server_drop_partial_fds(void *userdata);
