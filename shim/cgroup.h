/* SPDX-License-Identifier: MIT */
/* Pause and Resume: the cgroup v2 freezer of the container's own cgroup (the init's). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* -EPERM when the init's cgroup is the root or the shim's own (it would freeze more than the
 * container), -EOPNOTSUPP without cgroup v2. */
int zs_cgroup_freeze(pid_t init, bool frozen);
