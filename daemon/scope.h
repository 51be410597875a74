/* SPDX-License-Identifier: MIT */
/* Transient scope units of the service manager that runs zygoted; see scope.c. */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <sys/types.h>

struct zd_daemon;
struct sd_bus;
struct zd_scope_req;

struct zd_scopes {
        struct sd_bus *bus; /* NULL until the first request, and again after the manager went away */
        bool unavailable;   /* no manager to ask: said once, never tried again */
        ev_io io;
        ev_timer timer;
        struct zd_scope_req *pending;
};

/* Called once per request, from the loop: r is 0 once pid is in the scope's cgroup, else a
 * negative errno with the manager's words (or ours) in error. key is the caller's, copied. */
typedef void (*zd_scope_fn)(struct zd_daemon *d, const char *key, pid_t pid, int r, const char *error);

/* Whether scopes can be asked for: zygoted runs under a service manager whose private socket is
 * there, and ZYGOTE_DISABLE_FEATURES does not name "scopes". */
bool zd_scope_available(struct zd_daemon *d);

/* Asks for the unit "zygote-KIND-PID.scope" holding pid (our child, so that its pid cannot be
 * reused meanwhile), in slice (NULL: the manager's default), described by description. done
 * (may be NULL) is called later, never from inside this call. -EHOSTDOWN without a manager. */
int zd_scope_start(struct zd_daemon *d, const char *kind, pid_t pid, const char *slice, const char *description,
                   const char *key, zd_scope_fn done);

/* The slice a caller's unit is in, from its cgroup path, for a scope beside it: the last ".slice"
 * component before the unit; for a user's zygoted only below its own manager's unit
 * ("user@UID.service"). NULL when there is none to use. Returns a pointer into buf. */
const char *zd_scope_slice_of(const char *cgroup_path, uid_t manager_uid, char *buf, size_t size);

void zd_scopes_free(struct zd_daemon *d);
