/* SPDX-License-Identifier: MIT */
/*
 * The caller's own seccomp filters, read so that its task can carry them (docs/SECURITY.md, "A
 * caller's own seccomp filters"): every thread's programs, through PTRACE_SECCOMP_GET_FILTER, in
 * a short-lived child of zygoted that seizes each thread, reads its chain and detaches. The
 * worker loads them, oldest first, before the profile's filter (engine/child.h, step 5/9).
 */
#pragma once

#include <linux/filter.h>
#include <stddef.h>
#include <sys/types.h>

/* At most this many filters, and instructions in all (the kernel's own limit for one chain,
 * MAX_INSNS_PER_PATH, counts 4 more per filter). */
#define ZD_CALLER_MAX_FILTERS 64
#define ZD_CALLER_MAX_FILTER_INSNS 32768

/* How long zygoted waits for the reading child, in milliseconds: every thread of the caller must
 * reach a ptrace stop, and a thread in uninterruptible sleep (a vfork parent, a hung file system)
 * would not. Past it the child is killed, which detaches it from every thread it seized. */
#define ZD_CALLER_FILTER_TIMEOUT_MS 50

struct zd_caller_filters {
        size_t n;
        struct sock_fprog progs[ZD_CALLER_MAX_FILTERS]; /* oldest first, pointing into insns */
        struct sock_filter *insns;                      /* owned */
};

/* The filters of every thread of process pid (named by pidfd, checked alive afterwards), which
 * must all have the same chain. 0; -ESRCH when it is gone; -ENOTUNIQ when its threads' chains
 * differ; -EPERM when a thread cannot be traced (traced already, Yama's ptrace_scope 3, an LSM);
 * -EACCES when the kernel refuses to give the programs (zygoted lacks CAP_SYS_ADMIN, or runs
 * under a filter itself); -EIO when the kernel has no PTRACE_SECCOMP_GET_FILTER
 * (CONFIG_CHECKPOINT_RESTORE); -E2BIG past the limits above; -ETIME when a thread did not stop
 * within ZD_CALLER_FILTER_TIMEOUT_MS; or another negative errno. *ret untouched on failure. */
int zd_caller_read_filters(pid_t pid, int pidfd, struct zd_caller_filters *ret);

/* Frees the programs; accepts a struct never read (zeroed). */
void zd_caller_filters_done(struct zd_caller_filters *f);
