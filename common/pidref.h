/* SPDX-License-Identifier: MIT */
/*
 * A process as one handle: its pid and a pidfd for it, kept and passed together (systemd's
 * PidRef, in our words). The pid is for what only a pid can name (/proc, logs, a session's
 * members); everything that acts on the process (a signal, a wait, its exit) goes through the
 * pidfd, so that a pid reused meanwhile is never the target. Every call returns 0 or a negative
 * errno; out-parameters stay untouched on failure.
 */
#pragma once

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct zc_pidref {
        pid_t pid; /* 0: none */
        int fd;    /* its pidfd (CLOEXEC); -EBADF: none */
};

#define ZC_PIDREF_NULL ((struct zc_pidref){ .pid = 0, .fd = -EBADF })

/* Whether it names a process (a pidfd held). */
static inline bool zc_pidref_is_set(const struct zc_pidref *p) {
        return p && p->fd >= 0;
}

/* The handle of pid and its pidfd fd (taken: the handle owns it). */
static inline struct zc_pidref zc_pidref_make(pid_t pid, int fd) {
        return (struct zc_pidref){ .pid = pid, .fd = fd };
}

/* Opens a pidfd for pid. Exact only for a process that cannot be reaped meanwhile (the caller's
 * unreaped child): a pid alone names whoever holds it now. */
int zc_pidref_set_pid(struct zc_pidref *ret, pid_t pid);

/* Closes the pidfd and forgets the process (which goes on running). Accepts NULL. */
void zc_pidref_done(struct zc_pidref *p);

/* The pidfd handed over (the handle forgets it): for a watcher or a message that takes it. */
static inline int zc_pidref_take_fd(struct zc_pidref *p) {
        int fd = p->fd;

        *p = ZC_PIDREF_NULL;
        return fd;
}

/* pidfd_send_signal(): -ESRCH once it has exited, or when the handle holds no pidfd. */
int zc_pidref_kill(const struct zc_pidref *p, int sig);

/* waitid(P_PIDFD) with options as for waitid(); ret_si may be NULL. -ECHILD without a pidfd. */
int zc_pidref_wait(const struct zc_pidref *p, int options, siginfo_t *ret_si);

/* SIGKILLed (unless gone already), reaped (blocking until it has exited) and forgotten: for a
 * child of ours. Accepts NULL and an empty handle. */
void zc_pidref_kill_and_reap(struct zc_pidref *p);
