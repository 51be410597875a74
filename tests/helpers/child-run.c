/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the task worker (test-child*.c) share: a plan for a test, running it in a
 * real child (raw clone with CLONE_PIDFD), and reading its effects from the outside (status
 * records, exit code, /proc/self/status as the exec'd program printed it).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "child-run.h"
#include "probe.h"
#include "util.h"

/* Allows everything but personality(2), which fails with BLOCKED_ERRNO. */
static struct sock_filter block_personality[] = { TU_BPF_FAIL_ONLY(__NR_personality, BLOCKED_ERRNO) };
const struct sock_fprog block_personality_prog = {
        .len = ELEMENTSOF(block_personality),
        .filter = block_personality,
};

char *const test_env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
char *const argv_status[] = { "/bin/cat", "/proc/self/status", NULL };
char *const argv_true[] = { "/bin/true", NULL };
char path_buf[PATH_MAX];
unsigned cap_last;
struct ze_features features;

void plan_init(struct ze_plan *p, char *const *argv) {
        ze_plan_init(p, argv, test_env, path_buf, sizeof(path_buf));
        p->cap_last = cap_last;
}

/* The worker switches to uid and gid (with no supplementary groups unless the test adds some). */
void plan_ids(struct ze_plan *p, uid_t uid, gid_t gid) {
        p->set_ids = true;
        p->uid = uid;
        p->gid = gid;
}

void plan_caps(struct ze_plan *p, uint64_t keep) {
        p->set_caps = true;
        p->caps_keep = keep;
}

void read_records(int fd, struct result *res) {
        struct ze_status s;

        while (tu_read_record(fd, &s, sizeof(s))) {
                assert_true(res->n_recs < (int) ELEMENTSOF(res->recs));
                res->recs[res->n_recs++] = s;
        }
}

/* Runs plan in a child. With capture, a pipe becomes the child's fd 1 (appended to the plan's fd
 * map) and its output is collected. pre runs in the child before ze_child_run. */
void run(struct ze_plan *plan, bool capture, pre_fn pre, struct result *res) {
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        struct ze_fdmap map[ZE_MAX_FDS];
        _cleanup_close_ int pidfd = -EBADF;
        pid_t pid;

        memset(res, 0, sizeof(*res));
        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        plan->status_fd = status[1];
        if (capture) {
                assert_return_code(pipe2(out, O_CLOEXEC), errno);
                assert_true(plan->n_fds < ZE_MAX_FDS);
                if (plan->n_fds > 0)
                        memcpy(map, plan->fds, plan->n_fds * sizeof(map[0]));
                map[plan->n_fds] = (struct ze_fdmap){ .src = out[1], .target = 1 };
                plan->fds = map;
                plan->n_fds++;
        }

        pid = clone_with_pidfd(0, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                if (pre)
                        pre();
                ze_child_run(plan);
        }
        if (capture) {
                plan->n_fds--;
                out[1] = safe_close(out[1]);
                res->out_len = tu_read_all(out[0], res->out, sizeof(res->out));
        }
        status[1] = safe_close(status[1]);
        read_records(status[0], res);
        res->code = tu_wait_code(pidfd);
}

void assert_failed(const struct result *res, enum ze_step step, int err, int code) {
        assert_int_equal(res->n_recs, 1);
        assert_string_equal(ze_step_to_string(res->recs[0].step), ze_step_to_string(step));
        assert_int_equal(res->recs[0].err, err);
        assert_int_equal(res->code, code);
}

void assert_exec_ok(const struct result *res) {
        if (res->n_recs > 0)
                fail_msg("unexpected record: %s %s", ze_step_to_string(res->recs[0].step), strerror(res->recs[0].err));
        assert_int_equal(res->code, 0);
}

/* Runs plan with its output captured and asserts that it exec'd and exited 0. */
void run_ok(struct ze_plan *plan, struct result *res) {
        run(plan, true, NULL, res);
        assert_exec_ok(res);
}

/* A plan that loads prog, after no_new_privs (the load tier's worker). */
void plan_init_load(struct ze_plan *p, char *const *argv, const struct sock_fprog *prog) {
        plan_init(p, argv);
        p->no_new_privs = true;
        p->filter_mode = ZE_FILTER_LOAD;
        p->prog = prog;
}

/* Runs plan and expects it to fail at step with err, the worker exiting with code. */
void run_fails(struct ze_plan *plan, bool capture, struct result *res, enum ze_step step, int err, int code) {
        run(plan, capture, NULL, res);
        assert_failed(res, step, err, code);
}

/* The value of "Key:" in /proc/self/status output, or NULL. */
const char *status_field(const struct result *res, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);

        for (const char *l = res->out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
                        const char *v = l + klen + 1, *e;

                        v += strspn(v, " \t");
                        e = strchrnul(v, '\n');
                        while (e > v && e[-1] == ' ')
                                e--;
                        assert_true((size_t) (e - v) < size);
                        memcpy(buf, v, (size_t) (e - v));
                        buf[e - v] = 0;
                        return buf;
                }
        return NULL;
}

uint64_t status_hex(const struct result *res, const char *key) {
        char buf[64];

        if (!status_field(res, key, buf, sizeof(buf)))
                fail_msg("no %s in output", key);
        return strtoull(buf, NULL, 16);
}

void assert_status(const struct result *res, const char *key, const char *want) {
        char buf[256];

        if (!status_field(res, key, buf, sizeof(buf)))
                fail_msg("no %s in output:\n%s", key, res->out);
        assert_string_equal(buf, want);
}

const char *helper(const char *env, const char *name, char *buf, size_t size) {
        const char *e = getenv(env);
        char self[PATH_MAX];
        ssize_t n;
        char *slash;

        if (e && *e)
                return e;
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        assert_true(n > 0);
        self[n] = 0;
        slash = strrchr(self, '/');
        assert_non_null(slash);
        *slash = 0;
        assert_true(strlen(self) + 1 + strlen(name) < size);
        strcpy(buf, self);
        strcat(buf, "/");
        strcat(buf, name);
        return buf;
}

uint64_t all_caps(void) {
        return cap_last >= 63 ? UINT64_MAX : (UINT64_C(1) << (cap_last + 1)) - 1;
}

/* The test's own bounding set (a container may have started without some capabilities). */
uint64_t bounding_set(void) {
        uint64_t set = 0;

        for (unsigned c = 0; c <= cap_last; c++)
                if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
                        set |= UINT64_C(1) << c;
        return set;
}

int setup_all(void **state) {
        int r = ze_probe_features(&features);

        if (r < 0) {
                fprintf(stderr, "ze_probe_features: %s\n", strerror(-r));
                return -1;
        }
        cap_last = features.cap_last;
        return 0;
}

int child_test_main(int argc, char **argv, const struct child_test_group *groups, size_t n_groups) {
        const char *name = argc > 1 ? argv[1] : "plain";

        for (size_t i = 0; i < n_groups; i++) {
                const struct child_test_group *g = &groups[i];

                if (strcmp(name, g->name) != 0)
                        continue;
                if (g->needs_root && geteuid() != 0) {
                        fprintf(stderr, "skip: the %s group needs root (ids, capabilities, bounding set)\n", g->name);
                        return 77;
                }
                if (g->needs_capbset_mask) {
                        if (setup_all(NULL) < 0)
                                return 1;
                        if (!features.capbset_drop_mask) {
                                fprintf(stderr, "skip: kernel lacks PR_CAPBSET_DROP_MASK: %s\n",
                                        features.capbset_drop_mask_reason);
                                return 77;
                        }
                }
                return _cmocka_run_group_tests(g->title, g->tests, g->n_tests, setup_all, NULL);
        }
        fprintf(stderr, "usage: %s [", argv[0]);
        for (size_t i = 0; i < n_groups; i++)
                fprintf(stderr, "%s%s", i ? "|" : "", groups[i].name);
        fprintf(stderr, "]\n");
        return 2;
}
