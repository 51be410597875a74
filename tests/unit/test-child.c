/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of engine/child.c: every worker runs in a real child (raw clone with CLONE_PIDFD)
 * and the effects are checked from the outside: the status records, the exit code, and what an
 * exec'd /bin/cat /proc/self/status or /bin/ls -l /proc/self/fd prints to a pipe.
 *
 *   test-child            tests that need no privilege
 *   test-child root       tests that switch ids and capabilities (exit 77 when not root)
 *   test-child capbset-mask  PR_CAPBSET_DROP_MASK path (exit 77 when the kernel lacks it)
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
#include <seccomp.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "probe.h"
#include "util.h"

#define BLOCKED_ERRNO 95 /* EOPNOTSUPP: what the test filter answers to personality(2) */

/* Allows everything but personality(2), which fails with BLOCKED_ERRNO. */
static struct sock_filter block_personality[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | BLOCKED_ERRNO),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static const struct sock_fprog block_personality_prog = {
        .len = ELEMENTSOF(block_personality),
        .filter = block_personality,
};

static char *const test_env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
static char *const argv_status[] = { "/bin/cat", "/proc/self/status", NULL };
static char *const argv_true[] = { "/bin/true", NULL };
static char path_buf[PATH_MAX];
static unsigned cap_last;
static struct ze_features features;

struct result {
        int code;   /* exit code, or 128 + signal */
        int n_recs; /* status records received */
        struct ze_status recs[4];
        char out[65536];
        size_t out_len;
};

typedef void (*pre_fn)(void);

static void plan_init(struct ze_plan *p, char *const *argv) {
        ze_plan_init(p, argv, test_env, path_buf, sizeof(path_buf));
        p->cap_last = cap_last;
}

/* The worker switches to uid and gid (with no supplementary groups unless the test adds some). */
static void plan_ids(struct ze_plan *p, uid_t uid, gid_t gid) {
        p->set_ids = true;
        p->uid = uid;
        p->gid = gid;
}

static void read_records(int fd, struct result *res) {
        struct ze_status s;

        while (tu_read_record(fd, &s, sizeof(s))) {
                assert_true(res->n_recs < (int) ELEMENTSOF(res->recs));
                res->recs[res->n_recs++] = s;
        }
}

/* Runs plan in a child. With capture, a pipe becomes the child's fd 1 (appended to the plan's fd
 * map) and its output is collected. pre runs in the child before ze_child_run. */
static void run(struct ze_plan *plan, bool capture, pre_fn pre, struct result *res) {
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

static void assert_failed(const struct result *res, enum ze_step step, int err, int code) {
        assert_int_equal(res->n_recs, 1);
        assert_string_equal(ze_step_to_string(res->recs[0].step), ze_step_to_string(step));
        assert_int_equal(res->recs[0].err, err);
        assert_int_equal(res->code, code);
}

static void assert_exec_ok(const struct result *res) {
        if (res->n_recs > 0)
                fail_msg("unexpected record: %s %s", ze_step_to_string(res->recs[0].step),
                         strerror(res->recs[0].err));
        assert_int_equal(res->code, 0);
}

/* Runs plan with its output captured and asserts that it exec'd and exited 0. */
static void run_ok(struct ze_plan *plan, struct result *res) {
        run(plan, true, NULL, res);
        assert_exec_ok(res);
}

/* A plan that loads prog, after no_new_privs (the load tier's worker). */
static void plan_init_load(struct ze_plan *p, char *const *argv, const struct sock_fprog *prog) {
        plan_init(p, argv);
        p->no_new_privs = true;
        p->filter_mode = ZE_FILTER_LOAD;
        p->prog = prog;
}

/* Runs plan and expects it to fail at step with err, the worker exiting with code. */
static void run_fails(struct ze_plan *plan, bool capture, struct result *res, enum ze_step step, int err, int code) {
        run(plan, capture, NULL, res);
        assert_failed(res, step, err, code);
}

/* The value of "Key:" in /proc/self/status output, or NULL. */
static const char *status_field(const struct result *res, const char *key, char *buf, size_t size) {
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

static uint64_t status_hex(const struct result *res, const char *key) {
        char buf[64];

        if (!status_field(res, key, buf, sizeof(buf)))
                fail_msg("no %s in output", key);
        return strtoull(buf, NULL, 16);
}

static void assert_status(const struct result *res, const char *key, const char *want) {
        char buf[256];

        if (!status_field(res, key, buf, sizeof(buf)))
                fail_msg("no %s in output:\n%s", key, res->out);
        assert_string_equal(buf, want);
}

static const char *helper(const char *env, const char *name, char *buf, size_t size) {
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

static uint64_t all_caps(void) {
        return cap_last >= 63 ? UINT64_MAX : (UINT64_C(1) << (cap_last + 1)) - 1;
}

/* The test's own bounding set (a container may have started without some capabilities). */
static uint64_t bounding_set(void) {
        uint64_t set = 0;

        for (unsigned c = 0; c <= cap_last; c++)
                if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
                        set |= UINT64_C(1) << c;
        return set;
}

/* ---- tests that need no privilege -------------------------------------------------------- */

static void test_step_names(void **state) {
        static const char *const want[] = { "none", "fds", "setsid", "ctty", "capbset", "groups",
                                            "gid", "uid", "caps", "chdir", "nnp", "filter",
                                            "held", "hold", "exec", "rlimit", "cgroup", "setns",
                                            "chroot", "mntns", "proc", "oom_score_adj", "sched",
                                            "nice", "ioprio", "affinity",
                                            /* the container init's own */
                                            "sync", "non-dumpable", "propagation", "rootfs", "mount",
                                            "device", "pivot_root", "maskedPaths", "readonlyPaths",
                                            "readonly root", "hostname", "console" };

        assert_int_equal(ELEMENTSOF(want), _ZE_STEP_MAX);
        for (int i = 0; i < _ZE_STEP_MAX; i++)
                assert_string_equal(ze_step_to_string((enum ze_step) i), want[i]);
        assert_string_equal(ze_step_to_string(_ZE_STEP_MAX), "unknown");
        assert_string_equal(ze_step_to_string((enum ze_step) -1), "unknown");
}

static int memfd_at(const char *name, int fd) {
        _cleanup_close_ int m = memfd_create(name, MFD_CLOEXEC);

        assert_true(m >= 0);
        assert_int_equal(dup3(m, fd, O_CLOEXEC), fd);
        return fd;
}

/* Parses `ls -l /proc/self/fd` into fd -> link target. */
static int parse_ls(const struct result *res, char links[][128], int max) {
        int n = 0;

        for (const char *l = res->out; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0) {
                const char *arrow = strstr(l, " -> "), *e = strchrnul(l, '\n'), *num;
                int fd;

                if (!arrow || arrow > e)
                        continue;
                num = arrow;
                while (num > l && num[-1] != ' ')
                        num--;
                fd = atoi(num);
                assert_true(fd >= 0 && fd < max);
                assert_true((size_t) (e - arrow - 4) < 128);
                memcpy(links[fd], arrow + 4, (size_t) (e - arrow - 4));
                links[fd][e - arrow - 4] = 0;
                n++;
        }
        return n;
}

static void test_fd_map(void **state) {
        static char *const argv[] = { "/bin/ls", "-l", "/proc/self/fd", NULL };
        char links[64][128];
        struct ze_plan p;
        struct result res;
        int leak, a, b, c, n, open_fds = 0;
        bool dir_seen = false;

        a = memfd_at("zy-a", 20);
        b = memfd_at("zy-b", 21);
        c = memfd_at("zy-c", 22);
        /* Not CLOEXEC in the parent, not in the map: the worker must close it. */
        leak = memfd_at("zy-leak", 30);
        assert_return_code(fcntl(leak, F_SETFD, 0), errno);

        struct ze_fdmap map[] = {
                { .src = a, .target = b }, /* a swap: each source is the other's target */
                { .src = b, .target = a },
                { .src = c, .target = c }, /* src == target */
        };
        plan_init(&p, argv);
        p.fds = map;
        p.n_fds = ELEMENTSOF(map);
        run_ok(&p, &res);

        memset(links, 0, sizeof(links));
        n = parse_ls(&res, links, 64);
        assert_string_equal(links[0], "/dev/null");
        assert_true(strncmp(links[1], "pipe:[", 6) == 0);
        assert_string_equal(links[2], "/dev/null");
        assert_string_equal(links[20], "/memfd:zy-b (deleted)");
        assert_string_equal(links[21], "/memfd:zy-a (deleted)");
        assert_string_equal(links[22], "/memfd:zy-c (deleted)");
        for (int fd = 0; fd < 64; fd++) {
                size_t len = strlen(links[fd]);

                if (!len)
                        continue;
                open_fds++;
                /* ls's own directory fd is the only other fd allowed */
                if (fd != 0 && fd != 1 && fd != 2 && fd != 20 && fd != 21 && fd != 22) {
                        assert_false(dir_seen);
                        assert_true(strncmp(links[fd], "/proc/", 6) == 0);
                        assert_string_equal(links[fd] + len - 3, "/fd");
                        dir_seen = true;
                }
        }
        assert_int_equal(open_fds, n);
        assert_int_equal(n, 7); /* 0, 1, 2, 20, 21, 22 and ls's directory: status fd closed */

        /* The parent's fds are untouched. */
        assert_int_equal(fcntl(a, F_GETFD), FD_CLOEXEC);
        safe_close(a);
        safe_close(b);
        safe_close(c);
        safe_close(leak);
}

static void test_fd_bad_source(void **state) {
        struct ze_fdmap map[] = { { .src = 999, .target = 5 } };
        struct ze_plan p;
        struct result res;

        assert_true(fcntl(999, F_GETFD) < 0);
        plan_init(&p, argv_true);
        p.fds = map;
        p.n_fds = 1;
        run_fails(&p, false, &res, ZE_STEP_FDS, EBADF, ZE_EXIT_SETUP_FAILED);
}

static void test_fd_duplicate_target(void **state) {
        struct ze_fdmap map[] = { { .src = 0, .target = 5 }, { .src = 1, .target = 5 } };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        p.fds = map;
        p.n_fds = 2;
        run_fails(&p, false, &res, ZE_STEP_FDS, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_status_fd_low(void **state) {
        /* The status fd sits at a number the map targets: it must be moved, not clobbered. */
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF, saved = -EBADF;
        struct ze_fdmap map[] = { { .src = 0, .target = 0 } };
        char *const argv[] = { "/nonexistent/zy", NULL };
        struct ze_plan p;
        struct result res = { 0 };
        pid_t pid;

        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
        assert_true(saved >= 0);
        plan_init(&p, argv);
        p.fds = map;
        p.n_fds = 1;
        pid = clone_with_pidfd(0, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                /* the status pipe on fd 1 and fd 2, sources on fd 0 */
                if (dup3(status[1], 1, O_CLOEXEC) < 0 || dup3(status[1], 2, O_CLOEXEC) < 0)
                        _exit(99);
                p.status_fd = 1;
                ze_child_run(&p);
        }
        status[1] = safe_close(status[1]);
        read_records(status[0], &res);
        res.code = tu_wait_code(pidfd);
        assert_failed(&res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
}

static void test_chdir_enoent(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        p.cwd = "/nonexistent-zygote-test";
        run_fails(&p, false, &res, ZE_STEP_CHDIR, ENOENT, ZE_EXIT_SETUP_FAILED);
}

static void test_chdir(void **state) {
        static char *const argv[] = { "/bin/sh", "-c", "pwd", NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv);
        p.cwd = "/proc";
        run_ok(&p, &res);
        assert_string_equal(res.out, "/proc\n");
}

static void test_exec_enoent(void **state) {
        static char *const argv_abs[] = { "/nonexistent-zygote-test/cmd", NULL };
        static char *const argv_rel[] = { "zygote-no-such-command", NULL };
        static char *const argv_empty[] = { "", NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_abs);
        run_fails(&p, false, &res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);

        plan_init(&p, argv_rel);
        run_fails(&p, false, &res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);

        plan_init(&p, argv_rel);
        p.search_path = "/nonexistent-zygote-test:/etc/passwd:/bin"; /* ENOENT, ENOTDIR, ENOENT */
        run_fails(&p, false, &res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);

        plan_init(&p, argv_empty);
        run_fails(&p, false, &res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
}

static void test_exec_eacces(void **state) {
        char dir[] = "/tmp/zy-test-child-XXXXXX", file[PATH_MAX];
        char *argv_abs[] = { file, NULL };
        char *const argv_rel[] = { "zy-not-executable", NULL };
        char *const argv_true_rel[] = { "true", NULL };
        char search[2 * PATH_MAX];
        struct ze_plan p;
        struct result res;
        int fd;

        assert_non_null(mkdtemp(dir));
        snprintf(file, sizeof(file), "%s/zy-not-executable", dir);
        fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
        safe_close(fd);

        plan_init(&p, argv_abs);
        run_fails(&p, false, &res, ZE_STEP_EXEC, EACCES, ZE_EXIT_NOT_EXECUTABLE);

        /* In a PATH search, EACCES is remembered and reported if nothing else is found... */
        snprintf(search, sizeof(search), "%s:/nonexistent-zygote-test", dir);
        plan_init(&p, argv_rel);
        p.search_path = search;
        run_fails(&p, false, &res, ZE_STEP_EXEC, EACCES, ZE_EXIT_NOT_EXECUTABLE);

        /* ...but a later directory that has it wins. */
        unlink(file);
        snprintf(file, sizeof(file), "%s/true", dir);
        fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        safe_close(fd);
        snprintf(search, sizeof(search), "%s:/bin", dir);
        plan_init(&p, argv_true_rel);
        p.search_path = search;
        run(&p, false, NULL, &res);
        assert_exec_ok(&res);
        unlink(file);
        rmdir(dir);
}

static void test_exec_enoexec(void **state) {
        char file[] = "/tmp/zy-test-enoexec-XXXXXX";
        char *argv[] = { file, NULL };
        struct ze_plan p;
        struct result res;
        int fd = mkostemp(file, O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "\x01\x02garbage\n", 10), 10);
        assert_return_code(fchmod(fd, 0755), errno);
        safe_close(fd);
        plan_init(&p, argv);
        run(&p, false, NULL, &res);
        unlink(file);
        assert_failed(&res, ZE_STEP_EXEC, ENOEXEC, ZE_EXIT_NOT_EXECUTABLE);
}

static void test_path_search(void **state) {
        static char *const argv[] = { "cat", "/proc/self/status", NULL };
        struct ze_plan p;
        struct result res;
        char buf[32];

        plan_init(&p, argv);
        p.search_path = "/nonexistent-zygote-test::/etc/passwd:/bin";
        run_ok(&p, &res);
        assert_non_null(status_field(&res, "Name", buf, sizeof(buf)));
        assert_string_equal(buf, "cat");

        /* a path_buf too small for any candidate */
        plan_init(&p, argv);
        p.path_buf_len = 4;
        run_fails(&p, false, &res, ZE_STEP_EXEC, ENAMETOOLONG, ZE_EXIT_NOT_EXECUTABLE);
}

static void test_setsid(void **state) {
        struct ze_plan p;
        struct result res;
        char pid[32], sid[32];

        plan_init(&p, argv_status);
        run_ok(&p, &res);
        assert_non_null(status_field(&res, "Pid", pid, sizeof(pid)));
        assert_non_null(status_field(&res, "NSsid", sid, sizeof(sid)));
        assert_string_equal(pid, sid);
}

static void test_ctty_enotty(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        p.ctty = true; /* fd 0 is /dev/null */
        run_fails(&p, false, &res, ZE_STEP_CTTY, ENOTTY, ZE_EXIT_SETUP_FAILED);
}

/* Runs the plan from a parent whose signals are not pristine, as zygoted's are not: the signals
 * of ignored (0-ended) ignored and those of blocked blocked, then put back. */
static void run_dirty(struct ze_plan *p, const int *ignored, const int *blocked, struct result *res) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, old[4];
        sigset_t block, old_mask;
        size_t n;

        for (n = 0; ignored[n]; n++) {
                assert_true(n < 4);
                assert_return_code(sigaction(ignored[n], &ign, &old[n]), errno);
        }
        sigemptyset(&block);
        for (const int *s = blocked; *s; s++)
                sigaddset(&block, *s);
        assert_return_code(sigprocmask(SIG_BLOCK, &block, &old_mask), errno);

        run(p, true, NULL, res);

        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        while (n-- > 0)
                sigaction(ignored[n], &old[n], NULL);
}

static void test_signals_reset(void **state) {
        static const int ignored[] = { SIGPIPE, SIGHUP, 0 }, blocked[] = { SIGUSR1, SIGTERM, 0 };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        run_dirty(&p, ignored, blocked, &res);
        assert_exec_ok(&res);
        assert_status(&res, "SigIgn", "0000000000000000");
        assert_status(&res, "SigBlk", "0000000000000000");
}

/* signals_reset names the dispositions to reset (zygoted's own): the others stay as they are
 * (here an ignored SIGHUP, which shows the reset was limited), and the mask is emptied. */
static void test_signals_reset_only_those_named(void **state) {
        static const int ignored[] = { SIGPIPE, SIGHUP, 0 }, blocked[] = { SIGTERM, 0 };
        sigset_t only;
        struct ze_plan p;
        struct result res;

        sigemptyset(&only);
        sigaddset(&only, SIGPIPE);
        plan_init(&p, argv_status);
        p.signals_reset = &only;
        run_dirty(&p, ignored, blocked, &res);
        assert_exec_ok(&res);
        assert_status(&res, "SigIgn", "0000000000000001");
        assert_status(&res, "SigBlk", "0000000000000000");
}

/* signals_default (zygote-ref's pristine signals) skips step 0: here an ignored signal of the
 * parent stays ignored, which shows that nothing was reset. */
static void test_signals_default_skips_the_reset(void **state) {
        static const int ignored[] = { SIGPIPE, 0 }, blocked[] = { 0 };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        p.signals_default = true;
        run_dirty(&p, ignored, blocked, &res);
        assert_exec_ok(&res);
        assert_status(&res, "SigIgn", "0000000000001000");
}

/* The fd limit zygoted started with comes back in the task (zygoted raises its own). */
static void test_nofile_soft(void **state) {
        static char *const argv_ulimit[] = { "/bin/sh", "-c", "ulimit -Sn", NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_ulimit);
        p.nofile_soft = 123;
        run_ok(&p, &res);
        assert_int_equal(res.out_len, 4);
        assert_memory_equal(res.out, "123\n", 4);
}

/* The caller's limits, soft and hard, as the plan carries them (lowering needs no privilege). */
static void test_rlimits(void **state) {
        static char *const argv_ulimit[] = { "/bin/sh", "-c", "ulimit -Sn; ulimit -Hn", NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_ulimit);
        p.rlimits[0] = (struct ze_rlimit){ .resource = RLIMIT_NOFILE, .cur = 77, .max = 99 };
        p.n_rlimits = 1;
        run_ok(&p, &res);
        assert_int_equal(res.out_len, 6);
        assert_memory_equal(res.out, "77\n99\n", 6);

        /* a soft limit above the hard one: the step fails and says so */
        plan_init(&p, argv_ulimit);
        p.rlimits[0] = (struct ze_rlimit){ .resource = RLIMIT_NOFILE, .cur = 2, .max = 1 };
        p.n_rlimits = 1;
        run(&p, false, NULL, &res);
        assert_failed(&res, ZE_STEP_RLIMIT, EINVAL, ZE_EXIT_SETUP_FAILED);
}

/* A directory that is no cgroup: the cgroup step fails first and says so. */
static void test_cgroup_not_a_cgroup(void **state) {
        _cleanup_close_ int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct ze_plan p;
        struct result res;

        assert_true(dir >= 0);
        plan_init(&p, argv_true);
        p.cgroup_fds[0] = dir;
        p.n_cgroups = 1;
        run(&p, false, NULL, &res);
        assert_failed(&res, ZE_STEP_CGROUP, ENOENT, ZE_EXIT_SETUP_FAILED);
}

static void test_nnp(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        run_ok(&p, &res);
        assert_status(&res, "NoNewPrivs", "0");

        plan_init(&p, argv_status);
        p.no_new_privs = true;
        run_ok(&p, &res);
        assert_status(&res, "NoNewPrivs", "1");
}

static void test_filter_load(void **state) {
        char buf[PATH_MAX];
        char *argv[] = { (char *) helper("ZYGOTE_TRY_SYSCALL", "try-syscall", buf, sizeof(buf)),
                         "personality", "0xffffffff", NULL };
        struct ze_plan p;
        struct result res;

        plan_init_load(&p, argv_status, &block_personality_prog);
        run_ok(&p, &res);
        assert_status(&res, "Seccomp", "2");
        assert_status(&res, "Seccomp_filters", "1");
        assert_status(&res, "NoNewPrivs", "1");

        /* and it is the filter we gave */
        plan_init_load(&p, argv, &block_personality_prog);
        run_ok(&p, &res);
        assert_string_equal(res.out, "personality errno=95\n");

        /* without a filter the same call is allowed */
        plan_init(&p, argv);
        run_ok(&p, &res);
        assert_string_equal(res.out, "personality errno=0\n");
}

static void test_filter_invalid(void **state) {
        static struct sock_filter bad[] = { BPF_STMT(BPF_JMP | BPF_JA, 5) }; /* jumps out */
        static const struct sock_fprog bad_prog = { .len = 1, .filter = bad };
        struct ze_plan p;
        struct result res;

        plan_init_load(&p, argv_true, &bad_prog);
        run_fails(&p, false, &res, ZE_STEP_FILTER, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_filter_clone_absent(void **state) {
        _cleanup_close_ int self = -EBADF;
        struct ze_plan p;
        struct result res;

        if (features.clone_filter)
                skip(); /* covered by the kernel lane on a patched kernel */
        self = pidfd_open_pid(getpid());
        assert_true(self >= 0);
        plan_init(&p, argv_true);
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_CLONE;
        p.ref_pidfd = self;
        run(&p, false, NULL, &res);
        /* an unpatched kernel knows no seccomp op 4 */
        assert_failed(&res, ZE_STEP_FILTER, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void test_capbset_mask_absent(void **state) {
        struct ze_plan p;
        struct result res;

        if (features.capbset_drop_mask)
                skip(); /* the capbset-mask group runs it */
        if (geteuid() != 0)
                skip();
        plan_init(&p, argv_true);
        p.capbset_drop = UINT64_C(1) << CAP_MKNOD;
        p.capbset_mask_prctl = true;
        run(&p, false, NULL, &res);
        /* prctl 82 is unknown here: the worker must fail, not silently keep the capability */
        assert_failed(&res, ZE_STEP_CAPBSET, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static int hold_run(bool go, bool quiet, struct result *res) {
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, hold[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF;
        struct ze_status s;
        struct ze_plan p;
        struct pollfd pfd;
        pid_t pid;

        memset(res, 0, sizeof(*res));
        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        assert_return_code(pipe2(hold, O_CLOEXEC), errno);
        plan_init(&p, argv_true);
        p.status_fd = status[1];
        p.hold_fd = hold[0];
        p.hold_quiet = quiet;
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_LOAD;
        p.prog = &block_personality_prog;
        pid = clone_with_pidfd(0, &pidfd);
        assert_true(pid >= 0);
        if (pid == 0)
                ze_child_run(&p);
        status[1] = safe_close(status[1]);
        hold[0] = safe_close(hold[0]);

        if (!quiet) {
                /* HELD first */
                assert_true(tu_read_record(status[0], &s, sizeof(s)));
                assert_int_equal(s.step, ZE_STEP_HELD);
                assert_int_equal(s.err, 0);

                /* the worker is waiting: not exited */
                pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
                assert_int_equal(poll(&pfd, 1, 0), 0);
        }

        if (go)
                assert_int_equal(write(hold[1], "x", 1), 1);
        hold[1] = safe_close(hold[1]);
        read_records(status[0], res);
        res->code = tu_wait_code(pidfd);
        return 0;
}

static void test_hold(void **state) {
        struct result res;

        hold_run(true, false, &res);
        assert_exec_ok(&res); /* EOF after HELD: exec happened */

        hold_run(false, false, &res);
        assert_int_equal(res.n_recs, 0);
        assert_int_equal(res.code, ZE_EXIT_ABANDONED);
}

/* The inherit tier's gate: the same wait without the HELD record. Shut, the worker never execs. */
static void test_hold_quiet(void **state) {
        struct result res;

        hold_run(true, true, &res);
        assert_exec_ok(&res);

        hold_run(false, true, &res);
        assert_int_equal(res.n_recs, 0);
        assert_int_equal(res.code, ZE_EXIT_ABANDONED);
}

/* try-syscall: every name it knows makes exactly that system call (a filter that blocks only
 * that call changes its answer to the filter's errno), and is harmless when allowed. */
static void test_try_syscall(void **state) {
        char buf[PATH_MAX], line[128], want[160];
        char *list_argv[] = { (char *) helper("ZYGOTE_TRY_SYSCALL", "try-syscall", buf, sizeof(buf)),
                              "--list", NULL };
        static const char *const required[] = {
                "getpid", "personality", "socket", "unshare", "mount", "umount2", "keyctl",
                "kexec_load", "bpf", "perf_event_open", "ptrace", "setns", "chroot", "clone3",
                "add_key", "init_module", "swapon", "reboot", "open_by_handle_at",
        };
        struct ze_plan p;
        struct result list, res;
        unsigned n = 0;

        plan_init(&p, list_argv);
        run(&p, true, NULL, &list);
        assert_exec_ok(&list);
        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                snprintf(want, sizeof(want), "\n%s\n", required[i]);
                if (!strstr(list.out, want) && strncmp(list.out, want + 1, strlen(want + 1)) != 0)
                        fail_msg("try-syscall lacks %s", required[i]);
        }

        for (const char *l = list.out; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0) {
                size_t len = (size_t) (strchrnul(l, '\n') - l);
                char *argv[] = { list_argv[0], line, NULL };
                struct sock_filter f[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | BLOCKED_ERRNO),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = { .len = ELEMENTSOF(f), .filter = f };
                int nr;

                if (len == 0)
                        continue;
                assert_true(len < sizeof(line));
                memcpy(line, l, len);
                line[len] = 0;
                nr = seccomp_syscall_resolve_name(line);
                assert_true(nr >= 0);
                f[4].k = (uint32_t) nr;

                /* allowed: the helper survives and answers, not with the filter's errno */
                plan_init(&p, argv);
                run_ok(&p, &res);
                snprintf(want, sizeof(want), "%s errno=", line);
                assert_true(strncmp(res.out, want, strlen(want)) == 0);
                assert_int_not_equal(atoi(res.out + strlen(want)), BLOCKED_ERRNO);

                /* blocked: the filter's errno, so it was that call */
                plan_init_load(&p, argv, &prog);
                run_ok(&p, &res);
                snprintf(want, sizeof(want), "%s errno=%d\n", line, BLOCKED_ERRNO);
                assert_string_equal(res.out, want);
                n++;
        }
        assert_true(n >= ELEMENTSOF(required));
}

/* ---- tests that need root ----------------------------------------------------------------- */

static void become_nobody(void) {
        if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 || syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
                _exit(99);
}

static void test_ids_as_nonroot(void **state) {
        static const gid_t groups[] = { 0 };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_true);
        plan_ids(&p, 0, 0);
        p.groups = groups;
        p.n_groups = 1;
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_GROUPS, EPERM, ZE_EXIT_SETUP_FAILED);

        /* capset beyond the permitted set */
        plan_init(&p, argv_true);
        p.set_caps = true;
        p.caps_keep = UINT64_C(1) << CAP_SYS_ADMIN;
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_CAPS, EPERM, ZE_EXIT_SETUP_FAILED);

        /* the bounding set needs CAP_SETPCAP */
        plan_init(&p, argv_true);
        p.capbset_drop = UINT64_C(1) << CAP_MKNOD;
        run(&p, false, become_nobody, &res);
        assert_failed(&res, ZE_STEP_CAPBSET, EPERM, ZE_EXIT_SETUP_FAILED);
}

static void test_ids_switch(void **state) {
        static const gid_t groups[] = { 65534, 100 };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        p.groups = groups;
        p.n_groups = ELEMENTSOF(groups);
        p.set_caps = true;
        p.caps_keep = 0;
        run_ok(&p, &res);
        assert_status(&res, "Uid", "65534\t65534\t65534\t65534");
        assert_status(&res, "Gid", "65534\t65534\t65534\t65534");
        assert_status(&res, "Groups", "100 65534");
        assert_int_equal(status_hex(&res, "CapEff"), 0);
        assert_int_equal(status_hex(&res, "CapPrm"), 0);

        /* no groups at all */
        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        run_ok(&p, &res);
        assert_status(&res, "Groups", "");
}

/* Keeps only CAP_CHOWN and CAP_KILL in the bounding set, by one prctl or the loop. */
static const uint64_t capbset_keep = (UINT64_C(1) << CAP_CHOWN) | (UINT64_C(1) << CAP_KILL);

static void run_capbset(bool mask_prctl, struct ze_plan *p, struct result *res) {
        plan_init(p, argv_status);
        p->capbset_drop = all_caps() & ~capbset_keep;
        p->capbset_mask_prctl = mask_prctl;
        run_ok(p, res);
        assert_int_equal(status_hex(res, "CapBnd"), capbset_keep);
}

static void test_capbset_loop(void **state) {
        uint64_t keep = capbset_keep;
        struct ze_plan p;
        struct result res;

        run_capbset(false, &p, &res);
        /* root keeps uid 0: execve gives it the bounding set */
        assert_int_equal(status_hex(&res, "CapEff"), keep);

        /* cap_last unknown (0) must not mean "drop only CAP_CHOWN" */
        plan_init(&p, argv_status);
        p.cap_last = 0;
        p.capbset_drop = ~keep;
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);
}

static void drop_mknod_and_setpcap(void) {
        if (prctl(PR_CAPBSET_DROP, CAP_MKNOD, 0, 0, 0) < 0 || prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0) < 0)
                _exit(99);
        /* and lose CAP_SETPCAP from the effective set too */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
                _exit(99);
        d[0].effective &= ~(1u << CAP_SETPCAP);
        d[0].permitted &= ~(1u << CAP_SETPCAP);
        if (syscall(SYS_capset, &h, d) < 0)
                _exit(99);
}

static void test_capbset_skip_absent(void **state) {
        struct ze_plan p;
        struct result res;

        /* Without CAP_SETPCAP, dropping bits that are already gone must still succeed. */
        plan_init(&p, argv_status);
        p.capbset_drop = (UINT64_C(1) << CAP_MKNOD) | (UINT64_C(1) << CAP_SETPCAP);
        run(&p, true, drop_mknod_and_setpcap, &res);
        assert_exec_ok(&res);
        assert_int_equal(status_hex(&res, "CapBnd"), bounding_set() & ~p.capbset_drop);
}

static void test_caps(void **state) {
        uint64_t keep = (UINT64_C(1) << CAP_CHOWN) | (UINT64_C(1) << CAP_KILL) |
                        (UINT64_C(1) << CAP_NET_BIND_SERVICE);
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        p.set_caps = true;
        p.caps_keep = keep;
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), keep);
        assert_int_equal(status_hex(&res, "CapPrm"), keep);
        assert_int_equal(status_hex(&res, "CapInh"), keep);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);
        assert_int_equal(status_hex(&res, "CapAmb"), 0);

        /* kept caps for a non-root uid: capset must work after the switch (KEEPCAPS); execve
         * as non-root then clears them, as for any non-root program */
        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        plan_ids(&p, 65534, 65534);
        p.set_caps = true;
        p.caps_keep = keep;
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), 0);
        assert_int_equal(status_hex(&res, "CapInh"), keep);
        assert_int_equal(status_hex(&res, "CapBnd"), keep);

        /* an inheritable set narrower than the others (the caller's) */
        plan_init(&p, argv_status);
        p.capbset_drop = all_caps() & ~keep;
        p.set_caps = true;
        p.caps_keep = keep;
        p.caps_inh_drop = ~(UINT64_C(1) << CAP_KILL);
        run_ok(&p, &res);
        assert_int_equal(status_hex(&res, "CapEff"), keep);
        assert_int_equal(status_hex(&res, "CapInh"), UINT64_C(1) << CAP_KILL);
}

/* Step 0c: the caller's scheduling and umask, as the exec'd program sees them. */
static void test_sched(void **state) {
        static char *const argv_sched[] = { "/bin/sh", "-c",
                                            "cut -d' ' -f19,41 /proc/self/stat; cat /proc/self/oom_score_adj; "
                                            "grep -E '^(Umask|Cpus_allowed_list)' /proc/self/status",
                                            NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_sched);
        p.set_sched = true;
        p.sched = (struct ze_sched) { .policy = SCHED_IDLE, .nice = 7, .ioprio = 3 << 13 /* idle */,
                                      .oom_score_adj = 300, .umask = 027, .affinity = { 1 } };
        run_ok(&p, &res);
        assert_non_null(strstr(res.out, "7 5\n300\n")); /* nice 7, policy 5 (SCHED_IDLE) */
        assert_non_null(strstr(res.out, "Umask:\t0027\n"));
        assert_non_null(strstr(res.out, "Cpus_allowed_list:\t0\n"));

        /* a failure names its step: no CPU at all */
        plan_init(&p, argv_true);
        p.set_sched = true;
        p.sched = (struct ze_sched) { .policy = SCHED_OTHER };
        run(&p, false, NULL, &res);
        assert_failed(&res, ZE_STEP_AFFINITY, EINVAL, ZE_EXIT_SETUP_FAILED);
}

static void raise_ambient(void) {
        /* CAP_KILL into inheritable, then ambient: ze_child_run must clear it */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                _exit(99);
        d[0].inheritable |= 1u << CAP_KILL;
        if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0) < 0)
                _exit(99);
}

static void test_ambient_cleared(void **state) {
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        run(&p, true, raise_ambient, &res);
        assert_exec_ok(&res);
        assert_int_equal(status_hex(&res, "CapAmb"), 0);
        assert_int_equal(status_hex(&res, "CapEff"), 0);
}

/* Without no_new_privs a filter loaded after the caps step is refused (EACCES); filter_early
 * loads it while CAP_SYS_ADMIN is still there. */
static void check_filter_needs_early(struct ze_plan *p, struct result *res) {
        p->filter_mode = ZE_FILTER_LOAD;
        p->prog = &block_personality_prog;
        run(p, true, NULL, res);
        assert_failed(res, ZE_STEP_FILTER, EACCES, ZE_EXIT_SETUP_FAILED);
        p->filter_early = true;
        run_ok(p, res);
        assert_status(res, "Seccomp_filters", "1");
}

static void test_filter_late_needs_nnp(void **state) {
        struct ze_plan p;
        struct result res;

        /* uid 65534 without no_new_privs: after the caps step nothing may load a filter */
        plan_init(&p, argv_status);
        plan_ids(&p, 65534, 65534);
        p.set_caps = true;
        p.caps_keep = 0;
        check_filter_needs_early(&p, &res);
        assert_status(&res, "Seccomp", "2");
        assert_status(&res, "NoNewPrivs", "0");
        assert_status(&res, "Uid", "65534\t65534\t65534\t65534");
        assert_int_equal(status_hex(&res, "CapEff"), 0);

        /* the same for a worker that stays root but loses CAP_SYS_ADMIN (Docker's default) */
        plan_init(&p, argv_status);
        p.capbset_drop = UINT64_C(1) << CAP_SYS_ADMIN;
        p.set_caps = true;
        p.caps_keep = UINT64_C(1) << CAP_CHOWN;
        check_filter_needs_early(&p, &res);
        assert_int_equal(status_hex(&res, "CapBnd") & (UINT64_C(1) << CAP_SYS_ADMIN), 0);
}

/* A process in network and UTS namespaces of its own (once this returns), waiting until the
 * pipe it returns closes. */
static pid_t start_in_netns(int *ret_pidfd, int *ret_release) {
        int p[2], ready[2];
        pid_t pid;
        char b;

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        pid = clone_with_pidfd(0, ret_pidfd);
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[1]);
                close(ready[0]);
                if (unshare(CLONE_NEWNET | CLONE_NEWUTS) < 0 || write(ready[1], "r", 1) != 1)
                        _exit(1);
                (void) read(p[0], &b, 1);
                _exit(0);
        }
        close(p[0]);
        close(ready[1]);
        assert_int_equal(read(ready[0], &b, 1), 1);
        close(ready[0]);
        *ret_release = p[1];
        return pid;
}

/* Step 1c: the worker joins the namespaces of the process behind a pidfd, several at once. */
static void test_setns(void **state) {
        static char *const argv_ns[] = { "/bin/readlink", "/proc/self/ns/net", "/proc/self/ns/uts", NULL };
        _cleanup_close_ int pidfd = -EBADF, release = -EBADF;
        char want[128], link[64], got[64];
        struct ze_plan p;
        struct result res;
        pid_t pid;
        ssize_t n;
        int st;

        pid = start_in_netns(&pidfd, &release);
        snprintf(link, sizeof(link), "/proc/%d/ns/net", (int) pid);
        n = readlink(link, got, sizeof(got));
        assert_true(n > 0);
        n = snprintf(want, sizeof(want), "%.*s\n", (int) n, got);
        snprintf(link, sizeof(link), "/proc/%d/ns/uts", (int) pid);
        n += readlink(link, want + n, sizeof(want) - (size_t) n - 2);
        want[n++] = '\n';
        want[n] = 0;

        plan_init(&p, argv_ns);
        p.ns_join = CLONE_NEWNET | CLONE_NEWUTS;
        p.caller_pidfd = pidfd;
        run_ok(&p, &res);
        assert_int_equal(res.out_len, (size_t) n);
        assert_memory_equal(res.out, want, (size_t) n);

        /* a process that has exited: the step fails and says so */
        safe_close(release);
        release = -EBADF;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        run(&p, false, NULL, &res);
        assert_failed(&res, ZE_STEP_SETNS, ESRCH, ZE_EXIT_SETUP_FAILED);
}

/* Step 1d: the worker enters the directory open at root_fd as its root; an empty one has no
 * /bin/true, so exec fails there where it works without. */
static void test_chroot(void **state) {
        char dir[] = "/tmp/zytest-root-XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        struct ze_plan p;
        struct result res;

        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        plan_init(&p, argv_true);
        p.enter_root = true;
        p.root_fd = fd;
        run(&p, false, NULL, &res);
        assert_int_equal(rmdir(dir), 0);
        assert_failed(&res, ZE_STEP_EXEC, ENOENT, ZE_EXIT_NOT_FOUND);
        p.enter_root = false;
        run_ok(&p, &res);
}

static void test_full_plan(void **state) {
        static const gid_t groups[] = { 65534 };
        struct ze_plan p;
        struct result res;

        /* everything at once, as a Docker-like worker */
        plan_init(&p, argv_status);
        p.cwd = "/";
        plan_ids(&p, 65534, 65534);
        p.groups = groups;
        p.n_groups = 1;
        p.capbset_drop = all_caps() & ~(UINT64_C(1) << CAP_NET_BIND_SERVICE);
        p.set_caps = true;
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_LOAD;
        p.prog = &block_personality_prog;
        run_ok(&p, &res);
        assert_status(&res, "Seccomp_filters", "1");
        assert_status(&res, "NoNewPrivs", "1");
        assert_int_equal(status_hex(&res, "CapBnd"), UINT64_C(1) << CAP_NET_BIND_SERVICE);
        assert_int_equal(status_hex(&res, "CapEff"), 0);
}

/* ---- PR_CAPBSET_DROP_MASK --------------------------------------------------------------- */

static void test_capbset_mask(void **state) {
        struct ze_plan p;
        struct result res;

        run_capbset(true, &p, &res);
}

/* ---- the list of the worker's system calls (child.h) ---------------------------------------- */

#define LISTED_EXEC_ERRNO 131 /* ENOTRECOVERABLE: what the test filter answers to execve */

static scmp_filter_ctx listed_only;

static void load_listed_only(void) {
        if (seccomp_load(listed_only) < 0)
                _exit(100);
}

/* The worker under a filter that kills it at any system call missing from ze_worker_syscalls
 * (arguments compared where the list names them), with every step that has a system call taken:
 * the caller's scheduling, missing standard fds, fd limit, terminal, bounding set, ids with kept
 * capabilities, cwd, no_new_privs, hold. execve answers an errno, so reaching it shows as an exec failure. */
static void test_worker_syscalls_listed(void **state) {
        static const gid_t groups[] = { 65534 };
        _cleanup_close_pair_ int hold[2] = { -EBADF, -EBADF };
        _cleanup_close_ int ptm = -EBADF, pts = -EBADF;
        struct ze_fdmap map[1];
        struct rlimit rl;
        struct ze_plan p;
        struct result res;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
        /* Under ASan/UBSan the sanitizer's runtime makes system calls of its own in the worker;
         * the list describes child.c as zygoted runs it, which the main lane checks. */
        fprintf(stderr, "skip: the sanitizer runtime makes system calls that child.c does not\n");
        skip();
#endif
        listed_only = seccomp_init(SCMP_ACT_KILL_PROCESS);
        assert_non_null(listed_only);
        for (size_t i = 0; i < ze_worker_syscalls_n; i++) {
                const struct ze_worker_syscall *c = &ze_worker_syscalls[i];
                struct scmp_arg_cmp cmp[6];
                unsigned n = 0;
                int nr = seccomp_syscall_resolve_name(c->name);

                assert_true(nr != __NR_SCMP_ERROR);
                if (streq(c->name, "execve"))
                        continue;
                for (unsigned a = 0; a < 6; a++)
                        if (c->match & (1u << a))
                                cmp[n++] = SCMP_CMP(a, SCMP_CMP_EQ, c->args[a]);
                assert_int_equal(seccomp_rule_add_array(listed_only, SCMP_ACT_ALLOW, nr, n, cmp), 0);
        }
        assert_int_equal(seccomp_rule_add(listed_only, SCMP_ACT_ERRNO(LISTED_EXEC_ERRNO), SCMP_SYS(execve), 0), 0);

        plan_init(&p, argv_true);
        /* a terminal on fd 0 (TIOCSCTTY) where the machine has ptys; fds 1 and 2 missing (/dev/null) */
        ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (ptm >= 0 && grantpt(ptm) == 0 && unlockpt(ptm) == 0)
                pts = open(ptsname(ptm), O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (pts >= 0) {
                map[0] = (struct ze_fdmap){ .src = pts, .target = 0 };
                p.fds = map;
                p.n_fds = 1;
                p.ctty = true;
        } else
                printf("# no pseudo-terminal here (%s): the terminal step is not covered\n", strerror(errno));
        assert_return_code(getrlimit(RLIMIT_NOFILE, &rl), errno);
        p.nofile_soft = rl.rlim_cur > 64 ? rl.rlim_cur - 1 : rl.rlim_cur + 1;
        /* the caller's limits */
        p.rlimits[0] = (struct ze_rlimit){ .resource = RLIMIT_NOFILE, .cur = p.nofile_soft, .max = rl.rlim_max };
        p.n_rlimits = 1;
        p.capbset_drop = all_caps() & ~(UINT64_C(1) << CAP_NET_BIND_SERVICE);
        p.capbset_mask_prctl = features.capbset_drop_mask;
        p.set_ids = true;
        p.uid = 65534;
        p.gid = 65534;
        p.groups = groups;
        p.n_groups = 1;
        p.set_caps = true;
        p.caps_keep = UINT64_C(1) << CAP_NET_BIND_SERVICE;
        p.cwd = "/";
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_INHERITED;
        /* step 0c: the caller's scheduling */
        p.set_sched = true;
        p.sched = (struct ze_sched) { .policy = SCHED_BATCH, .nice = 3, .oom_score_adj = 10, .umask = 022 };
        assert_return_code(sched_getaffinity(0, sizeof(p.sched.affinity), (cpu_set_t *) (void *) p.sched.affinity), errno);
        assert_return_code(pipe2(hold, O_CLOEXEC), errno);
        assert_int_equal(write(hold[1], "g", 1), 1);
        p.hold_fd = hold[0];

        run(&p, false, load_listed_only, &res);
        seccomp_release(listed_only);
        if (res.code == 128 + SIGSYS)
                fail_msg("the worker made a system call missing from ze_worker_syscalls (child-syscalls.c); "
                         "strace -f this test to see which");
        assert_int_equal(res.n_recs, 2);
        assert_string_equal(ze_step_to_string(res.recs[0].step), "held");
        assert_string_equal(ze_step_to_string(res.recs[1].step), "exec");
        assert_int_equal(res.recs[1].err, LISTED_EXEC_ERRNO);
        assert_int_equal(res.code, ZE_EXIT_NOT_EXECUTABLE);
}

static int setup_all(void **state) {
        int r = ze_probe_features(&features);

        if (r < 0) {
                fprintf(stderr, "ze_probe_features: %s\n", strerror(-r));
                return -1;
        }
        cap_last = features.cap_last;
        return 0;
}

int main(int argc, char **argv) {
        const struct CMUnitTest plain[] = {
                tu_test(test_step_names),
                tu_test(test_fd_map),
                tu_test(test_fd_bad_source),
                tu_test(test_fd_duplicate_target),
                tu_test(test_status_fd_low),
                tu_test(test_chdir_enoent),
                tu_test(test_chdir),
                tu_test(test_exec_enoent),
                tu_test(test_exec_eacces),
                tu_test(test_exec_enoexec),
                tu_test(test_path_search),
                tu_test(test_setsid),
                tu_test(test_ctty_enotty),
                tu_test(test_signals_reset),
                tu_test(test_nofile_soft),
                tu_test(test_rlimits),
                tu_test(test_cgroup_not_a_cgroup),
                tu_test(test_nnp),
                tu_test(test_filter_load),
                tu_test(test_filter_invalid),
                tu_test(test_filter_clone_absent),
                tu_test(test_hold),
                tu_test(test_signals_default_skips_the_reset),
                tu_test(test_signals_reset_only_those_named),
                tu_test(test_hold_quiet),
                tu_test(test_try_syscall),
        };
        const struct CMUnitTest root[] = {
                tu_test(test_ids_as_nonroot),
                tu_test(test_ids_switch),
                tu_test(test_capbset_loop),
                tu_test(test_capbset_skip_absent),
                tu_test(test_capbset_mask_absent),
                tu_test(test_caps),
                tu_test(test_sched),
                tu_test(test_ambient_cleared),
                tu_test(test_filter_late_needs_nnp),
                tu_test(test_full_plan),
                tu_test(test_setns),
                tu_test(test_chroot),
                tu_test(test_worker_syscalls_listed),
        };
        const struct CMUnitTest mask[] = {
                tu_test(test_capbset_mask),
        };
        const char *group = argc > 1 ? argv[1] : "plain";

        if (strcmp(group, "plain") == 0)
                return cmocka_run_group_tests_name("child", plain, setup_all, NULL);
        if (strcmp(group, "root") == 0) {
                if (geteuid() != 0) {
                        fprintf(stderr, "skip: switching ids and capabilities needs root\n");
                        return 77;
                }
                return cmocka_run_group_tests_name("child-root", root, setup_all, NULL);
        }
        if (strcmp(group, "capbset-mask") == 0) {
                if (geteuid() != 0) {
                        fprintf(stderr, "skip: dropping from the bounding set needs root\n");
                        return 77;
                }
                if (setup_all(NULL) < 0)
                        return 1;
                if (!features.capbset_drop_mask) {
                        fprintf(stderr, "skip: kernel lacks PR_CAPBSET_DROP_MASK: %s\n",
                                features.capbset_drop_mask_reason);
                        return 77;
                }
                return cmocka_run_group_tests_name("child-capbset-mask", mask, setup_all, NULL);
        }
        fprintf(stderr, "usage: %s [plain|root|capbset-mask]\n", argv[0]);
        return 2;
}
