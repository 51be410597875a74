/* SPDX-License-Identifier: MIT */
/*
 * Step 3 of the sandbox-setup module (sandbox.h): the container's filesystem, in its new mount
 * namespace: propagation, the rootfs bind, the mounts, devices, symlinks, pivot_root, masked and
 * read-only paths, the read-only root.
 *
 * Same rules as sandbox.c: it runs between clone and execve in a copy of zygote-runc, so no
 * malloc, no stdio, no locks; raw system calls and pure string helpers only. Paths are built in
 * the struct's path_buf or on the stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-mount.h"

static int open_in_root(int root_fd, const char *path, int flags) {
        return ze_sb_open_resolved(root_fd, path, flags, 0);
}

/* A bind of what src is (not a path looked up again) onto what target names. */
static int bind_fd_onto(int src, int target) {
        int tree = ze_sb_clone_tree(src, false), r;

        if (tree < 0)
                return tree;
        r = ze_sb_move_onto(tree, target);
        close(tree);
        return r;
}

static int setattr(const char *path, uint64_t attr_set, bool recursive) {
        struct mount_attr a = { .attr_set = attr_set };

        if (attr_set == 0)
                return 0;
        if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof(a)) < 0)
                return -errno;
        return 0;
}

/* A bind the runtime made (sandbox.h: premade), attached as it is on the fd of its target, its
 * propagation set on the attached copy's own fd. */
static int attach_premade(const struct ze_sb_mount *m, int target) {
        char at[32];

        if (m->tree_fd < 0)
                return -EBADF;
        if (ze_sb_move_onto(m->tree_fd, target) < 0)
                return -errno;
        ze_sb_fd_path(at, m->tree_fd);
        if (m->propagation && mount(NULL, at, NULL, m->propagation, NULL) < 0)
                return -errno;
        return 0;
}

static int mount_empty_tmpfs(int target);

/* A view's tmpfs: a directory made in it for each later mount just below its destination, its
 * flags set (read-only) while still detached, then attached on the target: never writable where
 * the container can see it, and no second lookup. */
static int mount_view(const struct ze_sandbox *sb, const struct ze_sb_mount *m, int target) {
        size_t n = strlen(m->dest);
        int fs, mnt, r = 0;

        while (n > 1 && m->dest[n - 1] == '/')
                n--;
        fs = (int) syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "755", 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        mnt = r < 0 ? -1
                    : (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (r == 0 && mnt < 0)
                r = -errno;
        close(fs);
        for (const struct ze_sb_mount *b = m + 1; r == 0 && b < sb->mounts + sb->n_mounts; b++) {
                const char *name = b->dest + n + 1;
                size_t len = strcspn(name, "/");
                char dir[256];

                if (strncmp(b->dest, m->dest, n) != 0 || b->dest[n] != '/' || len == 0 || len >= sizeof(dir))
                        continue;
                memcpy(dir, name, len);
                dir[len] = '\0';
                if (strcmp(dir, ".") != 0 && strcmp(dir, "..") != 0 && mkdirat(mnt, dir, 0755) < 0 && errno != EEXIST)
                        r = -errno;
        }
        if (r == 0)
                r = ze_sb_setattr_fd(mnt, m->attr_set, false);
        if (r == 0)
                r = ze_sb_move_onto(mnt, target);
        if (mnt >= 0)
                close(mnt);
        return r;
}

/* cgroup2 refused (a user namespace without a cgroup namespace of its own): a bind of the
 * process's own cgroup below m->source, as runc binds it, not the host's whole tree; a process at
 * the root of what it sees gets an empty read-only tmpfs instead. */
static int bind_own_cgroup2(const struct ze_sb_mount *m, uint64_t attr, int target) {
        char buf[4096], path[4096], *own, *nl;
        size_t n = strlen(m->source), len;
        ssize_t k;
        int fd;

        fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k < 0)
                return -errno;
        buf[k] = '\0';
        /* the cgroup2 line, "0::/PATH" (last on a hybrid host, alone on a v2 one) */
        own = strncmp(buf, "0::/", 4) == 0 ? buf : strstr(buf, "\n0::/");
        if (!own)
                return -EPROTO;
        own += own == buf ? 3 : 4;
        nl = strchr(own, '\n');
        if (!nl)
                return -EPROTO;
        *nl = '\0';
        if (strcmp(own, "/") == 0 || strstr(own, "/.."))
                return mount_empty_tmpfs(target);
        len = strlen(own);
        if (n + len + 1 > sizeof(path))
                return -ENAMETOOLONG;
        memcpy(path, m->source, n);
        memcpy(path + n, own, len + 1);
        return ze_sb_bind_path_onto(path, false, attr, 0, m->propagation, target);
}

/* The mount itself, on the fd of its target (resolved in the root): 0 when a filesystem was
 * mounted (its flags taken in the call itself), 1 when a fallback bind was made (flags and
 * propagation already on it), or a negative errno. */
static int mount_on(const struct ze_sb_mount *m, int target) {
        /* the fallbacks bind the host's trees: read-only whatever the config says */
        const uint64_t host_tree = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        char at[32];
        int r;

        ze_sb_fd_path(at, target);
        switch (m->kind) {
        case ZE_SB_MOUNT_FS:
                if (mount(m->source, at, m->fstype, m->flags, m->data) == 0)
                        return 0;
                /* sysfs needs a network namespace of our own user namespace: without one
                 * (rootless, host network) runc binds the host's /sys instead */
                if (errno != EPERM || !m->fstype || strcmp(m->fstype, "sysfs") != 0)
                        return -errno;
                r = ze_sb_bind_path_onto("/sys", true, 0, host_tree, m->propagation, target);
                return r < 0 ? r : 1;
        case ZE_SB_MOUNT_CGROUP:
                if (!m->fstype) {
                        /* v1 or hybrid without the runtime's view: the host's hierarchy */
                        r = ze_sb_bind_path_onto(m->source, true, 0, host_tree, m->propagation, target);
                        return r < 0 ? r : 1;
                }
                if (mount("cgroup2", at, "cgroup2", m->flags, NULL) == 0)
                        return 0;
                if (errno != EPERM)
                        return -errno;
                r = bind_own_cgroup2(m, host_tree, target);
                return r < 0 ? r : 1;
        case ZE_SB_MOUNT_BIND: /* ze_sb_bind_path_onto() */
        case ZE_SB_MOUNT_VIEW: /* mount_view() */
                break;
        }
        return -EINVAL;
}

/* A tmpfs over a directory of the image takes that directory's mode, as runc gives it, unless
 * its options say "mode=": *m copied to *ret with the data "DATA,mode=0NNN" in buf. 0: nothing
 * to add (no such directory, another filesystem, a mode given, no room). */
static int tmpfs_mode(int root_fd, const struct ze_sb_mount *m, char *buf, size_t size, struct ze_sb_mount *ret) {
        size_t n = m->data ? strlen(m->data) : 0;
        struct stat st;
        int fd, r;

        if (m->kind != ZE_SB_MOUNT_FS || m->copyup || !m->fstype || strcmp(m->fstype, "tmpfs") != 0 ||
            (m->data && strstr(m->data, "mode=")) || n + 16 > size)
                return 0;
        fd = open_in_root(root_fd, m->dest, 0);
        if (fd < 0)
                return 0; /* made below, with the tmpfs's own mode */
        r = fstat(fd, &st);
        close(fd);
        if (r < 0 || !S_ISDIR(st.st_mode))
                return 0;
        memcpy(buf, m->data ? m->data : "", n);
        memcpy(buf + n, n ? ",mode=0" : "mode=0", n ? 7 : 6);
        n += n ? 7 : 6;
        for (int i = 3; i >= 0; i--)
                buf[n++] = (char) ('0' + ((st.st_mode >> (3 * i)) & 7));
        buf[n] = '\0';
        *ret = *m;
        ret->data = buf;
        return 1;
}

/* A read-only /dev (runc's mounts.bats "ro /dev mount"): mounted writable so that the devices,
 * devpts and the links below it can be made, and made read-only at the end (finish_root), as
 * runc remounts it. */
static bool dev_readonly(const struct ze_sb_mount *m) {
        return m->kind == ZE_SB_MOUNT_FS && (m->flags & MS_RDONLY) && strcmp(m->dest, "/dev") == 0;
}

/* One mount of the config; a failure's step in *ret_step (the mount's, or the copy's). */
static int do_mount(const struct ze_sandbox *sb, int root_fd, const struct ze_sb_mount *m, int tree,
                    enum ze_step *ret_step) {
        struct ze_sb_mount moded, writable;
        bool existed = false;
        char at[32], data[1024];
        int fd, r;

        *ret_step = ZE_STEP_MOUNT;
        if (tmpfs_mode(root_fd, m, data, sizeof(data), &moded) > 0)
                m = &moded;
        if (dev_readonly(m)) {
                writable = *m;
                writable.flags &= ~MS_RDONLY;
                m = &writable;
        }
        /* a copy-up's tmpfs takes the mode of the image's directory, when the image has one */
        if (m->copyup) {
                fd = open_in_root(root_fd, m->dest, 0);
                existed = fd >= 0;
                if (fd >= 0)
                        close(fd);
        }
        fd = ze_sb_make_in_root(sb, root_fd, m->dest, m->kind != ZE_SB_MOUNT_BIND || m->source_is_dir);
        if (fd < 0)
                return fd;
        if (m->kind == ZE_SB_MOUNT_FS && m->fstype &&
            (strcmp(m->fstype, "proc") == 0 || strcmp(m->fstype, "sysfs") == 0)) {
                /* procfs and sysfs only on a directory reached without any symlink of the image:
                 * one would carry them elsewhere (its root, a directory of its own), and the
                 * masked and read-only paths below /proc and /sys would miss the real files */
                close(fd);
                fd = ze_sb_open_resolved(root_fd, m->dest, O_DIRECTORY, RESOLVE_NO_SYMLINKS);
                if (fd < 0)
                        return fd;
        }
        if (m->kind == ZE_SB_MOUNT_BIND || m->kind == ZE_SB_MOUNT_VIEW) {
                r = m->kind == ZE_SB_MOUNT_VIEW ? mount_view(sb, m, fd)
                    : m->premade                ? attach_premade(m, fd)
                    : tree >= 0
                            ? ze_sb_bind_tree_onto(tree, m->recursive, m->attr_set, m->attr_set_rec, m->propagation, fd)
                            : ze_sb_bind_path_onto(m->source, m->recursive, m->attr_set, m->attr_set_rec,
                                                   m->propagation, fd);
                close(fd);
                return r;
        }
        r = m->copyup ? ze_sb_tmpfs_copyup(m, fd, existed, ret_step) : mount_on(m, fd);
        close(fd);
        if (r != 0 || !m->propagation)
                return r < 0 ? r : 0;
        /* a filesystem's propagation, on the new mount by a fresh lookup (the old fd names what
         * lies under it); its flags were taken in the mount call */
        fd = open_in_root(root_fd, m->dest, 0);
        if (fd < 0)
                return fd;
        ze_sb_fd_path(at, fd);
        r = mount(NULL, at, NULL, m->propagation, NULL) < 0 ? -errno : 0;
        close(fd);
        return r;
}

/* An empty file name in parent, for a bind of a device node onto it (-EEXIST: there is one). */
static int make_placeholder(int parent, const char *name) {
        int fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

/* The runtime's node (a detached mount of it) attached at the device's path: on what the image
 * has there, never opened for I/O (a node of the image's own), or on an empty file made for it. */
static int attach_premade_device(int parent, const char *name, const struct ze_sb_device *d) {
        int fd, r = make_placeholder(parent, name);

        if (r < 0 && r != -EEXIST)
                return r;
        fd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = ze_sb_move_onto(d->tree_fd, fd);
        close(fd);
        return r;
}

static int make_device(const struct ze_sandbox *sb, int root_fd, const struct ze_sb_device *d) {
        char parent_path[4096], at[32];
        const char *slash = strrchr(d->host, '/'), *name;
        int parent, fd, saved_errno, r = 0;
        mode_t old_umask;
        bool made;

        if (!slash || (size_t) (slash - d->host) >= sizeof(parent_path))
                return -EINVAL;
        memcpy(parent_path, d->host, (size_t) (slash - d->host));
        parent_path[slash - d->host] = '\0';
        name = slash + 1;
        parent = ze_sb_make_in_root(sb, root_fd, parent_path, true);
        if (parent < 0)
                return parent;
        if (d->premade) {
                r = attach_premade_device(parent, name, d);
                close(parent);
                return r;
        }
        /* the mode is the config's (fileMode), not the caller's umask's cut of it */
        old_umask = umask(0);
        made = mknodat(parent, name, d->mode, d->dev) == 0;
        saved_errno = errno;
        (void) umask(old_umask);
        errno = saved_errno;
        if (made) {
                if (fchownat(parent, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
                        r = -errno;
        } else if (errno != EEXIST) {
                /* no CAP_MKNOD in the init user namespace: bind the host's node instead */
                r = errno == EPERM ? make_placeholder(parent, name) : -errno;
                r = r == -EEXIST ? 0 : r; /* the image's file, covered by the bind */
                if (r == 0) {
                        fd = open_in_root(root_fd, d->host, 0);
                        if (fd < 0)
                                r = fd;
                        else {
                                ze_sb_fd_path(at, fd);
                                if (mount(d->host, at, NULL, MS_BIND, NULL) < 0)
                                        r = -errno;
                                close(fd);
                        }
                }
        }
        close(parent);
        return r;
}

static int make_symlink(const struct ze_sandbox *sb, int root_fd, const char *target, const char *link) {
        char parent_path[4096];
        const char *slash = strrchr(link, '/');
        int parent, r = 0;

        if (!slash || (size_t) (slash - link) >= sizeof(parent_path))
                return -EINVAL;
        memcpy(parent_path, link, (size_t) (slash - link));
        parent_path[slash - link] = '\0';
        parent = ze_sb_make_in_root(sb, root_fd, parent_path, true);
        if (parent < 0)
                return parent;
        if (symlinkat(target, parent, slash + 1) < 0 && errno != EEXIST)
                r = -errno;
        close(parent);
        return r;
}

/* Step 3, after pivot_root: the container's /dev/null as the source of every masking bind, and
 * only if it is the null device itself, reached without a symlink: an image shipping
 * /dev/null -> /proc/sys/kernel/core_pattern would otherwise have that file bound, writable, over
 * each masked path. */
static int open_dev_null(int root_fd) {
        struct stat st;
        int fd = ze_sb_open_resolved(root_fd, "/dev/null", 0, RESOLVE_NO_SYMLINKS);

        /* ENODEV: the runtime reports "not the null device" for each of these */
        if (fd == -ELOOP || fd == -ENOENT)
                return -ENODEV;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
                close(fd);
                return -ENODEV;
        }
        return fd;
}

/* An empty read-only tmpfs, made and attached by fd: no path is looked up again. */
static int mount_empty_tmpfs(int target) {
        int fs, mnt, r = 0;

        fs = (int) syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        mnt = r < 0 ? -1 : (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
        if (r == 0 && mnt < 0)
                r = -errno;
        close(fs);
        if (r < 0)
                return r;
        r = ze_sb_move_onto(mnt, target);
        close(mnt);
        return r;
}

/* The masked path resolved inside the root (a symlink of the image masks what it names there; a
 * magic link is refused); an absent path is skipped, as runc does. */
static int mask_path(int root_fd, int null_fd, const char *path) {
        struct stat st;
        int fd, r;

        fd = open_in_root(root_fd, path, 0);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = mount_empty_tmpfs(fd);
        else if (null_fd < 0)
                r = null_fd;
        else
                r = bind_fd_onto(null_fd, fd);
        close(fd);
        return r;
}

/* A read-only copy of the path's mounts, made read-only while still detached (no window where the
 * bind is writable) and attached on the fd it was cloned from. */
static int readonly_path(int root_fd, const char *path) {
        int fd, tree, r;

        fd = open_in_root(root_fd, path, 0);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = tree = ze_sb_clone_tree(fd, true);
        if (tree >= 0) {
                r = ze_sb_setattr_fd(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                     true);
                if (r >= 0)
                        r = ze_sb_move_onto(tree, fd);
                close(tree);
        }
        close(fd);
        return r;
}

int ze_sb_bind_console(int peer, const char *path) {
        struct stat st;
        int root_fd, fd, r;

        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        fd = ze_sb_open_resolved(root_fd, path, 0, RESOLVE_NO_SYMLINKS);
        close(root_fd);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = -EISDIR;
        else
                r = bind_fd_onto(peer, fd);
        close(fd);
        return r;
}

/* Records which step failed and where; returns err as a negative errno. */
static int failed(enum ze_step *ret_step, int *ret_index, enum ze_step step, int index, int err) {
        *ret_step = step;
        *ret_index = index;
        return -(err > 0 ? err : EIO);
}

static unsigned long propagation_of(const struct ze_sandbox *sb) {
        return sb->rootfs_propagation ? sb->rootfs_propagation : MS_SLAVE | MS_REC;
}

/* Step 3's first: the propagation of every mount of the copied namespace, so that nothing the
 * setup mounts reaches the host (rslave by default). A shared one ("shared", "rshared") leaves the
 * old "/" and the mount the rootfs is on shared, which pivot_root refuses (EINVAL), and the rootfs
 * bind would propagate to their peers, the host's: both become private, alone. The requested
 * propagation goes on the new "/" after pivot_root. */
static int propagation_before(const struct ze_sandbox *sb) {
        unsigned long p = propagation_of(sb);

        /* an unbindable "/" could not give the rootfs bind: private (what unbindable implies)
         * until then */
        if (mount(NULL, "/", NULL, (p & MS_UNBINDABLE ? MS_PRIVATE : p) | MS_REC, NULL) < 0)
                return -errno;
        if (!(p & MS_SHARED))
                return 0;
        if (mount(NULL, "/", NULL, MS_PRIVATE, NULL) < 0)
                return -errno;
        if (sb->rootfs_parent && mount(NULL, sb->rootfs_parent, NULL, MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

int ze_sb_setup_mounts(const struct ze_sandbox *sb, const int *trees, enum ze_step *ret_step, int *ret_index) {
        int root_fd, r;

        r = propagation_before(sb);
        if (r < 0)
                return failed(ret_step, ret_index, ZE_STEP_PROPAGATION, -1, -r);
        /* The rootfs as the runtime resolved it, once, with every symlink followed: a symlink
         * met on the way now was swapped in since, and is refused rather than followed (it could
         * name the host's "/"). It becomes a mount point of its own (pivot_root needs one) by a
         * copy of its mount attached on that same fd; the copy's fd is where everything below
         * goes, and what pivot_root turns into "/". */
        {
                struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
                int fd = (int) syscall(SYS_openat2, AT_FDCWD, sb->rootfs, &how, sizeof(how));

                if (fd < 0)
                        return failed(ret_step, ret_index, ZE_STEP_ROOTFS, -1, errno);
                root_fd = ze_sb_clone_tree(fd, true);
                r = root_fd < 0 ? root_fd : ze_sb_move_onto(root_fd, fd);
                close(fd);
                if (r < 0) {
                        if (root_fd >= 0)
                                close(root_fd);
                        return failed(ret_step, ret_index, ZE_STEP_ROOTFS, -1, -r);
                }
        }

        for (size_t i = 0; i < sb->n_mounts; i++) {
                enum ze_step step;

                r = do_mount(sb, root_fd, &sb->mounts[i], trees && i < ZE_SB_MAX_TREES ? trees[i] : -EBADF, &step);
                if (r < 0)
                        return failed(ret_step, ret_index, step, (int) i, -r);
        }
        /* the premade trees are the container's mounts now: nothing of the runtime's stays open */
        for (size_t i = 0; i < sb->n_mounts; i++)
                if (sb->mounts[i].premade && sb->mounts[i].tree_fd >= 0)
                        close(sb->mounts[i].tree_fd);
        for (size_t i = 0; i < sb->n_devices; i++) {
                r = make_device(sb, root_fd, &sb->devices[i]);
                if (r < 0)
                        return failed(ret_step, ret_index, ZE_STEP_DEVICE, (int) i, -r);
        }
        for (size_t i = 0; i < sb->n_devices; i++)
                if (sb->devices[i].premade && sb->devices[i].tree_fd >= 0)
                        close(sb->devices[i].tree_fd);
        for (size_t i = 0; sb->symlinks && sb->symlinks[i]; i += 2) {
                r = make_symlink(sb, root_fd, sb->symlinks[i], sb->symlinks[i + 1]);
                if (r < 0)
                        return failed(ret_step, ret_index, ZE_STEP_DEVICE, -1, -r);
        }
        if (sb->console_fd >= 0 && sb->dev_console) {
                r = ze_sb_make_in_root(sb, root_fd, sb->dev_console, false);
                if (r < 0)
                        return failed(ret_step, ret_index, ZE_STEP_CONSOLE, -1, -r);
                close(r);
        }

        /* the rootfs copy becomes the cwd: the createContainer hooks run there, and pivot_root
         * takes it as "." */
        r = fchdir(root_fd) < 0 ? -errno : 0;
        close(root_fd);
        if (r < 0)
                return failed(ret_step, ret_index, ZE_STEP_PIVOT, -1, -r);
        return 0;
}

int ze_sb_finish_root(const struct ze_sandbox *sb, enum ze_step *ret_step, int *ret_index) {
        int root_fd, r;

        /* pivot_root(".", ".") stacks the old root on top of the new one; detaching "." then
         * leaves only the new root, without a directory for the old one in the image */
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return failed(ret_step, ret_index, ZE_STEP_PIVOT, -1, errno);
        if (umount2(".", MNT_DETACH) < 0)
                return failed(ret_step, ret_index, ZE_STEP_PIVOT, -1, errno);
        if (chdir("/") < 0)
                return failed(ret_step, ret_index, ZE_STEP_PIVOT, -1, errno);
        /* the requested propagation on the container's own "/" now that it is one */
        if (mount(NULL, "/", NULL, propagation_of(sb), NULL) < 0)
                return failed(ret_step, ret_index, ZE_STEP_PROPAGATION, -1, errno);

        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return failed(ret_step, ret_index, ZE_STEP_PIVOT, -1, errno);
        /* a missing cwd is made inside the root (0755, before a read-only root), as runc makes it */
        r = sb->cwd ? ze_sb_make_in_root(sb, root_fd, sb->cwd, true) : -EBADF;
        if (r >= 0)
                close(r);
        else if (r != -EBADF) {
                close(root_fd);
                return failed(ret_step, ret_index, ZE_STEP_CHDIR, -1, -r);
        }
        {
                /* a negative null_fd fails only a masked path that is a file */
                int null_fd = sb->masked && sb->masked[0] ? open_dev_null(root_fd) : -ENOENT;

                for (size_t i = 0; sb->masked && sb->masked[i]; i++) {
                        r = mask_path(root_fd, null_fd, sb->masked[i]);
                        if (r < 0) {
                                if (null_fd >= 0)
                                        close(null_fd);
                                close(root_fd);
                                return failed(ret_step, ret_index, ZE_STEP_MASK, (int) i, -r);
                        }
                }
                if (null_fd >= 0)
                        close(null_fd);
        }
        for (size_t i = 0; sb->readonly && sb->readonly[i]; i++) {
                r = readonly_path(root_fd, sb->readonly[i]);
                if (r < 0) {
                        close(root_fd);
                        return failed(ret_step, ret_index, ZE_STEP_READONLY, (int) i, -r);
                }
        }
        for (size_t i = 0; i < sb->n_mounts; i++) {
                if (!dev_readonly(&sb->mounts[i]))
                        continue;
                int fd = open_in_root(root_fd, "/dev", O_DIRECTORY);
                r = fd < 0 ? fd : ze_sb_setattr_fd(fd, MOUNT_ATTR_RDONLY, false);
                if (fd >= 0)
                        close(fd);
                if (r < 0) {
                        close(root_fd);
                        return failed(ret_step, ret_index, ZE_STEP_MOUNT, (int) i, -r);
                }
        }
        close(root_fd);
        if (sb->rootfs_readonly) {
                r = setattr("/", MOUNT_ATTR_RDONLY, false);
                if (r < 0)
                        return failed(ret_step, ret_index, ZE_STEP_ROOT_RO, -1, -r);
        }
        return 0;
}
