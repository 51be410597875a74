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

#include "libzygote-fake.h"

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
        assert_int_equal(strlen(json_object_get_string(param(&req, "x", json_type_string))),
                         ZY_MESSAGE_MAX - 1 - overhead);
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

TU_MAIN(tu_test(test_default_socket_path), tu_test(test_connect), fake_test(test_call_framing),
        fake_test(test_call_more), fake_test(test_send_fds), fake_test(test_send_too_big),
        fake_test(test_reply_dribbled), fake_test(test_reply_large), fake_test(test_reply_oversize),
        fake_test(test_reply_oversize_default), fake_test(test_reply_fds), fake_test(test_reply_fds_unexpected),
        fake_test(test_reply_fds_association), tu_test(test_reply_malformed), fake_test(test_eof),
        fake_test(test_send_to_closed))
