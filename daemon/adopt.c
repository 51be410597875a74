/* SPDX-License-Identifier: MIT */
/*
 * Start-up under systemd: the fds an earlier zygoted left in the fd store come back with
 * LISTEN_FDS. Task pidfds become table entries again (their names say owner, ids, pid, tier,
 * creation time, profile and id: task-fdname.c); argv and exe are read from /proc while the
 * task lives (a task that ended before the restart is adopted with an empty argv). Reference
 * processes are stored as ref/<pid>: the ones still alive are ended (they would also leave by
 * themselves, on EOF of their control socket).
 *
 * An adopted task is not our child (its parent died; the service manager, or a subreaper, reaps
 * it), so its exit status cannot come from waitid(): it comes from PIDFD_GET_INFO with
 * PIDFD_INFO_EXIT (Linux 6.15+), which the kernel fills in when the process is reaped and keeps
 * for as long as a pidfd to it lives. Between the exit and the reaping the status does not exist
 * yet; task.c waits for the reaping on the same pidfd (EPOLLHUP), without polling.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <syslog.h>

#include "adopt.h"
#include "daemon.h"
#include "log.h"
#include "pidfd-util.h"
#include "sd.h"
#include "task-exe.h"
#include "task-fdname.h"
#include "task.h"
#include "util.h"

/* The pid a pidfd refers to, from its fdinfo: > 0 alive (or a zombie), -1 reaped, 0 in a pid
 * namespace we cannot see. -ENOTTY when fd is not a pidfd at all. */
static int pidfd_pid(int fd, int *ret) {
        char path[64], line[256];
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        FILE *f = fopen(path, "re");
        if (!f)
                return negative_errno();
        int r = -ENOTTY;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Pid: %d", ret) == 1) {
                        r = 0;
                        break;
                }
        fclose(f);
        return r;
}

static bool pidfd_exited(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        return poll(&p, 1, 0) != 0;
}

/* argv and exe of a live adopted task, from /proc. The pid is only trusted while the pidfd says
 * the process has not exited: checked after the read, so the pid cannot have been reused by
 * another process during it. */
static void argv_from_proc(struct zd_task *t, int pidfd) {
        char path[64], buf[8192];
        t->argv = json_object_new_array();
        if (t->pidref.pid <= 0)
                return;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) t->pidref.pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0 || pidfd_exited(pidfd))
                return;
        buf[n] = 0;
        for (char *p = buf; p < buf + n; p += strlen(p) + 1)
                json_object_array_add(t->argv, json_object_new_string(p));
        t->argv_bytes = zd_task_argv_bytes(t->argv);
        t->exe = zd_task_exe_path(t->pidref.pid, pidfd);
        if (!t->exe && json_object_array_length(t->argv) > 0)
                t->exe = strdup(json_object_get_string(json_object_array_get_idx(t->argv, 0)));
}

/* One task from the store; takes fd. */
static int adopt_task(struct zd_daemon *d, const char *name, int fd) {
        _cleanup_close_ int pidfd = fd;
        struct zd_stored_task s;
        int pid, r;

        r = zd_task_fdname_parse(name, &s);
        if (r < 0)
                return r;
        r = pidfd_pid(pidfd, &pid);
        if (r < 0 || (pid > 0 && pid != s.pid)) {
                zd_stored_task_done(&s);
                return r < 0 ? r : -ESTALE;
        }
        _cleanup_free_ char *fd_name = strdup(name);
        struct zd_task *t;
        r = fd_name ? zd_task_new(d, s.id, s.owner, &t) : -ENOMEM;
        if (r < 0) {
                zd_stored_task_done(&s);
                return r;
        }
        t->run_uid = s.run_uid;
        t->pidref.pid = s.pid;
        t->tier = s.tier;
        t->profile = TAKE_PTR(s.profile);
        t->created_at = (double) s.created_ms / 1000.0;
        t->started_at = t->created_at;
        t->adopted = true;
        t->container = s.container;
        t->fd_name = TAKE_PTR(fd_name); /* still in the store: systemd keeps its own copy */
        zd_stored_task_done(&s);
        argv_from_proc(t, pidfd);
        zd_task_adopt(t, TAKE_FD(pidfd));
        return 0;
}

int zd_adopt(struct zd_daemon *d, struct zd_sd_activation *a) {
        unsigned adopted = 0, refs = 0;
        for (size_t i = 0; i < a->n; i++) {
                int fd = a->fds[i];
                const char *name = a->names ? a->names[i] : NULL;
                if (fd < 0)
                        continue;
                a->fds[i] = -EBADF;
                if (name && strncmp(name, "ref/", 4) == 0) {
                        int pid;
                        /* A reference of the previous daemon: it has nothing left to serve. Only
                         * through a pidfd, so that a recycled pid is never hit. */
                        if (pidfd_pid(fd, &pid) >= 0)
                                (void) pidfd_kill(fd, SIGKILL);
                        zd_sd_fdstore_remove(name);
                        safe_close(fd);
                        refs++;
                        continue;
                }
                int r = name ? adopt_task(d, name, fd) : (safe_close(fd), -EINVAL);
                if (r >= 0) {
                        adopted++;
                        continue;
                }
                /* Not ours to keep, or not understood: out of the store too, or it would come
                 * back at every restart. */
                zd_log(LOG_WARNING, "fd store: not adopting the fd named '%s': %s", name ? name : "?",
                       r == -ENOTTY   ? "not a pidfd"
                       : r == -ESTALE ? "its pid is not the one recorded"
                                      : strerror(-r));
                if (name && r != -EEXIST) /* a duplicate name: the first one stays */
                        zd_sd_fdstore_remove(name);
        }
        if (adopted || refs)
                zd_log(LOG_INFO,
                       "fd store: adopted %u tasks started by an earlier zygoted; ended %u of its "
                       "reference processes",
                       adopted, refs);
        return (int) adopted;
}
