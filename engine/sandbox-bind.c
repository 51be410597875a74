/* SPDX-License-Identifier: MIT */
/*
 * The filesystem step's binds (sandbox-mount.h): detached copies of a source (open_tree), given
 * their attributes while nobody can see them, attached on the fd of their target; and the copies
 * made early, in a user namespace, while the init still has the runtime's ids. Same rules as
 * sandbox.c: raw system calls only, no allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-mount.h"

/* A detached copy of the mount at what fd names (with its submounts when recursive), for
 * ze_sb_move_onto(); cloned from an fd, the source is what was resolved, not a path looked up again. */
int ze_sb_clone_tree(int fd, bool recursive) {
        long t = syscall(SYS_open_tree, fd, "",
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0));

        return t < 0 ? -errno : (int) t;
}

/* Attaches the detached mount tree on what target names. */
int ze_sb_move_onto(int tree, int target) {
        if (syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

/* "/proc/self/fd/N": mounting there mounts on what fd names, which was resolved inside the
 * rootfs (the way runc mounts). 32 bytes always hold it. */
void ze_sb_fd_path(char buf[static 32], int fd) {
        (void) ze_sb_number_path(buf, 32, "/proc/self/fd/", (unsigned) fd);
}

int ze_sb_setattr_fd(int fd, uint64_t attr_set, bool recursive) {
        struct mount_attr a = { .attr_set = attr_set };

        if (attr_set == 0)
                return 0;
        if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0)
                return -errno;
        return 0;
}

/* A bind of the detached copy t (closed here), given its flags while nobody can see it, attached
 * on the fd of its target, its propagation set on the attached copy's own fd: no second lookup of
 * the destination, which a symlink swapped in meanwhile could send elsewhere (the flags onto
 * another mount, this one left writable). */
int ze_sb_bind_tree_onto(int t, bool recursive, uint64_t attr, uint64_t attr_rec, unsigned long propagation,
                         int target) {
        char at[32];
        int r;

        r = ze_sb_setattr_fd(t, attr_rec, recursive);
        if (r >= 0)
                r = ze_sb_setattr_fd(t, attr, false);
        if (r >= 0)
                r = ze_sb_move_onto(t, target);
        if (r >= 0 && propagation) {
                ze_sb_fd_path(at, t);
                if (mount(NULL, at, NULL, propagation, NULL) < 0)
                        r = -errno;
        }
        close(t);
        return r;
}

/* ze_sb_bind_tree_onto() of a detached copy of the path source. */
int ze_sb_bind_path_onto(const char *source, bool recursive, uint64_t attr, uint64_t attr_rec,
                         unsigned long propagation, int target) {
        long t;

        t = syscall(SYS_open_tree, AT_FDCWD, source,
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
        if (t < 0)
                return -errno;
        return ze_sb_bind_tree_onto((int) t, recursive, attr, attr_rec, propagation, target);
}

void ze_sb_open_trees(const struct ze_sandbox *sb, int trees[static ZE_SB_MAX_TREES]) {
        size_t n = strlen(sb->rootfs);

        for (size_t i = 0; i < ZE_SB_MAX_TREES; i++) {
                const struct ze_sb_mount *m = i < sb->n_mounts ? &sb->mounts[i] : NULL;
                long t;

                trees[i] = -EBADF;
                if (!m || m->kind != ZE_SB_MOUNT_BIND || m->premade || !m->source ||
                    (strncmp(m->source, sb->rootfs, n) == 0 && (m->source[n] == '/' || m->source[n] == '\0')))
                        continue;
                t = syscall(SYS_open_tree, AT_FDCWD, m->source,
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive ? AT_RECURSIVE : 0));
                if (t >= 0)
                        trees[i] = (int) t;
        }
}
