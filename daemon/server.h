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
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#define ZY_MAX_CONNECTIONS 1024             /* all callers */
#define ZY_MAX_CONNECTIONS_PER_UID 128      /* one non-root uid */
#define ZY_MAX_OUTPUT (4u * 1024u * 1024u)  /* unsent replies before a client is dropped */
#define ZY_PARTIAL_TIMEOUT 10.0             /* seconds a partial message may sit idle */

struct zy_conn; /* private to server.c */

/* A call: msg is a JSON object; the fds came with it and belong to the callee, which must close
 * them. The callee replies (now or later) with zy_reply()/zy_reply_error(). */
typedef void (*zy_server_call_fn)(void *userdata, struct zy_conn *c, json_object *msg, int *fds, size_t n_fds);
/* c is closing: nothing may reply to it or keep it after this returns. */
typedef void (*zy_server_disconnect_fn)(void *userdata, struct zy_conn *c);

struct zy_server {
        struct ev_loop *loop;
        const char *socket_path;
        bool socket_activated;  /* listen_fd is systemd's: never unlinked */
        int listen_fd;          /* -EBADF: zy_server_listen() binds socket_path */
        ev_io listen_watch;
        struct zy_conn *conns;
        unsigned n_conns;
        zy_server_call_fn on_call;
        zy_server_disconnect_fn on_disconnect;
        void *userdata;
};

int zy_server_listen(struct zy_server *s);
void zy_server_stop(struct zy_server *s);

/* Replies to the current call. With continues=true the call stays open. fd (or -EBADF) is sent
 * as SCM_RIGHTS and closed here. */
void zy_reply(struct zy_conn *c, json_object *params, bool continues, int fd);
/* An error reply (params taken, may be NULL); ends the call. */
void zy_reply_error(struct zy_conn *c, const char *error, json_object *params);

const struct ucred *zy_conn_cred(const struct zy_conn *c);
const gid_t *zy_conn_groups(const struct zy_conn *c, size_t *ret_n);
bool zy_conn_is_root(const struct zy_conn *c);
/* Whether the current call asked for more replies ("more": true). */
bool zy_conn_more(const struct zy_conn *c);
/* One pointer for the layer above (the task a call waits on); NULL at first. */
void *zy_conn_get_data(const struct zy_conn *c);
void zy_conn_set_data(struct zy_conn *c, void *data);

/* Test seams (tests/fuzz). fd, a connected non-blocking AF_UNIX stream socket, becomes a
 * connection of the caller cred with these supplementary groups (copied), as if accepted; no
 * limit is checked. Takes fd on success. */
int zy_server_add_conn(struct zy_server *s, int fd, const struct ucred *cred, const gid_t *groups, size_t n_groups);
/* Fires one armed partial-message timer at once, as if its time had passed; false when none is
 * armed. */
bool zy_server_expire_partial(struct zy_server *s);
/* One line per connection, for a finding. */
void zy_server_dump(struct zy_server *s, FILE *f);
