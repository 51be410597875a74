/* SPDX-License-Identifier: MIT */
/*
 * The two readers of a caller agree (daemon/caller.c): the same live caller read through the BPF
 * task iterator (every thread, the first one too, from one walk: caller-bpf.c,
 * caller-bpf-first.c) and through /proc (ZD_CALLER_READ_PROC) gives the same struct zd_caller,
 * field for field, for callers confined in every way a task carries: ids and groups, capability
 * sets, no_new_privs and a filter, limits, nice, policy (SCHED_RESET_ON_FORK too), real-time
 * priority, I/O priority, CPU affinity, oom_score_adj, umask, namespaces, threads. And the BPF
 * reader reads none of the first thread's /proc files but where its record cannot tell (more
 * groups than it holds).
 *
 *   test-caller-readers   (root, a kernel where the iterator loads: else it skips, with why)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "caller-live.h"
#include "caller-proc.h"
#include "fd-util.h"
#include "probe.h"
#include "util.h"

#define IOPRIO(class, level) ((class) << 13 | (level))

/* How a caller confines itself before it connects. */
struct conf {
        int ngroups;       /* supplementary groups 4200, 4201, ... (0: none) */
        bool ids;          /* uid 1000, euid 1001, saved 1002, and the same gids */
        bool caps;         /* CAP_NET_RAW and CAP_SYS_NICE alone in every set, the bounding set too */
        bool filter;       /* no_new_privs and an allow-all filter */
        bool limits;       /* NOFILE 50/60, CORE 0/0, NPROC 300/400, STACK soft 1 MiB */
        int policy, prio;  /* -1: the default */
        bool reset;        /* SCHED_RESET_ON_FORK */
        int nice;          /* set when not 0 */
        int ioprio;        /* set when not 0 */
        bool cpu0;         /* CPU 0 alone */
        int oom;           /* set when not 0 */
        mode_t umask;      /* 022 is left */
        unsigned unshare;  /* CLONE_NEW* */
        int threads;       /* idle threads more */
        bool first_by_bpf; /* where the BPF reader reads the first thread from its record */
};

static const struct conf confs[] = {
        { .policy = -1, .umask = 022, .first_by_bpf = true },
        { .ngroups = 3,
          .filter = true,
          .limits = true,
          .policy = SCHED_BATCH,
          .nice = 7,
          .ioprio = IOPRIO(2, 3),
          .cpu0 = true,
          .oom = 300,
          .umask = 027,
          .unshare = CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC,
          .first_by_bpf = true },
        { .caps = true,
          .policy = SCHED_FIFO,
          .prio = 5,
          .reset = true,
          .nice = -5,
          .ioprio = IOPRIO(1, 2),
          .oom = 100,
          .umask = 0,
          .unshare = CLONE_NEWNS | CLONE_NEWCGROUP,
          .threads = 3,
          .first_by_bpf = true },
        { .ngroups = 2,
          .ids = true,
          .policy = SCHED_IDLE,
          .nice = 19,
          .ioprio = IOPRIO(3, 0),
          .umask = 077,
          .threads = 15,
          .first_by_bpf = true },
        /* more groups than the record holds: the first thread through /proc */
        { .ngroups = 40, .policy = SCHED_OTHER, .reset = true, .nice = -3, .umask = 022, .threads = 15 },
        /* the I/O priority a nice value gives, set explicitly; a real-time round robin */
        { .policy = SCHED_RR, .prio = 1, .ioprio = IOPRIO(2, 4), .umask = 022, .first_by_bpf = true },
        { .policy = -1, .ioprio = IOPRIO(2, 4), .umask = 022, .limits = true, .first_by_bpf = true },
        /* a user namespace of its own (refused later, by spawn-identity.c: read the same) */
        { .policy = -1, .umask = 022, .unshare = CLONE_NEWUSER, .first_by_bpf = true },
        /* as many groups as the record holds, and one more */
        { .ngroups = ZD_CALLER_BPF_GROUPS, .policy = -1, .umask = 022, .first_by_bpf = true },
        { .ngroups = ZD_CALLER_BPF_GROUPS + 1, .policy = -1, .umask = 022 },
};

static void *idle(void *arg) {
        for (;;)
                pause();
        return arg;
}

static int keep_caps(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        uint32_t keep = 1u << CAP_NET_RAW | 1u << CAP_SYS_NICE;
        struct __user_cap_data_struct d[2] = { { .effective = keep, .permitted = keep, .inheritable = keep } };

        for (int cap = 0; cap < 64; cap++)
                if (cap != CAP_NET_RAW && cap != CAP_SYS_NICE && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
                    errno != EINVAL)
                        return -1;
        return (int) syscall(SYS_capset, &h, d);
}

static int set_limits(void) {
        struct rlimit nofile = { 50, 60 }, core = { 0, 0 }, nproc = { 300, 400 }, stack;

        if (getrlimit(RLIMIT_STACK, &stack) < 0)
                return -1;
        stack.rlim_cur = 1024 * 1024;
        return setrlimit(RLIMIT_NOFILE, &nofile) < 0 || setrlimit(RLIMIT_CORE, &core) < 0 ||
                               setrlimit(RLIMIT_NPROC, &nproc) < 0 || setrlimit(RLIMIT_STACK, &stack) < 0
                       ? -1
                       : 0;
}

static int set_sched(const struct conf *c) {
        struct sched_param sp = { .sched_priority = c->prio };
        char oom[16];
        int fd, n;

        if (c->nice && setpriority(PRIO_PROCESS, 0, c->nice) < 0)
                return -1;
        if (c->ioprio && syscall(SYS_ioprio_set, 1, 0, c->ioprio) < 0)
                return -1;
        if (c->policy >= 0 && sched_setscheduler(0, c->policy | (c->reset ? SCHED_RESET_ON_FORK : 0), &sp) < 0)
                return -1;
        if (c->cpu0) {
                cpu_set_t cpus;

                CPU_ZERO(&cpus);
                CPU_SET(0, &cpus);
                if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
                        return -1;
        }
        if (c->oom) {
                n = snprintf(oom, sizeof(oom), "%d", c->oom);
                fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, oom, (size_t) n) != n)
                        return -1;
                close(fd);
        }
        umask(c->umask);
        return 0;
}

/* The caller: confines itself as c says, then hands over its end of a socketpair and waits. */
static int confine(const struct conf *c) {
        struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = 1, .filter = allow };
        gid_t groups[64];

        for (int i = 0; i < c->ngroups; i++)
                groups[i] = (gid_t) (4200 + i);
        if (syscall(SYS_setgroups, c->ngroups, groups) < 0)
                return 2;
        if ((c->unshare & ~CLONE_NEWUSER) && unshare((int) (c->unshare & ~CLONE_NEWUSER)) < 0)
                return 3;
        if (c->limits && set_limits() < 0)
                return 4;
        if (set_sched(c) < 0)
                return 5;
        if (c->caps && keep_caps() < 0)
                return 6;
        if (c->ids && (syscall(SYS_setresgid, 1000, 1001, 1002) < 0 || syscall(SYS_setresuid, 1000, 1001, 1002) < 0 ||
                       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
                return 7;
        if ((c->unshare & CLONE_NEWUSER) && unshare(CLONE_NEWUSER) < 0)
                return 8;
        if (c->filter &&
            (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0))
                return 9;
        for (int i = 0; i < c->threads; i++) {
                pthread_attr_t attr;
                pthread_t t;

                if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 64 * 1024) != 0 ||
                    pthread_create(&t, &attr, idle, NULL) != 0)
                        return 10;
        }
        return 0;
}

struct caller {
        pid_t pid;
        int sock, release;
        struct ucred cred;
};

static void caller_start(const struct conf *c, struct caller *ret) {
        int xfer[2], hold[2];
        pid_t pid;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, xfer), 0);
        assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct iovec iov = { .iov_base = (char *) "s", .iov_len = 1 };
                int sp[2], r;
                char b;

                close(xfer[0]);
                close(hold[1]);
                r = confine(c);
                if (r != 0) {
                        fprintf(stderr, "caller: confining step %d: %s\n", r, strerror(errno));
                        _exit(r);
                }
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
                    send_fds(xfer[1], &iov, 1, &sp[0], 1, 0) < 0)
                        _exit(11);
                (void) read(hold[0], &b, 1);
                _exit(0);
        }
        close(xfer[1]);
        close(hold[0]);
        ret->sock = tu_recv_fd(xfer[0]);
        close(xfer[0]);
        assert_true(ret->sock >= 0);
        ret->pid = pid;
        ret->release = hold[1];
        ret->cred = (struct ucred){ .pid = pid, .uid = c->ids ? 1000 : 0, .gid = c->ids ? 1000 : 0 };
}

static void caller_stop(struct caller *p) {
        int st;

        safe_close(p->release);
        safe_close(p->sock);
        assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

static int bpf_load = 1; /* not tried */

static void skip_unless_both_readers(void) {
        skip_unless_root("setgroups, real-time policies, namespaces, and a BPF iterator");
        if (ze_feature_disabled("caller_bpf")) {
                fprintf(stderr, "skip: ZYGOTE_DISABLE_FEATURES=caller_bpf: one reader only\n");
                skip();
        }
        if (bpf_load < 0) {
                fprintf(stderr, "skip: the BPF task iterator does not load here (%s)\n", strerror(-bpf_load));
                skip();
        }
}

/* What the caller set, as a task of it would start with: so that two readers wrong the same way
 * fail too. */
static void check_values(const struct conf *conf, const struct zd_caller *c) {
        int policy = conf->policy < 0 ? SCHED_OTHER : conf->policy;
        bool rt = policy == SCHED_FIFO || policy == SCHED_RR;

        assert_int_equal(c->n_groups, conf->ngroups);
        for (int i = 0; i < conf->ngroups; i++)
                assert_int_equal(c->groups[i], 4200 + i);
        assert_int_equal(c->euid, conf->ids ? 1001 : 0);
        assert_int_equal(c->egid, conf->ids ? 1001 : 0);
        assert_int_equal(c->no_new_privs, conf->filter);
        assert_int_equal(c->seccomp_mode, conf->filter ? 2 : 0);
        if (conf->caps)
                assert_true(c->cap_bnd == (1ull << CAP_NET_RAW | 1ull << CAP_SYS_NICE));
        /* SCHED_RESET_ON_FORK: a real-time policy and a negative nice are not a child's */
        assert_int_equal(c->sched.policy, conf->reset && rt ? SCHED_OTHER : policy);
        assert_int_equal(c->sched.priority, conf->reset && rt ? 0 : conf->prio);
        assert_int_equal(c->sched.nice, conf->reset && conf->nice < 0 ? 0 : conf->nice);
        assert_int_equal(c->sched.umask, conf->umask);
        assert_int_equal(c->sched.oom_score_adj, conf->oom);
        if (conf->ioprio && conf->ioprio != IOPRIO(2, (c->sched.nice + 20) / 5))
                assert_int_equal(c->sched.ioprio, conf->ioprio);
        if (conf->cpu0)
                assert_true(c->sched.affinity[0] == 1);
        if (conf->limits)
                assert_true(c->rlimits[RLIMIT_NOFILE].cur == 50 && c->rlimits[RLIMIT_NOFILE].max == 60 &&
                            c->rlimits[RLIMIT_CORE].max == 0 && c->rlimits[RLIMIT_NPROC].cur == 300 &&
                            c->rlimits[RLIMIT_STACK].cur == 1024 * 1024);
        if (conf->unshare & CLONE_NEWUSER)
                assert_string_equal(c->ns_other ? c->ns_other : "", "user");
        else
                assert_int_equal(c->ns_join, conf->unshare);
}

/* zygoted's own scheduling, which a task's is compared with: read in the BPF walk (a) where it
 * read the first thread, as zd_caller_own_sched() reads it (the /proc reader's, b, has none). */
static void check_own(const struct zd_caller *a, const struct zd_caller *b, bool by_bpf) {
        struct ze_sched own;

        assert_int_equal(a->has_own_sched, by_bpf);
        assert_false(b->has_own_sched);
        if (!by_bpf)
                return;
        assert_int_equal(zd_caller_own_sched(&own), 0);
        assert_memory_equal(&a->own_sched, &own, sizeof(own));
}

/* Whether a process here may make a user namespace (a chroot may not: EPERM), tried in a child. */
static bool user_ns_allowed(void) {
        int status = 0;
        pid_t pid = fork();

        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                return false;
        if (WEXITSTATUS(status) != 0)
                fprintf(stderr, "skip: no user namespace may be made here (%s)\n", strerror(WEXITSTATUS(status)));
        return WEXITSTATUS(status) == 0;
}

static void test_readers_agree(void **state) {
        const struct conf *conf = *state;
        struct zd_caller_conn *bpf = NULL, *proc = NULL;
        struct zd_caller a = ZD_CALLER_INIT, b = ZD_CALLER_INIT, once = ZD_CALLER_INIT;
        struct caller p;

        skip_unless_both_readers();
        if ((conf->unshare & CLONE_NEWUSER) && !user_ns_allowed())
                skip();
        caller_start(conf, &p);
        assert_non_null(zd_caller_conn_get(&bpf, ZD_CALLER_KEEP | ZD_CALLER_KEEP_THREADS));
        assert_non_null(zd_caller_conn_get(&proc, ZD_CALLER_KEEP | ZD_CALLER_KEEP_THREADS | ZD_CALLER_READ_PROC));
        /* twice each: the first call of a connection, and a later one through what it kept */
        for (int round = 0; round < 2; round++) {
                zd_caller_done(&a);
                zd_caller_done(&b);
                a = (struct zd_caller) ZD_CALLER_INIT;
                b = (struct zd_caller) ZD_CALLER_INIT;
                assert_int_equal(zd_caller_read(p.sock, &p.cred, bpf, &a), 0);
                assert_int_equal(zd_caller_read(p.sock, &p.cred, proc, &b), 0);
                assert_same(&a, &b);
                assert_int_equal(a.seccomp_filters, b.seccomp_filters);
                check_values(conf, &a);
                check_own(&a, &b, conf->first_by_bpf);
        }
        /* and through the SO_PEERCRED path (its real uid checked), nothing kept */
        assert_int_equal(zd_caller_read(-1, &p.cred, NULL, &once), 0);
        assert_same(&once, &b);
        /* the BPF reader read the first thread from its record, or through /proc where it cannot */
        assert_int_equal(bpf->status_fd < 0, conf->first_by_bpf);
        assert_int_equal(bpf->limits_fd < 0, conf->first_by_bpf);
        assert_int_equal(bpf->oom_fd < 0, conf->first_by_bpf);
        assert_int_equal(bpf->ns_fd < 0, conf->first_by_bpf);
        assert_true(proc->status_fd >= 0 && proc->bpf_link_fd < 0);
        zd_caller_done(&a);
        zd_caller_done(&b);
        zd_caller_done(&once);
        zd_caller_conn_free(bpf);
        zd_caller_conn_free(proc);
        caller_stop(&p);
}

/* zygoted reniced, with an I/O priority of its own, in an affinity of its own: the walk's record of
 * the reader says so as the system calls do, and a task's scheduling is decided the same. */
static void test_own_sched(void **state) {
        const struct conf *conf = &confs[1];
        struct zd_caller a = ZD_CALLER_INIT, b = ZD_CALLER_INIT;
        struct ze_sched ta, tb;
        bool seta, setb;
        cpu_set_t cpus, saved;
        struct caller p;

        (void) state;
        skip_unless_both_readers();
        assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
        CPU_ZERO(&cpus);
        CPU_SET(0, &cpus);
        assert_int_equal(setpriority(PRIO_PROCESS, 0, 3), 0);
        assert_int_equal(syscall(SYS_ioprio_set, 1, 0, IOPRIO(2, 6)), 0);
        assert_int_equal(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
        caller_start(conf, &p);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &a), 0);
        check_own(&a, &b, true);
        assert_int_equal(a.own_sched.nice, 3);
        assert_int_equal(a.own_sched.ioprio, IOPRIO(2, 6));
        assert_true(a.own_sched.affinity[0] == 1);
        b = a;
        b.has_own_sched = false;
        assert_int_equal(zd_caller_task_sched(&a, false, &ta, &seta), 0);
        assert_int_equal(zd_caller_task_sched(&b, false, &tb, &setb), 0);
        assert_memory_equal(&ta, &tb, sizeof(ta));
        assert_int_equal(seta, setb);
        assert_int_equal(ta.nice, 7); /* the caller's, more than zygoted's 3 */
        b = (struct zd_caller) ZD_CALLER_INIT;
        zd_caller_done(&a);
        caller_stop(&p);
        assert_int_equal(setpriority(PRIO_PROCESS, 0, 0), 0);
        assert_int_equal(syscall(SYS_ioprio_set, 1, 0, 0), 0);
        assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

static int load_reader(void **state) {
        (void) state;
        if (!ze_feature_disabled("caller_bpf") && geteuid() == 0)
                bpf_load = zd_caller_bpf_load();
        return zd_caller_keep_own() < 0 ? -1 : 0;
}

TU_MAIN_GROUP("tests", load_reader, tu_test_case("plain", test_readers_agree, (void *) &confs[0]),
              tu_test_case("confined", test_readers_agree, (void *) &confs[1]),
              tu_test_case("fifo-reset-caps-mntns", test_readers_agree, (void *) &confs[2]),
              tu_test_case("idle-ids-threads", test_readers_agree, (void *) &confs[3]),
              tu_test_case("groups-past-record", test_readers_agree, (void *) &confs[4]),
              tu_test_case("rr-ioprio", test_readers_agree, (void *) &confs[5]),
              tu_test_case("ioprio-of-nice-limits", test_readers_agree, (void *) &confs[6]),
              tu_test_case("userns", test_readers_agree, (void *) &confs[7]),
              tu_test_case("groups-32", test_readers_agree, (void *) &confs[8]),
              tu_test_case("groups-33", test_readers_agree, (void *) &confs[9]), tu_test(test_own_sched))
