/* SPDX-License-Identifier: MIT */
/*
 * libzygote against a fake zygoted: the library talks to one end of a socketpair, the test plays
 * the daemon on the other. A test queues the daemon's reply(ies) first (or has a thread write
 * them while the library reads), makes the library call, then reads and checks what the library
 * sent: framing (one JSON object, one NUL), method name, parameter types, fds attached.
 */
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

struct fixture {
        zy_conn *c;
        int srv; /* the fake daemon's end */
        int open_fds_before;
};

static int setup(void **state) {
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

static int teardown(void **state) {
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
static void srv_send(int fd, const char *json, const int *fds, size_t n_fds) {
        size_t len = strlen(json) + 1;
        struct iovec iov = { .iov_base = (void *) json, .iov_len = len };

        assert_int_equal(send_fds(fd, &iov, 1, fds, n_fds, 0), (ssize_t) len);
}

static void srv_sendf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void srv_sendf(int fd, const char *fmt, ...) {
        char *s;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&s, fmt, ap) >= 0);
        va_end(ap);
        srv_send(fd, s, NULL, 0);
        free(s);
}

struct request {
        json_object *msg;
        json_object *params; /* borrowed from msg; NULL when absent */
        const char *method;
        int fds[80];
        size_t n_fds;
};

/* Reads the next message the library sent, one byte per read so that nothing of the next
 * message is taken; checks its framing (fds only with the first byte, one NUL at the end). */
static void srv_recv(int fd, struct request *req) {
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

static void request_done(struct request *req) {
        for (size_t i = 0; i < req->n_fds; i++)
                close(req->fds[i]);
        json_object_put(req->msg);
}

static void srv_expect_nothing(int fd) {
        char b;
        assert_int_equal(recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK), -1);
        assert_int_equal(errno, EAGAIN);
}

/* Parameter checks. */
static json_object *param(struct request *req, const char *key, json_type type) {
        json_object *v;

        assert_non_null(req->params);
        v = json_object_object_get(req->params, key);
        if (!v)
                fail_msg("parameter %s missing in %s", key, json_object_to_json_string(req->msg));
        if (!json_object_is_type(v, type))
                fail_msg("parameter %s has the wrong type in %s", key, json_object_to_json_string(req->msg));
        return v;
}

static void assert_param_string(struct request *req, const char *key, const char *value) {
        assert_string_equal(json_object_get_string(param(req, key, json_type_string)), value);
}

static void assert_no_param(struct request *req, const char *key) {
        if (req->params)
                assert_null(json_object_object_get(req->params, key));
}

static void assert_method(struct request *req, const char *method) {
        assert_string_equal(req->method, method);
}

/* Receives the next call and checks its method and (unless NULL) its "id". */
static void expect_call(int fd, const char *method, const char *id) {
        struct request req;

        srv_recv(fd, &req);
        assert_method(&req, method);
        if (id)
                assert_param_string(&req, "id", id);
        request_done(&req);
}

/* State of id, answered by the fake daemon with reply: the task it returns (to be freed). */
static struct zy_task_info *state_answered(struct fixture *f, const char *id, const char *reply) {
        struct zy_task_info *t = NULL;

        srv_send(f->srv, reply, NULL, 0);
        assert_int_equal(zy_state(f->c, id, &t), 0);
        expect_call(f->srv, "io.zygote.Launcher.State", id);
        return t;
}

static bool same_file(int a, int b) {
        struct stat sa, sb;

        assert_int_equal(fstat(a, &sa), 0);
        assert_int_equal(fstat(b, &sb), 0);
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool is_cloexec(int fd) {
        int flags = fcntl(fd, F_GETFD);
        assert_true(flags >= 0);
        return flags & FD_CLOEXEC;
}

/* A thread that writes a buffer one byte per write (fds on the first one), so that the library
 * sees the reply in as many pieces as the scheduler makes. */
struct dribble {
        int fd;
        const char *data;
        size_t len;
        int pass_fd;
        size_t chunk;
};

static void *dribble_thread(void *p) {
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

/* ---- connecting ---------------------------------------------------------------------------- */

static void test_default_socket_path(void **state) {
        char *p = NULL;
        pid_t pid;
        int status;

        setenv("ZYGOTE_SOCKET", "/tmp/x/zygoted.sock", 1);
        assert_int_equal(zy_default_socket_path(&p), 0);
        assert_string_equal(p, "/tmp/x/zygoted.sock");
        free(p);

        unsetenv("ZYGOTE_SOCKET");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* A user that is not root: the per-user daemon under XDG_RUNTIME_DIR. */
                char *q = NULL;
                if (geteuid() == 0 && setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                setenv("XDG_RUNTIME_DIR", "/run/user/65534", 1);
                if (zy_default_socket_path(&q) < 0 || strcmp(q, "/run/user/65534/zygote/zygoted.sock") != 0)
                        _exit(3);
                free(q);
                unsetenv("XDG_RUNTIME_DIR");
                if (zy_default_socket_path(&q) < 0 || strcmp(q, "/run/user/65534/zygote/zygoted.sock") != 0)
                        _exit(4);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);

        if (geteuid() == 0) {
                assert_int_equal(zy_default_socket_path(&p), 0);
                assert_string_equal(p, ZY_SOCKET_SYSTEM);
                free(p);
        }
}

static void test_connect(void **state) {
        char name[64], path[200];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        zy_conn *c = NULL;
        int l, a;

        /* An abstract socket, "@name". */
        snprintf(name, sizeof(name), "@zygote-test-libzygote-%d", (int) getpid());
        l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(l >= 0);
        memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
        assert_int_equal(bind(l, (struct sockaddr *) &sa, offsetof(struct sockaddr_un, sun_path) + strlen(name)), 0);
        assert_int_equal(listen(l, 1), 0);
        assert_int_equal(zy_connect(name, &c), 0);
        assert_true(is_cloexec(zy_conn_get_fd(c)));
        a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        assert_true(a >= 0);
        srv_send(a, "{\"parameters\":{\"tasks\":[]}}", NULL, 0);
        struct zy_task_list *tl = NULL;
        assert_int_equal(zy_list(c, &tl), 0);
        assert_int_equal(tl->n_tasks, 0);
        zy_task_list_free(tl);
        close(a);
        c = zy_conn_free(c);
        assert_null(c);

        /* No daemon: the errno says so, the out-parameter is untouched. */
        c = (zy_conn *) (uintptr_t) 1;
        assert_int_equal(zy_connect("/nonexistent/zygoted.sock", &c), -ENOENT);
        assert_int_equal(zy_connect("@zygote-test-nobody-listens-here", &c), -ECONNREFUSED);
        assert_ptr_equal(c, (zy_conn *) (uintptr_t) 1);
        memset(path, 'x', sizeof(path) - 1);
        path[0] = '/';
        path[sizeof(path) - 1] = 0;
        assert_int_equal(zy_connect(path, &c), -ENAMETOOLONG);
        assert_int_equal(zy_connect("", &c), -EINVAL);

        /* zy_connect(NULL) follows ZYGOTE_SOCKET. */
        setenv("ZYGOTE_SOCKET", name, 1);
        c = NULL;
        assert_int_equal(zy_connect(NULL, &c), 0);
        zy_conn_free(c);
        unsetenv("ZYGOTE_SOCKET");
        close(l);

        /* A datagram socket is not a connection. */
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(zy_connect_fd(sv[0], &c), -ENOTSOCK);
        close(sv[0]);
        close(sv[1]);
        assert_null(zy_conn_free(NULL));
}

/* ---- the generic call ---------------------------------------------------------------------- */

static void test_call_framing(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        struct request req;
        json_object *p = json_object_new_object();

        json_object_object_add(p, "id", json_object_new_string("a\"b/c"));
        json_object_object_add(p, "n", json_object_new_int(7));
        srv_send(f->srv, "{\"parameters\":{\"answer\":42}}", NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.State", p, NULL, 0, 0, &reply), 0);
        assert_int_equal(json_object_get_int(json_object_object_get(reply->parameters, "answer")), 42);
        assert_false(reply->continues);
        assert_int_equal(reply->n_fds, 0);
        zy_reply_free(reply);

        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.State");
        assert_param_string(&req, "id", "a\"b/c");
        assert_int_equal(json_object_get_int(param(&req, "n", json_type_int)), 7);
        assert_null(json_object_object_get(req.msg, "more"));
        assert_null(json_object_object_get(req.msg, "oneway"));
        request_done(&req);
        /* The caller still owns its parameters. */
        assert_int_equal(json_object_put(p), 1);

        /* Parameters as JSON text; none at all; a reply without parameters. */
        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_call_send_json(f->c, "io.zygote.Launcher.Kill", "{\"id\":\"x\",\"signal\":9}", NULL, 0, 0),
                         0);
        assert_int_equal(zy_reply_read(f->c, 0, &reply), 0);
        assert_true(json_object_is_type(reply->parameters, json_type_object));
        assert_int_equal(json_object_object_length(reply->parameters), 0);
        zy_reply_free(reply);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Kill");
        assert_int_equal(json_object_get_int(param(&req, "signal", json_type_int)), 9);
        request_done(&req);

        assert_int_equal(zy_call_send_json(f->c, "io.zygote.Launcher.List", "[1]", NULL, 0, 0), -EINVAL);
        assert_int_equal(zy_call_send_json(f->c, "io.zygote.Launcher.List", "{\"a\":1} x", NULL, 0, 0), -EINVAL);
        srv_expect_nothing(f->srv);

        /* oneway: the flag goes out, and no reply is expected. */
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.CloseIO", NULL, NULL, 0, ZY_CALL_ONEWAY), 0);
        assert_int_equal(zy_reply_read(f->c, 0, &reply), -ENOMSG);
        srv_recv(f->srv, &req);
        assert_true(json_object_get_boolean(json_object_object_get(req.msg, "oneway")));
        assert_null(req.params);
        request_done(&req);

        assert_int_equal(zy_call_send(f->c, "x", NULL, NULL, 0, ZY_CALL_ONEWAY | ZY_CALL_MORE), -EINVAL);
        assert_int_equal(zy_call_send(f->c, "", NULL, NULL, 0, 0), -EINVAL);
        json_object *array = json_object_new_array();
        assert_int_equal(zy_call_send(f->c, "x", array, NULL, 0, 0), -EINVAL);
        json_object_put(array);
}

static void test_call_more(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        struct request req;

        srv_send(f->srv, "{\"parameters\":{\"n\":1},\"continues\":true}", NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"n\":2},\"continues\":true}", NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"n\":3}}", NULL, 0);
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.Wait", NULL, NULL, 0, ZY_CALL_MORE), 0);
        /* One call at a time. */
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0), -EINPROGRESS);
        for (int i = 1; i <= 3; i++) {
                assert_int_equal(zy_reply_read(f->c, 0, &reply), 0);
                assert_int_equal(json_object_get_int(json_object_object_get(reply->parameters, "n")), i);
                assert_int_equal(reply->continues, i < 3);
                zy_reply_free(reply);
        }
        assert_int_equal(zy_reply_read(f->c, 0, &reply), -ENOMSG);
        srv_recv(f->srv, &req);
        assert_true(json_object_get_boolean(json_object_object_get(req.msg, "more")));
        request_done(&req);

        /* "continues" on a call that did not ask for more breaks the protocol. */
        srv_send(f->srv, "{\"parameters\":{},\"continues\":true}", NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -EBADMSG);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ENOTCONN);
}

static void test_send_fds(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        struct request req;
        int fds[ZY_FDS_MAX + 1];

        for (size_t i = 0; i < ZY_FDS_MAX + 1; i++) {
                fds[i] = eventfd(0, EFD_CLOEXEC);
                assert_true(fds[i] >= 0);
        }
        /* More than the protocol allows: nothing is sent. */
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.Spawn", NULL, fds, ZY_FDS_MAX + 1, 0), -EMSGSIZE);
        srv_expect_nothing(f->srv);
        int bad[] = { 0, -1 };
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.Spawn", NULL, bad, 2, 0), -EBADF);

        srv_send(f->srv, "{\"parameters\":{}}", NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.Spawn", NULL, fds, ZY_FDS_MAX, 0, &reply), 0);
        zy_reply_free(reply);
        srv_recv(f->srv, &req);
        assert_int_equal(req.n_fds, ZY_FDS_MAX);
        for (size_t i = 0; i < ZY_FDS_MAX; i++) {
                assert_true(same_file(req.fds[i], fds[i]));
                assert_true(req.fds[i] != fds[i]);
        }
        request_done(&req);
        /* The caller keeps its fds. */
        for (size_t i = 0; i < ZY_FDS_MAX + 1; i++)
                assert_int_equal(close(fds[i]), 0);
}

static void test_send_too_big(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        struct request req;
        json_object *p = json_object_new_object();
        char *big = malloc(ZY_MESSAGE_MAX);

        memset(big, 'a', ZY_MESSAGE_MAX - 1);
        big[ZY_MESSAGE_MAX - 1] = 0;
        json_object_object_add(p, "x", json_object_new_string(big));
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", p, NULL, 0, 0, &reply), -EMSGSIZE);
        srv_expect_nothing(f->srv);

        /* Just under the limit goes out whole (with its NUL, 64 KiB exactly). */
        size_t overhead = strlen("{\"method\":\"io.zygote.Launcher.List\",\"parameters\":{\"x\":\"\"}}");
        big[ZY_MESSAGE_MAX - 1 - overhead] = 0;
        json_object_object_add(p, "x", json_object_new_string(big));
        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", p, NULL, 0, 0, &reply), 0);
        zy_reply_free(reply);
        srv_recv(f->srv, &req);
        assert_int_equal(strlen(json_object_get_string(param(&req, "x", json_type_string))), ZY_MESSAGE_MAX - 1 - overhead);
        request_done(&req);

        /* One byte more. */
        big[ZY_MESSAGE_MAX - 1 - overhead] = 'a';
        big[ZY_MESSAGE_MAX - overhead] = 0;
        json_object_object_add(p, "x", json_object_new_string(big));
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", p, NULL, 0, 0, &reply), -EMSGSIZE);
        srv_expect_nothing(f->srv);
        json_object_put(p);
        free(big);
}

static void test_reply_dribbled(void **state) {
        struct fixture *f = *state;
        struct zy_spawn_result *sr = NULL;
        const char *argv[] = { "/bin/true", NULL };
        struct zy_spawn_opts o = { .argv = argv };
        static const char reply[] = "{\"parameters\":{\"id\":\"slow\",\"pid\":1234,\"tier\":\"inherit\"}}\0"
                                    "{\"parameters\":{\"pids\":[1234,1235]}}";
        int ev = eventfd(0, EFD_CLOEXEC);
        struct dribble d = { .fd = f->srv, .data = reply, .len = sizeof(reply), .pass_fd = ev, .chunk = 1 };
        pthread_t t;
        void *res;
        pid_t *pids = NULL;
        size_t n = 0;

        assert_int_equal(pthread_create(&t, NULL, dribble_thread, &d), 0);
        assert_int_equal(zy_spawn(f->c, &o, &sr), 0);
        assert_string_equal(sr->id, "slow");
        assert_int_equal(sr->pid, 1234);
        assert_string_equal(sr->tier, "inherit");
        assert_true(sr->pidfd >= 0);
        assert_true(same_file(sr->pidfd, ev));
        assert_true(is_cloexec(sr->pidfd));
        zy_spawn_result_free(sr);
        assert_int_equal(zy_pids(f->c, "slow", &pids, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(pids[0], 1234);
        assert_int_equal(pids[1], 1235);
        free(pids);
        assert_int_equal(pthread_join(t, &res), 0);
        assert_null(res);
        close(ev);

        expect_call(f->srv, "io.zygote.Launcher.Spawn", NULL);
        expect_call(f->srv, "io.zygote.Launcher.Pids", "slow");
        srv_expect_nothing(f->srv);
}

static void test_reply_large(void **state) {
        struct fixture *f = *state;
        /* A reply far larger than the socket buffer and the library's read size, within the
         * default limit: read in many pieces. */
        size_t n = 4U * 1024U * 1024U;
        size_t len = n + 64;
        char *buf = malloc(len);
        struct dribble d = { .fd = f->srv, .data = buf, .pass_fd = -1, .chunk = 100000 };
        struct zy_reply *reply = NULL;
        pthread_t t;
        int k;

        k = snprintf(buf, len, "{\"parameters\":{\"x\":\"");
        memset(buf + k, 'y', n);
        k += (int) n;
        k += snprintf(buf + k, len - (size_t) k, "\"}}");
        d.len = (size_t) k + 1; /* with its NUL */
        assert_int_equal(pthread_create(&t, NULL, dribble_thread, &d), 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), 0);
        assert_int_equal(json_object_get_string_len(json_object_object_get(reply->parameters, "x")), (int) n);
        zy_reply_free(reply);
        assert_int_equal(pthread_join(t, NULL), 0);
        free(buf);
}

static void test_reply_oversize(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        char big[4096 + 64];
        int ev = eventfd(0, EFD_CLOEXEC);

        assert_int_equal(zy_conn_set_reply_limit(f->c, 1024), 0);
        snprintf(big, sizeof(big), "{\"parameters\":{\"x\":\"%04000d\"}}", 0);
        /* The oversize reply carries an fd: dropped with it (teardown counts fds). */
        srv_send(f->srv, big, &ev, 1);
        srv_send(f->srv, "{\"parameters\":{\"ok\":true}}", NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 1, &reply), -EMSGSIZE);
        assert_null(zy_conn_error_name(f->c));
        /* The connection stays in step: the next call gets its own reply. */
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), 0);
        assert_true(json_object_get_boolean(json_object_object_get(reply->parameters, "ok")));
        zy_reply_free(reply);

        /* Exactly the limit is fine. */
        char exact[1025];
        int pre = snprintf(exact, sizeof(exact), "{\"parameters\":{\"x\":\"");
        memset(exact + pre, 'z', 1024 - (size_t) pre - 3);
        memcpy(exact + 1024 - 3, "\"}}", 4);
        assert_int_equal(strlen(exact), 1024);
        srv_send(f->srv, exact, NULL, 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), 0);
        zy_reply_free(reply);
        close(ev);

        /* In a stream, a dropped reply leaves the stream's state unknown: the connection ends. */
        srv_send(f->srv, big, NULL, 0);
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.Events", NULL, NULL, 0, ZY_CALL_MORE), 0);
        assert_int_equal(zy_reply_read(f->c, 0, &reply), -EMSGSIZE);
        assert_int_equal(zy_reply_read(f->c, 0, &reply), -ENOTCONN);
}

static void test_reply_oversize_default(void **state) {
        struct fixture *f = *state;
        size_t n = ZY_REPLY_LIMIT_DEFAULT + 1;
        char *buf = malloc(n + 64);
        struct dribble d = { .fd = f->srv, .data = buf, .pass_fd = -1, .chunk = 1U << 20 };
        struct zy_reply *reply = NULL;
        pthread_t t;
        int k;

        k = snprintf(buf, n + 64, "{\"parameters\":{\"x\":\"");
        memset(buf + k, 'q', n);
        k += (int) n;
        k += snprintf(buf + k, n + 64 - (size_t) k, "\"}}");
        d.len = (size_t) k + 1;
        assert_int_equal(pthread_create(&t, NULL, dribble_thread, &d), 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -EMSGSIZE);
        assert_int_equal(pthread_join(t, NULL), 0);
        free(buf);
        srv_send(f->srv, "{\"parameters\":{\"tasks\":[]}}", NULL, 0);
        struct zy_task_list *l = NULL;
        assert_int_equal(zy_list(f->c, &l), 0);
        zy_task_list_free(l);
}

static void test_reply_fds(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        int ev[2] = { eventfd(0, 0), eventfd(0, 0) }; /* not CLOEXEC here: the library's copies must be */

        srv_send(f->srv, "{\"parameters\":{}}", ev, 1);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.Spawn", NULL, NULL, 0, 1, &reply), 0);
        assert_int_equal(reply->n_fds, 1);
        assert_true(same_file(reply->fds[0], ev[0]));
        assert_true(is_cloexec(reply->fds[0]));
        zy_reply_free(reply); /* closes it */

        /* More fds than the call expects: rejected, all closed, the connection ends. */
        srv_send(f->srv, "{\"parameters\":{}}", ev, 2);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.Spawn", NULL, NULL, 0, 1, &reply), -EBADMSG);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ENOTCONN);
        close(ev[0]);
        close(ev[1]);
}

static void test_reply_fds_unexpected(void **state) {
        struct fixture *f = *state;
        struct zy_task_info *t = NULL;
        int ev = eventfd(0, EFD_CLOEXEC);

        /* A typed helper whose reply carries no fd. */
        srv_send(f->srv, "{\"parameters\":{}}", &ev, 1);
        assert_int_equal(zy_state(f->c, "x", &t), -EBADMSG);
        assert_null(t);
        close(ev);
}

static void test_reply_fds_association(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        int ev = eventfd(0, EFD_CLOEXEC);

        /* Both replies are queued before the library reads: its first read returns the first
         * reply and the head of the second together with the second one's fd. The fd belongs
         * to the second. */
        srv_send(f->srv, "{\"parameters\":{\"n\":1},\"continues\":true}", NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"n\":2},\"continues\":true}", &ev, 1);
        srv_send(f->srv, "{\"parameters\":{\"n\":3}}", NULL, 0);
        assert_int_equal(zy_call_send(f->c, "io.zygote.Launcher.Events", NULL, NULL, 0, ZY_CALL_MORE), 0);
        assert_int_equal(zy_reply_read(f->c, 1, &reply), 0);
        assert_int_equal(json_object_get_int(json_object_object_get(reply->parameters, "n")), 1);
        assert_int_equal(reply->n_fds, 0);
        zy_reply_free(reply);
        assert_true(zy_conn_has_input(f->c));
        assert_int_equal(zy_reply_read(f->c, 1, &reply), 0);
        assert_int_equal(json_object_get_int(json_object_object_get(reply->parameters, "n")), 2);
        assert_int_equal(reply->n_fds, 1);
        assert_true(same_file(reply->fds[0], ev));
        zy_reply_free(reply);
        assert_int_equal(zy_reply_read(f->c, 1, &reply), 0);
        assert_int_equal(reply->n_fds, 0);
        zy_reply_free(reply);
        close(ev);
}

static void test_reply_malformed(void **state) {
        static const char *const bad[] = {
                "not json",
                "[1,2]",
                "{\"parameters\":[]}",
                "{\"parameters\":{}} trailing",
                "{\"parameters\":{}",
                "{\"error\":7}",
                "{\"error\":\"\"}",
                "{\"parameters\":{},\"continues\":\"yes\"}",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                zy_conn *c = NULL;
                struct zy_reply *reply = NULL;
                int sv[2];

                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
                assert_int_equal(zy_connect_fd(sv[0], &c), 0);
                srv_send(sv[1], bad[i], NULL, 0);
                if (zy_call(c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply) != -EBADMSG)
                        fail_msg("reply %s not rejected", bad[i]);
                assert_null(reply);
                assert_int_equal(zy_call(c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ENOTCONN);
                zy_conn_free(c);
                close(sv[1]);
        }
}

static void test_eof(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;
        static const char half[] = "{\"parameters\":";

        /* The daemon goes away in the middle of a reply. */
        assert_int_equal(send(f->srv, half, sizeof(half) - 1, 0), (ssize_t) sizeof(half) - 1);
        assert_int_equal(shutdown(f->srv, SHUT_WR), 0);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ECONNRESET);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ENOTCONN);
}

static void test_send_to_closed(void **state) {
        struct fixture *f = *state;
        struct zy_reply *reply = NULL;

        /* No SIGPIPE kills us: an error comes back. */
        close(f->srv);
        f->srv = eventfd(0, EFD_CLOEXEC);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -EPIPE);
        assert_int_equal(zy_call(f->c, "io.zygote.Launcher.List", NULL, NULL, 0, 0, &reply), -ENOTCONN);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void test_error_mapping(void **state) {
        static const struct {
                const char *name;
                const char *params;
                int error;
        } table[] = {
                { "io.zygote.Launcher.NoSuchTask", "{\"id\":\"t\"}", -ESRCH },
                { "io.zygote.Launcher.NoSuchProfile", "{\"profile\":\"p\"}", -ENOENT },
                { "io.zygote.Launcher.PermissionDenied", "{\"reason\":\"r\"}", -EPERM },
                { "org.varlink.service.PermissionDenied", "{}", -EPERM },
                { "org.varlink.service.InvalidParameter", "{\"parameter\":\"argv\"}", -EINVAL },
                { "org.varlink.service.MethodNotFound", "{\"method\":\"m\"}", -EOPNOTSUPP },
                { "org.varlink.service.MethodNotImplemented", "{\"method\":\"m\"}", -EOPNOTSUPP },
                { "org.varlink.service.InterfaceNotFound", "{\"interface\":\"i\"}", -EOPNOTSUPP },
                { "org.varlink.service.ExpectedMore", "{}", -EBADRQC },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"message\",\"max\":65536}", -E2BIG },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"fds\",\"max\":64}", -E2BIG },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"tasks\",\"max\":1024}", -EAGAIN },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"connections\",\"max\":256}", -EAGAIN },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"subscribers\",\"max\":64}", -EAGAIN },
                { "io.zygote.Launcher.LimitExceeded", "{\"limit\":\"tasks_per_user\",\"max\":64}", -EAGAIN },
                { "io.zygote.Launcher.LimitExceeded", "{}", -E2BIG },
                { "io.zygote.Launcher.TaskExists", "{\"id\":\"t\"}", -EEXIST },
                { "io.zygote.Launcher.InvalidState", "{\"id\":\"t\",\"state\":\"running\"}", -EBUSY },
                { "io.zygote.Launcher.SpawnFailed", "{\"step\":\"uid\",\"errno\":1,\"message\":\"m\"}", -ECHILD },
                { "io.zygote.Launcher.SomethingNew", "{}", -EREMOTEIO },
                { "com.example.Other", "{}", -EREMOTEIO },
        };
        struct fixture *f = *state;

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                struct zy_reply *reply = NULL;
                int ev = eventfd(0, EFD_CLOEXEC);
                struct request req;
                json_object *expected = json_tokener_parse(table[i].params);

                assert_non_null(expected);
                srv_sendf(f->srv, "{\"error\":\"%s\",\"parameters\":%s}", table[i].name, table[i].params);
                if (zy_call(f->c, "io.zygote.Launcher.State", NULL, NULL, 0, 0, &reply) != table[i].error)
                        fail_msg("%s did not map to %d", table[i].name, table[i].error);
                assert_null(reply);
                assert_string_equal(zy_conn_error_name(f->c), table[i].name);
                assert_true(json_object_equal(zy_conn_error_parameters(f->c), expected));
                json_object *limit = json_object_object_get(expected, "limit");
                assert_int_equal(zy_error_to_errno(table[i].name, limit ? json_object_get_string(limit) : NULL),
                                 table[i].error);
                json_object_put(expected);
                srv_recv(f->srv, &req);
                request_done(&req);

                /* An fd on an error reply is closed, not leaked (teardown counts fds), and the
                 * connection goes on. */
                srv_send(f->srv, "{\"error\":\"io.zygote.Launcher.NoSuchTask\",\"parameters\":{\"id\":\"t\"}}", &ev, 1);
                assert_int_equal(zy_call(f->c, "io.zygote.Launcher.Spawn", NULL, NULL, 0, 1, &reply), -ESRCH);
                close(ev);
                srv_recv(f->srv, &req);
                request_done(&req);
        }
}

static void test_errors_readable(void **state) {
        struct fixture *f = *state;
        struct zy_task_info *t = NULL;
        const char *step = NULL, *msg = NULL;
        int err = 0;

        srv_sendf(f->srv, "{\"error\":\"io.zygote.Launcher.NoSuchTask\",\"parameters\":{\"id\":\"gone\"}}");
        assert_int_equal(zy_state(f->c, "gone", &t), -ESRCH);
        assert_null(t);
        assert_string_equal(zy_conn_error_name(f->c), "io.zygote.Launcher.NoSuchTask");
        assert_string_equal(json_object_get_string(json_object_object_get(zy_conn_error_parameters(f->c), "id")), "gone");
        assert_int_equal(zy_conn_spawn_failure(f->c, &step, &err, &msg), -ENODATA);

        srv_sendf(f->srv, "{\"error\":\"io.zygote.Launcher.SpawnFailed\",\"parameters\":"
                          "{\"step\":\"exec\",\"errno\":2,\"message\":\"execve: No such file\"}}");
        const char *argv[] = { "nope", NULL };
        struct zy_spawn_opts o = { .argv = argv };
        struct zy_spawn_result *sr = NULL;
        assert_int_equal(zy_spawn(f->c, &o, &sr), -ECHILD);
        assert_null(sr);
        assert_int_equal(zy_conn_spawn_failure(f->c, &step, &err, &msg), 0);
        assert_string_equal(step, "exec");
        assert_int_equal(err, ENOENT);
        assert_string_equal(msg, "execve: No such file");
        assert_int_equal(zy_conn_spawn_failure(f->c, NULL, NULL, NULL), 0);

        /* A success clears the last error. */
        srv_sendf(f->srv, "{}");
        assert_int_equal(zy_start(f->c, "x"), 0);
        assert_null(zy_conn_error_name(f->c));
        assert_null(zy_conn_error_parameters(f->c));
        assert_int_equal(zy_conn_spawn_failure(f->c, &step, &err, &msg), -ENODATA);

        /* SpawnFailed with a malformed errno. */
        srv_sendf(f->srv, "{\"error\":\"io.zygote.Launcher.SpawnFailed\",\"parameters\":{\"step\":\"exec\"}}");
        assert_int_equal(zy_spawn(f->c, &o, &sr), -ECHILD);
        assert_int_equal(zy_conn_spawn_failure(f->c, &step, &err, &msg), -EBADMSG);

        /* An error without parameters. */
        srv_sendf(f->srv, "{\"error\":\"org.varlink.service.MethodNotFound\"}");
        assert_int_equal(zy_start(f->c, "x"), -EOPNOTSUPP);
        assert_non_null(zy_conn_error_parameters(f->c));

        assert_int_equal(zy_error_to_errno(NULL, NULL), -EINVAL);
        assert_int_equal(zy_error_to_errno("io.zygote.Launcher.LimitExceeded", "memory"), -EAGAIN);
        assert_int_equal(zy_error_to_errno("io.zygote.Launcher.LimitExceeded", "message"), -E2BIG);
        assert_int_equal(zy_error_to_errno("io.zygote.Launcher.NoSuchTask", "tasks"), -ESRCH);

        /* Drain the requests. */
        char drain[4096];
        while (recv(f->srv, drain, sizeof(drain), MSG_DONTWAIT) > 0)
                ;
}

/* ---- typed helpers ------------------------------------------------------------------------- */

#define TASK_JSON(id, state, extra)                                                                \
        "{\"id\":\"" id "\",\"profile\":\"default\",\"state\":\"" state "\",\"pid\":4242,\"uid\":1000," \
        "\"tier\":\"load\",\"argv\":[\"/bin/sh\",\"-c\",\"exit 3\"],\"createdAt\":1700000000.25" extra "}"

static void test_spawn(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "sh", "-c", "echo hi", NULL };
        const char *env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
        const char *drop[] = { "CAP_NET_RAW", NULL };
        int a = eventfd(0, EFD_CLOEXEC), b = eventfd(0, EFD_CLOEXEC), pidfd = eventfd(0, EFD_CLOEXEC);
        /* a twice (stdout and stderr): sent once, referenced twice. */
        const struct zy_fd_map map[] = { { .fd = b, .target = 0 }, { .fd = a, .target = 1 }, { .fd = a, .target = 2 },
                                         { .fd = b, .target = 7 } };
        struct zy_spawn_opts o = { .argv = argv, .env = env, .cwd = "/tmp", .profile = "strict", .fds = map,
                                   .n_fds = 4, .user = "nobody", .group = "nogroup", .drop_caps = drop,
                                   .id = "job-1", .hold = true, .terminal = true };
        struct zy_spawn_result *sr = NULL;
        struct request req;
        json_object *v, *fds;

        srv_send(f->srv, "{\"parameters\":{\"id\":\"job-1\",\"pid\":777,\"tier\":\"clone\"}}", &pidfd, 1);
        assert_int_equal(zy_spawn(f->c, &o, &sr), 0);
        assert_string_equal(sr->id, "job-1");
        assert_int_equal(sr->pid, 777);
        assert_string_equal(sr->tier, "clone");
        assert_true(same_file(sr->pidfd, pidfd));
        assert_true(is_cloexec(sr->pidfd));

        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Spawn");
        v = param(&req, "argv", json_type_array);
        assert_int_equal(json_object_array_length(v), 3);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 2)), "echo hi");
        v = param(&req, "env", json_type_array);
        assert_int_equal(json_object_array_length(v), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)), "LANG=C.UTF-8");
        assert_param_string(&req, "cwd", "/tmp");
        assert_param_string(&req, "profile", "strict");
        assert_param_string(&req, "user", "nobody");
        assert_param_string(&req, "group", "nogroup");
        assert_param_string(&req, "id", "job-1");
        v = param(&req, "dropCapabilities", json_type_array);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "CAP_NET_RAW");
        assert_true(json_object_get_boolean(param(&req, "hold", json_type_boolean)));
        assert_true(json_object_get_boolean(param(&req, "terminal", json_type_boolean)));
        /* Two distinct fds went out, in order of first use; the map refers to them by index. */
        assert_int_equal(req.n_fds, 2);
        assert_true(same_file(req.fds[0], b));
        assert_true(same_file(req.fds[1], a));
        fds = param(&req, "fds", json_type_array);
        assert_int_equal(json_object_array_length(fds), 4);
        static const int want[4][2] = { { 0, 0 }, { 1, 1 }, { 1, 2 }, { 0, 7 } };
        for (size_t i = 0; i < 4; i++) {
                json_object *m = json_object_array_get_idx(fds, i);
                json_object *fd = json_object_object_get(m, "fd"), *target = json_object_object_get(m, "target");
                assert_true(json_object_is_type(fd, json_type_int));
                assert_true(json_object_is_type(target, json_type_int));
                assert_int_equal(json_object_get_int(fd), want[i][0]);
                assert_int_equal(json_object_get_int(target), want[i][1]);
        }
        request_done(&req);

        /* The result owns the pidfd; -1 keeps it. */
        int kept = sr->pidfd;
        sr->pidfd = -1;
        assert_null(zy_spawn_result_free(sr));
        assert_int_equal(close(kept), 0);

        /* The minimum: argv only; the optional parameters are left out, not sent as null. */
        const char *argv2[] = { "/bin/true", NULL };
        struct zy_spawn_opts o2 = { .argv = argv2 };
        sr = NULL;
        srv_send(f->srv, "{\"parameters\":{\"id\":\"t2\",\"pid\":2,\"tier\":\"load\"}}", NULL, 0);
        assert_int_equal(zy_spawn(f->c, &o2, &sr), 0);
        assert_int_equal(sr->pidfd, -1);
        zy_spawn_result_free(sr);
        srv_recv(f->srv, &req);
        assert_int_equal(req.n_fds, 0);
        static const char *const absent[] = { "env", "cwd", "profile", "fds", "user", "group", "dropCapabilities",
                                              "id", "hold", "terminal" };
        for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
                assert_no_param(&req, absent[i]);
        request_done(&req);

        /* An empty string is still a value: it goes to the daemon, which judges it. */
        struct zy_spawn_opts o5 = { .argv = argv2, .cwd = "" };
        srv_send(f->srv, "{\"parameters\":{\"id\":\"t5\",\"pid\":5,\"tier\":\"load\"}}", NULL, 0);
        assert_int_equal(zy_spawn(f->c, &o5, &sr), 0);
        sr = zy_spawn_result_free(sr);
        srv_recv(f->srv, &req);
        assert_param_string(&req, "cwd", "");
        request_done(&req);

        /* Bad arguments never reach the daemon. */
        const char *empty[] = { NULL };
        struct zy_spawn_opts o3 = { .argv = empty };
        assert_int_equal(zy_spawn(f->c, &o3, &sr), -EINVAL);
        const struct zy_fd_map badmap[] = { { .fd = -1, .target = 0 } };
        struct zy_spawn_opts o4 = { .argv = argv2, .fds = badmap, .n_fds = 1 };
        assert_int_equal(zy_spawn(f->c, &o4, &sr), -EBADF);
        srv_expect_nothing(f->srv);

        /* A reply that lacks a field, or has the wrong type. */
        srv_send(f->srv, "{\"parameters\":{\"id\":\"t3\",\"pid\":\"3\",\"tier\":\"load\"}}", NULL, 0);
        assert_int_equal(zy_spawn(f->c, &o2, &sr), -EBADMSG);
        srv_recv(f->srv, &req);
        request_done(&req);
        close(a);
        close(b);
        close(pidfd);
}

static void test_start_kill_close_io(void **state) {
        struct fixture *f = *state;
        struct request req;

        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_start(f->c, "held"), 0);
        expect_call(f->srv, "io.zygote.Launcher.Start", "held");

        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_kill(f->c, "t", SIGKILL, true), 0);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Kill");
        assert_param_string(&req, "id", "t");
        assert_int_equal(json_object_get_int(param(&req, "signal", json_type_int)), SIGKILL);
        assert_true(json_object_get_boolean(param(&req, "all", json_type_boolean)));
        request_done(&req);

        /* Signal 0: the daemon's default; all false: left out. */
        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_kill(f->c, "t", 0, false), 0);
        srv_recv(f->srv, &req);
        assert_no_param(&req, "signal");
        assert_no_param(&req, "all");
        request_done(&req);
        assert_int_equal(zy_kill(f->c, "t", 65, false), -EINVAL);
        assert_int_equal(zy_kill(f->c, "", 9, false), -EINVAL);
        assert_int_equal(zy_kill(f->c, NULL, 9, false), -EINVAL);

        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_close_io(f->c, "t"), 0);
        expect_call(f->srv, "io.zygote.Launcher.CloseIO", "t");
        srv_expect_nothing(f->srv);
}

/* Spawn with "more": the first reply at exec, the exit as the same call's last reply; no other
 * call may go out on the connection meanwhile. */
static void test_spawn_more(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "/bin/true", NULL };
        struct zy_spawn_opts o = { .argv = argv };
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        struct request req;
        json_object *more;

        srv_send(f->srv, "{\"parameters\":{\"id\":\"m\",\"pid\":778,\"tier\":\"inherit\"},\"continues\":true}", NULL, 0);
        assert_int_equal(zy_spawn_more(f->c, &o, &sr), 0);
        assert_string_equal(sr->id, "m");
        assert_int_equal(sr->pid, 778);
        assert_int_equal(sr->pidfd, -1);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Spawn");
        more = json_object_object_get(req.msg, "more");
        assert_true(more && json_object_get_boolean(more));
        request_done(&req);
        assert_int_equal(zy_wait_send(f->c, "m"), -EINPROGRESS);

        srv_send(f->srv, "{\"parameters\":{\"task\":" TASK_JSON("m", "stopped", ",\"exitCode\":0") "}}", NULL, 0);
        assert_int_equal(zy_wait_read(f->c, &t), 0);
        assert_string_equal(t->id, "m");
        assert_int_equal(zy_task_info_status(t), 0);
        zy_task_info_free(t);
        zy_spawn_result_free(sr);
        srv_expect_nothing(f->srv);
}

static void test_wait_state_delete(void **state) {
        struct fixture *f = *state;
        struct zy_task_info *t = NULL;
        struct request req;

        srv_send(f->srv, "{\"parameters\":{\"task\":" TASK_JSON("w", "stopped", ",\"exitCode\":3,\"startedAt\":1700000001,"
                                                                             "\"exitedAt\":1700000002.5") "}}",
                 NULL, 0);
        assert_int_equal(zy_wait(f->c, "w", &t), 0);
        assert_string_equal(t->id, "w");
        assert_string_equal(t->profile, "default");
        assert_int_equal(t->state, ZY_TASK_STOPPED);
        assert_string_equal(t->state_name, "stopped");
        assert_int_equal(t->pid, 4242);
        assert_int_equal(t->uid, 1000);
        assert_string_equal(t->tier, "load");
        assert_string_equal(t->argv[0], "/bin/sh");
        assert_string_equal(t->argv[2], "exit 3");
        assert_null(t->argv[3]);
        assert_int_equal(t->exit_code, 3);
        assert_int_equal(t->signal, 0);
        assert_true(t->created_at == 1700000000.25);
        assert_true(t->started_at == 1700000001.0);
        assert_true(t->exited_at == 1700000002.5);
        assert_int_equal(zy_task_info_status(t), 3);
        zy_task_info_free(t);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Wait");
        assert_param_string(&req, "id", "w");
        assert_null(json_object_object_get(req.msg, "more"));
        request_done(&req);

        /* The two halves, with a signal death. */
        t = NULL;
        assert_int_equal(zy_wait_send(f->c, "w2"), 0);
        assert_false(zy_conn_has_input(f->c));
        srv_send(f->srv, "{\"parameters\":{\"task\":" TASK_JSON("w2", "stopped", ",\"signal\":9,\"exitCode\":null") "}}",
                 NULL, 0);
        assert_int_equal(zy_wait_read(f->c, &t), 0);
        assert_int_equal(t->signal, 9);
        assert_int_equal(t->exit_code, -1);
        assert_int_equal(zy_task_info_status(t), 128 + 9);
        assert_true(t->started_at == 0);
        zy_task_info_free(t);
        expect_call(f->srv, "io.zygote.Launcher.Wait", NULL);

        t = state_answered(f, "s", "{\"parameters\":{\"task\":" TASK_JSON("s", "running", "") "}}");
        assert_int_equal(t->state, ZY_TASK_RUNNING);
        assert_int_equal(zy_task_info_status(t), -1);
        zy_task_info_free(t);

        t = state_answered(f, "c", "{\"parameters\":{\"task\":" TASK_JSON("c", "created", "") "}}");
        assert_int_equal(t->state, ZY_TASK_CREATED);
        zy_task_info_free(t);

        t = state_answered(f, "c", "{\"parameters\":{\"task\":" TASK_JSON("c", "paused", "") "}}");
        assert_int_equal(t->state, ZY_TASK_UNKNOWN);
        assert_string_equal(t->state_name, "paused");
        zy_task_info_free(t);

        t = NULL;
        srv_send(f->srv, "{\"parameters\":{\"task\":" TASK_JSON("d", "stopped", ",\"exitCode\":0") "}}", NULL, 0);
        assert_int_equal(zy_delete(f->c, "d", &t), 0);
        assert_string_equal(t->id, "d");
        assert_int_equal(zy_task_info_status(t), 0);
        zy_task_info_free(t);
        expect_call(f->srv, "io.zygote.Launcher.Delete", "d");

        srv_send(f->srv, "{\"parameters\":{\"task\":" TASK_JSON("d", "stopped", ",\"exitCode\":0") "}}", NULL, 0);
        assert_int_equal(zy_delete(f->c, "d", NULL), 0);
        srv_recv(f->srv, &req);
        request_done(&req);

        srv_send(f->srv, "{\"error\":\"io.zygote.Launcher.InvalidState\",\"parameters\":{\"id\":\"r\",\"state\":\"running\"}}",
                 NULL, 0);
        assert_int_equal(zy_delete(f->c, "r", NULL), -EBUSY);
        srv_recv(f->srv, &req);
        request_done(&req);

        /* Malformed tasks: each missing or mistyped field is caught. */
        static const char *const bad[] = {
                "{}",
                "{\"task\":7}",
                "{\"task\":{\"profile\":\"default\",\"state\":\"running\",\"pid\":1,\"uid\":0,\"tier\":\"load\","
                "\"argv\":[],\"createdAt\":1}}",
                "{\"task\":" TASK_JSON("x", "running", ",\"exitCode\":\"3\"") "}",
                "{\"task\":" TASK_JSON("x", "running", ",\"exitCode\":300") "}",
                "{\"task\":" TASK_JSON("x", "running", ",\"signal\":0") "}",
                "{\"task\":{\"id\":\"x\",\"profile\":\"default\",\"state\":\"running\",\"pid\":1,\"uid\":0,"
                "\"tier\":\"load\",\"argv\":[1],\"createdAt\":1}}",
                "{\"task\":{\"id\":\"x\",\"profile\":\"default\",\"state\":\"running\",\"pid\":-1,\"uid\":0,"
                "\"tier\":\"load\",\"argv\":[],\"createdAt\":1}}",
                "{\"task\":{\"id\":\"x\",\"profile\":\"default\",\"state\":\"running\",\"pid\":1,\"uid\":0,"
                "\"tier\":\"load\",\"argv\":[],\"createdAt\":\"now\"}}",
                "{\"task\":{\"id\":\"x\",\"profile\":\"default\",\"state\":\"running\",\"pid\":99999999999,\"uid\":0,"
                "\"tier\":\"load\",\"argv\":[],\"createdAt\":1}}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                t = NULL;
                srv_sendf(f->srv, "{\"parameters\":%s}", bad[i]);
                if (zy_state(f->c, "x", &t) != -EBADMSG)
                        fail_msg("task %s accepted", bad[i]);
                assert_null(t);
                srv_recv(f->srv, &req);
                request_done(&req);
        }
        assert_int_equal(zy_task_info_status(NULL), -1);
        assert_null(zy_task_info_free(NULL));
}

static void test_pids_list(void **state) {
        struct fixture *f = *state;
        struct zy_task_list *l = NULL;
        struct request req;
        pid_t *pids = NULL;
        size_t n = 99;

        srv_send(f->srv, "{\"parameters\":{\"pids\":[]}}", NULL, 0);
        assert_int_equal(zy_pids(f->c, "p", &pids, &n), 0);
        assert_int_equal(n, 0);
        assert_non_null(pids);
        free(pids);
        expect_call(f->srv, "io.zygote.Launcher.Pids", "p");

        pids = NULL;
        srv_send(f->srv, "{\"parameters\":{\"pids\":[1,\"2\"]}}", NULL, 0);
        assert_int_equal(zy_pids(f->c, "p", &pids, &n), -EBADMSG);
        assert_null(pids);
        srv_recv(f->srv, &req);
        request_done(&req);

        srv_send(f->srv, "{\"parameters\":{\"tasks\":[" TASK_JSON("a", "running", "") "," TASK_JSON("b", "stopped", ",\"exitCode\":1") "]}}",
                 NULL, 0);
        assert_int_equal(zy_list(f->c, &l), 0);
        assert_int_equal(l->n_tasks, 2);
        assert_string_equal(l->tasks[0]->id, "a");
        assert_string_equal(l->tasks[1]->id, "b");
        assert_int_equal(l->tasks[1]->exit_code, 1);
        zy_task_list_free(l);
        expect_call(f->srv, "io.zygote.Launcher.List", NULL);

        l = NULL;
        srv_send(f->srv, "{\"parameters\":{\"tasks\":[" TASK_JSON("a", "running", "") ",{}]}}", NULL, 0);
        assert_int_equal(zy_list(f->c, &l), -EBADMSG);
        assert_null(l);
        srv_recv(f->srv, &req);
        request_done(&req);
        assert_null(zy_task_list_free(NULL));
}

struct events_seen {
        int n;
        enum zy_event_type types[8];
        int stop_after;
};

static int on_event(const struct zy_event *e, void *userdata) {
        struct events_seen *s = userdata;

        s->types[s->n++] = e->type;
        return s->n == s->stop_after ? 1 : 0;
}

static void test_events(void **state) {
        struct fixture *f = *state;
        struct zy_event *e = NULL;
        struct request req;

        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"create\",\"id\":\"a\",\"time\":1.5,\"pid\":10}},\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"exit\",\"id\":\"a\",\"time\":2,\"pid\":10,\"exitCode\":0}},"
                         "\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"exit\",\"id\":\"b\",\"time\":3,\"signal\":15}},\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"resize\",\"id\":\"b\",\"time\":4}},\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv, "{\"parameters\":{}}", NULL, 0);
        assert_int_equal(zy_events_subscribe(f->c), 0);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.Events");
        assert_true(json_object_get_boolean(json_object_object_get(req.msg, "more")));
        request_done(&req);

        assert_int_equal(zy_events_next(f->c, &e), 0);
        assert_int_equal(e->type, ZY_EVENT_CREATE);
        assert_string_equal(e->id, "a");
        assert_true(e->time == 1.5);
        assert_int_equal(e->pid, 10);
        assert_int_equal(e->exit_code, -1);
        zy_event_free(e);
        assert_int_equal(zy_events_next(f->c, &e), 0);
        assert_int_equal(e->type, ZY_EVENT_EXIT);
        assert_int_equal(e->exit_code, 0);
        zy_event_free(e);
        assert_int_equal(zy_events_next(f->c, &e), 0);
        assert_int_equal(e->signal, 15);
        assert_int_equal(e->pid, 0);
        zy_event_free(e);
        assert_int_equal(zy_events_next(f->c, &e), 0);
        assert_int_equal(e->type, ZY_EVENT_UNKNOWN);
        assert_string_equal(e->type_name, "resize");
        zy_event_free(e);
        /* The daemon ended the stream. */
        e = (struct zy_event *) (uintptr_t) 1;
        assert_int_equal(zy_events_next(f->c, &e), 0);
        assert_null(e);
        /* The connection is free again. */
        srv_send(f->srv, "{}", NULL, 0);
        assert_int_equal(zy_start(f->c, "x"), 0);
        srv_recv(f->srv, &req);
        request_done(&req);

        /* The callback form: stops when the callback says so. */
        struct events_seen seen = { .stop_after = 2 };
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"start\",\"id\":\"a\",\"time\":1}},\"continues\":true}", NULL, 0);
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"delete\",\"id\":\"a\",\"time\":1}},\"continues\":true}", NULL, 0);
        assert_int_equal(zy_events(f->c, on_event, &seen), 0);
        assert_int_equal(seen.n, 2);
        assert_int_equal(seen.types[0], ZY_EVENT_START);
        assert_int_equal(seen.types[1], ZY_EVENT_DELETE);
        expect_call(f->srv, "io.zygote.Launcher.Events", NULL);
        /* Still subscribed: the connection is busy. */
        assert_int_equal(zy_start(f->c, "x"), -EINPROGRESS);

        /* A malformed event, and the daemon refusing a stream. */
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"start\"}},\"continues\":true}", NULL, 0);
        assert_int_equal(zy_events_next(f->c, &e), -EBADMSG);
}

static void test_events_errors(void **state) {
        struct fixture *f = *state;
        struct events_seen seen = {};
        struct request req;

        srv_send(f->srv, "{\"error\":\"org.varlink.service.ExpectedMore\"}", NULL, 0);
        assert_int_equal(zy_events(f->c, on_event, &seen), -EBADRQC);
        assert_int_equal(seen.n, 0);
        srv_recv(f->srv, &req);
        request_done(&req);
        assert_int_equal(zy_events(f->c, NULL, NULL), -EINVAL);
}

#define PROFILE_JSON(name, ref)                                                                         \
        "{\"name\":\"" name "\",\"path\":\"/p/" name ".json\",\"tier\":\"inherit\",\"tierReason\":\"kernel lacks it\"," \
        "\"bpfInstructions\":321,\"longestPath\":17,\"hash\":\"abc\",\"capabilities\":[\"CAP_CHOWN\",\"CAP_KILL\"]," \
        "\"noNewPrivileges\":true,\"referencePid\":" ref ",\"skippedSyscalls\":2}"

static void check_profile(const struct zy_profile_info *p, const char *name, pid_t ref) {
        assert_string_equal(p->name, name);
        assert_string_equal(p->tier, "inherit");
        assert_string_equal(p->tier_reason, "kernel lacks it");
        assert_int_equal(p->bpf_instructions, 321);
        assert_int_equal(p->longest_path, 17);
        assert_string_equal(p->hash, "abc");
        assert_string_equal(p->capabilities[1], "CAP_KILL");
        assert_null(p->capabilities[2]);
        assert_true(p->no_new_privileges);
        assert_int_equal(p->reference_pid, ref);
        assert_int_equal(p->skipped_syscalls, 2);
}

/* A memfd holding len bytes of data, with seals. */
static int filter_memfd(const void *data, size_t len, unsigned seals) {
        int fd = memfd_create("test-filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        if (seals)
                assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
        return fd;
}

/* GetFilter: the program is read only from a memfd that can no longer change and holds exactly
 * what the reply announces. */
static void test_get_filter(void **state) {
        struct fixture *f = *state;
        static const uint64_t prog[2] = { 0x0000000400000020ULL, 0x7fff000000000006ULL };
        const unsigned sealed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
        const char *reply = "{\"parameters\":{\"key\":\"k\",\"hash\":\"h\",\"instructions\":2,\"flags\":1,\"cached\":true}}";
        struct zy_filter *flt = NULL;
        json_object *obj = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
        struct request req;
        int fd;

        fd = filter_memfd(prog, sizeof(prog), sealed);
        srv_send(f->srv, reply, &fd, 1);
        close(fd);
        assert_int_equal(zy_get_filter(f->c, NULL, obj, &flt), 0);
        srv_recv(f->srv, &req);
        assert_method(&req, "io.zygote.Launcher.GetFilter");
        assert_string_equal(json_object_get_string(param(&req, "seccomp", json_type_object)),
                            json_object_get_string(obj));
        assert_no_param(&req, "profile");
        request_done(&req);
        assert_int_equal(flt->n_instructions, 2);
        assert_int_equal(flt->flags, 1);
        assert_true(flt->cached);
        assert_string_equal(flt->key, "k");
        assert_memory_equal(flt->program, prog, sizeof(prog));
        assert_true(is_cloexec(flt->memfd));
        zy_filter_free(flt);

        /* Not sealed against writes; one instruction short; no fd at all: -EBADMSG. */
        const struct {
                size_t len;
                unsigned seals;
        } bad[] = { { sizeof(prog), F_SEAL_SHRINK | F_SEAL_GROW }, { 8, sealed } };
        for (size_t i = 0; i < 2; i++) {
                flt = NULL;
                fd = filter_memfd(prog, bad[i].len, bad[i].seals);
                srv_send(f->srv, reply, &fd, 1);
                close(fd);
                assert_int_equal(zy_get_filter(f->c, "default", NULL, &flt), -EBADMSG);
                assert_null(flt);
                srv_recv(f->srv, &req);
                assert_param_string(&req, "profile", "default");
                assert_no_param(&req, "seccomp");
                request_done(&req);
        }
        srv_send(f->srv, reply, NULL, 0);
        assert_int_equal(zy_get_filter(f->c, "default", NULL, &flt), -EBADMSG);
        expect_call(f->srv, "io.zygote.Launcher.GetFilter", NULL);

        /* Exactly one of profile and seccomp; nothing is sent otherwise. */
        assert_int_equal(zy_get_filter(f->c, NULL, NULL, &flt), -EINVAL);
        assert_int_equal(zy_get_filter(f->c, "default", obj, &flt), -EINVAL);
        srv_expect_nothing(f->srv);

        /* The daemon's verdict on the content: -EINVAL, the field readable. */
        srv_send(f->srv, "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":"
                         "\"seccomp.defaultAction\",\"message\":\"m\"}}", NULL, 0);
        assert_int_equal(zy_get_filter(f->c, NULL, obj, &flt), -EINVAL);
        expect_call(f->srv, "io.zygote.Launcher.GetFilter", NULL);
        assert_string_equal(json_object_get_string(json_object_object_get(zy_conn_error_parameters(f->c), "parameter")),
                            "seccomp.defaultAction");
        srv_send(f->srv, "{\"error\":\"io.zygote.Launcher.LimitExceeded\",\"parameters\":{\"limit\":"
                         "\"compile_time_per_user\",\"max\":1000}}", NULL, 0);
        assert_int_equal(zy_get_filter(f->c, NULL, obj, &flt), -EAGAIN);
        expect_call(f->srv, "io.zygote.Launcher.GetFilter", NULL);
        json_object_put(obj);
}

static void test_profiles_status_reload(void **state) {
        struct fixture *f = *state;
        struct zy_profile_list *l = NULL;
        struct zy_daemon_status *s = NULL;
        struct zy_reload_result *rr = NULL;
        struct request req;

        srv_send(f->srv, "{\"parameters\":{\"profiles\":[" PROFILE_JSON("default", "99") "," PROFILE_JSON("docker", "null") "]}}",
                 NULL, 0);
        assert_int_equal(zy_list_profiles(f->c, &l), 0);
        assert_int_equal(l->n_profiles, 2);
        check_profile(l->profiles[0], "default", 99);
        check_profile(l->profiles[1], "docker", 0);
        zy_profile_list_free(l);
        expect_call(f->srv, "io.zygote.Launcher.ListProfiles", NULL);

        srv_send(f->srv, "{\"parameters\":{\"version\":\"0.1.0\",\"features\":{\"clone_filter\":false,\"capbset_drop_mask\":true},"
                         "\"profiles\":[" PROFILE_JSON("default", "99") "],\"tasks\":3,\"connections\":2}}",
                 NULL, 0);
        assert_int_equal(zy_get_status(f->c, &s), 0);
        assert_string_equal(s->version, "0.1.0");
        assert_false(s->clone_filter);
        assert_true(s->capbset_drop_mask);
        assert_int_equal(s->tasks, 3);
        assert_int_equal(s->connections, 2);
        assert_int_equal(s->profiles->n_profiles, 1);
        check_profile(s->profiles->profiles[0], "default", 99);
        zy_daemon_status_free(s);
        expect_call(f->srv, "io.zygote.Launcher.GetStatus", NULL);

        s = NULL;
        srv_send(f->srv, "{\"parameters\":{\"version\":\"0.1.0\",\"features\":{\"clone_filter\":false},"
                         "\"profiles\":[],\"tasks\":3,\"connections\":2}}",
                 NULL, 0);
        assert_int_equal(zy_get_status(f->c, &s), -EBADMSG);
        assert_null(s);
        srv_recv(f->srv, &req);
        request_done(&req);

        srv_send(f->srv, "{\"parameters\":{\"loaded\":[\"default\",\"docker\"],\"failed\":[]}}", NULL, 0);
        assert_int_equal(zy_reload_profiles(f->c, &rr), 0);
        assert_string_equal(rr->loaded[0], "default");
        assert_string_equal(rr->loaded[1], "docker");
        assert_null(rr->loaded[2]);
        assert_null(rr->failed[0]);
        zy_reload_result_free(rr);
        expect_call(f->srv, "io.zygote.Launcher.ReloadProfiles", NULL);

        rr = NULL;
        srv_send(f->srv, "{\"error\":\"io.zygote.Launcher.PermissionDenied\",\"parameters\":{\"reason\":\"root only\"}}",
                 NULL, 0);
        assert_int_equal(zy_reload_profiles(f->c, &rr), -EPERM);
        assert_null(rr);
        srv_recv(f->srv, &req);
        request_done(&req);

        l = NULL;
        srv_send(f->srv, "{\"parameters\":{\"profiles\":[{\"name\":\"x\"}]}}", NULL, 0);
        assert_int_equal(zy_list_profiles(f->c, &l), -EBADMSG);
        assert_null(l);
        srv_recv(f->srv, &req);
        request_done(&req);

        assert_null(zy_profile_list_free(NULL));
        assert_null(zy_daemon_status_free(NULL));
        assert_null(zy_reload_result_free(NULL));
        assert_null(zy_strv_free(NULL));
        assert_null(zy_event_free(NULL));
        assert_null(zy_reply_free(NULL));
        assert_null(zy_spawn_result_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                tu_test(test_default_socket_path),
                tu_test(test_connect),
                cmocka_unit_test_setup_teardown(test_call_framing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_call_more, setup, teardown),
                cmocka_unit_test_setup_teardown(test_send_fds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_send_too_big, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_dribbled, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_large, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_oversize, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_oversize_default, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_fds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_fds_unexpected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reply_fds_association, setup, teardown),
                tu_test(test_reply_malformed),
                cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
                cmocka_unit_test_setup_teardown(test_send_to_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_error_mapping, setup, teardown),
                cmocka_unit_test_setup_teardown(test_errors_readable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_spawn, setup, teardown),
                cmocka_unit_test_setup_teardown(test_start_kill_close_io, setup, teardown),
                cmocka_unit_test_setup_teardown(test_spawn_more, setup, teardown),
                cmocka_unit_test_setup_teardown(test_wait_state_delete, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pids_list, setup, teardown),
                cmocka_unit_test_setup_teardown(test_events, setup, teardown),
                cmocka_unit_test_setup_teardown(test_events_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_profiles_status_reload, setup, teardown),
                cmocka_unit_test_setup_teardown(test_get_filter, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
