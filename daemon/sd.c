/* SPDX-License-Identifier: MIT */
/*
 * systemd integration, all through libsystemd: socket activation, readiness and status, the
 * watchdog, and surviving restarts through the fd store (docs/SYSTEMD.md).
 *
 * Every hook here is a no-op without NOTIFY_SOCKET, so a zygoted started by hand behaves as
 * before. Notifications are best effort: a service manager that went away must not stop the
 * daemon from serving.
 *
 * The fd store. Each task's pidfd goes to the service manager under a name that carries what
 * the next zygoted needs to rebuild the task's table entry:
 *
 *     zt/<owner uid>/<run uid>/<pid>/<tier>/<created, ms since the epoch>/<profile>/<task id>
 *
 * An fd name is ASCII without control characters and ':', at most 255 bytes (systemd's
 * fdname_is_valid()); profile and id are %-encoded so that any profile file name fits ('/', ':',
 * '%' and everything outside 0x21..0x7e become %XX). argv and exe are not in the name: the next
 * daemon reads them from /proc while the task lives (a task that ended before the restart is
 * adopted with an empty argv). Reference processes are stored as ref/<pid>: the next daemon
 * ends the ones still alive (they would also leave by themselves, on EOF of their control
 * socket).
 *
 * systemd drops a stored fd as soon as it reports EPOLLHUP unless the fd was stored with
 * FDPOLL=0, and since Linux 6.9 a pidfd reports EPOLLHUP when its process is reaped. Task pidfds
 * are therefore stored with FDPOLL=0 (a task that exits and is reaped while no zygoted runs
 * must still be found, with its status, by the next one) and are removed explicitly
 * (FDSTOREREMOVE) when the task leaves the table. Reference pidfds keep the polling: a dead
 * reference has nothing to hand over.
 *
 * An adopted task is not our child (its parent died; the service manager, or a subreaper, reaps
 * it), so its exit status cannot come from waitid(): it comes from PIDFD_GET_INFO with
 * PIDFD_INFO_EXIT (Linux 6.15+), which the kernel fills in when the process is reaped and keeps
 * for as long as a pidfd to it lives. Between the exit and the reaping the status does not exist
 * yet; task.c waits for the reaping on the same pidfd (EPOLLHUP), without polling.
 */
#include <fcntl.h>
#include <poll.h>
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

/* linux/pidfd.h of 6.15 (PIDFD_INFO_SIZE_VER0); Debian 12's headers predate it. A newer kernel
 * accepts this smaller size: the ioctl copies min(our size, its size). */
struct zy_pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
_Static_assert(sizeof(struct zy_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#define ZY_PIDFD_INFO_EXIT (1ULL << 3)
#define ZY_PIDFD_GET_INFO _IOWR(0xFF, 11, struct zy_pidfd_info)

#define FDNAME_MAX 255 /* systemd's limit for FDNAME= */

static void strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

static bool notify_enabled(void) {
        const char *e = getenv("NOTIFY_SOCKET");
        return e && *e;
}

int zy_pidfd_exit_status(int pidfd, int *ret_code, int *ret_signal) {
        struct zy_pidfd_info info = { .mask = ZY_PIDFD_INFO_EXIT };
        /* ENOTTY/EINVAL: no PIDFD_GET_INFO (before 6.13). ESRCH: reaped, and a kernel before 6.15
         * kept no status for us. Both are final: the caller reports the exit without a status. */
        if (ioctl(pidfd, ZY_PIDFD_GET_INFO, &info) < 0)
                return negative_errno();
        if (!(info.mask & ZY_PIDFD_INFO_EXIT))
                return -ENODATA; /* alive, or a zombie nobody has reaped yet */
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
        /* Also sets FD_CLOEXEC on every passed fd and unsets LISTEN_*: nothing we start later
         * inherits them. main.c calls this before it starts any process. */
        int n = sd_listen_fds_with_names(true, &names);
        if (n <= 0) {
                strv_free(names);
                return n;
        }
        d->activation_fds = calloc((size_t) n, sizeof(int));
        if (!d->activation_fds) {
                for (int i = 0; i < n; i++)
                        safe_close(SD_LISTEN_FDS_START + i);
                strv_free(names);
                return -ENOMEM;
        }
        d->activation_names = names;
        d->n_activation = (size_t) n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                if (d->listen_fd < 0 && sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
                        /* The socket unit's: never unlinked or shut down by us (server.c). */
                        d->listen_fd = fd;
                        d->socket_activated = true;
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
        (void) sd_notify(false, "READY=1");
        zy_sd_status(d);
        uint64_t usec = 0;
        /* false: keep WATCHDOG_USEC; nothing we exec inherits our environment anyway. */
        if (sd_watchdog_enabled(false, &usec) > 0 && usec > 0) {
                /* Half the interval, as sd_watchdog_enabled(3) advises: a ping that is late by a
                 * loaded machine's scheduling still arrives in time. */
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
                /* MONOTONIC_USEC: systemd 253+ (Type=notify-reload) ties RELOADING=1 to the
                 * reload it started; older managers ignore it. */
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%llu",
                                  (unsigned long long) ts.tv_sec * 1000000ULL +
                                          (unsigned long long) ts.tv_nsec / 1000ULL);
        } else {
                (void) sd_notify(false, "READY=1");
                zy_sd_status(d);
        }
}

/* ---- fd names ----------------------------------------------------------------------------- */

static bool fdname_plain(unsigned char c) {
        return c > ' ' && c <= '~' && c != '%' && c != '/' && c != ':';
}

/* Appends s, %-encoded, at *p (before end); -ENAMETOOLONG when it does not fit. */
static int put_encoded(char **p, const char *end, const char *s) {
        static const char hex[] = "0123456789ABCDEF";
        for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
                size_t need = fdname_plain(*c) ? 1 : 3;
                if ((size_t) (end - *p) <= need)
                        return -ENAMETOOLONG;
                if (need == 1)
                        *(*p)++ = (char) *c;
                else {
                        *(*p)++ = '%';
                        *(*p)++ = hex[*c >> 4];
                        *(*p)++ = hex[*c & 15];
                }
        }
        **p = 0;
        return 0;
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Decodes the field [s, s + n) into a new string; -EINVAL for a bad escape or an empty field. */
static int get_decoded(const char *s, size_t n, char **ret) {
        if (n == 0)
                return -EINVAL;
        char *out = malloc(n + 1), *o = out;
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (s[i] != '%') {
                        *o++ = s[i];
                        continue;
                }
                int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                        free(out);
                        return -EINVAL;
                }
                *o++ = (char) (hi << 4 | lo);
                i += 2;
        }
        *o = 0;
        *ret = out;
        return 0;
}

/* The name is computed once, when the fd is stored, and kept in the task: FDSTOREREMOVE must
 * repeat it exactly. */
static int task_fdname(const struct zy_task *t, char **ret) {
        char buf[FDNAME_MAX + 1];
        /* Rounded, not truncated: an adopted task's created_at is ms / 1000.0, which must give
         * back the same ms. */
        int n = snprintf(buf, sizeof(buf), "zt/%u/%u/%d/%s/%llu/", (unsigned) t->uid, (unsigned) t->run_uid,
                         (int) t->pid, zy_tier_to_string(t->tier),
                         (unsigned long long) (t->created_at * 1000.0 + 0.5));
        if (n < 0 || (size_t) n >= sizeof(buf))
                return -ENAMETOOLONG;
        char *p = buf + n, *end = buf + sizeof(buf);
        int r = put_encoded(&p, end, t->profile ? t->profile : "");
        if (r < 0)
                return r;
        if (end - p < 2)
                return -ENAMETOOLONG;
        *p++ = '/';
        r = put_encoded(&p, end, t->id);
        if (r < 0)
                return r;
        char *s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

struct stored_task {
        unsigned owner, run_uid;
        int pid;
        enum zy_tier tier;
        unsigned long long created_ms;
        char *profile, *id;
};

static void stored_task_done(struct stored_task *s) {
        free(s->profile);
        free(s->id);
}

static int parse_uint(const char *s, size_t n, unsigned long long max, unsigned long long *ret) {
        if (n == 0 || n > 20)
                return -EINVAL;
        unsigned long long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (max - (unsigned long long) (s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (unsigned long long) (s[i] - '0');
        }
        *ret = v;
        return 0;
}

/* Parses a task's fd name (see the top of this file); *ret is untouched on failure. */
static int parse_task_fdname(const char *name, struct stored_task *ret) {
        const char *f[8];
        size_t len[8], k = 0;
        if (strncmp(name, "zt/", 3) != 0)
                return -EINVAL;
        for (const char *p = name + 3;; k++) {
                if (k == ELEMENTSOF(f))
                        return -EINVAL; /* too many fields */
                const char *slash = strchr(p, '/');
                f[k] = p;
                len[k] = slash ? (size_t) (slash - p) : strlen(p);
                if (!slash) {
                        k++;
                        break;
                }
                p = slash + 1;
        }
        if (k != 7)
                return -EINVAL;
        unsigned long long owner, run_uid, pid, created;
        char tier[16];
        if (parse_uint(f[0], len[0], UINT32_MAX, &owner) < 0 || parse_uint(f[1], len[1], UINT32_MAX, &run_uid) < 0 ||
            parse_uint(f[2], len[2], INT32_MAX, &pid) < 0 || parse_uint(f[4], len[4], UINT64_MAX, &created) < 0 ||
            len[3] >= sizeof(tier))
                return -EINVAL;
        memcpy(tier, f[3], len[3]);
        tier[len[3]] = 0;
        struct stored_task s = { .owner = (unsigned) owner, .run_uid = (unsigned) run_uid, .pid = (int) pid,
                                 .created_ms = created };
        if (zy_tier_from_string(tier, &s.tier) < 0 || s.tier == ZY_TIER_AUTO)
                return -EINVAL;
        int r = get_decoded(f[5], len[5], &s.profile);
        if (r < 0)
                return r;
        r = get_decoded(f[6], len[6], &s.id);
        if (r < 0) {
                stored_task_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

/* ---- the fd store ------------------------------------------------------------------------- */

void zy_sd_store_task(struct zy_task *t) {
        if (!notify_enabled() || t->pidfd < 0 || t->fd_name)
                return;
        _cleanup_free_ char *name = NULL;
        int r = task_fdname(t, &name);
        if (r < 0) {
                zy_log(LOG_WARNING, "task %s: not put in the fd store (%s): a restart of zygoted will not adopt it",
                       t->id, strerror(-r));
                return;
        }
        char msg[64 + FDNAME_MAX];
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDPOLL=0\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, false, msg, &t->pidfd, 1);
        if (r <= 0) {
                zy_log(LOG_WARNING, "task %s: sending its pidfd to the fd store failed (%s): a restart of zygoted "
                       "will not adopt it", t->id, r < 0 ? strerror(-r) : "no NOTIFY_SOCKET");
                return;
        }
        t->fd_name = TAKE_PTR(name);
}

void zy_sd_forget_task(struct zy_task *t) {
        if (!t->fd_name)
                return;
        /* Shutting down: the tasks go on, and their pidfds must stay in the store for the next
         * zygoted. Only our view of them is being freed. */
        if (t->d->stopping)
                return;
        if (notify_enabled()) {
                char msg[64 + FDNAME_MAX];
                snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", t->fd_name);
                (void) sd_notify(false, msg);
        }
        free(t->fd_name);
        t->fd_name = NULL;
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

/* ---- adoption ----------------------------------------------------------------------------- */

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
static void argv_from_proc(struct zy_task *t, int pidfd) {
        char path[64], buf[8192];
        t->argv = json_object_new_array();
        if (t->pid <= 0)
                return;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) t->pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0 || pidfd_exited(pidfd))
                return;
        buf[n] = 0;
        for (char *p = buf; p < buf + n; p += strlen(p) + 1)
                json_object_array_add(t->argv, json_object_new_string(p));
        if (json_object_array_length(t->argv) > 0)
                t->exe = strdup(json_object_get_string(json_object_array_get_idx(t->argv, 0)));
}

static void remove_from_store(const char *name) {
        if (!notify_enabled())
                return;
        char msg[64 + FDNAME_MAX];
        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        (void) sd_notify(false, msg);
}

/* One task from the store; takes fd. */
static int adopt_task(struct zy_daemon *d, const char *name, int fd) {
        _cleanup_close_ int pidfd = fd;
        struct stored_task s;
        int pid, r;

        r = parse_task_fdname(name, &s);
        if (r < 0)
                return r;
        r = pidfd_pid(pidfd, &pid);
        if (r < 0 || (pid > 0 && pid != s.pid)) {
                stored_task_done(&s);
                return r < 0 ? r : -ESTALE;
        }
        _cleanup_free_ char *fd_name = strdup(name);
        struct zy_task *t;
        r = fd_name ? zy_task_new(d, s.id, s.owner, &t) : -ENOMEM;
        if (r < 0) {
                stored_task_done(&s);
                return r;
        }
        t->run_uid = s.run_uid;
        t->pid = s.pid;
        t->tier = s.tier;
        t->profile = TAKE_PTR(s.profile);
        t->created_at = (double) s.created_ms / 1000.0;
        t->started_at = t->created_at;
        t->adopted = true;
        t->fd_name = TAKE_PTR(fd_name); /* still in the store: systemd keeps its own copy */
        stored_task_done(&s);
        argv_from_proc(t, pidfd);
        zy_task_adopt(t, TAKE_FD(pidfd));
        return 0;
}

int zy_sd_adopt(struct zy_daemon *d) {
        unsigned adopted = 0, refs = 0;
        for (size_t i = 0; i < d->n_activation; i++) {
                int fd = d->activation_fds[i];
                const char *name = d->activation_names ? d->activation_names[i] : NULL;
                if (fd < 0)
                        continue;
                d->activation_fds[i] = -EBADF;
                if (name && strncmp(name, "ref/", 4) == 0) {
                        int pid;
                        /* A reference of the previous daemon: it has nothing left to serve. Only
                         * through a pidfd, so that a recycled pid is never hit. */
                        if (pidfd_pid(fd, &pid) >= 0)
                                (void) syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
                        remove_from_store(name);
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
                zy_log(LOG_WARNING, "fd store: not adopting the fd named '%s': %s", name ? name : "?",
                       r == -ENOTTY ? "not a pidfd" : r == -ESTALE ? "its pid is not the one recorded" :
                       strerror(-r));
                if (name && r != -EEXIST) /* a duplicate name: the first one stays */
                        remove_from_store(name);
        }
        if (adopted || refs)
                zy_log(LOG_INFO, "fd store: adopted %u tasks started by an earlier zygoted; ended %u of its "
                       "reference processes", adopted, refs);
        return (int) adopted;
}

void zy_sd_free(struct zy_daemon *d) {
        for (size_t i = 0; i < d->n_activation; i++)
                safe_close(d->activation_fds[i]);
        free(d->activation_fds);
        strv_free(d->activation_names);
        d->activation_fds = NULL;
        d->activation_names = NULL;
        d->n_activation = 0;
}
