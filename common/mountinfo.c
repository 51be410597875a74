/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mountinfo.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s) {
        char *o = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 3;
                } else
                        *o++ = *s;
        }
        *o = 0;
}

/* One line (up to eol): fn's answer for a procfs mount outside /proc, else 0. */
static int procfs_line(const char *line, const char *eol, int (*fn)(const char *mount_point, void *userdata),
                       void *userdata) {
        const char *sep = strstr(line, " - ");
        char mp[4096], fstype[64];

        /* id parent major:minor root mountpoint options... - fstype source superopts */
        if (!sep || sep >= eol || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
            sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "proc") != 0)
                return 0;
        unescape_octal(mp);
        if (strcmp(mp, "/proc") != 0 && strncmp(mp, "/proc/", 6) != 0)
                return fn(mp, userdata);
        return 0;
}

int zc_mountinfo_procfs_elsewhere(int fd, int (*fn)(const char *mount_point, void *userdata), void *userdata) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int r = 0;
        FILE *f;

        if (fd < 0)
                return -EBADF;
        f = fdopen(fd, "re");
        if (!f) {
                r = -errno;
                close(fd);
                return r;
        }
        while (r == 0 && (n = getline(&line, &cap, f)) > 0)
                r = procfs_line(line, line + n, fn, userdata);
        free(line);
        fclose(f);
        return r;
}

int zc_mountinfo_procfs_elsewhere_text(const char *text, int (*fn)(const char *mount_point, void *userdata),
                                       void *userdata) {
        int r = 0;

        for (const char *l = text, *eol; r == 0 && *l; l = *eol ? eol + 1 : eol) {
                eol = strchrnul(l, '\n');
                r = procfs_line(l, eol, fn, userdata);
        }
        return r;
}

int zc_mountinfo_mount_point(const char *text, unsigned long long id, char *ret, size_t size) {
        for (const char *l = text, *eol; *l; l = *eol ? eol + 1 : eol) {
                unsigned long long v;
                char mp[4096];

                eol = strchrnul(l, '\n');
                /* id parent major:minor root mountpoint ... */
                if (sscanf(l, "%llu %*s %*s %*s %4095s", &v, mp) != 2 || v != id)
                        continue;
                unescape_octal(mp);
                if (strlen(mp) >= size)
                        return -ENAMETOOLONG;
                strcpy(ret, mp);
                return 0;
        }
        return -ENOENT;
}
