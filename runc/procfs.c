/* SPDX-License-Identifier: MIT */
/*
 * The runtime's writes into procfs (id maps, oom_score_adj, sysctls) go through a procfs of its
 * own, never by a path of the mount namespace it runs in: a mount another container or a volume
 * with shared propagation put over /proc, /proc/sys or one of their files (the CVE-2025-52881
 * class) would otherwise take the write, and what it is written to would be the attacker's pick.
 *
 * The handle is a fresh procfs instance made with fsopen/fsmount: detached, nobody can mount on
 * it. Where that is refused (no CAP_SYS_ADMIN over our pid namespace: rootless), the mount
 * namespace's /proc, checked to be procfs. Either way each file is opened below it with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV): no symlink
 * followed, no mount crossed (a bind over the file or a directory on its way is refused), and the
 * file itself checked to be on procfs before one write.
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

#include "runtime.h"
#include "util.h"

static bool on_procfs(int fd) {
        struct statfs fs;

        return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

int zrc_procfs_open(void) {
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

int zrc_procfs_write(int proc_fd, const char *path, const char *value) {
        struct open_how how = { .flags = O_WRONLY | O_CLOEXEC | O_NOCTTY,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                           RESOLVE_NO_XDEV };
        size_t n = strlen(value);
        ssize_t k;
        int fd, r = 0;

        while (*path == '/')
                path++;
        fd = (int) syscall(SYS_openat2, proc_fd, path, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        if (!on_procfs(fd))
                r = -EXDEV;
        else if ((k = write(fd, value, n)) != (ssize_t) n)
                r = k < 0 ? -errno : -EIO;
        close(fd);
        return r;
}
