/* SPDX-License-Identifier: MIT */
/* libzygote against a fake zygoted (libzygote-fake.h): error mapping and the typed task calls. */
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
        assert_string_equal(json_object_get_string(json_object_object_get(zy_conn_error_parameters(f->c), "id")),
                            "gone");
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

#define TASK_JSON(id, state, extra) \
        "{\"id\":\"" id "\",\"profile\":\"default\",\"state\":\"" state "\",\"pid\":4242,\"uid\":1000," \
        "\"tier\":\"load\",\"argv\":[\"/bin/sh\",\"-c\",\"exit 3\"],\"createdAt\":1700000000.25" extra "}"

static void test_spawn(void **state) {
        struct fixture *f = *state;
        const char *argv[] = { "sh", "-c", "echo hi", NULL };
        const char *env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
        const char *drop[] = { "CAP_NET_RAW", NULL };
        int a = eventfd(0, EFD_CLOEXEC), b = eventfd(0, EFD_CLOEXEC), pidfd = eventfd(0, EFD_CLOEXEC);
        /* a twice (stdout and stderr): sent once, referenced twice. */
        const struct zy_fd_map map[] = {
                { .fd = b, .target = 0 }, { .fd = a, .target = 1 }, { .fd = a, .target = 2 }, { .fd = b, .target = 7 }
        };
        struct zy_spawn_opts o = { .argv = argv,
                                   .env = env,
                                   .cwd = "/tmp",
                                   .profile = "strict",
                                   .fds = map,
                                   .n_fds = 4,
                                   .user = "nobody",
                                   .group = "nogroup",
                                   .drop_caps = drop,
                                   .id = "job-1",
                                   .hold = true,
                                   .terminal = true };
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
        static const char *const absent[] = { "env", "cwd",  "profile", "fds", "user", "group", "dropCapabilities",
                                              "id",  "hold", "terminal" };
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

        srv_send(f->srv, "{\"parameters\":{\"id\":\"m\",\"pid\":778,\"tier\":\"inherit\"},\"continues\":true}", NULL,
                 0);
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

        srv_send(f->srv,
                 "{\"parameters\":{\"task\":" TASK_JSON("w", "stopped",
                                                        ",\"exitCode\":3,\"startedAt\":1700000001,"
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
        srv_send(f->srv,
                 "{\"parameters\":{\"task\":" TASK_JSON("w2", "stopped", ",\"signal\":9,\"exitCode\":null") "}}", NULL,
                 0);
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

        srv_send(f->srv,
                 "{\"error\":\"io.zygote.Launcher.InvalidState\",\"parameters\":{\"id\":\"r\",\"state\":\"running\"}}",
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

        srv_send(f->srv,
                 "{\"parameters\":{\"tasks\":[" TASK_JSON("a", "running", "") "," TASK_JSON("b", "stopped",
                                                                                            ",\"exitCode\":1") "]}}",
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

        srv_send(f->srv,
                 "{\"parameters\":{\"event\":{\"type\":\"create\",\"id\":\"a\",\"time\":1.5,\"pid\":10}},\"continues\":"
                 "true}",
                 NULL, 0);
        srv_send(f->srv,
                 "{\"parameters\":{\"event\":{\"type\":\"exit\",\"id\":\"a\",\"time\":2,\"pid\":10,\"exitCode\":0}},"
                 "\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv,
                 "{\"parameters\":{\"event\":{\"type\":\"exit\",\"id\":\"b\",\"time\":3,\"signal\":15}},\"continues\":"
                 "true}",
                 NULL, 0);
        srv_send(f->srv,
                 "{\"parameters\":{\"event\":{\"type\":\"resize\",\"id\":\"b\",\"time\":4}},\"continues\":true}", NULL,
                 0);
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
        srv_send(f->srv, "{\"parameters\":{\"event\":{\"type\":\"start\",\"id\":\"a\",\"time\":1}},\"continues\":true}",
                 NULL, 0);
        srv_send(f->srv,
                 "{\"parameters\":{\"event\":{\"type\":\"delete\",\"id\":\"a\",\"time\":1}},\"continues\":true}", NULL,
                 0);
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

TU_MAIN(fake_test(test_error_mapping), fake_test(test_errors_readable), fake_test(test_spawn),
        fake_test(test_start_kill_close_io), fake_test(test_spawn_more), fake_test(test_wait_state_delete),
        fake_test(test_pids_list), fake_test(test_events), fake_test(test_events_errors))
