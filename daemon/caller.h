/* SPDX-License-Identifier: MIT */
/*
 * The confinement of the process that connected (the caller), read from the kernel at each call
 * so that its task carries it: who it is now (ids, groups) and the capabilities it holds, every
 * resource limit, no_new_privs, whether it runs under a seccomp filter, how the kernel schedules
 * it (nice, policy, I/O priority, CPU affinity, oom_score_adj) and its umask, the namespaces and
 * root directory it differs from zygoted in, its cgroup in each hierarchy where that differs
 * from zygoted's, and its AppArmor or SELinux label. See caller.c and docs/SECURITY.md.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "child.h"

/* The LSMs whose label a task can carry: the one that labels processes on this kernel. */
enum zd_lsm { ZD_LSM_NONE, ZD_LSM_APPARMOR, ZD_LSM_SELINUX };
#define ZD_LSM_LABEL_MAX 512

struct zd_caller {
        int pidfd; /* the caller's, or -EBADF */
        pid_t pid;

        struct ze_rlimit rlimits[ZE_MAX_RLIMITS]; /* hard limits at most zygoted's own */
        size_t n_rlimits;

        /* Its credentials now, which may be less than at connect (a root process that dropped
         * its uid or capabilities since). Every thread's, which must agree on the ids; the
         * capability sets are those every thread holds. */
        uid_t euid;
        gid_t egid;
        gid_t *groups; /* owned */
        size_t n_groups;
        uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;

        bool no_new_privs;        /* any thread's */
        unsigned seccomp_mode;    /* 0 none, 1 strict, 2 filter: the most confined thread's */
        unsigned seccomp_filters; /* how many, the most of any thread's (UINT_MAX: not said) */

        /* How the kernel treats it: what a child it forked would start with (the reset of
         * SCHED_RESET_ON_FORK applied); its first thread's (see caller.c). */
        struct ze_sched sched;
        /* zygoted's own, as zd_caller_own_sched() reads it, when read with the caller (the BPF
         * walk gives it): what zd_caller_task_sched() compares the caller's with. */
        bool has_own_sched;
        struct ze_sched own_sched;

        unsigned ns_join;           /* CLONE_NEW* of the namespaces the task must join */
        const char *ns_other;       /* a namespace that differs and cannot be joined ("pid", "user") */
        int root_fd;                /* O_PATH: the caller's root, when it or its mount namespace differs */
        char procfs_elsewhere[128]; /* with root_fd: a procfs mount it sees other than /proc, or "" */

        int cgroup_fds[ZE_MAX_CGROUPS]; /* O_PATH directories of the cgroups that differ */
        size_t n_cgroups;
        /* Its cgroup in the hierarchy that tells systemd's units apart (name=systemd on a v1 or
         * hybrid host, else the unified one), as /proc/PID/cgroup gives it; "" when unknown. */
        char unit_cgroup[512];
        /* Its cgroup in the unified hierarchy (cgroup2), "" when none: on a hybrid host the same
         * as unit_cgroup for every process systemd placed (spawn-scope.c). */
        char unified_cgroup[512];

        /* Its AppArmor or SELinux label where it differs from zygoted's: the worker writes
         * lsm_exec to its exec attribute file lsm_attr (child.h, step 0d); lsm_attr NULL: none.
         * Every thread's, which must agree. */
        const char *lsm_attr; /* static */
        char lsm_exec[ZD_LSM_LABEL_MAX + 8];
};

#define ZD_CALLER_INIT \
        { .pidfd = -EBADF, .root_fd = -EBADF }

/* What a connection keeps of its caller from one call to the next: the process that connected
 * (its pidfd and /proc/PID) and the files of it that every call reads again, and its mount table
 * while it cannot have changed. Nothing that can change without a sign is kept: each call still
 * reads the caller as it is then. */
struct zd_caller_conn;

/* What a connection keeps (zd_caller_conn_get()'s keep): its process and files, and with them
 * the /proc/PID/task/TID directories of its other threads and their status and cgroup files, so
 * that each call reads every thread again without listing /proc/PID/task and opening each
 * (ZYGOTE_DISABLE_FEATURES=caller_threads takes the listing and opening back, at every call). */
enum {
        ZD_CALLER_KEEP = 1 << 0,
        ZD_CALLER_KEEP_THREADS = 1 << 1,
        ZD_CALLER_READ_PROC = 1 << 2, /* never through the BPF iterator: tests compare the two readers */
};

int zd_caller_conn_new(struct zd_caller_conn **ret);
/* Closes what it keeps; accepts NULL; returns NULL. */
struct zd_caller_conn *zd_caller_conn_free(struct zd_caller_conn *k);
/* A connection's, from its slot, made there at its first call when keep has ZD_CALLER_KEEP
 * (ZD_CALLER_KEEP_THREADS: keeping its threads' files too); NULL when it has not (the caller is
 * then read afresh at each call) or when it cannot be made (this call's read is a first one). */
struct zd_caller_conn *zd_caller_conn_get(struct zd_caller_conn **slot, unsigned keep);

/* Reads the confinement of the process that connected on conn_fd (whose SO_PEERCRED is cr), as
 * it is now.
 * The caller is found race-free: SO_PEERPIDFD where the kernel has it, else a pidfd on
 * SO_PEERCRED's pid whose uid is checked; everything is read through /proc/PID, and the pidfd
 * checked alive afterwards, so the pid was not reused meanwhile. k, the connection's, keeps the
 * process and the files between calls (the first call finds them); NULL: nothing is kept
 * (ZYGOTE_DISABLE_FEATURES=caller_cache).
 * Returns 0, -ESRCH
 * when the process that connected has exited (its confinement cannot be known), -EXDEV when a
 * cgroup of the caller has no mount here, -EACCES when zygoted may not look into its namespaces,
 * -ENOTUNIQ when its threads run with different ids, -EILSEQ when they run under different
 * AppArmor or SELinux labels, -EREMCHG when they are in different namespaces or cgroups, -ENODATA when its label (or zygoted's) cannot be read, -EMLINK
 * when it has more than 64 threads (each must be read), or another negative errno. conn_fd < 0
 * takes the path of a kernel without SO_PEERPIDFD. On failure *ret is left in a state
 * zd_caller_done() accepts. */
int zd_caller_read(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, struct zd_caller *ret);

/* The effective uid and gid of the process that connected on conn_fd, as they are now (its first
 * thread's), found as zd_caller_read() finds it (k as there). 0, -ESRCH when it has exited, or a
 * negative errno. For the calls other than Spawn of a connection that was root at connect. */
int zd_caller_read_ids(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k, uid_t *ret_uid, gid_t *ret_gid);

/* The capabilities a root caller holds: within its bounding set, and within what it has kept
 * permitted and effective. Its securebits cannot be read from outside it: a root process without
 * SECBIT_NOROOT gets its bounding set back at an exec, one with it does not, so whatever it may
 * have dropped from the two sets is taken as gone for good. Spawn's rule (spawn-plan.c), and
 * CreateContainer's for the worker and the hooks (container.c). */
static inline uint64_t zd_caller_caps_held(const struct zd_caller *c) {
        return c->cap_bnd & c->cap_prm & c->cap_eff;
}

/* Closes the fds, frees the groups; accepts a zd_caller that was never read (ZD_CALLER_INIT). */
void zd_caller_done(struct zd_caller *c);

/* Opens zygoted's own files that every call reads again (its oom_score_adj and cgroups) and its
 * mount table, and keeps them from now on (the mount table's text while the kernel says it did
 * not change): called once before serving, so that the fds zygoted holds do not grow at its
 * first call. Without it (ZYGOTE_DISABLE_FEATURES=caller_cache) each call opens them afresh. */
int zd_caller_keep_own(void);

/* Loads the BPF task iterator that reads every thread of a caller in one read() (caller-bpf.c),
 * for every later zd_caller_read(), and checks it on zygoted itself. 0, or a negative errno: why
 * it cannot (an unprivileged zygoted: EPERM; a kernel without BTF, or before 6.1 without the
 * iterator's pid_fd filter), and each thread is then read through /proc/PID/task/TID. Not called
 * where ZYGOTE_DISABLE_FEATURES names caller_bpf (main.c), with the same result. */
int zd_caller_bpf_load(void);

/* zygoted's own scheduling and umask, as read_sched() reads a caller's: what a worker it forks
 * starts with. */
int zd_caller_own_sched(struct ze_sched *ret);

/* What a worker forked for the caller c takes (step 0c; a container worker before anything it
 * starts): c's scheduling and umask, made no more important than zygoted's own where an
 * unprivileged zygoted could not give more (the larger nice value of the two, and its own
 * oom_score_adj: its copies cannot write theirs). *ret_set false: they are zygoted's own, which
 * the worker starts with. oom_score_adj is ZE_OOM_KEEP where it is zygoted's. */
int zd_caller_task_sched(const struct zd_caller *c, bool privileged, struct ze_sched *ret, bool *ret_set);

/* The label in the text of a /proc/PID/attr/current file of lsm (AppArmor's without its
 * " (mode)"), NUL-terminated in ret. -EINVAL for no label or one that is not one word,
 * -ENAMETOOLONG when it does not fit. Pure. */
int zd_lsm_label(enum zd_lsm lsm, const char *text, char *ret, size_t size);

/* What a worker of zygoted (labelled own_label) writes to its exec attribute for its task to
 * run as caller_label: "exec LABEL" (AppArmor) or LABEL (SELinux), and 1; "" and 0 when nothing
 * is needed (the same label, an AppArmor caller that is unconfined, no LSM); -ENAMETOOLONG.
 * Pure. */
int zd_lsm_exec_text(enum zd_lsm lsm, const char *caller_label, const char *own_label, char *ret, size_t size);

/* The name of a CLONE_NEW* namespace flag ("net", ...). */
const char *zd_caller_ns_name(unsigned flag);
