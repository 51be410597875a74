/* SPDX-License-Identifier: MIT */
/* What the facets of caller.c share (not for other modules: caller.h is the API). caller.c reads
 * the caller's ids, capabilities, limits and scheduling; caller-conn.c finds the process that
 * connected and keeps it and its files for the connection; caller-ns.c its namespaces and root;
 * caller-cgroup.c its cgroups; caller-lsm.c its LSM label. Each reads through proc_fd, the
 * caller's /proc/PID, or the files of it that its connection keeps open. */
#pragma once

#include <stdint.h>

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

/* The status files of the caller's other threads, open (ZD_CALLER_KEEP_THREADS): each names its
 * thread, not its number (reads answer ESRCH once it has ended, never for another thread that
 * took the number), and is read again from offset 0 at each call. */
struct zd_caller_threads {
        size_t n;
        int fd[ZD_CALLER_MAX_THREADS - 1];
};

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
        struct zd_caller_threads threads;
};

#define ZD_CALLER_CONN_INIT \
        { \
                .pidfd = -EBADF, .proc_fd = -EBADF, .ns_fd = -EBADF, .status_fd = -EBADF, .limits_fd = -EBADF, \
                .oom_fd = -EBADF, .cgroup_fd = -EBADF, .mounts = { \
                        .fd = -EBADF \
                } \
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

/* The namespaces the caller differs from zygoted in (ns_join, ns_other) and its root (root_fd,
 * procfs_elsewhere) when it or its mount namespace differs; its mount table through k->mounts. */
int zd_caller_read_namespaces(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c);

/* The caller's cgroup in each hierarchy where it differs from zygoted's (cgroup_fds). */
int zd_caller_read_cgroups(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c);

/* zygoted's own cgroup and mountinfo files, opened and kept (zd_caller_keep_own()). */
int zd_caller_keep_own_cgroups(void);

/* Keeps *fd, a thread's status file, in k (taking it: *fd becomes -EBADF), unless k holds
 * ZD_CALLER_MAX_THREADS - 1 already or all connections hold as many as zygoted allows; then *fd
 * stays the caller's to close. */
void zd_caller_threads_keep(struct zd_caller_conn *k, int *fd);

/* Closes the kept status files of the caller's threads, if any. */
void zd_caller_threads_clear(struct zd_caller_conn *k);

/* Closes what k keeps; k stays usable (ZD_CALLER_CONN_INIT). */
void zd_caller_conn_clear(struct zd_caller_conn *k);

/* The caller's AppArmor or SELinux label, where it differs from zygoted's (lsm_attr, lsm_exec). */
int zd_caller_read_lsm(int proc_fd, struct zd_caller *c);

/* Calls fn(task_fd, tid, userdata) for each thread of the caller but its main one (pid), where
 * task_fd is the caller's /proc/PID/task and tid a thread's name there. A thread that ended
 * meanwhile (-ENOENT or -ESRCH from fn) is passed over; any other error of fn stops the walk and is
 * returned. */
int zd_caller_for_each_thread(int proc_fd, pid_t pid, int (*fn)(int task_fd, const char *tid, void *userdata),
                              void *userdata);
