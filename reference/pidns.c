/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of a profile's pid namespace (see pidns.h): starting its init, and cloning
 * a worker into it. Library code: no logging, every wait bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "pidfd-util.h"
#include "pidns.h"
#include "reference.h"
#include "util.h"

#define ZR_PIDNS_TIMEOUT_MS 5000

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Our own pid namespace, to go back to after each zr_pidns_clone(): opened once. */
static int own_pidns_fd = -EBADF;

static int open_own_pidns(void) {
        if (own_pidns_fd < 0) {
                int fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                own_pidns_fd = fd;
        }
        return own_pidns_fd;
}

static int open_ns(pid_t pid, const char *name) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

void zr_pidns_release(struct zr_pidns *ns) {
        if (!ns)
                return;
        ns->ctl_fd = safe_close(ns->ctl_fd);
        ns->pidns_fd = safe_close(ns->pidns_fd);
        ns->mntns_fd = safe_close(ns->mntns_fd);
        zc_pidref_done(&ns->pidref);
}

void zr_pidns_kill(struct zr_pidns *ns) {
        if (!ns)
                return;
        zc_pidref_kill_and_reap(&ns->pidref);
        zr_pidns_release(ns);
}

int zr_pidns_start(int helper_fd, struct zr_pidns *ret, char *what, size_t what_size) {
        _cleanup_close_ int status_fd = -EBADF;
        char *argv[] = { (char *) "zygote-ref", (char *) ZR_PIDNS_INIT_ARG, NULL };
        struct zr_helper_child child;
        struct zr_pidns ns = ZR_PIDNS_NULL;
        struct zr_pidns_ready ready = {};
        int64_t deadline = now_ms() + ZR_PIDNS_TIMEOUT_MS;
        int k;

        if (helper_fd < 0 || !ret)
                return -EINVAL;
        k = open_own_pidns();
        if (k < 0)
                return k;
        /* Not even our stderr (its failures come back on the control socket): it outlives us, and
         * whoever reads our stderr to its end (a service manager, a test) would wait for it. A new
         * mount namespace with it: the init's /proc must not be mounted in ours. */
        k = zr_helper_clone(helper_fd, argv, CLONE_NEWPID | CLONE_NEWNS, ZR_PIDNS_CTL_FD, false, &child);
        if (k < 0)
                return k;
        ns.pidref = child.pidref;
        ns.ctl_fd = child.ctl_fd;
        status_fd = child.status_fd;

        /* One datagram: the init's report, once /proc is in place. EOF: it died (a failed exec
         * writes its record to the status pipe, read below). */
        for (;;) {
                struct pollfd p = { .fd = ns.ctl_fd, .events = POLLIN };
                int64_t left = deadline - now_ms();
                ssize_t n;

                k = poll(&p, 1, left < 0 ? 0 : (int) (left > INT_MAX ? INT_MAX : left));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        k = k == 0 ? -ETIMEDOUT : -errno;
                        break;
                }
                n = recv(ns.ctl_fd, &ready, sizeof(ready), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0) {
                        struct ze_status rec;

                        k = -ECONNRESET;
                        if (read(status_fd, &rec, sizeof(rec)) == (ssize_t) sizeof(rec) && rec.err > 0) {
                                k = -rec.err;
                                if (what && what_size)
                                        snprintf(what, what_size, "%s", ze_step_to_string(rec.step));
                        }
                        break;
                }
                if (n != (ssize_t) sizeof(ready) || ready.magic != ZR_PIDNS_MAGIC) {
                        k = n < 0 ? -errno : -EBADMSG;
                        break;
                }
                ready.what[sizeof(ready.what) - 1] = 0;
                k = ready.err > 0 ? -ready.err : 0;
                if (k < 0 && what && what_size)
                        snprintf(what, what_size, "%s", ready.what);
                break;
        }
        if (k < 0) {
                zr_pidns_kill(&ns);
                return k;
        }
        /* Our child, unreaped: its pid is its own until we reap it. */
        ns.pidns_fd = open_ns(ns.pidref.pid, "pid");
        ns.mntns_fd = open_ns(ns.pidref.pid, "mnt");
        if (ns.pidns_fd < 0 || ns.mntns_fd < 0) {
                k = ns.pidns_fd < 0 ? ns.pidns_fd : ns.mntns_fd;
                zr_pidns_kill(&ns);
                return k;
        }
        *ret = ns;
        return 0;
}

pid_t zr_pidns_clone(const struct zr_pidns *ns, int *ret_pidfd) {
        pid_t pid;

        if (!ns || ns->pidns_fd < 0)
                return clone_with_pidfd(0, ret_pidfd);
        if (own_pidns_fd < 0)
                return -EBADF;
        /* pid_for_children only: our own pid (and every other process's view of us) stays. */
        if (syscall(SYS_setns, ns->pidns_fd, CLONE_NEWPID) < 0)
                return -errno;
        pid = clone_with_pidfd(0, ret_pidfd);
        if (pid == 0)
                return 0; /* the child: born in the namespace, it goes on in child.c */
        /* Back, or every later fork of ours (probes, references, inits) would land there. A
         * failure here leaves the daemon unusable: say so loudly rather than go on. */
        if (syscall(SYS_setns, own_pidns_fd, CLONE_NEWPID) < 0) {
                int e = errno;
                if (pid > 0) {
                        (void) pidfd_kill(*ret_pidfd, SIGKILL);
                        (void) pidfd_reap(*ret_pidfd, NULL);
                        *ret_pidfd = safe_close(*ret_pidfd);
                }
                return -e;
        }
        return pid;
}
