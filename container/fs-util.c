/* SPDX-License-Identifier: MIT */
/*
 * The library's file helpers, below every part that writes: one write of a value to a file of a
 * directory (cgroup and /proc files want it whole), a directory and its missing parents, a copy
 * of a file.
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

int zct_copy_file(const char *from, const char *to, mode_t mode) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        char buf[65536];
        ssize_t n;

        in = open(from, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (in < 0)
                return -errno;
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (out < 0)
                return -errno;
        while ((n = read(in, buf, sizeof(buf))) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || write(out, buf, (size_t) n) != n)
                        return negative_errno();
        }
        return 0;
}
