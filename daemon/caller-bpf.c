/* SPDX-License-Identifier: MIT */
/*
 * The other threads of a caller read in one read() (caller.c's facet; caller-proc.h): the task
 * iterator of caller-threads.bpf.c, loaded once at start-up (zd_caller_bpf_load()), attached
 * with the caller's pidfd once per connection (a link, kept in struct zd_caller_conn: it names
 * the process, one fd), and read at every call (bpf_iter_create, read, close). Each thread's
 * record says what /proc/PID/task/TID/status, its ns links and its cgroup file say of it, from
 * the same kernel objects, with the pointers that tell two threads' objects apart.
 *
 * Loading needs CAP_BPF and CAP_PERFMON (a root zygoted), the kernel's BTF, and the pid_fd filter
 * of task iterators (Linux 6.1); where any is missing, or ZYGOTE_DISABLE_FEATURES names
 * caller_bpf, caller.c reads each thread through /proc as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caller-proc.h"
#include "caller_threads.skel.h"
#include "pidfd-util.h"
#include "util.h"

_Static_assert(sizeof(struct zd_caller_bpf_thread) % 8 == 0, "records follow one another unpadded");

/* The loaded program, alone: the skeleton is destroyed once it is loaded, so that zygoted holds
 * one fd for it (the program holds its map and BTF), not the skeleton's three. */
static int prog_fd = -EBADF;

/* libbpf says why a load failed on stderr; zygoted says it once, from the errno (main.c) */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap) {
        (void) level;
        (void) fmt;
        (void) ap;
        return 0;
}

bool zd_caller_bpf_loaded(void) {
        return prog_fd >= 0;
}

/* A link of the iterator to the threads of the process pidfd names. The kernel keeps its pid
 * number, not the process: a number taken by another process once the caller is gone would be
 * walked instead, which is why every read checks that the caller still lives (caller.c), as for
 * its /proc/PID. */
static int attach(int pidfd) {
        union bpf_iter_link_info info = {};
        _cleanup_close_ int dup = -EBADF;
        int r;

        /* pid_fd 0 means "no filter": every task of the machine */
        if (pidfd == 0) {
                dup = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
                if (dup < 0)
                        return negative_errno();
                pidfd = dup;
        }
        info.task.pid_fd = (__u32) pidfd;
        LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info, .iter_info_len = sizeof(info));
        r = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, &opts);
        return r < 0 ? (errno > 0 ? -errno : r) : r;
}

/* What one walk writes at most: a record per thread, one more than are read (to tell too many), the
 * first thread's own record, the reader's own two, and the end. */
#define WALK_MAX \
        ((ZD_CALLER_MAX_THREADS + 2) * sizeof(struct zd_caller_bpf_thread) + sizeof(struct zd_caller_bpf_first))

/* Whether buf (len bytes) ends with the end record, the records before it whole. */
static bool walk_done(const char *buf, size_t len) {
        struct zd_caller_bpf_thread t;

        if (len < sizeof(t))
                return false;
        memcpy(&t, buf + len - sizeof(t), sizeof(t));
        return t.flags & ZD_CALLER_BPF_END;
}

/* The records of a walk (buf, len bytes) into ret: the threads' in ret->t, the first thread's own
 * (after its record) in ret->first. */
static int parse(const char *buf, size_t len, struct zd_caller_bpf_threads *ret) {
        size_t off = 0;

        ret->n = 0;
        ret->has_first = ret->has_self = false;
        for (;;) {
                struct zd_caller_bpf_thread *t = &ret->t[ret->n];

                if (len - off < sizeof(*t))
                        return -EBADMSG;
                memcpy(t, buf + off, sizeof(*t));
                off += sizeof(*t);
                if (t->flags & ZD_CALLER_BPF_END)
                        return off == len ? 0 : -EBADMSG;
                if (t->flags & ZD_CALLER_BPF_SELF) {
                        if (ret->has_self || len - off < sizeof(ret->self))
                                return -EBADMSG;
                        memcpy(&ret->self, buf + off, sizeof(ret->self));
                        off += sizeof(ret->self);
                        ret->has_self = true;
                        continue;
                }
                if (t->flags & ZD_CALLER_BPF_LEADER) {
                        if (ret->has_first || len - off < sizeof(ret->first))
                                return -EBADMSG;
                        memcpy(&ret->first, buf + off, sizeof(ret->first));
                        off += sizeof(ret->first);
                        ret->has_first = true;
                }
                if (++ret->n >= ELEMENTSOF(ret->t))
                        return -EMLINK;
        }
}

/* The records of one walk through link. */
static int walk(int link, struct zd_caller_bpf_threads *ret) {
        _cleanup_close_ int it = bpf_iter_create(link);
        static char buf[WALK_MAX];
        size_t len = 0;

        if (it < 0)
                return errno > 0 ? -errno : it;
        /* one read() gets them all, but where the kernel stops a walk to reschedule */
        while (!walk_done(buf, len)) {
                ssize_t n = read(it, buf + len, sizeof(buf) - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len == sizeof(buf) && !walk_done(buf, len))
                        return -EMLINK; /* more threads than are read */
        }
        return parse(buf, len, ret);
}

int zd_caller_bpf_read(struct zd_caller_conn *k, struct zd_caller_bpf_threads *ret) {
        int r;

        if (prog_fd < 0)
                return -EOPNOTSUPP;
        if (k->bpf_link_fd < 0) {
                r = attach(k->pidfd);
                if (r < 0)
                        return r;
                k->bpf_link_fd = r;
        }
        r = walk(k->bpf_link_fd, ret);
        if (r < 0)
                return r;
        if (ret->n > ZD_CALLER_MAX_THREADS)
                return -EMLINK;
        /* every record of one process, the kernel's filter at work */
        for (size_t i = 1; i < ret->n; i++)
                if (ret->t[i].tgid != ret->t[0].tgid)
                        return -EPROTO;
        return 0;
}

/* The namespaces every thread shares with the first: those caller-ns.c reads per thread (net,
 * IPC, UTS, mount, cgroup), and those the kernel keeps the same for every thread (time, user),
 * so never a refusal the /proc path would not make. pid_for_children is not compared: neither
 * path reads it, a task's pid namespace is the profile's. */
static const unsigned compared_ns[] = { ZD_CALLER_BPF_NS_NET, ZD_CALLER_BPF_NS_IPC,    ZD_CALLER_BPF_NS_UTS,
                                        ZD_CALLER_BPF_NS_MNT, ZD_CALLER_BPF_NS_CGROUP, ZD_CALLER_BPF_NS_TIME,
                                        ZD_CALLER_BPF_NS_USER };

int zd_caller_bpf_merge(const struct zd_caller_bpf_thread *first, const struct zd_caller_bpf_thread *t, bool labelled,
                        struct zd_caller *c) {
        bool proc = false;

        if (t->cred != first->cred) {
                /* Uid and Gid lines as the /proc path compares them, then Groups */
                if (memcmp(t->ids, first->ids, sizeof(t->ids)) != 0 || t->ngroups != first->ngroups)
                        return -ENOTUNIQ;
                /* another group_info may hold the same groups (each thread of a process that
                 * called setgroups() through glibc has its own): /proc compares them, first */
                if (t->group_info != first->group_info)
                        return 1;
                /* another cred may carry another label */
                proc = labelled;
        }
        for (size_t i = 0; i < ELEMENTSOF(compared_ns); i++)
                if (t->ns[compared_ns[i]] != first->ns[compared_ns[i]])
                        return -EREMCHG;
        /* another css_set: another cgroup somewhere, or a thread the kernel is still creating
         * (in every root until it joins its creator's), which only its /proc cgroup tells */
        proc = proc || t->css_set != first->css_set;
        c->cap_inh &= t->cap_inh;
        c->cap_prm &= t->cap_prm;
        c->cap_eff &= t->cap_eff;
        c->cap_bnd &= t->cap_bnd;
        c->cap_amb &= t->cap_amb;
        c->no_new_privs = c->no_new_privs || (t->flags & ZD_CALLER_BPF_NNP);
        c->seccomp_mode = t->seccomp_mode > c->seccomp_mode ? t->seccomp_mode : c->seccomp_mode;
        c->seccomp_filters = t->seccomp_filters > c->seccomp_filters ? t->seccomp_filters : c->seccomp_filters;
        return proc ? 1 : 0;
}

/* zygoted's own first-thread record against what the system calls and /proc say of it: its
 * scheduling (as caller-bpf-first.c makes the calls' answers from the record: on a kernel whose
 * ioprio_get() answers otherwise for a process without an I/O priority of its own, this fails),
 * its limits, groups, umask, oom_score_adj and pid namespace. */
static int self_check_first(const struct zd_caller_bpf_first *f, const struct zd_caller_bpf_thread *t) {
        struct sched_param sp = {};
        gid_t groups[ZD_CALLER_BPF_GROUPS];
        char link[64], want[32], oom[16];
        int ioprio, nice, policy, n;
        mode_t m;
        ssize_t l;

        errno = 0;
        nice = getpriority(PRIO_PROCESS, 0);
        if (nice == -1 && errno != 0)
                return negative_errno();
        ioprio = (int) syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
        policy = sched_getscheduler(0);
        if (ioprio < 0 || policy < 0 || sched_getparam(0, &sp) < 0)
                return negative_errno();
        if (nice != f->static_prio - 120 || ioprio != (int) f->ioprio ||
            (policy & ~SCHED_RESET_ON_FORK) != (int) f->policy ||
            !(policy & SCHED_RESET_ON_FORK) != !(f->flags & ZD_CALLER_BPF_RESET_ON_FORK) ||
            ((policy == SCHED_FIFO || policy == SCHED_RR) && sp.sched_priority != (int) f->rt_priority))
                return -EPROTO;
        for (int res = 0; res < RLIM_NLIMITS && res < ZD_CALLER_BPF_RLIMITS; res++) {
                struct rlimit rl;

                if (getrlimit(res, &rl) < 0)
                        return negative_errno();
                if (rl.rlim_cur != f->rlim[res][0] || rl.rlim_max != f->rlim[res][1])
                        return -EPROTO;
        }
        n = getgroups(ELEMENTSOF(groups), groups);
        if (n >= 0 && (n != t->ngroups || memcmp(groups, f->groups, (size_t) n * sizeof(gid_t)) != 0))
                return -EPROTO;
        /* umask cannot be read without setting it: twice, zygoted has one thread */
        m = umask(0);
        umask(m);
        if (!(f->flags & ZD_CALLER_BPF_FS) || f->umask != m)
                return -EPROTO;
        l = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
        if (l < 0)
                return negative_errno();
        link[l] = 0;
        snprintf(want, sizeof(want), "pid:[%u]", f->pid_ns);
        if (strcmp(link, want) != 0)
                return -EPROTO;
        {
                _cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);

                if (fd < 0)
                        return negative_errno();
                l = read(fd, oom, sizeof(oom) - 1);
                if (l < 0)
                        return negative_errno();
                oom[l] = 0;
                if (atoi(oom) != f->oom_score_adj)
                        return -EPROTO;
        }
        return 0;
}

/* zygoted itself walked: one thread, itself, with its own effective uid and capabilities, so the
 * filter holds and every field is where the program looked for it. */
static int self_check(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        struct zd_caller_conn k = ZD_CALLER_CONN_INIT; /* its pidfd and link only */
        struct zd_caller_bpf_threads ts;
        const struct zd_caller_bpf_thread *t = &ts.t[0];
        int r;

        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        k.pidfd = pidfd_open_pid(getpid());
        if (k.pidfd < 0)
                return k.pidfd;
        r = zd_caller_bpf_read(&k, &ts);
        if (r >= 0 &&
            (ts.n != 1 || !(t->flags & ZD_CALLER_BPF_LEADER) || t->tid != (__u32) getpid() || t->ids[1] != geteuid() ||
             t->ids[5] != getegid() || t->cap_eff != (d[0].effective | (__u64) d[1].effective << 32) ||
             t->nsproxy == 0 || t->ns[ZD_CALLER_BPF_NS_NET] == 0 || !ts.has_first))
                r = -EPROTO;
        if (r >= 0)
                r = self_check_first(&ts.first, t);
        /* and the reader's own, read in the same walk: the same task */
        if (r >= 0 && (!ts.has_self || memcmp(&ts.self, &ts.first, sizeof(ts.self)) != 0))
                r = -EPROTO;
        safe_close(k.bpf_link_fd);
        safe_close(k.pidfd);
        return r;
}

int zd_caller_bpf_load(void) {
        int r;

        struct caller_threads *skel;

        if (prog_fd >= 0)
                return 0;
        libbpf_set_print(quiet);
        skel = caller_threads__open_and_load();
        if (!skel)
                return errno > 0 ? -errno : -EOPNOTSUPP;
        r = fcntl(bpf_program__fd(skel->progs.zd_caller_threads), F_DUPFD_CLOEXEC, 3);
        r = r < 0 ? negative_errno() : r;
        caller_threads__destroy(skel);
        if (r < 0)
                return r;
        prog_fd = r;
        r = self_check();
        if (r < 0)
                prog_fd = safe_close(prog_fd);
        return r;
}
