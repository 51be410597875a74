/* SPDX-License-Identifier: MIT */
/*
 * Processes as pidfds: fork one with its pidfd, open one, signal and reap through it. Every call
 * returns 0 (or a pid, or an fd) or a negative errno; pidfds are CLOEXEC (the kernel makes them
 * so). Async-signal-safe: no allocation, no locks, nothing but system calls.
 */
#pragma once

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* Forks like fork(), with CLONE_PIDFD and the given extra clone flags (for example
 * CLONE_PARENT), SIGCHLD as the exit signal, no new stack: the child returns from here on a copy
 * of the caller's. Returns 0 in the child; in the parent the child's pid, with its pidfd in
 * *ret_pidfd (untouched on failure). Tries clone3() first and falls back to clone() where
 * clone3() answers ENOSYS or EPERM (old kernels, and seccomp filters such as Docker's, which
 * refuse clone3 because its flags sit behind a pointer they cannot inspect). With
 * CLONE_WITH_PIDFD_NO_CLONE3 in flags it calls clone() only: for a process under a filter that
 * may kill on clone3 rather than refuse it (zygote-ref under a caller's profile). */
pid_t clone_with_pidfd(uint64_t flags, int *ret_pidfd);
#define CLONE_WITH_PIDFD_NO_CLONE3 (1ULL << 63) /* not a kernel flag: stripped before the call */

/* A pidfd for pid (CLOEXEC). */
int pidfd_open_pid(pid_t pid);

/* pidfd_send_signal(pidfd, sig, NULL, 0). -ESRCH once the process has exited. */
int pidfd_kill(int pidfd, int sig);

/* waitid(P_PIDFD, pidfd, ..., options), EINTR retried. options as for waitid (WEXITED to reap;
 * WNOHANG, WNOWAIT, WSTOPPED as needed). With WNOHANG and nothing to report, ret_si->si_pid is 0.
 * ret_si may be NULL. */
int pidfd_wait(int pidfd, int options, siginfo_t *ret_si);

/* Blocks until the process exits and reaps it: pidfd_wait(pidfd, WEXITED, ret_si). */
int pidfd_reap(int pidfd, siginfo_t *ret_si);

/* Exit status of a process that is not our child (PIDFD_INFO_EXIT, Linux 6.15+): 0 with its exit
 * code (128+N for signal N) and signal; -ENODATA while it runs or is an unreaped zombie; another
 * negative errno when the kernel cannot tell. */
int pidfd_exit_status(int pidfd, int *ret_code, int *ret_signal);
