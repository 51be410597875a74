/* SPDX-License-Identifier: MIT */
/*
 * What the BPF task iterator of caller-threads.bpf.c writes for each thread of a caller, read by
 * caller-bpf.c: one fixed-size record per thread, the first thread's (ZD_CALLER_BPF_LEADER)
 * followed by a struct zd_caller_bpf_first, then the reader's own (ZD_CALLER_BPF_SELF, followed by
 * its struct zd_caller_bpf_first: what a worker of zygoted starts with), then one with
 * ZD_CALLER_BPF_END, so that one read() of enough bytes gets them all. Included by the BPF program too: kernel types only.
 */
#pragma once

#include <linux/types.h>

enum {
        ZD_CALLER_BPF_END = 1 << 0,     /* no thread: the last record */
        ZD_CALLER_BPF_LEADER = 1 << 1,  /* the process's first thread (its group leader) */
        ZD_CALLER_BPF_EXITING = 1 << 2, /* in do_exit(): its namespaces may be gone already */
        ZD_CALLER_BPF_NNP = 1 << 3,     /* no_new_privs */
        ZD_CALLER_BPF_SELF = 1 << 4,    /* not the caller's: the reader's own (zygoted), before the end */
};

/* struct zd_caller_bpf_first's flags */
enum {
        ZD_CALLER_BPF_FS = 1 << 0,            /* it has a fs_struct: umask is its umask */
        ZD_CALLER_BPF_RESET_ON_FORK = 1 << 1, /* SCHED_RESET_ON_FORK */
        ZD_CALLER_BPF_SIGNAL = 1 << 2,        /* it has a signal_struct: rlim and oom_score_adj are read */
};

#define ZD_CALLER_BPF_GROUPS 32 /* a first thread in more is read through its /proc/PID/status */
#define ZD_CALLER_BPF_RLIMITS 16

/* The namespaces of a record, by index */
enum {
        ZD_CALLER_BPF_NS_NET,
        ZD_CALLER_BPF_NS_IPC,
        ZD_CALLER_BPF_NS_UTS,
        ZD_CALLER_BPF_NS_MNT,
        ZD_CALLER_BPF_NS_CGROUP,
        ZD_CALLER_BPF_NS_TIME,         /* 0 on a kernel without time namespaces */
        ZD_CALLER_BPF_NS_PID_CHILDREN, /* pid_for_children */
        ZD_CALLER_BPF_NS_USER,         /* its credentials' */
        _ZD_CALLER_BPF_NS_MAX
};

struct zd_caller_bpf_thread {
        /* Kernel pointers, as ids only: two threads with the same cred have the same ids,
         * groups, capabilities, securebits and LSM label; the same group_info the same groups;
         * the same css_set the same cgroup in every hierarchy. */
        __u64 cred, group_info, nsproxy, css_set;
        __u64 cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
        __u32 flags;
        __u32 tid;  /* in the reader's pid namespace; 0 when not in it */
        __u32 tgid; /* in the initial pid namespace: the same for every thread of one process */
        /* real, effective, saved, filesystem uid, then the same gids (as in /proc/PID/status) */
        __u32 ids[8];
        __u32 securebits;
        __s32 ngroups;
        __u32 seccomp_mode;
        __u32 seccomp_filters; /* 0xffffffff where the kernel does not count them (before 5.9) */
        __u32 ns[_ZD_CALLER_BPF_NS_MAX];
        __u32 pad;
};

/* What the first thread's record is followed by: what /proc/PID/status (its groups and umask),
 * limits and oom_score_adj, its ns/pid link and its scheduling system calls say of it, from the
 * same kernel objects. */
struct zd_caller_bpf_first {
        __u64 rlim[ZD_CALLER_BPF_RLIMITS][2]; /* signal->rlim[]: soft, hard */
        __u32 groups[ZD_CALLER_BPF_GROUPS];   /* group_info->gid[], the first ngroups of them */
        __u32 flags;
        __s32 static_prio; /* nice + 120 */
        __u32 policy;      /* without SCHED_RESET_ON_FORK, which is in flags */
        __u32 rt_priority;
        __u32 ioprio; /* its io_context's, 0 where it has none */
        __u32 umask;
        __s32 oom_score_adj;
        __u32 pid_ns; /* its pid namespace's (ns/pid) */
};
