/* SPDX-License-Identifier: MIT */
/*
 * The foreground terminal of `run` and `exec -t` (tty.h): runc's behaviour, checked against
 * Debian's runc 1.1.5 under a pty (tests/runtime/test_runc_tty.py): the container's pty has
 * -onlcr, the runtime's terminal is raw but keeps its output processing (so the container's "\n"
 * reaches the user as "\r\n" once), the pty's size follows the runtime's terminal, and the exit
 * status is the process's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "fd-util.h"
#include "libcontainer.h"
#include "tty.h"
#include "util.h"

/* After the process is gone, the pty's last output is read until the kernel says no process
 * holds its other end (EIO); one that a left-behind process still holds is read until it has
 * been quiet this long, so that run and exec return (runc returns at once). */
#define DRAIN_QUIET_MS 200

/* The runtime's terminal, as runc finds it: stderr, stdout or stdin, else the controlling one. */
static void find_host_terminal(struct zct_tty *t) {
        static const int std[] = { STDERR_FILENO, STDOUT_FILENO, STDIN_FILENO };

        for (size_t i = 0; i < ELEMENTSOF(std); i++)
                if (isatty(std[i])) {
                        t->host = std[i];
                        return;
                }
        t->host_owned = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        t->host = t->host_owned;
}

int zct_tty_open(const struct zct_ctx *c, struct zct_tty *t, struct zct_oci *o, const char *console_socket,
                 int *console_fd) {
        struct winsize ws;
        int pair[2];

        if (!o->terminal || console_socket || *console_fd >= 0)
                return 0;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return zct_error_errno(c, "the terminal's socket pair");
        t->sock = pair[0];
        *console_fd = pair[1];
        find_host_terminal(t);
        if (t->host >= 0 && ioctl(t->host, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
                o->console_rows = ws.ws_row;
                o->console_cols = ws.ws_col;
        }
        return 0;
}

static void resize(const struct zct_tty *t) {
        struct winsize ws;

        /* errors ignored, as runc does: the terminal may be gone (a hangup) */
        if (t->host >= 0 && ioctl(t->host, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
                (void) ioctl(t->master, TIOCSWINSZ, &ws);
}

static int make_raw(struct zct_tty *t) {
        struct termios raw;

        if (!isatty(STDIN_FILENO))
                return 0;
        if (tcgetattr(STDIN_FILENO, &t->saved) < 0)
                return -errno;
        raw = t->saved;
        cfmakeraw(&raw);
        raw.c_oflag |= OPOST;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
                return -errno;
        t->raw_fd = STDIN_FILENO;
        return 0;
}

int zct_tty_take_master(const struct zct_ctx *c, struct zct_tty *t) {
        struct termios tio;
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        size_t n_fds = 0;
        int fd = -EBADF;
        ssize_t n;

        /* sent before the init's "ready": here already, or never */
        n = recv_fds(t->sock, &iov, 1, &fd, 1, &n_fds, MSG_DONTWAIT);
        t->sock = safe_close(t->sock);
        if (n < 0 || n_fds != 1)
                return zct_error(c, "the container's terminal: %s", n < 0 ? zct_errstr((int) -n) : "not received"),
                       n < 0 ? (int) n : -EPROTO;
        t->master = fd;
        if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || tcgetattr(fd, &tio) < 0)
                return zct_error_errno(c, "the container's terminal");
        tio.c_oflag &= ~(tcflag_t) ONLCR;
        if (tcsetattr(fd, TCSANOW, &tio) < 0)
                return zct_error_errno(c, "the container's terminal");
        resize(t);
        if (make_raw(t) < 0)
                return zct_error_errno(c, "the terminal of stdin: raw mode");
        return 0;
}

struct chunk {
        char d[4096];
        size_t off, len;
};

/* One read of from into an empty c: 1 with data, 0 at the end (EOF, EIO: no other end), or
 * -EAGAIN. */
static int fill(struct chunk *c, int from) {
        ssize_t n = read(from, c->d, sizeof(c->d));

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? -EAGAIN : 0;
        c->off = 0;
        c->len = (size_t) n;
        return n > 0;
}

/* What c holds, written to to as far as it takes it; a destination that is gone (EPIPE, a
 * closed stdout) drops it. */
static void drain(struct chunk *c, int to) {
        ssize_t n = write(to, c->d + c->off, c->len - c->off);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n < 0)
                n = (ssize_t) (c->len - c->off);
        c->off += (size_t) n;
        if (c->off == c->len)
                c->off = c->len = 0;
}

enum { RELAY_IN, RELAY_MASTER, RELAY_OUT, RELAY_SIG, RELAY_PID, _RELAY_MAX };

int zct_tty_relay(struct zct_tty *t, int pidfd) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
        struct chunk in = { .len = 0 }, out = { .len = 0 };
        bool in_open = true, master_open = true, exited = false;
        sigset_t winch, old_mask;
        int sig_fd;

        sigemptyset(&winch);
        sigaddset(&winch, SIGWINCH);
        (void) sigprocmask(SIG_BLOCK, &winch, &old_mask);
        sig_fd = signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
        (void) sigaction(SIGPIPE, &ign, &old_pipe);
        while (master_open || out.len) {
                struct pollfd p[_RELAY_MAX] = {
                        [RELAY_IN] = { .fd = in_open && !exited && !in.len ? STDIN_FILENO : -1, .events = POLLIN },
                        [RELAY_MASTER] = { .fd = t->master,
                                           .events = (short) ((master_open && !out.len ? POLLIN : 0) |
                                                              (in.len ? POLLOUT : 0)) },
                        [RELAY_OUT] = { .fd = out.len ? STDOUT_FILENO : -1, .events = POLLOUT },
                        [RELAY_SIG] = { .fd = sig_fd, .events = POLLIN },
                        [RELAY_PID] = { .fd = exited ? -1 : pidfd, .events = POLLIN },
                };
                int r = poll(p, _RELAY_MAX, exited ? DRAIN_QUIET_MS : -1);

                if (r < 0 && errno != EINTR)
                        break;
                if (r == 0 && !out.len)
                        break; /* gone, and the pty quiet (someone left behind holds it) */
                if (r <= 0)
                        continue;
                if (p[RELAY_SIG].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sig_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                resize(t);
                }
                if (p[RELAY_PID].revents & POLLIN)
                        exited = true;
                if (p[RELAY_IN].revents && fill(&in, STDIN_FILENO) == 0)
                        in_open = false; /* stdin's end: the container keeps its terminal */
                if (in.len && (p[RELAY_MASTER].revents & POLLOUT))
                        drain(&in, t->master);
                if (!out.len && (p[RELAY_MASTER].revents & (POLLIN | POLLHUP | POLLERR)) && fill(&out, t->master) == 0)
                        master_open = false;
                if (out.len && (p[RELAY_OUT].revents & (POLLOUT | POLLERR | POLLHUP)))
                        drain(&out, STDOUT_FILENO);
        }
        (void) sigaction(SIGPIPE, &old_pipe, NULL);
        safe_close(sig_fd);
        (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
        return zct_runc_wait_exit_status(pidfd);
}

void zct_tty_done(struct zct_tty *t) {
        if (t->raw_fd >= 0)
                (void) tcsetattr(t->raw_fd, TCSADRAIN, &t->saved);
        t->raw_fd = -EBADF;
        t->sock = safe_close(t->sock);
        t->master = safe_close(t->master);
        t->host_owned = safe_close(t->host_owned);
        t->host = -EBADF;
}
