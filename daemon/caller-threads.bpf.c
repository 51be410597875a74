/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The threads of a caller, read in one read(): a task iterator (iter/task) that caller-bpf.c
 * attaches with the caller's pidfd (union bpf_iter_link_info's task.pid_fd, Linux 6.1+), so the
 * kernel walks that process's threads only. For each thread, one struct zd_caller_bpf_thread:
 * its credentials (what /proc/PID/task/TID/status shows of them, from the same objective cred),
 * no_new_privs and seccomp state, its namespaces and its css_set; then, called once more without
 * a task, the end record.
 *
 * The kernel types are declared here with the fields read only (preserve_access_index): libbpf
 * finds each field in the running kernel's BTF at load. A field that older kernels lack is read
 * only where bpf_core_field_exists() says it is there. "GPL" in the licence: the helpers that read
 * kernel memory and write to the seq_file are the kernel's GPL-only ones.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "caller-bpf-record.h"

#define PAI __attribute__((preserve_access_index))
#define PF_EXITING 0x00000004
#define PFA_NO_NEW_PRIVS 0

typedef struct {
        __u32 val;
} kuid_t;
typedef struct {
        __u32 val;
} kgid_t;
/* u64 from 6.3, u32[2] before: the same eight little-endian bytes */
typedef struct {
        __u64 val;
} kernel_cap_t;
typedef struct {
        int counter;
} atomic_t;

struct ns_common {
        unsigned int inum;
} PAI;
struct uts_namespace {
        struct ns_common ns;
} PAI;
struct ipc_namespace {
        struct ns_common ns;
} PAI;
struct mnt_namespace {
        struct ns_common ns;
} PAI;
struct net {
        struct ns_common ns;
} PAI;
struct cgroup_namespace {
        struct ns_common ns;
} PAI;
struct time_namespace {
        struct ns_common ns;
} PAI;
struct pid_namespace {
        struct ns_common ns;
} PAI;
struct user_namespace {
        struct ns_common ns;
} PAI;

struct nsproxy {
        struct uts_namespace *uts_ns;
        struct ipc_namespace *ipc_ns;
        struct mnt_namespace *mnt_ns;
        struct pid_namespace *pid_ns_for_children;
        struct net *net_ns;
        struct time_namespace *time_ns;
        struct cgroup_namespace *cgroup_ns;
} PAI;

struct group_info {
        int ngroups;
        kgid_t gid[];
} PAI;

struct cred {
        kuid_t uid;
        kgid_t gid;
        kuid_t suid;
        kgid_t sgid;
        kuid_t euid;
        kgid_t egid;
        kuid_t fsuid;
        kgid_t fsgid;
        unsigned int securebits;
        kernel_cap_t cap_inheritable;
        kernel_cap_t cap_permitted;
        kernel_cap_t cap_effective;
        kernel_cap_t cap_bset;
        kernel_cap_t cap_ambient;
        struct user_namespace *user_ns;
        struct group_info *group_info;
} PAI;

struct seccomp {
        int mode;
        atomic_t filter_count;
} PAI;

/* struct pid ends in numbers[level + 1]: the thread's number in each pid namespace from the
 * initial one down to its own */
struct upid {
        int nr;
        struct pid_namespace *ns;
};
struct pid {
        unsigned int level;
        struct upid numbers[1];
} PAI;

struct rlimit {
        unsigned long rlim_cur, rlim_max;
};
struct signal_struct {
        struct rlimit rlim[16];
        short oom_score_adj;
} PAI;
struct fs_struct {
        int umask;
} PAI;
struct io_context {
        unsigned short ioprio;
} PAI;

struct css_set;
struct task_struct {
        unsigned int flags;
        int tgid;
        struct task_struct *group_leader;
        struct pid *thread_pid;
        const struct cred *real_cred;
        struct nsproxy *nsproxy;
        struct seccomp seccomp;
        struct css_set *cgroups;
        unsigned long atomic_flags;
        int static_prio;
        unsigned int rt_priority;
        unsigned int policy;
        unsigned int sched_reset_on_fork : 1;
        struct fs_struct *fs;
        struct signal_struct *signal;
        struct io_context *io_context;
} PAI;

struct seq_file;
struct bpf_iter_meta {
        struct seq_file *seq;
} PAI;
struct bpf_iter__task {
        struct bpf_iter_meta *meta;
        struct task_struct *task;
} PAI;

/* The number of a struct pid in the namespace at level lvl, when it is that namespace: 0 else. */
static __u32 nr_in(const struct pid *p, unsigned int lvl, const struct pid_namespace *ns) {
        struct upid u = {};

        if (!p || BPF_CORE_READ(p, level) < lvl || lvl > 64)
                return 0;
        bpf_probe_read_kernel(&u, sizeof(u),
                              (const char *) p + bpf_core_field_offset(struct pid, numbers) + lvl * sizeof(u));
        return u.ns == ns ? (__u32) u.nr : 0;
}

/* The reader's pid namespace, and its level: the iterator runs in the read() of zygoted. */
static void reader_ns(unsigned int *lvl, struct pid_namespace **ns) {
        struct task_struct *self = (struct task_struct *) bpf_get_current_task();
        struct pid *p = BPF_CORE_READ(self, thread_pid);
        struct upid u = {};

        *lvl = BPF_CORE_READ(p, level);
        bpf_probe_read_kernel(&u, sizeof(u),
                              (const char *) p + bpf_core_field_offset(struct pid, numbers) + *lvl * sizeof(u));
        *ns = u.ns;
}

static void read_cred(const struct cred *c, struct zd_caller_bpf_thread *t) {
        struct group_info *g = BPF_CORE_READ(c, group_info);

        t->cred = (__u64) (unsigned long) c;
        t->ids[0] = BPF_CORE_READ(c, uid.val);
        t->ids[1] = BPF_CORE_READ(c, euid.val);
        t->ids[2] = BPF_CORE_READ(c, suid.val);
        t->ids[3] = BPF_CORE_READ(c, fsuid.val);
        t->ids[4] = BPF_CORE_READ(c, gid.val);
        t->ids[5] = BPF_CORE_READ(c, egid.val);
        t->ids[6] = BPF_CORE_READ(c, sgid.val);
        t->ids[7] = BPF_CORE_READ(c, fsgid.val);
        t->securebits = BPF_CORE_READ(c, securebits);
        bpf_core_read(&t->cap_inh, sizeof(t->cap_inh), &c->cap_inheritable);
        bpf_core_read(&t->cap_prm, sizeof(t->cap_prm), &c->cap_permitted);
        bpf_core_read(&t->cap_eff, sizeof(t->cap_eff), &c->cap_effective);
        bpf_core_read(&t->cap_bnd, sizeof(t->cap_bnd), &c->cap_bset);
        bpf_core_read(&t->cap_amb, sizeof(t->cap_amb), &c->cap_ambient);
        t->group_info = (__u64) (unsigned long) g;
        t->ngroups = g ? BPF_CORE_READ(g, ngroups) : 0;
        t->ns[ZD_CALLER_BPF_NS_USER] = BPF_CORE_READ(c, user_ns, ns.inum);
}

static void read_ns(const struct nsproxy *n, struct zd_caller_bpf_thread *t) {
        t->nsproxy = (__u64) (unsigned long) n;
        if (!n)
                return; /* an exiting thread's, gone */
        t->ns[ZD_CALLER_BPF_NS_NET] = BPF_CORE_READ(n, net_ns, ns.inum);
        t->ns[ZD_CALLER_BPF_NS_IPC] = BPF_CORE_READ(n, ipc_ns, ns.inum);
        t->ns[ZD_CALLER_BPF_NS_UTS] = BPF_CORE_READ(n, uts_ns, ns.inum);
        t->ns[ZD_CALLER_BPF_NS_MNT] = BPF_CORE_READ(n, mnt_ns, ns.inum);
        t->ns[ZD_CALLER_BPF_NS_CGROUP] = BPF_CORE_READ(n, cgroup_ns, ns.inum);
        t->ns[ZD_CALLER_BPF_NS_PID_CHILDREN] = BPF_CORE_READ(n, pid_ns_for_children, ns.inum);
        if (bpf_core_field_exists(n->time_ns))
                t->ns[ZD_CALLER_BPF_NS_TIME] = BPF_CORE_READ(n, time_ns, ns.inum);
}

/* The first thread's own: what its /proc/PID/status (groups, umask), limits, oom_score_adj, ns/pid
 * and its scheduling system calls say of it. Read without the locks those take: each value is one
 * load, as current as theirs. */
static void read_first(struct task_struct *task, const struct cred *c, struct zd_caller_bpf_first *f) {
        struct group_info *g = c ? BPF_CORE_READ(c, group_info) : 0;
        struct signal_struct *sig = BPF_CORE_READ(task, signal);
        struct fs_struct *fs = BPF_CORE_READ(task, fs);
        struct io_context *ioc = BPF_CORE_READ(task, io_context);
        struct pid *p = BPF_CORE_READ(task, thread_pid);
        struct upid u = {};
        unsigned int lvl;
        int n;

        if (g) {
                __u32 size;

                n = BPF_CORE_READ(g, ngroups);
                size = (__u32) n * sizeof(f->groups[0]);
                /* the verifier's bound, then the groups there are (more: not read, see caller-bpf-first.c) */
                size &= 2 * sizeof(f->groups) - 1;
                if (n > 0 && n <= ZD_CALLER_BPF_GROUPS && size <= sizeof(f->groups))
                        bpf_probe_read_kernel(f->groups, size,
                                              (const char *) g + bpf_core_field_offset(struct group_info, gid));
        }
        if (sig) {
                f->flags |= ZD_CALLER_BPF_SIGNAL;
                bpf_probe_read_kernel(f->rlim, sizeof(f->rlim),
                                      (const char *) sig + bpf_core_field_offset(struct signal_struct, rlim));
                f->oom_score_adj = BPF_CORE_READ(sig, oom_score_adj);
        }
        if (fs) {
                f->flags |= ZD_CALLER_BPF_FS;
                f->umask = (__u32) BPF_CORE_READ(fs, umask);
        }
        if (ioc)
                f->ioprio = BPF_CORE_READ(ioc, ioprio);
        f->static_prio = BPF_CORE_READ(task, static_prio);
        f->policy = BPF_CORE_READ(task, policy);
        f->rt_priority = BPF_CORE_READ(task, rt_priority);
        if (BPF_CORE_READ_BITFIELD_PROBED(task, sched_reset_on_fork))
                f->flags |= ZD_CALLER_BPF_RESET_ON_FORK;
        if (p) {
                lvl = BPF_CORE_READ(p, level);
                if (lvl <= 64) {
                        bpf_probe_read_kernel(&u, sizeof(u),
                                              (const char *) p + bpf_core_field_offset(struct pid, numbers) +
                                                      lvl * sizeof(u));
                        if (u.ns)
                                f->pid_ns = BPF_CORE_READ(u.ns, ns.inum);
                }
        }
}

/* The first thread's record, too large for the program's 512-byte stack beside the other */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct zd_caller_bpf_first);
} first_buf SEC(".maps");

SEC("iter/task")
int zd_caller_threads(struct bpf_iter__task *ctx) {
        struct seq_file *seq = ctx->meta->seq;
        struct task_struct *task = ctx->task;
        struct zd_caller_bpf_thread t = {};
        struct zd_caller_bpf_first *f;
        struct task_struct *self;
        struct pid_namespace *ns;
        __u32 zero = 0;
        const struct cred *c;
        unsigned int lvl;

        if (!task) {
                /* the reader's own scheduling and limits (zygoted's, whose read() runs this),
                 * which every call compares the caller's with, then the end */
                self = (struct task_struct *) bpf_get_current_task();
                f = bpf_map_lookup_elem(&first_buf, &zero);
                if (!f)
                        return 0;
                t.flags = ZD_CALLER_BPF_SELF;
                t.tgid = (__u32) BPF_CORE_READ(self, tgid);
                bpf_seq_write(seq, &t, sizeof(t));
                __builtin_memset(f, 0, sizeof(*f));
                read_first(self, BPF_CORE_READ(self, real_cred), f);
                bpf_seq_write(seq, f, sizeof(*f));
                t.flags = ZD_CALLER_BPF_END;
                bpf_seq_write(seq, &t, sizeof(t));
                return 0;
        }
        reader_ns(&lvl, &ns);
        t.tid = nr_in(BPF_CORE_READ(task, thread_pid), lvl, ns);
        t.tgid = (__u32) BPF_CORE_READ(task, tgid);
        if (BPF_CORE_READ(task, group_leader) == task)
                t.flags |= ZD_CALLER_BPF_LEADER;
        if (BPF_CORE_READ(task, flags) & PF_EXITING)
                t.flags |= ZD_CALLER_BPF_EXITING;
        if (BPF_CORE_READ(task, atomic_flags) & (1UL << PFA_NO_NEW_PRIVS))
                t.flags |= ZD_CALLER_BPF_NNP;
        /* the objective credentials (real_cred), as /proc/PID/status and attr/current read them */
        c = BPF_CORE_READ(task, real_cred);
        if (c)
                read_cred(c, &t);
        read_ns(BPF_CORE_READ(task, nsproxy), &t);
        t.css_set = (__u64) (unsigned long) BPF_CORE_READ(task, cgroups);
        t.seccomp_mode = (__u32) BPF_CORE_READ(task, seccomp.mode);
        t.seccomp_filters = 0xffffffff;
        if (bpf_core_field_exists(task->seccomp.filter_count))
                t.seccomp_filters = (__u32) BPF_CORE_READ(task, seccomp.filter_count.counter);
        bpf_seq_write(seq, &t, sizeof(t));
        if (t.flags & ZD_CALLER_BPF_LEADER) {
                f = bpf_map_lookup_elem(&first_buf, &zero);
                if (!f)
                        return 0;
                __builtin_memset(f, 0, sizeof(*f));
                read_first(task, c, f);
                bpf_seq_write(seq, f, sizeof(*f));
        }
        return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
