/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of client/containerd-shim/ttrpc.c, containerd-shim-zygote-v2's ttrpc transport: the frame header's
 * byte order, calls through zs_ttrpc_call() to zs_ttrpc_serve() on a real socket (status codes,
 * messages, several calls on one connection, several connections), frames the server refuses
 * (a response, an oversized one: that connection closes, the others go on), a reply to another
 * stream skipped by the client, and a handler that stops the server.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "ttrpc.h"
#include "ttrpc.pb-c.h"
#include "util.h"

struct server {
        char dir[64];
        char path[128];
        int listen_fd;
        pthread_t thread;
        int result;
};

static void handler(const char *service, const char *method, const uint8_t *payload, size_t length,
                    struct zs_ttrpc_result *res) {
        if (!streq(service, "test.Service")) {
                res->code = ZS_CODE_UNIMPLEMENTED;
                res->message = strdup(service);
        } else if (streq(method, "Echo")) {
                /* the payload's length as the status code: what the client sent arrived whole */
                res->code = (int) length;
                res->message = strndup((const char *) payload, length);
        } else if (streq(method, "Stop"))
                res->stop = true;
        else
                res->code = ZS_CODE_NOT_FOUND;
}

static void *serve_thread(void *p) {
        struct server *s = p;

        s->result = zs_ttrpc_serve(s->listen_fd, handler);
        return NULL;
}

static int setup(void **state) {
        struct server *s = calloc(1, sizeof(*s));
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        assert_non_null(s);
        strcpy(s->dir, "/tmp/test-shim-ttrpc.XXXXXX");
        assert_non_null(mkdtemp(s->dir));
        snprintf(s->path, sizeof(s->path), "%s/sock", s->dir);
        strcpy(sa.sun_path, s->path);
        s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->listen_fd >= 0);
        assert_int_equal(bind(s->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(s->listen_fd, 8), 0);
        assert_int_equal(pthread_create(&s->thread, NULL, serve_thread, s), 0);
        *state = s;
        return 0;
}

static int client(struct server *s) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        strcpy(sa.sun_path, s->path);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

/* Stops the server through a handler, as Shutdown does. */
static int teardown(void **state) {
        struct server *s = *state;
        int fd = client(s);

        assert_int_equal(zs_ttrpc_call(fd, 1, "test.Service", "Stop", NULL, 0, NULL), ZS_CODE_OK);
        assert_int_equal(pthread_join(s->thread, NULL), 0);
        assert_int_equal(s->result, 0);
        safe_close(fd);
        safe_close(s->listen_fd);
        unlink(s->path);
        rmdir(s->dir);
        free(s);
        return 0;
}

static void test_header_byte_order(void **state) {
        struct zs_ttrpc_header h = { .length = 0x01020304, .stream = 0x0a0b0c0d, .type = 2, .flags = 3 }, back;
        const uint8_t want[] = { 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 2, 3 };
        uint8_t buf[ZS_TTRPC_HEADER_SIZE];

        zs_ttrpc_header_encode(&h, buf);
        assert_memory_equal(buf, want, sizeof(want));
        zs_ttrpc_header_decode(buf, &back);
        assert_int_equal(back.length, h.length);
        assert_int_equal(back.stream, h.stream);
        assert_int_equal(back.type, h.type);
        assert_int_equal(back.flags, h.flags);
}

static void test_calls_and_statuses(void **state) {
        struct server *s = *state;
        _cleanup_close_ int fd = client(s);
        char *msg = NULL;

        assert_int_equal(zs_ttrpc_call(fd, 1, "test.Service", "Echo", (const uint8_t *) "hello", 5, &msg), 5);
        assert_string_equal(msg, "hello");
        free(msg);
        msg = NULL;
        assert_int_equal(zs_ttrpc_call(fd, 3, "test.Service", "Nothing", NULL, 0, &msg), ZS_CODE_NOT_FOUND);
        assert_null(msg); /* no message sent */
        assert_int_equal(zs_ttrpc_call(fd, 5, "other.Service", "Echo", NULL, 0, &msg), ZS_CODE_UNIMPLEMENTED);
        assert_string_equal(msg, "other.Service");
        free(msg);
}

static void test_large_payload(void **state) {
        struct server *s = *state;
        _cleanup_close_ int fd = client(s);
        size_t n = 100000;
        uint8_t *big = malloc(n);
        char *msg = NULL;

        assert_non_null(big);
        memset(big, 'z', n);
        /* the code is the length modulo what an int32 carries, here the length itself */
        assert_int_equal(zs_ttrpc_call(fd, 1, "test.Service", "Echo", big, n, &msg), (int) n);
        assert_int_equal(strlen(msg), n);
        free(msg);
        free(big);
}

static void send_raw(int fd, const struct zs_ttrpc_header *h) {
        uint8_t buf[ZS_TTRPC_HEADER_SIZE];

        zs_ttrpc_header_encode(h, buf);
        assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
}

static void test_bad_frames_close_their_connection(void **state) {
        struct server *s = *state;
        _cleanup_close_ int other = client(s);
        const struct zs_ttrpc_header bad[] = {
                { .length = 0, .stream = 1, .type = ZS_TTRPC_RESPONSE },
                { .length = ZS_TTRPC_MESSAGE_MAX + 1, .stream = 1, .type = ZS_TTRPC_REQUEST },
                { .length = 3, .stream = 1, .type = ZS_TTRPC_REQUEST }, /* then not a Request */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_close_ int fd = client(s);
                char c;

                send_raw(fd, &bad[i]);
                if (bad[i].length == 3)
                        assert_int_equal(write(fd, "\xff\xff\xff", 3), 3);
                assert_int_equal(read(fd, &c, 1), 0);
        }
        assert_int_equal(zs_ttrpc_call(other, 1, "test.Service", "Echo", (const uint8_t *) "x", 1, NULL), 1);
}

/* A server that answers another stream first: the client skips that frame. */
static void test_client_skips_other_streams(void **state) {
        _cleanup_close_pair_ int sp[2] = { -EBADF, -EBADF };
        ZsTtrpc__Response resp = ZS_TTRPC__RESPONSE__INIT;
        ZsTtrpc__Status status = ZS_TTRPC__STATUS__INIT;
        uint8_t buf[256], hdr[ZS_TTRPC_HEADER_SIZE];
        size_t n;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        status.code = ZS_CODE_NOT_FOUND;
        resp.status = &status;
        n = zs_ttrpc__response__pack(&resp, buf);
        /* queued before the call: a reply to stream 7, then to stream 9 */
        zs_ttrpc_header_encode(&(struct zs_ttrpc_header){ .length = n, .stream = 7, .type = ZS_TTRPC_RESPONSE }, hdr);
        assert_int_equal(write(sp[1], hdr, sizeof(hdr)), sizeof(hdr));
        assert_int_equal(write(sp[1], buf, n), (ssize_t) n);
        status.code = ZS_CODE_OK;
        n = zs_ttrpc__response__pack(&resp, buf);
        zs_ttrpc_header_encode(&(struct zs_ttrpc_header){ .length = n, .stream = 9, .type = ZS_TTRPC_RESPONSE }, hdr);
        assert_int_equal(write(sp[1], hdr, sizeof(hdr)), sizeof(hdr));
        assert_int_equal(write(sp[1], buf, n), (ssize_t) n);
        assert_int_equal(zs_ttrpc_call(sp[0], 9, "s", "m", NULL, 0, NULL), ZS_CODE_OK);
        /* and a peer that closes before answering */
        sp[1] = safe_close(sp[1]);
        assert_int_equal(zs_ttrpc_call(sp[0], 11, "s", "m", NULL, 0, NULL), -EPIPE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header_byte_order),
                cmocka_unit_test_setup_teardown(test_calls_and_statuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_large_payload, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_frames_close_their_connection, setup, teardown),
                cmocka_unit_test(test_client_skips_other_streams),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
