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
 * The live child, its commands and the reads it is checked with are in caller-live.c.
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

#include "caller-live.h"
#include "caller.h"
#include "caller-proc.h" /* white-box: whether the mount table was kept */
#include "fd-util.h"
#include "probe.h"
#include "util.h"

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

/* The child of p, read into before through k, makes change ch: the next read through k shows
 * it. Then the child is stopped, k freed. */
static void change_is_seen(struct live *p, struct zd_caller_conn *k, const struct change *ch,
                           struct zd_caller *before) {
        struct zd_caller after = ZD_CALLER_INIT;

        live_do(p, ch->cmd);
        read_kept(p, k, &after);
        ch->check(before, &after);
        zd_caller_done(before);
        zd_caller_done(&after);
        live_stop(p);
        zd_caller_conn_free(k);
}

/* Read through the connection's kept state, the change made, read again through it. */
static void test_change_is_seen(void **state) {
        const struct change *ch = *state;
        struct zd_caller before = ZD_CALLER_INIT;
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
        change_is_seen(&p, k, ch, &before);
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

/* Root (why): live_dir made, the live child started and read once through a new connection's
 * kept state, its root still ours; then its root changed by cmd ('m' a mount namespace, 'r' a
 * chroot), read again: the root differs. dir_stop() undoes it. */
static struct zd_caller_conn *dir_start(const char *why, char cmd, struct live *p, struct zd_caller *c) {
        struct zd_caller_conn *k;

        skip_unless_root(why);
        snprintf(live_dir, sizeof(live_dir), "/tmp/zytest-caller-conn-XXXXXX");
        assert_non_null(mkdtemp(live_dir));
        k = conn_new();
        live_start(p);
        read_kept(p, k, c);
        assert_true(c->root_fd < 0);
        live_do(p, cmd);
        read_kept(p, k, c);
        assert_true(c->root_fd >= 0);
        return k;
}

static void dir_stop(struct live *p, struct zd_caller_conn *k, struct zd_caller *c) {
        zd_caller_done(c);
        live_stop(p);
        zd_caller_conn_free(k);
        assert_int_equal(rmdir(live_dir), 0);
}

/* Root: a mount namespace of its own is seen, its mount table kept while nothing changes, and a
 * procfs mounted there afterwards (which kept, would let the task see processes outside its
 * sandbox) is seen at the next call, and so is its unmount. */
static void test_mounts_are_watched(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct live p;
        struct zd_caller_conn *k = dir_start("a mount namespace, a procfs to mount", 'm', &p, &c);

        assert_true(c.ns_join & CLONE_NEWNS);
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
        dir_stop(&p, k, &c);
}

/* Root: a chroot into a directory in the middle of a mount: the root differs (entered by the
 * task), and the mount table is not kept, since it cannot show that root as a mount's. */
static void test_chroot_is_seen(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct live p;
        struct zd_caller_conn *k = dir_start("a chroot", 'r', &p, &c);

        assert_int_equal(c.ns_join, 0);
        assert_true(k->mounts.fd < 0);
        dir_stop(&p, k, &c);
}

/* Fifty calls through k hold no more fds than the first. */
static void calls_hold_no_more_fds(struct live *p, struct zd_caller_conn *k) {
        struct zd_caller c = ZD_CALLER_INIT;
        int n;

        read_kept(p, k, &c);
        n = tu_count_open_fds();
        for (int i = 0; i < 50; i++)
                read_kept(p, k, &c);
        assert_int_equal(tu_count_open_fds(), n);
        zd_caller_done(&c);
}

/* Many calls on one connection hold no more fds than the first. */
static void test_calls_hold_no_more_fds(void **state) {
        struct zd_caller_conn *k = conn_new();
        struct live p;

        live_start(&p);
        calls_hold_no_more_fds(&p, k);
        live_stop(&p);
        zd_caller_conn_free(k);
}

/* The live child with four threads: its commands served by one that is not the first, three
 * idle ones. */
static void live_start_threads(struct live *p) {
        live_start(p);
        live_do(p, 'h');
        live_do(p, 'i');
}

/* What k keeps of its caller's n other threads: their files, or with the BPF task iterator
 * (caller-bpf.c) no file of any thread, the one link attached to the process. */
static void assert_threads_kept(const struct zd_caller_conn *k, size_t n) {
        if (zd_caller_bpf_loaded()) {
                assert_int_equal(k->threads.n, 0);
                assert_true(k->bpf_link_fd >= 0);
        } else
                assert_int_equal(k->threads.n, n);
}

/* read_kept() of the child of live_start_threads(): its four threads' files kept. */
static void read_threads_kept(struct live *p, struct zd_caller_conn *k, struct zd_caller *ret) {
        read_kept(p, k, ret);
        assert_threads_kept(k, 4); /* the serving thread and three idle ones */
}

/* The change made by a thread that is not the first, among idle ones, after a call that kept
 * their files: seen at the next call. */
static void test_thread_change_is_seen(void **state) {
        const struct change *ch = *state;
        struct zd_caller before = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;

        if (ch->needs_root)
                skip_unless_root(ch->needs_root);
        live_start_threads(&p);
        read_threads_kept(&p, k, &before);
        change_is_seen(&p, k, ch, &before);
}

/* A thread whose file was kept ends, another takes its place (the count stays): the new one is
 * read, its filter seen; then one more thread comes (another count): listed, kept. */
static void test_thread_replaced_is_seen(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new();
        struct live p;

        live_start_threads(&p);
        read_kept(&p, k, &c);
        assert_int_equal(c.seccomp_mode, 0);
        live_do(&p, 'e');
        live_do(&p, 'f');
        read_kept(&p, k, &c);
        assert_int_equal(c.seccomp_mode, 2);
        assert_true(c.no_new_privs);
        assert_threads_kept(k, 4);
        live_do(&p, 'F'); /* a fifth, with a filter of its own: another count */
        read_kept(&p, k, &c);
        assert_threads_kept(k, 5);
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

/* A threaded subtree of the unified hierarchy for 'V' (root only): DOMAIN (its path in ret), made
 * a domain threaded by its threaded child DOMAIN/t, live_cgroup (set before the live child
 * starts: it reads its own copy). false, with the reason said, where none can be made. */
static bool threaded_subtree(char ret[static PATH_MAX]) {
        static const char *const bases[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
        const char *base = NULL;
        char path[PATH_MAX + 32];
        int fd;

        for (size_t i = 0; i < ELEMENTSOF(bases) && !base; i++) {
                snprintf(path, sizeof(path), "%s/cgroup.threads", bases[i]);
                if (access(path, F_OK) == 0 && access(bases[i], W_OK) == 0)
                        base = bases[i];
        }
        if (!base) {
                fprintf(stderr, "skip: no cgroup2 hierarchy it may write to (a thread moved alone)\n");
                return false;
        }
        snprintf(ret, PATH_MAX, "%s/zytest-caller-v2-%d", base, (int) getpid());
        assert_true((size_t) snprintf(live_cgroup, sizeof(live_cgroup), "%s/t", ret) < sizeof(live_cgroup));
        assert_int_equal(mkdir(ret, 0755), 0);
        assert_int_equal(mkdir(live_cgroup, 0755), 0);
        snprintf(path, sizeof(path), "%s/cgroup.type", live_cgroup);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "threaded", 8), 8);
        close(fd);
        return true;
}

/* Process pid (every thread) into cgroup dir. */
static void move_process(const char *dir, pid_t pid) {
        char path[PATH_MAX + 16], num[16];
        int fd;

        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        snprintf(num, sizeof(num), "%d", (int) pid);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, num, strlen(num)), (ssize_t) strlen(num));
        close(fd);
}

/* Root: a thread that is not the first moves alone to another network, mount or UTS namespace,
 * or another cgroup (v1; v2's threaded subtree), after a call that kept its files: the threads disagree,
 * refused through the kept files (the one walk reads every kept thread's namespaces and cgroups
 * again, without listing the threads), as through a connection that keeps no thread and through a
 * fresh read. */
static void test_thread_moved_is_refused(void **state) {
        const char *cmd = *state;
        struct zd_caller c = ZD_CALLER_INIT, f = ZD_CALLER_INIT, u = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new(), *unkept = NULL;
        char tasks[PATH_MAX + 8], domain[PATH_MAX];
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
        if (*cmd == 'V' && !threaded_subtree(domain)) {
                zd_caller_conn_free(k);
                skip();
        }
        assert_int_equal(zd_caller_conn_new(&unkept), 0);
        live_start(&p);
        if (*cmd == 'V')
                move_process(domain, p.pid);
        live_do(&p, 'h');
        live_do(&p, 'i');
        read_threads_kept(&p, k, &c);
        live_do(&p, *cmd);
        zd_caller_done(&c);
        c = (struct zd_caller) ZD_CALLER_INIT;
        assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), -EREMCHG);
        assert_threads_kept(k, 4); /* refused through the kept threads, not a new listing */
        assert_int_equal(zd_caller_read(p.sock, &p.cred, unkept, &u), -EREMCHG);
        assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &f), -EREMCHG);
        zd_caller_done(&c);
        zd_caller_done(&u);
        zd_caller_done(&f);
        live_stop(&p);
        zd_caller_conn_free(k);
        zd_caller_conn_free(unkept);
        if (*cmd == 'G' || *cmd == 'V')
                assert_int_equal(rmdir(live_cgroup), 0);
        if (*cmd == 'V')
                assert_int_equal(rmdir(domain), 0);
}

/* A change of a thread that is not the first, and what the next call says (0: served, as before). */
struct thread_change {
        char before; /* made by the process while it has one thread, or 0 */
        char cmd;
        int want;
};

static const struct thread_change thread_changes[] = {
        { 0, 'S', -ENOTUNIQ },   /* its saved uid alone: the Uid line differs */
        { 'k', 'k', -ENOTUNIQ }, /* other groups, as many as before: another group_info, read through /proc */
        { 0, 'k', -ENOTUNIQ },   /* more groups */
        { 'k', 'K', 0 },         /* the same groups set again: another group_info, the same groups */
        { 0, 'C', 0 },           /* the same capability sets set again: another cred, the same contents */
};

/* Root: a thread that is not the first changes its credentials after a call: the threads now
 * disagree (refused) or only seem to (other kernel objects, the same contents: served as before),
 * through the kept connection, one that keeps nothing, and a fresh read alike. With the BPF task
 * iterator (caller-bpf.c), the records of the cases that seem to differ cannot tell, and the
 * thread is read through /proc. */
static void test_thread_creds(void **state) {
        const struct thread_change *ch = *state;
        struct zd_caller before = ZD_CALLER_INIT, c = ZD_CALLER_INIT, f = ZD_CALLER_INIT;
        struct zd_caller_conn *k = conn_new(), *unkept = NULL;
        struct live p;

        skip_unless_root("ids, groups and capabilities to set per thread");
        assert_int_equal(zd_caller_conn_new(&unkept), 0);
        live_start(&p);
        if (ch->before)
                live_do(&p, ch->before);
        live_do(&p, 'h');
        live_do(&p, 'i');
        read_threads_kept(&p, k, &before);
        live_do(&p, ch->cmd);
        if (ch->want == 0) {
                read_kept(&p, k, &c);
                assert_same(&before, &c);
        } else {
                assert_int_equal(zd_caller_read(p.sock, &p.cred, k, &c), ch->want);
                assert_int_equal(zd_caller_read(p.sock, &p.cred, unkept, &f), ch->want);
                zd_caller_done(&f);
                f = (struct zd_caller) ZD_CALLER_INIT;
                assert_int_equal(zd_caller_read(p.sock, &p.cred, NULL, &f), ch->want);
        }
        zd_caller_done(&before);
        zd_caller_done(&c);
        zd_caller_done(&f);
        live_stop(&p);
        zd_caller_conn_free(k);
        zd_caller_conn_free(unkept);
}

/* Where zygoted would load it (root, the kernel's BTF, not ZYGOTE_DISABLE_FEATURES=caller_bpf),
 * the BPF task iterator loaded, and a multi-threaded caller read through it: no thread's file
 * kept, the link attached. Elsewhere every case here runs on the /proc path. */
static int bpf_load = 1; /* not tried */

static void test_bpf_reader_taken(void **state) {
        struct zd_caller c = ZD_CALLER_INIT;
        struct zd_caller_conn *k;
        struct live p;

        (void) state;
        if (ze_feature_disabled("caller_bpf")) {
                fprintf(stderr, "skip: ZYGOTE_DISABLE_FEATURES=caller_bpf: the /proc path is the one tested\n");
                skip();
        }
        skip_unless_root("CAP_BPF and CAP_PERFMON, to load a BPF iterator");
        if (access("/sys/kernel/btf/vmlinux", F_OK) < 0) {
                fprintf(stderr, "skip: no kernel BTF (/sys/kernel/btf/vmlinux): no BPF task iterator\n");
                skip();
        }
        assert_int_equal(bpf_load, 0);
        assert_true(zd_caller_bpf_loaded());
        k = conn_new();
        live_start_threads(&p);
        read_kept(&p, k, &c);
        assert_int_equal(k->threads.n, 0);
        assert_true(k->bpf_link_fd >= 0);
        zd_caller_done(&c);
        live_stop(&p);
        zd_caller_conn_free(k);
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
        struct zd_caller_conn *k = conn_new();
        struct live p;
        int n0;

        live_start_threads(&p);
        n0 = tu_count_open_fds();
        calls_hold_no_more_fds(&p, k);
        zd_caller_conn_free(k);
        assert_int_equal(tu_count_open_fds(), n0);
        live_stop(&p);
}

/* zygoted's own files kept, and its callers' threads read, as the daemon does before it serves
 * (main.c): by the BPF task iterator where it loads, unless ZYGOTE_DISABLE_FEATURES=caller_bpf */
static int keep_own(void **state) {
        (void) state;
        if (!ze_feature_disabled("caller_bpf"))
                bpf_load = zd_caller_bpf_load();
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
              tu_test_case("thread-utsns", test_thread_moved_is_refused, (void *) "t"),
              tu_test_case("thread-cgroup", test_thread_moved_is_refused, (void *) "G"),
              tu_test_case("thread-cgroup2", test_thread_moved_is_refused, (void *) "V"),
              tu_test_case("thread-saved-uid", test_thread_creds, (void *) &thread_changes[0]),
              tu_test_case("thread-groups", test_thread_creds, (void *) &thread_changes[1]),
              tu_test_case("thread-more-groups", test_thread_creds, (void *) &thread_changes[2]),
              tu_test_case("thread-same-groups", test_thread_creds, (void *) &thread_changes[3]),
              tu_test_case("thread-same-caps", test_thread_creds, (void *) &thread_changes[4]),
              tu_test(test_bpf_reader_taken), tu_test(test_no_thread_in_another_user_or_pid_ns),
              tu_test(test_thread_files_are_bounded))
