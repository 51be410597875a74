/* SPDX-License-Identifier: MIT */
/*
 * Step 3 of the sandbox-setup module (sandbox.h): paths of the container resolved inside its
 * root, and what is missing of them made there. Every lookup is openat2(RESOLVE_IN_ROOT) from the
 * rootfs's fd: a symlink of the image resolves as if the rootfs were "/", never to the host.
 *
 * Same rules as sandbox.c: between clone and execve, no malloc, no stdio, no locks; paths are
 * built in the struct's path_buf or on the stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-mount.h"

/* The symlinks one path may lead through while missing directories are made: the kernel's own
 * limit for one lookup (MAXSYMLINKS). */
#define MAX_DANGLING_LINKS 40

static int copy_path(char *buf, size_t len, const char *path) {
        size_t n = strlen(path);

        if (n + 1 > len)
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        return 0;
}

int ze_sb_open_resolved(int root_fd, const char *path, int flags, uint64_t resolve) {
        struct open_how how = { .flags = (uint64_t) (O_PATH | O_CLOEXEC | flags),
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve };
        long fd;

        while (*path == '/')
                path++;
        fd = syscall(SYS_openat2, root_fd, *path ? path : ".", &how, sizeof(how));
        return fd < 0 ? -errno : (int) fd;
}

int ze_sb_number_path(char *buf, size_t len, const char *prefix, unsigned n) {
        size_t np = strlen(prefix), nd = 0;
        char digits[12];

        do {
                digits[nd++] = (char) ('0' + n % 10);
                n /= 10;
        } while (n && nd < sizeof(digits));
        if (np + nd + 1 > len)
                return -ENAMETOOLONG;
        memcpy(buf, prefix, np);
        for (size_t i = 0; i < nd; i++)
                buf[np + i] = digits[nd - 1 - i];
        buf[np + nd] = '\0';
        return 0;
}

/* The component of buf that ends at buf[i] ('\0' there now) is missing: when it is a symlink
 * (dangling: what it names does not exist yet), buf becomes the path through its target, the
 * rest of the path (saved, then buf + i + 1) kept: "a/lnk" + "/b" with lnk -> "/var/x" is
 * "var/x/b", with lnk -> "../y" it is "a/../y/b", left for the kernel to resolve inside the root
 * as it would resolve the link. 1 when spliced, 0 when the component is no symlink. */
static int splice_link(int parent, const char *name, char *buf, size_t buf_len, size_t i, char saved) {
        char target[PATH_MAX], next[PATH_MAX];
        struct statfs fs;
        size_t keep = 0, n;
        ssize_t k;

        /* a link of procfs is no path to follow: its magic links (/proc/self/fd/N) read as the
         * host's path of whatever the fd is, and what they name changes with the fds opened here */
        if (fstatfs(parent, &fs) < 0)
                return -errno;
        if (fs.f_type == PROC_SUPER_MAGIC)
                return 0;
        k = readlinkat(parent, name, target, sizeof(target) - 1);
        if (k < 0)
                return errno == EINVAL || errno == ENOENT ? 0 : -errno;
        target[k] = '\0';
        if (target[0] != '/') {
                /* relative to the directory that holds the link: the prefix up to its name */
                keep = (size_t) (name - buf);
                memcpy(next, buf, keep);
        }
        n = (size_t) k;
        if (keep + n + 1 > sizeof(next))
                return -ENAMETOOLONG;
        memcpy(next + keep, target, n);
        next[keep + n] = '\0';
        if (saved) {
                /* the rest starts with the '/' that was at buf[i] */
                size_t rest = strlen(buf + i + 1);

                if (keep + n + 1 + rest + 1 > sizeof(next))
                        return -ENAMETOOLONG;
                next[keep + n] = '/';
                memcpy(next + keep + n + 1, buf + i + 1, rest + 1);
        }
        {
                const char *p = next;

                while (*p == '/')
                        p++;
                return copy_path(buf, buf_len, *p ? p : ".") < 0 ? -ENAMETOOLONG : 1;
        }
}

int ze_sb_make_in_root(const struct ze_sandbox *sb, int root_fd, const char *dest, bool dir) {
        char *buf = sb->path_buf;
        unsigned links = 0;
        size_t len;
        int r;

        while (*dest == '/')
                dest++;
        r = copy_path(buf, sb->path_buf_len, *dest ? dest : ".");
        if (r < 0)
                return r;
restart:
        len = strlen(buf);
        for (size_t i = 1; i <= len; i++) {
                bool last = i == len;
                char saved = buf[i], *slash;
                const char *name;
                int fd, parent;

                if (buf[i] != '/' && !last)
                        continue;
                buf[i] = '\0';
                fd = ze_sb_open_resolved(root_fd, buf, 0, 0);
                if (fd >= 0 || fd != -ENOENT) {
                        buf[i] = saved;
                        if (fd < 0)
                                return fd;
                        close(fd);
                        continue;
                }
                slash = strrchr(buf, '/');
                if (slash) {
                        *slash = '\0';
                        parent = ze_sb_open_resolved(root_fd, buf, O_DIRECTORY, 0);
                        *slash = '/';
                        name = slash + 1;
                } else {
                        parent = ze_sb_open_resolved(root_fd, ".", O_DIRECTORY, 0);
                        name = buf;
                }
                if (parent < 0) {
                        buf[i] = saved;
                        return parent;
                }
                /* a symlink to what does not exist: made where the link leads, inside the root, as
                 * runc makes it */
                r = splice_link(parent, name, buf, sb->path_buf_len, i, saved);
                if (r > 0) {
                        close(parent);
                        if (++links > MAX_DANGLING_LINKS)
                                return -ELOOP;
                        goto restart;
                }
                if (r == 0 && last && !dir) {
                        fd = openat(parent, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
                        r = fd < 0 && errno != EEXIST ? -errno : 0;
                        if (fd >= 0)
                                close(fd);
                } else if (r == 0)
                        r = mkdirat(parent, name, 0755) < 0 && errno != EEXIST ? -errno : 0;
                close(parent);
                buf[i] = saved;
                if (r < 0)
                        return r;
        }
        return ze_sb_open_resolved(root_fd, buf, 0, 0);
}
