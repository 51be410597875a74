/* SPDX-License-Identifier: MIT */
/* Update: an OCI LinuxResources object (JSON, as containerd sends it) written to the container's
 * cgroup: memory (limit, reservation, swap), CPU (shares, quota and period, cpus and mems) and
 * the pids limit, on cgroup v2 or v1, with runc's conversions. Other resources are refused. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* -EINVAL (with *ret_what naming the field, static) for JSON this cannot apply, -EPERM when the
 * container has no cgroup of its own. */
int zs_update(pid_t init, const char *json, size_t length, const char **ret_what);
