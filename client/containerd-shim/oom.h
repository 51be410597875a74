/* SPDX-License-Identifier: MIT */
/* /tasks/oom: a thread per container that watches its memory cgroup for the kernel's OOM kills
 * (memory.events' oom_kill count on cgroup v2, memory.oom_control's eventfd on v1) and publishes
 * a TaskOOM event for each. */
#pragma once

#include <sys/types.h>

struct zs_oom;

/* Starts watching init's memory cgroup. -EPERM when it has none of its own. */
int zs_oom_watch(pid_t init, const char *container_id, struct zs_oom **ret);

/* Stops the watch and frees it; accepts NULL. Returns NULL. */
struct zs_oom *zs_oom_stop(struct zs_oom *o);
