/* SPDX-License-Identifier: MIT */
/*
 * The fork-to-exec steps that the task worker (child.c) and the container init (sandbox.c) both
 * take, written once: raw system calls, no allocation, no stdio, each returning 0 or a negative
 * errno for its caller to report as its own {step, errno}. And the one table of exit codes of a
 * process that never reached execve, for both.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/filter.h>

/* Exit codes of a worker or container init that never reached execve (docs/ARCHITECTURE.md).
 * They follow env(1)/podman: 125 the sandbox could not be set up, 126 found but not executable,
 * 127 not found; 124 a held one whose hold (Start, the exec fifo) went away without a go. */
enum {
        ZE_EXIT_SETUP_FAILED = 125,
        ZE_EXIT_NOT_EXECUTABLE = 126,
        ZE_EXIT_NOT_FOUND = 127,
        ZE_EXIT_ABANDONED = 124,
};

/* Every disposition back to SIG_DFL (only those in *only when it is not NULL) and an empty
 * mask: a parent's ignored signals and mask survive execve, and its handlers must never run
 * here. Errors are ignored on purpose: glibc refuses its two internal signals, which are
 * handlers and so reset by execve anyway. */
void ze_step_reset_signals(const sigset_t *only);

/* Drops the capabilities of drop from the bounding set: one prctl(PR_CAPBSET_DROP_MASK) where
 * mask_prctl (the kernel has it: probed), else one PR_CAPBSET_DROP each for those still there,
 * up to cap_last (0 or past 63: up to where the kernel says EINVAL). */
int ze_capbset_drop(uint64_t drop, bool mask_prctl, unsigned cap_last);

/* capset(2) of the three sets, 64 bits each. */
int ze_step_capset(uint64_t effective, uint64_t permitted, uint64_t inheritable);

/* The effective set back to the permitted one (a switch away from uid 0 under KEEPCAPS emptied
 * it): loading a filter without no_new_privs needs CAP_SYS_ADMIN there. */
int ze_step_raise_effective(void);

/* Loads a compiled program: seccomp(SECCOMP_SET_MODE_FILTER, flags, prog). */
int ze_step_filter_load(const struct sock_fprog *prog, unsigned flags);

/* Takes the filter of the process behind pidfd (the SECCOMP_CLONE_FILTER RFC): -EINVAL on a
 * kernel without it, where nothing was installed. */
int ze_step_filter_clone(int pidfd);
