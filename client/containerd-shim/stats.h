/* SPDX-License-Identifier: MIT */
/* Stats: the container's cgroup counters as containerd's cgroups metrics (the message
 * io.containerd.cgroups.v1.Metrics or io.containerd.cgroups.v2.Metrics, after the host's
 * hierarchy): pids, CPU time and memory use with their limits. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The encoded metrics of init's cgroup and their type URL (static); *ret_data is malloc'd. */
int zs_stats(pid_t init, const char **ret_type_url, uint8_t **ret_data, size_t *ret_length);
