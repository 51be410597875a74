/* SPDX-License-Identifier: MIT */
/* The profile tests' helpers: JSON with single quotes, loading, decisions, scratch directories. */
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

const char *profiles_dir;

/* JSON written with single quotes, for readability: 'x' becomes "x". */
char *J(const char *s) {
        char *c = strdup(s);
        assert_non_null(c);
        for (char *p = c; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return c;
}

struct zp_profile *load_ok(const char *json) {
        struct zp_profile *p = NULL;
        char *err = NULL, *j = J(json);
        int r = zp_profile_load_buffer(BUF_PATH, j, strlen(j), &p, &err);

        if (r < 0)
                fail_msg("unexpected failure %d: %s\n  for %s", r, err, j);
        assert_non_null(p);
        assert_null(err);
        free(j);
        return p;
}

/* Fails with exactly this errno and this message (after "t/x.json: "). */
void load_fail(const char *json, int want_r, const char *want_msg) {
        struct zp_profile *p = (struct zp_profile *) 0x1;
        char *err = NULL, *j = J(json), *want = NULL;
        int r = zp_profile_load_buffer(BUF_PATH, j, strlen(j), &p, &err);

        if (r != want_r)
                fail_msg("got %d (%s), want %d\n  for %s", r, err ? err : "(no message)", want_r, j);
        assert_ptr_equal(p, (struct zp_profile *) 0x1); /* untouched on failure */
        assert_non_null(err);
        assert_true(asprintf(&want, "%s: %s", BUF_PATH, want_msg) > 0);
        assert_string_equal(err, want);
        free(want);
        free(err);
        free(j);
}

uint32_t decide_arch(const struct zp_profile *p, uint32_t arch, int nr, uint64_t a0, uint64_t a1) {
        struct seccomp_data d = { .nr = nr, .arch = arch, .args = { a0, a1 } };
        uint32_t action;

        assert_int_equal(zp_bpf_run(p->bpf, p->bpf_len, &d, &action, NULL), 0);
        return action;
}

uint32_t decide(const struct zp_profile *p, const char *name, uint64_t a0, uint64_t a1) {
        int nr = seccomp_syscall_resolve_name(name);
        assert_true(nr >= 0);
        return decide_arch(p, AUDIT_ARCH_X86_64, nr, a0, a1);
}

/* One rule on getpid with the given action fields, under defaultAction ALLOW. */
struct zp_profile *getpid_rule(const char *fields) {
        char *json;
        struct zp_profile *p;

        assert_true(asprintf(&json, "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getpid'],%s}]}", fields) >
                    0);
        p = load_ok(json);
        free(json);
        return p;
}

char *tmpdir_new(void) {
        char *d = strdup("/tmp/test-profile-XXXXXX");
        assert_non_null(d);
        assert_non_null(mkdtemp(d));
        return d;
}

void write_file(const char *dir, const char *name, const char *json) {
        char *path, *j = J(json);
        FILE *f;

        assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(j, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        free(path);
        free(j);
}

void rm_rf(const char *dir) {
        char *cmd;
        assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
        assert_int_equal(system(cmd), 0);
        free(cmd);
}

int profile_tests_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n_tests) {
        profiles_dir = tu_profiles_dir_arg(argc, argv, "these tests encode x86_64 syscall numbers");
        return _cmocka_run_group_tests("profile", tests, n_tests, NULL, NULL);
}
