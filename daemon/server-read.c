/* SPDX-License-Identifier: MIT */
/*
 * The transport's input (server.c's facet; server-conn.h): bytes and SCM_RIGHTS fds read from a
 * connection within its limits, and NUL-framed messages parsed and taken out one at a time. Below
 * server.c, which decides what a message or a refusal does: nothing here replies or closes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fd-util.h"
#include "json-dispatch.h"
#include "log.h"
#include "server-conn.h"
#include "util.h"

void zd_conn_drop_fds(struct zd_conn *c) {
        for (size_t i = 0; i < c->n_in_fds; i++)
                zd_server_close_caller_fd(c->s, c->in_fds[i], zd_conn_account(c));
        c->n_in_fds = 0;
}

int zd_conn_read(struct zd_conn *c) {
        for (;;) {
                if (c->in_len >= c->in_size) {
                        /* ZY_MESSAGE_MAX counts the NUL: a buffer that size without one holds
                         * a message too long already. */
                        if (c->in_size >= ZY_MESSAGE_MAX)
                                return 0; /* full: parsing decides (a call may be busy) */
                        size_t n = c->in_size ? c->in_size * 2 : 4096;
                        if (n > ZY_MESSAGE_MAX)
                                n = ZY_MESSAGE_MAX;
                        char *p = realloc(c->in, n);
                        if (!p)
                                return -ENOMEM;
                        c->in = p;
                        c->in_size = n;
                }
                /* Room for every fd one message can carry: fds that do not fit, the kernel
                 * releases inside recvmsg, in this thread, and the last release of one may wait
                 * (a TCP socket lingering on unsent data). All of them go to the closer. */
                union {
                        struct cmsghdr align;
                        char buf[CMSG_SPACE(sizeof(int) * ZD_SCM_MAX_FD)];
                } control;
                /* An account other than root's holds at most ZD_MAX_INPUT_PER_ACCOUNT unread by
                 * any call: past it the connection reads no more until a call takes some. */
                size_t room = zd_account_read_room(c);
                if (room == 0)
                        return 0;
                struct iovec iov = { .iov_base = c->in + c->in_len, .iov_len = c->in_size - c->in_len };
                if (iov.iov_len > room)
                        iov.iov_len = room;
                struct msghdr mh = {
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof(control.buf),
                };
                /* A uid whose fds hold up too many closer helpers (closes that do not return)
                 * passes none. Its fds are not even taken in: a look first (MSG_PEEK with no
                 * room, which stops where the first fds are and releases nothing but extra
                 * references) says whether the read would bring any; if so the connection is
                 * refused with them still queued in it, and the sink closes it. */
                bool refused = false;
                if (!zd_closer_may_take(&c->s->closer, zd_conn_account(c))) {
                        struct msghdr peek = { .msg_iov = &iov, .msg_iovlen = 1 };
                        ssize_t k = recvmsg(c->fd, &peek, MSG_DONTWAIT | MSG_PEEK);
                        if (k < 0)
                                return errno == EAGAIN || errno == EINTR ? 0 : -ECONNRESET;
                        if (peek.msg_flags & MSG_CTRUNC)
                                refused = true;
                        else
                                iov.iov_len = (size_t) k; /* no further: what comes next may bring fds */
                }
                ssize_t n = 0;
                if (!refused) {
                        n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                        if (n < 0) {
                                if (errno == EAGAIN || errno == EINTR)
                                        return 0;
                                return -ECONNRESET;
                        }
                } else
                        mh.msg_controllen = 0;
                bool bad = false;
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0)) {
                                bad = true; /* credentials or anything else: not ours to accept */
                                continue;
                        }
                        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int *fdp = (int *) CMSG_DATA(cm);
                        for (size_t i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, fdp + i, sizeof(int));
                                /* fds come with a call, never while one is in progress (an
                                 * Events stream, a Wait): held meanwhile, a client's own end of
                                 * this socket would keep the connection from ever seeing EOF. */
                                if (c->n_in_fds < ZY_FDS_MAX && !c->busy)
                                        c->in_fds[c->n_in_fds++] = fd;
                                else {
                                        zd_server_close_caller_fd(c->s, fd, zd_conn_account(c));
                                        bad = true;
                                }
                        }
                }
                if (mh.msg_flags & MSG_CTRUNC)
                        bad = true; /* the daemon out of fds (EMFILE): the kernel released the rest */
                if (bad || refused) {
                        /* Tell the caller why, then drop it: its fd stream is out of step. */
                        zd_conn_drop_fds(c);
                        if (refused)
                                zd_log(LOG_NOTICE,
                                       "refusing the fds of uid %u: its fds hold up %d closer helpers, "
                                       "or too few are left",
                                       (unsigned) c->cred.uid, ZD_CLOSER_HELD_PER_UID);
                        return refused ? -ETOOMANYREFS : -EPROTO;
                }
                if (n == 0)
                        return -ECONNRESET;
                c->in_len += (size_t) n;
                if (c->acct)
                        c->acct->in_bytes += (size_t) n;
                c->last_active = ev_now(c->s->loop);
        }
}

int zd_conn_take_message(struct zd_conn *c, json_object **ret_msg, int *fds, size_t *ret_n_fds) {
        char *nul = memchr(c->in, 0, c->in_len);
        if (!nul)
                return -EMSGSIZE;
        ev_timer_stop(c->s->loop, &c->partial);

        size_t len = (size_t) (nul - c->in);
        /* Invalid UTF-8 would come back in error replies (e.g. an unknown method's name)
         * and make them invalid JSON: refuse it here, strictly (json-c's own check lets
         * overlong forms, surrogates and code points past U+10FFFF through). Raw control
         * bytes too: JSON has them escaped, and each would come back six times longer. */
        bool utf8 = zc_utf8_valid(c->in, len) && !zc_json_text_has_control(c->in, len);
        json_tokener *tok = utf8 ? json_tokener_new_ex(32) : NULL;
        json_object *msg = tok ? json_tokener_parse_ex(tok, c->in, (int) len) : NULL;
        bool complete =
                tok && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
        if (tok)
                json_tokener_free(tok);
        /* A key with \u0000 is cut there by json-c: "method\u0000x" would count as a
         * second "method". Strings with one are refused where they are read. */
        if (complete && zc_json_text_nul_escapes(c->in, len) != zc_json_nuls(msg))
                complete = false;
        memmove(c->in, nul + 1, c->in_len - len - 1);
        c->in_len -= len + 1;
        zd_account_consumed(c, len + 1);

        size_t n_fds = c->n_in_fds;
        memcpy(fds, c->in_fds, n_fds * sizeof(int));
        c->n_in_fds = 0;
        if (!complete || !json_object_is_type(msg, json_type_object)) {
                for (size_t i = 0; i < n_fds; i++)
                        zd_server_close_caller_fd(c->s, fds[i], zd_conn_account(c));
                json_object_put(msg);
                return -EBADMSG;
        }
        *ret_msg = msg;
        *ret_n_fds = n_fds;
        return 0;
}

bool zd_server_expire_partial(struct zd_server *s) {
        for (struct zd_conn *c = s->conns; c; c = c->next)
                if (ev_is_active(&c->partial)) {
                        ev_timer_stop(s->loop, &c->partial);
                        ev_invoke(s->loop, &c->partial, EV_TIMER);
                        return true;
                }
        return false;
}
