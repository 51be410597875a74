/* SPDX-License-Identifier: MIT */
/* The container's own cgroup (the init's), for Pause and Resume (its freezer: cgroup.freeze on a
 * cgroup v2 host, the v1 freezer controller's freezer.state on a v1 or hybrid one) and Stats. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Whether the host has the cgroup v2 hierarchy alone. */
bool zs_cgroup_v2(void);

/* The directory of pid's cgroup: v2 /sys/fs/cgroup/PATH; v1 /sys/fs/cgroup/CONTROLLER/PATH in
 * the controller's hierarchy (ignored with v2). -EPERM when that cgroup is the root or the shim's
 * own: it is not the container's. */
int zs_cgroup_dir(pid_t pid, const char *controller, char **ret);

/* -EPERM when the init's cgroup is the root or the shim's own (it would freeze more than the
 * container), -EOPNOTSUPP when no freezer is there. */
int zs_cgroup_freeze(pid_t init, bool frozen);
