/* SPDX-License-Identifier: MIT */
/*
 * systemd integration, all through libsystemd, as primitives: socket activation (the passed fds
 * and their names), notifications (readiness, status, reloading, stopping, the watchdog), and
 * the fd store (put an fd under a name, take a name out). What goes into the store and under
 * which name is decided by task.c (task-fdname.c) and registry.c; what comes back is read by
 * adopt.c (docs/SYSTEMD.md).
 *
 * Every call here is a no-op without NOTIFY_SOCKET, so a zygoted started by hand behaves as
 * before. Notifications are best effort: a service manager that went away must not stop the
 * daemon from serving.
 *
 * systemd drops a stored fd as soon as it reports EPOLLHUP unless the fd was stored with
 * FDPOLL=0, and since Linux 6.9 a pidfd reports EPOLLHUP when its process is reaped: task pidfds
 * are stored without polling (a task that exits and is reaped while no zygoted runs must still
 * be found, with its status, by the next one) and removed explicitly when the task leaves the
 * table; reference pidfds keep the polling (a dead reference has nothing to hand over).
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "sd.h"
#include "util.h"

static void strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

bool zd_sd_enabled(void) {
        const char *e = getenv("NOTIFY_SOCKET");
        return e && *e;
}

/* ---- activation --------------------------------------------------------------------------- */

int zd_sd_listen(struct zd_sd_activation *a, int *listen_fd) {
        char **names = NULL;
        /* Also sets FD_CLOEXEC on every passed fd and unsets LISTEN_*: nothing we start later
         * inherits them. main.c calls this before it starts any process. */
        int n = sd_listen_fds_with_names(true, &names);
        if (n <= 0) {
                strv_free(names);
                return n;
        }
        a->fds = calloc((size_t) n, sizeof(int));
        if (!a->fds) {
                for (int i = 0; i < n; i++)
                        safe_close(SD_LISTEN_FDS_START + i);
                strv_free(names);
                return -ENOMEM;
        }
        a->names = names;
        a->n = (size_t) n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                if (*listen_fd < 0 && sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
                        /* The socket unit's: never unlinked or shut down by us (server.c). */
                        *listen_fd = fd;
                        a->fds[i] = -EBADF;
                        continue;
                }
                a->fds[i] = fd;
        }
        return n;
}

void zd_sd_activation_free(struct zd_sd_activation *a) {
        for (size_t i = 0; i < a->n; i++)
                safe_close(a->fds[i]);
        free(a->fds);
        strv_free(a->names);
        *a = (struct zd_sd_activation){};
}

/* ---- notify ------------------------------------------------------------------------------- */

void zd_sd_notifyf(const char *fmt, ...) {
        if (!zd_sd_enabled())
                return;
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        (void) sd_notify(false, msg);
}

static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents) {
        (void) sd_notify(false, "WATCHDOG=1");
}

void zd_sd_ready(struct ev_loop *loop, ev_timer *watchdog, const char *status) {
        if (!zd_sd_enabled())
                return;
        (void) sd_notify(false, "READY=1");
        zd_sd_notifyf("STATUS=%s", status);
        uint64_t usec = 0;
        /* false: keep WATCHDOG_USEC; nothing we exec inherits our environment anyway. */
        if (sd_watchdog_enabled(false, &usec) > 0 && usec > 0) {
                /* Half the interval, as sd_watchdog_enabled(3) advises: a ping that is late by a
                 * loaded machine's scheduling still arrives in time. */
                double every = (double) usec / 2e6;
                ev_timer_init(watchdog, on_watchdog, every, every);
                ev_timer_start(loop, watchdog);
                (void) sd_notify(false, "WATCHDOG=1");
        }
}

void zd_sd_stopping(struct ev_loop *loop, ev_timer *watchdog) {
        if (!zd_sd_enabled())
                return;
        ev_timer_stop(loop, watchdog);
        (void) sd_notify(false, "STOPPING=1");
}

void zd_sd_reloading(void) {
        /* MONOTONIC_USEC: systemd 253+ (Type=notify-reload) ties RELOADING=1 to the reload it
         * started; older managers ignore it. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        zd_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu",
                      (unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000ULL);
}

/* ---- the fd store ------------------------------------------------------------------------- */

int zd_sd_fdstore_add(const char *name, int fd, bool poll) {
        if (!zd_sd_enabled())
                return 0;
        char msg[64 + ZD_SD_FDNAME_MAX];
        snprintf(msg, sizeof(msg), "FDSTORE=1\n%sFDNAME=%s", poll ? "" : "FDPOLL=0\n", name);
        return sd_pid_notify_with_fds(0, false, msg, &fd, 1);
}

void zd_sd_fdstore_remove(const char *name) {
        zd_sd_notifyf("FDSTOREREMOVE=1\nFDNAME=%s", name);
}
