/* SPDX-License-Identifier: MIT */
/* What the facets of caller.c share (not for other modules: caller.h is the API). caller.c reads
 * the caller's ids, capabilities, limits and scheduling; caller-conn.c finds the process that
 * connected and keeps it and its files for the connection; caller-ns.c its namespaces and root;
 * caller-cgroup.c its cgroups; caller-lsm.c its LSM label. Each reads through proc_fd, the
 * caller's /proc/PID, or the files of it that its connection keeps open. Each facet reads the
 * first thread (the process's /proc/PID), and answers for one other thread through its
 * /proc/PID/task/TID directory; caller.c walks the other threads once per call, asking every
 * facet of each. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "caller-bpf-record.h"
#include "caller.h"

/* The caller's mount table as its root shows it (its /proc/PID/mountinfo), kept while it cannot
 * have changed: the same mount namespace (held by the open file, so its number is not reused),
 * the same root (mount id and inode), and no POLLPRI on the file, which the kernel raises at
 * every change of that namespace's mounts (caller-ns.c). */
struct zd_caller_mounts {
        int fd; /* -EBADF: nothing kept */
        uint64_t mntns, root_mnt;
        dev_t root_dev;
        ino_t root_ino;
        char procfs_elsewhere[128];
};

#define ZD_CALLER_MAX_THREADS 64 /* a /proc read each, at each Spawn (docs/SECURITY.md) */

/* One other thread of the caller, open (ZD_CALLER_KEEP_THREADS: from one call to the next): its
 * /proc/PID/task/TID directory (O_PATH) and the files under it that each call reads again from
 * offset 0. Each names its thread, not its number: once the thread has ended, reads answer ESRCH
 * and lookups under the directory ENOENT, never for another thread that took the number.
 * cgroup_fd -EBADF until first read (a kernel without cgroups: never). */
struct zd_caller_thread {
        int dir_fd, status_fd, cgroup_fd;
};

#define ZD_CALLER_THREAD_INIT \
        { .dir_fd = -EBADF, .status_fd = -EBADF, .cgroup_fd = -EBADF }

struct zd_caller_threads {
        size_t n;
        struct zd_caller_thread t[ZD_CALLER_MAX_THREADS - 1];
};

/* Closes a thread's files; it stays usable (ZD_CALLER_THREAD_INIT). */
void zd_caller_thread_close(struct zd_caller_thread *t);

#define ZD_CALLER_NS_MAX 8

/* What every other thread must share with the first one (the process's /proc/PID), read by the
 * facets before the one walk over the threads (caller.c): its namespaces, its cgroups and its LSM
 * label. */
struct zd_caller_first {
        uint64_t ns[ZD_CALLER_NS_MAX]; /* by caller-ns.c's table; 0 where the kernel lacks that kind */
        const char *cgroup;            /* its /proc/PID/cgroup text; NULL: a kernel without cgroups */
        char cgroup_buf[4096];
        char *cgroup_long; /* owned: the text when it did not fit cgroup_buf */
        bool has_label;    /* an LSM labels processes: label is the first thread's */
        char label[ZD_LSM_LABEL_MAX];
};

/* A status text's value of each key read (after "Key:" and its blanks; NULL where it has none),
 * found in one pass over its lines (caller-status.c). */
#define ZD_CALLER_STATUS_KEYS 13
struct zd_caller_status {
        const char *v[ZD_CALLER_STATUS_KEYS];
};

void zd_caller_status_index(const char *text, struct zd_caller_status *ret);

/* The first thread's status st: its ids, groups, capability sets, flags and umask into c (the
 * sets and flags as the first merged: zd_caller_status_merge() merges the others), its Threads
 * count in *ret_threads (1 when it does not say). check_uid: its real uid must be that, or
 * -ESRCH (not the process that connected). */
int zd_caller_status_first(const struct zd_caller_status *st, const uid_t *check_uid, struct zd_caller *c,
                           uint64_t *ret_threads);

/* Another thread's status text merged into c: its capability sets those every thread holds, the
 * most confined thread's flags; -ENOTUNIQ when its ids or groups are not those of main. */
int zd_caller_status_merge(const struct zd_caller_status *main, const char *text, struct zd_caller *c);

/* The effective uid and gid of a status (check_uid as in zd_caller_status_first()). */
int zd_caller_status_ids(const struct zd_caller_status *st, const uid_t *check_uid, uid_t *ret_uid, gid_t *ret_gid);

/* How a process is scheduled, as the system calls give it (caller-sched.c): the policy as
 * sched_getscheduler() (with SCHED_RESET_ON_FORK), sched_getparam()'s priority, the nice value,
 * ioprio_get()'s answer and oom_score_adj. */
struct zd_caller_sched_raw {
        int policy, priority, nice, ioprio, oom_score_adj;
};

/* What a child it forked now would start with, into ret (all but affinity and umask). Pure. */
void zd_caller_sched_fork(const struct zd_caller_sched_raw *raw, struct ze_sched *ret);

/* The scheduling of process pid (0: zygoted), its oom_score_adj read through *oom_fd (oom_path
 * under dir_fd, kept open), as zd_caller_sched_fork() makes it, and its CPU affinity. */
int zd_caller_read_sched(int *oom_fd, int dir_fd, const char *oom_path, pid_t pid, struct ze_sched *ret);

/* The CPU affinity of process pid, as sched_getaffinity() gives it (the kernel takes away the
 * CPUs that are not active, which no record of the BPF iterator can know). */
int zd_caller_read_affinity(pid_t pid, struct ze_sched *ret);

/* The caller's limits from its /proc/PID/limits (through k), clamped as
 * zd_caller_clamp_rlimits() does. */
int zd_caller_read_rlimits(struct zd_caller_conn *k, struct zd_caller *c);

/* c's hard limits made no more than zygoted's own, and each soft one no more than its hard one. */
int zd_caller_clamp_rlimits(struct zd_caller *c);

/* What a connection keeps of its caller between calls (caller.h): the process and the files of
 * it that each call reads again. Every slot -EBADF until first used. */
struct zd_caller_conn {
        int pidfd;      /* the process that connected */
        pid_t pid;      /* its number, which it keeps while it lives */
        bool check_uid; /* found without SO_PEERPIDFD: its real uid must be the connection's */
        int proc_fd;    /* /proc/PID, O_PATH: names the process, not the number */
        int ns_fd;      /* /proc/PID/ns, O_PATH */
        /* Read again from offset 0 at each call: a /proc file makes its text afresh at a read
         * from the start, so only the open and the close are saved, never a change missed. */
        int status_fd, limits_fd, oom_fd, cgroup_fd;
        struct zd_caller_mounts mounts;
        bool keep_threads; /* ZD_CALLER_KEEP_THREADS: threads holds its other threads' files */
        bool proc_only;    /* ZD_CALLER_READ_PROC: never through the BPF iterator */
        struct zd_caller_threads threads;
        int bpf_link_fd; /* the BPF task iterator attached to its threads (caller-bpf.c) */
};

#define ZD_CALLER_CONN_INIT \
        { \
                .pidfd = -EBADF, .proc_fd = -EBADF, .ns_fd = -EBADF, .status_fd = -EBADF, .limits_fd = -EBADF, \
                .oom_fd = -EBADF, .cgroup_fd = -EBADF, .mounts = { .fd = -EBADF }, .bpf_link_fd = -EBADF, \
        }

/* The process that connected on conn_fd (SO_PEERCRED cr), as k keeps it (caller-conn.c): found
 * at the first call (its pidfd and /proc/PID), the same process at every later one. A /proc/PID
 * directory opened once names that process and not its number: it answers ESRCH or ENOENT once
 * the process is gone, never for another that took the number. 0, -ESRCH when it is gone, or a
 * negative errno. */
int zd_caller_find(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k);

/* A whole /proc file, NUL-terminated, in *ret (freed by the caller). */
int zd_caller_read_proc(int dir_fd, const char *name, char **ret);

/* The same through *fd: opened (name under dir_fd) when it is -EBADF, else read again from its
 * start; *fd stays open for the next read. */
int zd_caller_read_kept(int *fd, int dir_fd, const char *name, char **ret);

/* A /proc file of one record (status, limits, oom_score_adj, cgroup: made whole at each read from
 * offset 0, by a single show function) read again from its start in one pread(), where
 * zd_caller_read_kept() reads until a read returns nothing: a read that returns less than it asked
 * for got all of it. *fd as there. The text is in buf, NUL-terminated, or when it fills buf (a
 * caller in thousands of groups), read as zd_caller_read_kept() reads it into *ret_long. */
int zd_caller_pread(int *fd, int dir_fd, const char *name, char *buf, size_t size, char **ret_long);

/* The namespaces the caller differs from zygoted in (ns_join, ns_other) and its root (root_fd,
 * procfs_elsewhere) when it or its mount namespace differs; its mount table through k->mounts.
 * Its first thread's: their numbers in first->ns, for zd_caller_thread_same_ns(), read from its
 * ns links, or from_record: put there from its BPF record (zd_caller_ns_from_record()). */
int zd_caller_read_namespaces(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c, struct zd_caller_first *first,
                              bool from_record);

/* The namespace numbers of a first thread's record t (and pid_ns, its struct zd_caller_bpf_first's),
 * as its ns links give them, in struct zd_caller_first's order. */
void zd_caller_ns_from_record(const struct zd_caller_bpf_thread *t, uint32_t pid_ns, uint64_t ret[ZD_CALLER_NS_MAX]);

/* Whether the thread whose /proc/PID/task/TID is dir_fd is in the namespaces of first->ns: 0,
 * -EREMCHG when it is not, -ENOENT when it has ended, or another negative errno. */
int zd_caller_thread_same_ns(int dir_fd, const struct zd_caller_first *first);

/* The caller's cgroup in each hierarchy where it differs from zygoted's (cgroup_fds). Its first
 * thread's: the text in first->cgroup (NULL on a kernel without cgroups). */
int zd_caller_read_cgroups(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c, struct zd_caller_first *first);

/* Whether a thread (its /proc/PID/task/TID dir_fd, its cgroup file *fd, opened there when
 * -EBADF and kept open) is in first->cgroup's cgroups, or in every root (a thread the kernel is
 * still creating): 0, -EREMCHG when it is not, -ESRCH or -ENOENT when it has ended. */
int zd_caller_thread_same_cgroups(int *fd, int dir_fd, const struct zd_caller_first *first);

/* zygoted's own cgroup and mountinfo files, opened and kept (zd_caller_keep_own()). */
int zd_caller_keep_own_cgroups(void);

/* Keeps *t, a thread's files, in k (taking them: *t becomes ZD_CALLER_THREAD_INIT), unless k
 * holds ZD_CALLER_MAX_THREADS - 1 already or all connections hold as many as zygoted allows; then
 * *t stays the caller's to close. */
void zd_caller_threads_keep(struct zd_caller_conn *k, struct zd_caller_thread *t);

/* Closes the kept files of the caller's threads, if any. */
void zd_caller_threads_clear(struct zd_caller_conn *k);

/* Closes what k keeps; k stays usable (ZD_CALLER_CONN_INIT). */
void zd_caller_conn_clear(struct zd_caller_conn *k);

/* The caller's AppArmor or SELinux label, where it differs from zygoted's (lsm_attr, lsm_exec).
 * Its first thread's: in first->label (has_label) when an LSM labels processes. */
int zd_caller_read_lsm(int proc_fd, struct zd_caller *c, struct zd_caller_first *first);

/* Whether a thread (its /proc/PID/task/TID dir_fd) runs under first->label: 0, -EILSEQ when it
 * does not, -ENOENT or -ESRCH when it has ended, or another negative errno. */
int zd_caller_thread_same_label(int dir_fd, const struct zd_caller_first *first);

/* Every thread of the caller as the BPF task iterator read it in one walk (caller-bpf.c): n
 * records, the first thread's among them (ZD_CALLER_BPF_LEADER), in no set order, and what the
 * first thread's record said of it alone (has_first). */
struct zd_caller_bpf_threads {
        size_t n;
        struct zd_caller_bpf_thread t[ZD_CALLER_MAX_THREADS + 2]; /* one more than read, and the end */
        bool has_first, has_self;
        struct zd_caller_bpf_first first;
        struct zd_caller_bpf_first self; /* zygoted's own, read in the same walk (has_self) */
};

/* Whether zd_caller_bpf_load() loaded the iterator: the threads are then read through it. */
bool zd_caller_bpf_loaded(void);

/* Every thread of k's caller (k->pidfd), through the iterator attached to it at the first call
 * (k->bpf_link_fd, kept). 0, -EMLINK when it has more than ZD_CALLER_MAX_THREADS threads,
 * -EOPNOTSUPP when the iterator is not loaded, or another negative errno. */
int zd_caller_bpf_read(struct zd_caller_conn *k, struct zd_caller_bpf_threads *ret);

/* The record of a thread t against the first thread's (first), as caller.c compares a thread's
 * /proc files with the first one's: -ENOTUNIQ when their ids or groups differ, -EREMCHG when
 * their namespaces do; else its capability sets, no_new_privs and seccomp state merged into c as
 * there, and 0, or 1 when the records cannot tell: another group_info, another css_set, or
 * another cred where an LSM labels processes (labelled): that thread is read through /proc. */
int zd_caller_bpf_merge(const struct zd_caller_bpf_thread *first, const struct zd_caller_bpf_thread *t, bool labelled,
                        struct zd_caller *c);

/* The first thread of a walk ts, its values into c as its /proc files and system calls give them:
 * ids (check_uid: the real uid must be that, or -ESRCH), groups, capability sets, no_new_privs and
 * seccomp state (merged as zd_caller_bpf_merge() merges another thread's), umask, scheduling but
 * the CPU affinity (zd_caller_read_affinity()), limits (clamped as zd_caller_clamp_rlimits()
 * does), namespace numbers into ns; its record in *ret_first; and zygoted's own scheduling and
 * umask but its CPU affinity, from the walk's record of the reader (own_sched). 0; 1 when the walk cannot tell (no
 * first thread, or one exiting, or in more groups than its record holds), c untouched: then read
 * it through /proc; or a negative errno. caller-bpf-first.c. */
int zd_caller_bpf_read_first(const struct zd_caller_bpf_threads *ts, const uid_t *check_uid, struct zd_caller *c,
                             uint64_t ns[ZD_CALLER_NS_MAX], const struct zd_caller_bpf_thread **ret_first);
