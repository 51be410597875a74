/* SPDX-License-Identifier: MIT */
/*
 * systemd integration, all through libsystemd: socket activation, readiness and status,
 * the watchdog, and surviving restarts through the fd store.
 *
 * The fd store: every task's pidfd goes to systemd with a name that carries what the next
 * zygoted needs to rebuild its table entry:
 *
 *     zt/<owner uid>/<run uid>/<tier>/<created, ms since the epoch>/<profile>/<task id>
 *
 * (an fd name is printable ASCII without ':', at most 255 characters; ids and profile names
 * cannot hold '/'). Reference processes are stored as ref/<pid>: a new daemon kills the old
 * ones (they would also leave by themselves, on EOF of their control socket). After a restart
 * systemd hands the fds back as LISTEN_FDS with these names, and zy_sd_adopt() takes them in.
 *
 * An adopted task is not our child (its parent died; the service manager reaped it), so its
 * exit status cannot come from waitid(): it comes from PIDFD_GET_INFO with PIDFD_INFO_EXIT
 * (Linux 6.15+), which keeps the status of a reaped process for as long as a pidfd to it lives.
 * On older kernels an adopted task's exit is reported without a status, and the log says so.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "daemon.h"
#include "util.h"

/* linux/pidfd.h of 6.15; Debian 12's headers predate it. */
struct zy_pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
#define ZY_PIDFD_INFO_EXIT (1ULL << 3)
#define ZY_PIDFD_GET_INFO _IOWR(0xFF, 11, struct zy_pidfd_info)

static void strv_free_n(char **v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; v[i] || i < n; i++)
                free(v[i]);
        free(v);
}

static bool notify_enabled(void) {
        const char *e = getenv("NOTIFY_SOCKET");
        return e && *e;
}

/* Exit status of a process that is not our child; -ENODATA if the kernel cannot tell (yet). */
int zy_pidfd_exit_status(int pidfd, int *ret_code, int *ret_signal) {
        struct zy_pidfd_info info = { .mask = ZY_PIDFD_INFO_EXIT };
        if (ioctl(pidfd, ZY_PIDFD_GET_INFO, &info) < 0)
                return errno == ESRCH ? -ENODATA : negative_errno();
        if (!(info.mask & ZY_PIDFD_INFO_EXIT))
                return -ENODATA;
        int st = info.exit_code;
        if (WIFEXITED(st)) {
                *ret_code = WEXITSTATUS(st);
                *ret_signal = 0;
        } else {
                *ret_signal = WTERMSIG(st);
                *ret_code = 128 + *ret_signal;
        }
        return 0;
}

/* ---- activation --------------------------------------------------------------------------- */

int zy_sd_listen(struct zy_daemon *d) {
        char **names = NULL;
        int n = sd_listen_fds_with_names(true, &names);
        if (n <= 0) {
                strv_free_n(names, 0);
                return n;
        }
        d->activation_fds = calloc((size_t) n, sizeof(int));
        d->activation_names = names;
        d->n_activation = (size_t) n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                const char *name = names && names[i] ? names[i] : "";
                if (d->listen_fd < 0 && sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
                        d->listen_fd = fd;
                        /* Ours from systemd's socket unit: never unlink or shut it down. Only a
                         * socket we stored ourselves (named "zygoted-listen") is ours to keep
                         * in the store. */
                        d->socket_activated = !streq(name, "zygoted-listen");
                        d->activation_fds[i] = -EBADF;
                        continue;
                }
                d->activation_fds[i] = fd;
        }
        return n;
}

/* ---- notify ------------------------------------------------------------------------------- */

static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents) {
        (void) sd_notify(false, "WATCHDOG=1");
}

void zy_sd_status(struct zy_daemon *d) {
        if (!notify_enabled())
                return;
        unsigned clone = 0, inherit = 0, load = 0;
        for (size_t i = 0; i < d->n_entries; i++) {
                enum zy_tier t = d->entries[i]->tier;
                clone += t == ZY_TIER_CLONE;
                inherit += t == ZY_TIER_INHERIT;
                load += t == ZY_TIER_LOAD;
        }
        (void) sd_notifyf(false, "STATUS=%zu profiles (clone %u, inherit %u, load %u), %u tasks, %lu spawned",
                          d->n_entries, clone, inherit, load, d->n_tasks, d->spawned);
}

void zy_sd_ready(struct zy_daemon *d) {
        if (!notify_enabled())
                return;
        /* Without a socket unit, keep the listening socket in the store: a restart then finds it
         * and callers never see the socket vanish. */
        if (!d->socket_activated && !d->listen_stored) {
                if (sd_pid_notify_with_fds(0, false, "FDSTORE=1\nFDNAME=zygoted-listen", &d->listen_fd, 1) > 0)
                        d->listen_stored = true;
        }
        (void) sd_notify(false, "READY=1");
        zy_sd_status(d);
        uint64_t usec = 0;
        if (sd_watchdog_enabled(false, &usec) > 0 && usec > 0) {
                double every = (double) usec / 2e6;
                ev_timer_init(&d->watchdog, on_watchdog, every, every);
                ev_timer_start(d->loop, &d->watchdog);
                (void) sd_notify(false, "WATCHDOG=1");
        }
}

void zy_sd_stopping(struct zy_daemon *d) {
        if (!notify_enabled())
                return;
        ev_timer_stop(d->loop, &d->watchdog);
        (void) sd_notify(false, "STOPPING=1");
}

void zy_sd_reloading(struct zy_daemon *d, bool done) {
        if (!notify_enabled())
                return;
        if (!done) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%llu",
                                  (unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000ULL);
        } else {
                (void) sd_notify(false, "READY=1");
                zy_sd_status(d);
        }
}

/* ---- the fd store ------------------------------------------------------------------------- */

static int task_fdname(const struct zy_task *t, char *buf, size_t size) {
        int n = snprintf(buf, size, "zt/%u/%u/%s/%llu/%s/%s", (unsigned) t->uid, (unsigned) t->run_uid,
                         zy_tier_to_string(t->tier), (unsigned long long) (t->created_at * 1000.0),
                         t->profile ? t->profile : "", t->id);
        if (n < 0 || (size_t) n >= size || n > 255)
                return -ENAMETOOLONG;
        for (const char *p = buf; *p; p++)
                if (*p == ':' || *p < ' ' || *p > '~')
                        return -EINVAL;
        return 0;
}

void zy_sd_store_task(struct zy_task *t) {
        if (!notify_enabled() || t->pidfd < 0)
                return;
        char name[300], msg[400];
        if (task_fdname(t, name, sizeof(name)) < 0)
                return;
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        if (sd_pid_notify_with_fds(0, false, msg, &t->pidfd, 1) > 0)
                t->stored = true;
}

void zy_sd_forget_task(struct zy_task *t) {
        if (!t->stored || !notify_enabled())
                return;
        char name[300], msg[400];
        if (task_fdname(t, name, sizeof(name)) < 0)
                return;
        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        (void) sd_notify(false, msg);
        t->stored = false;
}

void zy_sd_store_reference(pid_t pid, int pidfd) {
        if (!notify_enabled() || pidfd < 0)
                return;
        char msg[64];
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=ref/%d", (int) pid);
        (void) sd_pid_notify_with_fds(0, false, msg, &pidfd, 1);
}

void zy_sd_forget_reference(pid_t pid) {
        if (!notify_enabled())
                return;
        char msg[64];
        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=ref/%d", (int) pid);
        (void) sd_notify(false, msg);
}

static void argv_from_proc(struct zy_task *t) {
        char path[64], buf[4096];
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) t->pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        t->argv = json_object_new_array();
        if (n <= 0)
                return;
        buf[n] = 0;
        for (char *p = buf; p < buf + n; p += strlen(p) + 1)
                json_object_array_add(t->argv, json_object_new_string(p));
        if (json_object_array_length(t->argv) > 0)
                t->exe = strdup(json_object_get_string(json_object_array_get_idx(t->argv, 0)));
}

/* Takes in the tasks and references a previous zygoted left in the fd store. */
int zy_sd_adopt(struct zy_daemon *d) {
        unsigned adopted = 0, refs = 0;
        for (size_t i = 0; i < d->n_activation; i++) {
                int fd = d->activation_fds[i];
                const char *name = d->activation_names ? d->activation_names[i] : NULL;
                if (fd < 0)
                        continue;
                d->activation_fds[i] = -EBADF;
                if (!name) {
                        safe_close(fd);
                        continue;
                }
                if (strncmp(name, "ref/", 4) == 0) {
                        /* A reference of the previous daemon: it has nothing left to serve. */
                        (void) syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
                        char msg[300];
                        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
                        if (notify_enabled())
                                (void) sd_notify(false, msg);
                        safe_close(fd);
                        refs++;
                        continue;
                }
                unsigned owner, run_uid;
                unsigned long long created_ms;
                char tier[16], profile[256], id[256];
                if (strncmp(name, "zt/", 3) != 0 ||
                    sscanf(name, "zt/%u/%u/%15[^/]/%llu/%255[^/]/%255s", &owner, &run_uid, tier, &created_ms,
                           profile, id) != 6) {
                        zy_log(LOG_WARNING, "fd store: ignoring fd named '%s'", name);
                        safe_close(fd);
                        continue;
                }
                struct zy_task *t;
                int r = zy_task_new(d, id, owner, &t);
                if (r < 0) {
                        zy_log(LOG_WARNING, "fd store: cannot adopt task %s: %s", id, strerror(-r));
                        safe_close(fd);
                        continue;
                }
                t->run_uid = run_uid;
                t->profile = strdup(profile);
                if (zy_tier_from_string(tier, &t->tier) < 0)
                        t->tier = ZY_TIER_LOAD;
                t->created_at = (double) created_ms / 1000.0;
                t->started_at = t->created_at;
                t->adopted = true;
                t->stored = true;
                /* The pid, from the kernel rather than the name. */
                char fdinfo[64], line[256];
                snprintf(fdinfo, sizeof(fdinfo), "/proc/self/fdinfo/%d", fd);
                FILE *f = fopen(fdinfo, "re");
                while (f && fgets(line, sizeof(line), f))
                        if (sscanf(line, "Pid: %d", &t->pid) == 1)
                                break;
                if (f)
                        fclose(f);
                if (t->pid > 0)
                        argv_from_proc(t);
                else
                        t->argv = json_object_new_array();
                zy_task_adopt(t, fd);
                adopted++;
        }
        if (adopted || refs)
                zy_log(LOG_INFO, "adopted %u tasks from the fd store (%u old reference processes ended)", adopted, refs);
        return (int) adopted;
}

void zy_sd_free(struct zy_daemon *d) {
        for (size_t i = 0; i < d->n_activation; i++)
                safe_close(d->activation_fds[i]);
        free(d->activation_fds);
        strv_free_n(d->activation_names, d->n_activation);
        d->activation_fds = NULL;
        d->activation_names = NULL;
        d->n_activation = 0;
}
