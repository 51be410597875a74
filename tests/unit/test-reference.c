/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of reference/reference.c and the zygote-ref helper: a real reference process with a
 * small filter, workers spawned through it (the test's children, with the reference's filter), a
 * reference that dies, malformed requests, and the inherit-tier probe. Plan packing is in
 * test-reference-plan.c; the helpers both use in reference-fixtures.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "plan.h"
#include "reference.h"
#include "util.h"
#include "worker-nocopy.h"

#include "reference-fixtures.h"

/* ---- the reference process --------------------------------------------------------------- */

/* ZYTEST_FORK_WORKERS=1 (the ctest entry unit-reference-forked): every reference of these tests
 * forks its workers, the fallback of worker-nocopy.h. */
static unsigned forced_ref_flags;

static int start(const struct sock_filter *f, size_t n, struct zr_reference *r) {
        return zr_reference_start_ns(helper_fd, f, n, 0, true, 0, -EBADF, -EBADF, forced_ref_flags, r);
}

static void test_spawn(void **state) {
        char *const argv_status[] = { "/bin/cat", "/proc/self/status", NULL };
        char *const argv_try[] = { try_syscall, "personality", "0xffffffff", NULL };
        char *const argv_true[] = { "/bin/true", NULL };
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct worker w;
        char buf[64], want[32];

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        assert_true(r.pidref.pid > 0 && r.pidref.fd >= 0 && r.ctl_fd >= 0);
        assert_int_equal(fcntl(r.ctl_fd, F_GETFD), FD_CLOEXEC);
        assert_int_equal(fcntl(r.pidref.fd, F_GETFD), FD_CLOEXEC);

        /* the reference itself: filtered, nnp, in its own session, fds 0-3 and its closer's */
        file_field(r.pidref.pid, "Seccomp_filters", buf, sizeof(buf));
        assert_string_equal(buf, "1");
        file_field(r.pidref.pid, "NoNewPrivs", buf, sizeof(buf));
        assert_string_equal(buf, "1");
        {
                char path[64];
                int n = 0;

                for (int fd = 0; fd < 64; fd++) {
                        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) r.pidref.pid, fd);
                        if (access(path, F_OK) == 0 && !is_helper_syscall_file(r.pidref.pid, fd))
                                n++;
                }
                assert_int_equal(n, 4 + 5);
                assert_ref_fds_clean(&r);
        }

        /* a worker: our child, with the reference's filter */
        assert_int_equal(spawn_through(&r, argv_status, "/", &w), 0);
        assert_int_equal(w.n_recs, 0);
        assert_int_equal(w.code, 0);
        assert_non_null(field(w.out, "Seccomp_filters", buf, sizeof(buf)));
        assert_string_equal(buf, "1");
        assert_non_null(field(w.out, "PPid", buf, sizeof(buf)));
        snprintf(want, sizeof(want), "%d", (int) getpid());
        assert_string_equal(buf, want);

        /* and the filter is the reference's */
        assert_int_equal(spawn_through(&r, argv_try, NULL, &w), 0);
        assert_int_equal(w.code, 0);
        assert_string_equal(w.out, "personality errno=95\n");

        /* a worker that fails before exec reports it as usual */
        assert_int_equal(spawn_through(&r, argv_true, "/nonexistent-zygote-test", &w), 0);
        assert_int_equal(w.n_recs, 1);
        assert_int_equal(w.rec.step, ZE_STEP_CHDIR);
        assert_int_equal(w.rec.err, ENOENT);
        assert_int_equal(w.code, ZE_EXIT_SETUP_FAILED);

        /* many in a row: no fd leaks in the reference */
        for (int i = 0; i < 50; i++) {
                assert_int_equal(spawn_through(&r, argv_true, NULL, &w), 0);
                assert_int_equal(w.code, 0);
        }
        assert_ref_fds_clean(&r);

        zr_reference_stop(&r);
        assert_int_equal(r.pidref.fd, -EBADF);
        assert_int_equal(r.ctl_fd, -EBADF);
}

/* A worker held at a quiet gate (as the daemon holds every worker of the reference until its task
 * is attached): by default it shares the reference's memory (kcmp KCMP_VM) and has announced
 * itself, the reference suspended until its exec; with ZR_REF_INIT_FORK_WORKERS it is a fork, a copy.
 * Either way it runs once the gate opens, with the reference's filter. */
static void held_worker(unsigned ref_flags, bool want_shared) {
        char *const argv_try[] = { try_syscall, "personality", "0xffffffff", NULL };
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF },
                                 hold[2] = { -EBADF, -EBADF };
        struct zc_pidref worker = ZC_PIDREF_NULL;
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct ze_fdmap map[1];
        struct ze_plan p;
        siginfo_t si = { 0 };
        char got[64] = "";

        assert_int_equal(zr_reference_start_ns(helper_fd, block_personality, ELEMENTSOF(block_personality), 0, true, 0,
                                               -EBADF, -EBADF, ref_flags, &r),
                         0);
        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        assert_return_code(pipe2(out, O_CLOEXEC), errno);
        assert_return_code(pipe2(hold, O_CLOEXEC), errno);
        map[0] = (struct ze_fdmap){ .src = out[1], .target = 1 };
        plan_init(&p, argv_try);
        p.fds = map;
        p.n_fds = 1;
        p.status_fd = status[1];
        p.hold_fd = hold[0];
        p.hold_quiet = true;
        p.no_new_privs = true;
        assert_int_equal(zr_reference_spawn(&r, &p, &worker), 0);
        /* held: the reference made it and the reply came, the exec has not */
        assert_int_equal(syscall(SYS_kcmp, worker.pid, r.pidref.pid, KCMP_VM, 0, 0) == 0, want_shared);
        assert_int_equal(write(hold[1], "", 1), 1);
        out[1] = safe_close(out[1]);
        status[1] = safe_close(status[1]);
        hold[1] = safe_close(hold[1]);
        tu_read_all(out[0], got, sizeof(got));
        assert_string_equal(got, "personality errno=95\n");
        assert_int_equal(zc_pidref_wait(&worker, WEXITED, &si), 0);
        assert_int_equal(si.si_code, CLD_EXITED);
        assert_int_equal(si.si_status, 0);
        zc_pidref_done(&worker);
        /* and the reference serves on */
        {
                char *const argv_true[] = { "/bin/true", NULL };
                struct worker w;

                assert_int_equal(spawn_through(&r, argv_true, NULL, &w), 0);
                assert_int_equal(w.code, 0);
        }
        zr_reference_stop(&r);
}

/* An ASan build's zygote-ref runs with ASan's signal handlers installed, and a reference whose
 * dispositions are not all SIG_DFL forks its workers (zygote-ref.c, check_signals_pristine): the
 * memory-sharing path cannot be reached there, and is tested in the plain build. */
static bool vfork_reachable(void) {
        if (forced_ref_flags & ZR_REF_INIT_FORK_WORKERS) {
                fprintf(stderr, "skipped: ZYTEST_FORK_WORKERS forks every worker\n");
                return false;
        }
#if defined(__SANITIZE_ADDRESS__)
        fprintf(stderr, "skipped: an ASan build's reference has ASan's signal handlers, so it forks every worker\n");
        return false;
#else
        return true;
#endif
}

static void test_worker_shares_memory(void **state) {
        if (!vfork_reachable())
                skip();
        held_worker(0, true);
}

static void test_worker_forked_when_disabled(void **state) {
        held_worker(ZR_REF_INIT_FORK_WORKERS, false);
}

/* A worker of /bin/true held at a quiet gate: its plan, pipes and pid. */
struct held {
        int status[2], hold[2];
        struct ze_fdmap map[1];
        struct ze_plan p;
        struct zc_pidref worker;
};

static void held_init(struct held *h) {
        static char *const argv_true[] = { "/bin/true", NULL };

        assert_return_code(pipe2(h->status, O_CLOEXEC), errno);
        assert_return_code(pipe2(h->hold, O_CLOEXEC), errno);
        h->worker = (struct zc_pidref) ZC_PIDREF_NULL;
        plan_init(&h->p, argv_true);
        h->p.status_fd = h->status[1];
        h->p.hold_fd = h->hold[0];
        h->p.hold_quiet = true;
        h->p.no_new_privs = true;
}

/* Opens its gate and reaps it: exit 0. */
static void held_release(struct held *h) {
        siginfo_t si = { 0 };

        assert_int_equal(write(h->hold[1], "", 1), 1);
        assert_int_equal(zc_pidref_wait(&h->worker, WEXITED, &si), 0);
        assert_int_equal(si.si_code, CLD_EXITED);
        assert_int_equal(si.si_status, 0);
        zc_pidref_done(&h->worker);
        for (int i = 0; i < 2; i++) {
                safe_close(h->status[i]);
                safe_close(h->hold[i]);
        }
}

static bool shares_memory(const struct held *h, const struct zr_reference *r) {
        return syscall(SYS_kcmp, h->worker.pid, r->pidref.pid, KCMP_VM, 0, 0) == 0;
}

/* Workers held at their gates side by side (blocked before their exec, as one on a FUSE file that
 * never answers is), each sharing the reference's memory: the reference answered every request
 * while the earlier workers still blocked, so it is never suspended by them. With every slot
 * busy the next worker is forked; once a worker has left (its exec), its slot serves again. */
static void test_workers_share_memory_side_by_side(void **state) {
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct held h[ZR_NOCOPY_SLOTS + 2];

        if (!vfork_reachable())
                skip();

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        for (size_t i = 0; i <= ZR_NOCOPY_SLOTS; i++) {
                held_init(&h[i]);
                assert_int_equal(zr_reference_spawn(&r, &h[i].p, &h[i].worker), 0);
                assert_int_equal(shares_memory(&h[i], &r), i < ZR_NOCOPY_SLOTS);
        }
        held_release(&h[0]);
        held_init(&h[ZR_NOCOPY_SLOTS + 1]);
        assert_int_equal(zr_reference_spawn(&r, &h[ZR_NOCOPY_SLOTS + 1].p, &h[ZR_NOCOPY_SLOTS + 1].worker), 0);
        assert_true(shares_memory(&h[ZR_NOCOPY_SLOTS + 1], &r));
        for (size_t i = 1; i < ELEMENTSOF(h); i++)
                held_release(&h[i]);
        zr_reference_stop(&r);
}

static void test_reference_dies(void **state) {
        char *const argv_true[] = { "/bin/true", NULL };
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct pollfd pfd;
        struct worker w;
        int k;

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        assert_int_equal(pidfd_kill(r.pidref.fd, SIGKILL), 0);
        /* wait for its death on the pidfd, without reaping it */
        pfd = (struct pollfd){ .fd = r.pidref.fd, .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, -1), 1);

        k = spawn_through(&r, argv_true, NULL, &w);
        assert_true(k == -EPIPE || k == -ECONNRESET);
        k = spawn_through(&r, argv_true, NULL, &w);
        assert_true(k == -EPIPE || k == -ECONNRESET);

        zr_reference_stop(&r);
        zr_reference_stop(&r); /* twice is fine */
        zr_reference_stop(NULL);
        tu_assert_no_children();
}

static void test_reference_stuck(void **state) {
        char *const argv_true[] = { "/bin/true", NULL };
        struct zr_reference r = ZR_REFERENCE_NULL;
        siginfo_t si = { 0 };
        struct pollfd pfd;
        struct worker w;
        int k;

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        assert_int_equal(pidfd_kill(r.pidref.fd, SIGSTOP), 0);
        /* until it is really stopped (not reaped: WNOWAIT) */
        assert_int_equal(pidfd_wait(r.pidref.fd, WSTOPPED | WNOWAIT, &si), 0);
        assert_int_equal(si.si_code, CLD_STOPPED);

        /* bounded: the call gives up instead of blocking the daemon forever... */
        k = spawn_through(&r, argv_true, NULL, &w);
        assert_int_equal(k, -ETIMEDOUT);
        /* ...and the reference is killed, so it cannot fork that worker late */
        pfd = (struct pollfd){ .fd = r.pidref.fd, .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, TU_TIMEOUT_MS), 1);
        k = spawn_through(&r, argv_true, NULL, &w);
        assert_true(k == -EPIPE || k == -ECONNRESET);
        zr_reference_stop(&r);
        tu_assert_no_children();
}

static void test_start_failures(void **state) {
        static struct sock_filter bad[] = { BPF_STMT(BPF_JMP | BPF_JA, 5) };
        struct zr_reference r = ZR_REFERENCE_NULL;

        _cleanup_close_ int not_exec = zr_helper_open("/etc/passwd");

        assert_int_equal(zr_helper_open("/nonexistent-zygote-test/zygote-ref"), -ENOENT);
        assert_int_equal(zr_reference_start(-EBADF, block_personality, ELEMENTSOF(block_personality), 0, true, 0, &r),
                         -EINVAL);
        assert_true(not_exec >= 0);
        assert_int_equal(zr_reference_start(not_exec, block_personality, ELEMENTSOF(block_personality), 0, true, 0, &r),
                         -EACCES);
        /* the kernel refuses the program: the reference says so (and exits on our close) */
        assert_int_equal(start(bad, ELEMENTSOF(bad), &r), -EINVAL);
        assert_int_equal(start(block_personality, 0, &r), -EINVAL);
        assert_int_equal(r.pidref.fd, -EBADF);
        tu_assert_no_children();
}

static void test_malformed_requests(void **state) {
        char *const argv_true[] = { "/bin/true", NULL };
        struct zr_reference r = ZR_REFERENCE_NULL;
        struct zr_ref_header h, bad = { .magic = 0x12345678, .type = ZR_REF_SPAWN };
        struct worker w;
        char junk[100];
        int fds[4];
        size_t n_fds;
        int devnull;

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);

        /* bad magic, with an fd that must not leak */
        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(devnull >= 0);
        assert_int_equal(zr_ref_send(r.ctl_fd, &bad, NULL, 0, &devnull, 1), 0);
        safe_close(devnull);
        assert_int_equal(zr_ref_recv(r.ctl_fd, &h, sizeof(h), fds, 4, &n_fds), sizeof(h));
        assert_int_equal(n_fds, 0);
        assert_int_equal(h.type, ZR_REF_ERROR);
        assert_int_equal(h.err, EBADMSG);

        /* a SPAWN whose plan is garbage */
        memset(junk, 0xa5, sizeof(junk));
        bad.magic = ZR_REF_MAGIC;
        assert_int_equal(zr_ref_send(r.ctl_fd, &bad, junk, sizeof(junk), NULL, 0), 0);
        assert_int_equal(zr_ref_recv(r.ctl_fd, &h, sizeof(h), fds, 4, &n_fds), sizeof(h));
        assert_int_equal(h.type, ZR_REF_ERROR);
        assert_int_equal(h.err, EBADMSG);

        /* a second INIT */
        bad.type = ZR_REF_INIT;
        assert_int_equal(zr_ref_send(r.ctl_fd, &bad, junk, sizeof(junk), NULL, 0), 0);
        assert_int_equal(zr_ref_recv(r.ctl_fd, &h, sizeof(h), fds, 4, &n_fds), sizeof(h));
        assert_int_equal(h.type, ZR_REF_ERROR);
        assert_int_equal(h.err, EALREADY);

        /* shorter than a header */
        assert_int_equal(send(r.ctl_fd, "x", 1, 0), 1);
        assert_int_equal(zr_ref_recv(r.ctl_fd, &h, sizeof(h), fds, 4, &n_fds), sizeof(h));
        assert_int_equal(h.err, EBADMSG);

        /* still serving, and no fd left behind in the reference */
        assert_int_equal(spawn_through(&r, argv_true, NULL, &w), 0);
        assert_int_equal(w.code, 0);
        assert_ref_fds_clean(&r);
        zr_reference_stop(&r);
}

static void test_probe_inherit(void **state) {
        struct zr_reference r = ZR_REFERENCE_NULL;
        bool root = geteuid() == 0;
        char *reason = NULL;
        int k;

        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        k = zr_reference_probe_inherit(&r, helper_fd, root, &reason);
        if (k < 0)
                fail_msg("probe failed: %s", reason ? reason : "?");
        assert_null(reason);
        zr_reference_stop(&r);

        assert_int_equal(start(block_setresuid, ELEMENTSOF(block_setresuid), &r), 0);
        k = zr_reference_probe_inherit(&r, helper_fd, root, &reason);
        if (root) {
                /* the uid switch is what the profile forbids */
                assert_int_equal(k, -EPERM);
                assert_non_null(reason);
                assert_string_equal(reason, "uid: Operation not permitted");
        } else
                assert_int_equal(k, 0); /* an unprivileged daemon's workers switch nothing */
        free(reason);
        zr_reference_stop(&r);

        /* a dead reference: fails, says why, leaves nothing behind */
        assert_int_equal(start(block_personality, ELEMENTSOF(block_personality), &r), 0);
        zr_reference_stop(&r);
        reason = NULL;
        k = zr_reference_probe_inherit(&r, helper_fd, root, &reason);
        assert_true(k < 0);
        assert_non_null(reason);
        free(reason);
}

/* A copy of the helper in a directory only root may search (a build in /root): the probe worker,
 * which runs as nobody when we are root, still execs it, because it gets the fd, not the path. */
static void test_probe_inherit_hidden_helper(void **state) {
        char dir[] = "/tmp/zygote-test-ref-XXXXXX", path[sizeof(dir) + sizeof("/zygote-ref")];
        struct zr_reference r = ZR_REFERENCE_NULL;
        _cleanup_close_ int src = -EBADF, dst = -EBADF, fd = -EBADF;
        char *reason = NULL;
        struct stat st;
        int k;

        if (geteuid() != 0)
                skip();                /* only root's probe switches to another uid */
        assert_non_null(mkdtemp(dir)); /* mode 0700, owned by root */
        snprintf(path, sizeof(path), "%s/zygote-ref", dir);
        src = open(helper, O_RDONLY | O_CLOEXEC);
        assert_true(src >= 0);
        assert_int_equal(fstat(src, &st), 0);
        dst = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        assert_true(dst >= 0);
        while ((k = (int) copy_file_range(src, NULL, dst, NULL, (size_t) st.st_size, 0)) > 0)
                ;
        assert_int_equal(k, 0);
        dst = safe_close(dst);
        /* the probe's uid (nobody) may not search dir: it cannot reach the helper by path */
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(st.st_uid, 0);
        fd = zr_helper_open(path);
        assert_true(fd >= 0);

        assert_int_equal(zr_reference_start(fd, block_personality, ELEMENTSOF(block_personality), 0, true, 0, &r), 0);
        k = zr_reference_probe_inherit(&r, fd, true, &reason);
        if (k < 0)
                fail_msg("probe failed: %s", reason ? reason : "?");
        zr_reference_stop(&r);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

static void test_helper_path(void **state) {
        char buf[PATH_MAX], small[4];
        const char *saved = getenv("ZYGOTE_REF_HELPER");
        char *copy = saved ? strdup(saved) : NULL;

        assert_int_equal(setenv("ZYGOTE_REF_HELPER", "/some/where/zygote-ref", 1), 0);
        assert_int_equal(zr_helper_path(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/some/where/zygote-ref");
        assert_int_equal(zr_helper_path(small, sizeof(small)), -ENAMETOOLONG);

        /* next to this executable (the build root), else the install location */
        unsetenv("ZYGOTE_REF_HELPER");
        assert_int_equal(zr_helper_path(buf, sizeof(buf)), 0);
        assert_true(strlen(buf) > strlen("/zygote-ref"));
        assert_string_equal(buf + strlen(buf) - strlen("/zygote-ref"), "/zygote-ref");
        if (access(buf, X_OK) != 0)
                assert_string_equal(buf, ZYGOTE_LIBEXEC_DIR "/zygote-ref");
        if (copy)
                setenv("ZYGOTE_REF_HELPER", copy, 1);
        free(copy);
}

static void self_dir_file(const char *name, char *buf, size_t size) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char *slash;

        assert_true(n > 0);
        self[n] = 0;
        slash = strrchr(self, '/');
        assert_non_null(slash);
        slash[1] = 0;
        assert_true(strlen(self) + strlen(name) < size);
        strcpy(buf, self);
        strcat(buf, name);
}

static int setup(void **state) {
        const char *t = getenv("ZYGOTE_TRY_SYSCALL"), *fork_workers = getenv("ZYTEST_FORK_WORKERS");

        if (zr_helper_path(helper, sizeof(helper)) < 0 || access(helper, X_OK) != 0 ||
            (helper_fd = zr_helper_open(helper)) < 0) {
                fprintf(stderr, "zygote-ref not found (%s): set ZYGOTE_REF_HELPER\n", helper);
                return -1;
        }
        if (t && *t) {
                if (strlen(t) >= sizeof(try_syscall))
                        return -1;
                strcpy(try_syscall, t);
        } else
                self_dir_file("try-syscall", try_syscall, sizeof(try_syscall));
        if (fork_workers && strcmp(fork_workers, "1") == 0)
                forced_ref_flags = ZR_REF_INIT_FORK_WORKERS;
        return 0;
}

TU_MAIN_GROUP("reference", setup, tu_test(test_spawn), tu_test(test_worker_shares_memory),
              tu_test(test_worker_forked_when_disabled), tu_test(test_workers_share_memory_side_by_side),
              tu_test(test_reference_dies), tu_test(test_reference_stuck), tu_test(test_start_failures),
              tu_test(test_malformed_requests), tu_test(test_probe_inherit), tu_test(test_probe_inherit_hidden_helper),
              tu_test(test_helper_path))
