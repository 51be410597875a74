/* SPDX-License-Identifier: MIT */
/* libzygote against a fake zygoted (libzygote-fake.h): profiles, status, reload and GetFilter. */
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
#include "util.h"
#include "zygote.h"

#include "libzygote-fake.h"

#define PROFILE_JSON(name, ref) \
        "{\"name\":\"" name "\",\"path\":\"/p/" name \
        ".json\",\"tier\":\"inherit\",\"tierReason\":\"kernel lacks it\"," \
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
        const char *reply =
                "{\"parameters\":{\"key\":\"k\",\"hash\":\"h\",\"instructions\":2,\"flags\":1,\"cached\":true}}";
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

        /* The daemon's errors: its verdict on the content (-EINVAL, the field readable) and a
         * limit reached (-EAGAIN). */
        static const struct {
                const char *reply;
                int err;
                const char *parameter; /* the error's "parameter", when it names one */
        } errors[] = {
                { "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":"
                  "\"seccomp.defaultAction\",\"message\":\"m\"}}",
                  -EINVAL, "seccomp.defaultAction" },
                { "{\"error\":\"io.zygote.Launcher.LimitExceeded\",\"parameters\":{\"limit\":"
                  "\"compile_time_per_user\",\"max\":1000}}",
                  -EAGAIN, NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                srv_send(f->srv, errors[i].reply, NULL, 0);
                assert_int_equal(zy_get_filter(f->c, NULL, obj, &flt), errors[i].err);
                expect_call(f->srv, "io.zygote.Launcher.GetFilter", NULL);
                if (errors[i].parameter)
                        assert_string_equal(json_object_get_string(json_object_object_get(
                                                    zy_conn_error_parameters(f->c), "parameter")),
                                            errors[i].parameter);
        }
        json_object_put(obj);
}

static void test_profiles_status_reload(void **state) {
        struct fixture *f = *state;
        struct zy_profile_list *l = NULL;
        struct zy_daemon_status *s = NULL;
        struct zy_reload_result *rr = NULL;
        struct request req;

        srv_send(f->srv,
                 "{\"parameters\":{\"profiles\":[" PROFILE_JSON("default", "99") "," PROFILE_JSON("docker",
                                                                                                  "null") "]}}",
                 NULL, 0);
        assert_int_equal(zy_list_profiles(f->c, &l), 0);
        assert_int_equal(l->n_profiles, 2);
        check_profile(l->profiles[0], "default", 99);
        check_profile(l->profiles[1], "docker", 0);
        zy_profile_list_free(l);
        expect_call(f->srv, "io.zygote.Launcher.ListProfiles", NULL);

        srv_send(f->srv,
                 "{\"parameters\":{\"version\":\"0.1.0\",\"features\":{\"clone_filter\":false,\"capbset_drop_mask\":"
                 "true},"
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
        srv_send(f->srv,
                 "{\"parameters\":{\"version\":\"0.1.0\",\"features\":{\"clone_filter\":false},"
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
        srv_send(f->srv,
                 "{\"error\":\"io.zygote.Launcher.PermissionDenied\",\"parameters\":{\"reason\":\"root only\"}}", NULL,
                 0);
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

TU_MAIN(fake_test(test_profiles_status_reload), fake_test(test_get_filter))
