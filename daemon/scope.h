/* SPDX-License-Identifier: MIT */
/* Transient scope units of the service manager that runs zygoted; see scope.c. */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <sys/types.h>

struct zd_daemon;
struct sd_bus;
struct zd_scope_req;

/* One connection, driven by the loop. */
struct zd_scope_bus {
        struct sd_bus *bus; /* NULL until asked for, and again after it went away */
        struct zd_daemon *d;
        ev_io io;
        ev_timer timer;
};

struct zd_scopes {
        struct zd_scope_bus manager; /* the service manager's private socket */
        struct zd_scope_bus system;  /* the system bus: the system manager's units, read only */
        bool unavailable;            /* no manager to ask: said once, never tried again */
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

/* The same for a task, whose scope takes after its caller's unit: the unit that holds
 * caller_cgroup, as the manager says (GetUnitByControlGroup), gives the scope its slice (one of
 * the unit's detached tasks, below the unit's slice) and every limit and access rule of the
 * copied table (scope-unit.c); the request fails, with the reason, when the unit sets one a
 * scope cannot carry or the caller is in a subtree delegated to its unit. When the manager has
 * no unit for the cgroup: strict, the system manager is asked (a user's manager has none for a
 * login session's scope) and its unit's limits are carried into the manager's tree, or the
 * request fails; not strict, the scope is made as zd_scope_start() would, in the default slice. */
int zd_scope_start_for(struct zd_daemon *d, const char *kind, pid_t pid, const char *caller_cgroup, bool strict,
                       const char *description, const char *key, zd_scope_fn done);

void zd_scopes_free(struct zd_daemon *d);
