/* SPDX-License-Identifier: MIT */
/* The container's root filesystem: mount(2) of containerd's mounts. */
#include "rootfs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "util.h"

static const struct {
        const char *name;
        unsigned long set, clear;
} flag_table[] = {
        { "ro", MS_RDONLY, 0 },           { "rw", 0, MS_RDONLY },       { "bind", MS_BIND, 0 },
        { "rbind", MS_BIND | MS_REC, 0 }, { "nosuid", MS_NOSUID, 0 },   { "suid", 0, MS_NOSUID },
        { "nodev", MS_NODEV, 0 },         { "dev", 0, MS_NODEV },       { "noexec", MS_NOEXEC, 0 },
        { "exec", 0, MS_NOEXEC },         { "noatime", MS_NOATIME, 0 }, { "relatime", MS_RELATIME, 0 },
        { "sync", MS_SYNCHRONOUS, 0 },    { "remount", MS_REMOUNT, 0 }, { "defaults", 0, 0 },
};

/* Splits options into mount flags and the data string (what mount(2) does not know as a flag). */
static int parse_options(const Containerd__Types__Mount *m, unsigned long *ret_flags, char **ret_data) {
        _cleanup_free_ char *data = strdup("");
        unsigned long flags = 0;

        if (!data)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_options; i++) {
                const char *o = m->options[i];
                bool known = false;

                for (size_t k = 0; k < ELEMENTSOF(flag_table); k++)
                        if (streq(o, flag_table[k].name)) {
                                flags = (flags | flag_table[k].set) & ~flag_table[k].clear;
                                known = true;
                        }
                if (known)
                        continue;
                char *d = NULL;
                if (asprintf(&d, "%s%s%s", data, *data ? "," : "", o) < 0)
                        return -ENOMEM;
                free(data);
                data = d;
        }
        *ret_flags = flags;
        *ret_data = TAKE_PTR(data);
        return 0;
}

static int mount_one(const Containerd__Types__Mount *m, const char *target) {
        _cleanup_free_ char *data = NULL;
        unsigned long flags;
        int r;

        r = parse_options(m, &flags, &data);
        if (r < 0)
                return r;
        if (flags & MS_BIND) {
                /* a bind mount takes MS_RDONLY only on a remount */
                if (mount(m->source, target, NULL, flags & ~MS_RDONLY, NULL) < 0)
                        return -errno;
                if ((flags & MS_RDONLY) &&
                    mount(NULL, target, NULL, (flags & ~MS_REC) | MS_REMOUNT | MS_BIND, NULL) < 0)
                        return -errno;
                return 0;
        }
        if (mount(m->source, target, m->type, flags, *data ? data : NULL) < 0)
                return -errno;
        return 0;
}

int zs_rootfs_mount(const char *bundle, Containerd__Types__Mount *const *mounts, size_t n) {
        _cleanup_free_ char *target = NULL;
        int r;

        if (n == 0)
                return 0;
        if (asprintf(&target, "%s/rootfs", bundle) < 0)
                return -ENOMEM;
        if (mkdir(target, 0711) < 0 && errno != EEXIST)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                r = mount_one(mounts[i], target);
                if (r < 0) {
                        zs_rootfs_unmount(bundle);
                        return r;
                }
        }
        return 0;
}

int zs_rootfs_unmount(const char *bundle) {
        _cleanup_free_ char *target = NULL;

        if (asprintf(&target, "%s/rootfs", bundle) < 0)
                return -ENOMEM;
        /* every layer mounted there, the last first */
        for (;;) {
                if (umount2(target, MNT_DETACH) == 0)
                        continue;
                if (errno == EINVAL || errno == ENOENT)
                        return 0;
                return -errno;
        }
}
