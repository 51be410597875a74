/* SPDX-License-Identifier: MIT */
/* The container's root filesystem, from the mounts of CreateTaskRequest.rootfs (a snapshotter's
 * overlay or bind mount), mounted on BUNDLE/rootfs before the container is created, as runc's shim
 * does; unmounted at Delete. */
#pragma once

#include <stddef.h>

#include "github.com/containerd/containerd/api/types/mount.pb-c.h"

int zs_rootfs_mount(const char *bundle, Containerd__Types__Mount *const *mounts, size_t n);

/* Unmounts whatever is mounted on BUNDLE/rootfs; 0 when nothing was. */
int zs_rootfs_unmount(const char *bundle);
