/* SPDX-License-Identifier: MIT */
/*
 * Reference processes: `zygote-ref`, exec'd by the daemon once per profile, applies the
 * profile's filter to itself and then serves requests on its control socket (fd 3, a
 * SOCK_SEQPACKET socketpair). In the inherit tier it makes workers sharing its memory until their
 * exec, without waiting for them (worker-nocopy.h), or, when every slot for them is busy or INIT
 * says ZR_REF_INIT_FORK_WORKERS, forks them with clone(CLONE_PARENT | CLONE_PIDFD | SIGCHLD): the
 * worker is the daemon's child and inherits the filter; in the clone tier it only has to stay
 * alive as the source of SECCOMP_CLONE_FILTER.
 *
 * Protocol: every message is one SEQPACKET datagram that starts with struct zr_ref_header.
 *
 *   daemon -> ref   INIT   zr_ref_init + n_insns struct sock_filter; fds: none, or the pid and
 *                          mount namespaces to join first (pidns.h)
 *   ref -> daemon   READY  (nothing)                   or ERROR
 *   daemon -> ref   SPAWN  a packed plan (plan.h), fds as SCM_RIGHTS
 *   ref -> daemon   SPAWNED  arg = worker pid (the daemon opens its pidfd)   or ERROR
 *   daemon -> ref   POOL   (nothing); one fd: a pool worker's end of its own channel
 *   ref -> daemon   SPAWNED  arg = the pool worker's pid                  or ERROR
 *   ERROR:          arg = enum ze_step (0 when no child step failed), err = positive errno
 *
 * A pool worker (POOL) is forked like a worker, ahead of demand: it closes every fd but its
 * channel, prepares its buffers and blocks on the channel for exactly one SPAWN (a packed plan,
 * the plan's fds; arg = the index of the status fd among them, -1 for none), which it runs
 * through ze_child_run() as the reference's own worker would. EOF on the channel before that
 * makes it exit 0. The daemon, not the reference, sends that SPAWN: no reference round trip.
 *
 * EOF on the control socket makes the reference exit 0. A reference that receives a malformed
 * message answers ERROR (EBADMSG) and keeps serving; the daemon, on any timeout or protocol
 * error, shuts the socket down and SIGKILLs the reference (so that it cannot act late on a
 * request given up on); the caller sees it die on its pidfd and restarts it.
 *
 * Daemon side below: library code, blocking calls bounded by ZR_REF_TIMEOUT_MS (poll on the
 * control socket and the reference's pidfd); no logging, no libev.
 */
#pragma once

#include <errno.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "child.h"
#include "pidref.h"

#define ZR_REF_CTL_FD 3
#define ZR_REF_TIMEOUT_MS 5000        /* a reply later than this: the reference is stuck, and killed */
#define ZR_REF_MAX_MSG (320u * 1024u) /* header + the largest plan or program */

enum zr_ref_type {
        ZR_REF_INIT = 1,
        ZR_REF_READY,
        ZR_REF_SPAWN,
        ZR_REF_SPAWNED,
        ZR_REF_ERROR,
        ZR_REF_POOL,
};

struct zr_ref_header {
        uint32_t magic; /* ZR_REF_MAGIC */
        uint32_t type;  /* enum zr_ref_type */
        int32_t arg;    /* SPAWNED: pid; ERROR: step */
        int32_t err;    /* ERROR: positive errno */
};
#define ZR_REF_MAGIC 0x5a595246u /* "ZYRF" */

struct zr_ref_init {
        uint32_t filter_flags; /* SECCOMP_FILTER_FLAG_* */
        uint32_t nnp;          /* set no_new_privs before loading */
        uint32_t n_insns;
        uint32_t flags;        /* ZR_REF_INIT_* */
        uint64_t capbset_drop; /* dropped from the reference's bounding set first, once for all
                                * its workers (which inherit the set and drop only the rest) */
        /* followed by n_insns struct sock_filter */
};

/* zr_ref_init's flags: fork every worker (a copy of the reference's memory) instead of making it
 * share that memory until its exec (worker-nocopy.h). zygoted sets it with --fork-workers, with
 * ZYGOTE_DISABLE_FEATURES=nocopy_worker, and for a profile whose filter refuses that clone. */
#define ZR_REF_INIT_FORK_WORKERS 1u

struct zr_reference {
        struct zc_pidref pidref; /* fd -EBADF when not running */
        int ctl_fd;              /* -EBADF when not running */
};

#define ZR_REFERENCE_NULL ((struct zr_reference){ .pidref = ZC_PIDREF_NULL, .ctl_fd = -EBADF })

/* Starts the helper open at helper_fd (zr_helper_open()) with a clean environment, 0 and 1 on
 * /dev/null, the daemon's stderr, the control socket on fd 3; sends INIT and waits for READY.
 * bpf/len: the program (len instructions); nnp: set no_new_privs before loading it (without
 * it, the reference needs CAP_SYS_ADMIN); capbset_drop: capabilities the reference drops from
 * its bounding set first (0: none), so that its workers need not. Errors: the exec's errno, the
 * reference's (negative) errno for the failing step, -ECONNRESET if it died, -ETIMEDOUT. */
int zr_reference_start(int helper_fd, const struct sock_filter *bpf, size_t len, unsigned filter_flags, bool nnp,
                       uint64_t capbset_drop, struct zr_reference *ret);
/* The same, and the reference joins the pid namespace (for its children) and the mount namespace
 * open at pidns_fd and mntns_fd (a profile's, pidns.h) before it loads the filter: its workers
 * are born there. Both -EBADF: neither. A failure to join is its errno (step mntns). ref_flags:
 * ZR_REF_INIT_* (0: the default). */
int zr_reference_start_ns(int helper_fd, const struct sock_filter *bpf, size_t len, unsigned filter_flags, bool nnp,
                          uint64_t capbset_drop, int pidns_fd, int mntns_fd, unsigned ref_flags,
                          struct zr_reference *ret);

/* Has the reference fork a worker that runs ze_child_run(plan) with ZE_FILTER_INHERITED (the
 * plan's filter mode and program are ignored). The worker is the caller's child. The plan's fds
 * stay the caller's. On success *ret_worker is the worker: the pid the reference answers and a new
 * CLOEXEC pidfd the caller owns, opened by that pid (exact: the worker is the caller's unreaped
 * child, checked). Errors:
 * -EPIPE / -ECONNRESET when the reference is gone, -ETIMEDOUT, -E2BIG for a plan too big for
 * one message, or the reference's errno (e.g. clone's).
 *
 * On failure ret_worker->pid says what became of the worker (its fd is -EBADF): 0, none was forked (the request never
 * reached the reference, or it answered an error); > 0, this worker was forked but no pidfd could
 * be opened for it (-EMFILE, say); ZR_REF_WORKER_UNKNOWN, the reference died or stopped answering
 * with the request in its hands (zr_reference_find_worker() finds the worker if there is one).
 * A plan with a hold fd keeps a worker that is not tracked from exec: close the write end. */
#define ZR_REF_WORKER_UNKNOWN ((pid_t) -1)
int zr_reference_spawn(struct zr_reference *r, const struct ze_plan *plan, struct zc_pidref *ret_worker);

/* zr_reference_spawn() in two halves, for a caller that does not block (zygoted's loop): the
 * request, sent without waiting (at most ZR_REF_MAX_QUEUED in flight: they fit the socket's
 * buffer), and, when the control socket is readable, the reply to the oldest request in flight
 * (the reference answers in order). zr_reference_reply() returns -EAGAIN when no reply is there
 * yet; otherwise what zr_reference_spawn() returns, *ret_worker included. After a
 * ZR_REF_WORKER_UNKNOWN the socket is shut and the reference killed: every request still in
 * flight is lost with it. */
#define ZR_REF_MAX_QUEUED 64
int zr_reference_request(struct zr_reference *r, const struct ze_plan *plan);
int zr_reference_reply(struct zr_reference *r, struct zc_pidref *ret_worker);

/* A pool worker, asked for without waiting (as zr_reference_request(); its reply, the worker's
 * pid, through zr_reference_reply()). chan_fd: the worker's end of its channel (zr_pool_channel());
 * the reference gets a copy, the caller keeps its own. */
int zr_reference_pool_request(struct zr_reference *r, int chan_fd);

/* A pool worker's channel: a SOCK_SEQPACKET pair, CLOEXEC, ret[0] the daemon's end (room for the
 * largest plan), ret[1] the worker's. */
int zr_pool_channel(int ret[2]);
/* The plan, packed, to the pool worker at the other end of chan: its one request. Never blocks.
 * -EPIPE / -ECONNREFUSED / -ECONNRESET: the worker is gone (the plan's fds stay the caller's). */
int zr_pool_send(int chan, const struct ze_plan *plan);

/* Like zr_reference_find_worker(), for a request whose worker is known by the socket it holds
 * (a pool worker: the inode of its channel end, which only the reference and it held). */
pid_t zr_reference_find_socket_holder(const struct zr_reference *r, ino_t ino);

/* After a spawn that ended with ZR_REF_WORKER_UNKNOWN: waits (bounded) until the reference is
 * dead, so that any fork it started is complete, then finds among the caller's children the
 * worker that holds the other end of status_r, the read end of that spawn's status pipe (only it
 * and the reference ever held the write end). Returns its pid, 0 when there is none (it never
 * was, or it is gone), or a negative errno. */
pid_t zr_reference_find_worker(const struct zr_reference *r, int status_r);

/* Runs a probe worker through the reference that does every step a real one does (as root:
 * groups, uid/gid 65534, capbset drop, caps, nnp, chdir /; otherwise nnp and chdir /) and execs
 * the helper at helper_fd with --probe-exec, which exits 0; waits for it (waitid on its pidfd, bounded). Returns 0 if
 * the inherit tier is usable; otherwise a negative errno and, if ret_reason is not NULL, a
 * malloc'd reason naming the step and errno, e.g. "uid: Operation not permitted". */
int zr_reference_probe_inherit(struct zr_reference *r, int helper_fd, bool privileged, char **ret_reason);

/* Closes the control socket, SIGKILLs the reference through its pidfd and reaps it. Safe on a
 * stopped or never-started reference (no pidfd) and on NULL. Resets *r to ZR_REFERENCE_NULL. */
void zr_reference_stop(struct zr_reference *r);

/* Where the helper is: env ZYGOTE_REF_HELPER, else zygote-ref next to /proc/self/exe (when it
 * exists and is executable), else ZYGOTE_LIBEXEC_DIR "/zygote-ref". -ENAMETOOLONG if it does
 * not fit in size. */
int zr_helper_path(char *buf, size_t size);

/* Opens the helper at path (O_PATH | O_CLOEXEC) for zr_reference_start() and
 * zr_reference_probe_inherit(), which exec it through the fd: whoever runs it then needs only the
 * file's own exec permission, not search permission on the directories above it. The daemon
 * opens it once, so every reference runs the file it started with (a helper replaced or
 * renamed on disk later is not picked up). Returns the fd or a negative errno. */
int zr_helper_open(const char *path);

/* zygote-ref in a child cloned with clone_flags from the helper open at helper_fd: argv, a clean
 * environment, cwd /, its end of a new SOCK_SEQPACKET pair at ctl_target and, with with_stderr,
 * the daemon's stderr (when it has one; else nothing there). Returns the child (its pid and pidfd),
 * our end of the socket and the read end of its status pipe (EOF: exec; else a struct ze_status
 * record), all CLOEXEC, or a negative errno. For both of its roles: reference and pid namespace
 * init (pidns.c). */
struct zr_helper_child {
        struct zc_pidref pidref;
        int ctl_fd, status_fd;
};
int zr_helper_clone(int helper_fd, char **argv, unsigned long clone_flags, int ctl_target, bool with_stderr,
                    struct zr_helper_child *ret);

/* Both ends' framing: one datagram = header + payload, fds as SCM_RIGHTS. send never blocks
 * (MSG_DONTWAIT; at most ZR_REF_MAX_QUEUED requests are in flight) and never raises SIGPIPE. recv
 * receives with MSG_CMSG_CLOEXEC, returns the byte count (0 at EOF) and the fds; a truncated
 * message or more than max_fds fds closes what arrived and fails with -EMSGSIZE. */
int zr_ref_send(int fd, const struct zr_ref_header *h, const void *payload, size_t len, const int *fds, size_t n_fds);
ssize_t zr_ref_recv(int fd, void *buf, size_t size, int *fds, size_t max_fds, size_t *ret_n_fds);
