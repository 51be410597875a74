/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of daemon/caller.c: what confines the process at the other end of a socket, read
 * from a real child that confines itself (rlimits, no_new_privs, a seccomp filter, a network
 * namespace, another uid), through SO_PEERPIDFD and through the SO_PEERCRED fallback, and a
 * caller that has exited.
 *
 *   test-caller   (the root-only parts skip, with the reason, when not root)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "caller.h"
#include "fd-util.h"
#include "probe.h"
#include "util.h"

#define NOBODY 65534

enum {
        CONF_LIMITS = 1 << 0, /* RLIMIT_NOFILE 50:60 */
        CONF_NNP = 1 << 1,
        CONF_FILTER = 1 << 2,        /* an allow-all filter (with no_new_privs) */
        CONF_NETNS = 1 << 3,         /* a network namespace of its own (root) */
        CONF_NOBODY = 1 << 4,        /* runs as nobody, dumpable (root) */
        CONF_EXIT = 1 << 5,          /* exits once its socket is handed over */
        CONF_CGROUP = 1 << 6,        /* moves itself into peer_cgroup first (root) */
        CONF_SCHED = 1 << 7,         /* nice 10, SCHED_BATCH, oom_score_adj 500, umask 077, CPU 0 only */
        CONF_CAPS = 1 << 8,          /* keeps CAP_NET_RAW alone, in every set (root) */
        CONF_THREAD_FILTER = 1 << 9, /* a second thread with no_new_privs and a filter; not the first */
        CONF_THREAD_UID = 1 << 10,   /* a second thread that runs as nobody (root) */
        CONF_THREADS_MANY = 1 << 11, /* 65 threads in all */
        CONF_THREAD_CHURN = 1 << 12, /* threads that start and end all the time */
};

static int thread_wake[2]; /* the second thread says it is ready */

static void *second_thread(void *arg) {
        unsigned conf = *(unsigned *) arg;
        struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = 1, .filter = allow };
        char ok = 1;

        /* per thread: the raw calls, not glibc's wrappers that apply them to every thread */
        if ((conf & CONF_THREAD_FILTER) &&
            (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0))
                ok = 0;
        if ((conf & CONF_THREAD_UID) && syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) < 0)
                ok = 0;
        (void) write(thread_wake[1], &ok, 1);
        for (;;)
                pause();
        return NULL;
}

static void *idle_thread(void *arg) {
        for (;;)
                pause();
        return arg;
}

static void *quick_thread(void *arg) {
        return arg;
}

/* Starts a thread and waits for its end, again and again: a caller whose threads come and go
 * while the daemon reads them (a thread pool, a client library's worker threads). */
static void *churn_thread(void *arg) {
        for (;;) {
                pthread_t t;

                if (pthread_create(&t, NULL, quick_thread, NULL) == 0)
                        (void) pthread_join(t, NULL);
        }
        return arg;
}

/* CAP_NET_RAW alone: the bounding set first (it needs CAP_SETPCAP), then the other sets. */
static int keep_net_raw(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { { .effective = 1u << CAP_NET_RAW, .permitted = 1u << CAP_NET_RAW } };

        for (int cap = 0; cap < 64; cap++)
                if (cap != CAP_NET_RAW && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                        return -1;
        return (int) syscall(SYS_capset, &h, d);
}

static int set_sched(void) {
        struct sched_param sp = { 0 };
        cpu_set_t cpus;
        int fd;

        CPU_ZERO(&cpus);
        CPU_SET(0, &cpus);
        if (sched_setscheduler(0, SCHED_BATCH, &sp) < 0 || setpriority(PRIO_PROCESS, 0, 10) < 0 ||
            sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
                return -1;
        umask(077);
        fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "500", 3) != 3)
                return -1;
        close(fd);
        return 0;
}

static char peer_cgroup[PATH_MAX];

struct peer {
        pid_t pid;
        int sock;    /* our end of the socketpair the child made: its peer is the child */
        int release; /* closing it lets the child exit */
        struct ucred cred;
};

/* A child confines itself as asked, makes a socketpair (whose peer credentials are its own) and
 * hands one end over, then waits until released. */
static void peer_start(unsigned conf, struct peer *ret) {
        int xfer[2], hold[2];
        pid_t pid;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, xfer), 0);
        assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
                struct sock_fprog prog = { .len = 1, .filter = allow };
                struct rlimit rl = { 50, 60 };
                struct iovec iov = { .iov_base = (char *) "s", .iov_len = 1 };
                int sp[2];
                char b;

                close(xfer[0]);
                close(hold[1]);
                if (conf & CONF_CGROUP) {
                        char procs[PATH_MAX + 16];
                        int fd;

                        snprintf(procs, sizeof(procs), "%s/cgroup.procs", peer_cgroup);
                        fd = open(procs, O_WRONLY | O_CLOEXEC);
                        if (fd < 0 || write(fd, "0", 1) != 1)
                                _exit(8);
                        close(fd);
                }
                if ((conf & CONF_LIMITS) && setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        _exit(2);
                if ((conf & CONF_NETNS) && unshare(CLONE_NEWNET) < 0)
                        _exit(3);
                if ((conf & CONF_NOBODY) &&
                    (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) < 0 ||
                     syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
                        _exit(4);
                if ((conf & (CONF_NNP | CONF_FILTER)) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(5);
                if ((conf & CONF_FILTER) && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        _exit(6);
                if ((conf & CONF_SCHED) && set_sched() < 0)
                        _exit(9);
                if ((conf & CONF_CAPS) && keep_net_raw() < 0)
                        _exit(10);
                if (conf & CONF_THREADS_MANY) {
                        pthread_attr_t attr;

                        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 64 * 1024) != 0)
                                _exit(12);
                        for (int i = 0; i < 64; i++) {
                                pthread_t t;

                                if (pthread_create(&t, &attr, idle_thread, NULL) != 0)
                                        _exit(12);
                        }
                }
                if (conf & CONF_THREAD_CHURN) {
                        pthread_t t;

                        if (pthread_create(&t, NULL, churn_thread, NULL) != 0)
                                _exit(13);
                }
                if (conf & (CONF_THREAD_FILTER | CONF_THREAD_UID)) {
                        static unsigned thread_conf;
                        pthread_t t;
                        char ok = 0;

                        thread_conf = conf;
                        if (pipe2(thread_wake, O_CLOEXEC) < 0 ||
                            pthread_create(&t, NULL, second_thread, &thread_conf) != 0 ||
                            read(thread_wake[0], &ok, 1) != 1 || !ok)
                                _exit(11);
                }
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
                    send_fds(xfer[1], &iov, 1, &sp[0], 1, 0) < 0)
                        _exit(7);
                if (conf & CONF_EXIT)
                        _exit(0);
                (void) read(hold[0], &b, 1);
                _exit(0);
        }
        close(xfer[1]);
        close(hold[0]);
        ret->sock = tu_recv_fd(xfer[0]);
        close(xfer[0]);
        ret->pid = pid;
        ret->release = hold[1];
        ret->cred = (struct ucred){ .pid = pid,
                                    .uid = (conf & CONF_NOBODY) ? NOBODY : getuid(),
                                    .gid = (conf & CONF_NOBODY) ? NOBODY : getgid() };
}

static void peer_stop(struct peer *p) {
        int st;

        safe_close(p->release);
        safe_close(p->sock);
        assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* peer_start(conf) and the daemon's read of the peer, which must give want. */
static void peer_read(unsigned conf, struct peer *p, struct zd_caller *c, int want) {
        peer_start(conf, p);
        assert_int_equal(zd_caller_read(p->sock, &p->cred, NULL, c), want);
}

static void peer_done(struct peer *p, struct zd_caller *c) {
        zd_caller_done(c);
        peer_stop(p);
}

static void skip_unless_root(const char *why) {
        if (geteuid() != 0) {
                fprintf(stderr, "skip: needs root (%s)\n", why);
                skip();
        }
}

/* Nothing of its own: the limits are ours, nothing to join, nothing to move. */
static void test_unconfined(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        peer_read(0, &p, &c, 0);
        assert_int_equal(c.pid, p.pid);
        assert_int_equal(c.euid, geteuid());
        assert_int_equal(c.egid, getegid());
        assert_int_equal(c.n_rlimits, RLIM_NLIMITS);
        for (size_t i = 0; i < c.n_rlimits; i++) {
                struct rlimit rl;

                assert_int_equal(c.rlimits[i].resource, i);
                assert_int_equal(getrlimit((int) i, &rl), 0);
                assert_true(c.rlimits[i].cur == rl.rlim_cur && c.rlimits[i].max == rl.rlim_max);
        }
        assert_false(c.no_new_privs);
        assert_int_equal(c.seccomp_mode, 0);
        assert_int_equal(c.ns_join, 0);
        assert_null(c.ns_other);
        assert_true(c.root_fd < 0);
        assert_int_equal(c.n_cgroups, 0);
        assert_null(c.lsm_attr); /* our own label, whatever LSM the kernel has */
        peer_done(&p, &c);
}

static void check_confined(const struct zd_caller *c) {
        assert_int_equal(c->n_rlimits, RLIM_NLIMITS);
        assert_true(c->rlimits[RLIMIT_NOFILE].cur == 50 && c->rlimits[RLIMIT_NOFILE].max == 60);
        assert_true(c->no_new_privs);
        assert_int_equal(c->seccomp_mode, 2);
}

/* Its limits, no_new_privs and filter, through SO_PEERPIDFD and through the fallback. */
static void test_confined(void **state) {
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT;
        struct peer p;

        peer_read(CONF_LIMITS | CONF_FILTER, &p, &c, 0);
        check_confined(&c);
        assert_int_equal(zd_caller_read(-1, &p.cred, NULL, &f), 0);
        check_confined(&f);
        zd_caller_done(&c);
        zd_caller_done(&f);
        peer_stop(&p);
}

/* The fallback names the process by SO_PEERCRED's pid: one of another uid is not the caller. */
static void test_fallback_checks_uid(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;
        struct ucred other;

        peer_start(0, &p);
        other = p.cred;
        other.uid += 1;
        assert_int_equal(zd_caller_read(-1, &other, NULL, &c), -ESRCH);
        peer_done(&p, &c);
}

/* A caller that has exited cannot be read, through either path. */
static void test_exited(void **state) {
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT;
        struct peer p;
        int st;

        peer_start(CONF_EXIT, &p);
        assert_int_equal(waitpid(p.pid, &st, 0), p.pid);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &c), -ESRCH);
        assert_int_equal(zd_caller_read(-1, &p.cred, NULL, &f), -ESRCH);
        zd_caller_done(&c);
        zd_caller_done(&f);
        safe_close(p.release);
        safe_close(p.sock);
}

/* Root: another user's process (its limits as /proc/PID/limits gives them where prlimit would
 * need CAP_SYS_RESOURCE) in a network namespace of its own, to be joined. */
static void test_other_user_in_netns(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        skip_unless_root("a process of another uid, a network namespace");
        peer_read(CONF_LIMITS | CONF_NNP | CONF_NETNS | CONF_NOBODY, &p, &c, 0);
        assert_true(c.rlimits[RLIMIT_NOFILE].cur == 50 && c.rlimits[RLIMIT_NOFILE].max == 60);
        for (size_t i = 0; i < c.n_rlimits; i++) {
                struct rlimit rl;

                if (i == RLIMIT_NOFILE)
                        continue;
                assert_int_equal(getrlimit((int) i, &rl), 0);
                assert_true(c.rlimits[i].cur == rl.rlim_cur && c.rlimits[i].max == rl.rlim_max);
        }
        assert_true(c.no_new_privs);
        assert_int_equal(c.ns_join, CLONE_NEWNET);
        assert_string_equal(zd_caller_ns_name(c.ns_join), "net");
        assert_null(c.ns_other);
        peer_done(&p, &c);
}

/* Its scheduling and umask, as a child it forked would start with them. */
static void test_sched(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        peer_read(CONF_SCHED, &p, &c, 0);
        assert_int_equal(c.sched.nice, 10);
        assert_int_equal(c.sched.policy, SCHED_BATCH);
        assert_int_equal(c.sched.priority, 0);
        assert_int_equal(c.sched.oom_score_adj, 500);
        assert_int_equal(c.sched.umask, 077);
        assert_int_equal(c.sched.affinity[0], 1);
        for (size_t i = 1; i < ZE_AFFINITY_WORDS; i++)
                assert_int_equal(c.sched.affinity[i], 0);
        peer_done(&p, &c);
}

/* A kernel without the block layer has no ioprio_get (ENOSYS): there is no I/O priority to carry,
 * and reading the rest of the scheduling still works (the guest kernel of the kernel lane is
 * one). Forced here with a filter that answers ENOSYS to ioprio_get alone. */
static void test_sched_without_ioprio(void **state) {
        struct sock_filter insns[] = { TU_BPF_FAIL_ONLY(SYS_ioprio_get, ENOSYS) };
        struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
        int status;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct ze_sched s = {};
                if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        _exit(3);
                if (syscall(SYS_ioprio_get, 1, 0) >= 0 || errno != ENOSYS)
                        _exit(4); /* the filter does not do what this test needs */
                _exit(zd_caller_own_sched(&s) == 0 && s.ioprio == 0 ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* Root: its capability sets now, and its ids and groups. */
static void test_caps(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        skip_unless_root("capabilities to drop");
        peer_read(CONF_CAPS, &p, &c, 0);
        assert_int_equal(c.euid, 0);
        assert_int_equal(c.egid, getegid());
        assert_int_equal(c.cap_bnd, 1ULL << CAP_NET_RAW);
        assert_int_equal(c.cap_prm, 1ULL << CAP_NET_RAW);
        assert_int_equal(c.cap_eff, 1ULL << CAP_NET_RAW);
        assert_int_equal(c.cap_inh, 0);
        assert_int_equal(c.cap_amb, 0);
        peer_done(&p, &c);
}

/* A thread other than the first runs under a filter of its own: the caller counts as filtered,
 * whichever thread made the call. */
static void test_thread_filter(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        peer_read(CONF_THREAD_FILTER, &p, &c, 0);
        assert_int_equal(c.seccomp_mode, 2);
        assert_true(c.no_new_privs);
        peer_done(&p, &c);
}

/* Root: threads that run as different users: which one called cannot be told, so none is
 * taken. */
static void test_thread_uid(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        skip_unless_root("a thread of another uid");
        peer_read(CONF_THREAD_UID, &p, &c, -ENOTUNIQ);
        peer_done(&p, &c);
}

/* Past 64 threads a caller is refused: each thread's status would be read, in the daemon's
 * one thread, at each of its calls. */
static void test_threads_many(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        peer_read(CONF_THREADS_MANY, &p, &c, -EMLINK);
        peer_done(&p, &c);
}

/* A caller whose threads start and end while it is read: a thread gone between the listing of
 * /proc/PID/task and the read of its files (ENOENT, or ESRCH from a thread that has exited but
 * is not yet reaped) is passed over, never taken for the caller gone. */
static void test_threads_coming_and_going(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        int r = 0, i;

        peer_start(CONF_THREAD_CHURN, &p);
        for (i = 0; i < 3000 && r == 0; i++) {
                r = zd_caller_read(p.sock, &p.cred, NULL, &c);
                zd_caller_done(&c);
                c = (struct zd_caller) ZD_CALLER_INIT;
        }
        peer_done(&p, &c);
        if (r != 0)
                fail_msg("read %d of the caller: %s", i, strerror(-r));
}

/* The O_PATH directory of the caller's cgroup that caller.c opened, by its path. */
static bool has_cgroup_dir(const struct zd_caller *c, const char *want) {
        for (size_t i = 0; i < c->n_cgroups; i++) {
                char link[64], got[PATH_MAX];
                ssize_t n;

                snprintf(link, sizeof(link), "/proc/self/fd/%d", c->cgroup_fds[i]);
                n = readlink(link, got, sizeof(got) - 1);
                if (n > 0) {
                        got[n] = 0;
                        if (strcmp(got, want) == 0)
                                return true;
                }
        }
        return false;
}

/* Root: a caller in a cgroup of its own; its directory is opened for the worker. */
static void test_cgroup(void **state) {
        const char *base = tu_cgroup_base();
        struct zd_caller c = ZD_CALLER_INIT;
        struct peer p;

        if (!base) {
                fprintf(stderr, "skip: needs root and a cgroup hierarchy it may write to\n");
                skip();
        }
        snprintf(peer_cgroup, sizeof(peer_cgroup), "%s/zytest-caller-%d", base, (int) getpid());
        assert_int_equal(mkdir(peer_cgroup, 0755), 0);
        peer_read(CONF_CGROUP, &p, &c, 0);
        assert_true(has_cgroup_dir(&c, peer_cgroup));
        peer_done(&p, &c);
        assert_int_equal(rmdir(peer_cgroup), 0);
}

/* Root: where zygoted sees a hierarchy only through a mount of a subtree (a container's view),
 * the caller's cgroup is found under it. The reader is a child in a mount namespace of its own
 * where that is so; it exits 0 when the directory is the right one. */
static void test_cgroup_subtree_mount(void **state) {
        const char *base = tu_cgroup_base();
        char sub[256], mnt[] = "/tmp/zytest-cgmnt-XXXXXX", want[PATH_MAX + 16];
        struct peer p;
        pid_t reader;
        int st;

        if (!base) {
                fprintf(stderr, "skip: needs root and a cgroup hierarchy it may write to\n");
                skip();
        }
        snprintf(sub, sizeof(sub), "%s/zytest-sub-%d", base, (int) getpid());
        snprintf(peer_cgroup, sizeof(peer_cgroup), "%s/inner", sub);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(mkdir(peer_cgroup, 0755), 0);
        assert_non_null(mkdtemp(mnt));
        snprintf(want, sizeof(want), "%s/inner", mnt);
        peer_start(CONF_CGROUP, &p);

        reader = fork();
        assert_true(reader >= 0);
        if (reader == 0) {
                struct zd_caller c = ZD_CALLER_INIT;

                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mount(sub, mnt, NULL, MS_BIND, NULL) < 0 || umount2(base, MNT_DETACH) < 0)
                        _exit(2);
                if (zd_caller_read(p.sock, &p.cred, NULL, &c) < 0)
                        _exit(3);
                _exit(has_cgroup_dir(&c, want) ? 0 : 4);
        }
        assert_int_equal(waitpid(reader, &st, 0), reader);
        peer_stop(&p);
        assert_int_equal(rmdir(peer_cgroup), 0);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(rmdir(mnt), 0);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* A label as /proc/PID/attr/current shows it, and what the worker would write for it. */
static void test_lsm_label(void **state) {
        static const struct {
                enum zd_lsm lsm;
                const char *text, *label; /* NULL: refused */
        } cases[] = {
                { ZD_LSM_APPARMOR, "unconfined\n", "unconfined" },
                { ZD_LSM_APPARMOR, "/usr/bin/foo (enforce)\n", "/usr/bin/foo" },
                { ZD_LSM_APPARMOR, "foo//hat (complain)\n", "foo//hat" },
                { ZD_LSM_APPARMOR, "lxc-container-default-cgns (enforce)", "lxc-container-default-cgns" },
                { ZD_LSM_APPARMOR, "\n", NULL },
                { ZD_LSM_APPARMOR, "two\nlines (enforce)\n", NULL },
                { ZD_LSM_SELINUX, "system_u:system_r:init_t:s0", "system_u:system_r:init_t:s0" },
                { ZD_LSM_SELINUX, "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023\n",
                  "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023" },
                { ZD_LSM_SELINUX, "a:b:c:s0 (enforce)", NULL },
                { ZD_LSM_SELINUX, "", NULL },
                { ZD_LSM_NONE, "unconfined\n", NULL },
        };
        char out[ZD_LSM_LABEL_MAX], small[4];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r = zd_lsm_label(cases[i].lsm, cases[i].text, out, sizeof(out));

                if (!cases[i].label) {
                        assert_int_equal(r, -EINVAL);
                        continue;
                }
                assert_int_equal(r, 0);
                assert_string_equal(out, cases[i].label);
        }
        assert_int_equal(zd_lsm_label(ZD_LSM_APPARMOR, "toolong (enforce)", small, sizeof(small)), -ENAMETOOLONG);
}

static void test_lsm_exec_text(void **state) {
        char out[ZD_LSM_LABEL_MAX + 8];

        /* the same label as zygoted's, or an unconfined AppArmor caller: nothing to write */
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "unconfined", "unconfined", out, sizeof(out)), 0);
        assert_string_equal(out, "");
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "unconfined", "zygoted", out, sizeof(out)), 0);
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "zygoted", "zygoted", out, sizeof(out)), 0);
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_SELINUX, "u:r:t:s0", "u:r:t:s0", out, sizeof(out)), 0);
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_NONE, "a", "b", out, sizeof(out)), 0);
        /* a confined caller: its label for the exec */
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "/usr/bin/foo", "unconfined", out, sizeof(out)), 1);
        assert_string_equal(out, "exec /usr/bin/foo");
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "foo", "zygoted", out, sizeof(out)), 1);
        assert_string_equal(out, "exec foo");
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_SELINUX, "user_u:user_r:user_t:s0", "system_u:system_r:init_t:s0", out,
                                          sizeof(out)),
                         1);
        assert_string_equal(out, "user_u:user_r:user_t:s0");
        /* SELinux has no unconfined shortcut: a different context is written */
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_SELINUX, "unconfined", "u:r:t:s0", out, sizeof(out)), 1);
        assert_int_equal(zd_lsm_exec_text(ZD_LSM_APPARMOR, "foo", "bar", out, 6), -ENAMETOOLONG);
        assert_string_equal(out, "");
}

/* Callers' threads read as zygoted reads them (main.c): by the BPF task iterator where it loads
 * (caller-bpf.c), unless ZYGOTE_DISABLE_FEATURES=caller_bpf; else, and then, through /proc. */
static int load_reader(void **state) {
        (void) state;
        if (!ze_feature_disabled("caller_bpf"))
                (void) zd_caller_bpf_load();
        return 0;
}

TU_MAIN_GROUP("tests", load_reader, tu_test(test_unconfined), tu_test(test_confined), tu_test(test_fallback_checks_uid),
              tu_test(test_exited), tu_test(test_threads_coming_and_going), tu_test(test_other_user_in_netns),
              tu_test(test_cgroup), tu_test(test_cgroup_subtree_mount), tu_test(test_sched),
              tu_test(test_sched_without_ioprio), tu_test(test_caps), tu_test(test_thread_filter),
              tu_test(test_thread_uid), tu_test(test_threads_many), tu_test(test_lsm_label),
              tu_test(test_lsm_exec_text))
