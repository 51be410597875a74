/* SPDX-License-Identifier: MIT */
/*
 * The runtime's writes into procfs (id maps, oom_score_adj, sysctls) go through a procfs of its
 * own, never by a path of the mount namespace it runs in: a mount another container or a volume
 * with shared propagation put over /proc, /proc/sys or one of their files (the CVE-2025-52881
 * class) would otherwise take the write, and what it is written to would be the attacker's pick.
 *
 * The handle and the files below it are the engine's (engine/procfs.h, shared with a container
 * process's AppArmor step): a fresh procfs instance made with fsopen/fsmount, detached, or where
 * that is refused (rootless) the mount namespace's /proc checked to be procfs; each file opened
 * with no symlink followed and no mount crossed, and checked to be on procfs before one write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "libcontainer.h"
#include "util.h"

int zct_procfs_open(void) {
        return ze_procfs_open();
}

int zct_procfs_write(int proc_fd, const char *path, const char *value) {
        size_t n = strlen(value);
        ssize_t k;
        int fd, r = 0;

        fd = ze_procfs_open_at(proc_fd, path, O_WRONLY);
        if (fd < 0)
                return fd;
        if ((k = write(fd, value, n)) != (ssize_t) n)
                r = k < 0 ? -errno : -EIO;
        close(fd);
        return r;
}

int zct_procfs_write_pid(pid_t pid, const char *file, const char *value) {
        _cleanup_close_ int proc = zct_procfs_open();
        char path[64];

        if (proc < 0)
                return proc;
        snprintf(path, sizeof(path), "%d/%s", (int) pid, file);
        return zct_procfs_write(proc, path, value);
}
