/* SPDX-License-Identifier: MIT */
/*
 * container/config-linux.c alone (with config-util.c's JSON access): what config.json's process
 * extras (scheduler, ioPriority, consoleSize, apparmorProfile) and linux extras (domainname, personality,
 * timeOffsets, the refused fields) become in struct zct_oci, worked out by hand from the kernel's
 * ABI (sched_setattr, ioprio_set, personality, timens_offsets), and each refusal naming its field.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include <cmocka.h>

#include "config-util.h"

/* Parses text as config.json: both passes, 0 or the error; *err (malloc'd) the message. */
static int parse(const char *text, struct zct_oci *o, char **err) {
        json_object *root = json_tokener_parse(text);
        int r;

        assert_non_null(root);
        memset(o, 0, sizeof(*o));
        o->root = root;
        *err = NULL;
        o->clone_flags = CLONE_NEWUTS;
        o->uts_ns = true;
        r = zct_oci_parse_process_extra(o, zct_get(root, "process"), err);
        if (r >= 0)
                r = zct_oci_parse_linux_extra(o, zct_get(root, "linux"), o->new_time_ns, err);
        return r;
}

static void done(struct zct_oci *o, char *err) {
        free(err);
        free(o->time_offsets);
        free(o->apparmor_exec);
        json_object_put(o->root);
}

/* The call must fail with a message naming field. */
static void refused(const char *text, bool time_ns, const char *field) {
        struct zct_oci o;
        char *err;
        json_object *root = json_tokener_parse(text);
        int r;

        memset(&o, 0, sizeof(o));
        o.root = root;
        o.clone_flags = CLONE_NEWUTS;
        o.uts_ns = true;
        err = NULL;
        r = zct_oci_parse_process_extra(&o, zct_get(root, "process"), &err);
        if (r >= 0)
                r = zct_oci_parse_linux_extra(&o, zct_get(root, "linux"), time_ns, &err);
        assert_true(r < 0);
        assert_non_null(err);
        if (!strstr(err, field))
                fail_msg("\"%s\" does not name %s", err, field);
        done(&o, err);
}

static void test_nothing_asked(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        assert_int_equal(parse("{\"process\":{},\"linux\":{}}", &o, &err), 0);
        assert_false(o.has_sched);
        assert_int_equal(o.ioprio, -1);
        assert_true(o.personality == ZE_SB_NO_PERSONALITY);
        assert_null(o.time_offsets);
        assert_null(o.domainname);
        assert_int_equal(o.console_rows, 0);
        done(&o, err);
}

static void test_scheduler(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        assert_int_equal(parse("{\"process\":{\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"nice\":7,"
                               "\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\",\"SCHED_FLAG_KEEP_PARAMS\"]}}}",
                               &o, &err),
                         0);
        assert_true(o.has_sched);
        assert_int_equal(o.sched.policy, 3); /* SCHED_BATCH */
        assert_int_equal(o.sched.nice, 7);
        assert_int_equal(o.sched.flags, 0x11); /* RESET_ON_FORK | KEEP_PARAMS */
        done(&o, err);
        assert_int_equal(parse("{\"process\":{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":10,"
                               "\"deadline\":20,\"period\":30}}}",
                               &o, &err),
                         0);
        assert_int_equal(o.sched.policy, 6);
        assert_int_equal(o.sched.runtime, 10);
        assert_int_equal(o.sched.deadline, 20);
        assert_int_equal(o.sched.period, 30);
        done(&o, err);
        refused("{\"process\":{\"scheduler\":{\"policy\":\"SCHED_ISO\"}}}", false, "process.scheduler.policy");
        refused("{\"process\":{\"scheduler\":{}}}", false, "process.scheduler.policy");
        refused("{\"process\":{\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"nice\":20}}}", false,
                "process.scheduler.nice");
        refused("{\"process\":{\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"flags\":[\"X\"]}}}", false,
                "process.scheduler.flags[0]");
}

static void test_io_priority(void **state) {
        static const struct {
                const char *class;
                int value; /* class << 13 | priority (linux/ioprio.h) */
        } want[] = { { "IOPRIO_CLASS_RT", (1 << 13) | 3 },
                     { "IOPRIO_CLASS_BE", (2 << 13) | 3 },
                     { "IOPRIO_CLASS_IDLE", (3 << 13) | 3 } };
        struct zct_oci o;
        char *err, text[160];

        (void) state;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                snprintf(text, sizeof(text), "{\"process\":{\"ioPriority\":{\"class\":\"%s\",\"priority\":3}}}",
                         want[i].class);
                assert_int_equal(parse(text, &o, &err), 0);
                assert_int_equal(o.ioprio, want[i].value);
                done(&o, err);
        }
        refused("{\"process\":{\"ioPriority\":{\"class\":\"IOPRIO_CLASS_NONE\"}}}", false, "process.ioPriority.class");
        refused("{\"process\":{\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":8}}}", false,
                "process.ioPriority.priority");
}

static void test_console_size(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        assert_int_equal(parse("{\"process\":{\"consoleSize\":{\"height\":40,\"width\":132}}}", &o, &err), 0);
        assert_int_equal(o.console_rows, 40);
        assert_int_equal(o.console_cols, 132);
        done(&o, err);
        refused("{\"process\":{\"consoleSize\":{\"height\":-1,\"width\":80}}}", false, "process.consoleSize");
}

static void test_personality_and_domainname(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        assert_int_equal(parse("{\"domainname\":\"d\",\"linux\":{\"personality\":{\"domain\":\"LINUX32\"}}}", &o, &err),
                         0);
        assert_true(o.personality == PER_LINUX32);
        assert_string_equal(o.domainname, "d");
        done(&o, err);
        assert_int_equal(parse("{\"linux\":{\"personality\":{\"domain\":\"LINUX\",\"flags\":[]}}}", &o, &err), 0);
        assert_true(o.personality == PER_LINUX);
        done(&o, err);
        refused("{\"linux\":{\"personality\":{\"domain\":\"LINUX\",\"flags\":[\"ADDR_NO_RANDOMIZE\"]}}}", false,
                "linux.personality.flags");
        refused("{\"linux\":{\"personality\":{\"domain\":\"SVR4\"}}}", false, "linux.personality.domain");
        refused("{\"linux\":{\"personality\":{}}}", false, "linux.personality.domain");
}

static void test_domainname_needs_a_new_uts_namespace(void **state) {
        struct zct_oci o;
        char *err = NULL;
        json_object *root = json_tokener_parse("{\"domainname\":\"d\"}");

        (void) state;
        memset(&o, 0, sizeof(o));
        o.root = root;
        assert_true(zct_oci_parse_linux_extra(&o, NULL, false, &err) < 0);
        assert_non_null(strstr(err, "domainname"));
        done(&o, err);
}

static void test_time_offsets(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        {
                json_object *root = json_tokener_parse("{\"linux\":{\"timeOffsets\":{\"monotonic\":{\"secs\":86400,"
                                                       "\"nanosecs\":5},\"boottime\":{\"secs\":-3}}}}");
                memset(&o, 0, sizeof(o));
                o.root = root;
                err = NULL;
                assert_int_equal(zct_oci_parse_linux_extra(&o, zct_get(root, "linux"), true, &err), 0);
                /* timens_offsets(5): "CLOCK SECS NANOSECS" a line each */
                assert_string_equal(o.time_offsets, "monotonic 86400 5\nboottime -3 0\n");
                done(&o, err);
        }
        refused("{\"linux\":{\"timeOffsets\":{\"monotonic\":{\"secs\":1}}}}", false, "linux.timeOffsets");
        {
                json_object *root = json_tokener_parse("{\"linux\":{\"timeOffsets\":{\"realtime\":{\"secs\":1}}}}");
                memset(&o, 0, sizeof(o));
                o.root = root;
                err = NULL;
                assert_true(zct_oci_parse_linux_extra(&o, zct_get(root, "linux"), true, &err) < 0);
                assert_non_null(strstr(err, "linux.timeOffsets.realtime"));
                done(&o, err);
        }
}

static void test_refused_fields(void **state) {
        static const struct {
                const char *text, *field;
        } cases[] = {
                { "{\"process\":{\"selinuxLabel\":\"system_u:system_r:container_t:s0\"}}", "process.selinuxLabel" },
                { "{\"linux\":{\"mountLabel\":\"system_u:object_r:container_file_t:s0\"}}", "linux.mountLabel" },
                { "{\"linux\":{\"intelRdt\":{\"closID\":\"x\"}}}", "linux.intelRdt" },
                { "{\"process\":{\"user\":{\"uid\":0,\"username\":\"root\"}}}", "process.user.username" },
                { "{\"windows\":{\"layerFolders\":[\"c:\"]}}", "windows" },
                { "{\"process\":{\"execCPUAffinity\":{\"initial\":\"0\"}}}", "process.execCPUAffinity" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                refused(cases[i].text, false, cases[i].field);
}

/* process.apparmorProfile: the text the kernel's exec attribute takes; unset, null and "" ask for
 * nothing; anything but a one-line name is refused by the field's name. */
static void test_apparmor_profile(void **state) {
        struct zct_oci o;
        char *err;
        char long_name[1100];

        (void) state;
        assert_int_equal(parse("{\"process\":{\"apparmorProfile\":\"docker-default\"}}", &o, &err), 0);
        assert_string_equal(o.apparmor_exec, "exec docker-default");
        done(&o, err);
        assert_int_equal(parse("{\"process\":{\"apparmorProfile\":\"containers-default-0.50.1\"}}", &o, &err), 0);
        assert_string_equal(o.apparmor_exec, "exec containers-default-0.50.1");
        /* exec's --apparmor over the config's */
        assert_int_equal(zct_oci_set_apparmor(&o, "other", "exec: --apparmor", &err), 0);
        assert_string_equal(o.apparmor_exec, "exec other");
        done(&o, err);
        assert_int_equal(parse("{\"process\":{\"apparmorProfile\":null}}", &o, &err), 0);
        assert_null(o.apparmor_exec);
        done(&o, err);
        refused("{\"process\":{\"apparmorProfile\":7}}", false, "process.apparmorProfile");
        refused("{\"process\":{\"apparmorProfile\":\"a\\nb\"}}", false, "process.apparmorProfile");
        memset(long_name, 'p', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        memset(&o, 0, sizeof(o));
        err = NULL;
        assert_int_equal(zct_oci_set_apparmor(&o, long_name, "exec: --apparmor", &err), -ENAMETOOLONG);
        assert_non_null(strstr(err, "exec: --apparmor"));
        assert_null(o.apparmor_exec);
        free(err);
}

static void test_empty_refused_fields_pass(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        /* what podman writes on a host without the LSM: empty strings, empty objects */
        assert_int_equal(parse("{\"process\":{\"apparmorProfile\":\"\",\"selinuxLabel\":\"\"},"
                               "\"linux\":{\"mountLabel\":\"\",\"intelRdt\":null}}",
                               &o, &err),
                         0);
        done(&o, err);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nothing_asked),
                cmocka_unit_test(test_scheduler),
                cmocka_unit_test(test_io_priority),
                cmocka_unit_test(test_console_size),
                cmocka_unit_test(test_personality_and_domainname),
                cmocka_unit_test(test_domainname_needs_a_new_uts_namespace),
                cmocka_unit_test(test_time_offsets),
                cmocka_unit_test(test_refused_fields),
                cmocka_unit_test(test_apparmor_profile),
                cmocka_unit_test(test_empty_refused_fields_pass),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
