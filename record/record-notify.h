/* SPDX-License-Identifier: MIT */
/*
 * Recording with seccomp user notification: the task's side (record-exec.c) and the listener's
 * (record-listen.c).
 *
 * The task side, a helper that zygoted runs as the task (so with the caller's ids, capabilities,
 * namespaces, no_new_privs and the base profile's filter already applied), connects to the
 * listener's socket, stacks the recording filter with SECCOMP_FILTER_FLAG_NEW_LISTENER, hands the
 * listener over and execs the command. The recording filter notifies every system call but the
 * hand-over itself. Stacked filters yield the strictest action: a call the base profile denies
 * gets its errno or kill without any notification, so the recording never lets it through.
 *
 * The listener answers each notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE after noting the
 * call (record mode), or decides it with the profile under check and answers as that profile
 * would (check mode). clone3 is answered ENOSYS in both, as the written profiles do.
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record-set.h"

/* The hand-over's sendmsg flags: the one call the recording filter lets through unseen is
 * sendmsg(fd, _, REC_HANDOVER_FLAGS) on the hand-over socket's fd number. */
#define REC_HANDOVER_FLAGS (MSG_NOSIGNAL | MSG_DONTWAIT)

/* The recording filter for the native architecture, fd being the hand-over socket. prog has room
 * for REC_FILTER_LEN instructions. */
#define REC_FILTER_LEN 14
void rec_filter_build(struct sock_filter prog[static REC_FILTER_LEN], int fd);

/* The task's side: connects to sock_path, stacks the filter, hands over its listener, and execs
 * argv (argv[0] searched in PATH before the filter goes on). Returns only on failure: a negative
 * errno, *ret_step naming the step. */
int rec_exec(const char *sock_path, char *const argv[], const char **ret_step);

/* Check mode's decision: the profile's compiled program. */
struct rec_check {
        const struct sock_filter *prog;
        size_t len;
        struct rec_set refused; /* calls the profile refused (an errno or a kill) */
        unsigned n_refused;
};

/* Signals to pass on while listening: signal_fd (a signalfd, or -EBADF) is read, and each signal
 * sent by a process (not the terminal's, which reaches the whole process group itself) goes on to
 * forward_pidfd. */
struct rec_forward {
        int signal_fd;
        int forward_pidfd;
};

/* Reads signal_fd and passes its signals on (record-listen.c). */
void rec_forward_signals(const struct rec_forward *f);

/* Serves listener fd until no task uses its filter any more (POLLHUP). check NULL: record into s.
 * fw (optional): signals passed on meanwhile. more (or -EBADF): a listening socket on which more
 * listeners arrive as rec_agent_read() takes them (an agent's: a container's exec'd processes),
 * served too; the end waits for them all. Returns 0, or a negative errno (-EOPNOTSUPP: the
 * kernel lacks SECCOMP_USER_NOTIF_FLAG_CONTINUE). */
int rec_listen(int listener, struct rec_set *s, struct rec_check *check, const struct rec_forward *fw, int more);
