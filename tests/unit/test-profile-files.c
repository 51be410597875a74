/* SPDX-License-Identifier: MIT */
/*
 * The profile module, continued (test-profile.c has the rules of both file forms): seccomp files
 * referenced from a profile, JSON and limit errors, access checks, capability names, profile
 * sets and their file errors, the compiled program's fields, the bundled profiles.
 *
 * Usage: test-profile-files PROFILES_DIR
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

static void test_seccomp_reference(void **state) {
        char *dir = tmpdir_new(), *path, *err = NULL, *want;
        struct zp_profile *p = NULL;

        assert_true(asprintf(&path, "%s/sub", dir) > 0);
        assert_int_equal(mkdir(path, 0755), 0);
        free(path);
        write_file(dir, "docker.json",
                   "{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_ALLOW',"
                   "'includes':{'caps':['CAP_SYS_ADMIN']}}]}");
        write_file(dir, "admin.json", "{'name':'admin','capabilities':['CAP_SYS_ADMIN'],'seccomp':'docker.json'}");
        write_file(dir, "plain.json", "{'name':'plain','capabilities':[],'seccomp':'docker.json'}");
        write_file(dir, "bad-inner.json", "{'name':'bi','capabilities':[],'seccomp':'bad.json'}");
        write_file(dir, "bad.json",
                   "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'X'}]}");
        write_file(dir, "nested.json", "{'name':'n','capabilities':[],'seccomp':'admin.json'}");

        /* includes in the referenced file see the profile's capabilities */
        assert_true(asprintf(&path, "%s/admin.json", dir) > 0);
        assert_int_equal(zp_profile_load_file(path, &p, &err), 0);
        assert_string_equal(p->name, "admin");
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        zp_profile_free(p);
        free(path);

        assert_true(asprintf(&path, "%s/plain.json", dir) > 0);
        assert_int_equal(zp_profile_load_file(path, &p, &err), 0);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ERRNO | EPERM);
        zp_profile_free(p);
        free(path);

        /* an error inside the referenced file names both files */
        assert_true(asprintf(&path, "%s/bad-inner.json", dir) > 0);
        assert_int_equal(zp_profile_load_file(path, &p, &err), -EINVAL);
        assert_true(asprintf(&want, "%s: seccomp file %s/bad.json: syscalls[0].action: unknown action \"X\"", path,
                             dir) > 0);
        assert_string_equal(err, want);
        free(want);
        free(err);
        free(path);

        /* the referenced file must be a Docker/OCI file, not another zygote profile */
        assert_true(asprintf(&path, "%s/nested.json", dir) > 0);
        assert_int_equal(zp_profile_load_file(path, &p, &err), -EINVAL);
        assert_true(asprintf(&want,
                             "%s: seccomp file %s/admin.json: is a zygote profile; \"seccomp\" must name a Docker/OCI "
                             "seccomp file",
                             path, dir) > 0);
        assert_string_equal(err, want);
        free(want);
        free(err);
        free(path);

        rm_rf(dir);
        free(dir);
}

/* A profile's seccomp path stays beneath the profile's directory: openat2(RESOLVE_BENEATH), and
 * the checked open without it. */
static void seccomp_path_beneath(bool no_openat2) {
        char *dir = tmpdir_new(), *path, *err = NULL, *want;
        struct zp_profile *p = NULL;
        static const struct {
                const char *file, *json, *rel; /* rel: the path refused, NULL when it loads */
        } cases[] = {
                { "sub/up.json", "{'name':'up','capabilities':[],'seccomp':'../docker.json'}", "../docker.json" },
                { "sub/far.json", "{'name':'far','capabilities':[],'seccomp':'../../../../../../etc/shadow'}",
                  "../../../../../../etc/shadow" },
                { "sub/link.json", "{'name':'link','capabilities':[],'seccomp':'out.json'}", "out.json" },
                { "sub/abs.json", "{'name':'abs','capabilities':[],'seccomp':'abs-link.json'}", "abs-link.json" },
                { "sub/dot.json", "{'name':'dot','capabilities':[],'seccomp':'deeper/../in.json'}", NULL },
                { "down.json", "{'name':'down','capabilities':[],'seccomp':'sub/in.json'}", NULL },
        };

        zp_json_no_openat2 = no_openat2;
        assert_true(asprintf(&path, "%s/sub", dir) > 0);
        assert_int_equal(mkdir(path, 0755), 0);
        free(path);
        assert_true(asprintf(&path, "%s/sub/deeper", dir) > 0);
        assert_int_equal(mkdir(path, 0755), 0);
        free(path);
        write_file(dir, "docker.json", "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[]}");
        write_file(dir, "sub/in.json", "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[]}");
        assert_true(asprintf(&path, "%s/sub/out.json", dir) > 0);
        assert_int_equal(symlink("../docker.json", path), 0);
        free(path);
        assert_true(asprintf(&path, "%s/sub/abs-link.json", dir) > 0);
        assert_true(asprintf(&want, "%s/docker.json", dir) > 0);
        assert_int_equal(symlink(want, path), 0);
        free(want);
        free(path);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                write_file(dir, cases[i].file, cases[i].json);
                assert_true(asprintf(&path, "%s/%s", dir, cases[i].file) > 0);
                if (!cases[i].rel) {
                        assert_int_equal(zp_profile_load_file(path, &p, &err), 0);
                        zp_profile_free(p);
                } else {
                        assert_int_equal(zp_profile_load_file(path, &p, &err), -EINVAL);
                        assert_true(asprintf(&want, "%s: seccomp: \"%s\": the path leaves the profile's directory",
                                             path, cases[i].rel) > 0);
                        assert_string_equal(err, want);
                        free(want);
                        free(err);
                }
                free(path);
        }
        zp_json_no_openat2 = false;
        rm_rf(dir);
        free(dir);
}

/* *state: whether openat2 is taken away (the fallback) */
static void test_seccomp_path_beneath(void **state) {
        seccomp_path_beneath(*(const bool *) *state);
}

static void test_json_errors(void **state) {
        char *big;
        struct zp_profile *p = NULL;
        char *err = NULL;

        load_fail("{'defaultAction':'SCMP_ACT_ALLOW',}", -EINVAL, "line 1, column 35: unexpected character");
        load_fail("{'defaultAction':\n  'SCMP_ACT_ALLOW'", -EINVAL, "line 2, column 19: unexpected end of data");
        load_fail("", -EINVAL, "line 1, column 1: unexpected end of data");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW'} {}", -EINVAL, "line 1, column 36: unexpected character");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW' /* c */}", -EINVAL,
                  "line 1, column 35: object value separator ',' expected");
        load_fail("['defaultAction']", -EINVAL, "top level is not a JSON object");
        load_fail("{'a':[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}", -EINVAL, "line 1, column 21: nesting too deep");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],'action':'SCMP_ACT_KILL','"
                  "errnoRet':99999999999999999999}]}",
                  -ERANGE, "line 1, column 103: integer out of range");
        load_fail("{'defaultAction':'SCMP_ACT_ALLOW','defaultErrnoRet':-99999999999999999999}", -ERANGE,
                  "line 1, column 53: integer out of range");

        /* a NUL byte ends the JSON text early: the rest is reported, not ignored */
        static const char nul[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}\0{}";
        assert_int_equal(zp_profile_load_buffer(BUF_PATH, nul, sizeof(nul) - 1, &p, &err), -EINVAL);
        assert_string_equal(err, BUF_PATH ": line 1, column 35: unexpected data after the JSON value");
        free(err);

        /* 1 MiB limit */
        big = malloc(ZP_PROFILE_MAX_FILE_SIZE + 2);
        assert_non_null(big);
        memset(big, ' ', ZP_PROFILE_MAX_FILE_SIZE + 1);
        memcpy(big, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}", 34);
        assert_int_equal(zp_profile_load_buffer(BUF_PATH, big, ZP_PROFILE_MAX_FILE_SIZE, &p, &err), 0);
        zp_profile_free(p);
        assert_int_equal(zp_profile_load_buffer(BUF_PATH, big, ZP_PROFILE_MAX_FILE_SIZE + 1, &p, &err), -EFBIG);
        assert_string_equal(err, BUF_PATH ": 1048577 bytes, more than the 1048576 allowed");
        free(err);
        free(big);

        /* bad arguments */
        assert_int_equal(zp_profile_load_buffer(NULL, "{}", 2, &p, NULL), -EINVAL);
        assert_int_equal(zp_profile_load_buffer(BUF_PATH, NULL, 2, &p, NULL), -EINVAL);
        struct zp_profile_options o = { .optimize = 3 };
        assert_int_equal(zp_profile_load_buffer_with(BUF_PATH, "{}", 2, &o, &p, NULL), -EINVAL);
}

static void test_limits(void **state) {
        char *json;
        size_t n = 0, cap = 200000;

        /* more than ZP_PROFILE_MAX_RULES entries */
        json = malloc(cap);
        assert_non_null(json);
        n += (size_t) sprintf(json, "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[");
        for (int i = 0; i <= ZP_PROFILE_MAX_RULES; i++)
                n += (size_t) sprintf(json + n, "%s{}", i ? "," : "");
        n += (size_t) sprintf(json + n, "]}");
        load_fail(json, -E2BIG, "syscalls: 4097 entries, more than the 4096 allowed");

        /* more than ZP_PROFILE_MAX_NAMES names over the file */
        n = (size_t) sprintf(json, "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[");
        for (int i = 0; i < 3; i++) {
                n += (size_t) sprintf(json + n, "%s{\"action\":\"SCMP_ACT_KILL\",\"names\":[", i ? "," : "");
                for (int j = 0; j < 6000; j++)
                        n += (size_t) sprintf(json + n, "%s\"n%d\"", j ? "," : "", j);
                n += (size_t) sprintf(json + n, "]}");
                assert_true(n < cap - 200);
        }
        n += (size_t) sprintf(json + n, "]}");
        load_fail(json, -E2BIG, "syscalls[2].names: more than 16384 syscall names in the file");
        free(json);
}

static void test_allows(void **state) {
        gid_t groups[] = { 5, 100 };
        struct zp_profile *p = load_ok("{'name':'a','capabilities':[],'access':{'users':[1000],'groups':[100]},"
                                       "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}}");

        assert_true(zp_profile_allows(p, 0, 0, NULL, 0));         /* root always */
        assert_true(zp_profile_allows(p, 1000, 1000, NULL, 0));   /* listed user */
        assert_true(zp_profile_allows(p, 1001, 100, NULL, 0));    /* primary group */
        assert_true(zp_profile_allows(p, 1001, 1001, groups, 2)); /* supplementary group */
        assert_false(zp_profile_allows(p, 1001, 1001, groups, 1));
        assert_false(zp_profile_allows(p, 1001, 1001, NULL, 0));
        assert_false(zp_profile_allows(NULL, 0, 0, NULL, 0));
        zp_profile_free(p);

        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW'}");
        assert_true(zp_profile_allows(p, 4242, 4242, NULL, 0));
        zp_profile_free(p);
}

static void test_cap_names(void **state) {
        unsigned c = 99;
        char *name;

        assert_int_equal(zp_cap_from_name("CAP_CHOWN", &c), 0);
        assert_int_equal(c, 0);
        assert_int_equal(zp_cap_from_name("CAP_SYS_ADMIN", &c), 0);
        assert_int_equal(c, 21);
        assert_int_equal(zp_cap_from_name("CAP_CHECKPOINT_RESTORE", &c), 0);
        assert_int_equal(c, 40);
        c = 99;
        assert_int_equal(zp_cap_from_name("cap_chown", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name("CHOWN", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name("12", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name("CAP_12", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name("CAP_FOO", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name("CAP_CHOWN ", &c), -EINVAL);
        assert_int_equal(zp_cap_from_name(NULL, &c), -EINVAL);
        assert_int_equal(c, 99);

        assert_int_equal(zp_cap_to_name(21, &name), 0);
        assert_string_equal(name, "CAP_SYS_ADMIN");
        free(name);
        assert_int_equal(zp_cap_to_name(64, &name), -EINVAL);
        assert_int_equal(zp_cap_to_name(63, &name), -EINVAL);
}

struct errors {
        char *msgs[16];
        size_t n;
};

static void collect(const char *message, void *userdata) {
        struct errors *e = userdata;
        if (e->n < 16)
                e->msgs[e->n++] = strdup(message);
}

static void test_set_load(void **state) {
        char *d1 = tmpdir_new(), *d2 = tmpdir_new(), *missing, *fifo;
        const char *dirs[3];
        struct zp_profile_set set = {};
        struct errors e = {};
        const struct zp_profile *p;

        write_file(d1, "b-good.json", "{'name':'beta','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}}");
        write_file(d1, "a-bad.json", "{'defaultAction':'SCMP_ACT_NOPE'}");
        write_file(d1, "docker.json", "{'defaultAction':'SCMP_ACT_ERRNO'}");
        write_file(d1, "c-dup.json", "{'name':'beta','capabilities':[],'seccomp':{'defaultAction':'SCMP_ACT_LOG'}}");
        write_file(d1, "notes.txt", "not json");
        write_file(d1, ".hidden.json", "not json either");
        write_file(d2, "docker.json", "{'defaultAction':'SCMP_ACT_LOG'}");
        assert_true(asprintf(&fifo, "%s/fifo.json", d2) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0); /* must not block the loader */
        assert_true(asprintf(&missing, "%s/missing", d2) > 0);

        dirs[0] = d1, dirs[1] = missing, dirs[2] = d2;
        assert_int_equal(zp_profile_set_load(dirs, 3, &set, collect, &e), 0);

        /* a-bad, c-dup, missing dir, fifo */
        assert_int_equal(e.n, 4);
        assert_non_null(strstr(e.msgs[0], "a-bad.json: defaultAction: unknown action \"SCMP_ACT_NOPE\""));
        assert_non_null(strstr(e.msgs[1], "c-dup.json: profile name \"beta\" is already used by "));
        assert_non_null(strstr(e.msgs[2], "/missing: cannot read the profile directory: No such file or directory"));
        assert_non_null(strstr(e.msgs[3], "fifo.json: not a regular file"));
        for (size_t i = 0; i < e.n; i++)
                free(e.msgs[i]);

        assert_int_equal(set.n, 2);
        p = zp_profile_set_find(&set, "beta");
        assert_non_null(p);
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_ALLOW);
        p = zp_profile_set_find(&set, "docker");
        assert_non_null(p);
        /* the later directory's docker.json replaced the earlier one */
        assert_int_equal(decide(p, "getpid", 0, 0), SECCOMP_RET_LOG);
        assert_null(zp_profile_set_find(&set, "a-bad"));
        assert_null(zp_profile_set_find(&set, NULL));
        zp_profile_set_clear(&set);
        assert_int_equal(set.n, 0);
        zp_profile_set_clear(&set); /* twice is fine */

        /* no callback: errors are dropped, the rest loads */
        assert_int_equal(zp_profile_set_load(dirs, 3, &set, NULL, NULL), 0);
        assert_int_equal(set.n, 2);
        zp_profile_set_clear(&set);

        rm_rf(d1);
        rm_rf(d2);
        free(d1);
        free(d2);
        free(missing);
        free(fifo);
}

static void test_file_errors(void **state) {
        char *dir = tmpdir_new(), *path, *err = NULL;
        struct zp_profile *p = NULL;
        FILE *f;

        assert_int_equal(zp_profile_load_file("/nonexistent/x.json", &p, &err), -ENOENT);
        assert_string_equal(err, "/nonexistent/x.json: No such file or directory");
        free(err);

        assert_int_equal(zp_profile_load_file(dir, &p, &err), -EISDIR);
        free(err);

        assert_true(asprintf(&path, "%s/big.json", dir) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(ftruncate(fileno(f), ZP_PROFILE_MAX_FILE_SIZE + 1), 0);
        fclose(f);
        assert_int_equal(zp_profile_load_file(path, &p, &err), -EFBIG);
        assert_non_null(strstr(err, "big.json: more than the 1048576 bytes allowed"));
        free(err);
        free(path);
        assert_null(p);

        rm_rf(dir);
        free(dir);
}

/* A file that cannot be read: the message is the path and the reason, nothing else.
 * (zygoted --check-profile's printing is checked in tests/integration/test_startup.py.) */
static void test_missing_file(void **state) {
        struct zp_profile *p = NULL;
        char *err = NULL;

        assert_int_equal(zp_profile_load_file("/nonexistent/p.json", &p, &err), -ENOENT);
        assert_null(p);
        assert_string_equal(err, "/nonexistent/p.json: No such file or directory");
        free(err);
}

static void test_program_fields(void **state) {
        struct zp_profile *a, *b, *c, *lin;
        struct zp_profile_options o = { .optimize = 1 };
        char hex[65], *err = NULL, *j;

        a = load_ok("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read','write','getpid','close'],'action':"
                    "'SCMP_ACT_ALLOW'}]}");
        b = load_ok("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read','write','getpid','close'],'action':"
                    "'SCMP_ACT_ALLOW'}]}");
        c = load_ok("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read','write','getpid'],'action':'SCMP_"
                    "ACT_ALLOW'}]}");

        zc_sha256_hex(a->bpf, a->bpf_len * sizeof(struct sock_filter), hex);
        assert_string_equal(a->hash, hex);
        assert_int_equal(strlen(a->hash), 64);
        assert_string_equal(a->hash, b->hash);
        assert_string_not_equal(a->hash, c->hash);
        assert_int_equal(a->n_rules, 4);

        /* the linear layout decides the same, on a longer path */
        j = J("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read','write','getpid','close','openat','mmap',"
              "'brk',"
              "'futex','munmap','fstat','lseek','exit_group','rt_sigaction','rt_sigprocmask','ioctl'],'action':'SCMP_"
              "ACT_ALLOW'}]}");
        assert_int_equal(zp_profile_load_buffer_with(BUF_PATH, j, strlen(j), &o, &lin, &err), 0);
        zp_profile_free(a);
        assert_int_equal(zp_profile_load_buffer(BUF_PATH, j, strlen(j), &a, &err), 0);
        for (int nr = 0; nr < 512; nr++)
                assert_int_equal(decide_arch(a, AUDIT_ARCH_X86_64, nr, 0, 0),
                                 decide_arch(lin, AUDIT_ARCH_X86_64, nr, 0, 0));
        assert_true(lin->longest_path > a->longest_path);
        assert_string_not_equal(a->hash, lin->hash);
        free(j);

        zp_profile_free(a);
        zp_profile_free(b);
        zp_profile_free(c);
        zp_profile_free(lin);
}

static void test_worker_setup(void **state) {
        struct zp_profile *p;

        p = getpid_rule("'action':'SCMP_ACT_KILL'");
        assert_true(p->worker_setup_ok);
        zp_profile_free(p);

        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['setsid'],'action':'SCMP_ACT_ERRNO'}]}");
        assert_false(p->worker_setup_ok);
        assert_string_equal(p->worker_setup_blocked, "setsid");
        zp_profile_free(p);

        /* clone with CLONE_PARENT|CLONE_PIDFD must pass the namespace mask */
        p = load_ok("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['clone'],'action':'SCMP_ACT_ERRNO',"
                    "'args':[{'index':0,'op':'SCMP_CMP_MASKED_EQ','value':36864,'valueTwo':36864}]}]}");
        assert_false(p->worker_setup_ok);
        assert_string_equal(p->worker_setup_blocked, "clone");
        zp_profile_free(p);

        /* LOG lets the call through */
        p = load_ok("{'defaultAction':'SCMP_ACT_LOG'}");
        assert_true(p->worker_setup_ok);
        zp_profile_free(p);
}

static void test_bundled(void **state) {
        static const char *const names[] = { "default", "nonet", "strict" };

        for (size_t i = 0; i < 3; i++) {
                char *path, *err = NULL;
                struct zp_profile *p = NULL;

                assert_true(asprintf(&path, "%s/%s.json", profiles_dir, names[i]) > 0);
                if (zp_profile_load_file(path, &p, &err) < 0)
                        fail_msg("%s", err);
                assert_string_equal(p->name, names[i]);
                assert_true(p->no_new_privs);
                assert_true(p->access_all);
                /* all three let zygote's worker finish its setup: every tier is open to them */
                if (!p->worker_setup_ok)
                        fail_msg("%s blocks the worker's %s", names[i], p->worker_setup_blocked);
                if (i == 2)
                        assert_true(p->caps_keep == 0);
                else
                        assert_int_equal(__builtin_popcountll(p->caps_keep), 14);
                zp_profile_free(p);
                free(path);
        }
}

static const bool with_openat2 = false, without_openat2 = true;

static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seccomp_reference),
        tu_unit_test_case("test_seccomp_path_beneath", test_seccomp_path_beneath, &with_openat2),
        tu_unit_test_case("test_seccomp_path_beneath_without_openat2", test_seccomp_path_beneath, &without_openat2),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_allows),
        cmocka_unit_test(test_cap_names),
        cmocka_unit_test(test_set_load),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_program_fields),
        cmocka_unit_test(test_worker_setup),
        cmocka_unit_test(test_bundled),
};

PROFILE_TESTS_MAIN(tests)
