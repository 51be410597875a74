/* SPDX-License-Identifier: MIT */
/*
 * The sandbox-setup module's filesystem step (sandbox-mount.c), called by ze_sandbox_run(), with
 * its paths resolved inside the root (sandbox-path.c) and its tmpfs copy-up (sandbox-copyup.c).
 * Internal to the module; raw system calls only, like the rest of it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

/* Step 3 of sandbox.h, in the new mount namespace, in two parts with the createContainer hooks
 * between them: the mounts, devices and symlinks, up to the rootfs copy as the cwd; then
 * pivot_root and what follows it, up to the read-only root. Each returns 0, or a negative errno
 * with the step that failed in *ret_step and the index of the mount, device or path in
 * *ret_index (-1 when the step has none); the caller reports it and exits. */
int ze_sb_setup_mounts(const struct ze_sandbox *sb, const int *trees, enum ze_step *ret_step, int *ret_index);

/* In a user namespace, the bind sources as detached copies (open_tree) made while the init still
 * has the runtime's ids, before it becomes the namespace's root: that root may not reach a source
 * the runtime can (a 0700 directory of the host's root), as runc opens them before it too.
 * trees[i] for mounts[i] (-EBADF: none; a source in the rootfs, which an earlier mount may make,
 * and one that cannot be copied now are bound by path later, as without), for
 * ze_sb_setup_mounts(). */
/* sandbox-bind.c: a detached copy of the mount fd names (with its submounts when recursive); one
 * attached on what target names; "/proc/self/fd/N" of fd (32 bytes always hold it); attributes set
 * on what fd names; the bind of the detached copy t (closed there) or of a copy of the path source,
 * attr on its own mount and attr_rec on every mount of it, attached on target, propagation set on
 * the attached copy's own fd. */
int ze_sb_clone_tree(int fd, bool recursive);
int ze_sb_move_onto(int tree, int target);
void ze_sb_fd_path(char buf[static 32], int fd);
int ze_sb_setattr_fd(int fd, uint64_t attr_set, bool recursive);
int ze_sb_bind_tree_onto(int t, bool recursive, uint64_t attr, uint64_t attr_rec, unsigned long propagation,
                         int target);
int ze_sb_bind_path_onto(const char *source, bool recursive, uint64_t attr, uint64_t attr_rec,
                         unsigned long propagation, int target);

#define ZE_SB_MAX_TREES 64
void ze_sb_open_trees(const struct ze_sandbox *sb, int trees[static ZE_SB_MAX_TREES]);
int ze_sb_finish_root(const struct ze_sandbox *sb, enum ze_step *ret_step, int *ret_index);

/* An O_PATH fd (plus flags) of path below root_fd, every component resolved inside it (a symlink
 * of the image resolves as if root_fd were "/"; a magic link of /proc is refused), plus the extra
 * resolve flags (RESOLVE_NO_SYMLINKS: a symlink anywhere on the way is refused). */
int ze_sb_open_resolved(int root_fd, const char *path, int flags, uint64_t resolve);

/* Creates what is missing of dest below the root (directories; the last component an empty file
 * when !dir), every component resolved inside the root. A symlink on the way whose target does
 * not exist is followed, inside the root, and what it names is made (as runc does: a destination
 * through /var/run -> /run with no /run in the image makes /run). Returns an O_PATH fd of dest.
 * Uses sb->path_buf. */
int ze_sb_make_in_root(const struct ze_sandbox *sb, int root_fd, const char *dest, bool dir);

/* A tmpfs mount m with copyup: made detached, the directory target (an O_PATH fd resolved inside
 * the root) copied into it, made read-only when m asks, attached on target. Its root takes the
 * directory's mode when it was the image's (existed; else the tmpfs's default, or the options'
 * mode=). A negative errno with
 * the step in *ret_step: ZE_STEP_COPYUP for the copy, ZE_STEP_MOUNT for the rest. */
int ze_sb_tmpfs_copyup(const struct ze_sb_mount *m, int target, bool existed, enum ze_step *ret_step);

/* buf = prefix followed by n in decimal ("/dev/pts/3"), without stdio; -ENAMETOOLONG when it
 * does not fit in len bytes. */
int ze_sb_number_path(char *buf, size_t len, const char *prefix, unsigned n);

/* Step 5: binds the pty that peer is over path ("/dev/console") of the current root, resolved
 * inside it without any symlink (an image's /dev/console -> /etc/passwd, or a /dev that is a
 * symlink, is refused rather than followed); the source is the fd itself, not a /dev/pts path
 * looked up again. */
int ze_sb_bind_console(int peer, const char *path);
