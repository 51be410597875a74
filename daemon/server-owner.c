/* SPDX-License-Identifier: MIT */
/*
 * Whose account a connection counts in (server-owner.h): a caller in a user namespace counts as
 * the uid that owns the chain of user namespaces it is in, as zygoted's user namespace sees it.
 *
 * Why a user cannot count as someone else: a user namespace's owner is the effective uid of the
 * process that made it, recorded by the kernel at creation and never changed. An unprivileged
 * uid U of zygoted's user namespace makes only namespaces owned by U, and whatever uids it maps
 * in there (its subordinate uids through newuidmap, nested namespaces made inside) are below
 * that namespace, whose owner stays U. A process never leaves its user namespace for an
 * ancestor, and enters another (setns) only with CAP_SYS_ADMIN there, which it holds only in
 * namespaces below one its own uid owns. So the namespace just below zygoted's on the chain of a
 * caller is one its owner made, and that owner is the account. The kernel walks the chain for us
 * (NS_GET_PARENT, NS_GET_OWNER_UID on nsfs descriptors): no file a caller writes is read.
 *
 * The process is the one that connected (SO_PEERPIDFD; on kernels without
 * PIDFD_GET_USER_NAMESPACE, SO_PEERCRED's pid, whose process, named by SO_PEERPIDFD where there is
 * one, is checked alive after its namespace was opened): a socket handed on keeps the
 * connector's account, as it keeps the connector's credentials.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "pidfd-util.h"
#include "server-owner.h"
#include "util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#define ZD_NSIO 0xb7
#define ZD_NS_GET_PARENT _IO(ZD_NSIO, 0x2)
#define ZD_NS_GET_OWNER_UID _IO(ZD_NSIO, 0x4)
#define ZD_PIDFD_GET_USER_NAMESPACE _IO(0xFF, 9)
/* The kernel nests at most 32 user namespaces. */
#define ZD_USERNS_DEPTH_MAX 33

static uint64_t ns_ino(int fd) {
        struct stat st;

        return fstat(fd, &st) < 0 ? 0 : (uint64_t) st.st_ino;
}

uint64_t zd_owner_own_userns(void) {
        _cleanup_close_ int fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);

        return fd < 0 ? 0 : ns_ino(fd);
}

/* The user namespace of the process that connected, as an nsfs fd. */
static int peer_userns(int conn_fd, const struct ucred *cred, bool pidfd_ns) {
        _cleanup_close_ int pidfd = -EBADF, ns = -EBADF;
        socklen_t l = sizeof(int);
        char path[64];

        if (getsockopt(conn_fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) == 0) {
                ns = pidfd_ns ? ioctl(pidfd, ZD_PIDFD_GET_USER_NAMESPACE, 0) : -1;
                if (ns >= 0)
                        return TAKE_FD(ns);
                if (pidfd_ns && errno == ESRCH)
                        return -ESRCH;
                /* an older kernel: by its pid, while the pidfd says the process that connected
                 * lives (so that its pid names no other) */
        } else
                pidfd = -EBADF;
        if (cred->pid <= 0)
                return -ESRCH;
        if (pidfd < 0)
                pidfd = pidfd_open_pid(cred->pid);
        if (pidfd < 0)
                return pidfd;
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) cred->pid);
        ns = open(path, O_RDONLY | O_CLOEXEC);
        if (ns < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        /* alive from before the open to after it: the namespace is that process's */
        if (pidfd_kill(pidfd, 0) == -ESRCH)
                return -ESRCH;
        return TAKE_FD(ns);
}

struct zd_owner zd_owner_find(int conn_fd, const struct ucred *cred, uint64_t own_userns, bool pidfd_ns) {
        struct zd_owner o = { .account = ZD_ACCOUNT_UNKNOWN, .own_ns = false };
        _cleanup_close_ int ns = -EBADF;
        uid_t owner;

        if (own_userns == 0)
                return (struct zd_owner){ .account = cred->uid, .own_ns = true };
        ns = peer_userns(conn_fd, cred, pidfd_ns);
        if (ns < 0)
                return o;
        if (ns_ino(ns) == own_userns)
                return (struct zd_owner){ .account = cred->uid, .own_ns = true };
        for (int depth = 0; depth < ZD_USERNS_DEPTH_MAX; depth++) {
                _cleanup_close_ int parent = ioctl(ns, ZD_NS_GET_PARENT, 0);
                if (parent < 0) {
                        /* EPERM: ns has no parent within zygoted's user namespace, so it is not
                         * below it: the caller is in an ancestor's or a stranger's namespace,
                         * and zygoted sees only its uid (the overflow uid when unmapped). */
                        if (errno == EPERM)
                                o.account = cred->uid;
                        return o;
                }
                if (ns_ino(parent) == own_userns) {
                        if (ioctl(ns, ZD_NS_GET_OWNER_UID, &owner) < 0)
                                return o;
                        o.account = owner == 0 ? ZD_ACCOUNT_ROOT_NS : owner;
                        return o;
                }
                safe_close(ns);
                ns = TAKE_FD(parent);
        }
        return o;
}
