/* SPDX-License-Identifier: MIT */
/*
 * SCM_RIGHTS sender and receiver (see fd-util.h). Library code: no logging, no allocation.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd-util.h"

/* Room for the largest control message either side builds, aligned for struct cmsghdr. */
union fd_control {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * FD_UTIL_FDS_MAX)];
};

void close_many(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (fds[i] >= 0) {
                        int saved = errno;
                        close(fds[i]);
                        errno = saved;
                }
                fds[i] = -EBADF;
        }
}

ssize_t send_fds(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds, int flags) {
        union fd_control control;
        struct msghdr mh = { .msg_iov = (struct iovec *) iov, .msg_iovlen = n_iov };
        ssize_t n;

        if (n_fds > FD_UTIL_FDS_MAX || (n_fds > 0 && !fds))
                return -EINVAL;
        if (n_fds > 0) {
                struct cmsghdr *c;

                memset(&control, 0, CMSG_SPACE(sizeof(int) * n_fds));
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno > 0 ? -errno : -EIO;
        return n;
}

ssize_t recv_fds(int sock, const struct iovec *iov, size_t n_iov, int *fds, size_t max_fds, size_t *ret_n_fds,
                 int flags) {
        union fd_control control;
        struct msghdr mh = {
                .msg_iov = (struct iovec *) iov,
                .msg_iovlen = n_iov,
                .msg_control = control.buf,
                /* Room for max_fds and no more: the kernel drops the rest and says MSG_CTRUNC. */
                .msg_controllen = CMSG_SPACE(sizeof(int) * max_fds),
        };
        int got[FD_UTIL_FDS_MAX + 2]; /* what one CMSG_SPACE(253 fds) buffer can hold */
        size_t n_got = 0;
        ssize_t n;
        int r = 0;

        if (max_fds > FD_UTIL_FDS_MAX || (max_fds > 0 && !fds))
                return -EINVAL;
        do
                n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno > 0 ? -errno : -EIO;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                size_t k;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                if (c->cmsg_len < CMSG_LEN(0) || (c->cmsg_len - CMSG_LEN(0)) % sizeof(int) != 0) {
                        /* No whole fds to take, so none to close either: only refuse. */
                        r = -EBADMSG;
                        continue;
                }
                k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                        if (n_got < sizeof(got) / sizeof(got[0]))
                                got[n_got++] = fd;
                        else
                                close_many(&fd, 1);
                }
        }
        /* CMSG_SPACE rounds up, so one fd beyond max_fds can fit in the buffer: count too. */
        if (r == 0 && (n_got > max_fds || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))))
                r = -EMSGSIZE;
        if (r < 0) {
                close_many(got, n_got);
                return r;
        }
        if (!ret_n_fds) {
                /* The caller wants none. */
                close_many(got, n_got);
                return n;
        }
        if (n_got > 0)
                memcpy(fds, got, sizeof(int) * n_got);
        *ret_n_fds = n_got;
        return n;
}

int zc_sockaddr_un(const char *path, struct sockaddr_un *sa) {
        if (strncmp(path, "unix://", 7) == 0)
                path += 7;
        if (strlen(path) >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;
        *sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
        strcpy(sa->sun_path, path);
        return 0;
}

int zc_unix_connect(const char *path) {
        struct sockaddr_un sa;
        int fd, r = zc_sockaddr_un(path, &sa);

        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int zc_write_all(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                /* send() first, for MSG_NOSIGNAL; ENOTSOCK: a pipe or a file, written plainly */
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
                if (k < 0 && errno == ENOTSOCK)
                        k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}
