/* SPDX-License-Identifier: MIT */
/*
 * Calls that end a process's other threads (exit_group, execve, execveat), held by the listener
 * until those threads have made their calls (record-hold.c).
 *
 * Why: a thread killed while its notification waits unread takes the notification with it (the
 * kernel withdraws it), so a listener that lets exit_group through as soon as it reads it loses
 * the calls the process's other threads were about to make: a Python thread's stack release
 * (madvise) and exit after join() returned, made while the main thread finishes. Whether they
 * were made then depends on the scheduler, and a profile that lacks them refuses them in the next
 * run. Held, the other threads run on and their calls are read, until none is running or waiting
 * to be read; then the call goes on, as the kernel would have let it at once.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a call is held at most, for threads that never stop running (a loop without a system
 * call): then it goes on, and what they would have called later is not seen. */
#define REC_HOLD_MAX_MS 1000
/* While a call is held, the listener looks again at the other threads this often (they may stop
 * running without a call of theirs to wake it). */
#define REC_HOLD_POLL_MS 1

struct rec_held {
        int listener;      /* whose */
        uint64_t id;       /* the notification */
        pid_t tid;         /* its thread, in the listener's pid namespace */
        int error;         /* the answer decided for it */
        uint64_t deadline; /* CLOCK_MONOTONIC, in ns */
};

struct rec_hold {
        struct rec_held *held;
        size_t n, n_alloc;
        uint32_t arch; /* the architecture whose numbers are in nrs */
        int nrs[3];    /* exit_group, execve, execveat there (-1: none) */
};

void rec_hold_done(struct rec_hold *h);

/* Whether req is to be held (it ends its process's other threads, and it has some); if so, it
 * is, with the answer error. false: answer it now (also when the hold cannot be kept). */
bool rec_hold_take(struct rec_hold *h, int listener, const struct seccomp_notif *req, int error);

/* The poll timeout while calls are held (REC_HOLD_POLL_MS), else -1. */
int rec_hold_timeout(const struct rec_hold *h);

/* Answers (through answer) each held call whose other threads have settled (none running, no
 * notification of its listener's waiting to be read) or whose time is up. 0 or a negative errno
 * from answer. */
int rec_hold_release(struct rec_hold *h, int (*answer)(int listener, uint64_t id, int error, void *u), void *u);
