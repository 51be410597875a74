/* SPDX-License-Identifier: MIT */
/*
 * The listening socket and the connections: NUL-framed JSON messages with SCM_RIGHTS fds, the
 * caller's identity from SO_PEERCRED/SO_PEERGROUPS, and every limit a client could push on.
 *
 * One call per connection is handled at a time (varlink replies come in call order); bytes that
 * arrive meanwhile are buffered (up to ZY_MESSAGE_MAX) and parsed when the call completes, and
 * EOF is noticed at once so that a waiter or subscriber that went away is dropped.
 *
 * Fds: the kernel hands out a sender's SCM_RIGHTS with the read that reaches the first byte of
 * the sendmsg that carried them. They are collected per connection and given to the next message
 * that completes; a client that passes fds must therefore wait for each reply before its next
 * call (every varlink client does). A malformed message drops that peer, never the daemon.
 *
 * This file: the listening socket, connections, replies, what a message does; reading and framing
 * are server-read.c, the accounts' turns server-sched.c, both below it (server-conn.h).
 */
#include <fcntl.h>
#include <grp.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>

#include "fd-util.h"
#include "json-dispatch.h"
#include "log.h"
#include "server.h"
#include "server-conn.h"
#include "util.h"
#include "zygote-protocol.h"

static void accept_resume(struct zd_server *s);

bool zd_conn_is_root(const struct zd_conn *c) {
        return c->acting.uid == 0;
}

bool zd_conn_root_at_connect(const struct zd_conn *c) {
        return c->cred.uid == 0;
}

const struct ucred *zd_conn_cred(const struct zd_conn *c) {
        return &c->acting;
}

const struct ucred *zd_conn_peer_cred(const struct zd_conn *c) {
        return &c->cred;
}

void zd_conn_set_acting(struct zd_conn *c, uid_t uid, gid_t gid) {
        c->acting.uid = uid;
        c->acting.gid = gid;
}

int zd_conn_fd(const struct zd_conn *c) {
        return c->fd;
}

const gid_t *zd_conn_groups(const struct zd_conn *c, size_t *ret_n) {
        *ret_n = c->n_groups;
        return c->groups;
}

bool zd_conn_more(const struct zd_conn *c) {
        return c->more;
}

void *zd_conn_get_data(const struct zd_conn *c) {
        return c->data;
}

void zd_conn_set_data(struct zd_conn *c, void *data) {
        c->data = data;
}

struct zd_caller_conn **zd_conn_caller(struct zd_conn *c) {
        return &c->caller;
}

/* ---- output ------------------------------------------------------------------------------- */

void zd_conn_flush(struct zd_conn *c) {
        if (c->dead)
                return;
        while (c->out_head) {
                struct zd_out *o = c->out_head;
                struct iovec iov = { .iov_base = o->data + o->off, .iov_len = o->len - o->off };
                ssize_t n = send_fds(c->fd, &iov, 1, &o->fd, o->fd >= 0 && o->off == 0 ? 1 : 0, MSG_DONTWAIT);
                if (n < 0) {
                        if (n == -EAGAIN)
                                break;
                        zd_conn_close(c); /* EPIPE, ECONNRESET: the caller is gone */
                        return;
                }
                if (n > 0)
                        o->fd = safe_close(o->fd); /* the fd went with the first byte */
                o->off += (size_t) n;
                c->out_bytes -= (size_t) n;
                if (c->acct)
                        c->acct->out_bytes -= (size_t) n;
                if (o->off < o->len)
                        break;
                c->out_head = o->next;
                if (!c->out_head)
                        c->out_tail = NULL;
                free(o);
        }
        if (!c->out_head && c->closing) {
                zd_conn_close(c);
                return;
        }
        zd_conn_update_events(c);
}

void zd_conn_send(struct zd_conn *c, json_object *msg, int fd) {
        if (c->dead) {
                safe_close(fd);
                return;
        }
        size_t len;
        const char *s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len);
        /* Requests are checked, but a reply may also carry what no caller sent (a profile's
         * file name, a name from /proc): whatever it holds, the caller gets UTF-8. */
        _cleanup_free_ char *valid = NULL;
        if (!zc_utf8_valid(s, len)) {
                valid = zc_utf8_make_valid(s, len, &len);
                if (!valid) {
                        safe_close(fd);
                        zd_conn_close(c);
                        return;
                }
                s = valid;
        }
        if (c->out_bytes + len + 1 > ZD_MAX_OUTPUT || !zd_account_may_send(c, len + 1)) {
                /* The caller does not read its replies; keep no unbounded memory for it (nor
                 * for its account, over all its connections). */
                zd_log(LOG_WARNING, "dropping connection of uid %u (account %u): %zu bytes of replies unread",
                       (unsigned) c->cred.uid, (unsigned) zd_conn_account(c), c->out_bytes);
                safe_close(fd);
                zd_conn_close(c);
                return;
        }
        struct zd_out *o = malloc(sizeof(*o) + len + 1);
        if (!o) {
                safe_close(fd);
                zd_conn_close(c);
                return;
        }
        memcpy(o->data, s, len + 1); /* includes the NUL terminator */
        o->len = len + 1;
        o->off = 0;
        o->fd = fd;
        o->next = NULL;
        if (c->out_tail)
                c->out_tail->next = o;
        else
                c->out_head = o;
        c->out_tail = o;
        c->out_bytes += o->len;
        if (c->acct)
                c->acct->out_bytes += o->len;
        c->last_active = ev_now(c->s->loop);
        zd_conn_flush(c);
}

static void call_done(struct zd_conn *c) {
        c->busy = false;
        c->more = false;
        if (c->dead)
                return;
        c->last_active = ev_now(c->s->loop);
        /* The next call may already be buffered: it waits for its account's turn (inside
         * zd_conn_process() the dispatcher queues it once the handler returned). */
        if (!c->processing)
                zd_conn_schedule(c);
}

void zd_reply(struct zd_conn *c, json_object *params, bool continues, int fd) {
        json_object *msg = json_object_new_object();
        json_object_object_add(msg, "parameters", params ? params : json_object_new_object());
        if (continues)
                json_object_object_add(msg, "continues", json_object_new_boolean(true));
        /* A failed send (EPIPE: the caller shut its reading side) closes the connection. An
         * asynchronous reply from task.c holds no reference of its own: keep c alive until
         * call_done() is through with it. */
        c->refs++;
        zd_conn_send(c, msg, fd);
        json_object_put(msg);
        if (!continues)
                call_done(c);
        zd_conn_unref(c);
}

void zd_reply_error(struct zd_conn *c, const char *error, json_object *params) {
        json_object *msg = json_object_new_object();
        json_object_object_add(msg, "error", json_object_new_string(error));
        json_object_object_add(msg, "parameters", params ? params : json_object_new_object());
        c->refs++; /* as in zd_reply() */
        zd_conn_send(c, msg, -EBADF);
        json_object_put(msg);
        call_done(c);
        zd_conn_unref(c);
}

void zd_conn_reply_errorf(struct zd_conn *c, const char *error, const char *key, const char *value) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, key, json_object_new_string(value));
        zd_reply_error(c, error, p);
}

void zd_conn_update_events(struct zd_conn *c) {
        if (c->dead)
                return;
        /* Keep reading while there is room (to see EOF early); write when replies wait. */
        int ev = 0;
        if (c->in_len < ZY_MESSAGE_MAX && !c->closing && zd_account_read_room(c) > 0)
                ev |= EV_READ;
        if (c->out_head)
                ev |= EV_WRITE;
        if ((ev & EV_READ) == 0 && c->closing && !c->out_head) {
                zd_conn_close(c);
                return;
        }
        if (ev_is_active(&c->io) && (c->io.events & (EV_READ | EV_WRITE)) == ev)
                return;
        ev_io_stop(c->s->loop, &c->io);
        ev_io_set(&c->io, c->fd, ev);
        if (ev)
                ev_io_start(c->s->loop, &c->io);
}

/* ---- input ------------------------------------------------------------------------------- */

/* Its fds were refused (zd_conn_read()): the caller is told why and dropped, its fd stream out of
 * step. */
static void conn_refuse_fds(struct zd_conn *c, bool held) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "limit", json_object_new_string(held ? "fdsHeldInClose" : "fds"));
        json_object_object_add(p, "max", json_object_new_int(held ? ZD_CLOSER_HELD_PER_UID : (int) ZY_FDS_MAX));
        json_object *msg = json_object_new_object();
        json_object_object_add(msg, "error", json_object_new_string(ZY_ERROR_LIMIT_EXCEEDED));
        json_object_object_add(msg, "parameters", p);
        zd_conn_send(c, msg, -EBADF);
        json_object_put(msg);
        c->closing = true;
        zd_conn_flush(c);
}

/* The first message buffered, handed to on_call or refused. */
static void conn_process_one(struct zd_conn *c) {
        json_object *msg = NULL;
        int fds[ZY_FDS_MAX];
        size_t n_fds = 0;

        if (!zd_conn_runnable(c))
                return;
        int r = zd_conn_take_message(c, &msg, fds, &n_fds);
        if (r == -EMSGSIZE) {
                zd_conn_reply_errorf(c, ZY_ERROR_LIMIT_EXCEEDED, "limit", "message");
                c->closing = true;
                zd_conn_flush(c);
                return;
        }
        c->busy = true;
        c->refs++;
        if (r < 0)
                zd_conn_reply_errorf(c, ZY_ERROR_INVALID_PARAMETER, "parameter", "message");
        else {
                json_object *jmore;
                c->more = json_object_object_get_ex(msg, "more", &jmore) && json_object_get_boolean(jmore);
                c->s->on_call(c->s->userdata, c, msg, fds, n_fds); /* takes the fds */
        }
        json_object_put(msg);
        zd_conn_unref(c);
}

/* c's turn (server-sched.c): one message, what it cost charged to its account, its next queued. */
static void conn_serve(struct zd_conn *c) {
        ev_tstamp start = ev_time();

        c->refs++;
        c->processing = true;
        conn_process_one(c);
        c->processing = false;
        zd_account_charge(c, ev_time() - start);
        if (!c->dead) {
                zd_conn_update_events(c);
                zd_conn_schedule(c); /* its next message: at its account's tail */
        }
        zd_conn_unref(c);
}

void zd_conn_run_charged(struct zd_conn *c, void (*fn)(void *userdata), void *userdata) {
        ev_tstamp start = ev_time();

        c->refs++;
        fn(userdata);
        if (!c->dead)
                zd_account_charge(c, ev_time() - start);
        zd_conn_unref(c);
}

static const struct zd_sched_ops conn_sched_ops = {
        .serve = conn_serve,
        .may_read = zd_conn_update_events,
        .close = zd_conn_close,
};

/* A fork is about to copy the daemon's fd table (fork-gate.h, the release stage): a connection
 * holding the fds of a message not yet complete would have them copied into the child, whose
 * close of its copies may wait on the caller (a FUSE file's FLUSH). Such a connection is told why and dropped; its fds go
 * to the closer. libzygote sends a message's fds with its last byte, so that its fds never wait
 * for the rest; a client whose message with fds comes in pieces may lose the race and retries. */
static int drop_partial_fds(void *userdata) {
        struct zd_server *s = userdata;
        unsigned n = 0;

        for (struct zd_conn *c = s->conns, *next; c; c = next) {
                next = c->next;
                if (c->dead || c->n_in_fds == 0)
                        continue;
                c->refs++;
                zd_conn_drop_fds(c);
                zd_conn_reply_errorf(c, ZY_ERROR_INVALID_PARAMETER, "parameter", "fds");
                c->closing = true;
                if (!c->dead)
                        zd_conn_update_events(c); /* closes once the error is out */
                zd_conn_unref(c);
                n++;
        }
        if (n > 0)
                zd_log(LOG_INFO,
                       "%u connection%s dropped: %s the fds of a message not yet complete when a "
                       "fork needed a clean fd table",
                       n, n == 1 ? "" : "s", n == 1 ? "it held" : "they held");
        return (int) n;
}

static void on_conn_io(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_conn *c = w->data;
        c->refs++;
        if (revents & EV_WRITE)
                zd_conn_flush(c);
        if (!c->dead && (revents & EV_READ) && !c->closing) {
                int r = zd_conn_read(c);
                if (r == -EPROTO || r == -ETOOMANYREFS)
                        conn_refuse_fds(c, r == -ETOOMANYREFS);
                else if (r < 0)
                        zd_conn_close(c);
        }
        if (!c->dead)
                zd_conn_schedule(c); /* a complete message waits for its account's turn */
        if (!c->dead)
                zd_conn_update_events(c);
        zd_conn_unref(c);
}

static void on_partial_timeout(struct ev_loop *loop, ev_timer *w, int revents) {
        struct zd_conn *c = w->data;
        zd_log(LOG_NOTICE, "closing connection of uid %u: partial message idle for %.0fs", (unsigned) c->cred.uid,
               ZD_PARTIAL_TIMEOUT);
        zd_conn_close(c);
}

/* Our end of a connection goes. Its receive queue may still hold what the caller sent after the
 * message we acted on, fds among it, which the socket's last close releases (and such a release
 * may wait: a TCP socket lingering on unsent data). Shut for reading first, so that nothing more
 * can be queued (a sender gets EPIPE); then an empty queue is closed here, and one that is not
 * goes to the sink (server-closer.h). */
static void conn_release_socket(struct zd_conn *c) {
        int queued = 0;

        (void) shutdown(c->fd, SHUT_RD);
        if (ioctl(c->fd, SIOCINQ, &queued) < 0 || queued > 0)
                zd_closer_sink(&c->s->closer, TAKE_FD(c->fd), zd_conn_account(c));
        else
                c->fd = safe_close(c->fd);
}

void zd_conn_close(struct zd_conn *c) {
        if (c->dead)
                return;
        c->dead = true;
        struct zd_server *s = c->s;
        ev_io_stop(s->loop, &c->io);
        ev_timer_stop(s->loop, &c->partial);
        ev_timer_stop(s->loop, &c->idle);
        if (s->on_disconnect)
                s->on_disconnect(s->userdata, c);
        conn_release_socket(c);
        zd_conn_drop_fds(c);
        zd_account_detach(c);
        if (c->prev)
                c->prev->next = c->next;
        else
                s->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->prev = c->next = NULL;
        s->n_conns--;
        zd_conn_unref(c);
        accept_resume(s); /* an fd is free again */
}

void zd_conn_unref(struct zd_conn *c) {
        if (--c->refs > 0)
                return;
        while (c->out_head) {
                struct zd_out *o = c->out_head;
                c->out_head = o->next;
                safe_close(o->fd);
                free(o);
        }
        free(c->in);
        free(c->groups);
        free(c);
}

static int peer_groups(int fd, gid_t **ret, size_t *ret_n) {
        socklen_t len = 64 * sizeof(gid_t);
        for (;;) {
                _cleanup_free_ gid_t *g = malloc(len ? len : sizeof(gid_t));
                if (!g)
                        return -ENOMEM;
                socklen_t l = len;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &l) == 0) {
                        *ret_n = l / sizeof(gid_t);
                        *ret = TAKE_PTR(g);
                        return 0;
                }
                if (errno != ERANGE || l <= len)
                        return negative_errno();
                len = l;
        }
}

/* A connection of caller cred on fd. Takes groups (malloc'd) always, fd on success only. */
static int conn_new(struct zd_server *s, int fd, const struct ucred *cred, const struct zd_owner *owner, gid_t *groups,
                    size_t n_groups) {
        struct zd_conn *c = calloc(1, sizeof(*c));
        if (!c) {
                free(groups);
                return -ENOMEM;
        }
        if (zd_account_attach(s, c, owner->own_ns ? cred->uid : owner->account) < 0) {
                free(c);
                free(groups);
                return -ENOMEM;
        }
        if (!s->dispatch.cb)
                zd_server_sched_init(s, &conn_sched_ops); /* a connection added with no listening socket (tests) */
        c->s = s;
        c->owner = *owner;
        c->cred = c->acting = *cred;
        c->refs = 1;
        c->groups = groups;
        c->n_groups = n_groups;
        c->fd = fd;
        ev_io_init(&c->io, on_conn_io, c->fd, EV_READ);
        c->io.data = c;
        ev_timer_init(&c->partial, on_partial_timeout, ZD_PARTIAL_TIMEOUT, 0.);
        c->partial.data = c;
        zd_conn_idle_start(c);
        ev_io_start(s->loop, &c->io);
        c->next = s->conns;
        if (s->conns)
                s->conns->prev = c;
        s->conns = c;
        s->n_conns++;
        return 0;
}

static void accept_resume(struct zd_server *s) {
        if (!s->accept_paused)
                return;
        s->accept_paused = false;
        ev_timer_stop(s->loop, &s->accept_retry);
        if (s->listen_fd >= 0)
                ev_io_start(s->loop, &s->listen_watch);
}

static void on_accept_retry(struct ev_loop *loop, ev_timer *w, int revents) {
        accept_resume(w->data);
}

/* Out of fds or memory: the connection waits in the backlog, and the listening socket stays
 * readable, so a watcher left on would spin (and log) at full speed. It waits for an fd to
 * free (a connection closing; anything else is caught by the timer). */
static void accept_pause(struct zd_server *s, int err) {
        ev_io_stop(s->loop, &s->listen_watch);
        s->accept_paused = true;
        ev_timer_set(&s->accept_retry, ZD_ACCEPT_RETRY, 0.);
        ev_timer_start(s->loop, &s->accept_retry);
        ev_tstamp now = ev_now(s->loop);
        if (s->accept_logged > 0 && now - s->accept_logged < ZD_ACCEPT_LOG_INTERVAL) {
                s->accept_unlogged++;
                return;
        }
        zd_log(LOG_WARNING, "accept: %s: connections wait until an fd frees (%u such pauses not logged)", strerror(err),
               s->accept_unlogged);
        s->accept_logged = now;
        s->accept_unlogged = 0;
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_server *s = w->data;
        for (int i = 0; i < 64; i++) {
                _cleanup_close_ int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                                accept_pause(s, errno);
                        else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                zd_log(LOG_WARNING, "accept: %m");
                        return;
                }
                struct ucred cred;
                socklen_t l = sizeof(cred);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0)
                        continue;
                const char *limit = NULL;
                unsigned max = 0;
                struct zd_owner owner = {};
                if (s->n_conns >= ZD_MAX_CONNECTIONS)
                        limit = "connections", max = ZD_MAX_CONNECTIONS;
                else {
                        owner = zd_owner_find(fd, &cred, s->own_userns, !s->owner_by_proc);
                        uid_t account = owner.own_ns ? cred.uid : owner.account;
                        /* Root of zygoted's own user namespace alone may take the last
                         * ZD_ROOT_RESERVE connections, and has no limit of its own: whatever the
                         * others hold, the service manager, containerd's shim and an admin's
                         * launchctl get in. Every other account, root's containers' included,
                         * has ZD_MAX_CONNECTIONS_PER_UID, so that it takes a ninth of the rest
                         * at most. Refused here, before anything of the connection is read. */
                        if (account != 0 && s->n_conns >= ZD_MAX_CONNECTIONS - ZD_ROOT_RESERVE)
                                limit = "connections", max = ZD_MAX_CONNECTIONS - ZD_ROOT_RESERVE;
                        else if (account != 0 && zd_account_n_conns(s, account) >= ZD_MAX_CONNECTIONS_PER_UID)
                                limit = "connections_per_user", max = ZD_MAX_CONNECTIONS_PER_UID;
                }
                if (limit) {
                        /* Say why, best effort, and close: the others keep being served. */
                        char buf[160];
                        int n = snprintf(buf, sizeof(buf),
                                         "{\"error\":\"" ZY_ERROR_LIMIT_EXCEEDED
                                         "\",\"parameters\":{\"limit\":\"%s\",\"max\":%u}}",
                                         limit, max);
                        (void) !send(fd, buf, (size_t) n + 1, MSG_DONTWAIT | MSG_NOSIGNAL);
                        continue;
                }
                gid_t *groups = NULL;
                size_t n_groups = 0;
                if (peer_groups(fd, &groups, &n_groups) < 0) {
                        groups = NULL; /* no supplementary groups: the caller gets less, never more */
                        n_groups = 0;
                }
                if (conn_new(s, fd, &cred, &owner, groups, n_groups) >= 0)
                        TAKE_FD(fd);
        }
}

int zd_server_add_conn(struct zd_server *s, int fd, const struct ucred *cred, const gid_t *groups, size_t n_groups) {
        _cleanup_free_ gid_t *copy = NULL;
        if (n_groups > 0) {
                copy = calloc(n_groups, sizeof(gid_t));
                if (!copy)
                        return -ENOMEM;
                memcpy(copy, groups, n_groups * sizeof(gid_t));
        }
        struct zd_owner owner = { .account = cred->uid, .own_ns = true };
        return conn_new(s, fd, cred, &owner, TAKE_PTR(copy), n_groups);
}

/* The system socket made by zygoted itself (started by hand, not by zygoted.socket) gets what the
 * unit gives it: 0660, group zygote. Who may connect to the system daemon is the administrator's
 * choice (group zygote), and a daemon started by hand must not widen it. Other paths (a user's
 * daemon, a test's, scripts/run.sh's) stay connectable by every uid: access is decided per
 * caller from SO_PEERCRED, and a caller never gets more than it already has. */
static mode_t socket_umask(const char *path) {
        return geteuid() == 0 && streq(path, ZY_SOCKET_SYSTEM) ? 0117 : 0111;
}

static void system_socket_group(const char *path) {
        struct group *g;

        if (geteuid() != 0 || !streq(path, ZY_SOCKET_SYSTEM))
                return;
        g = getgrnam("zygote");
        if (!g) {
                zd_log(LOG_WARNING, "%s: no group zygote (systemd-sysusers makes it): the socket is root's alone",
                       path);
                return;
        }
        if (chown(path, 0, g->gr_gid) < 0)
                zd_log(LOG_WARNING, "%s: giving the socket to group zygote: %s; it is root's alone", path,
                       strerror(errno));
}

static int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        return 0;
}

int zd_server_listen(struct zd_server *s) {
        if (!s->closer.helpers && !s->closer.disabled)
                s->closer.error = zd_closer_start(&s->closer, s->loop);
        s->own_userns = zd_owner_own_userns();
        if (!s->dispatch.cb)
                zd_server_sched_init(s, &conn_sched_ops);
        if (s->listen_fd < 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                if (strlen(s->socket_path) >= sizeof(sa.sun_path))
                        return -ENAMETOOLONG;
                strcpy(sa.sun_path, s->socket_path);
                int r = mkdir_parents(s->socket_path, 0755);
                if (r < 0)
                        return r;
                _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0)
                        return negative_errno();
                /* Replace a stale socket only: a live daemon on it answers connect(). */
                _cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                        return -EADDRINUSE;
                (void) unlink(s->socket_path);
                /* born with its final mode: never wider, even for a moment (socket_umask) */
                mode_t old = umask(socket_umask(s->socket_path));
                r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
                umask(old);
                if (r < 0)
                        return negative_errno();
                system_socket_group(s->socket_path);
                if (listen(fd, 128) < 0)
                        return negative_errno();
                s->listen_fd = TAKE_FD(fd);
        } else {
                int fl = fcntl(s->listen_fd, F_GETFL);
                if (fl < 0 || fcntl(s->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
                        return negative_errno();
        }
        ev_io_init(&s->listen_watch, on_accept, s->listen_fd, EV_READ);
        s->listen_watch.data = s;
        ev_timer_init(&s->accept_retry, on_accept_retry, ZD_ACCEPT_RETRY, 0.);
        s->accept_retry.data = s;
        s->accept_paused = false;
        ev_io_start(s->loop, &s->listen_watch);
        s->fork_holder = (struct zd_fork_holder){ .stage = ZD_FORK_RELEASE,
                                                  .close_before_fork = drop_partial_fds,
                                                  .userdata = s };
        zd_fork_gate_register(&s->fork_holder);
        return 0;
}

void zd_server_stop(struct zd_server *s) {
        zd_fork_gate_unregister(&s->fork_holder);
        ev_io_stop(s->loop, &s->listen_watch);
        ev_timer_stop(s->loop, &s->accept_retry);
        s->accept_paused = false;
        while (s->conns)
                zd_conn_close(s->conns);
        ev_check_stop(s->loop, &s->dispatch);
        ev_idle_stop(s->loop, &s->dispatch_spin);
        ev_timer_stop(s->loop, &s->rest_timer);
        if (s->listen_fd >= 0) {
                s->listen_fd = safe_close(s->listen_fd);
                if (!s->socket_activated)
                        (void) unlink(s->socket_path);
        }
        zd_closer_stop(&s->closer);
}

void zd_server_dump(struct zd_server *s, FILE *f) {
        for (struct zd_conn *c = s->conns; c; c = c->next)
                fprintf(f,
                        "connection: uid=%u account=%u busy=%d more=%d closing=%d in_len=%zu fds=%zu out=%zu waits=%d "
                        "partial=%d\n",
                        (unsigned) c->cred.uid, (unsigned) zd_conn_account(c), c->busy, c->more, c->closing, c->in_len,
                        c->n_in_fds, c->out_bytes, c->data != NULL, ev_is_active(&c->partial));
}
