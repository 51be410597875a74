/* SPDX-License-Identifier: MIT */
/*
 * The caller's scheduling and resource limits (caller.c's facet; caller-proc.h), and zygoted's
 * own: read through system calls and /proc/PID/limits and oom_score_adj, or given by the BPF
 * iterator's record (caller-bpf.c), and made into what a child forked now would start with.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller-proc.h"
#include "util.h"

/* How the kernel schedules process pid (0: zygoted itself), whose oom_score_adj is oom_path
 * under dir_fd (read through *oom_fd, which stays open): what a child it forked now would start
 * with. Everything but the umask, which the status gives. The values are its first thread's: they
 * are per thread, and a caller whose other thread made the call may get a task scheduled as its
 * first thread is, never more than what that process could give a child through its own first
 * thread. */
/* What fork gives a child of a process scheduled as raw says (policy as sched_getscheduler() gives
 * it, with SCHED_RESET_ON_FORK), into ret (all but affinity and umask). */
void zd_caller_sched_fork(const struct zd_caller_sched_raw *raw, struct ze_sched *ret) {
        int policy = raw->policy, priority = raw->priority, nice = raw->nice, ioprio = raw->ioprio;
        bool reset;

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
                priority = 0;
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
        ret->priority = priority;
        ret->nice = nice;
        ret->ioprio = ioprio;
        ret->oom_score_adj = raw->oom_score_adj;
}

/* How the kernel schedules process pid (0: zygoted itself), whose oom_score_adj is oom_path
 * under dir_fd (read through *oom_fd, which stays open): what a child it forked now would start
 * with. Everything but the umask, which the status gives. The values are its first thread's: they
 * are per thread, and a caller whose other thread made the call may get a task scheduled as its
 * first thread is, never more than what that process could give a child through its own first
 * thread. */
int zd_caller_read_sched(int *oom_fd, int dir_fd, const char *oom_path, pid_t pid, struct ze_sched *ret) {
        _cleanup_free_ char *text = NULL;
        struct zd_caller_sched_raw raw;
        struct sched_param sp = {};
        char buf[64];
        int r;

        errno = 0;
        raw.nice = getpriority(PRIO_PROCESS, (id_t) pid);
        if (raw.nice == -1 && errno != 0)
                return negative_errno();
        raw.ioprio = (int) syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
        /* ENOSYS: a kernel without the block layer has no I/O priorities: none to carry */
        if (raw.ioprio < 0 && errno == ENOSYS)
                raw.ioprio = 0;
        else if (raw.ioprio < 0)
                return negative_errno();
        raw.policy = sched_getscheduler(pid);
        if (raw.policy < 0 || sched_getparam(pid, &sp) < 0)
                return negative_errno();
        raw.priority = sp.sched_priority;
        r = zd_caller_read_affinity(pid, ret);
        if (r < 0)
                return r;
        r = zd_caller_pread(oom_fd, dir_fd, oom_path, buf, sizeof(buf), &text);
        if (r < 0)
                return r;
        raw.oom_score_adj = atoi(text ? text : buf);
        zd_caller_sched_fork(&raw, ret);
        return 0;
}

int zd_caller_read_affinity(pid_t pid, struct ze_sched *ret) {
        if (sched_getaffinity(pid, sizeof(ret->affinity), (cpu_set_t *) (void *) ret->affinity) < 0)
                return negative_errno(); /* EINVAL: more CPUs than ZE_AFFINITY_WORDS holds */
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

        r = zd_caller_read_sched(own_oom_fd >= 0 ? &own_oom_fd : &fd, AT_FDCWD, "/proc/self/oom_score_adj", 0, &own);
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

        if (c->has_own_sched)
                own = c->own_sched;
        else {
                r = zd_caller_own_sched(&own);
                if (r < 0)
                        return r;
        }
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

int zd_caller_clamp_rlimits(struct zd_caller *c) {
        if (!own_max_read) {
                for (int res = 0; res < RLIM_NLIMITS && res < ZE_MAX_RLIMITS; res++) {
                        struct rlimit rl;

                        if (getrlimit(res, &rl) < 0)
                                return negative_errno();
                        own_max[res] = rl.rlim_max;
                }
                own_max_read = true;
        }
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

int zd_caller_read_rlimits(struct zd_caller_conn *k, struct zd_caller *c) {
        _cleanup_free_ char *text = NULL;
        char buf[4096];
        int r;

        r = zd_caller_pread(&k->limits_fd, k->proc_fd, "limits", buf, sizeof(buf), &text);
        if (r < 0)
                return r;
        r = parse_limits(text ? text : buf, c);
        if (r < 0)
                return r;
        return zd_caller_clamp_rlimits(c);
}
