/* SPDX-License-Identifier: MIT */
/* The container's root filesystem, from the mounts of CreateTaskRequest.rootfs (a snapshotter's
 * overlay or bind mount), mounted on BUNDLE/rootfs before the container is created, as runc's shim
 * does; unmounted at Delete. */
#pragma once

#include <stddef.h>

#include "github.com/containerd/containerd/api/types/mount.pb-c.h"

/* Mounts each of mounts, in order, on BUNDLE/rootfs itself (made when missing), never through a
 * symlink: -EINVAL or -ELOOP for a bundle path as zs_rootfs_unmount() refuses it, -ENOTDIR when
 * its rootfs is a symlink or no directory (nothing is mounted), or another negative errno (what
 * was mounted is unmounted again). */
int zs_rootfs_mount(const char *bundle, Containerd__Types__Mount *const *mounts, size_t n);

/* Unmounts whatever is mounted on BUNDLE/rootfs itself (mountinfo names it as the mount point),
 * never through a symlink: 0 when nothing was (or the bundle is gone); -EINVAL or -ELOOP for a
 * bundle path that is not absolute or names it through a symlink, "..", "." or "//", -ENOTDIR
 * when its rootfs is not a directory (a symlink), or another negative errno. */
int zs_rootfs_unmount(const char *bundle);
