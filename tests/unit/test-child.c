/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the task worker (engine/child.c, ze_child_run), by theme: this file the recipe's
 * own steps (step names, exec and PATH search, cwd, session, terminal, signals, limits, cgroup,
 * hold, scheduling, namespaces and root, a full plan, the list of its system calls);
 * test-child-fds.c the fd map; test-child-caps.c ids, capabilities and the filter. Every worker
 * runs in a real child and the effects are checked from the outside (child-run.h).
 *
 *   test-child            tests that need no privilege
 *   test-child root       tests that switch ids, namespaces or scheduling (exit 77 when not root)
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
#include "child-run.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "probe.h"
#include "util.h"

/* ---- tests that need no privilege -------------------------------------------------------- */

static void test_step_names(void **state) {
        static const char *const want[] = { "none", "fds", "setsid", "ctty", "capbset", "groups", "gid", "uid", "caps",
                                            "chdir", "nnp", "filter", "held", "hold", "exec", "rlimit", "cgroup",
                                            "setns", "chroot", "mntns", "proc", "oom_score_adj", "sched", "nice",
                                            "ioprio", "affinity",
                                            /* the container init's own */
                                            "sync", "non-dumpable", "propagation", "rootfs", "mount", "device",
                                            "pivot_root", "maskedPaths", "readonlyPaths", "readonly root", "hostname",
                                            "console",
                                            /* the worker's, appended */
                                            "lsm",
                                            /* the container init's, appended */
                                            "domainname", "personality",
                                            /* the worker's again, appended */
                                            "scope",
                                            /* the container init's, appended */
                                            "createContainer hook", "startContainer hook", "tmpcopyup",
                                            /* the container init's, appended */
                                            "seccomp listener", "loopback",
                                            /* the container init's, appended */
                                            "memoryPolicy" };

        assert_int_equal(ELEMENTSOF(want), _ZE_STEP_MAX);
        for (int i = 0; i < _ZE_STEP_MAX; i++)
                assert_string_equal(ze_step_to_string((enum ze_step) i), want[i]);
        assert_string_equal(ze_step_to_string(_ZE_STEP_MAX), "unknown");
        assert_string_equal(ze_step_to_string((enum ze_step) - 1), "unknown");
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

/* Step 0d writes the whole label text to the attribute file, in one write (here a plain file
 * stands in for /proc/thread-self/attr/exec, which needs AppArmor or SELinux); a file it cannot
 * open fails the step and says so. */
static void test_lsm_label(void **state) {
        char path[] = "/tmp/zytest-lsm-XXXXXX", got[32] = "";
        _cleanup_close_ int fd = mkostemp(path, O_CLOEXEC);
        struct ze_plan p;
        struct result res;

        assert_true(fd >= 0);
        plan_init(&p, argv_true);
        p.lsm_attr = path;
        p.lsm_exec = "exec zytest-caller";
        run_ok(&p, &res);
        assert_int_equal(pread(fd, got, sizeof(got) - 1, 0), strlen("exec zytest-caller"));
        assert_string_equal(got, "exec zytest-caller");
        assert_int_equal(unlink(path), 0);
        p.lsm_attr = "/nonexistent-zygote-test/attr/exec";
        run_fails(&p, false, &res, ZE_STEP_LSM, ENOENT, ZE_EXIT_SETUP_FAILED);
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

static void test_sched(void **state) {
        static char *const argv_sched[] = { "/bin/sh", "-c",
                                            "cut -d' ' -f19,41 /proc/self/stat; cat /proc/self/oom_score_adj; "
                                            "grep -E '^(Umask|Cpus_allowed_list)' /proc/self/status",
                                            NULL };
        struct ze_plan p;
        struct result res;

        plan_init(&p, argv_sched);
        p.set_sched = true;
        p.sched = (struct ze_sched){ .policy = SCHED_IDLE,
                                     .nice = 7,
                                     .ioprio = 3 << 13 /* idle */,
                                     .oom_score_adj = 300,
                                     .umask = 027,
                                     .affinity = { 1 } };
        run_ok(&p, &res);
        assert_non_null(strstr(res.out, "7 5\n300\n")); /* nice 7, policy 5 (SCHED_IDLE) */
        assert_non_null(strstr(res.out, "Umask:\t0027\n"));
        assert_non_null(strstr(res.out, "Cpus_allowed_list:\t0\n"));

        /* a failure names its step: no CPU at all */
        plan_init(&p, argv_true);
        p.set_sched = true;
        p.sched = (struct ze_sched){ .policy = SCHED_OTHER };
        run(&p, false, NULL, &res);
        assert_failed(&res, ZE_STEP_AFFINITY, EINVAL, ZE_EXIT_SETUP_FAILED);
}

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
        plan_caps(&p, UINT64_C(1) << CAP_NET_BIND_SERVICE);
        p.cwd = "/";
        p.no_new_privs = true;
        p.filter_mode = ZE_FILTER_INHERITED;
        /* step 0c: the caller's scheduling */
        p.set_sched = true;
        p.sched = (struct ze_sched){ .policy = SCHED_BATCH, .nice = 3, .oom_score_adj = 10, .umask = 022 };
        assert_return_code(sched_getaffinity(0, sizeof(p.sched.affinity), (cpu_set_t *) (void *) p.sched.affinity),
                           errno);
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

static const struct CMUnitTest plain[] = {
        tu_test(test_step_names),
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
        tu_test(test_hold),
        tu_test(test_signals_default_skips_the_reset),
        tu_test(test_signals_reset_only_those_named),
        tu_test(test_hold_quiet),
        tu_test(test_lsm_label),
};
static const struct CMUnitTest root[] = {
        tu_test(test_sched),
        tu_test(test_full_plan),
        tu_test(test_setns),
        tu_test(test_chroot),
        tu_test(test_worker_syscalls_listed),
};

CHILD_TESTS_MAIN(CHILD_TEST_GROUP("plain", "child", plain),
                 CHILD_TEST_GROUP("root", "child-root", root, .needs_root = true))
