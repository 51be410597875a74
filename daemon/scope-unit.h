/* SPDX-License-Identifier: MIT */
/* What a task's scope takes of its caller's unit: its slice and its limits; see scope-unit.c. */
#pragma once

#include <stddef.h>

struct sd_bus_message;

struct zd_scope_unit {
        char id[256];      /* the unit's name ("Id") */
        char slice[256];   /* its "Slice", "" when it has none (the root slice) */
        char cgroup[512];  /* its own cgroup ("ControlGroup") */
        char refused[64];  /* the first property set that a scope cannot carry, or "" */
        unsigned n_copied; /* properties copied */
};

/* Reads the unit's properties (props: the reply to org.freedesktop.DBus.Properties.GetAll, an
 * "a{sv}" not yet entered), appends each limit and access rule of the copied table to out (inside
 * its open "a(sv)") and fills u. 0 when the scope can carry all of them; -EPERM, with the reason
 * in why, when the unit sets one it cannot, or when caller_cgroup is not the unit's own cgroup (a
 * delegated subtree); -ESRCH when the manager did not say the unit's name or cgroup; another
 * negative errno when the message could not be read. out is then to be thrown away. */
int zd_scope_unit_copy(struct sd_bus_message *props, const char *caller_cgroup, struct sd_bus_message *out,
                       struct zd_scope_unit *u, char *why, size_t why_size);
