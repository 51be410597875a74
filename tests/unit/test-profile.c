/* SPDX-License-Identifier: MIT */
/*
 * The profile module (profile/profile.c and the files it shares the work with): every field of both
 * file forms and its errors (test-profile-files.c has referenced files, JSON errors and limits,
 * profile sets, access checks, capability names; profile-fixtures.c the helpers of both).
 * Decisions of compiled programs are read with the interpreter in profile/bpf.c.
 *
 * Usage: test-profile PROFILES_DIR
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "bpf.h"
#include "profile-json.h"
#include "profile.h"
#include "testutil.h"
#include "sha256.h"

#include "profile-fixtures.h"

static void test_plain_minimal(void **state) {
        static const char *const docker[] = { ZP_DOCKER_DEFAULT_CAPS };
        struct zp_profile *p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW'}");
        uint64_t caps = 0;

        assert_string_equal(p->name, "x");
        assert_string_equal(p->path, BUF_PATH);
        for (size_t i = 0; i < sizeof(docker) / sizeof(docker[0]); i++) {
                unsigned c;
                assert_int_equal(zp_cap_from_name(docker[i], &c), 0);
                caps |= UINT64_C(1) << c;
        }
        assert_int_equal(__builtin_popcountll(caps), 14);
        assert_true(p->caps_keep == caps);
        assert_true(p->no_new_privs);
        assert_true(p->access_all);
        assert_int_equal(p->n_arches, 1);
        assert_int_equal(p->arches[0], SCMP_ARCH_X86_64);
        assert_int_equal(p->filter_flags, 0);
        assert_int_equal(p->n_rules, 0);
        assert_int_equal(p->skipped_syscalls, 0);
        assert_int_equal(zp_bpf_check(p->bpf, p->bpf_len), 0);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        assert_true(p->worker_setup_ok);
        assert_null(p->worker_setup_blocked);
        assert_true(p->longest_path > 0);
        /* An architecture that is not in the filter gets libseccomp's bad-arch action. */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_I386, 20, 0, 0), SECCOMP_RET_KILL_THREAD);
        zp_profile_free(p);

        /* "syscalls" alone marks a plain file too, and then defaultAction is missing. */
        load_fail("{'syscalls':[]}", -EINVAL, "missing \"defaultAction\"");
}

/* The actions a profile's defaultAction and a rule's action take, with the errno fields of each
 * ("defaultErrno"/"errno" by name, "defaultErrnoRet"/"errnoRet" by number; NULL and -1 leave one
 * out), and the filter's return value for them. */
static const struct action_case {
        const char *action;
        const char *errno_name;
        int errno_ret;
        uint32_t want;
} action_cases[] = {
        { "SCMP_ACT_KILL", NULL, -1, SECCOMP_RET_KILL_THREAD },
        { "SCMP_ACT_KILL_THREAD", NULL, -1, SECCOMP_RET_KILL_THREAD },
        { "SCMP_ACT_KILL_PROCESS", NULL, -1, SECCOMP_RET_KILL_PROCESS },
        { "SCMP_ACT_TRAP", NULL, -1, SECCOMP_RET_TRAP },
        { "SCMP_ACT_ERRNO", NULL, -1, SECCOMP_RET_ERRNO | EPERM },
        { "SCMP_ACT_ERRNO", NULL, 38, SECCOMP_RET_ERRNO | ENOSYS },
        { "SCMP_ACT_ERRNO", NULL, 22, SECCOMP_RET_ERRNO | EINVAL },
        { "SCMP_ACT_ERRNO", NULL, 0, SECCOMP_RET_ERRNO | 0 },
        { "SCMP_ACT_ERRNO", NULL, 4094, SECCOMP_RET_ERRNO | 4094 },
        { "SCMP_ACT_ERRNO", "EACCES", -1, SECCOMP_RET_ERRNO | EACCES },
        { "SCMP_ACT_ERRNO", "ENOENT", -1, SECCOMP_RET_ERRNO | ENOENT },
        { "SCMP_ACT_ERRNO", "ENOSYS", 38, SECCOMP_RET_ERRNO | ENOSYS },
        { "SCMP_ACT_ERRNO", "EPERM", 1, SECCOMP_RET_ERRNO | EPERM },
        { "SCMP_ACT_TRACE", NULL, -1, SECCOMP_RET_TRACE | EPERM },
        { "SCMP_ACT_TRACE", NULL, 4242, SECCOMP_RET_TRACE | 4242 },
        { "SCMP_ACT_TRACE", NULL, 65535, SECCOMP_RET_TRACE | 65535 },
        { "SCMP_ACT_LOG", NULL, -1, SECCOMP_RET_LOG },
};

/* The case's fields with the given prefix ("default" for the profile's, "" for a rule's): the
 * action field, then the errno fields it has. */
static char *action_fields(const struct action_case *c, bool as_default) {
        char name[64] = "", ret[64] = "", *out;

        if (c->errno_name)
                snprintf(name, sizeof(name), ",'%s':'%s'", as_default ? "defaultErrno" : "errno", c->errno_name);
        if (c->errno_ret >= 0)
                snprintf(ret, sizeof(ret), ",'%s':%d", as_default ? "defaultErrnoRet" : "errnoRet", c->errno_ret);
        assert_true(asprintf(&out, "'%s':'%s'%s%s", as_default ? "defaultAction" : "action", c->action, name, ret) > 0);
        return out;
}

static void test_default_actions(void **state) {
        for (size_t i = 0; i < sizeof(action_cases) / sizeof(action_cases[0]); i++) {
                char *fields = action_fields(&action_cases[i], true), *json;
                struct zp_profile *p;

                assert_true(asprintf(&json, "{%s}", fields) > 0);
                p = load_ok(json);
                assert_int_equal(decide(p, "getpid", 0, 0), action_cases[i].want);
                zp_profile_free(p);
                free(json);
                free(fields);
        }

        struct zp_profile *p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW'}");
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);
}

/* A getpid rule with these fields decides want for getpid and leaves getppid to the default. */
static void check_rule_action(const char *fields, uint32_t want) {
        struct zp_profile *p = getpid_rule(fields);

        assert_int_equal(decide(p, "getpid", 0, 0), want);
        assert_int_equal(decide(p, "getppid", 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(p->n_rules, 1);
        zp_profile_free(p);
}

static void test_rule_actions(void **state) {
        for (size_t i = 0; i < sizeof(action_cases) / sizeof(action_cases[0]); i++) {
                char *fields = action_fields(&action_cases[i], false);

                check_rule_action(fields, action_cases[i].want);
                free(fields);
        }
        check_rule_action("'action':'SCMP_ACT_LOG','comment':'why'", SECCOMP_RET_LOG);

        /* A rule with the default action decides nothing: skipped, as runc and crun do (libseccomp
         * would refuse it with EACCES). */
        struct zp_profile *p = getpid_rule("'action':'SCMP_ACT_ALLOW'");
        assert_int_equal(p->n_rules, 0);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);
}

static void test_action_errors(void **state) {
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_FOO'}]}",
                  -EINVAL, "syscalls[0].action: unknown action \"SCMP_ACT_FOO\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid']}]}", -EINVAL,
                  "syscalls[0]: missing \"action\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':7}]}", -EINVAL,
                  "syscalls[0].action: expected a string, got int");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_NOTIFY'}]}",
                  -EOPNOTSUPP,
                  "syscalls[0].action: SCMP_ACT_NOTIFY needs a seccomp user-notification listener, which zygote does "
                  "not provide");
        load_fail("{'defaultAction':'SCMP_ACT_NOTIFY'}", -EOPNOTSUPP,
                  "defaultAction: SCMP_ACT_NOTIFY needs a seccomp user-notification listener, which zygote does not "
                  "provide");
        load_fail(
                "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_KILL','errnoRet':"
                "1}]}",
                -EINVAL,
                "syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno value, not SCMP_ACT_KILL");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','defaultErrnoRet':1}", -EINVAL,
                  "defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno value, not SCMP_ACT_ALLOW");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':4095}", -ERANGE,
                  "defaultErrnoRet: 4095 is out of range (0..4094)");
        load_fail("{'defaultAction':'SCMP_ACT_TRACE','defaultErrnoRet':65536}", -ERANGE,
                  "defaultErrnoRet: 65536 is out of range (0..65535)");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':-1}", -ERANGE,
                  "defaultErrnoRet: -1 is negative");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1.5}", -EINVAL,
                  "defaultErrnoRet: expected an integer, got double");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':'1'}", -EINVAL,
                  "defaultErrnoRet: expected an integer, got string");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrno':'EWHATEVER'}", -EINVAL,
                  "defaultErrno: unknown errno name \"EWHATEVER\"");
        load_fail("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrno':'EPERM','defaultErrnoRet':38}", -EINVAL,
                  "defaultErrnoRet: 38 disagrees with defaultErrno \"EPERM\"");
}

static void test_args_ops(void **state) {
        static const struct {
                const char *op;
                uint64_t value, value_two;
                struct {
                        uint64_t arg;
                        bool match;
                } samples[6];
        } v[] = {
                { "SCMP_CMP_EQ",
                  5,
                  0,
                  { { 5, true }, { 4, false }, { 6, false }, { 5 | (UINT64_C(1) << 32), false } } },
                { "SCMP_CMP_NE", 5, 0, { { 5, false }, { 4, true }, { 6, true }, { 5 | (UINT64_C(1) << 32), true } } },
                { "SCMP_CMP_LT", 5, 0, { { 4, true }, { 5, false }, { 0, true }, { UINT64_MAX, false } } },
                { "SCMP_CMP_LE", 5, 0, { { 5, true }, { 6, false }, { 0, true }, { UINT64_C(1) << 32, false } } },
                { "SCMP_CMP_GT", 5, 0, { { 6, true }, { 5, false }, { UINT64_MAX, true }, { 0, false } } },
                { "SCMP_CMP_GE", 5, 0, { { 5, true }, { 4, false }, { UINT64_C(1) << 40, true } } },
                /* value is the mask, valueTwo the datum (OCI, runc, libseccomp) */
                { "SCMP_CMP_MASKED_EQ",
                  0xf0,
                  0x30,
                  { { 0x30, true }, { 0x3f, true }, { 0x130, true }, { 0x20, false }, { 0xf0, false } } },
                { "SCMP_CMP_EQ", UINT64_MAX, 0, { { UINT64_MAX, true }, { 0xffffffff, false } } },
        };

        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                char *fields;
                struct zp_profile *p;

                assert_true(
                        asprintf(&fields,
                                 "'action':'SCMP_ACT_ERRNO','errnoRet':9,'args':[{'index':1,'op':'%s','value':%" PRIu64
                                 ",'valueTwo':%" PRIu64 "}]",
                                 v[i].op, v[i].value, v[i].value_two) > 0);
                p = getpid_rule(fields);
                for (size_t j = 0; j < 6 && (j == 0 || v[i].samples[j].arg || v[i].samples[j].match); j++) {
                        uint32_t got = decide(p, "getpid", 0, v[i].samples[j].arg);
                        if (got != (v[i].samples[j].match ? SECCOMP_RET_ERRNO | 9 : SECCOMP_RET_ALLOW))
                                fail_msg("%s %" PRIu64 ": arg 0x%" PRIx64 " decided 0x%08x", v[i].op, v[i].value,
                                         v[i].samples[j].arg, got);
                }
                /* The other argument does not matter. */
                assert_int_equal(decide(p, "getpid", 12345, v[i].samples[0].arg),
                                 v[i].samples[0].match ? SECCOMP_RET_ERRNO | 9 : SECCOMP_RET_ALLOW);
                zp_profile_free(p);
                free(fields);
        }
}

static void test_args_and_or(void **state) {
        struct zp_profile *p;

        /* Different arguments: all conditions must hold. */
        p = getpid_rule("'action':'SCMP_ACT_ERRNO','args':[{'index':0,'op':'SCMP_CMP_EQ','value':1},"
                        "{'index':1,'op':'SCMP_CMP_EQ','value':2}]");
        assert_int_equal(decide(p, "getpid", 1, 2), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "getpid", 1, 3), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "getpid", 0, 2), SECCOMP_RET_ALLOW);
        assert_int_equal(p->n_rules, 1);
        zp_profile_free(p);

        /* The same argument twice: runc and crun make one rule per condition, any may match. */
        p = getpid_rule("'action':'SCMP_ACT_ERRNO','args':[{'index':0,'op':'SCMP_CMP_EQ','value':1},"
                        "{'index':0,'op':'SCMP_CMP_EQ','value':2},{'index':1,'op':'SCMP_CMP_EQ','value':7}]");
        assert_int_equal(decide(p, "getpid", 1, 0), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "getpid", 2, 0), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "getpid", 3, 7), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "getpid", 3, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);

        /* "args": null is no condition (Go reads null as empty). */
        p = getpid_rule("'action':'SCMP_ACT_ERRNO','args':null");
        assert_int_equal(decide(p, "getpid", 3, 0), SECCOMP_RET_ERRNO | EPERM);
        zp_profile_free(p);
}

static void test_args_errors(void **state) {
#define R(a) \
        "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_KILL','args':" a "}]}"
        load_fail(R("[{'index':6,'op':'SCMP_CMP_EQ','value':1}]"), -ERANGE,
                  "syscalls[0].args[0].index: 6 is out of range (0..5)");
        load_fail(R("[{'op':'SCMP_CMP_EQ','value':1}]"), -EINVAL, "syscalls[0].args[0]: missing \"index\"");
        load_fail(R("[{'index':0,'value':1}]"), -EINVAL, "syscalls[0].args[0]: missing \"op\"");
        load_fail(R("[{'index':0,'op':'SCMP_CMP_XX','value':1}]"), -EINVAL,
                  "syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\"");
        load_fail(R("[{'index':0,'op':'SCMP_CMP_EQ','value':1,'valueTwo':2}]"), -EINVAL,
                  "syscalls[0].args[0].valueTwo: only SCMP_CMP_MASKED_EQ uses valueTwo");
        load_fail(R("[{'index':0,'op':'SCMP_CMP_EQ','value':-1}]"), -ERANGE,
                  "syscalls[0].args[0].value: -1 is negative");
        load_fail(R("[{'index':0,'op':'SCMP_CMP_EQ','value':18446744073709551616}]"), -ERANGE,
                  "line 1, column 138: integer out of range");
        load_fail(R("[{'index':0,'op':'SCMP_CMP_EQ','vlaue':1}]"), -EINVAL,
                  "syscalls[0].args[0]: unknown field \"vlaue\"");
        load_fail(R("{}"), -EINVAL, "syscalls[0].args: expected an array, got object");
        load_fail(R("[3]"), -EINVAL, "syscalls[0].args[0]: expected an object, got int");
        load_fail(R("[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]"), -E2BIG,
                  "syscalls[0].args: 17 entries, more than the 16 allowed");
#undef R
        /* The largest value is fine. */
        zp_profile_free(getpid_rule(
                "'action':'SCMP_ACT_KILL','args':[{'index':0,'op':'SCMP_CMP_EQ','value':18446744073709551615}]"));
}

static void test_names(void **state) {
        struct zp_profile *p;

        /* Unknown names are skipped and counted, as runc does; the rest still applies. */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid','no_such_call','neither'],"
                    "'action':'SCMP_ACT_KILL_PROCESS'}]}");
        assert_int_equal(p->skipped_syscalls, 2);
        assert_int_equal(p->n_rules, 1);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_KILL_PROCESS);
        zp_profile_free(p);

        /* Docker's older single "name". */
        p = load_ok(
                "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'name':'getpid','action':'SCMP_ACT_KILL_PROCESS'}]}");
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_KILL_PROCESS);
        zp_profile_free(p);

        /* A name of another architecture only (i386's _llseek): applies there, no error. */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_X86'],"
                    "'syscalls':[{'names':['_llseek'],'action':'SCMP_ACT_KILL_PROCESS'}]}");
        assert_int_equal(p->skipped_syscalls, 0);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_I386, 140, 0, 0), SECCOMP_RET_KILL_PROCESS);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 140, 0, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);

#define R(a) "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{" a "'action':'SCMP_ACT_KILL'}]}"
        load_fail(R("'name':'getpid','names':['getppid'],"), -EINVAL,
                  "syscalls[0]: use either \"name\" or \"names\", not both");
        load_fail(R(""), -EINVAL, "syscalls[0]: missing \"names\"");
        load_fail(R("'names':[],"), -EINVAL, "syscalls[0].names: no syscall names");
        load_fail(R("'names':['get pid'],"), -EINVAL, "syscalls[0].names[0]: \"get pid\" is not a syscall name");
        load_fail(R("'names':['getpid',''],"), -EINVAL, "syscalls[0].names[1]: \"\" is not a syscall name");
        load_fail(R("'names':[12],"), -EINVAL, "syscalls[0].names[0]: expected a string, got int");
        load_fail(R("'names':'getpid',"), -EINVAL, "syscalls[0].names: expected an array, got string");
        load_fail(R("'name':'a\\u0000b',"), -EINVAL, "syscalls[0].name: string contains a NUL character");
        load_fail(R("'names':['getpid'],'nmae':1,"), -EINVAL, "syscalls[0]: unknown field \"nmae\"");
        load_fail(R("'names':['getpid'],'comment':3,"), -EINVAL, "syscalls[0].comment: expected a string, got int");
#undef R
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[7]}", -EINVAL,
                  "syscalls[0]: expected an object, got int");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':{}}", -EINVAL,
                  "syscalls: expected an array, got object");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','sycalls':[]}", -EINVAL, "unknown field \"sycalls\"");
}

/* A zygote profile with one rule on getpid guarded by the given includes/excludes. */
static struct zp_profile *guarded(const char *caps, const char *guard) {
        char *json;
        struct zp_profile *p;

        assert_true(asprintf(&json,
                             "{'name':'g','capabilities':[%s],'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':"
                             "[{'names':['getpid'],'action':'SCMP_ACT_KILL_PROCESS',%s}]}}",
                             caps, guard) > 0);
        p = load_ok(json);
        free(json);
        return p;
}

static bool applies(const char *caps, const char *guard) {
        struct zp_profile *p = guarded(caps, guard);
        bool r = decide(p, "getpid", 0, 0) == SECCOMP_RET_KILL_PROCESS;
        zp_profile_free(p);
        return r;
}

static void test_includes_excludes(void **state) {
        /* caps: includes needs all of them kept, excludes any of them */
        assert_true(applies("'CAP_SYS_ADMIN'", "'includes':{'caps':['CAP_SYS_ADMIN']}"));
        assert_false(applies("'CAP_CHOWN'", "'includes':{'caps':['CAP_SYS_ADMIN']}"));
        assert_false(applies("'CAP_SYS_ADMIN'", "'includes':{'caps':['CAP_SYS_ADMIN','CAP_BPF']}"));
        assert_true(applies("'CAP_SYS_ADMIN','CAP_BPF'", "'includes':{'caps':['CAP_SYS_ADMIN','CAP_BPF']}"));
        assert_false(applies("'CAP_SYS_ADMIN'", "'excludes':{'caps':['CAP_SYS_ADMIN']}"));
        assert_false(applies("'CAP_SYS_ADMIN'", "'excludes':{'caps':['CAP_BPF','CAP_SYS_ADMIN']}"));
        assert_true(applies("'CAP_CHOWN'", "'excludes':{'caps':['CAP_SYS_ADMIN']}"));
        /* Names libcap does not know, or not written as Docker writes them, are never kept. */
        assert_false(applies("'CAP_SYS_ADMIN'", "'includes':{'caps':['CAP_FUTURE_THING']}"));
        assert_false(applies("'CAP_SYS_ADMIN'", "'includes':{'caps':['cap_sys_admin']}"));
        assert_true(applies("'CAP_SYS_ADMIN'", "'excludes':{'caps':['CAP_FUTURE_THING']}"));

        /* arches: Docker's names for the native architecture */
        assert_true(applies("", "'includes':{'arches':['amd64']}"));
        assert_true(applies("", "'includes':{'arches':['arm64','x86_64']}"));
        assert_false(applies("", "'includes':{'arches':['arm64','x32','x86']}"));
        assert_false(applies("", "'excludes':{'arches':['s390','amd64']}"));
        assert_true(applies("", "'excludes':{'arches':['s390','s390x']}"));

        /* minKernel against the running kernel (this machine runs a 6.x kernel) */
        assert_true(applies("", "'includes':{'minKernel':'1.0'}"));
        assert_false(applies("", "'includes':{'minKernel':'999.0'}"));
        assert_false(applies("", "'excludes':{'minKernel':'4.8'}"));
        assert_true(applies("", "'excludes':{'minKernel':'999.1'}"));

        /* empty lists, empty objects and null are no condition */
        assert_true(applies("", "'includes':{'caps':[],'arches':[]},'excludes':{}"));
        assert_true(applies("", "'includes':null,'excludes':null"));

        /* both together: Docker's clone rule (excluded with CAP_SYS_ADMIN or on s390) */
        assert_true(applies("'CAP_CHOWN'", "'excludes':{'caps':['CAP_SYS_ADMIN'],'arches':['s390','s390x']}"));
        assert_false(applies("'CAP_SYS_ADMIN'", "'excludes':{'caps':['CAP_SYS_ADMIN'],'arches':['s390','s390x']}"));
        assert_false(
                applies("'CAP_SYS_ADMIN'", "'includes':{'arches':['amd64']},'excludes':{'caps':['CAP_SYS_ADMIN']}"));

#define R(g) "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_KILL'," g "}]}"
        load_fail(R("'includes':{'minKernel':'4'}"), -EINVAL,
                  "syscalls[0].includes.minKernel: \"4\" is not a kernel version like \"4.8\"");
        load_fail(R("'includes':{'minKernel':'4.8.1'}"), -EINVAL,
                  "syscalls[0].includes.minKernel: \"4.8.1\" is not a kernel version like \"4.8\"");
        load_fail(R("'excludes':{'minKernel':'0.0'}"), -EINVAL,
                  "syscalls[0].excludes.minKernel: \"0.0\" is not a kernel version like \"4.8\"");
        load_fail(R("'excludes':{'minKernel':48}"), -EINVAL,
                  "syscalls[0].excludes.minKernel: expected a string, got int");
        load_fail(R("'includes':{'cap':['CAP_CHOWN']}"), -EINVAL, "syscalls[0].includes: unknown field \"cap\"");
        load_fail(R("'includes':{'caps':'CAP_CHOWN'}"), -EINVAL,
                  "syscalls[0].includes.caps: expected an array, got string");
        load_fail(R("'excludes':{'arches':[1]}"), -EINVAL,
                  "syscalls[0].excludes.arches[0]: expected a string, got int");
        load_fail(R("'excludes':[]"), -EINVAL, "syscalls[0].excludes: expected an object, got array");
        /* Errors in a rule that does not apply here are still errors (same result on every machine). */
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_BAD',"
                  "'includes':{'arches':['s390x']}}]}",
                  -EINVAL, "syscalls[0].action: unknown action \"SCMP_ACT_BAD\"");
#undef R
}

static void test_arches(void **state) {
        struct zp_profile *p;

        /* architectures: native first, others added; rules apply per architecture */
        p = load_ok("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86','SCMP_ARCH_X86_64','SCMP_ARCH_"
                    "X32'],"
                    "'syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ALLOW'}]}");
        assert_int_equal(p->n_arches, 3);
        assert_int_equal(p->arches[0], SCMP_ARCH_X86_64);
        assert_int_equal(p->arches[1], SCMP_ARCH_X86);
        assert_int_equal(p->arches[2], SCMP_ARCH_X32);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_I386, 20, 0, 0), SECCOMP_RET_ALLOW); /* i386 getpid */
        /* below i386's getpid (above it: the -ENOSYS stub, test-profile-enosys.c) */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_I386, 19, 0, 0), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 39, 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 0x40000000 | 39, 0, 0), SECCOMP_RET_ALLOW); /* x32 */
        zp_profile_free(p);

        /* x32 numbers on x86_64 without x32 in the filter: bad architecture */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW'}");
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 0x40000000 | 39, 0, 0), SECCOMP_RET_KILL_THREAD);
        zp_profile_free(p);

        /* archMap: only the native entry counts; others may name architectures libseccomp lacks */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','archMap':["
                    "{'architecture':'SCMP_ARCH_LOONGARCH64','subArchitectures':null},"
                    "{'architecture':'SCMP_ARCH_AARCH64','subArchitectures':['SCMP_ARCH_ARM']},"
                    "{'architecture':'SCMP_ARCH_X86_64','subArchitectures':['SCMP_ARCH_X86']}]}");
        assert_int_equal(p->n_arches, 2);
        assert_int_equal(p->arches[1], SCMP_ARCH_X86);
        zp_profile_free(p);

        /* the libseccomp spelling works too, and "native" */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['x86','native']}");
        assert_int_equal(p->n_arches, 2);
        zp_profile_free(p);

        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_X86'],'archMap':[]}", -EINVAL,
                  "use either \"architectures\" or \"archMap\", not both");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_PDP11']}", -EINVAL,
                  "architectures[0]: unknown architecture \"SCMP_ARCH_PDP11\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','archMap':[{'architecture':'SCMP_ARCH_X86_64','subArchitectures':["
                  "'SCMP_ARCH_VAX']}]}",
                  -EINVAL, "archMap[0].subArchitectures[0]: unknown architecture \"SCMP_ARCH_VAX\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','archMap':[{'subArchitectures':[]}]}", -EINVAL,
                  "archMap[0]: missing \"architecture\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','archMap':[{'architecture':'SCMP_ARCH_X86_64','sub':[]}]}",
                  -EINVAL, "archMap[0]: unknown field \"sub\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','architectures':'SCMP_ARCH_X86'}", -EINVAL,
                  "architectures: expected an array, got string");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['x86','x32','arm','aarch64','ppc','ppc64','"
                  "ppc64le',"
                  "'s390','s390x','mips','mipsel','mips64','mipsel64','mips64n32','mipsel64n32','parisc','parisc64']}",
                  -E2BIG, "architectures[15]: more than 16 architectures");
}

static void test_flags_and_listener(void **state) {
        struct zp_profile *p;

        p = load_ok(
                "{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_LOG','SECCOMP_FILTER_FLAG_SPEC_ALLOW',"
                "'SECCOMP_FILTER_FLAG_TSYNC'],'listenerPath':'','listenerMetadata':''}");
        assert_int_equal(p->filter_flags,
                         SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW | SECCOMP_FILTER_FLAG_TSYNC);
        zp_profile_free(p);

        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_FOO']}", -EINVAL,
                  "flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_FOO\"");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_LOG','SECCOMP_FILTER_FLAG_NEW_"
                  "LISTENER']}",
                  -EOPNOTSUPP,
                  "flags[1]: SECCOMP_FILTER_FLAG_NEW_LISTENER needs a seccomp user-notification listener, which zygote "
                  "does not provide");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV']}", -EOPNOTSUPP,
                  "flags[0]: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a seccomp user-notification listener, which "
                  "zygote does not provide");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/run/agent.sock'}", -EOPNOTSUPP,
                  "listenerPath: zygote has no seccomp user-notification listener");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','listenerMetadata':'x'}", -EOPNOTSUPP,
                  "listenerMetadata: zygote has no seccomp user-notification listener");
}

static void test_zygote_form(void **state) {
        struct zp_profile *p;
        unsigned cap;

        p = load_ok("{'name':'build-1.x','comment':'c','capabilities':['CAP_CHOWN','CAP_SYS_PTRACE'],'noNewPrivileges':"
                    "false,"
                    "'access':{'users':['root',1000,4294967294],'groups':['root',100]},"
                    "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_"
                    "ALLOW'}]}}");
        assert_string_equal(p->name, "build-1.x");
        assert_int_equal(zp_cap_from_name("CAP_SYS_PTRACE", &cap), 0);
        assert_true(p->caps_keep == ((UINT64_C(1) << 0) | (UINT64_C(1) << cap)));
        assert_false(p->no_new_privs);
        assert_false(p->access_all);
        assert_int_equal(p->n_access_uids, 3);
        assert_int_equal(p->access_uids[0], 0);
        assert_int_equal(p->access_uids[1], 1000);
        assert_int_equal(p->access_uids[2], 4294967294u);
        assert_int_equal(p->n_access_gids, 2);
        assert_int_equal(p->access_gids[0], 0);
        assert_int_equal(p->access_gids[1], 100);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "getppid", 0, 0), SECCOMP_RET_ERRNO | EPERM);
        /* errno-default program without setsid: the worker cannot finish its setup under it */
        assert_false(p->worker_setup_ok);
        assert_non_null(p->worker_setup_blocked);
        zp_profile_free(p);

        /* no capabilities at all, and an empty access list (root only) */
        p = load_ok("{'name':'n','capabilities':[],'access':{},'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}}");
        assert_true(p->caps_keep == 0);
        assert_true(p->no_new_privs);
        assert_false(p->nnp_callers_allow); /* refused unless the profile says otherwise */
        assert_false(p->access_all);
        assert_int_equal(p->n_access_uids + p->n_access_gids, 0);
        zp_profile_free(p);

        /* a caller with no_new_privs (maybe a Landlock domain) admitted, or refused as by default */
        p = load_ok("{'name':'n','capabilities':[],'noNewPrivsCallers':'allow',"
                    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}}");
        assert_true(p->nnp_callers_allow);
        zp_profile_free(p);
        p = load_ok("{'name':'n','capabilities':[],'noNewPrivsCallers':'refuse',"
                    "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}}");
        assert_false(p->nnp_callers_allow);
        zp_profile_free(p);

#define S "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}"
        load_fail("{'capabilities':[]," S "}", -EINVAL, "missing \"name\"");
        load_fail("{'name':'a/b','capabilities':[]," S "}", -EINVAL,
                  "name: \"a/b\" is not a valid profile name (1-64 of A-Z a-z 0-9 . _ -, not starting with . or -)");
        load_fail(
                "{'name':'.hidden','capabilities':[]," S "}", -EINVAL,
                "name: \".hidden\" is not a valid profile name (1-64 of A-Z a-z 0-9 . _ -, not starting with . or -)");
        load_fail("{'name':'a'," S "}", -EINVAL, "missing \"capabilities\" (the bounding set to keep; [] keeps none)");
        load_fail("{'name':'a','capabilities':['CAP_NOPE']," S "}", -EINVAL,
                  "capabilities[0]: unknown capability \"CAP_NOPE\"");
        load_fail("{'name':'a','capabilities':['chown']," S "}", -EINVAL,
                  "capabilities[0]: unknown capability \"chown\"");
        load_fail("{'name':'a','capabilities':[]," S ",'noNewPrivileges':1}", -EINVAL,
                  "noNewPrivileges: expected true or false, got int");
        load_fail("{'name':'a','capabilities':[]," S ",'noNewPrivsCallers':'yes'}", -EINVAL,
                  "noNewPrivsCallers: \"yes\" is not \"allow\" or \"refuse\"");
        load_fail("{'name':'a','capabilities':[]," S ",'noNewPrivsCallers':true}", -EINVAL,
                  "noNewPrivsCallers: expected a string, got boolean");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'users':['no-such-user-zygote']}}", -ESRCH,
                  "access.users[0]: unknown user \"no-such-user-zygote\"");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'groups':['no-such-group-zygote']}}", -ESRCH,
                  "access.groups[0]: unknown group \"no-such-group-zygote\"");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'users':[4294967295]}}", -ERANGE,
                  "access.users[0]: 4294967295 is out of range (0..4294967294)");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'users':[-1]}}", -ERANGE,
                  "access.users[0]: -1 is negative");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'users':[true]}}", -EINVAL,
                  "access.users[0]: expected a name or a number, got boolean");
        load_fail("{'name':'a','capabilities':[]," S ",'access':{'uids':[1]}}", -EINVAL,
                  "access: unknown field \"uids\"");
        load_fail("{'name':'a','capabilities':[]," S ",'acess':{}}", -EINVAL, "unknown field \"acess\"");
        load_fail("{'name':'a','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_FOO'}}", -EINVAL,
                  "seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\"");
        load_fail("{'name':'a','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['x']"
                  ",'action':1}]}}",
                  -EINVAL, "seccomp.syscalls[0].action: expected a string, got int");
        load_fail("{'name':'a','capabilities':[],'seccomp':7}", -EINVAL, "seccomp: expected an object, got int");
        load_fail(
                "{'name':'a','capabilities':[],'seccomp':{},'defaultAction':'SCMP_ACT_ALLOW'}", -EINVAL,
                "both \"seccomp\" (zygote profile) and \"defaultAction\"/\"syscalls\" (Docker/OCI file) at top level");
        load_fail("{'name':'a'}", -EINVAL,
                  "neither a Docker/OCI seccomp file (\"defaultAction\", \"syscalls\") nor a zygote profile "
                  "(\"seccomp\")");
        load_fail("{'name':'a','capabilities':[],'seccomp':'/etc/docker.json'}", -EINVAL,
                  "seccomp: \"/etc/docker.json\": the path must be relative to the profile's directory");
        load_fail("{'name':'a','capabilities':[],'seccomp':'missing.json'}", -ENOENT,
                  "seccomp: cannot read t/missing.json: No such file or directory");
#undef S
}

static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_minimal),      cmocka_unit_test(test_default_actions),
        cmocka_unit_test(test_rule_actions),       cmocka_unit_test(test_action_errors),
        cmocka_unit_test(test_args_ops),           cmocka_unit_test(test_args_and_or),
        cmocka_unit_test(test_args_errors),        cmocka_unit_test(test_names),
        cmocka_unit_test(test_includes_excludes),  cmocka_unit_test(test_arches),
        cmocka_unit_test(test_flags_and_listener), cmocka_unit_test(test_zygote_form),
};

PROFILE_TESTS_MAIN(tests)
