/* SPDX-License-Identifier: MIT */
/*
 * What confines the caller, read so that its task can carry it (docs/SECURITY.md, "A task
 * carries its caller's confinement"). The daemon forks the task (or a reference does), so
 * without this the task would start with zygoted's limits, namespaces and cgroups.
 *
 * Race-free: the process is named by a pidfd, from SO_PEERPIDFD where the kernel has it (the
 * process that connected, whatever happened to its pid number since), else pidfd_open() on
 * SO_PEERCRED's pid, whose real uid must then be the connection's. Everything is read through
 * /proc/PID, and the pidfd is checked alive afterwards: a live process keeps its
 * pid number, so what was read under that number was its own.
 *
 * A connection keeps the process it found at its first call, and the files of it that every
 * call reads again (struct zd_caller_conn): a caller that changes between two calls is read as
 * it is at the second, as on a new connection; only opens and closes are saved.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller.h"
#include "caller-proc.h"
#include "pidfd-util.h"
#include "util.h"

void zd_caller_done(struct zd_caller *c) {
        if (!c)
                return;
        c->pidfd = safe_close(c->pidfd);
        c->root_fd = safe_close(c->root_fd);
        free(c->groups);
        c->groups = NULL;
        c->n_groups = 0;
        for (size_t i = 0; i < c->n_cgroups; i++)
                safe_close(c->cgroup_fds[i]);
        c->n_cgroups = 0;
}

/* The keys of /proc/PID/status read here. */
enum status_key {
        S_UID,
        S_GID,
        S_GROUPS,
        S_CAP_INH,
        S_CAP_PRM,
        S_CAP_EFF,
        S_CAP_BND,
        S_CAP_AMB,
        S_NO_NEW_PRIVS,
        S_SECCOMP,
        S_SECCOMP_FILTERS,
        S_UMASK,
        S_THREADS,
        _S_MAX
};

static const struct {
        const char *name;
        size_t len;
} status_keys[_S_MAX] = {
#define KEY(k, n) [k] = { n, sizeof(n) - 1 }
        KEY(S_UID, "Uid"),
        KEY(S_GID, "Gid"),
        KEY(S_GROUPS, "Groups"),
        KEY(S_CAP_INH, "CapInh"),
        KEY(S_CAP_PRM, "CapPrm"),
        KEY(S_CAP_EFF, "CapEff"),
        KEY(S_CAP_BND, "CapBnd"),
        KEY(S_CAP_AMB, "CapAmb"),
        KEY(S_NO_NEW_PRIVS, "NoNewPrivs"),
        KEY(S_SECCOMP, "Seccomp"),
        KEY(S_UMASK, "Umask"),
        KEY(S_THREADS, "Threads"),
        KEY(S_SECCOMP_FILTERS, "Seccomp_filters"),
#undef KEY
};

/* A status text's value of each key (after "Key:" and its blanks), NULL where it has none: found
 * in one pass over its sixty-odd lines, where a scan from the top per key read most of them a
 * dozen times at each call. */
struct status {
        const char *v[_S_MAX];
};

static void index_status(const char *text, struct status *ret) {
        *ret = (struct status){};
        for (const char *l = text, *eol; *l; l = *eol ? eol + 1 : eol) {
                const char *colon = strchr(l, ':');

                eol = strchrnul(l, '\n');
                if (!colon || colon > eol)
                        continue;
                for (size_t i = 0; i < _S_MAX; i++)
                        if (!ret->v[i] && (size_t) (colon - l) == status_keys[i].len &&
                            memcmp(l, status_keys[i].name, status_keys[i].len) == 0) {
                                ret->v[i] = colon + 1 + strspn(colon + 1, " \t");
                                break;
                        }
        }
}

/* The n-th (0-based) number of a "Key:\t1\t2..." line, base 10 or 16. */
static int field_number(const struct status *st, enum status_key key, unsigned n, int base, uint64_t *ret) {
        const char *v = st->v[key];
        unsigned long long x;
        char *end;

        if (!v)
                return -EBADMSG;
        for (;;) {
                errno = 0;
                x = strtoull(v, &end, base);
                if (errno || end == v)
                        return -EBADMSG;
                if (n-- == 0) {
                        *ret = x;
                        return 0;
                }
                v = end;
        }
}

/* The line of "Key:" up to its newline, for comparing two threads' ids. */
static size_t line_len(const char *v) {
        return v ? strcspn(v, "\n") : 0;
}

static bool same_line(const struct status *a, const struct status *b, enum status_key key) {
        const char *x = a->v[key], *y = b->v[key];

        return x && y && line_len(x) == line_len(y) && strncmp(x, y, line_len(x)) == 0;
}

/* Groups: "Groups:\t1 2 3 \n" (empty for none). */
static int parse_groups(const struct status *st, struct zd_caller *c) {
        const char *v = st->v[S_GROUPS];
        size_t n = 0;

        if (!v)
                return -EBADMSG;
        for (const char *q = v; *q && *q != '\n'; q++)
                n += *q >= '0' && *q <= '9' && (q[1] < '0' || q[1] > '9');
        if (n > ZE_MAX_GROUPS)
                return -E2BIG;
        c->groups = n ? calloc(n, sizeof(gid_t)) : NULL;
        if (n && !c->groups)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char *end;

                v += strspn(v, " \t");
                c->groups[i] = (gid_t) strtoul(v, &end, 10);
                v = end;
        }
        c->n_groups = n;
        return 0;
}

/* The capability sets and confinement flags of one status text. */
struct thread_caps {
        uint64_t inh, prm, eff, bnd, amb;
        bool nnp;
        unsigned seccomp;
        unsigned filters; /* Seccomp_filters (5.9+); UINT_MAX when the kernel does not say */
};

static int parse_thread(const struct status *st, struct thread_caps *t) {
        uint64_t v;
        int r;

        if ((r = field_number(st, S_CAP_INH, 0, 16, &t->inh)) < 0 ||
            (r = field_number(st, S_CAP_PRM, 0, 16, &t->prm)) < 0 ||
            (r = field_number(st, S_CAP_EFF, 0, 16, &t->eff)) < 0 ||
            (r = field_number(st, S_CAP_BND, 0, 16, &t->bnd)) < 0)
                return r;
        /* CapAmb (4.3) and NoNewPrivs (4.10): none on a kernel without them */
        t->amb = field_number(st, S_CAP_AMB, 0, 16, &v) >= 0 ? v : 0;
        t->nnp = field_number(st, S_NO_NEW_PRIVS, 0, 10, &v) >= 0 && v != 0;
        t->seccomp = field_number(st, S_SECCOMP, 0, 10, &v) >= 0 ? (unsigned) v : 0;
        t->filters = field_number(st, S_SECCOMP_FILTERS, 0, 10, &v) >= 0 ? (unsigned) v : UINT_MAX;
        return 0;
}

static void merge_thread(struct zd_caller *c, const struct thread_caps *t) {
        c->cap_inh &= t->inh;
        c->cap_prm &= t->prm;
        c->cap_eff &= t->eff;
        c->cap_bnd &= t->bnd;
        c->cap_amb &= t->amb;
        c->no_new_privs = c->no_new_privs || t->nnp;
        c->seccomp_mode = t->seccomp > c->seccomp_mode ? t->seccomp : c->seccomp_mode;
        c->seccomp_filters = t->filters > c->seccomp_filters ? t->filters : c->seccomp_filters;
}

/* One status text of another thread, merged into c: ids the first thread's (main), or -ENOTUNIQ. */
static int merge_status(const struct status *main, const char *text, struct zd_caller *c) {
        struct thread_caps t;
        struct status st;
        int r;

        index_status(text, &st);
        if (!same_line(&st, main, S_UID) || !same_line(&st, main, S_GID) || !same_line(&st, main, S_GROUPS))
                return -ENOTUNIQ;
        r = parse_thread(&st, &t);
        if (r >= 0)
                merge_thread(c, &t);
        return r;
}

/* The first thread's as read at this call: its status (the text main points into) and what the
 * facets read of it (first). */
struct first_read {
        char status_buf[4096];
        char *status_long; /* owned: the text when it did not fit status_buf */
        struct status main;
        uint64_t threads; /* its Threads: count, 1 when it does not say */
        struct zd_caller_first first;
};

/* Another thread of the caller, through its directory t->dir_fd and the files opened under it
 * where t has none yet: its status merged into c, its namespaces, cgroups and label compared
 * with the first thread's. -ENOENT or -ESRCH: it has ended. zygoted cannot know which thread sent
 * the call: each may hold other capabilities, flags or a filter of its own (all are per thread),
 * so the task gets what every thread holds and the most confined thread's flags and filter; ids,
 * namespaces, cgroups and labels are per thread too, and threads that disagree on them are
 * refused rather than guessed at. */
static int read_other(struct zd_caller_thread *t, const struct first_read *f, struct zd_caller *c) {
        _cleanup_free_ char *text = NULL;
        char buf[4096];
        int r;

        r = zd_caller_pread(&t->status_fd, t->dir_fd, "status", buf, sizeof(buf), &text);
        if (r >= 0)
                r = merge_status(&f->main, text ? text : buf, c);
        if (r >= 0)
                r = zd_caller_thread_same_ns(t->dir_fd, &f->first);
        if (r >= 0 && f->first.cgroup)
                r = zd_caller_thread_same_cgroups(&t->cgroup_fd, t->dir_fd, &f->first);
        if (r >= 0)
                r = zd_caller_thread_same_label(t->dir_fd, &f->first);
        return r;
}

/* The caller's other threads, listed in /proc/PID/task: each opened and read, its files kept by
 * the connection when keep is set (zd_caller_threads_keep()), else closed. A thread that ended
 * meanwhile (-ENOENT or -ESRCH) is passed over: whether the caller itself lives is checked on its
 * pidfd after every read. */
static int read_listed(struct zd_caller_conn *k, bool keep, pid_t pid, const struct first_read *f,
                       struct zd_caller *c) {
        int fd = openat(k->proc_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        DIR *dir;
        int r = 0;

        if (fd < 0)
                return negative_errno();
        dir = fdopendir(fd);
        if (!dir) {
                r = negative_errno();
                close(fd);
                return r;
        }
        while (r >= 0 && (errno = 0, de = readdir(dir))) {
                struct zd_caller_thread t = ZD_CALLER_THREAD_INIT;

                /* thread ids are numbers: nothing else is read */
                if (strspn(de->d_name, "0123456789") != strlen(de->d_name) || strlen(de->d_name) > 10 ||
                    atoi(de->d_name) == pid)
                        continue;
                t.dir_fd = openat(dirfd(dir), de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                r = t.dir_fd < 0 ? negative_errno() : read_other(&t, f, c);
                if (r >= 0 && keep)
                        zd_caller_threads_keep(k, &t);
                zd_caller_thread_close(&t);
                if (r == -ENOENT || r == -ESRCH)
                        r = 0;
        }
        if (r >= 0 && errno != 0)
                r = negative_errno();
        closedir(dir);
        return r;
}

/* One thread (number tid) read the /proc way, as read_listed() reads it: where its record from the
 * BPF task iterator cannot tell. Gone meanwhile (-ENOENT, -ESRCH): passed over, as there. */
static int read_tid(struct zd_caller_conn *k, uint32_t tid, const struct first_read *f, struct zd_caller *c) {
        struct zd_caller_thread t = ZD_CALLER_THREAD_INIT;
        char path[32];
        int r;

        if (tid == 0)
                return -EPROTO; /* not in zygoted's pid namespace: not a caller's thread */
        snprintf(path, sizeof(path), "task/%" PRIu32, tid);
        t.dir_fd = openat(k->proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = t.dir_fd < 0 ? negative_errno() : read_other(&t, f, c);
        zd_caller_thread_close(&t);
        return r == -ENOENT || r == -ESRCH ? 0 : r;
}

/* The other threads through the BPF task iterator (caller-bpf.c): every thread's record in one
 * read(), each compared with the first thread's record and merged as read_other() does. The first
 * thread's record must show what its status showed (its effective ids), and its capability sets
 * and flags are merged too: it may have changed since. A thread that is exiting is passed over,
 * as its /proc files would be. */
static int read_threads_bpf(struct zd_caller_conn *k, const struct first_read *f, struct zd_caller *c) {
        const struct zd_caller_bpf_thread *first = NULL;
        struct zd_caller_bpf_threads ts;
        int r;

        r = zd_caller_bpf_read(k, &ts);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ts.n && !first; i++)
                if ((ts.t[i].flags & (ZD_CALLER_BPF_LEADER | ZD_CALLER_BPF_EXITING)) == ZD_CALLER_BPF_LEADER)
                        first = &ts.t[i];
        if (!first)
                return -ESRCH;
        if (first->ids[1] != c->euid || first->ids[5] != c->egid)
                return -ENOTUNIQ;
        for (size_t i = 0; i < ts.n; i++) {
                if (ts.t[i].flags & ZD_CALLER_BPF_EXITING)
                        continue;
                r = zd_caller_bpf_merge(first, &ts.t[i], f->first.has_label, c);
                if (r > 0)
                        r = read_tid(k, ts.t[i].tid, f, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The other threads of a caller with more than one, in one walk: through the threads the
 * connection keeps (ZD_CALLER_KEEP_THREADS) when they are provably all of them, else listed. The
 * caller has n threads by its first thread's status, read before them; each kept thread was
 * opened at an earlier call, and its status answers now, so that thread was alive at that status
 * read too; n - 1 of them and the first thread are then all the n that were. One that ended
 * (ESRCH, ENOENT), or another count, and the threads are listed and opened again, as without
 * keeping them. What was merged already stays merged: it was a thread of the caller, and a thread
 * read twice changes nothing. */
static int read_threads(struct zd_caller_conn *k, const struct first_read *f, struct zd_caller *c) {
        int r = -ESRCH;

        if (f->threads <= 1) {
                zd_caller_threads_clear(k);
                return 0;
        }
        /* one read per thread, in the daemon's one thread: bounded, or a caller with thousands
         * would stall every other caller at each of its Spawns */
        if (f->threads > ZD_CALLER_MAX_THREADS)
                return -EMLINK;
        if (zd_caller_bpf_loaded())
                return read_threads_bpf(k, f, c);
        if (!k->keep_threads)
                return read_listed(k, false, c->pid, f, c);
        if (k->threads.n == f->threads - 1) {
                r = 0;
                for (size_t i = 0; r >= 0 && i < k->threads.n; i++)
                        r = read_other(&k->threads.t[i], f, c);
        }
        if (r != -ESRCH && r != -ENOENT)
                return r;
        zd_caller_threads_clear(k);
        r = read_listed(k, true, c->pid, f, c);
        if (r < 0)
                zd_caller_threads_clear(k);
        return r;
}

/* The first thread's status: its ids, groups, capability sets, flags and umask into c, its text
 * and thread count into f. */
static int read_status(struct zd_caller_conn *k, const struct ucred *cr, struct first_read *f, struct zd_caller *c) {
        struct status *st = &f->main;
        struct thread_caps t;
        uint64_t v;
        int r;

        r = zd_caller_pread(&k->status_fd, k->proc_fd, "status", f->status_buf, sizeof(f->status_buf), &f->status_long);
        if (r < 0)
                return r;
        index_status(f->status_long ? f->status_long : f->status_buf, st);
        if (k->check_uid) {
                if (field_number(st, S_UID, 0, 10, &v) < 0 || v != cr->uid)
                        return -ESRCH; /* not the process that connected */
        }
        /* Uid and Gid: real, effective, saved, filesystem. The effective ones, as SO_PEERCRED. */
        if ((r = field_number(st, S_UID, 1, 10, &v)) < 0)
                return r;
        c->euid = (uid_t) v;
        if ((r = field_number(st, S_GID, 1, 10, &v)) < 0)
                return r;
        c->egid = (gid_t) v;
        r = parse_groups(st, c);
        if (r < 0)
                return r;
        r = parse_thread(st, &t);
        if (r < 0)
                return r;
        c->cap_inh = c->cap_prm = c->cap_eff = c->cap_bnd = c->cap_amb = UINT64_MAX;
        c->no_new_privs = false;
        c->seccomp_mode = 0;
        c->seccomp_filters = 0;
        merge_thread(c, &t);
        /* Umask (4.7): without it, the strictest */
        c->sched.umask = field_number(st, S_UMASK, 0, 8, &v) >= 0 ? (uint32_t) (v & 0777) : 0777;
        if (field_number(st, S_THREADS, 0, 10, &f->threads) < 0)
                f->threads = 1;
        return 0;
}

/* How the kernel schedules process pid (0: zygoted itself), whose oom_score_adj is oom_path
 * under dir_fd (read through *oom_fd, which stays open): what a child it forked now would start
 * with. Everything but the umask, which the status gives. The values are its first thread's: they
 * are per thread, and a caller whose other thread made the call may get a task scheduled as its
 * first thread is, never more than what that process could give a child through its own first
 * thread. */
static int read_sched(int *oom_fd, int dir_fd, const char *oom_path, pid_t pid, struct ze_sched *ret) {
        _cleanup_free_ char *text = NULL;
        struct sched_param sp = {};
        int policy, ioprio, nice;
        char buf[64];
        bool reset;
        int r;

        errno = 0;
        nice = getpriority(PRIO_PROCESS, (id_t) pid);
        if (nice == -1 && errno != 0)
                return negative_errno();
        ioprio = (int) syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
        /* ENOSYS: a kernel without the block layer has no I/O priorities: none to carry */
        if (ioprio < 0 && errno == ENOSYS)
                ioprio = 0;
        else if (ioprio < 0)
                return negative_errno();
        policy = sched_getscheduler(pid);
        if (policy < 0 || sched_getparam(pid, &sp) < 0)
                return negative_errno();
        if (sched_getaffinity(pid, sizeof(ret->affinity), (cpu_set_t *) (void *) ret->affinity) < 0)
                return negative_errno(); /* EINVAL: more CPUs than ZE_AFFINITY_WORDS holds */
        r = zd_caller_pread(oom_fd, dir_fd, oom_path, buf, sizeof(buf), &text);
        if (r < 0)
                return r;

        /* What fork gives a child: SCHED_RESET_ON_FORK takes a real-time policy back to
         * SCHED_OTHER and a negative nice to 0; a SCHED_DEADLINE process may not fork at all,
         * and what is not a policy a child could get becomes SCHED_OTHER, the least privileged
         * for a task that keeps the nice value. */
        reset = policy & SCHED_RESET_ON_FORK;
        policy &= ~SCHED_RESET_ON_FORK;
        if (reset && nice < 0)
                nice = 0;
        if ((reset && (policy == SCHED_FIFO || policy == SCHED_RR)) ||
            (policy != SCHED_OTHER && policy != SCHED_BATCH && policy != SCHED_IDLE && policy != SCHED_FIFO &&
             policy != SCHED_RR)) {
                policy = SCHED_OTHER;
                sp.sched_priority = 0;
        }
        /* Some kernels answer for a process without an I/O priority of its own (class NONE) the
         * one its nice value gives (best effort, level (nice + 20) / 5): set as it is, the task's
         * would no longer follow its nice value. Kept as NONE, which means the same. */
        if (ioprio >> 13 == 2 /* IOPRIO_CLASS_BE */ && (ioprio & 7) == (nice + 20) / 5 && policy != SCHED_FIFO &&
            policy != SCHED_RR)
                ioprio = 0;
        else if (ioprio >> 13 == 0)
                ioprio = 0;
        ret->policy = policy;
        ret->priority = sp.sched_priority;
        ret->nice = nice;
        ret->ioprio = ioprio;
        ret->oom_score_adj = atoi(text ? text : buf);
        return 0;
}

/* zygoted's own oom_score_adj, open from start-up when it keeps its files (zd_caller_keep_own()),
 * else opened at each call. */
static int own_oom_fd = -EBADF;

int zd_caller_keep_own(void) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = zd_caller_read_kept(&own_oom_fd, AT_FDCWD, "/proc/self/oom_score_adj", &text);
        if (r < 0)
                return r;
        return zd_caller_keep_own_cgroups();
}

static int own_umask = -1;

int zd_caller_own_sched(struct ze_sched *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct ze_sched own = {};
        mode_t m;
        int r;

        r = read_sched(own_oom_fd >= 0 ? &own_oom_fd : &fd, AT_FDCWD, "/proc/self/oom_score_adj", 0, &own);
        if (r < 0)
                return r;
        /* umask cannot be read without setting it: twice, and zygoted has one thread. Once: only
         * zygoted itself sets its umask (server.c puts it back at once), so it is the same at
         * every call, where scheduling is read again (an administrator may renice zygoted). */
        if (own_umask < 0) {
                m = umask(0);
                umask(m);
                own_umask = (int) m;
        }
        own.umask = (uint32_t) own_umask;
        *ret = own;
        return 0;
}

int zd_caller_task_sched(const struct zd_caller *c, bool privileged, struct ze_sched *ret, bool *ret_set) {
        struct ze_sched own, t;
        int r;

        r = zd_caller_own_sched(&own);
        if (r < 0)
                return r;
        t = c->sched;
        if (!privileged) {
                t.nice = t.nice > own.nice ? t.nice : own.nice;
                t.oom_score_adj = own.oom_score_adj;
        }
        *ret_set = memcmp(&t, &own, sizeof(own)) != 0;
        /* a write to /proc saved where nothing changes */
        if (t.oom_score_adj == own.oom_score_adj)
                t.oom_score_adj = ZE_OOM_KEEP;
        *ret = t;
        return 0;
}

/* "unlimited" or a number, in a /proc/PID/limits column. */
static int limit_value(const char *v, uint64_t *ret) {
        char *end;

        v += strspn(v, " ");
        if (strncmp(v, "unlimited", 9) == 0) {
                *ret = RLIM_INFINITY;
                return 0;
        }
        errno = 0;
        *ret = strtoull(v, &end, 10);
        return errno || end == v ? -EBADMSG : 0;
}

/* /proc/PID/limits: a title line, then one line per resource in RLIMIT_* order, the name in
 * 26 columns, then the soft and hard limits in 21 columns each. It says what prlimit(PID) would,
 * all 16 limits in one read where prlimit takes 16 calls (a tenth of a millisecond on a slow
 * machine), and anyone may read it where prlimit on another user's process needs
 * CAP_SYS_RESOURCE (which an unprivileged zygoted, and a root one in some containers, lacks). */
static int parse_limits(const char *text, struct zd_caller *c) {
        const char *l = strchr(text, '\n');

        c->n_rlimits = 0;
        for (int res = 0; res < RLIM_NLIMITS && res < ZE_MAX_RLIMITS; res++) {
                struct ze_rlimit *rl = &c->rlimits[c->n_rlimits];

                if (!l || strlen(++l) < 26 + 21 + 1)
                        return -EBADMSG;
                if (limit_value(l + 26, &rl->cur) < 0 || limit_value(l + 26 + 21, &rl->max) < 0)
                        return -EBADMSG;
                rl->resource = (uint32_t) res;
                c->n_rlimits++;
                l = strchr(l, '\n');
        }
        return 0;
}

/* zygoted's own hard limits, read once: it never changes them (it raises only its soft
 * RLIMIT_NOFILE, at start-up). */
static uint64_t own_max[ZE_MAX_RLIMITS];
static bool own_max_read;

static int read_rlimits(struct zd_caller_conn *k, struct zd_caller *c) {
        _cleanup_free_ char *text = NULL;
        char buf[4096];
        int r;

        if (!own_max_read) {
                for (int res = 0; res < RLIM_NLIMITS && res < ZE_MAX_RLIMITS; res++) {
                        struct rlimit rl;

                        if (getrlimit(res, &rl) < 0)
                                return negative_errno();
                        own_max[res] = rl.rlim_max;
                }
                own_max_read = true;
        }
        r = zd_caller_pread(&k->limits_fd, k->proc_fd, "limits", buf, sizeof(buf), &text);
        if (r < 0)
                return r;
        r = parse_limits(text ? text : buf, c);
        if (r < 0)
                return r;
        /* Raising a hard limit above ours needs CAP_SYS_RESOURCE, which an unprivileged zygoted
         * (and a root one in some containers) lacks: the task gets the lower of the caller's hard
         * limit and ours, never more than the caller's. */
        for (size_t i = 0; i < c->n_rlimits; i++) {
                struct ze_rlimit *l = &c->rlimits[i];

                l->max = l->max < own_max[l->resource] ? l->max : own_max[l->resource];
                l->cur = l->cur < l->max ? l->cur : l->max;
        }
        return 0;
}

static int read_ids(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, uid_t *ret_uid, gid_t *ret_gid) {
        _cleanup_free_ char *text = NULL;
        uint64_t uid, gid, v;
        struct status st;
        int r;

        r = zd_caller_find(conn_fd, cr, k);
        if (r < 0)
                return r;
        r = zd_caller_read_kept(&k->status_fd, k->proc_fd, "status", &text);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        index_status(text, &st);
        if (k->check_uid && (field_number(&st, S_UID, 0, 10, &v) < 0 || v != cr->uid))
                return -ESRCH; /* not the process that connected */
        if ((r = field_number(&st, S_UID, 1, 10, &uid)) < 0 || (r = field_number(&st, S_GID, 1, 10, &gid)) < 0)
                return r;
        if (pidfd_kill(k->pidfd, 0) == -ESRCH) /* gone: its number may be another's now */
                return -ESRCH;
        *ret_uid = (uid_t) uid;
        *ret_gid = (gid_t) gid;
        return 0;
}

int zd_caller_read_ids(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, uid_t *ret_uid, gid_t *ret_gid) {
        struct zd_caller_conn once = ZD_CALLER_CONN_INIT;
        int r = read_ids(conn_fd, cr, k ? k : &once, ret_uid, ret_gid);

        zd_caller_conn_clear(&once);
        return r;
}

static int read_caller(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, struct first_read *f,
                       struct zd_caller *c) {
        int r;

        r = zd_caller_find(conn_fd, cr, k);
        if (r < 0)
                return r;
        c->pid = k->pid;
        /* the spawn's own: it may outlive the connection */
        c->pidfd = fcntl(k->pidfd, F_DUPFD_CLOEXEC, 3);
        if (c->pidfd < 0)
                return negative_errno();

        /* the first thread, then every other one in one walk (read_threads()) */
        r = read_status(k, cr, f, c);
        if (r >= 0)
                r = read_sched(&k->oom_fd, k->proc_fd, "oom_score_adj", c->pid, &c->sched);
        if (r >= 0)
                r = read_rlimits(k, c);
        if (r >= 0)
                r = zd_caller_read_namespaces(k->proc_fd, k, c, &f->first);
        if (r >= 0)
                r = zd_caller_read_cgroups(k->proc_fd, k, c, &f->first);
        if (r >= 0)
                r = zd_caller_read_lsm(k->proc_fd, c, &f->first);
        if (r >= 0)
                r = read_threads(k, f, c);
        /* A process that is gone may have left its number to another: what was read may be
         * that one's. Alive now, it was alive throughout, and the number was its own. */
        if (pidfd_kill(c->pidfd, 0) == -ESRCH) /* EPERM: alive, only not ours to signal */
                return -ESRCH;
        return r == -ENOENT ? -ESRCH : r;
}

int zd_caller_read(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, struct zd_caller *c) {
        struct zd_caller_conn once = ZD_CALLER_CONN_INIT;
        struct first_read f;
        int r;

        f.status_long = f.first.cgroup_long = NULL;
        r = read_caller(conn_fd, cr, k ? k : &once, &f, c);
        free(f.status_long);
        free(f.first.cgroup_long);
        zd_caller_conn_clear(&once);
        return r;
}
