/* SPDX-License-Identifier: MIT */
/*
 * libzygote, the transport and the generic call: the connection, varlink framing (JSON + NUL)
 * on a Unix stream socket, fds as SCM_RIGHTS. The messages themselves (a call's JSON, a reply's
 * fields, error names) live in libzygote-message.c, the typed helpers in libzygote-tasks.c
 * over libzygote-call.c.
 *
 * Fds and framing: the daemon attaches a message's fds to the sendmsg() that carries the
 * message's first byte. On our side one recvmsg() may return the tail of one message and the
 * head of the next; but the kernel ends a read right after the skb that carried fds
 * (unix_stream_read_generic stops once scm.fp is set), and that skb begins at a message
 * boundary. So fds that arrive with a read belong to the last message that begins within that
 * read's bytes; conn_fill() tags them with that message's index.
 */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fd-util.h"
#include "libzygote-message.h"
#include "zygote-private.h"
#include "util.h"

#define READ_CHUNK (64U * 1024U)
/* How many sets of fds may wait for their message; the reading loop stops at the first complete
 * message, so more than two means the peer broke the protocol. */
#define PENDING_FDS_MAX 4

struct fdset {
        uint64_t msg; /* index of the message in the stream */
        int *fds;
        size_t n;
};

enum conn_state {
        CONN_IDLE,
        CONN_WAITING,   /* one reply expected */
        CONN_STREAMING, /* replies until one without "continues" */
};

struct zy_conn {
        int fd;
        enum conn_state state;
        int broken; /* 0, or the negative errno every later call gets */
        size_t reply_limit;

        char *in;
        size_t in_alloc;
        size_t in_start, in_end; /* unparsed bytes */
        size_t scan;             /* in [in_start, scan) there is no NUL */
        bool discarding;         /* dropping the rest of an oversize message */
        bool at_boundary;        /* the next byte read begins a message */
        uint64_t msgs_read;      /* NUL bytes read from the socket so far */
        uint64_t msgs_parsed;    /* messages handed out (or dropped) so far */

        struct fdset pending[PENDING_FDS_MAX];
        size_t n_pending;

        char *error_name;
        json_object *error_params;
};

static void fdset_clear(struct fdset *s) {
        close_many(s->fds, s->n);
        free(s->fds);
        *s = (struct fdset){};
}

_public_ int zy_default_socket_path(char **ret) {
        /* The rule is the daemon's too (zygote-protocol.h); it reads its variables with
         * secure_getenv, so a setuid program linking us cannot be pointed at another socket. */
        char buf[PATH_MAX];
        char *p;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_protocol_socket_path(buf, sizeof(buf));
        if (r < 0)
                return r;
        p = strdup(buf);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

_public_ int zy_connect_fd(int fd, zy_conn **ret) {
        zy_conn *c;
        int type = 0;
        socklen_t len = sizeof(type);

        if (fd < 0 || !ret)
                return -EINVAL;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
                return negative_errno();
        if (type != SOCK_STREAM)
                return -ENOTSOCK;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = fd;
        c->reply_limit = ZY_REPLY_LIMIT_DEFAULT;
        c->at_boundary = true;
        *ret = c;
        return 0;
}

_public_ int zy_connect(const char *path, zy_conn **ret) {
        _cleanup_free_ char *def = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t salen;
        size_t l;
        int r;

        if (!ret)
                return -EINVAL;
        if (!path) {
                r = zy_default_socket_path(&def);
                if (r < 0)
                        return r;
                path = def;
        }
        l = strlen(path);
        if (l == 0)
                return -EINVAL;
        if (l >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, l);
        if (path[0] == '@') {
                /* Abstract namespace: the name is the bytes after the NUL that replaces '@'. */
                sa.sun_path[0] = 0;
                salen = offsetof(struct sockaddr_un, sun_path) + l;
        } else
                salen = offsetof(struct sockaddr_un, sun_path) + l + 1;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        while (connect(fd, (struct sockaddr *) &sa, salen) < 0) {
                /* A blocking connect interrupted by a signal goes on in the background; wait
                 * for it instead of calling connect() again (which would say EALREADY). */
                if (errno == EINTR) {
                        struct pollfd p = { .fd = fd, .events = POLLOUT };
                        int err = 0;
                        socklen_t el = sizeof(err);

                        if (poll(&p, 1, -1) < 0 && errno != EINTR)
                                return negative_errno();
                        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                                return negative_errno();
                        if (err != 0)
                                return -err;
                        if (p.revents & POLLOUT)
                                break;
                        continue;
                }
                return negative_errno();
        }

        r = zy_connect_fd(fd, ret);
        if (r < 0)
                return r;
        TAKE_FD(fd);
        return 0;
}

static void conn_clear_error(zy_conn *c) {
        c->error_name = lzy_mfree(c->error_name);
        if (c->error_params) {
                json_object_put(c->error_params);
                c->error_params = NULL;
        }
}

_public_ zy_conn *zy_conn_free(zy_conn *c) {
        if (!c)
                return NULL;
        safe_close(c->fd);
        for (size_t i = 0; i < c->n_pending; i++)
                fdset_clear(&c->pending[i]);
        free(c->in);
        conn_clear_error(c);
        free(c);
        return NULL;
}

_public_ int zy_conn_get_fd(const zy_conn *c) {
        return c ? c->fd : -EINVAL;
}

_public_ bool zy_conn_has_input(const zy_conn *c) {
        return c && c->in_end > c->in_start;
}

_public_ int zy_conn_set_reply_limit(zy_conn *c, size_t limit) {
        if (!c)
                return -EINVAL;
        /* The buffer grows to limit + one read chunk; keep that addressable. */
        if (limit > SIZE_MAX / 2)
                return -EINVAL;
        c->reply_limit = limit ? limit : ZY_REPLY_LIMIT_DEFAULT;
        return 0;
}

_public_ const char *zy_conn_error_name(const zy_conn *c) {
        return c ? c->error_name : NULL;
}

_public_ json_object *zy_conn_error_parameters(const zy_conn *c) {
        return c ? c->error_params : NULL;
}

_public_ int zy_conn_spawn_failure(const zy_conn *c, const char **ret_step, int *ret_errno, const char **ret_message) {
        json_object *step, *err, *msg = NULL;
        int64_t e;

        if (!c)
                return -EINVAL;
        if (!streq_ptr(c->error_name, ZY_ERROR_SPAWN_FAILED))
                return -ENODATA;
        if (!json_object_object_get_ex(c->error_params, "step", &step) ||
            !json_object_is_type(step, json_type_string) ||
            !json_object_object_get_ex(c->error_params, "errno", &err) || !json_object_is_type(err, json_type_int))
                return -EBADMSG;
        e = json_object_get_int64(err);
        if (e < 0 || e > INT_MAX)
                return -EBADMSG;
        if (json_object_object_get_ex(c->error_params, "message", &msg) && !json_object_is_type(msg, json_type_string))
                return -EBADMSG;

        if (ret_step)
                *ret_step = json_object_get_string(step);
        if (ret_errno)
                *ret_errno = (int) e;
        if (ret_message)
                *ret_message = msg ? json_object_get_string(msg) : "";
        return 0;
}

_public_ struct zy_reply *zy_reply_free(struct zy_reply *r) {
        if (!r)
                return NULL;
        close_many(r->fds, r->n_fds);
        free(r->fds);
        if (r->parameters)
                json_object_put(r->parameters);
        free(r);
        return NULL;
}

/* ---- sending ------------------------------------------------------------------------------- */

/* Waits until fd is ready for events; EINTR is a wake-up like any other. */
static int wait_fd(int fd, short events) {
        struct pollfd p = { .fd = fd, .events = events };

        if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return negative_errno();
        return 0;
}

static int conn_send(zy_conn *c, const char *data, size_t len, const int *fds, size_t n_fds) {
        size_t done = 0;

        assert(n_fds <= ZY_FDS_MAX);
        while (done < len) {
                /* The fds ride on the sendmsg() carrying the message's last byte (its NUL), and
                 * only on that one: the daemon gets them with the end of the message, never holds
                 * them while the rest is on its way (it drops a connection whose fds wait for the
                 * rest when it must fork: zygoted's fork-gate.c). So the bytes before it go
                 * first, on their own. A retry after a partial send must not send them again.
                 * send_fds adds MSG_NOSIGNAL: a daemon that went away is an error return, not a
                 * SIGPIPE that kills the caller. */
                bool last = n_fds == 0 || done == len - 1;
                struct iovec iov = { .iov_base = (char *) data + done, .iov_len = last ? len - done : len - 1 - done };
                ssize_t n;
                int r;

                n = send_fds(c->fd, &iov, 1, fds, last ? n_fds : 0, 0);
                if (n == -EAGAIN) {
                        r = wait_fd(c->fd, POLLOUT);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n < 0)
                        return (int) n;
                done += (size_t) n;
        }
        return 0;
}

static int conn_usable(zy_conn *c) {
        if (!c)
                return -EINVAL;
        if (c->broken)
                return -ENOTCONN;
        return 0;
}

_public_ int zy_call_send(zy_conn *c, const char *method, json_object *parameters, const int *fds, size_t n_fds,
                          unsigned flags) {
        _cleanup_(lzy_json_putp) json_object *call = NULL;
        const char *text;
        size_t len;
        int r;

        r = conn_usable(c);
        if (r < 0)
                return r;
        if (!method || !*method || (n_fds > 0 && !fds) || (flags & ~(ZY_CALL_MORE | ZY_CALL_ONEWAY)) ||
            (flags & ZY_CALL_MORE && flags & ZY_CALL_ONEWAY))
                return -EINVAL;
        if (parameters && !json_object_is_type(parameters, json_type_object))
                return -EINVAL;
        if (n_fds > ZY_FDS_MAX)
                return -EMSGSIZE;
        for (size_t i = 0; i < n_fds; i++)
                if (fds[i] < 0)
                        return -EBADF;
        if (c->state != CONN_IDLE)
                return -EINPROGRESS;

        conn_clear_error(c);

        r = lzy_call_new(method, parameters, flags, &call);
        if (r < 0)
                return r;

        text = json_object_to_json_string_length(call, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!text)
                return -ENOMEM;
        /* The NUL that ends the message is part of it: json-c's buffer has it after len bytes. */
        if (len + 1 > ZY_MESSAGE_MAX)
                return -EMSGSIZE;

        r = conn_send(c, text, len + 1, fds, n_fds);
        if (r < 0) {
                /* Part of the message may be out: the stream is no longer in step. */
                c->broken = r;
                return r;
        }
        if (!(flags & ZY_CALL_ONEWAY))
                c->state = flags & ZY_CALL_MORE ? CONN_STREAMING : CONN_WAITING;
        return 0;
}

_public_ int zy_call_send_json(zy_conn *c, const char *method, const char *parameters_json, const int *fds,
                               size_t n_fds, unsigned flags) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        int r;

        if (parameters_json && *parameters_json) {
                r = lzy_json_parse(parameters_json, strlen(parameters_json), &p);
                if (r < 0)
                        return -EINVAL;
        }
        return zy_call_send(c, method, p, fds, n_fds, flags);
}

/* ---- receiving ----------------------------------------------------------------------------- */

/* Tags fds that came with a read of the bytes data[0..n) with the index of the last message
 * that begins in those bytes (see the comment at the top). */
static int conn_stash_fds(zy_conn *c, const char *data, size_t n, int *fds, size_t n_fds) {
        uint64_t msg;
        size_t nuls = 0;
        bool begins = c->at_boundary;

        /* A NUL as the very last byte starts a message that is not in this read. */
        for (size_t i = 0; i + 1 < n; i++)
                if (data[i] == 0) {
                        nuls++;
                        begins = true;
                }
        if (!begins || c->n_pending >= PENDING_FDS_MAX)
                return -EBADMSG;
        msg = c->msgs_read + nuls;
        for (size_t i = 0; i < c->n_pending; i++)
                if (c->pending[i].msg == msg)
                        return -EBADMSG;

        c->pending[c->n_pending].fds = malloc(sizeof(int) * n_fds);
        if (!c->pending[c->n_pending].fds)
                return -ENOMEM;
        memcpy(c->pending[c->n_pending].fds, fds, sizeof(int) * n_fds);
        c->pending[c->n_pending].n = n_fds;
        c->pending[c->n_pending].msg = msg;
        c->n_pending++;
        return 0;
}

/* Takes the fds of message msg (none: *ret_fds = NULL, *ret_n = 0). */
static void conn_take_fds(zy_conn *c, uint64_t msg, int **ret_fds, size_t *ret_n) {
        *ret_fds = NULL;
        *ret_n = 0;
        for (size_t i = 0; i < c->n_pending; i++)
                if (c->pending[i].msg == msg) {
                        *ret_fds = c->pending[i].fds;
                        *ret_n = c->pending[i].n;
                        c->pending[i] = c->pending[--c->n_pending];
                        return;
                }
}

/* One recvmsg() into the buffer; 0 on data, -ECONNRESET on EOF. */
static int conn_fill(zy_conn *c) {
        int fds[ZY_FDS_MAX];
        size_t n_fds = 0;
        struct iovec iov;
        ssize_t n;
        int r = 0;

        /* Make room for a chunk: move the unparsed bytes to the front, grow if still short. */
        if (c->in_start > 0) {
                memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
                c->scan -= c->in_start;
                c->in_end -= c->in_start;
                c->in_start = 0;
        }
        if (c->in_alloc - c->in_end < READ_CHUNK) {
                size_t want = c->in_end + READ_CHUNK;
                char *p = realloc(c->in, want);
                if (!p)
                        return -ENOMEM;
                c->in = p;
                c->in_alloc = want;
        }

        for (;;) {
                iov = (struct iovec){ .iov_base = c->in + c->in_end, .iov_len = c->in_alloc - c->in_end };
                n = recv_fds(c->fd, &iov, 1, fds, ZY_FDS_MAX, &n_fds, 0);
                if (n != -EAGAIN)
                        break;
                r = wait_fd(c->fd, POLLIN);
                if (r < 0)
                        return r;
        }
        /* -EMSGSIZE: the peer sent more fds than the protocol allows; the kernel dropped the
         * rest (recv_fds closed those that came), and we cannot know which message is short
         * of fds. */
        if (n == -EMSGSIZE || n == -EBADMSG)
                return -EBADMSG;
        if (n < 0)
                return (int) n;
        if (n_fds > 0 && n == 0)
                r = -EBADMSG;
        if (r == 0 && n_fds > 0)
                r = conn_stash_fds(c, c->in + c->in_end, (size_t) n, fds, n_fds);
        if (r < 0) {
                close_many(fds, n_fds);
                return r;
        }
        if (n == 0)
                return -ECONNRESET;

        for (ssize_t i = 0; i < n; i++)
                if (c->in[c->in_end + i] == 0)
                        c->msgs_read++;
        c->at_boundary = c->in[c->in_end + n - 1] == 0;
        c->in_end += (size_t) n;
        return 0;
}

/* The next complete message: its text in the buffer (valid until the next read) and its fds.
 * -EMSGSIZE when it was too long and got dropped (its fds closed). */
static int conn_next_message(zy_conn *c, const char **ret_text, size_t *ret_len, int **ret_fds, size_t *ret_n_fds) {
        int r;

        for (;;) {
                char *nul = c->scan < c->in_end ? memchr(c->in + c->scan, 0, c->in_end - c->scan) : NULL;

                if (nul) {
                        size_t end = (size_t) (nul - c->in);
                        const char *text = c->in + c->in_start;
                        size_t len = end - c->in_start;
                        uint64_t msg = c->msgs_parsed++;

                        c->in_start = c->scan = end + 1;
                        conn_take_fds(c, msg, ret_fds, ret_n_fds);
                        if (c->discarding || len > c->reply_limit) {
                                c->discarding = false;
                                close_many(*ret_fds, *ret_n_fds);
                                *ret_fds = lzy_mfree(*ret_fds);
                                *ret_n_fds = 0;
                                return -EMSGSIZE;
                        }
                        *ret_text = text;
                        *ret_len = len;
                        return 0;
                }
                c->scan = c->in_end;
                if (c->discarding || c->in_end - c->in_start > c->reply_limit) {
                        /* Too long already: forget the bytes, keep counting to the NUL. */
                        c->discarding = true;
                        c->in_start = c->scan = c->in_end = 0;
                }
                r = conn_fill(c);
                if (r < 0)
                        return r;
        }
}

_public_ int zy_reply_read(zy_conn *c, size_t max_fds, struct zy_reply **ret) {
        _cleanup_(lzy_json_putp) json_object *params = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ int *fds = NULL;
        size_t n_fds = 0;
        const char *text;
        size_t len;
        bool continues;
        struct zy_reply *reply;
        int r;

        r = conn_usable(c);
        if (r < 0)
                return r;
        if (!ret)
                return -EINVAL;
        if (c->state == CONN_IDLE)
                return -ENOMSG;

        r = conn_next_message(c, &text, &len, &fds, &n_fds);
        if (r == -EMSGSIZE) {
                /* A dropped reply of a single-reply call ends the call and leaves the stream in
                 * step. In a stream we cannot know whether more replies were to follow. */
                if (c->state == CONN_STREAMING)
                        c->broken = r;
                c->state = CONN_IDLE;
                return r;
        }
        if (r >= 0)
                r = lzy_reply_parse(text, len, &params, &error, &continues);
        if (r >= 0 && n_fds > max_fds)
                r = -EBADMSG;
        if (r >= 0 && continues && c->state != CONN_STREAMING)
                r = -EBADMSG; /* "continues" on a call that did not ask for more */
        if (r < 0) {
                close_many(fds, n_fds);
                c->broken = r == -ECONNRESET ? -ENOTCONN : r;
                c->state = CONN_IDLE;
                return r;
        }

        if (error) {
                json_object *limit = NULL;

                close_many(fds, n_fds);
                c->state = CONN_IDLE;
                json_object_object_get_ex(params, "limit", &limit);
                r = zy_error_to_errno(error, limit && json_object_is_type(limit, json_type_string)
                                                     ? json_object_get_string(limit)
                                                     : NULL);
                c->error_name = TAKE_PTR(error);
                c->error_params = TAKE_PTR(params);
                return r;
        }

        reply = calloc(1, sizeof(*reply));
        if (!reply) {
                close_many(fds, n_fds);
                /* The reply is lost: the caller cannot tell where its call stands. */
                c->broken = -ENOMEM;
                c->state = CONN_IDLE;
                return -ENOMEM;
        }
        reply->parameters = TAKE_PTR(params);
        reply->fds = TAKE_PTR(fds);
        reply->n_fds = n_fds;
        reply->continues = continues;
        if (!continues)
                c->state = CONN_IDLE;
        *ret = reply;
        return 0;
}

_public_ int zy_call(zy_conn *c, const char *method, json_object *parameters, const int *fds, size_t n_fds,
                     size_t max_reply_fds, struct zy_reply **ret) {
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_call_send(c, method, parameters, fds, n_fds, 0);
        if (r < 0)
                return r;
        return zy_reply_read(c, max_reply_fds, ret);
}
