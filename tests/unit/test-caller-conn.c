/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of what a connection keeps of its caller between calls (daemon/caller.c, struct
 * zd_caller_conn): a caller that changes after the connection's first call is seen as it is at
 * the next one. A live child hands over its end of a socketpair, is read once through the
 * connection's kept state, then changes on command (capabilities, a seccomp filter,
 * no_new_privs, a network or mount namespace, a procfs mounted there, a chroot, its cgroup, an
 * rlimit, its uid, its nice value) and is read again through the same kept state: the change
 * shows, and the kept read equals one that keeps nothing (the path of
 * ZYGOTE_DISABLE_FEATURES=caller_cache, which test-caller takes throughout, and of
 * caller_threads: the threads listed and opened at each call). The connections here keep their
 * caller's threads' status files too (ZD_CALLER_KEEP_THREADS); the changes are also made in a
 * thread that is not the first, and threads come, go and replace each other between calls.
 *
 *   test-caller-conn   (the root-only cases skip, with the reason, when not root)
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
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "caller.h"
#include "caller-proc.h" /* white-box: whether the mount table was kept */
#include "fd-util.h"
#include "util.h"

#define NOBODY 65534

static char live_dir[64];          /* a directory for 'P' (a procfs on it) and 'r' (a chroot into it) */
static char live_cgroup[PATH_MAX]; /* a cgroup for 'g' */

static int start_idle_threads(int n);
static int start_filtered_thread(void);

/* One change of the live child, made by the thread that serves its commands. 0, or -1 with
 * errno. */
static int apply(char cmd) {
        struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = 1, .filter = allow };
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { { .effective = 1u << CAP_NET_RAW, .permitted = 1u << CAP_NET_RAW } };
        struct rlimit rl = { 50, 60 };
        char procs[PATH_MAX + 16];
        int fd, r;

        switch (cmd) {
        case 'c': /* CAP_NET_RAW alone, effective and permitted */
                return (int) syscall(SYS_capset, &h, d);
        case 'f':
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        return -1;
                return (int) syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
        case 'p':
                return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        case 'n':
                return unshare(CLONE_NEWNET);
        case 'm':
                if (unshare(CLONE_NEWNS) < 0)
                        return -1;
                return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
        case 'P':
                return mount("proc", live_dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        case 'U':
                return umount2(live_dir, MNT_DETACH);
        case 'r':
                return chroot(live_dir);
        case 'g':
                snprintf(procs, sizeof(procs), "%s/cgroup.procs", live_cgroup);
                fd = open(procs, O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        return -1;
                r = write(fd, "0", 1) == 1 ? 0 : -1;
                close(fd);
                return r;
        case 'G': /* this thread alone (cgroup v1's tasks file) */
                snprintf(procs, sizeof(procs), "%s/tasks", live_cgroup);
                fd = open(procs, O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        return -1;
                r = write(fd, "0", 1) == 1 ? 0 : -1;
                close(fd);
                return r;
        case 'l':
                return setrlimit(RLIMIT_NOFILE, &rl);
        case 'u':
                if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) < 0 ||
                    syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) < 0)
                        return -1;
                return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* zygoted reads it as before */
        case 's':
                return setpriority(PRIO_PROCESS, 0, 10);
        case 'x':
                _exit(0);
        case 'i':
                return start_idle_threads(3);
        case 'F':
                return start_filtered_thread();
        }
        errno = EINVAL;
        return -1;
}

/* ---- the live child's threads: 'h' hands the commands to a new thread, 'e' has the thread
 * that serves them replaced by a new one (the count stays, the thread is another), 'i' starts
 * idle threads, 'F' one that puts a filter on itself (and no_new_privs) and idles. */
static int live_cmd_fd = -1, live_ack_fd = -1;

static void live_ack(int e) {
        if (write(live_ack_fd, &e, sizeof(e)) != (ssize_t) sizeof(e))
                _exit(8);
}

static void *live_serve(void *arg);

static void *idle_thread(void *arg) {
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

static int start_idle_threads(int n) {
        pthread_t t;

        for (int i = 0; i < n; i++)
                if ((errno = pthread_create(&t, NULL, idle_thread, NULL)) != 0)
                        return -1;
        return 0;
}

static pthread_barrier_t filtered_ready;
static int filtered_err;

static void *filtered_thread(void *arg) {
        filtered_err = apply('f') < 0 ? errno : 0;
        pthread_barrier_wait(&filtered_ready);
        return idle_thread(arg);
}

static int start_filtered_thread(void) {
        pthread_t t;

        pthread_barrier_init(&filtered_ready, NULL, 2);
        if ((errno = pthread_create(&t, NULL, filtered_thread, NULL)) != 0)
                return -1;
        pthread_barrier_wait(&filtered_ready);
        errno = filtered_err;
        return errno ? -1 : 0;
}

/* The thread 'e' replaces, joined (gone from the kernel's count) before the successor serves. */
static pthread_t replaced;

static void *successor(void *arg) {
        pthread_join(replaced, NULL);
        live_ack(0);
        return live_serve(arg);
}

static void *live_serve(void *arg) {
        char c;

        (void) arg;
        while (read(live_cmd_fd, &c, 1) == 1) {
                pthread_t t;

                if (c == 'h' || c == 'e') {
                        replaced = pthread_self();
                        if ((errno = pthread_create(&t, NULL, c == 'h' ? live_serve : successor, NULL)) != 0) {
                                live_ack(errno);
                                continue;
                        }
                        if (c == 'e')
                                pthread_exit(NULL); /* the successor acks */
                        live_ack(0);
                        for (;;)
                                pause(); /* the first thread stays, idle */
                }
                live_ack(apply(c) < 0 ? errno : 0);
        }
        _exit(0);
}

struct live {
        pid_t pid;
        int sock; /* our end of the socketpair the child made: its peer is the child */
        int cmd;  /* a byte per change */
        int ack;  /* an errno per change, 0 for done */
        struct ucred cred;
};

static void live_start(struct live *ret) {
        int xfer[2], cmd[2], ack[2];
        pid_t pid;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, xfer), 0);
        assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ack, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct iovec iov = { .iov_base = (char *) "s", .iov_len = 1 };
                int sp[2];

                close(xfer[0]);
                close(cmd[1]);
                close(ack[0]);
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
                    send_fds(xfer[1], &iov, 1, &sp[0], 1, 0) < 0)
                        _exit(7);
                live_cmd_fd = cmd[0];
                live_ack_fd = ack[1];
                live_serve(NULL);
        }
        close(xfer[1]);
        close(cmd[0]);
        close(ack[1]);
        {
                struct iovec iov = { .iov_base = (char[1]){}, .iov_len = 1 };
                int fd = -EBADF;
                size_t n = 0;

                assert_true(recv_fds(xfer[0], &iov, 1, &fd, 1, &n, 0) >= 0);
                assert_int_equal(n, 1);
                ret->sock = fd;
        }
        close(xfer[0]);
        ret->pid = pid;
        ret->cmd = cmd[1];
        ret->ack = ack[0];
        ret->cred = (struct ucred){ .pid = pid, .uid = getuid(), .gid = getgid() };
}

/* The child makes change cmd, and says it is done. */
static void live_do(struct live *p, char cmd) {
        int e = -1;

        assert_int_equal(write(p->cmd, &cmd, 1), 1);
        if (cmd == 'x') {
                int st;
                assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
                p->pid = 0;
                return;
        }
        assert_int_equal(read(p->ack, &e, sizeof(e)), (ssize_t) sizeof(e));
        if (e != 0)
                fail_msg("the child's change '%c': %s", cmd, strerror(e));
}

static void live_stop(struct live *p) {
        int st;

        safe_close(p->cmd);
        safe_close(p->ack);
        safe_close(p->sock);
        if (p->pid > 0) {
                assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
                assert_true(WIFEXITED(st));
                assert_int_equal(WEXITSTATUS(st), 0);
        }
}

static void fd_path(int fd, char *buf, size_t size) {
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, size - 1);
        assert_true(n > 0);
        buf[n] = 0;
}

/* Two reads of the same caller agree on everything that decides its task. */
static void assert_same(const struct zd_caller *a, const struct zd_caller *b) {
        assert_int_equal(a->pid, b->pid);
        assert_int_equal(a->euid, b->euid);
        assert_int_equal(a->egid, b->egid);
        assert_int_equal(a->n_groups, b->n_groups);
        for (size_t i = 0; i < a->n_groups; i++)
                assert_int_equal(a->groups[i], b->groups[i]);
        assert_true(a->cap_inh == b->cap_inh && a->cap_prm == b->cap_prm && a->cap_eff == b->cap_eff &&
                    a->cap_bnd == b->cap_bnd && a->cap_amb == b->cap_amb);
        assert_int_equal(a->no_new_privs, b->no_new_privs);
        assert_int_equal(a->seccomp_mode, b->seccomp_mode);
        assert_memory_equal(&a->sched, &b->sched, sizeof(a->sched));
        assert_int_equal(a->n_rlimits, b->n_rlimits);
        assert_memory_equal(a->rlimits, b->rlimits, a->n_rlimits * sizeof(a->rlimits[0]));
        assert_int_equal(a->ns_join, b->ns_join);
        assert_string_equal(a->ns_other ? a->ns_other : "", b->ns_other ? b->ns_other : "");
        assert_int_equal(a->root_fd >= 0, b->root_fd >= 0);
        assert_string_equal(a->procfs_elsewhere, b->procfs_elsewhere);
        assert_int_equal(a->n_cgroups, b->n_cgroups);
        for (size_t i = 0; i < a->n_cgroups; i++) {
                char x[PATH_MAX], y[PATH_MAX];

                fd_path(a->cgroup_fds[i], x, sizeof(x));
                fd_path(b->cgroup_fds[i], y, sizeof(y));
                assert_string_equal(x, y);
        }
        assert_true(a->lsm_attr == b->lsm_attr);
        assert_string_equal(a->lsm_exec, b->lsm_exec);
}

/* The caller read through k (kept from the calls before), checked against a read that keeps
 * nothing. */
static void read_kept(struct live *p, struct zd_caller_conn *k, struct zd_caller *ret) {
        struct zd_caller fresh = ZD_CALLER_INIT;

        zd_caller_done(ret);
        *ret = (struct zd_caller) ZD_CALLER_INIT;
        assert_int_equal(zd_caller_read(p->sock, &p->cred, k, ret), 0);
        assert_int_equal(zd_caller_read(p->sock, &p->cred, NULL, &fresh), 0);
        assert_same(ret, &fresh);
        zd_caller_done(&fresh);
}

/* A connection's kept state, as zygoted makes it: its threads' files kept too. */
static struct zd_caller_conn *conn_new(void) {
        struct zd_caller_conn *k = NULL;

        assert_int_equal(zd_caller_conn_new(&k), 0);
        k->keep_threads = true;
        return k;
}

static void skip_unless_root(const char *why) {
        if (geteuid() != 0) {
                fprintf(stderr, "skip: needs root (%s)\n", why);
                skip();
        }
}

/* A change, and what must show of it at the next call on the same connection. */
struct change {
        char cmd;
        const char *needs_root; /* why, or NULL */
        void (*check)(const struct zd_caller *before, const struct zd_caller *after);
};

static void check_caps(const struct zd_caller *b, const struct zd_caller *a) {
        assert_true(b->cap_eff != a->cap_eff);
        assert_int_equal(a->cap_eff, 1ULL << CAP_NET_RAW);
        assert_int_equal(a->cap_prm, 1ULL << CAP_NET_RAW);
}

static void check_filter(const struct zd_caller *b, const struct zd_caller *a) {
        assert_int_equal(b->seccomp_mode, 0);
        assert_int_equal(a->seccomp_mode, 2);
        assert_true(a->no_new_privs);
}

static void check_nnp(const struct zd_caller *b, const struct zd_caller *a) {
        assert_false(b->no_new_privs);
        assert_true(a->no_new_privs);
}

static void check_netns(const struct zd_caller *b, const struct zd_caller *a) {
        assert_int_equal(b->ns_join, 0);
        assert_int_equal(a->ns_join, CLONE_NEWNET);
}

static void check_rlimit(const struct zd_caller *b, const struct zd_caller *a) {
        assert_true(b->rlimits[RLIMIT_NOFILE].cur != 50);
        assert_true(a->rlimits[RLIMIT_NOFILE].cur == 50 && a->rlimits[RLIMIT_NOFILE].max == 60);
}

static void check_uid(const struct zd_caller *b, const struct zd_caller *a) {
        assert_int_equal(b->euid, 0);
        assert_int_equal(a->euid, NOBODY);
        assert_int_equal(a->egid, NOBODY);
        assert_int_equal(a->n_groups, 0);
        assert_int_equal(a->cap_eff, 0);
}

static void check_nice(const struct zd_caller *b, const struct zd_caller *a) {
        assert_true(b->sched.nice != 10);
        assert_int_equal(a->sched.nice, 10);
}

static void check_cgroup(const struct zd_caller *b, const struct zd_caller *a) {
        char got[PATH_MAX];

        assert_int_equal(b->n_cgroups, 0);
        assert_int_equal(a->n_cgroups, 1);
        fd_path(a->cgroup_fds[0], got, sizeof(got));
        assert_string_equal(got, live_cgroup);
}

static const struct change changes[] = {
        { 'c', "capabilities to drop", check_caps },
        { 'f', NULL, check_filter },
        { 'p', NULL, check_nnp },
        { 'n', "a network namespace", check_netns },
        { 'l', NULL, check_rlimit },
        { 'u', "a uid to drop", check_uid },
        { 's', NULL, check_nice },
        { 'g', "a cgroup to move to", check_cgroup },
};

/* Read through the connection's kept state, the change made, read again through it. */
static void test_change_is_seen(void **state) {
        const struct change *ch = *state;
        struct zd_caller before = ZD_CALLER_INIT, after = ZD_CALLER_INIT;
        struct zd_caller_conn *k = NULL;
        bool cgroup = ch->cmd == 'g';
        struct live p;

        if (ch->needs_root)
                skip_unless_root(ch->needs_root);
        if (cgroup) {
                const char *base = tu_cgroup_base();

                if (!base) {
                        fprintf(stderr, "skip: needs a cgroup hierarchy it may write to\n");
                        skip();
                }
                snprintf(live_cgroup, sizeof(live_cgroup), "%s/zytest-caller-conn-%d", base, (int) getpid());
                assert_int_equal(mkdir(live_cgroup, 0755), 0);
        }
        k = conn_new();
        live_start(&p);
        read_kept(&p, k, &before);
        live_do(&p, ch->cmd);
        read_kept(&p, k, &after);
        ch->check(&before, &after);
        zd_caller_done(&before);
        zd_caller_done(&after);
        live_stop(&p);
        zd_caller_conn_free(k);
        if (cgroup)
                assert_int_equal(rmdir(live_cgroup), 0);
}

/* The ids of a root connection's process (zd_caller_read_ids, for calls other than Spawn), read
 * through the kept state, after it dropped its uid. */
static void test_ids_after_setuid(void **state) {
        struct zd_caller_conn *k = NULL;
        struct live p;
        uid_t uid;
        gid_t gid;

        skip_unless_root("a uid to drop");
        k = conn_new();
        live_start(&p);
        assert_int_equal(zd_caller_read_ids(p.sock, &p.cred, k, &uid, &gid), 0);
        assert_int_equal(uid, 0);
        live_do(&p, 'u');
        assert_int_equal(zd_caller_read_ids(p.sock, &p.cred, k, &uid, &gid), 0);
        assert_int_equal(uid, NOBODY);
        assert_int_equal(gid, NOBODY);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* The process that connected exits after a first call: the kept state does not answer for it
 * (nor for another process that may take its number), through SO_PEERPIDFD and the fallback. */
static void test_exit_is_seen(void **state) {
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT;
        struct zd_caller_conn *k = NULL, *kf = NULL;
        struct live p;
        uid_t uid;
        gid_t gid;

        k = conn_new();
        kf = conn_new();
        live_start(&p);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), 0);
        assert_int_equal(zd_caller_read(-1, &p.cred, kf, &f), 0);
        zd_caller_done(&c);
        zd_caller_done(&f);
        c = f = (struct zd_caller) ZD_CALLER_INIT;
        live_do(&p, 'x');
        assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), -ESRCH);
        assert_int_equal(zd_caller_read(-1, &p.cred, kf, &f), -ESRCH);
        assert_int_equal(zd_caller_read_ids(p.sock, &p.cred, k, &uid, &gid), -ESRCH);
        zd_caller_done(&c);
        zd_caller_done(&f);
        live_stop(&p);
        zd_caller_conn_free(k);
        zd_caller_conn_free(kf);
}

/* Root: a mount namespace of its own is seen, its mount table kept while nothing changes, and a
 * procfs mounted there afterwards (which kept, would let the task see processes outside its
 * sandbox) is seen at the next call, and so is its unmount. */
static void test_mounts_are_watched(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = NULL;
        struct live p;

        skip_unless_root("a mount namespace, a procfs to mount");
        snprintf(live_dir, sizeof(live_dir), "/tmp/zytest-caller-conn-XXXXXX");
        assert_non_null(mkdtemp(live_dir));
        k = conn_new();
        live_start(&p);
        read_kept(&p, k, &c);
        assert_true(c.root_fd < 0);
        live_do(&p, 'm');
        read_kept(&p, k, &c);
        assert_true(c.ns_join & CLONE_NEWNS);
        assert_true(c.root_fd >= 0);
        assert_string_equal(c.procfs_elsewhere, "");
        assert_true(k->mounts.fd >= 0); /* kept: the namespace's root is a mount's root */
        read_kept(&p, k, &c);           /* from the kept table */
        assert_string_equal(c.procfs_elsewhere, "");
        live_do(&p, 'P');
        read_kept(&p, k, &c);
        assert_string_equal(c.procfs_elsewhere, live_dir);
        live_do(&p, 'U');
        read_kept(&p, k, &c);
        assert_string_equal(c.procfs_elsewhere, "");
        zd_caller_done(&c);
        live_stop(&p);
        zd_caller_conn_free(k);
        assert_int_equal(rmdir(live_dir), 0);
}

/* Root: a chroot into a directory in the middle of a mount: the root differs (entered by the
 * task), and the mount table is not kept, since it cannot show that root as a mount's. */
static void test_chroot_is_seen(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = NULL;
        struct live p;

        skip_unless_root("a chroot");
        snprintf(live_dir, sizeof(live_dir), "/tmp/zytest-caller-conn-XXXXXX");
        assert_non_null(mkdtemp(live_dir));
        k = conn_new();
        live_start(&p);
        read_kept(&p, k, &c);
        assert_true(c.root_fd < 0);
        live_do(&p, 'r');
        read_kept(&p, k, &c);
        assert_true(c.root_fd >= 0);
        assert_int_equal(c.ns_join, 0);
        assert_true(k->mounts.fd < 0);
        zd_caller_done(&c);
        live_stop(&p);
        zd_caller_conn_free(k);
        assert_int_equal(rmdir(live_dir), 0);
}

/* Many calls on one connection hold no more fds than the first. */
static void test_calls_hold_no_more_fds(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = NULL;
        struct live p;
        int n;

        k = conn_new();
        live_start(&p);
        read_kept(&p, k, &c);
        n = tu_count_open_fds();
        for (int i = 0; i < 50; i++)
                read_kept(&p, k, &c);
        assert_int_equal(tu_count_open_fds(), n);
        zd_caller_done(&c);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* The change made by a thread that is not the first, among idle ones, after a call that kept
 * their files: seen at the next call. */
static void test_thread_change_is_seen(void **state) {
        const struct change *ch = *state;
        struct zd_caller before = ZD_CALLER_INIT, after = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;

        if (ch->needs_root)
                skip_unless_root(ch->needs_root);
        live_start(&p);
        live_do(&p, 'h');
        live_do(&p, 'i');
        read_kept(&p, k, &before);
        assert_int_equal(k->threads.n, 4); /* the serving thread and three idle ones */
        live_do(&p, ch->cmd);
        read_kept(&p, k, &after);
        ch->check(&before, &after);
        zd_caller_done(&before);
        zd_caller_done(&after);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* A thread whose file was kept ends, another takes its place (the count stays): the new one is
 * read, its filter seen; then one more thread comes (another count): listed, kept. */
static void test_thread_replaced_is_seen(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;

        live_start(&p);
        live_do(&p, 'h');
        live_do(&p, 'i');
        read_kept(&p, k, &c);
        assert_int_equal(c.seccomp_mode, 0);
        live_do(&p, 'e');
        live_do(&p, 'f');
        read_kept(&p, k, &c);
        assert_int_equal(c.seccomp_mode, 2);
        assert_true(c.no_new_privs);
        assert_int_equal(k->threads.n, 4);
        live_do(&p, 'F'); /* a fifth, with a filter of its own: another count */
        read_kept(&p, k, &c);
        assert_int_equal(k->threads.n, 5);
        zd_caller_done(&c);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* Root: a thread that drops its uid after a call that kept its file: the threads disagree on
 * their ids, refused through the kept files as through a fresh read. */
static void test_thread_ids_differ(void **state) {
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;

        skip_unless_root("a uid to drop");
        live_start(&p);
        live_do(&p, 'h');
        read_kept(&p, k, &c);
        live_do(&p, 'u');
        zd_caller_done(&c);
        c = (struct zd_caller) ZD_CALLER_INIT;
        assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), -ENOTUNIQ);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &f), -ENOTUNIQ);
        zd_caller_done(&c);
        zd_caller_done(&f);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* Root: a thread that is not the first moves alone to another network or mount namespace, or (on
 * a cgroup v1 hierarchy) another cgroup, after a call that kept its files: the threads disagree,
 * refused through the kept files (the one walk reads every kept thread's namespaces and cgroups
 * again, without listing the threads), as through a connection that keeps no thread and through a
 * fresh read. */
static void test_thread_moved_is_refused(void **state) {
        const char *cmd = *state;
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT, u = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new(), *unkept = NULL;
        char tasks[PATH_MAX + 8];
        struct live p;

        skip_unless_root("a namespace or cgroup to move a thread to");
        if (*cmd == 'G') {
                const char *base = tu_cgroup_base();

                if (base)
                        snprintf(tasks, sizeof(tasks), "%s/tasks", base);
                if (!base || access(tasks, W_OK) < 0) {
                        fprintf(stderr, "skip: needs a cgroup v1 hierarchy it may write to (a thread moved alone)\n");
                        zd_caller_conn_free(k);
                        skip();
                }
                snprintf(live_cgroup, sizeof(live_cgroup), "%s/zytest-caller-thread-%d", base, (int) getpid());
                assert_int_equal(mkdir(live_cgroup, 0755), 0);
        }
        assert_int_equal(zd_caller_conn_new(&unkept), 0);
        live_start(&p);
        live_do(&p, 'h');
        live_do(&p, 'i');
        read_kept(&p, k, &c);
        assert_int_equal(k->threads.n, 4);
        live_do(&p, *cmd);
        zd_caller_done(&c);
        c = (struct zd_caller) ZD_CALLER_INIT;
        assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), -EREMCHG);
        assert_int_equal(k->threads.n, 4); /* refused through the kept threads, not a new listing */
        assert_int_equal(zd_caller_read(p.sock, &p.cred, unkept, &u), -EREMCHG);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &f), -EREMCHG);
        zd_caller_done(&c);
        zd_caller_done(&u);
        zd_caller_done(&f);
        live_stop(&p);
        zd_caller_conn_free(k);
        zd_caller_conn_free(unkept);
        if (*cmd == 'G')
                assert_int_equal(rmdir(live_cgroup), 0);
}

/* What lets zygoted read a user and a pid namespace from the first thread only (caller-ns.c):
 * the kernel refuses a thread in another. In a child of two threads: unshare() of a user
 * namespace, and clone() of a thread into a new user or pid namespace, fail with EINVAL. Should a
 * kernel ever allow one, this fails, and every thread's must be read again. */
static int thread_exits(void *arg) {
        (void) arg;
        syscall(SYS_exit, 0);
        return 0;
}

static int refuses_threads_elsewhere(void) {
        static char stack[64 * 1024] __attribute__((aligned(16)));
        unsigned thread = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
        pthread_t t;

        if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
                return 2;
        if (unshare(CLONE_NEWUSER) == 0 || errno != EINVAL)
                return 3;
        if (clone(thread_exits, stack + sizeof(stack), thread | CLONE_NEWUSER, NULL) >= 0 || errno != EINVAL)
                return 4;
        if (clone(thread_exits, stack + sizeof(stack), thread | CLONE_NEWPID, NULL) >= 0 || errno != EINVAL)
                return 5;
        return 0;
}

static void test_no_thread_in_another_user_or_pid_ns(void **state) {
        pid_t pid;
        int st;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(refuses_threads_elsewhere());
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* The kept files of its threads: no more at the fiftieth call than at the first, and none left
 * once the connection is gone or the caller has one thread again. */
static void test_thread_files_are_bounded(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;
        int n0, n;

        live_start(&p);
        live_do(&p, 'h');
        live_do(&p, 'i');
        n0 = tu_count_open_fds();
        read_kept(&p, k, &c);
        n = tu_count_open_fds();
        for (int i = 0; i < 50; i++)
                read_kept(&p, k, &c);
        assert_int_equal(tu_count_open_fds(), n);
        zd_caller_done(&c);
        zd_caller_conn_free(k);
        assert_int_equal(tu_count_open_fds(), n0);
        live_stop(&p);
}

/* zygoted's own files kept, as the daemon keeps them before it serves */
static int keep_own(void **state) {
        (void) state;
        return zd_caller_keep_own() < 0 ? -1 : 0;
}

TU_MAIN_GROUP("tests", keep_own, tu_test_case("caps", test_change_is_seen, &changes[0]),
              tu_test_case("filter", test_change_is_seen, &changes[1]),
              tu_test_case("no_new_privs", test_change_is_seen, &changes[2]),
              tu_test_case("netns", test_change_is_seen, &changes[3]),
              tu_test_case("rlimit", test_change_is_seen, &changes[4]),
              tu_test_case("setuid", test_change_is_seen, &changes[5]),
              tu_test_case("nice", test_change_is_seen, &changes[6]),
              tu_test_case("cgroup", test_change_is_seen, &changes[7]), tu_test(test_ids_after_setuid),
              tu_test(test_exit_is_seen), tu_test(test_mounts_are_watched), tu_test(test_chroot_is_seen),
              tu_test(test_calls_hold_no_more_fds),
              tu_test_case("thread-caps", test_thread_change_is_seen, &changes[0]),
              tu_test_case("thread-filter", test_thread_change_is_seen, &changes[1]),
              tu_test_case("thread-no_new_privs", test_thread_change_is_seen, &changes[2]),
              tu_test(test_thread_replaced_is_seen), tu_test(test_thread_ids_differ),
              tu_test_case("thread-netns", test_thread_moved_is_refused, (void *) "n"),
              tu_test_case("thread-mntns", test_thread_moved_is_refused, (void *) "m"),
              tu_test_case("thread-cgroup", test_thread_moved_is_refused, (void *) "G"),
              tu_test(test_no_thread_in_another_user_or_pid_ns), tu_test(test_thread_files_are_bounded))
