/* SPDX-License-Identifier: MIT */
/*
 * File descriptors passed over Unix sockets (SCM_RIGHTS): one sender and one receiver for the
 * daemon, zygote-ref, libzygote and the tests.
 *
 * Both return a byte count or a negative errno and retry EINTR; EAGAIN goes back to the caller
 * (who decides whether to poll). Every received fd is CLOEXEC (MSG_CMSG_CLOEXEC) and every control
 * message's length is checked. A message that brought more fds than the caller has room for, or
 * whose data or control part the kernel truncated, is an error: the fds that did arrive are
 * closed, none is handed out.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The kernel's own limit per message (SCM_MAX_FD). */
#define FD_UTIL_FDS_MAX 253

/* sendmsg() of iov with n_fds fds attached (none if n_fds is 0). MSG_NOSIGNAL is always added:
 * a peer that went away is -EPIPE, not a signal. The fds travel with the first byte that goes
 * out; after a partial send of a stream socket the caller sends the rest without them.
 * Returns the bytes sent; -EINVAL for more than FD_UTIL_FDS_MAX fds. */
ssize_t send_fds(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds, int flags);

/* recvmsg() into iov, with room for max_fds fds (at most FD_UTIL_FDS_MAX) in fds[]. On success
 * returns the bytes read and sets *ret_n_fds; the fds are the caller's. Errors:
 *   -EMSGSIZE  more fds than max_fds (MSG_CTRUNC), or a datagram longer than iov (MSG_TRUNC);
 *   -EBADMSG   an SCM_RIGHTS control message whose length is not a whole number of fds;
 *   -EINVAL    max_fds above FD_UTIL_FDS_MAX;
 *   anything recvmsg() answers.
 * On error every fd that arrived is closed and fds[] and *ret_n_fds are left as they were. */
ssize_t recv_fds(int sock, const struct iovec *iov, size_t n_iov, int *fds, size_t max_fds, size_t *ret_n_fds,
                 int flags);

/* Closes n fds and sets each slot to -EBADF. */
void close_many(int *fds, size_t n);

struct sockaddr_un;

/* sa for path ("unix://" in front is taken off, as containerd writes its addresses): 0, or
 * -ENAMETOOLONG for a path that does not fit. */
int zc_sockaddr_un(const char *path, struct sockaddr_un *sa);

/* A new AF_UNIX stream socket (CLOEXEC) connected to path; -errno. */
int zc_unix_connect(const char *path);

/* All of buf written to fd (EINTR retried; a socket's peer gone is -EPIPE, never SIGPIPE). */
int zc_write_all(int fd, const void *buf, size_t n);
