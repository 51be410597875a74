/* SPDX-License-Identifier: MIT */
/*
 * A container process's AppArmor profile (process.apparmorProfile, exec's --apparmor): "exec
 * PROFILE" written to the thread's exec attribute file; the kernel applies it at execve.
 *
 * The file is opened first, before a namespace is joined or anything of the container is mounted,
 * so that neither the image nor a volume over /proc, nor a mount over the file itself, can take
 * the write and leave the container unconfined (the CVE-2019-16884 and CVE-2025-52881 classes):
 * through a procfs instance of our own (fsopen/fsmount: detached, nobody can mount on it; where
 * that is refused, rootless, the runtime's /proc checked to be procfs), with openat2 crossing no
 * symlink, magic link or mount, and the file checked to be on procfs once open. The thread's
 * directory in that instance is what its "thread-self" link says. Raw system calls only.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sandbox.h"

static bool on_procfs(int fd) {
        struct statfs fs;

        return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

static int procfs_instance(void) {
        int fs, mnt = -EBADF;

        fs = (int) syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
        if (fs >= 0) {
                if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
                        mnt = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                close(fs);
        }
        if (mnt < 0) {
                struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };

                mnt = (int) syscall(SYS_openat2, AT_FDCWD, "/proc", &how, sizeof(how));
                if (mnt < 0)
                        return -errno;
        }
        if (!on_procfs(mnt)) {
                close(mnt);
                return -EXDEV;
        }
        return mnt;
}

int ze_sb_lsm_open(const char *name) {
        static const char attr[] = "/attr/";
        struct open_how how = { .flags = O_WRONLY | O_CLOEXEC | O_NOCTTY,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                           RESOLVE_NO_XDEV };
        size_t len, name_len = strlen(name);
        char path[128];
        int proc, fd, r;
        ssize_t n;

        proc = procfs_instance();
        if (proc < 0)
                return proc;
        n = readlinkat(proc, "thread-self", path, sizeof(path));
        if (n < 0 || (size_t) n + sizeof(attr) + name_len > sizeof(path)) {
                r = n < 0 ? -errno : -ENAMETOOLONG;
                close(proc);
                return r;
        }
        len = (size_t) n;
        memcpy(path + len, attr, sizeof(attr) - 1);
        memcpy(path + len + sizeof(attr) - 1, name, name_len + 1);
        fd = (int) syscall(SYS_openat2, proc, path, &how, sizeof(how));
        r = fd < 0 ? -errno : 0;
        close(proc);
        if (fd < 0)
                return r;
        if (!on_procfs(fd)) {
                close(fd);
                return -EXDEV;
        }
        return fd;
}

int ze_sb_lsm_write(int fd, const char *text) {
        size_t len = strlen(text);
        ssize_t n;
        int r;

        do
                n = write(fd, text, len);
        while (n < 0 && errno == EINTR);
        r = n < 0 ? -errno : (size_t) n == len ? 0 : -EIO;
        close(fd);
        return r;
}
