/* SPDX-License-Identifier: MIT */
/*
 * A container process's AppArmor profile (process.apparmorProfile, exec's --apparmor): "exec
 * PROFILE" written to the thread's exec attribute file; the kernel applies it at execve.
 *
 * The file is opened first, before a namespace is joined or anything of the container is mounted,
 * so that neither the image nor a volume over /proc, nor a mount over the file itself, can take
 * the write and leave the container unconfined (the CVE-2019-16884 and CVE-2025-52881 classes):
 * through a procfs instance of our own, no symlink, magic link or mount crossed, the file checked
 * to be on procfs (procfs.h). The thread's directory in that instance is what its "thread-self"
 * link says. Raw system calls only.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "sandbox.h"

int ze_sb_lsm_open(const char *name) {
        static const char attr[] = "/attr/";
        size_t len, name_len = strlen(name);
        char path[128];
        int proc, fd;
        ssize_t n;

        proc = ze_procfs_open();
        if (proc < 0)
                return proc;
        n = readlinkat(proc, "thread-self", path, sizeof(path));
        if (n < 0 || (size_t) n + sizeof(attr) + name_len > sizeof(path)) {
                fd = n < 0 ? -errno : -ENAMETOOLONG;
                close(proc);
                return fd;
        }
        len = (size_t) n;
        memcpy(path + len, attr, sizeof(attr) - 1);
        memcpy(path + len + sizeof(attr) - 1, name, name_len + 1);
        fd = ze_procfs_open_at(proc, path, O_WRONLY);
        close(proc);
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
