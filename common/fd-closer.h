/* SPDX-License-Identifier: MIT */
/*
 * Closing fds that a caller passed, away from the process that holds them.
 *
 * close() is not always quick: on a FUSE file it sends FLUSH and waits for the file system's
 * server, which a hostile caller runs and may never answer. A daemon that closes such an fd on
 * its one thread stops serving everyone. So the close happens in a helper process that shares
 * the fd table (clone with CLONE_FILES, not CLONE_VM): the helper's close() removes the fd from
 * the one table at once, and only the helper waits for the FLUSH.
 *
 * fds go to a helper by number over a pipe, in batches (at most 64 outstanding); it reads them
 * one at a time and acknowledges each after close() returns (acks of every helper come back on
 * one pipe, the fd to watch). fds beyond a batch wait in a queue in this process: still open,
 * never promised to anyone. A helper that has not acknowledged within ZC_FD_CLOSER_STUCK_MS is
 * let go: what it has not read yet is taken back from its pipe (one read() of the whole pipe,
 * atomic against the helper's own reads), it finishes the one it holds alone and exits at EOF, and
 * a new one takes the queue; so no fd is ever given to two helpers, and no number is closed after
 * the kernel could have reused it. At most ZC_FD_CLOSER_MAX_HELPERS helpers live at once; past
 * that the queue waits for one to finish. A helper killed from outside (only root can signal it)
 * is replaced the same way; what is unread in its pipe is taken back, the one it held is left
 * open (it may have been closed, and its number reused, before the helper died).
 *
 * Before a fork, zc_fd_closer_settle() makes sure no handed fd is still in the table (a child
 * would copy it, and its own close of the copy would wait for the FLUSH too): each is
 * acknowledged, or its helper is seen asleep inside close() of it in its /proc/self/syscall
 * (which the helper opens itself and names to us; the kernel takes the fd out of the table
 * before the flush). A helper found there with more behind it, or making no progress, is let go
 * at once. Where the helper cannot open that file (non-dumpable and unprivileged), only acks
 * tell.
 *
 * Not thread-safe; no logging. Helpers die with the process that made them (PR_SET_PDEATHSIG).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ZC_FD_CLOSER_STUCK_MS 200
#define ZC_FD_CLOSER_MAX_HELPERS 256
#define ZC_FD_CLOSER_COMM "zygote-closer" /* the helpers' name (comm), for ps and tests */
/* In zc_fd_closer_new()'s flags, not a clone flag: helpers do not open /proc/self/syscall, so
 * zc_fd_closer_settle() relies on acks alone (what a non-dumpable unprivileged process gets; for
 * tests and to rule the file out). */
#define ZC_FD_CLOSER_NO_SYSCALL_FILE (1ULL << 62)

struct zc_fd_closer;

/* Starts the first helper. extra_clone_flags: passed to clone_with_pidfd() (for example
 * CLONE_WITH_PIDFD_NO_CLONE3 under a filter that may kill on clone3), with
 * ZC_FD_CLOSER_NO_SYSCALL_FILE taken out. */
int zc_fd_closer_new(uint64_t extra_clone_flags, struct zc_fd_closer **ret);

/* Closes fd through a helper; never blocks. With no helper to take it, the fd waits in the
 * queue (zc_fd_closer_dispatch() starts one); if even the queue cannot grow (ENOMEM), the fd is
 * closed here, the old way, as the last resort. c == NULL: closed here. fd < 0: nothing. */
void zc_fd_closer_close(struct zc_fd_closer *c, int fd);

/* The same, for an fd of owner (a uid, say): zc_fd_closer_held() counts the helpers each owner's
 * fds hold up. zc_fd_closer_close() is ZC_FD_CLOSER_NO_OWNER's. */
#define ZC_FD_CLOSER_NO_OWNER UINT32_MAX
#define ZC_FD_CLOSER_ANY_OWNER (UINT32_MAX - 1)
void zc_fd_closer_close_owned(struct zc_fd_closer *c, int fd, uint32_t owner);
/* Helpers held up by an fd of owner (ZC_FD_CLOSER_ANY_OWNER: anyone's): seen asleep in its
 * close(), or let go past their deadline while still on it. Each is a process until that close
 * returns: what an owner may make the closer hold is bounded by its caller with this. */
size_t zc_fd_closer_held(const struct zc_fd_closer *c, uint32_t owner);

/* Readable when a helper acknowledged a close: call zc_fd_closer_dispatch(). */
int zc_fd_closer_fd(const struct zc_fd_closer *c);

/* Reads the acks there are, reaps helpers that finished, replaces a stuck helper, and hands out
 * the next fd. now_ms: CLOCK_MONOTONIC in ms. Returns the ms until it must be called again
 * (a helper's deadline), or -1 if only an ack needs it. */
int zc_fd_closer_dispatch(struct zc_fd_closer *c, int64_t now_ms);

/* Call before fork(): returns 0 once no fd handed over is still in the fd table (each is
 * acknowledged, or its helper is asleep inside close() of it), doing the work of dispatch on the
 * way; with nothing pending, at once and without a system call. -ETIMEDOUT when it could not make
 * sure within timeout_ms (never longer): what a helper then still holds is given up, not waited
 * for by later calls. -EMFILE when fds are queued and no helper can be started (the limit, or
 * clone failing). c == NULL: 0. It may start helpers and queue fds taken back: call
 * zc_fd_closer_dispatch() afterwards for the next deadline. */
int zc_fd_closer_settle(struct zc_fd_closer *c, int timeout_ms);

/* fds waiting or in a helper's hands (not yet acknowledged), and live helpers. */
size_t zc_fd_closer_pending(const struct zc_fd_closer *c);
size_t zc_fd_closer_helpers(const struct zc_fd_closer *c);
/* The pid of the helper that takes new work, 0 when none (for tests and logs). */
pid_t zc_fd_closer_current_pid(const struct zc_fd_closer *c);

/* Lets every helper go once its work is done (EOF on its pipe); queued fds go to the current
 * helper first if it can take them without blocking, the rest are closed here. Never waits. */
void zc_fd_closer_free(struct zc_fd_closer *c);

/* CLOCK_MONOTONIC in ms. */
int64_t zc_fd_closer_now_ms(void);
