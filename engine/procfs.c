/* SPDX-License-Identifier: MIT */
/*
 * A procfs of our own and files opened below it without following anything. See procfs.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "procfs.h"

static bool on_procfs(int fd) {
        struct statfs fs;

        return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

int ze_procfs_open(void) {
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

int ze_procfs_open_at(int proc_fd, const char *path, int flags) {
        struct open_how how = { .flags = (unsigned) flags | O_CLOEXEC | O_NOCTTY,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                           RESOLVE_NO_XDEV };
        int fd;

        while (*path == '/')
                path++;
        fd = (int) syscall(SYS_openat2, proc_fd, path, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        if (!on_procfs(fd)) {
                close(fd);
                return -EXDEV;
        }
        return fd;
}
