/* SPDX-License-Identifier: MIT */
/*
 * `zygote-ref --init`: the init of a profile's pid namespace (see pidns.h for what it is for
 * and the protocol on fd 3).
 *
 * It runs as pid 1 of a new pid namespace, in a new mount namespace, both made by zygoted's
 * clone. Set-up, in order: every mount becomes a slave of zygoted's (host mounts and unmounts
 * still reach the tasks; nothing done here goes back); a procfs of this namespace goes on /proc
 * with hidepid=invisible (a task sees its own user's processes only); /proc/sys is made
 * read-only again when it was (systemd's ProtectKernelTunables=); every other procfs mount, which
 * would show the host's processes, is detached. Then it reports to the daemon and reaps the
 * orphans the namespace's processes leave. When fd 3 closes (zygoted stopped or let it go), it
 * stays while any other process lives in its namespace (its death would kill them all) and
 * leaves after the last.
 *
 * Signals: as a namespace's init, it gets from its own namespace only the signals it handles,
 * and handles none (SIGCHLD is blocked and read through a signalfd): no task can kill it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pidfd-util.h"
#include "pidns.h"
#include "util.h"
#include "zygote-init.h"

#define PROC_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)
#define MAX_DETACH 64

static int ctl = ZR_PIDNS_CTL_FD;

_Noreturn static void report_fail(const char *what, int err) {
        struct zr_pidns_ready r = { .magic = ZR_PIDNS_MAGIC, .err = err > 0 ? err : EIO };

        snprintf(r.what, sizeof(r.what), "%s", what);
        /* zygoted logs it; our stderr is /dev/null (pidns.c) */
        (void) send(ctl, &r, sizeof(r), MSG_NOSIGNAL);
        _exit(1);
}

struct detach_list {
        char *points[MAX_DETACH];
        size_t n;
};

static int note_procfs(const char *mount_point, void *userdata) {
        struct detach_list *l = userdata;

        if (l->n == MAX_DETACH)
                return -E2BIG;
        l->points[l->n] = strdup(mount_point);
        if (!l->points[l->n])
                return -ENOMEM;
        l->n++;
        return 0;
}

/* Every procfs mount but the one on /proc (and what lies beneath /proc, which ours covers):
 * they show the host's pid namespace. Detached deepest first (mountinfo lists parents first). */
static int detach_other_procfs(void) {
        struct detach_list l = { .n = 0 };
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        int r = fd < 0 ? -errno : zc_mountinfo_procfs_elsewhere(fd, note_procfs, &l);

        while (l.n > 0) {
                l.n--;
                /* EINVAL: gone with one detached before it */
                if (r == 0 && umount2(l.points[l.n], MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
                        r = -errno;
                free(l.points[l.n]);
        }
        return r;
}

static void reap_all(void) {
        while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
                ;
}

static void drain_signalfd(int sfd) {
        struct signalfd_siginfo si;

        while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                ;
        reap_all();
}

/* Another process of this namespace, by pid, or 0 when we are the last. Our procfs shows
 * exactly this namespace; as root with CAP_SYS_PTRACE, hidepid hides nothing from us. */
static pid_t find_other(void) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        pid_t found = 0;

        if (!d)
                return -errno;
        while (!found && (de = readdir(d))) {
                char *end;
                long pid;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                pid = strtol(de->d_name, &end, 10);
                if (*end == 0 && pid > 1)
                        found = (pid_t) pid;
        }
        closedir(d);
        return found;
}

/* The daemon is gone: stay while anyone else lives here, one pidfd at a time. */
_Noreturn static void drain(int sfd) {
        for (;;) {
                pid_t pid;
                int fd;

                reap_all();
                pid = find_other();
                if (pid <= 0)
                        _exit(pid < 0 ? 1 : 0);
                fd = pidfd_open_pid(pid);
                if (fd < 0)
                        continue; /* gone meanwhile (ESRCH), or a zombie of ours just reaped */
                for (;;) {
                        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };

                        if (poll(p, 2, -1) < 0 && errno != EINTR)
                                _exit(1);
                        if (p[1].revents)
                                drain_signalfd(sfd);
                        if (p[0].revents)
                                break;
                }
                (void) close(fd);
        }
}

int zr_init_main(void) {
        struct zr_pidns_ready ready = { .magic = ZR_PIDNS_MAGIC };
        struct statvfs sv;
        bool sys_ro;
        sigset_t mask;
        int type = 0, sfd, r;
        socklen_t sl = sizeof(type);

        if (getsockopt(ctl, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 || type != SOCK_SEQPACKET) {
                fprintf(stderr, "zygote-ref --init: fd 3 is not the control socket\n");
                return 2;
        }
        if (getpid() != 1) {
                fprintf(stderr, "zygote-ref --init: not the init of a pid namespace\n");
                return 2;
        }
        (void) fcntl(ctl, F_SETFD, FD_CLOEXEC);
        /* Not dumpable: the tasks of its namespace that run as zygoted's user cannot ptrace it. */
        (void) prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);

        /* Slaves of zygoted's mounts: the mounts below stay here. */
        if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
                report_fail("MS_SLAVE on /", errno);
        sys_ro = statvfs("/proc/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY);
        if (mount("proc", "/proc", "proc", PROC_FLAGS, "hidepid=invisible") < 0)
                report_fail("mount proc on /proc", errno);
        if (sys_ro && (mount("/proc/sys", "/proc/sys", NULL, MS_BIND, NULL) < 0 ||
                       mount(NULL, "/proc/sys", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | PROC_FLAGS, NULL) < 0))
                report_fail("/proc/sys read-only", errno);
        r = detach_other_procfs();
        if (r < 0)
                report_fail("detaching other procfs mounts", -r);

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                report_fail("sigprocmask", errno);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                report_fail("signalfd", errno);
        if (chdir("/") < 0)
                report_fail("chdir /", errno);

        if (send(ctl, &ready, sizeof(ready), MSG_NOSIGNAL) != (ssize_t) sizeof(ready))
                _exit(1);

        for (;;) {
                struct pollfd p[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                char b;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(1);
                }
                if (p[1].revents)
                        drain_signalfd(sfd);
                if (p[0].revents) {
                        ssize_t n = recv(ctl, &b, 1, MSG_DONTWAIT);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                (void) close(ctl);
                                drain(sfd);
                        }
                }
        }
}
