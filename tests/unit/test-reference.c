/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of engine/plan.c, reference/reference.c and the zygote-ref helper: plan packing
 * (round trip, corrupt buffers, limits), a real reference process with a small filter, workers
 * spawned through it (the test's children, with the reference's filter), a reference that dies,
 * malformed requests, and the inherit-tier probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
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

#define BLOCKED_ERRNO 95

/* Allows everything but one system call, which fails with errnum. */
#define FILTER_BLOCKING(sysnr, errnum) { TU_BPF_FAIL_ONLY(sysnr, errnum) }

static struct sock_filter block_personality[] = FILTER_BLOCKING(__NR_personality, BLOCKED_ERRNO);
static struct sock_filter block_setresuid[] = FILTER_BLOCKING(__NR_setresuid, EPERM);

static char helper[PATH_MAX];
static int helper_fd = -EBADF; /* zr_helper_open(helper) */
static char try_syscall[PATH_MAX];
static char path_buf[PATH_MAX];
static char *const test_env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };

static void plan_init(struct ze_plan *p, char *const *argv) {
        ze_plan_init(p, argv, test_env, path_buf, sizeof(path_buf));
        p->filter_mode = ZE_FILTER_LOAD; /* ignored by the reference */
}

/* Whether the reference's fd is its closer helper's /proc/self/syscall, which the helper opens
 * as it starts (where it may: common/fd-closer.h), at a moment of its own. */
static bool is_helper_syscall_file(pid_t pid, int fd) {
        char path[64], link[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
        n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
                return false;
        link[n] = 0;
        return strncmp(link, "/proc/", 6) == 0 && n > 8 && strcmp(link + n - 8, "/syscall") == 0;
}

/* The reference keeps fds 0 to 3 and its fd closer's (common/fd-closer.h, made at its start:
 * two pipes and the helper's pidfd, and maybe its /proc/self/syscall) only: nothing a request
 * brought stays behind. */
static void assert_ref_fds_clean(const struct zr_reference *r) {
        char path[64], link[64];
        int pipes = 0, pidfds = 0;

        for (int fd = 4; fd < 64; fd++) {
                ssize_t n;

                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) r->pidref.pid, fd);
                n = readlink(path, link, sizeof(link) - 1);
                if (n < 0)
                        continue;
                link[n] = 0;
                if (strcmp(link, "anon_inode:[pidfd]") == 0)
                        pidfds++;
                else if (!is_helper_syscall_file(r->pidref.pid, fd)) {
                        assert_true(strncmp(link, "pipe:", 5) == 0);
                        pipes++;
                }
        }
        assert_int_equal(pipes, 4);
        assert_int_equal(pidfds, 1);
}

static const char *field(const char *text, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);

        for (const char *l = text; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0)
                if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
                        const char *v = l + klen + 1, *e;

                        v += strspn(v, " \t");
                        e = strchrnul(v, '\n');
                        assert_true((size_t) (e - v) < size);
                        memcpy(buf, v, (size_t) (e - v));
                        buf[e - v] = 0;
                        return buf;
                }
        return NULL;
}

static void file_field(pid_t pid, const char *key, char *buf, size_t size) {
        char path[64], text[8192];
        _cleanup_close_ int fd = -EBADF;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        tu_read_all(fd, text, sizeof(text));
        if (!field(text, key, buf, size))
                fail_msg("no %s in %s", key, path);
}

struct worker {
        int code;
        int n_recs;
        struct ze_status rec;
        char out[16384];
};

/* Spawns argv through the reference with stdout on a pipe; collects output, records, exit. */
static int spawn_through(struct zr_reference *r, char *const *argv, const char *cwd, struct worker *w) {
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        _cleanup_(zc_pidref_done) struct zc_pidref worker = ZC_PIDREF_NULL;
        struct ze_fdmap map[1];
        struct ze_plan p;
        siginfo_t si = { 0 };
        int k;

        memset(w, 0, sizeof(*w));
        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        assert_return_code(pipe2(out, O_CLOEXEC), errno);
        map[0] = (struct ze_fdmap){ .src = out[1], .target = 1 };
        plan_init(&p, argv);
        p.cwd = cwd;
        p.fds = map;
        p.n_fds = 1;
        p.status_fd = status[1];
        p.no_new_privs = true;
        k = zr_reference_spawn(r, &p, &worker);
        if (k < 0)
                return k;
        assert_true(worker.pid > 0);
        assert_int_equal(fcntl(worker.fd, F_GETFD), FD_CLOEXEC);
        out[1] = safe_close(out[1]);
        status[1] = safe_close(status[1]);
        tu_read_all(out[0], w->out, sizeof(w->out));
        while (tu_read_record(status[0], &w->rec, sizeof(w->rec)))
                w->n_recs++;
        /* works only because the worker is our child (CLONE_PARENT) */
        assert_int_equal(zc_pidref_wait(&worker, WEXITED, &si), 0);
        assert_int_equal(si.si_pid, worker.pid);
        w->code = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        return 0;
}

/* ---- plan packing --------------------------------------------------------------------- */

static void test_plan_round_trip(void **state) {
        static char *const argv[] = { "/bin/echo", "", "two words", NULL };
        static char *const envp[] = { "A=1", "B=", NULL };
        static const gid_t groups[] = { 5, 100, 65534 };
        static const struct sock_fprog prog = { .len = ELEMENTSOF(block_personality),
                                                .filter = block_personality };
        struct ze_fdmap map[] = { { .src = 10, .target = 0 }, { .src = 11, .target = 7 } };
        struct ze_plan p = {
                .argv = argv, .envp = envp, .cwd = "/tmp", .search_path = "/a:/b",
                .fds = map, .n_fds = 2, .status_fd = 12, .hold_fd = 13, .hold_quiet = true, .ctty = true,
                .set_ids = true, .uid = 1000, .gid = 1001, .groups = groups, .n_groups = 3,
                .capbset_drop = UINT64_C(0xfffffffffe), .capbset_mask_prctl = true, .cap_last = 40,
                .caps_keep = 0x21, .set_caps = true, .no_new_privs = true,
                .filter_mode = ZE_FILTER_LOAD, .filter_early = true, .prog = &prog,
                .filter_flags = 3, .ref_pidfd = 14, .path_buf = path_buf, .path_buf_len = 300,
        };
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;
        const struct ze_plan *q = &s.plan;

        /* clone mode: the reference pidfd goes along, the program does not */
        p.filter_mode = ZE_FILTER_CLONE;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 5);
        assert_int_equal(fds[4], 14);
        int got5[] = { 20, 21, 22, 23, 24 };
        assert_int_equal(ze_plan_unpack(buf, len, got5, 5, &s), 0);
        assert_int_equal(s.plan.filter_mode, ZE_FILTER_CLONE);
        assert_int_equal(s.plan.ref_pidfd, 24);
        assert_null(s.plan.prog);
        ze_plan_storage_done(&s);
        free(buf);
        buf = NULL;

        p.filter_mode = ZE_FILTER_LOAD;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 4);
        assert_int_equal(fds[0], 10);
        assert_int_equal(fds[1], 11);
        assert_int_equal(fds[2], 12);
        assert_int_equal(fds[3], 13);
        /* the receiver gets other numbers */
        int got[] = { 20, 21, 22, 23 };
        assert_int_equal(ze_plan_unpack(buf, len, got, 4, &s), 0);

        assert_string_equal(q->argv[0], "/bin/echo");
        assert_string_equal(q->argv[1], "");
        assert_string_equal(q->argv[2], "two words");
        assert_null(q->argv[3]);
        assert_string_equal(q->envp[0], "A=1");
        assert_string_equal(q->envp[1], "B=");
        assert_null(q->envp[2]);
        assert_string_equal(q->cwd, "/tmp");
        assert_string_equal(q->search_path, "/a:/b");
        assert_int_equal(q->n_fds, 2);
        assert_int_equal(q->fds[0].src, 20);
        assert_int_equal(q->fds[0].target, 0);
        assert_int_equal(q->fds[1].src, 21);
        assert_int_equal(q->fds[1].target, 7);
        assert_int_equal(q->status_fd, 22);
        assert_int_equal(q->hold_fd, 23);
        assert_int_equal(q->ref_pidfd, -EBADF); /* only in clone mode */
        assert_true(q->ctty && q->set_ids && q->capbset_mask_prctl && q->set_caps && q->no_new_privs &&
                    q->filter_early && q->hold_quiet);
        assert_int_equal(q->uid, 1000);
        assert_int_equal(q->gid, 1001);
        assert_int_equal(q->n_groups, 3);
        assert_memory_equal(q->groups, groups, sizeof(groups));
        assert_int_equal(q->capbset_drop, UINT64_C(0xfffffffffe));
        assert_int_equal(q->cap_last, 40);
        assert_int_equal(q->caps_keep, 0x21);
        assert_int_equal(q->filter_mode, ZE_FILTER_LOAD);
        assert_int_equal(q->filter_flags, 3);
        assert_non_null(q->prog);
        assert_int_equal(q->prog->len, ELEMENTSOF(block_personality));
        assert_memory_equal(q->prog->filter, block_personality, sizeof(block_personality));
        assert_int_equal(q->path_buf_len, 300);
        assert_non_null(q->path_buf);
        memset(q->path_buf, 'x', q->path_buf_len); /* really that big (ASan would say) */
        ze_plan_storage_done(&s);
        assert_null(s.mem);

        /* the minimum: argv only, no status fd */
        static char *const one[] = { "x", NULL };
        struct ze_plan m = { .argv = one, .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        free(buf);
        buf = NULL;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&m, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 0);
        assert_int_equal(ze_plan_unpack(buf, len, NULL, 0, &s), 0);
        assert_string_equal(s.plan.argv[0], "x");
        assert_null(s.plan.envp[0]);
        assert_null(s.plan.cwd);
        assert_null(s.plan.search_path);
        assert_null(s.plan.prog);
        assert_null(s.plan.path_buf);
        assert_int_equal(s.plan.status_fd, -EBADF);
        assert_int_equal(s.plan.hold_fd, -EBADF);
        ze_plan_storage_done(&s);
}

/* The caller's rlimits and cgroup directories travel to the reference; its namespaces and root
 * never do (the worker that joins them is forked by zygoted). */
static void test_plan_caller_confinement(void **state) {
        static char *const argv[] = { "/bin/true", NULL };
        struct ze_plan p = { .argv = argv, .status_fd = 12, .hold_fd = -1, .ref_pidfd = -1,
                             .filter_mode = ZE_FILTER_INHERITED, .n_rlimits = 2, .n_cgroups = 2,
                             .cgroup_fds = { 30, 31 } };
        int fds[ZE_PLAN_MAX_FDS], got[] = { 40, 41, 42 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;

        p.rlimits[0] = (struct ze_rlimit){ .resource = 6, .cur = 30, .max = 31 };
        p.rlimits[1] = (struct ze_rlimit){ .resource = 7, .cur = 64, .max = UINT64_MAX };
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 3);
        assert_int_equal(fds[0], 30);
        assert_int_equal(fds[1], 31);
        assert_int_equal(fds[2], 12);
        assert_int_equal(ze_plan_unpack(buf, len, got, 3, &s), 0);
        assert_int_equal(s.plan.n_cgroups, 2);
        assert_int_equal(s.plan.cgroup_fds[0], 40);
        assert_int_equal(s.plan.cgroup_fds[1], 41);
        assert_int_equal(s.plan.status_fd, 42);
        assert_int_equal(s.plan.n_rlimits, 2);
        assert_memory_equal(s.plan.rlimits, p.rlimits, 2 * sizeof(struct ze_rlimit));
        ze_plan_storage_done(&s);
        /* one fd short: the cgroup directories count */
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), -EBADMSG);

        p.ns_join = 0x40000000; /* CLONE_NEWNET */
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
        p.ns_join = 0;
        p.enter_root = true;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
}

/* The caller's scheduling and inheritable set travel to the reference as they are; a umask that
 * is not one is refused. */
static void test_plan_caller_sched(void **state) {
        static char *const argv[] = { "/bin/true", NULL };
        struct ze_plan p = { .argv = argv, .status_fd = 12, .hold_fd = -1, .ref_pidfd = -1,
                             .filter_mode = ZE_FILTER_INHERITED, .caps_keep = 0x3000, .caps_inh_drop = ~0x2000ULL,
                             .set_sched = true,
                             .sched = { .policy = 3, .nice = 10, .ioprio = 3 << 13, .oom_score_adj = -17,
                                        .umask = 077, .affinity = { 1, 0, 4 } } };
        int fds[ZE_PLAN_MAX_FDS], got[] = { 40 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ void *buf = NULL;
        struct ze_plan_storage s;
        uint32_t umask_bad = 01000;

        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), 0);
        assert_true(s.plan.set_sched);
        assert_memory_equal(&s.plan.sched, &p.sched, sizeof(p.sched));
        assert_int_equal(s.plan.caps_inh_drop, p.caps_inh_drop);
        assert_int_equal(s.plan.caps_keep, p.caps_keep);
        ze_plan_storage_done(&s);

        /* the umask sits at a fixed place in the header: after 18 words and 4 quadwords, 5 words in */
        memcpy((char *) buf + 18 * 4 + 4 * 8 + 5 * 4, &umask_bad, sizeof(umask_bad));
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), -EBADMSG);
}

static void test_plan_corrupt(void **state) {
        static char *const argv[] = { "/bin/true", "a", NULL };
        static char *const envp[] = { "X=y", NULL };
        struct ze_fdmap map[] = { { .src = 10, .target = 1 } };
        struct ze_plan p = { .argv = argv, .envp = envp, .cwd = "/", .fds = map, .n_fds = 1,
                             .status_fd = 11, .hold_fd = -1, .ref_pidfd = -1,
                             .path_buf = path_buf, .path_buf_len = 64 };
        int fds[ZE_PLAN_MAX_FDS], got[] = { 30, 31, 32 };
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        _cleanup_free_ char *buf = NULL;
        char *copy;
        struct ze_plan_storage s;
        unsigned ok = 0;

        assert_int_equal(ze_plan_pack(&p, (void **) &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, 2);
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), 0);
        ze_plan_storage_done(&s);

        /* every truncation, and one byte too many */
        copy = malloc(len + 1);
        assert_non_null(copy);
        for (size_t l = 0; l < len; l++) {
                memcpy(copy, buf, l);
                assert_int_equal(ze_plan_unpack(copy, l, got, 2, &s), -EBADMSG);
        }
        memcpy(copy, buf, len);
        copy[len] = 0;
        assert_int_equal(ze_plan_unpack(copy, len + 1, got, 2, &s), -EBADMSG);

        /* wrong fd counts, a negative fd */
        assert_int_equal(ze_plan_unpack(buf, len, got, 1, &s), -EBADMSG);
        assert_int_equal(ze_plan_unpack(buf, len, got, 3, &s), -EBADMSG);
        got[1] = -1;
        assert_int_equal(ze_plan_unpack(buf, len, got, 2, &s), -EBADMSG);
        got[1] = 31;

        /* the last string loses its NUL */
        memcpy(copy, buf, len);
        copy[len - 1] = 'x';
        assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);

        /* string counts that do not match the string area (n_argv at 16, n_envp at 20) */
        {
                uint32_t v;

                memcpy(copy, buf, len);
                v = 0;
                memcpy(copy + 20, &v, sizeof(v));
                assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);
                memcpy(copy, buf, len);
                v = 3;
                memcpy(copy + 16, &v, sizeof(v));
                assert_int_equal(ze_plan_unpack(copy, len, got, 2, &s), -EBADMSG);
        }

        /* every single byte of the buffer set to each of a few values: never a crash; either
         * rejected or a consistent plan */
        static const unsigned char values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
        for (size_t i = 0; i < len; i++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        int r;

                        memcpy(copy, buf, len);
                        copy[i] = (char) values[v];
                        r = ze_plan_unpack(copy, len, got, 2, &s);
                        assert_true(r == 0 || r == -EBADMSG);
                        if (r == 0) {
                                ok++;
                                assert_non_null(s.plan.argv[0]);
                                for (char *const *a = s.plan.argv; *a; a++)
                                        (void) strlen(*a);
                                for (char *const *e = s.plan.envp; *e; e++)
                                        (void) strlen(*e);
                                assert_true(s.plan.n_fds <= ZE_MAX_FDS);
                                ze_plan_storage_done(&s);
                        }
                }
        assert_true(ok > 0); /* some bytes (uid, caps, string contents) are free-form */
        free(copy);
}

static void test_plan_limits(void **state) {
        static char *const argv[] = { "x", NULL };
        struct ze_fdmap map[ZE_MAX_FDS + 1];
        struct ze_plan p = { .argv = argv, .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        int fds[ZE_PLAN_MAX_FDS];
        size_t n_fds = ZE_PLAN_MAX_FDS, len;
        void *buf = NULL;
        char **big;

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                map[i] = (struct ze_fdmap){ .src = 3, .target = (int) i };
        p.fds = map;
        p.n_fds = ZE_MAX_FDS + 1;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -E2BIG);
        p.n_fds = ZE_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), 0);
        assert_int_equal(n_fds, ZE_MAX_FDS);
        free(buf);
        buf = NULL;

        /* a fd list too small */
        n_fds = 3;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -ENOBUFS);
        p.n_fds = 0;

        /* a quiet hold without a hold fd */
        p.hold_quiet = true;
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EINVAL);
        p.hold_quiet = false;

        /* no argv */
        struct ze_plan none = { .status_fd = -1, .hold_fd = -1, .ref_pidfd = -1 };
        n_fds = ZE_PLAN_MAX_FDS;
        assert_int_equal(ze_plan_pack(&none, &buf, &len, fds, &n_fds), -EINVAL);

        /* clone mode without a pidfd */
        p.filter_mode = ZE_FILTER_CLONE;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -EBADF);
        p.filter_mode = ZE_FILTER_NONE;

        /* more than one message can carry */
        big = calloc(4, sizeof(char *));
        assert_non_null(big);
        big[0] = "x";
        big[1] = malloc(ZE_PLAN_MAX_SIZE);
        assert_non_null(big[1]);
        memset(big[1], 'a', ZE_PLAN_MAX_SIZE - 1);
        big[1][ZE_PLAN_MAX_SIZE - 1] = 0;
        p.argv = big;
        assert_int_equal(ze_plan_pack(&p, &buf, &len, fds, &n_fds), -E2BIG);
        free(big[1]);
        free(big);
        assert_null(buf);
}

/* ---- the reference process --------------------------------------------------------------- */

static int start(const struct sock_filter *f, size_t n, struct zr_reference *r) {
        return zr_reference_start(helper_fd, f, n, 0, true, 0, r);
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
        assert_int_equal(zr_reference_start(-EBADF, block_personality,
                                            ELEMENTSOF(block_personality), 0, true, 0, &r), -EINVAL);
        assert_true(not_exec >= 0);
        assert_int_equal(zr_reference_start(not_exec, block_personality,
                                            ELEMENTSOF(block_personality), 0, true, 0, &r), -EACCES);
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
                skip(); /* only root's probe switches to another uid */
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

        assert_int_equal(zr_reference_start(fd, block_personality, ELEMENTSOF(block_personality), 0,
                                            true, 0, &r), 0);
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
        const char *t = getenv("ZYGOTE_TRY_SYSCALL");

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
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                tu_test(test_plan_round_trip),
                tu_test(test_plan_caller_confinement),
                tu_test(test_plan_caller_sched),
                tu_test(test_plan_corrupt),
                tu_test(test_plan_limits),
                tu_test(test_spawn),
                tu_test(test_reference_dies),
                tu_test(test_reference_stuck),
                tu_test(test_start_failures),
                tu_test(test_malformed_requests),
                tu_test(test_probe_inherit),
                tu_test(test_probe_inherit_hidden_helper),
                tu_test(test_helper_path),
        };

        return cmocka_run_group_tests_name("reference", tests, setup, NULL);
}
