/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The system call tracer of a recording (record-bpf.c loads it): every system call a recorded
 * task, or any thread it started since, enters is noted in its recording, with the arguments
 * Docker's profile filters on (clone's flags, socket's family, personality's persona).
 *
 * Which threads: `tasks` maps a thread id (the initial pid namespace's) to its recording. The
 * daemon puts the worker there while it waits at its gate, before its execve; every thread it
 * forks or clones joins at sched_process_fork (in the parent, before the child first runs), moves
 * at sched_process_exec when it takes its leader's id, and leaves at sched_process_exit. Nothing is added to the task itself: no filter, no cgroup.
 *
 * raw_syscalls:sys_enter fires after seccomp has allowed the call: a call the task's filter
 * refuses never reaches it, so a recording holds only calls that ran.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "record-trace.h"

/* The kernel's types, only the fields read (CO-RE: relocated against its BTF at load). */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
        unsigned long di; /* the first argument, x86_64 */
        unsigned long bx; /* the first argument, i386 */
} __attribute__((preserve_access_index));
struct thread_info {
        __u32 status;
} __attribute__((preserve_access_index));
#define RT_TS_COMPAT 0x0002
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
        __u64 regs[31];
} __attribute__((preserve_access_index));
struct thread_info {
        unsigned long flags;
} __attribute__((preserve_access_index));
#define RT_TIF_32BIT (1UL << 22)
#endif
struct task_struct {
        struct thread_info thread_info;
        int pid;
} __attribute__((preserve_access_index));

/* The numbers of clone, clone3, socket and personality, [0] native, [1] compat (-1: none); the loader
 * sets them. */
const volatile long nr_clone[2] = { -1, -1 };
const volatile long nr_clone3[2] = { -1, -1 };
const volatile long nr_socket[2] = { -1, -1 };
const volatile long nr_personality[2] = { -1, -1 };
/* and of seccomp and prctl: a filter load arms a container's thread */
const volatile long nr_seccomp[2] = { -1, -1 };
const volatile long nr_prctl[2] = { -1, -1 };
/* and of execve and execveat: an exec arms a task's thread */
const volatile long nr_execve[2] = { -1, -1 };
const volatile long nr_execveat[2] = { -1, -1 };

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, RT_MAX_THREADS);
        __type(key, __u32);
        __type(value, struct rt_task);
} tasks SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, RT_MAX_RECORDINGS);
        __type(key, __u64);
        __type(value, struct rt_record);
} records SEC(".maps");

/* the ids of task recordings whose last thread has exited (a few per recording at most: the
 * daemon reads them as they come) */
struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 256 * 1024);
} done SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, RT_MAX_PERSONAS);
        __type(key, struct rt_persona);
        __type(value, __u8);
} personas SEC(".maps");

static __always_inline int current_compat(void) {
        struct task_struct *t = bpf_get_current_task_btf();
#if defined(__TARGET_ARCH_x86)
        return (t->thread_info.status & RT_TS_COMPAT) != 0;
#elif defined(__TARGET_ARCH_arm64)
        return (t->thread_info.flags & RT_TIF_32BIT) != 0;
#else
        (void) t;
        return 0;
#endif
}

static __always_inline __u64 first_arg(struct pt_regs *regs, int compat) {
#if defined(__TARGET_ARCH_x86)
        return compat ? (__u32) regs->bx : regs->di;
#elif defined(__TARGET_ARCH_arm64)
        return compat ? (__u32) regs->regs[0] : regs->regs[0];
#else
        return 0;
#endif
}

static __always_inline void note_clone(struct rt_record *r, int c, __u64 flags) {
#pragma unroll
        for (int i = 0; i < 32; i++)
                if (flags & (1ULL << i))
                        r->clone_flags[c][i] = 1;
}

static __always_inline void note_args(struct rt_record *r, __u64 id, int c, long nr, __u64 a0) {
        if (nr == nr_clone[c])
                note_clone(r, c, a0);
        else if (nr == nr_clone3[c]) {
                /* struct clone_args begins with the flags; unreadable: noted as none, and the
                 * kernel's own read fails the call with EFAULT */
                __u64 flags = 0;
                if (bpf_probe_read_user(&flags, sizeof(flags), (const void *) a0) == 0)
                        note_clone(r, c, flags);
        } else if (nr == nr_socket[c]) {
                __u32 f = (__u32) a0;
                if (f < 64)
                        r->families[c][f] = 1;
                else
                        r->family_other[c] = 1;
        } else if (nr == nr_personality[c]) {
                struct rt_persona k = { .id = id, .compat = (__u32) c, .persona = (__u32) a0 };
                __u8 one = 1;
                if (bpf_map_update_elem(&personas, &k, &one, BPF_ANY) < 0)
                        r->persona_over = 1;
        }
}

/* seccomp(SECCOMP_SET_MODE_FILTER or SECCOMP_CLONE_FILTER, ...), prctl(PR_SET_SECCOMP, ...) */
static __always_inline int filter_load(int c, long nr, __u64 a0) {
        return (nr == nr_seccomp[c] && (a0 == 1 || a0 == 4)) || (nr == nr_prctl[c] && a0 == 22);
}

SEC("tp_btf/sys_enter")
int zd_record_sys_enter(__u64 *ctx) {
        __u32 tid = (__u32) bpf_get_current_pid_tgid();
        struct rt_task *t = bpf_map_lookup_elem(&tasks, &tid);
        struct rt_record *r;
        __u64 a0;
        long nr;
        int c;

        if (!t)
                return 0;
        r = bpf_map_lookup_elem(&records, &t->id);
        if (!r) {
                /* its recording was taken: a descendant that outlived the task */
                bpf_map_delete_elem(&tasks, &tid);
                return 0;
        }
        nr = (long) ctx[1];
        c = current_compat();
        a0 = first_arg((struct pt_regs *) ctx[0], c);
        if (!t->armed) {
                if (r->arm_on_exec && (nr == nr_execve[c] || nr == nr_execveat[c]))
                        t->armed = 1; /* the exec is the command's: it counts */
                else if (!r->arm_on_exec && filter_load(c, nr, a0))
                        t->armed = 1; /* the load is the runtime's; what follows runs under the filter */
                if (!t->armed || !r->arm_on_exec)
                        return 0;
        }
        if (nr < 0 || nr >= RT_MAX_NR) {
                r->nr_over = 1;
                return 0;
        }
        r->calls[c][nr] = 1;
        note_args(r, t->id, c, nr, a0);
        return 0;
}

SEC("tp_btf/sched_process_fork")
int zd_record_fork(__u64 *ctx) {
        struct task_struct *parent = (struct task_struct *) ctx[0], *child = (struct task_struct *) ctx[1];
        __u32 ptid = (__u32) parent->pid, ctid = (__u32) child->pid;
        struct rt_task *t = bpf_map_lookup_elem(&tasks, &ptid);

        if (t) {
                struct rt_task v = *t;
                struct rt_record *r = bpf_map_lookup_elem(&records, &v.id);
                if (!r)
                        return 0; /* taken: its recording is over */
                if (bpf_map_update_elem(&tasks, &ctid, &v, BPF_ANY) < 0)
                        r->lost_thread = 1;
                else if (r->count_live)
                        __sync_fetch_and_add(&r->live, 1); /* before the child first runs */
        }
        return 0;
}

/* A thread other than the leader that execs takes the leader's id (the kernel's de_thread: the
 * leader, and its entry, went at its exit): its entry moves with it, or its calls would go
 * unrecorded and its exit uncounted. */
SEC("tp_btf/sched_process_exec")
int zd_record_exec(__u64 *ctx) {
        struct task_struct *p = (struct task_struct *) ctx[0];
        __u32 old = (__u32) ctx[1], now = (__u32) p->pid;
        struct rt_task *t;

        if (old == now)
                return 0;
        t = bpf_map_lookup_elem(&tasks, &old);
        if (t) {
                struct rt_task v = *t;
                bpf_map_update_elem(&tasks, &now, &v, BPF_ANY);
                bpf_map_delete_elem(&tasks, &old);
        }
        return 0;
}

SEC("tp_btf/sched_process_exit")
int zd_record_exit(__u64 *ctx) {
        __u32 tid = (__u32) bpf_get_current_pid_tgid();
        struct rt_task *t = bpf_map_lookup_elem(&tasks, &tid);
        struct rt_record *r;
        __u64 id;

        if (!t)
                return 0;
        id = t->id;
        bpf_map_delete_elem(&tasks, &tid);
        r = bpf_map_lookup_elem(&records, &id);
        if (!r || !r->count_live)
                return 0;
        /* Each exit subtracts, then reads: whichever order two exits take, the last subtraction
         * is followed by a read of 0 (a count only grows through a fork of a live thread). Two
         * reads of 0 are two events: the daemon takes the first. */
        __sync_fetch_and_add(&r->live, -1);
        if (r->live <= 0)
                bpf_ringbuf_output(&done, &id, sizeof(id), 0);
        return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
