/* SPDX-License-Identifier: MIT */
/*
 * The profile module's seccomp user notification (profile/seccomp-oci-listener.c): what a
 * container runtime's load (zp_profile_options.listener) accepts, compiles and refuses, and that
 * a zygote profile never takes a listener. test-profile.c has the refusals without the option.
 *
 * Usage: test-profile-listener PROFILES_DIR
 */
#include <linux/seccomp.h>

#include "profile-fixtures.h"

/* Loaded as a container runtime loads config.json's object (it hands the listener over). */
static int load_listener(const char *json, struct zp_profile **ret, char **ret_error) {
        const struct zp_profile_options opts = { .listener = true };
        char *j = J(json);
        int r = zp_profile_load_buffer_with(BUF_PATH, j, strlen(j), &opts, ret, ret_error);

        free(j);
        return r;
}

static void listener_fail(const char *json, int want_r, const char *want_msg) {
        struct zp_profile *p = NULL;
        char *err = NULL, *want = NULL;
        int r = load_listener(json, &p, &err);

        if (r != want_r)
                fail_msg("got %d (%s), want %d\n  for %s", r, err ? err : "(no message)", want_r, json);
        assert_null(p);
        assert_true(asprintf(&want, "%s: %s", BUF_PATH, want_msg) > 0);
        assert_string_equal(err, want);
        free(want);
        free(err);
}

static void test_notify_with_listener(void **state) {
        struct zp_profile *p = NULL;
        char *err = NULL;

        /* the rule's calls notify; the program says so and the flags ask for a listener */
        assert_int_equal(load_listener("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/a.sock',"
                                       "'listenerMetadata':'m','syscalls':[{'names':['mkdir','getpid'],'action':"
                                       "'SCMP_ACT_NOTIFY'}]}",
                                       &p, &err),
                         0);
        assert_int_equal(decide(p, "mkdir", 0, 0), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_USER_NOTIF);
        assert_int_equal(decide(p, "getppid", 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(p->filter_flags, SECCOMP_FILTER_FLAG_NEW_LISTENER);
        zp_profile_free(p);

        /* TSYNC with a listener: the kernel wants TSYNC_ESRCH too; WAIT_KILLABLE_RECV is kept */
        assert_int_equal(load_listener("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a','flags':["
                                       "'SECCOMP_FILTER_FLAG_TSYNC','SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV'],"
                                       "'syscalls':[{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}",
                                       &p, &err),
                         0);
        assert_int_equal(p->filter_flags, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
                                                  (1U << 4) /* TSYNC_ESRCH */ | (1U << 5) /* WAIT_KILLABLE_RECV */);
        zp_profile_free(p);

        /* listenerPath without a notifying rule is ignored (the spec); so is an excluded rule */
        assert_int_equal(load_listener("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a','syscalls':[{'names':"
                                       "['mkdir'],'action':'SCMP_ACT_NOTIFY','excludes':{'arches':['amd64','arm64',"
                                       "'x86','arm','ppc64le','s390x','riscv64']}}]}",
                                       &p, &err),
                         0);
        assert_int_equal(p->filter_flags, 0);
        assert_int_equal(decide(p, "mkdir", 0, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);

        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ERRNO'},"
                      "{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}",
                      -EINVAL,
                      "listenerPath: missing: syscalls[1] uses SCMP_ACT_NOTIFY, whose listener goes to the agent "
                      "listening there");
        listener_fail("{'defaultAction':'SCMP_ACT_NOTIFY','listenerPath':'a'}", -EINVAL,
                      "defaultAction: SCMP_ACT_NOTIFY cannot be the default action: the container's init would wait on "
                      "an agent for the very system calls that hand it the listener");
        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a','syscalls':[{'names':['mkdir','sendmsg'],"
                      "'action':'SCMP_ACT_NOTIFY'}]}",
                      -EINVAL,
                      "syscalls[0].names: SCMP_ACT_NOTIFY cannot apply to sendmsg: the container's init hands the "
                      "listener to the runtime with it, before any agent could answer");
        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a','syscalls':[{'names':['mkdir'],"
                      "'action':'SCMP_ACT_NOTIFY','errnoRet':1}]}",
                      -EINVAL,
                      "syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno value, not "
                      "SCMP_ACT_NOTIFY");
        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerMetadata':'m'}", -EINVAL,
                      "listenerMetadata: set without listenerPath (the runtime spec forbids it)");
        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a','flags':["
                      "'SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV']}",
                      -EINVAL,
                      "flags[0]: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a rule whose action is SCMP_ACT_NOTIFY");
        listener_fail(
                "{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_NEW_LISTENER']}", -EINVAL,
                "flags[0]: SECCOMP_FILTER_FLAG_NEW_LISTENER is not an OCI flag: the runtime sets it itself when a "
                "rule's action is SCMP_ACT_NOTIFY");
        listener_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':7}", -EINVAL,
                      "listenerPath: expected a string, got int");
        /* a zygote profile (a task's) never takes a listener, whoever loads it */
        listener_fail("{'name':'a','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'a',"
                      "'syscalls':[{'names':['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}}",
                      -EOPNOTSUPP, "seccomp.listenerPath: zygote has no seccomp user-notification listener");
        listener_fail("{'name':'a','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':"
                      "['mkdir'],'action':'SCMP_ACT_NOTIFY'}]}}",
                      -EOPNOTSUPP,
                      "seccomp.syscalls[0].action: SCMP_ACT_NOTIFY needs a seccomp user-notification listener, which "
                      "zygote does not provide");
}

static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notify_with_listener),
};

PROFILE_TESTS_MAIN(tests)
