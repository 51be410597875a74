/* SPDX-License-Identifier: MIT */
/* Pause and Resume: the freezer of the container's own cgroup (the init's): cgroup.freeze on a
 * cgroup v2 host, the v1 freezer controller's freezer.state on a v1 or hybrid one. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* -EPERM when the init's cgroup is the root or the shim's own (it would freeze more than the
 * container), -EOPNOTSUPP when no freezer is there. */
int zs_cgroup_freeze(pid_t init, bool frozen);
