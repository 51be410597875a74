/* SPDX-License-Identifier: MIT */
/* systemd primitives: activation, notifications, the fd store; see sd.c. */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#define ZD_SD_FDNAME_MAX 255 /* systemd's limit for FDNAME= */

/* Whether a service manager listens (NOTIFY_SOCKET); every call below is a no-op without. */
bool zd_sd_enabled(void);

/* The fds systemd passed (LISTEN_FDS) other than the listening socket, with their names. */
struct zd_sd_activation {
        int *fds;     /* -EBADF once taken */
        char **names; /* may be NULL */
        size_t n;
};

/* > 0: fds were passed; the first listening Unix stream socket goes to *listen_fd (if it is
 * still < 0), the others to a. */
int zd_sd_listen(struct zd_sd_activation *a, int *listen_fd);
void zd_sd_activation_free(struct zd_sd_activation *a);

void zd_sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* READY=1 with a status line, and the watchdog's pings on this timer when the unit asks for
 * them. */
void zd_sd_ready(struct ev_loop *loop, ev_timer *watchdog, const char *status);
void zd_sd_stopping(struct ev_loop *loop, ev_timer *watchdog);
void zd_sd_reloading(void);

/* Puts fd in the fd store under name; poll=false keeps it there after its EPOLLHUP. Returns > 0
 * when sent, 0 without a service manager, or a negative errno. */
int zd_sd_fdstore_add(const char *name, int fd, bool poll);
void zd_sd_fdstore_remove(const char *name);
