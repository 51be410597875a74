/* SPDX-License-Identifier: MIT */
/*
 * Recording a task's system calls with eBPF (record-bpf.c, its program record-trace.bpf.c): the
 * fast path of `launchctl run --record` for a root zygoted. The task gets nothing added, no
 * filter and no cgroup: the tracer follows its threads from the worker's gate on.
 */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct record_trace;
struct ring_buffer;

/* Recordings one non-root account may have under way at once (of RT_MAX_RECORDINGS, 64). */
#define ZD_RECORDINGS_PER_UID 8

struct zd_recording {
        uint64_t id; /* 0: a free slot */
        uid_t account;
        void *owner; /* begin's, passed to on_done */
        bool done;   /* every thread it followed has exited (or none is counted: a container's) */
};

struct zd_recorder {
        struct record_trace *skel; /* loaded; NULL: no eBPF recording (reason says why) */
        char reason[200];
        uint64_t next_id;
        unsigned active;                   /* recordings under way: the tracer is attached while there is one */
        struct zd_recording under_way[64]; /* RT_MAX_RECORDINGS */
        struct ring_buffer *ring;          /* the tracer's done ring */
        ev_io ring_watch;
        struct ev_loop *loop;
        void (*on_done)(void *owner); /* a recording's last thread has exited */
};

/* Loads the tracer unless zygoted is not root, not in the initial pid namespace, or
 * ZYGOTE_DISABLE_FEATURES names record_bpf; rc->reason says which, or what the kernel said.
 * on_done is called on loop with begin's owner when a task recording's last thread has exited. */
void zd_recorder_init(struct zd_recorder *rc, bool privileged, struct ev_loop *loop, void (*on_done)(void *owner));
void zd_recorder_free(struct zd_recorder *rc);

/* Where a followed thread's calls begin to count. */
enum zd_record_from {
        ZD_RECORD_FROM_EXEC,   /* its execve (a task's worker, whose own steps before are not CMD's) */
        ZD_RECORD_FROM_FILTER, /* its seccomp filter load, not counted (a container's runtime) */
};

/* Starts recording pid and every thread it starts from now on, for account (zd_conn_account);
 * *ret_id names the recording. Each thread's calls count from the point from says (a
 * container's runtime: the daemon puts itself there for the fork of its worker, then
 * zd_recorder_forget()s itself). -EOPNOTSUPP without the tracer,
 * -EAGAIN with RT_MAX_RECORDINGS under way, -EUSERS with ZD_RECORDINGS_PER_UID of a non-root
 * account's, or what the kernel said. */
int zd_recorder_begin(struct zd_recorder *rc, pid_t pid, uid_t account, enum zd_record_from from, void *owner,
                      uint64_t *ret_id);
/* Whether every thread recording id followed has exited (always, for ZD_RECORD_FROM_FILTER's:
 * a container's recording ends with its init). */
bool zd_recorder_done(const struct zd_recorder *rc, uint64_t id);
/* Follows tid (not armed) in recording id, a ZD_RECORD_FROM_FILTER one still under way: an
 * ExecContainer's worker forked by tid joins its container's recording. -ESRCH: no such
 * recording (ended: its container's init has exited), -EOPNOTSUPP without the tracer. */
int zd_recorder_follow(struct zd_recorder *rc, pid_t tid, uint64_t id);
/* tid no longer followed (its recording goes on). */
void zd_recorder_forget(struct zd_recorder *rc, pid_t tid);

/* Ends recording id and returns what it saw, for the task's exit reply:
 *   {"arches": [{"arch": AUDIT_ARCH_*, "calls": [NR...], "cloneFlags": N,
 *                "socketFamilies": [F...], "socketOther": bool, "personas": [P...]}...],
 *    "incomplete": "why"}   (absent when nothing was missed)
 * NULL: no memory (the recording is ended all the same). */
json_object *zd_recorder_take(struct zd_recorder *rc, uint64_t id);

/* Ends recording id, its record dropped (a spawn that failed, a task deleted before its exit). */
void zd_recorder_cancel(struct zd_recorder *rc, uint64_t id);

/* GetStatus's "recording" object: {"bpf": bool, "reason": string, "active": int}. */
json_object *zd_recorder_status(const struct zd_recorder *rc);
