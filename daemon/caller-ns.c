/* SPDX-License-Identifier: MIT */
/*
 * The namespaces and root of the caller (caller.c's facet; caller-proc.h): which namespaces it
 * differs from zygoted in, which of those its task joins and which make it refused, and its root
 * directory with the procfs mounts it sees elsewhere than /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "caller-proc.h"
#include "mountinfo.h"
#include "util.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

static const struct {
        const char *name;
        unsigned flag;
        bool joinable; /* setns in the worker keeps the caller's view; see zd_caller_read() */
} namespaces[] = {
        { "net", CLONE_NEWNET, true },    { "ipc", CLONE_NEWIPC, true },       { "uts", CLONE_NEWUTS, true },
        { "mnt", CLONE_NEWNS, true },     { "cgroup", CLONE_NEWCGROUP, true }, { "pid", CLONE_NEWPID, false },
        { "user", CLONE_NEWUSER, false },
};

const char *zd_caller_ns_name(unsigned flag) {
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (namespaces[i].flag == flag)
                        return namespaces[i].name;
        return "unknown";
}

static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* zygoted's own namespaces and root, read once: it never changes them (no setns, unshare nor
 * chroot in the daemon), and each stat of /proc costs as much as a small part of a spawn. An
 * entry the kernel lacks stays zero, and so never equals a caller's. */
static struct stat own_ns[ELEMENTSOF(namespaces)], own_root;

/* The device and inode of a directory, from its inode as it is (AT_STATX_DONT_SYNC): a caller
 * whose root is on FUSE must not make zygoted wait for its file system's server. */
static int dir_id(int dir_fd, const char *path, struct stat *ret) {
        struct statx stx;

        if (statx(dir_fd, path, AT_STATX_DONT_SYNC, STATX_INO, &stx) < 0)
                return negative_errno();
        *ret = (struct stat){ .st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), .st_ino = stx.stx_ino };
        return 0;
}
static bool own_read;

static int read_own(void) {
        char path[32];
        int r;

        if (own_read)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                snprintf(path, sizeof(path), "/proc/self/ns/%s", namespaces[i].name);
                if (stat(path, &own_ns[i]) < 0 && errno != ENOENT)
                        return negative_errno();
        }
        r = dir_id(AT_FDCWD, "/", &own_root);
        if (r < 0)
                return r;
        own_read = true;
        return 0;
}

/* The first procfs mount point the caller sees (mountinfo lists those under its root, relative
 * to it) other than on /proc and beneath it, which the task's own /proc covers. */
static int note_procfs(const char *mount_point, void *userdata) {
        struct zd_caller *c = userdata;
        /* cut to fit: it only names the mount in the error */
        size_t n = strnlen(mount_point, sizeof(c->procfs_elsewhere) - 1);

        memcpy(c->procfs_elsewhere, mount_point, n);
        c->procfs_elsewhere[n] = 0;
        return 1;
}

static int read_procfs_elsewhere(int proc_fd, struct zd_caller *c) {
        int fd = openat(proc_fd, "mountinfo", O_RDONLY | O_CLOEXEC), r;

        if (fd < 0)
                return negative_errno();
        r = zc_mountinfo_procfs_elsewhere(fd, note_procfs, c);
        return r < 0 ? r : 0;
}

int zd_caller_read_namespaces(int proc_fd, struct zd_caller *c) {
        struct stat theirs;
        char path[32];
        int r;

        r = read_own();
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                snprintf(path, sizeof(path), "ns/%s", namespaces[i].name);
                if (fstatat(proc_fd, path, &theirs, 0) < 0) {
                        if (errno == ENOENT)
                                continue; /* a kernel without this kind of namespace */
                        return negative_errno();
                }
                if (same_file(&own_ns[i], &theirs))
                        continue;
                if (namespaces[i].joinable)
                        c->ns_join |= namespaces[i].flag;
                else if (!c->ns_other)
                        c->ns_other = namespaces[i].name;
        }

        /* The caller's root: a chroot of its own, or the root of its mount namespace. */
        r = dir_id(proc_fd, "root", &theirs);
        if (r < 0)
                return r;
        if ((c->ns_join & CLONE_NEWNS) || !same_file(&own_root, &theirs)) {
                c->root_fd = openat(proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (c->root_fd < 0)
                        return negative_errno();
                return read_procfs_elsewhere(proc_fd, c);
        }
        return 0;
}
