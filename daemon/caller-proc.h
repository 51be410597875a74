/* SPDX-License-Identifier: MIT */
/* What the facets of caller.c share (not for other modules: caller.h is the API). caller.c reads
 * the caller's ids, capabilities, limits and scheduling; caller-ns.c its namespaces and root;
 * caller-cgroup.c its cgroups; caller-lsm.c its LSM label. Each reads through proc_fd, the
 * caller's /proc/PID. */
#pragma once

#include "caller.h"

/* A whole /proc file, NUL-terminated, in *ret (freed by the caller). */
int zd_caller_read_proc(int dir_fd, const char *name, char **ret);

/* The namespaces the caller differs from zygoted in (ns_join, ns_other) and its root (root_fd,
 * procfs_elsewhere) when it or its mount namespace differs. */
int zd_caller_read_namespaces(int proc_fd, struct zd_caller *c);

/* The caller's cgroup in each hierarchy where it differs from zygoted's (cgroup_fds). */
int zd_caller_read_cgroups(int proc_fd, struct zd_caller *c);

/* The caller's AppArmor or SELinux label, where it differs from zygoted's (lsm_attr, lsm_exec). */
int zd_caller_read_lsm(int proc_fd, struct zd_caller *c);

/* Calls fn(task_fd, tid, userdata) for each thread of the caller but its main one (pid), where
 * task_fd is the caller's /proc/PID/task and tid a thread's name there. A thread that ended
 * meanwhile (-ENOENT or -ESRCH from fn) is passed over; any other error of fn stops the walk and is
 * returned. */
int zd_caller_for_each_thread(int proc_fd, pid_t pid, int (*fn)(int task_fd, const char *tid, void *userdata),
                              void *userdata);
