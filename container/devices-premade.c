/* SPDX-License-Identifier: MIT */
/*
 * The device nodes of a container with a user namespace of its own, made by the runtime: the
 * kernel refuses mknod of a device inside a user namespace, and a bind of the host's node of the
 * same path fails where the host has none (crun makes them the same way). Only where the runtime
 * may make nodes itself: root of the initial user namespace (a rootless runtime binds the host's,
 * engine/sandbox-mount.c).
 *
 * Each node of o->devices is made in ROOT/ID/devices with the config's type, number and mode,
 * owned by the host ids its uid and gid map to (the overflow ids when unmapped, as the container
 * would see them anyway), and taken as a detached mount (open_tree's copy, nosuid and noexec, and
 * without the state directory's nodev on that copy alone). The files stay in the state
 * directory, root's and on its nodev mount, until delete removes it: the kernel does not attach
 * a copy of a file unlinked meanwhile. The init attaches each copy at the device's path. The
 * container gets the nodes it asked for and no other; the device cgroup still decides which it
 * may open.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"

/* id through a map's text ("inside outside count" lines), or the overflow id. */
static unsigned host_id(const char *map, unsigned id, const char *overflow_file) {
        unsigned long in, out, count;
        unsigned overflow = 65534;
        int n;
        FILE *f;

        for (const char *l = map; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
                if (sscanf(l, "%lu %lu %lu%n", &in, &out, &count, &n) == 3 && id >= in && id - in < count)
                        return (unsigned) (out + (id - in));
        f = fopen(overflow_file, "re");
        if (f) {
                if (fscanf(f, "%u", &overflow) != 1)
                        overflow = 65534;
                fclose(f);
        }
        return overflow;
}

/* One node in dir_fd as the detached mount *ret; 1 when mknod is refused (no premade nodes). */
static int premake(int dir_fd, size_t i, const struct zct_oci *o, const struct ze_sb_device *d, int *ret) {
        struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, .attr_clr = MOUNT_ATTR_NODEV };
        char name[32];
        mode_t old_umask;
        int r = 0, tree;

        snprintf(name, sizeof(name), "%zu", i);
        old_umask = umask(0); /* the config's fileMode, whole */
        if (mknodat(dir_fd, name, d->mode, d->dev) < 0)
                r = -errno;
        (void) umask(old_umask);
        if (r == -EPERM)
                return 1;
        if (r < 0)
                return r;
        if (fchownat(dir_fd, name, host_id(o->uid_map, d->uid, "/proc/sys/kernel/overflowuid"),
                     host_id(o->gid_map, d->gid, "/proc/sys/kernel/overflowgid"), AT_SYMLINK_NOFOLLOW) < 0)
                r = -errno;
        tree = r < 0 ? -1 : (int) syscall(SYS_open_tree, dir_fd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (r == 0 && tree < 0)
                r = -errno;
        if (r == 0 && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                r = -errno;
        if (r < 0) {
                if (tree >= 0)
                        close(tree);
                return r;
        }
        *ret = tree;
        return 0;
}

int zct_devices_premake(struct zct_oci *o, const char *dir) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        size_t room = ZE_SB_MAX_PREMADE;
        int r;

        if (!(o->clone_flags & CLONE_NEWUSER) || !o->uid_map || zct_rootless())
                return 0;
        for (size_t i = 0; i < o->n_mounts; i++)
                room -= o->mounts[i].premade && room > 0;
        if (asprintf(&path, "%s/devices", dir) < 0)
                return -ENOMEM;
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;
        dir_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        /* past the bound, the host's nodes are bound, as without a premade one */
        for (size_t i = 0; i < o->n_devices && i < room; i++) {
                int tree;

                r = premake(dir_fd, i, o, &o->devices[i], &tree);
                if (r == 1)
                        return 0; /* refused: the host's nodes are bound, as before */
                if (r < 0)
                        return r;
                o->devices[i].premade = true;
                o->devices[i].tree_fd = tree;
        }
        return 0;
}
