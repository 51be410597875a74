/* SPDX-License-Identifier: MIT */
/* The container's root filesystem: mount(2) of containerd's mounts. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "mountinfo.h"
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

/* A whole file, NUL-terminated, in *ret (freed by the caller). */
static int read_text(int dir_fd, const char *path, char **ret) {
        _cleanup_close_ int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        if (fd < 0)
                return -errno;
        for (;;) {
                if (size - len < 4096) {
                        char *b = realloc(buf, size + 65536);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        size += 65536;
                }
                ssize_t n = read(fd, buf + len, size - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The bundle's directory, O_PATH: only by an absolute path that names it as it is, no symlink,
 * "..", "." or doubled "/" in it (its own path, as the kernel gives it, must be the one asked
 * for): the mounts below it are what Delete detaches. */
static size_t bundle_len(const char *bundle) {
        size_t len = strlen(bundle);

        while (len > 1 && bundle[len - 1] == '/')
                len--; /* trailing ones */
        return len;
}

static int open_bundle(const char *bundle, int *ret) {
        _cleanup_close_ int fd = -EBADF;
        char link[64], real[PATH_MAX];
        size_t len = bundle_len(bundle);
        ssize_t n;

        if (bundle[0] != '/' || len >= sizeof(real))
                return -EINVAL;
        fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, real, sizeof(real) - 1);
        if (n < 0)
                return -errno;
        if ((size_t) n != len || strncmp(real, bundle, len) != 0)
                return -ELOOP;
        *ret = TAKE_FD(fd);
        return 0;
}

/* The id of the mount that holds fd's file (its fdinfo's mnt_id). */
static int mount_id(int fd, unsigned long long *ret) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        const char *m;
        int r;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        r = read_text(AT_FDCWD, path, &text);
        if (r < 0)
                return r;
        m = strstr(text, "\nmnt_id:");
        if (!m || sscanf(m, "\nmnt_id: %llu", ret) != 1)
                return -EBADMSG;
        return 0;
}

/* Whether a mount sits on BUNDLE/rootfs itself (target): its directory, never a symlink
 * (-ENOTDIR), opened below the bundle, is the root of a mount whose mount point mountinfo gives as
 * target. 1, 0 (a directory of the bundle's own file system, or none: -ENOENT is 0), or -errno. */
static int rootfs_mounted(int bundle_fd, const char *target) {
        _cleanup_close_ int fd = openat(bundle_fd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ char *mountinfo = NULL;
        char point[PATH_MAX];
        unsigned long long id;
        int r;

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = mount_id(fd, &id);
        if (r >= 0)
                r = read_text(AT_FDCWD, "/proc/self/mountinfo", &mountinfo);
        if (r >= 0)
                r = zc_mountinfo_mount_point(mountinfo, id, point, sizeof(point));
        if (r < 0)
                return r;
        return streq(point, target);
}

/* BUNDLE/rootfs itself, O_PATH, as it is now (the top of what is mounted on it): opened below
 * the bundle's fd, never through a symlink (-ENOTDIR for one, which could name a host directory),
 * and its magic link /proc/self/fd/N in at, for mount(2) to take as its target. */
static int open_rootfs(int bundle_fd, char at[static 64], int *ret) {
        int fd = openat(bundle_fd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        snprintf(at, 64, "/proc/self/fd/%d", fd);
        *ret = fd;
        return 0;
}

/* One mount on the rootfs directory below bundle_fd: mount(2) resolves the target through the fd's
 * magic link, which is the directory the fd names and nothing a path could be made to follow. A
 * bind mount's read-only remount needs the new mount's root: the directory opened again. */
static int mount_one(const Containerd__Types__Mount *m, int bundle_fd) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        unsigned long flags;
        char at[64];
        int r;

        r = parse_options(m, &flags, &data);
        if (r < 0)
                return r;
        r = open_rootfs(bundle_fd, at, &fd);
        if (r < 0)
                return r;
        if (flags & MS_BIND) {
                /* a bind mount takes MS_RDONLY only on a remount */
                if (mount(m->source, at, NULL, flags & ~MS_RDONLY, NULL) < 0)
                        return -errno;
                if (!(flags & MS_RDONLY))
                        return 0;
                fd = safe_close(fd);
                r = open_rootfs(bundle_fd, at, &fd);
                if (r < 0)
                        return r;
                if (mount(NULL, at, NULL, (flags & ~MS_REC) | MS_REMOUNT | MS_BIND, NULL) < 0)
                        return -errno;
                return 0;
        }
        if (mount(m->source, at, m->type, flags, *data ? data : NULL) < 0)
                return -errno;
        return 0;
}

int zs_rootfs_mount(const char *bundle, Containerd__Types__Mount *const *mounts, size_t n) {
        _cleanup_close_ int bundle_fd = -EBADF;
        int r;

        if (n == 0)
                return 0;
        /* the bundle by its own path (what Delete detaches below), its rootfs made or found there
         * and never a symlink: a BUNDLE/rootfs linked to a host directory gets nothing mounted */
        r = open_bundle(bundle, &bundle_fd);
        if (r < 0)
                return r;
        if (mkdirat(bundle_fd, "rootfs", 0711) < 0 && errno != EEXIST)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                r = mount_one(mounts[i], bundle_fd);
                if (r < 0) {
                        zs_rootfs_unmount(bundle);
                        return r;
                }
        }
        return 0;
}

#define ROOTFS_LAYERS_MAX 128 /* past it, mounts that come back as they are detached */

int zs_rootfs_unmount(const char *bundle) {
        _cleanup_free_ char *target = NULL;
        _cleanup_close_ int bundle_fd = -EBADF;
        char at[64];
        int r;

        r = open_bundle(bundle, &bundle_fd);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        /* the bundle as asked for, which open_bundle() found to be its own path */
        if (asprintf(&target, "%.*s/rootfs", bundle_len(bundle) > 1 ? (int) bundle_len(bundle) : 0, bundle) < 0)
                return -ENOMEM;
        /* through the bundle's fd, the last component never followed: nothing but a mount on the
         * bundle's own rootfs directory is detached, every layer there, the last first */
        snprintf(at, sizeof(at), "/proc/self/fd/%d/rootfs", bundle_fd);
        for (int n = 0; n < ROOTFS_LAYERS_MAX; n++) {
                r = rootfs_mounted(bundle_fd, target);
                if (r <= 0)
                        return r;
                if (umount2(at, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
                        return -errno;
        }
        return -ELOOP;
}
