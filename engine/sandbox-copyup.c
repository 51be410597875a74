/* SPDX-License-Identifier: MIT */
/*
 * Step 3 of the sandbox-setup module (sandbox.h): a tmpfs mount with podman's "tmpcopyup" option
 * starts as a copy of the image's directory it covers, as runc makes it. The tmpfs is made
 * detached (fsopen/fsmount), the copy is written into it while nothing can see it, it is made
 * read-only there when asked, and only then attached over the directory, by fd.
 *
 * The source is read through fds, one name at a time: every directory is opened with
 * O_NOFOLLOW|O_DIRECTORY below the destination's own fd (resolved inside the root), every file
 * with O_NOFOLLOW and checked to be a regular file once open, so a symlink of the image is copied
 * as a symlink and never followed, inside or out of the rootfs. The copy keeps each entry's type,
 * mode (set last, after the owner), owner and times; device nodes, fifos and sockets are made
 * with mknod. A directory of another filesystem (a mount below the destination) is copied as an
 * empty directory, as `cp -x` does.
 *
 * Same rules as sandbox.c: between clone and execve, no malloc, no stdio, no locks; the buffers
 * are on the stack and the recursion is bounded (ZE_SB_COPYUP_MAX_DEPTH).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-mount.h"

/* getdents64's record (the C library's struct dirent64 needs _LARGEFILE64_SOURCE) */
struct dirent64_raw {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* What one level of the walk holds on the stack: its getdents64 buffer (a record is at most
 * 280 bytes: a few per call). */
#define DIRENTS_BUFFER 2048
#define COPY_BUFFER 65536

static int copy_entry(int src, int dst, const char *name, dev_t dev, unsigned depth);

/* A regular file's bytes, by read and write through a stack buffer: the source is another
 * filesystem than the tmpfs, where copy_file_range answers EXDEV. */
static __attribute__((noinline)) int copy_file(int src, int dst, const char *name) {
        char buf[COPY_BUFFER];
        struct stat st;
        int in, out, r = 0;

        /* O_NONBLOCK: a fifo swapped in since the stat must not block the open */
        in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (in < 0)
                return -errno;
        if (fstat(in, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -ESTALE; /* the entry was replaced by another kind since it was looked at */
        if (r < 0) {
                close(in);
                return r;
        }
        out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0) {
                r = -errno;
                close(in);
                return r;
        }
        for (;;) {
                ssize_t n = read(in, buf, sizeof(buf)), w = 0;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : 0;
                        break;
                }
                while (w < n) {
                        ssize_t k = write(out, buf + w, (size_t) (n - w));

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                r = -errno;
                                break;
                        }
                        w += k;
                }
                if (r < 0)
                        break;
        }
        close(in);
        close(out);
        return r;
}

static __attribute__((noinline)) int copy_symlink(int src, int dst, const char *name) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);

        if (n < 0)
                return -errno;
        target[n] = '\0';
        return symlinkat(target, dst, name) < 0 ? -errno : 0;
}

/* Every entry of the directory src into the directory dst. */
static int copy_dir(int src, int dst, dev_t dev, unsigned depth) {
        char ents[DIRENTS_BUFFER] __attribute__((aligned(8)));

        for (;;) {
                long n = syscall(SYS_getdents64, src, ents, sizeof(ents));

                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                for (long off = 0; off < n;) {
                        const struct dirent64_raw *d = (const struct dirent64_raw *) (ents + off);
                        int r;

                        off += d->d_reclen;
                        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
                                continue;
                        r = copy_entry(src, dst, d->d_name, dev, depth);
                        if (r < 0)
                                return r;
                }
        }
}

/* A directory: made owner-only (nothing else is in the tmpfs yet), filled, its mode set after. */
static int copy_subdir(int src, int dst, const char *name, const struct stat *st, dev_t dev, unsigned depth) {
        int s, d, r;

        if (mkdirat(dst, name, 0700) < 0)
                return -errno;
        /* another filesystem below the destination (a mount point): its directory, empty */
        if (st->st_dev != dev)
                return 0;
        /* ENAMETOOLONG: nothing else of the copy answers it (one name is at most 255 bytes) */
        if (depth + 1 > ZE_SB_COPYUP_MAX_DEPTH)
                return -ENAMETOOLONG;
        s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0)
                return -errno;
        d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0) {
                r = -errno;
                close(s);
                return r;
        }
        r = copy_dir(s, d, dev, depth + 1);
        close(s);
        close(d);
        return r;
}

/* One entry, by its type, then its owner, mode (after the owner: chown clears set-id bits) and
 * times (last: making a directory's entries changed its mtime). */
static int copy_entry(int src, int dst, const char *name, dev_t dev, unsigned depth) {
        struct timespec t[2];
        struct stat st;
        int r;

        if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        switch (st.st_mode & S_IFMT) {
        case S_IFDIR:
                r = copy_subdir(src, dst, name, &st, dev, depth);
                break;
        case S_IFREG:
                r = copy_file(src, dst, name);
                break;
        case S_IFLNK:
                r = copy_symlink(src, dst, name);
                break;
        case S_IFCHR:
        case S_IFBLK:
        case S_IFIFO:
        case S_IFSOCK:
                r = mknodat(dst, name, (st.st_mode & S_IFMT) | 0600, st.st_rdev) < 0 ? -errno : 0;
                break;
        default:
                r = -EBADMSG;
        }
        if (r < 0)
                return r;
        if (fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISLNK(st.st_mode) && fchmodat(dst, name, st.st_mode & 07777, 0) < 0)
                return -errno;
        t[0] = st.st_atim;
        t[1] = st.st_mtim;
        return utimensat(dst, name, t, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* The mount flags of m as the attributes of a detached mount (the read-only one excepted: the
 * copy is written first), and the superblock's as fsconfig flags. */
static int configure(int fs, const struct ze_sb_mount *m, int root_mode, uint64_t *ret_attr) {
        static const struct {
                unsigned long flag;
                uint64_t attr;
        } attrs[] = {
                { MS_NOSUID, MOUNT_ATTR_NOSUID },           { MS_NODEV, MOUNT_ATTR_NODEV },
                { MS_NOEXEC, MOUNT_ATTR_NOEXEC },           { MS_NOATIME, MOUNT_ATTR_NOATIME },
                { MS_STRICTATIME, MOUNT_ATTR_STRICTATIME }, { MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
                { MS_RELATIME, MOUNT_ATTR_RELATIME },       { MS_RDONLY, 0 },
        };
        unsigned long rest = m->flags;
        char data[4096], mode[8];
        uint64_t attr = 0;

        for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
                if (rest & attrs[i].flag) {
                        attr |= attrs[i].attr;
                        rest &= ~attrs[i].flag;
                }
        if (rest & MS_SYNCHRONOUS && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "sync", NULL, 0) < 0)
                return -errno;
        if (rest & MS_DIRSYNC && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "dirsync", NULL, 0) < 0)
                return -errno;
        if (rest & ~(MS_SYNCHRONOUS | MS_DIRSYNC))
                return -EINVAL; /* MS_REMOUNT and the like: no meaning for a new tmpfs */
        /* the source mountinfo shows, as mount(2) would give it */
        if (m->source && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
                return -errno;
        /* the directory's mode, as runc gives it, unless the options say another (later wins) */
        if (root_mode >= 0) {
                mode[0] = '0';
                for (int i = 0; i < 4; i++)
                        mode[1 + i] = (char) ('0' + ((root_mode >> (3 * (3 - i))) & 7));
                mode[5] = '\0';
                if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
                        return -errno;
        }
        /* the options the kernel parses, one fsconfig each, as mount(2) splits them */
        if (m->data && m->data[0]) {
                size_t n = strlen(m->data);

                if (n >= sizeof(data))
                        return -E2BIG;
                memcpy(data, m->data, n + 1);
                for (char *opt = data, *next; opt; opt = next) {
                        char *eq;

                        next = strchr(opt, ',');
                        if (next)
                                *next++ = '\0';
                        if (!*opt)
                                continue;
                        eq = strchr(opt, '=');
                        if (eq)
                                *eq++ = '\0';
                        if (syscall(SYS_fsconfig, fs, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, opt, eq, 0) < 0)
                                return -errno;
                }
        }
        *ret_attr = attr;
        return 0;
}

int ze_sb_tmpfs_copyup(const struct ze_sb_mount *m, int target, bool existed, enum ze_step *ret_step) {
        struct stat st;
        int src, fs, mnt = -1, dst = -1, r = 0;
        uint64_t attr = 0;

        *ret_step = ZE_STEP_MOUNT;
        src = openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (src < 0)
                return -errno;
        if (fstat(src, &st) < 0) {
                r = -errno;
                close(src);
                return r;
        }
        fs = (int) syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                r = -errno;
        if (r == 0)
                r = configure(fs, m, existed ? (int) (st.st_mode & 07777) : -1, &attr);
        if (r == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        if (r == 0 && (mnt = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attr)) < 0)
                r = -errno;
        if (fs >= 0)
                close(fs);
        if (r == 0 && (dst = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                r = -errno;
        if (r == 0) {
                r = copy_dir(src, dst, st.st_dev, 0);
                if (r < 0)
                        *ret_step = ZE_STEP_COPYUP;
        }
        if (r == 0 && (m->flags & MS_RDONLY)) {
                struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };

                if (syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                        r = -errno;
        }
        if (r == 0 &&
            syscall(SYS_move_mount, mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                r = -errno;
        if (dst >= 0)
                close(dst);
        if (mnt >= 0)
                close(mnt);
        close(src);
        return r;
}
