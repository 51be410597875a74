/* SPDX-License-Identifier: MIT */
/* The ttrpc server: framing, one reader thread per connection, one thread per request. */
#include "ttrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "log.h"
#include "ttrpc.pb-c.h"
#include "util.h"

/* A client connection, shared by its reader and its requests in flight; the last one closes it. */
struct conn {
        int fd;
        atomic_int refs;     /* the reader and each request in flight */
        atomic_int inflight; /* requests in flight */
        pthread_mutex_t write_lock;
        zs_ttrpc_handler handler;
        int stop_fd; /* the write end of the server's stop pipe */
};

struct request {
        struct conn *conn;
        uint32_t stream;
        ZsTtrpc__Request *req;
};

static void conn_unref(struct conn *c) {
        if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
                return;
        safe_close(c->fd);
        pthread_mutex_destroy(&c->write_lock);
        free(c);
}

void zs_ttrpc_header_encode(const struct zs_ttrpc_header *h, uint8_t buf[ZS_TTRPC_HEADER_SIZE]) {
        buf[0] = h->length >> 24;
        buf[1] = h->length >> 16;
        buf[2] = h->length >> 8;
        buf[3] = h->length;
        buf[4] = h->stream >> 24;
        buf[5] = h->stream >> 16;
        buf[6] = h->stream >> 8;
        buf[7] = h->stream;
        buf[8] = h->type;
        buf[9] = h->flags;
}

void zs_ttrpc_header_decode(const uint8_t buf[ZS_TTRPC_HEADER_SIZE], struct zs_ttrpc_header *h) {
        h->length = (uint32_t) buf[0] << 24 | (uint32_t) buf[1] << 16 | (uint32_t) buf[2] << 8 | buf[3];
        h->stream = (uint32_t) buf[4] << 24 | (uint32_t) buf[5] << 16 | (uint32_t) buf[6] << 8 | buf[7];
        h->type = buf[8];
        h->flags = buf[9];
}

/* Reads exactly n bytes: 1 when done, 0 at EOF before the first byte, -EPIPE at EOF after it. */
static int read_full(int fd, uint8_t *buf, size_t n) {
        size_t got = 0;

        while (got < n) {
                ssize_t k = read(fd, buf + got, n - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return got == 0 ? 0 : -EPIPE;
                got += (size_t) k;
        }
        return 1;
}

static int send_response(struct conn *c, uint32_t stream, const struct zs_ttrpc_result *res) {
        ZsTtrpc__Status status = ZS_TTRPC__STATUS__INIT;
        ZsTtrpc__Response resp = ZS_TTRPC__RESPONSE__INIT;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n;
        int r;

        status.code = res->code;
        if (res->message)
                status.message = res->message;
        resp.status = &status;
        resp.payload.data = res->payload;
        resp.payload.len = res->length;
        n = zs_ttrpc__response__get_packed_size(&resp);
        if (n > ZS_TTRPC_MESSAGE_MAX)
                return -EMSGSIZE;
        buf = malloc(ZS_TTRPC_HEADER_SIZE + n);
        if (!buf)
                return -ENOMEM;
        zs_ttrpc_header_encode(&(struct zs_ttrpc_header){ .length = n, .stream = stream, .type = ZS_TTRPC_RESPONSE },
                               buf);
        zs_ttrpc__response__pack(&resp, buf + ZS_TTRPC_HEADER_SIZE);
        pthread_mutex_lock(&c->write_lock);
        r = zc_write_all(c->fd, buf, ZS_TTRPC_HEADER_SIZE + n);
        pthread_mutex_unlock(&c->write_lock);
        return r;
}

/* Requests in flight on one connection at most: each holds a thread (a Wait until its exit); past
 * this, requests are answered at once with RESOURCE_EXHAUSTED. containerd has a few at a time. */
#define INFLIGHT_MAX 256

static void *request_thread(void *p) {
        struct request *rq = p;
        struct zs_ttrpc_result res = { .code = ZS_CODE_OK };
        int r;

        rq->conn->handler(rq->req->service, rq->req->method, rq->req->payload.data, rq->req->payload.len, &res);
        r = send_response(rq->conn, rq->stream, &res);
        if (r < 0)
                zs_log("%s.%s: the reply was not sent: %s", rq->req->service, rq->req->method, strerror(-r));
        if (res.stop && write(rq->conn->stop_fd, "x", 1) < 0)
                zs_log("could not stop the server: %m");
        free(res.message);
        free(res.payload);
        zs_ttrpc__request__free_unpacked(rq->req, NULL);
        atomic_fetch_sub(&rq->conn->inflight, 1);
        conn_unref(rq->conn);
        free(rq);
        return NULL;
}

static int start_detached(void *(*fn)(void *), void *arg) {
        pthread_attr_t attr;
        pthread_t t;
        int r;

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&t, &attr, fn, arg);
        pthread_attr_destroy(&attr);
        return -r;
}

/* One frame: a request goes to a thread of its own. A frame this server cannot read (too long,
 * not a request, not a Request message) ends the connection: the stream is out of step. */
static int handle_frame(struct conn *c, const struct zs_ttrpc_header *h, const uint8_t *data) {
        struct request *rq;
        int r;

        if (h->type != ZS_TTRPC_REQUEST)
                return -EBADMSG;
        rq = calloc(1, sizeof(*rq));
        if (!rq)
                return -ENOMEM;
        rq->req = zs_ttrpc__request__unpack(NULL, h->length, data);
        if (!rq->req) {
                free(rq);
                return -EBADMSG;
        }
        rq->stream = h->stream;
        rq->conn = c;
        if (atomic_fetch_add(&c->inflight, 1) >= INFLIGHT_MAX) {
                struct zs_ttrpc_result busy = { .code = ZS_CODE_RESOURCE_EXHAUSTED,
                                                .message = (char *) "too many calls in flight" };

                atomic_fetch_sub(&c->inflight, 1);
                zs_ttrpc__request__free_unpacked(rq->req, NULL);
                free(rq);
                return send_response(c, h->stream, &busy);
        }
        atomic_fetch_add(&c->refs, 1);
        r = start_detached(request_thread, rq);
        if (r < 0) {
                atomic_fetch_sub(&c->inflight, 1);
                conn_unref(c);
                zs_ttrpc__request__free_unpacked(rq->req, NULL);
                free(rq);
        }
        return r;
}

static void *conn_thread(void *p) {
        struct conn *c = p;
        uint8_t hbuf[ZS_TTRPC_HEADER_SIZE];

        for (;;) {
                struct zs_ttrpc_header h;
                _cleanup_free_ uint8_t *data = NULL;
                int r;

                r = read_full(c->fd, hbuf, sizeof(hbuf));
                if (r <= 0)
                        break;
                zs_ttrpc_header_decode(hbuf, &h);
                if (h.length > ZS_TTRPC_MESSAGE_MAX) {
                        zs_log("a frame of %u bytes: connection closed", h.length);
                        break;
                }
                data = malloc(h.length ? h.length : 1);
                if (!data)
                        break;
                r = read_full(c->fd, data, h.length);
                if (h.length > 0 && r <= 0)
                        break;
                r = handle_frame(c, &h, data);
                if (r < 0) {
                        zs_log("a frame of type %u: %s, connection closed", h.type, strerror(-r));
                        break;
                }
        }
        /* the requests in flight still answer; the fd closes with the last of them */
        shutdown(c->fd, SHUT_RD);
        conn_unref(c);
        return NULL;
}

static int accept_one(int listen_fd, zs_ttrpc_handler handler, int stop_fd) {
        struct conn *c;
        int fd, r;

        fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
                return errno == EINTR || errno == ECONNABORTED || errno == EAGAIN ? 0 : -errno;
        c = calloc(1, sizeof(*c));
        if (!c) {
                safe_close(fd);
                return 0;
        }
        c->fd = fd;
        c->refs = 1;
        c->handler = handler;
        c->stop_fd = stop_fd;
        pthread_mutex_init(&c->write_lock, NULL);
        r = start_detached(conn_thread, c);
        if (r < 0) {
                zs_log("no thread for a new connection: %s", strerror(-r));
                conn_unref(c);
        }
        return 0;
}

int zs_ttrpc_serve(int listen_fd, zs_ttrpc_handler handler) {
        /* never closed: a request thread may still write to it while the process exits, and a
         * closed number could be another fd by then */
        static int stop[2] = { -EBADF, -EBADF };
        int r;

        if (stop[0] < 0 && pipe2(stop, O_CLOEXEC) < 0)
                return -errno;
        for (;;) {
                struct pollfd p[2] = { { .fd = listen_fd, .events = POLLIN }, { .fd = stop[0], .events = POLLIN } };

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents) {
                        char b;

                        /* taken, so that a later zs_ttrpc_serve() serves again */
                        if (read(stop[0], &b, 1) < 0 && errno != EINTR)
                                return -errno;
                        return 0;
                }
                if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
                        return -ENOTCONN;
                r = accept_one(listen_fd, handler, stop[1]);
                if (r < 0)
                        return r;
        }
}

/* ---- the client side: one call at a time ----------------------------------------------------- */

int zs_ttrpc_call(int fd, uint32_t stream, const char *service, const char *method, const uint8_t *payload,
                  size_t length, char **ret_message) {
        ZsTtrpc__Request req = ZS_TTRPC__REQUEST__INIT;
        ZsTtrpc__Response *resp = NULL;
        _cleanup_free_ uint8_t *buf = NULL, *data = NULL;
        struct zs_ttrpc_header h;
        uint8_t hbuf[ZS_TTRPC_HEADER_SIZE];
        size_t n;
        int r;

        req.service = (char *) service;
        req.method = (char *) method;
        req.payload.data = (uint8_t *) payload;
        req.payload.len = length;
        n = zs_ttrpc__request__get_packed_size(&req);
        if (n > ZS_TTRPC_MESSAGE_MAX)
                return -EMSGSIZE;
        buf = malloc(ZS_TTRPC_HEADER_SIZE + n);
        if (!buf)
                return -ENOMEM;
        zs_ttrpc_header_encode(&(struct zs_ttrpc_header){ .length = n, .stream = stream, .type = ZS_TTRPC_REQUEST },
                               buf);
        zs_ttrpc__request__pack(&req, buf + ZS_TTRPC_HEADER_SIZE);
        r = zc_write_all(fd, buf, ZS_TTRPC_HEADER_SIZE + n);
        if (r < 0)
                return r;
        /* the answer to this stream; nothing else is in flight on this connection */
        for (;;) {
                r = read_full(fd, hbuf, sizeof(hbuf));
                if (r <= 0)
                        return r == 0 ? -ECONNRESET : r;
                zs_ttrpc_header_decode(hbuf, &h);
                if (h.length > ZS_TTRPC_MESSAGE_MAX)
                        return -EBADMSG;
                free(data);
                data = malloc(h.length ? h.length : 1);
                if (!data)
                        return -ENOMEM;
                r = read_full(fd, data, h.length);
                if (h.length > 0 && r <= 0)
                        return r == 0 ? -ECONNRESET : r;
                if (h.type == ZS_TTRPC_RESPONSE && h.stream == stream)
                        break;
        }
        resp = zs_ttrpc__response__unpack(NULL, h.length, data);
        if (!resp)
                return -EBADMSG;
        r = resp->status ? resp->status->code : ZS_CODE_OK;
        if (r < 0)
                r = ZS_CODE_UNKNOWN;
        if (r != ZS_CODE_OK && ret_message && resp->status->message && *resp->status->message)
                *ret_message = strdup(resp->status->message);
        zs_ttrpc__response__free_unpacked(resp, NULL);
        return r;
}
