/* SPDX-License-Identifier: MIT */
/*
 * The task worker's test helpers (child-run.c), for test-child, test-child-fds and
 * test-child-caps: each links this file and engine/.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "child.h"
#include "probe.h"

#define BLOCKED_ERRNO 95 /* EOPNOTSUPP: what the test filter answers to personality(2) */

/* Allows everything but personality(2), which fails with BLOCKED_ERRNO. */
extern const struct sock_fprog block_personality_prog;

extern char *const test_env[];    /* PATH and LC_ALL */
extern char *const argv_status[]; /* cat /proc/self/status */
extern char *const argv_true[];
extern char path_buf[PATH_MAX];
extern unsigned cap_last;
extern struct ze_features features;

struct result {
        int code;   /* exit code, or 128 + signal */
        int n_recs; /* status records received */
        struct ze_status recs[4];
        char out[65536];
        size_t out_len;
};

typedef void (*pre_fn)(void);

void plan_init(struct ze_plan *p, char *const *argv);
/* The worker switches to uid and gid (with no supplementary groups unless the test adds some). */
void plan_ids(struct ze_plan *p, uid_t uid, gid_t gid);
/* The worker keeps only the capabilities in keep (its caps step). */
void plan_caps(struct ze_plan *p, uint64_t keep);
void read_records(int fd, struct result *res);
/* Runs plan in a child. With capture, a pipe becomes the child's fd 1 (appended to the plan's fd
 * map) and its output is collected. pre runs in the child before ze_child_run. */
void run(struct ze_plan *plan, bool capture, pre_fn pre, struct result *res);
void assert_failed(const struct result *res, enum ze_step step, int err, int code);
void assert_exec_ok(const struct result *res);
/* Runs plan with its output captured and asserts that it exec'd and exited 0. */
void run_ok(struct ze_plan *plan, struct result *res);
/* A plan that loads prog, after no_new_privs (the load tier's worker). */
void plan_init_load(struct ze_plan *p, char *const *argv, const struct sock_fprog *prog);
/* Runs plan and expects it to fail at step with err, the worker exiting with code. */
void run_fails(struct ze_plan *plan, bool capture, struct result *res, enum ze_step step, int err, int code);
/* The value of "Key:" in /proc/self/status output, or NULL. */
const char *status_field(const struct result *res, const char *key, char *buf, size_t size);
uint64_t status_hex(const struct result *res, const char *key);
void assert_status(const struct result *res, const char *key, const char *want);
/* The path of a helper program: $env, else name beside the test's executable. */
const char *helper(const char *env, const char *name, char *buf, size_t size);
uint64_t all_caps(void);
/* The test's own bounding set (a container may have started without some capabilities). */
uint64_t bounding_set(void);
/* Probes the kernel's features (cap_last, features): the groups' setup. */
int setup_all(void **state);

/* A group of tests, run by `test-child* NAME`. */
struct child_test_group {
        const char *name;  /* on the command line: plain, root, capbset-mask */
        const char *title; /* cmocka's group name */
        const struct CMUnitTest *tests;
        size_t n_tests;
        bool needs_root;         /* skipped (exit 77) when not root */
        bool needs_capbset_mask; /* skipped when the kernel lacks PR_CAPBSET_DROP_MASK */
};

/* main() of each test-child* executable: runs the group argv[1] names ("plain" by default). */
int child_test_main(int argc, char **argv, const struct child_test_group *groups, size_t n_groups);

/* An entry of the groups table: the tests are the array tests_; what the group needs follows
 * as designated initializers (.needs_root = true). */
#define CHILD_TEST_GROUP(name_, title_, tests_, ...) \
        { .name = (name_), .title = (title_), .tests = (tests_), .n_tests = ELEMENTSOF(tests_), __VA_ARGS__ }

/* Defines main(): child_test_main() over the groups given as CHILD_TEST_GROUP entries. */
#define CHILD_TESTS_MAIN(...) \
        int main(int argc, char **argv) { \
                static const struct child_test_group groups[] = { __VA_ARGS__ }; \
                return child_test_main(argc, argv, groups, ELEMENTSOF(groups)); \
        }
