/* SPDX-License-Identifier: MIT */
/* The container's own cgroup (the init's), for Pause, Resume, Update, Stats and the OOM watch:
 * found, frozen and written by the container library's cgroup manager (container/cgroup-of.c), never
 * by the shim itself. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether the host has the cgroup v2 hierarchy alone. */
bool zs_cgroup_v2(void);

/* The directory of pid's cgroup (malloc'd), for reading counters: v2 its cgroup2 one; v1 the one
 * in the controller's hierarchy (ignored with v2). -EPERM when the init shares a cgroup with the
 * shim or sits at a root: it is not the container's. */
int zs_cgroup_dir(pid_t pid, const char *controller, char **ret);

/* The freezer (cgroup.freeze, or v1's freezer.state), as `zygote-runc pause` and `resume` write
 * it. -EPERM as above, -EOPNOTSUPP when no freezer is there. */
int zs_cgroup_freeze(pid_t init, bool frozen);

/* containerd's Update: an OCI LinuxResources object (JSON) applied by the manager's update, with
 * its refusals by name (*ret_error, malloc'd): the device rules must stay bundle's config.json's.
 * -EPERM as above. */
int zs_cgroup_update(pid_t init, const char *bundle, const char *json, size_t length, char **ret_error);

/* v1: an eventfd the kernel signals at each OOM in the memory cgroup dir (registered by the
 * manager on memory.oom_control). */
int zs_cgroup_oom_eventfd(const char *dir, int *ret_fd);
