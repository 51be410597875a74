/* SPDX-License-Identifier: MIT */
/*
 * Namespaces made ahead for containers (issue #26: creating a network namespace is one of the
 * slow steps of a container start). A maker process, forked by zygoted off the critical path,
 * unshares a new network, IPC and UTS namespace, sends the three nsfs fds, and does it again until
 * the pool is full; then it exits. zygoted holds the fds (an fd keeps its namespace alive, empty:
 * nothing ever ran in it but the maker), and CreateContainer hands one set to the container
 * worker, whose init joins them instead of making its own (container/create.c, use_premade). A set
 * is used once. Empty pool: the container makes its own, as without the pool; the pool is
 * refilled; the first container of a zygoted starts the first fill, so a daemon that runs no
 * container holds none. ZYGOTE_DISABLE_FEATURES=namespace_pool turns it off.
 *
 * The namespaces belong to the initial user namespace, as those of a container zygoted clones
 * would; a container with a user namespace of its own never takes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "fd-util.h"
#include "fork-gate.h"
#include "log.h"
#include "nspool.h"
#include "pidfd-util.h"
#include "probe.h"
#include "signal-util.h"
#include "task.h"
#include "util.h"

static const char *const kinds[3] = { "net", "ipc", "uts" };

/* The maker: n sets, each sent as one message with three fds; then it exits. */
_Noreturn static void maker_run(int fd, size_t n) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        zc_signals_reset(NULL);
        for (size_t i = 0; i < n; i++) {
                int fds[3] = { -1, -1, -1 };
                char byte = 'n';
                struct iovec iov = { .iov_base = &byte, .iov_len = 1 };

                if (unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
                        _exit(1);
                for (size_t k = 0; k < 3; k++) {
                        char path[32] = "/proc/self/ns/";
                        strcat(path, kinds[k]);
                        fds[k] = open(path, O_RDONLY | O_CLOEXEC);
                        if (fds[k] < 0)
                                _exit(1);
                }
                if (send_fds(fd, &iov, 1, fds, 3, 0) < 0)
                        _exit(1);
                for (size_t k = 0; k < 3; k++)
                        close(fds[k]);
        }
        _exit(0);
}

static void maker_done(struct zd_daemon *d) {
        struct zd_nspool *p = &d->nspool;

        ev_io_stop(d->loop, &p->watch);
        p->maker_fd = safe_close(p->maker_fd);
        if (p->maker.pid > 0)
                zd_task_reap_child(d, p->maker);
        p->maker = ZC_PIDREF_NULL;
}

static void on_maker(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_daemon *d = w->data;
        struct zd_nspool *p = &d->nspool;
        int fds[3];
        size_t n_fds = 0;
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        ssize_t n = recv_fds(p->maker_fd, &iov, 1, fds, 3, &n_fds, MSG_DONTWAIT);

        if (n == -EAGAIN || n == -EINTR)
                return;
        if (n <= 0 || n_fds != 3) {
                close_many(fds, n > 0 ? n_fds : 0);
                maker_done(d); /* EOF: done (or it failed: the next take asks again) */
                return;
        }
        if (p->n < ZD_NSPOOL_SIZE) {
                for (size_t k = 0; k < 3; k++)
                        p->sets[p->n][k] = fds[k];
                p->n++;
                p->made++;
        } else
                close_many(fds, 3);
}

/* A maker for what is missing, unless one runs. */
static void refill(struct zd_daemon *d) {
        struct zd_nspool *p = &d->nspool;
        int sk[2];
        pid_t pid;

        if (!p->enabled || p->maker_fd >= 0 || p->n >= ZD_NSPOOL_SIZE)
                return;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sk) < 0)
                return;
        zd_fork_gate();
        pid = fork();
        if (pid == 0) {
                close(sk[0]);
                maker_run(sk[1], ZD_NSPOOL_SIZE - p->n);
        }
        close(sk[1]);
        if (pid < 0) {
                close(sk[0]);
                zd_log(LOG_WARNING, "namespace pool: fork: %s", strerror(errno));
                return;
        }
        p->maker = zc_pidref_make(pid, pidfd_open_pid(pid));
        p->maker_fd = sk[0];
        ev_io_init(&p->watch, on_maker, p->maker_fd, EV_READ);
        p->watch.data = d;
        ev_io_start(d->loop, &p->watch);
}

void zd_nspool_init(struct zd_daemon *d) {
        struct zd_nspool *p = &d->nspool;

        p->enabled = d->privileged && !ze_feature_disabled("namespace_pool");
        p->maker_fd = -EBADF;
        p->maker = ZC_PIDREF_NULL;
        /* filled at the first container: a zygoted that starts none holds no namespace */
}

int zd_nspool_take(struct zd_daemon *d, int ret[3]) {
        struct zd_nspool *p = &d->nspool;

        if (p->n == 0) {
                if (p->enabled)
                        p->fallbacks++;
                refill(d);
                return -ENOENT;
        }
        p->n--;
        for (size_t k = 0; k < 3; k++)
                ret[k] = TAKE_FD(p->sets[p->n][k]);
        p->used++;
        refill(d);
        return 0;
}

void zd_nspool_give_back(struct zd_daemon *d, int set[3]) {
        struct zd_nspool *p = &d->nspool;

        if (set[0] < 0)
                return;
        if (p->n < ZD_NSPOOL_SIZE) {
                for (size_t k = 0; k < 3; k++)
                        p->sets[p->n][k] = TAKE_FD(set[k]);
                p->n++;
                p->used--;
                return;
        }
        close_many(set, 3);
}

void zd_nspool_free(struct zd_daemon *d) {
        struct zd_nspool *p = &d->nspool;

        if (p->maker_fd >= 0) {
                ev_io_stop(d->loop, &p->watch);
                p->maker_fd = safe_close(p->maker_fd);
                zc_pidref_kill_and_reap(&p->maker);
        }
        while (p->n > 0) {
                p->n--;
                close_many(p->sets[p->n], 3);
        }
}
