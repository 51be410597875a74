/* SPDX-License-Identifier: MIT */
/* The fake zygoted of the libzygote tests: the fixture (a connection on a socketpair) and the daemon's end. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "testutil.h"
#include "zygote.h"

#include "libzygote-fake.h"

int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        int sv[2];

        assert_non_null(f);
        f->open_fds_before = tu_count_open_fds();
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(zy_connect_fd(sv[0], &f->c), 0);
        f->srv = sv[1];
        *state = f;
        return 0;
}

int teardown(void **state) {
        struct fixture *f = *state;

        zy_conn_free(f->c);
        close(f->srv);
        /* Every fd the library received, it closed or handed out (and the test closed). */
        assert_int_equal(tu_count_open_fds(), f->open_fds_before);
        free(f);
        return 0;
}

/* ---- the fake daemon ------------------------------------------------------------------------- */

/* Sends one message (text + NUL) with fds on its first byte. */
void srv_send(int fd, const char *json, const int *fds, size_t n_fds) {
        size_t len = strlen(json) + 1;
        struct iovec iov = { .iov_base = (void *) json, .iov_len = len };

        assert_int_equal(send_fds(fd, &iov, 1, fds, n_fds, 0), (ssize_t) len);
}

void srv_sendf(int fd, const char *fmt, ...) {
        char *s;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&s, fmt, ap) >= 0);
        va_end(ap);
        srv_send(fd, s, NULL, 0);
        free(s);
}

/* Reads the next message the library sent, one byte per read so that nothing of the next
 * message is taken; checks its framing (fds only with the first byte, one NUL at the end). */
void srv_recv(int fd, struct request *req) {
        static char buf[ZY_MESSAGE_MAX + 16];
        size_t len = 0;
        json_object *m = NULL;

        memset(req, 0, sizeof(*req));
        for (;;) {
                struct iovec iov = { .iov_base = buf + len, .iov_len = 1 };
                size_t k = 0;
                ssize_t n = recv_fds(fd, &iov, 1, req->fds + req->n_fds,
                                     sizeof(req->fds) / sizeof(req->fds[0]) - req->n_fds, &k, MSG_DONTWAIT);

                if (n < 0)
                        fail_msg("no complete message from the library (%zu bytes): %s", len, strerror((int) -n));
                assert_int_equal(n, 1);
                /* The fds come with the message's last byte, its NUL (zygoted's fork-gate.c). */
                if (k > 0)
                        assert_int_equal(buf[len], 0);
                req->n_fds += k;
                if (buf[len++] == 0)
                        break;
                assert_true(len < sizeof(buf));
        }
        assert_true(len >= 2);
        assert_true(len <= ZY_MESSAGE_MAX);

        m = json_tokener_parse(buf);
        assert_non_null(m);
        assert_true(json_object_is_type(m, json_type_object));
        req->msg = m;
        json_object *method = json_object_object_get(m, "method");
        assert_non_null(method);
        assert_true(json_object_is_type(method, json_type_string));
        req->method = json_object_get_string(method);
        req->params = json_object_object_get(m, "parameters");
        if (req->params)
                assert_true(json_object_is_type(req->params, json_type_object));
}

void request_done(struct request *req) {
        for (size_t i = 0; i < req->n_fds; i++)
                close(req->fds[i]);
        json_object_put(req->msg);
}

void srv_expect_nothing(int fd) {
        char b;
        assert_int_equal(recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK), -1);
        assert_int_equal(errno, EAGAIN);
}

/* Parameter checks. */
json_object *param(struct request *req, const char *key, json_type type) {
        json_object *v;

        assert_non_null(req->params);
        v = json_object_object_get(req->params, key);
        if (!v)
                fail_msg("parameter %s missing in %s", key, json_object_to_json_string(req->msg));
        if (!json_object_is_type(v, type))
                fail_msg("parameter %s has the wrong type in %s", key, json_object_to_json_string(req->msg));
        return v;
}

void assert_param_string(struct request *req, const char *key, const char *value) {
        assert_string_equal(json_object_get_string(param(req, key, json_type_string)), value);
}

void assert_no_param(struct request *req, const char *key) {
        if (req->params)
                assert_null(json_object_object_get(req->params, key));
}

void assert_method(struct request *req, const char *method) {
        assert_string_equal(req->method, method);
}

/* Receives the next call and checks its method and (unless NULL) its "id". */
void expect_call(int fd, const char *method, const char *id) {
        struct request req;

        srv_recv(fd, &req);
        assert_method(&req, method);
        if (id)
                assert_param_string(&req, "id", id);
        request_done(&req);
}

/* State of id, answered by the fake daemon with reply: the task it returns (to be freed). */
struct zy_task_info *state_answered(struct fixture *f, const char *id, const char *reply) {
        struct zy_task_info *t = NULL;

        srv_send(f->srv, reply, NULL, 0);
        assert_int_equal(zy_state(f->c, id, &t), 0);
        expect_call(f->srv, "io.zygote.Launcher.State", id);
        return t;
}

bool same_file(int a, int b) {
        struct stat sa, sb;

        assert_int_equal(fstat(a, &sa), 0);
        assert_int_equal(fstat(b, &sb), 0);
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool is_cloexec(int fd) {
        int flags = fcntl(fd, F_GETFD);
        assert_true(flags >= 0);
        return flags & FD_CLOEXEC;
}

void *dribble_thread(void *p) {
        struct dribble *d = p;

        for (size_t off = 0; off < d->len;) {
                size_t n = d->len - off < d->chunk ? d->len - off : d->chunk;
                struct iovec iov = { .iov_base = (void *) (d->data + off), .iov_len = n };
                ssize_t k;

                k = send_fds(d->fd, &iov, 1, &d->pass_fd, off == 0 && d->pass_fd >= 0 ? 1 : 0, 0);
                if (k <= 0)
                        return (void *) (intptr_t) (k < 0 ? -k : EIO);
                off += (size_t) k;
        }
        return NULL;
}
