/* SPDX-License-Identifier: MIT */
/*
 * The library's file helpers, below every part that writes: one write of a value to a file of a
 * directory (cgroup and /proc files want it whole), a directory and its missing parents.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"

int zct_write_at(const char *dir, const char *file, const char *value) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = strlen(value);

        if (asprintf(&p, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, value, n) != (ssize_t) n)
                return negative_errno();
        return 0;
}

int zct_mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                bool end = *s == '\0';
                if (*s != '/' && !end)
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (end)
                        return 0;
                *s = '/';
        }
}
