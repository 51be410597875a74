/* SPDX-License-Identifier: MIT */
/* record/: the set of calls a run made, the OCI/Docker profile written from it, read back and
 * merged, and that zygote's own loader accepts it and decides as recorded. */

#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "bpf.h"
#include "profile.h"
#include "record-bpf-read.h"
#include "record-json.h"
#include "record-set.h"
#include "testutil.h"

#define X86_64 AUDIT_ARCH_X86_64

static int nr_of(const char *name) {
        int nr = seccomp_syscall_resolve_name_arch(X86_64, name);
        assert_true(nr >= 0);
        return nr;
}

static int add(struct rec_set *s, const char *name, uint64_t a0) {
        uint64_t args[6] = { a0 };
        return rec_set_add(s, X86_64, (uint32_t) nr_of(name), args);
}

/* A run's set: read, openat, execve, clone without namespaces and with CLONE_NEWUSER, sockets of
 * two families, personality twice. */
static void sample(struct rec_set *s) {
        rec_set_init(s);
        assert_int_equal(add(s, "read", 0), 1);
        assert_int_equal(add(s, "read", 5), 0); /* nothing new */
        assert_int_equal(add(s, "openat", 0), 1);
        assert_int_equal(add(s, "execve", 0), 1);
        assert_int_equal(add(s, "clone", CLONE_VM | CLONE_FS | SIGCHLD), 1);
        assert_int_equal(add(s, "clone", CLONE_VM | CLONE_FS | SIGCHLD), 0);
        assert_int_equal(add(s, "clone", CLONE_NEWUSER), 1); /* a new fact on a known call */
        assert_int_equal(add(s, "socket", AF_UNIX), 1);
        assert_int_equal(add(s, "socket", AF_INET), 1);
        assert_int_equal(add(s, "socket", AF_UNIX), 0);
        assert_int_equal(add(s, "personality", 0xffffffff), 1);
        assert_int_equal(add(s, "personality", PER_LINUX), 1);
}

static void test_set(void **state) {
        struct rec_set s;

        sample(&s);
        assert_int_equal(s.n_calls, 6);
        assert_int_equal(s.n_arches, 1);
        assert_true(rec_set_has(&s, X86_64, (uint32_t) nr_of("openat")));
        assert_false(rec_set_has(&s, X86_64, (uint32_t) nr_of("mkdir")));
        assert_false(rec_set_has(&s, AUDIT_ARCH_I386, (uint32_t) nr_of("openat")));
        assert_int_equal(s.clone_ns, CLONE_NEWUSER);
        assert_false(s.clone_any || s.socket_any || s.personality_any);
        assert_int_equal(s.socket_families, (1u << AF_UNIX) | (1u << AF_INET));
        assert_int_equal(s.n_personas, 2);
        /* past REC_MAX_PERSONAS values the call is allowed outright */
        for (uint32_t v = 0; v < REC_MAX_PERSONAS; v++)
                add(&s, "personality", 0x100 + v);
        assert_true(s.personality_any);
        /* a family beyond what a bit set holds: outright too */
        add(&s, "socket", 200);
        assert_true(s.socket_any);
        assert_int_equal(rec_set_kind(&s, X86_64, (uint32_t) nr_of("clone3")), '3');
        assert_int_equal(rec_set_kind(&s, X86_64, (uint32_t) nr_of("clone")), 'c');
        assert_int_equal(rec_set_kind(&s, X86_64, (uint32_t) nr_of("openat")), 0);
        /* an architecture not in the set: aarch64 numbers socket 198 */
        assert_int_equal(rec_set_kind(&s, AUDIT_ARCH_AARCH64, 198), 's');
        assert_int_equal(s.n_arches, 1);
        char *n = rec_syscall_name(X86_64, (uint32_t) nr_of("openat"));
        assert_string_equal(n, "openat");
        free(n);
        assert_null(rec_syscall_name(X86_64, 99999));
        rec_set_done(&s);
}

/* A program that calls numbers at random cannot grow its recorder past REC_MAX_CALLS. */
static void test_set_is_bounded(void **state) {
        struct rec_set s;
        uint64_t args[6] = {};

        rec_set_init(&s);
        for (uint32_t nr = 0; nr < REC_MAX_CALLS; nr++)
                assert_int_equal(rec_set_add(&s, X86_64, 100000 + nr, args), 1);
        assert_int_equal(rec_set_add(&s, X86_64, 1, args), -E2BIG);
        assert_int_equal(rec_set_add(&s, X86_64, 100000, args), 0); /* a known one still is */
        assert_int_equal(s.n_calls, REC_MAX_CALLS);
        rec_set_done(&s);
}

static json_object *rule_of(json_object *o, const char *name, size_t nth) {
        json_object *sc = json_object_object_get(o, "syscalls");
        for (size_t i = 0; i < json_object_array_length(sc); i++) {
                json_object *r = json_object_array_get_idx(sc, i), *names = json_object_object_get(r, "names");
                for (size_t k = 0; k < json_object_array_length(names); k++)
                        if (strcmp(json_object_get_string(json_object_array_get_idx(names, k)), name) == 0 &&
                            nth-- == 0)
                                return r;
        }
        return NULL;
}

static void test_build(void **state) {
        struct rec_set s;
        json_object *o, *r, *arg;
        unsigned unnamed = 9;

        sample(&s);
        assert_int_equal(rec_json_build(&s, &o, &unnamed), 0);
        assert_int_equal(unnamed, 0);
        assert_string_equal(json_object_get_string(json_object_object_get(o, "defaultAction")), "SCMP_ACT_ERRNO");
        assert_string_equal(
                json_object_get_string(json_object_array_get_idx(json_object_object_get(o, "architectures"), 0)),
                "SCMP_ARCH_X86_64");
        r = rule_of(o, "read", 0);
        assert_non_null(r);
        assert_string_equal(json_object_get_string(json_object_object_get(r, "action")), "SCMP_ACT_ALLOW");
        assert_null(json_object_object_get(r, "args"));
        assert_null(rule_of(o, "mkdir", 0));
        /* clone: every namespace flag but CLONE_NEWUSER still forbidden */
        r = rule_of(o, "clone", 0);
        arg = json_object_array_get_idx(json_object_object_get(r, "args"), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(arg, "op")), "SCMP_CMP_MASKED_EQ");
        assert_int_equal(json_object_get_uint64(json_object_object_get(arg, "value")),
                         REC_CLONE_NS_MASK & ~(uint64_t) CLONE_NEWUSER);
        assert_int_equal(json_object_get_uint64(json_object_object_get(arg, "valueTwo")), 0);
        /* one rule per family and persona */
        assert_non_null(rule_of(o, "socket", 1));
        assert_null(rule_of(o, "socket", 2));
        assert_non_null(rule_of(o, "personality", 1));
        r = rule_of(o, "clone3", 0);
        assert_string_equal(json_object_get_string(json_object_object_get(r, "action")), "SCMP_ACT_ERRNO");
        assert_int_equal(json_object_get_int(json_object_object_get(r, "errnoRet")), ENOSYS);
        json_object_put(o);
        rec_set_done(&s);
}

static void assert_same(const struct rec_set *a, const struct rec_set *b) {
        assert_int_equal(a->n_calls, b->n_calls);
        assert_memory_equal(a->calls, b->calls, a->n_calls * sizeof(*a->calls));
        assert_int_equal(a->clone_ns, b->clone_ns);
        assert_int_equal(a->clone_any, b->clone_any);
        assert_int_equal(a->socket_families, b->socket_families);
        assert_int_equal(a->socket_any, b->socket_any);
        assert_int_equal(a->n_personas, b->n_personas);
        assert_int_equal(a->personality_any, b->personality_any);
}

static void test_round_trip_and_merge(void **state) {
        struct rec_set s, back, other;
        json_object *o;
        char *err = NULL;

        sample(&s);
        assert_int_equal(rec_json_build(&s, &o, NULL), 0);
        rec_set_init(&back);
        assert_int_equal(rec_json_parse(o, &back, &err), 0);
        assert_null(err);
        assert_same(&s, &back);
        json_object_put(o);

        /* a second run: a new call, a new family, clone without namespaces only */
        rec_set_init(&other);
        add(&other, "mkdir", 0);
        add(&other, "socket", AF_INET6);
        add(&other, "clone", SIGCHLD);
        assert_int_equal(rec_set_merge(&back, &other), 0);
        assert_true(rec_set_has(&back, X86_64, (uint32_t) nr_of("mkdir")));
        assert_true(rec_set_has(&back, X86_64, (uint32_t) nr_of("read")));
        assert_int_equal(back.socket_families, (1u << AF_UNIX) | (1u << AF_INET) | (1u << AF_INET6));
        assert_int_equal(back.clone_ns, CLONE_NEWUSER);
        rec_set_done(&other);
        rec_set_done(&back);
        rec_set_done(&s);
}

static void test_parse_refuses(void **state) {
        static const char *const bad[] = {
                "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}",
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],"
                "\"action\":\"SCMP_ACT_LOG\"}]}",
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],"
                "\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}",
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"write\"],"
                "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_NOPE\"]}",
                /* found by fuzz-record: json-c asserts on the length of what is not an array */
                "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"socket\"],"
                "\"action\":\"SCMP_ACT_ALLOW\",\"args\":4967295}]}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_object *o = json_tokener_parse(bad[i]);
                struct rec_set s;
                char *err = NULL;

                assert_non_null(o);
                rec_set_init(&s);
                assert_true(rec_json_parse(o, &s, &err) < 0);
                assert_non_null(err);
                printf("# refused: %s\n", err);
                free(err);
                json_object_put(o);
                rec_set_done(&s);
        }
        /* a plain allow-list: socket allowed outright stays so */
        json_object *o = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":"
                                            "[\"read\",\"socket\"],\"action\":\"SCMP_ACT_ALLOW\"}]}");
        struct rec_set s;
        rec_set_init(&s);
        assert_int_equal(rec_json_parse(o, &s, NULL), 0);
        assert_true(s.socket_any);
        assert_int_equal(s.n_calls, 2);
        json_object_put(o);
        rec_set_done(&s);
}

static uint32_t decide(const struct zp_profile *p, const char *name, uint64_t a0) {
        struct seccomp_data d = { .nr = nr_of(name), .arch = X86_64, .args = { a0 } };
        uint32_t action;

        assert_int_equal(zp_bpf_run(p->bpf, p->bpf_len, &d, &action, NULL), 0);
        return action;
}

/* The written file is a profile zygoted loads, and its program decides as the run was recorded. */
static void test_written_file_loads(void **state) {
        char dir[] = "/tmp/test-record-XXXXXX", path[64];
        struct rec_set s, back;
        struct zp_profile *p = NULL;
        char *err = NULL;
        bool found = true;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/run.json", dir);
        rec_set_init(&back);
        assert_int_equal(rec_json_read_file(path, &back, &found, NULL), 0);
        assert_false(found);

        sample(&s);
        assert_int_equal(rec_json_write_file(path, &s, NULL), 0);
        assert_int_equal(zp_profile_load_file(path, &p, &err), 0);
        assert_null(err);
        assert_int_equal(decide(p, "read", 0), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "mkdir", 0), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "socket", AF_INET), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "socket", AF_PACKET), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "clone", CLONE_VM | SIGCHLD), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "clone", CLONE_NEWUSER | SIGCHLD), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "clone", CLONE_NEWNET | SIGCHLD), SECCOMP_RET_ERRNO | EPERM);
        assert_int_equal(decide(p, "clone3", 0), SECCOMP_RET_ERRNO | ENOSYS);
        assert_int_equal(decide(p, "personality", 0xffffffff), SECCOMP_RET_ALLOW);
        assert_int_equal(decide(p, "personality", PER_LINUX32), SECCOMP_RET_ERRNO | EPERM);
        zp_profile_free(p);

        /* read back from the file: the same set */
        assert_int_equal(rec_json_read_file(path, &back, &found, NULL), 0);
        assert_true(found);
        assert_same(&s, &back);
        rec_set_done(&back);
        rec_set_done(&s);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

/* zygoted's eBPF record (the exit reply's "record") read into a set: clone3 brings clone with its
 * flags, socket's families and personality's personas are rules, a value the tracer could not
 * keep makes the call outright, and a malformed record is refused. */
static void test_bpf_record(void **state) {
        char text[512];
        struct rec_set s;
        const char *incomplete = NULL;
        json_object *o;

        snprintf(text, sizeof(text),
                 "{\"arches\":[{\"arch\":%u,\"calls\":[%d,%d,%d,%d],\"cloneFlags\":%d,"
                 "\"socketFamilies\":[1,10],\"socketOther\":false,\"personas\":[8]}]}",
                 X86_64, nr_of("openat"), nr_of("clone3"), nr_of("socket"), nr_of("personality"),
                 CLONE_NEWNET | CLONE_VM);
        o = json_tokener_parse(text);
        assert_non_null(o);
        rec_set_init(&s);
        assert_int_equal(rec_bpf_parse(o, &s, &incomplete), 0);
        assert_null(incomplete);
        assert_true(rec_set_has(&s, X86_64, (uint32_t) nr_of("clone")));
        assert_true(rec_set_has(&s, X86_64, (uint32_t) nr_of("clone3")));
        assert_false(s.clone_any);
        assert_int_equal(s.clone_ns, CLONE_NEWNET);
        assert_int_equal(s.socket_families, (1u << 1) | (1u << 10));
        assert_false(s.socket_any);
        assert_int_equal(s.n_personas, 1);
        assert_int_equal(s.personas[0], 8);
        rec_set_done(&s);
        json_object_put(o);

        /* a family of 64 or above: socket allowed outright; incomplete passed on */
        snprintf(text, sizeof(text),
                 "{\"arches\":[{\"arch\":%u,\"calls\":[%d],\"cloneFlags\":0,\"socketFamilies\":[],"
                 "\"socketOther\":true,\"personas\":[]}],\"incomplete\":\"x\"}",
                 X86_64, nr_of("socket"));
        o = json_tokener_parse(text);
        rec_set_init(&s);
        assert_int_equal(rec_bpf_parse(o, &s, &incomplete), 0);
        assert_true(s.socket_any);
        assert_string_equal(incomplete, "x");
        rec_set_done(&s);
        json_object_put(o);

        static const char *const bad[] = {
                "{}",
                "{\"arches\":{}}",
                "{\"arches\":[{\"arch\":0,\"calls\":[],\"cloneFlags\":0,\"socketFamilies\":[],\"personas\":[]}]}",
                "{\"arches\":[{\"arch\":3221225534,\"calls\":[-1],\"cloneFlags\":0,\"socketFamilies\":[],"
                "\"personas\":[]}]}",
                "{\"arches\":[{\"arch\":3221225534,\"calls\":[\"x\"],\"cloneFlags\":0,\"socketFamilies\":[],"
                "\"personas\":[]}]}",
                "{\"arches\":[],\"incomplete\":1}",
                "{\"arches\":[{\"arch\":7,\"calls\":[],\"cloneFlags\":0,\"socketFamilies\":[],\"personas\":[]}]}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                o = json_tokener_parse(bad[i]);
                assert_non_null(o);
                rec_set_init(&s);
                assert_int_equal(rec_bpf_parse(o, &s, &incomplete), -EINVAL);
                rec_set_done(&s);
                json_object_put(o);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_set),           cmocka_unit_test(test_set_is_bounded),
                cmocka_unit_test(test_build),         cmocka_unit_test(test_round_trip_and_merge),
                cmocka_unit_test(test_parse_refuses), cmocka_unit_test(test_written_file_loads),
                cmocka_unit_test(test_bpf_record),
        };
        if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
                printf("# skipped: the cases are x86_64's numbers\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
