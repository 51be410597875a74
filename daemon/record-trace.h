/* SPDX-License-Identifier: MIT */
/*
 * What the system call tracer (record-trace.bpf.c) and its loader (record-bpf.c) share: the maps'
 * keys and values. Plain fixed-size types only: the same bytes on both sides.
 */
#pragma once

#include <linux/types.h>

/* Recordings under way at once, at most. */
#define RT_MAX_RECORDINGS 64
/* Threads of recorded tasks alive at once, at most (a fork past it is not followed). */
#define RT_MAX_THREADS 65536
/* Distinct personality values kept, all recordings together. */
#define RT_MAX_PERSONAS 1024
/* System call numbers a recording notes, per architecture: above any of x86_64, i386 or arm64. */
#define RT_MAX_NR 1024

/* One recording: a byte per (architecture, number) rather than a bit, so that two CPUs noting
 * calls at once never lose one (a plain store, no atomic read-modify-write). */
struct rt_record {
        /* a task's recording: its threads alive (the worker counted at the start); the one that
         * brings it to 0 says so on the done ring (the recording's id) */
        __s64 live;
        __u8 count_live;
        __u8 calls[2][RT_MAX_NR]; /* [0] the native architecture, [1] its compat one (i386) */
        __u8 clone_flags[2][32];  /* the low 32 bits of clone's flags ever set */
        __u8 families[2][64];     /* socket's address families asked for */
        __u8 family_other[2];     /* a family of 64 or above */
        __u8 persona_over;        /* a persona not kept (the personas map full) */
        __u8 nr_over;             /* a number of RT_MAX_NR or above (x32's among them) */
        __u8 lost_thread;         /* a thread not followed (the tasks map full) */
        __u8 arm_on_exec;         /* set by the loader: threads count from execve, else from a filter load */
};

/* A thread followed: its recording, and whether its calls count yet. A task's worker counts from
 * its execve (its own steps before, which run while the daemon starts following it, are not the
 * command's); a container's from the seccomp filter load that makes it the container's (its
 * runtime's setup before is not). A thread it starts inherits that. */
struct rt_task {
        __u64 id;
        __u32 armed;
        __u32 pad;
};

struct rt_persona {
        __u64 id;
        __u32 compat;
        __u32 persona;
};
