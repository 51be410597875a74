/* SPDX-License-Identifier: MIT */
/* A process's stdio: containerd's fifos, and the pty copies with a terminal. */
#include "process-io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "util.h"

void zs_stdio_init(struct zs_stdio *io) {
        *io = (struct zs_stdio){
                .task_fds = { -EBADF, -EBADF, -EBADF },
                .console_socket = { -EBADF, -EBADF },
                .stdin_hold = -EBADF,
                .master = -EBADF,
                .copy_in = -EBADF,
                .copy_out = -EBADF,
                .out_keep = { -EBADF, -EBADF },
                .cancel = { -EBADF, -EBADF },
        };
}

static int clear_nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

static int set_nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

/* The stdin fifo: a blocking reader for the task (or the copy), and a writer the shim keeps until
 * CloseIO. Opening the reader non-blocking and the writer after it never waits for containerd. */
static int open_stdin(const char *path, int *ret_read, int *ret_hold) {
        _cleanup_close_ int rd = -EBADF, hold = -EBADF;
        int r;

        rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (rd < 0)
                return -errno;
        hold = open(path, O_WRONLY | O_CLOEXEC);
        if (hold < 0)
                return -errno;
        r = clear_nonblock(rd);
        if (r < 0)
                return r;
        *ret_read = TAKE_FD(rd);
        *ret_hold = TAKE_FD(hold);
        return 0;
}

/* An output fifo: a blocking writer for the task (or the copy). The shim keeps a reader open, as
 * runc's shim does, so that the task's writes never fail while containerd's reader is not there
 * yet (or has gone). */
static int open_output(const char *path, int *ret_write, int *ret_keep) {
        _cleanup_close_ int keep = -EBADF, wr = -EBADF;

        keep = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (keep < 0)
                return -errno;
        wr = open(path, O_WRONLY | O_CLOEXEC);
        if (wr < 0)
                return -errno;
        *ret_write = TAKE_FD(wr);
        *ret_keep = TAKE_FD(keep);
        return 0;
}

int zs_stdio_open(struct zs_stdio *io, const char *in, const char *out, const char *err, bool terminal) {
        int r;

        io->terminal = terminal;
        if (pipe2(io->cancel, O_CLOEXEC) < 0)
                return -errno;
        if (in && *in) {
                r = open_stdin(in, terminal ? &io->copy_in : &io->task_fds[0], &io->stdin_hold);
                if (r < 0)
                        return r;
        }
        if (out && *out) {
                r = open_output(out, terminal ? &io->copy_out : &io->task_fds[1], &io->out_keep[0]);
                if (r < 0)
                        return r;
        }
        /* with a terminal, the pty carries stdout and stderr alike */
        if (err && *err && !terminal) {
                r = open_output(err, &io->task_fds[2], &io->out_keep[1]);
                if (r < 0)
                        return r;
        }
        if (terminal && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, io->console_socket) < 0)
                return -errno;
        return 0;
}

static int recv_master(int sock, int timeout_ms, int *ret) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control = {};
        char byte[256];
        struct iovec iov = { .iov_base = byte, .iov_len = sizeof(byte) };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)
        };
        struct pollfd p = { .fd = sock, .events = POLLIN };
        int fd = -EBADF;
        ssize_t n;

        n = poll(&p, 1, timeout_ms);
        if (n < 0)
                return -errno;
        if (n == 0)
                return -ETIMEDOUT;
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int fds[4];

                memcpy(fds, CMSG_DATA(c), k * sizeof(int));
                for (size_t i = 0; i < k; i++)
                        if (fd < 0)
                                fd = fds[i];
                        else
                                safe_close(fds[i]);
        }
        if (fd < 0)
                return (mh.msg_flags & MSG_CTRUNC) ? -EMSGSIZE : -EBADMSG;
        *ret = fd;
        return 0;
}

/* Writes all of buf to the non-blocking fd, unless the cancel pipe becomes readable first. */
static int write_all(int fd, const char *buf, size_t n, int cancel) {
        while (n > 0) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLOUT }, { .fd = cancel, .events = POLLIN } };
                ssize_t k;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents)
                        return -ECANCELED;
                k = write(fd, buf, n);
                if (k < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (k < 0)
                        return -errno;
                buf += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Copies from until EOF, an error or the cancel pipe; a failing writer is dropped (the reader
 * left), and reading goes on so that the writer of from never blocks. Both fds are non-blocking:
 * nothing here waits but poll(), which the cancel pipe ends. */
static void copy(int from, int to, int cancel) {
        char buf[16384];

        for (;;) {
                struct pollfd p[2] = { { .fd = from, .events = POLLIN }, { .fd = cancel, .events = POLLIN } };
                ssize_t n;
                int r;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                if (p[1].revents)
                        return;
                n = read(from, buf, sizeof(buf));
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n <= 0)
                        return; /* EOF, or EIO on a master whose terminal closed */
                if (to < 0)
                        continue;
                r = write_all(to, buf, (size_t) n, cancel);
                if (r == -ECANCELED)
                        return;
                if (r < 0)
                        to = -EBADF;
        }
}

static void *copy_out_thread(void *p) {
        struct zs_stdio *io = p;

        copy(io->master, io->copy_out, io->cancel[0]);
        /* the stdout fifo's readers see EOF now */
        io->copy_out = safe_close(io->copy_out);
        return NULL;
}

static void *copy_in_thread(void *p) {
        struct zs_stdio *io = p;

        copy(io->copy_in, io->master, io->cancel[0]);
        return NULL;
}

int zs_stdio_created(struct zs_stdio *io, int timeout_ms) {
        int r;

        for (size_t i = 0; i < 3; i++)
                io->task_fds[i] = safe_close(io->task_fds[i]);
        if (!io->terminal)
                return 0;
        io->console_socket[1] = safe_close(io->console_socket[1]);
        r = recv_master(io->console_socket[0], timeout_ms, &io->master);
        io->console_socket[0] = safe_close(io->console_socket[0]);
        if (r < 0)
                return r;
        /* only the shim has these open files (the task has the terminal's other side): the copies
         * wait in poll() alone, so that zs_stdio_done() can always end them */
        if ((r = set_nonblock(io->master)) < 0 || (io->copy_in >= 0 && (r = set_nonblock(io->copy_in)) < 0) ||
            (io->copy_out >= 0 && (r = set_nonblock(io->copy_out)) < 0))
                return r;
        r = -pthread_create(&io->out_thread, NULL, copy_out_thread, io);
        if (r < 0)
                return r;
        io->out_running = true;
        if (io->copy_in >= 0) {
                r = -pthread_create(&io->in_thread, NULL, copy_in_thread, io);
                if (r < 0)
                        return r;
                io->in_running = true;
        }
        return 0;
}

void zs_stdio_close_stdin(struct zs_stdio *io) {
        io->stdin_hold = safe_close(io->stdin_hold);
}

int zs_stdio_resize(struct zs_stdio *io, unsigned width, unsigned height) {
        struct winsize ws = { .ws_col = width, .ws_row = height };

        if (io->master < 0)
                return -ENOTTY;
        if (ioctl(io->master, TIOCSWINSZ, &ws) < 0)
                return -errno;
        return 0;
}

void zs_stdio_drain(struct zs_stdio *io) {
        if (io->out_running) {
                pthread_join(io->out_thread, NULL);
                io->out_running = false;
        }
}

void zs_stdio_done(struct zs_stdio *io) {
        if (io->cancel[1] >= 0 && write(io->cancel[1], "x", 1) < 0) {
                /* a full pipe is readable too: the copies stop either way */
        }
        zs_stdio_drain(io);
        if (io->in_running) {
                pthread_join(io->in_thread, NULL);
                io->in_running = false;
        }
        for (size_t i = 0; i < 3; i++)
                io->task_fds[i] = safe_close(io->task_fds[i]);
        for (size_t i = 0; i < 2; i++) {
                io->console_socket[i] = safe_close(io->console_socket[i]);
                io->out_keep[i] = safe_close(io->out_keep[i]);
                io->cancel[i] = safe_close(io->cancel[i]);
        }
        io->stdin_hold = safe_close(io->stdin_hold);
        io->master = safe_close(io->master);
        io->copy_in = safe_close(io->copy_in);
        io->copy_out = safe_close(io->copy_out);
}
