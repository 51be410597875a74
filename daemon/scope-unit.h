/* SPDX-License-Identifier: MIT */
/* What a task's scope takes of its caller's unit: its slice and its limits; see scope-unit.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct sd_bus_message;

struct zd_scope_unit {
        char id[256];      /* the unit's name ("Id") */
        char slice[256];   /* its "Slice", "" when it has none (the root slice) */
        char cgroup[512];  /* its own cgroup ("ControlGroup") */
        char refused[64];  /* the first property set that a scope cannot carry, or "" */
        unsigned n_copied; /* properties copied */
        bool foreign;      /* the unit is another manager's than the scope's */
};

/* Reads the unit's properties (props: the reply to org.freedesktop.DBus.Properties.GetAll, an
 * "a{sv}" not yet entered), appends each limit and access rule of the copied table to out (inside
 * its open "a(sv)") and fills u. foreign: the unit is another manager's (the system one's, for a
 * scope of a user's manager), which refuses what that manager cannot enforce. 0 when the scope can carry all of them; -EPERM, with the reason
 * in why, when the unit sets one it cannot, or when caller_cgroup is not the unit's own cgroup (a
 * delegated subtree); -ESRCH when the manager did not say the unit's name or cgroup; another
 * negative errno when the message could not be read. out is then to be thrown away. */
int zd_scope_unit_copy(struct sd_bus_message *props, const char *caller_cgroup, bool foreign,
                       struct sd_bus_message *out, struct zd_scope_unit *u, char *why, size_t why_size);

/* The slice that holds every detached task of unit u, "PARENT-zygote-ESCAPED.slice", below the
 * slice that limits the unit (its Slice, or the unit itself when it is a slice; for another
 * manager's unit, the root of ours, which is below it): ESCAPED is the
 * unit's name with each character but [A-Za-z0-9:_.] as \xNN (a dash would nest). -ENAMETOOLONG
 * when the name would be longer than a unit's may be. */
int zd_scope_unit_slice_name(const struct zd_scope_unit *u, char *buf, size_t size);

/* For another manager's unit (a login session's scope, the system manager's): 0 when zygoted's
 * own cgroup, so its manager's tree, is below the slice that holds the unit, whose limits then
 * count its tasks (a user's manager, user@UID.service, is in user-UID.slice with the user's
 * sessions; the slice's cgroup is the unit's cgroup's parent, where the manager puts every unit);
 * else -EPERM, or the errno of reading /proc/self/cgroup, with the reason in why. */
int zd_scope_unit_foreign_below(const struct zd_scope_unit *u, char *why, size_t size);
