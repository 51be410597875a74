/* SPDX-License-Identifier: MIT */
/*
 * The live child of test-caller-conn (see caller-live.h).
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
#include "caller-proc.h" /* struct zd_caller_conn: its keep_threads */
#include "fd-util.h"
#include "util.h"

char live_dir[64];          /* a directory for 'P' (a procfs on it) and 'r' (a chroot into it) */
char live_cgroup[PATH_MAX]; /* a cgroup for 'g', 'G' and 'V' */

static int start_idle_threads(int n);
static int start_filtered_thread(void);

/* The calling thread ('tasks', 'cgroup.threads') or process ('cgroup.procs') into live_cgroup. 0, or -1 with
 * errno. */
static int move_to_cgroup(const char *file) {
        char path[PATH_MAX + 16];
        int fd, r;

        snprintf(path, sizeof(path), "%s/%s", live_cgroup, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        r = write(fd, "0", 1) == 1 ? 0 : -1;
        close(fd);
        return r;
}

/* This thread's supplementary groups set again (raw: this thread only), to the same ones
 * (same), else each one more (4242 alone where there is none): either way a group_info of its
 * own. */
static int set_groups(bool same) {
        gid_t groups[64] = { 4242 };
        int n = getgroups(64, groups);

        if (n < 0)
                return -1;
        for (int i = 0; i < n && !same; i++)
                groups[i]++;
        return (int) syscall(SYS_setgroups, n == 0 && !same ? 1 : n, groups);
}

/* This thread's capability sets set again to what they are: credentials of its own, the same. */
static int same_caps(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                return -1;
        return (int) syscall(SYS_capset, &h, d);
}

/* One change of the live child, made by the thread that serves its commands. 0, or -1 with
 * errno. */
static int apply(char cmd) {
        struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog prog = { .len = 1, .filter = allow };
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { { .effective = 1u << CAP_NET_RAW, .permitted = 1u << CAP_NET_RAW } };
        struct rlimit rl = { 50, 60 };

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
                return move_to_cgroup("cgroup.procs");
        case 'G': /* this thread alone (cgroup v1's tasks file) */
                return move_to_cgroup("tasks");
        case 'V': /* this thread alone (a threaded cgroup v2's cgroup.threads) */
                return move_to_cgroup("cgroup.threads");
        case 'l':
                return setrlimit(RLIMIT_NOFILE, &rl);
        case 'u':
                if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) < 0 ||
                    syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) < 0)
                        return -1;
                return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* zygoted reads it as before */
        case 's':
                return setpriority(PRIO_PROCESS, 0, 10);
        case 't':
                return unshare(CLONE_NEWUTS);
        case 'S': /* the saved uid alone */
                return (int) syscall(SYS_setresuid, -1, -1, NOBODY);
        case 'k':
        case 'K':
                return set_groups(cmd == 'K');
        case 'C':
                return same_caps();
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

void *idle_thread(void *arg) {
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

void live_start(struct live *ret) {
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
        ret->sock = tu_recv_fd(xfer[0]);
        close(xfer[0]);
        ret->pid = pid;
        ret->cmd = cmd[1];
        ret->ack = ack[0];
        ret->cred = (struct ucred){ .pid = pid, .uid = getuid(), .gid = getgid() };
}

/* The child makes change cmd, and says it is done. */
void live_do(struct live *p, char cmd) {
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

void live_stop(struct live *p) {
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

void fd_path(int fd, char *buf, size_t size) {
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, size - 1);
        assert_true(n > 0);
        buf[n] = 0;
}

/* Two reads of the same caller agree on everything that decides its task. */
void assert_same(const struct zd_caller *a, const struct zd_caller *b) {
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
 * nothing and against one through /proc alone (ZD_CALLER_READ_PROC). */
void read_kept(struct live *p, struct zd_caller_conn *k, struct zd_caller *ret) {
        struct zd_caller fresh = ZD_CALLER_INIT, proc = ZD_CALLER_INIT;
        struct zd_caller_conn *by_proc = NULL;

        zd_caller_done(ret);
        *ret = (struct zd_caller) ZD_CALLER_INIT;
        assert_int_equal(zd_caller_read(p->sock, &p->cred, k, ret), 0);
        assert_int_equal(zd_caller_read(p->sock, &p->cred, NULL, &fresh), 0);
        assert_same(ret, &fresh);
        /* and the /proc reader, where the BPF iterator read the others: the same */
        assert_non_null(zd_caller_conn_get(&by_proc, ZD_CALLER_KEEP | ZD_CALLER_READ_PROC));
        assert_int_equal(zd_caller_read(p->sock, &p->cred, by_proc, &proc), 0);
        assert_same(ret, &proc);
        assert_int_equal(ret->seccomp_filters, proc.seccomp_filters);
        zd_caller_conn_free(by_proc);
        zd_caller_done(&proc);
        zd_caller_done(&fresh);
}

/* A connection's kept state, as zygoted makes it: its threads' files kept too. */
struct zd_caller_conn *conn_new(void) {
        struct zd_caller_conn *k = NULL;

        assert_int_equal(zd_caller_conn_new(&k), 0);
        k->keep_threads = true;
        return k;
}

void skip_unless_root(const char *why) {
        if (geteuid() != 0) {
                fprintf(stderr, "skip: needs root (%s)\n", why);
                skip();
        }
}
