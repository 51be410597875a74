/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc-children.h"

size_t proc_children(pid_t parent, pid_t *pids, size_t max) {
        size_t n = 0;
        DIR *dir = opendir("/proc");
        struct dirent *de;

        if (!dir)
                return 0;
        while ((de = readdir(dir)) && n < max) {
                char path[64], buf[512], state;
                int pid = atoi(de->d_name), ppid, fd;
                ssize_t len;

                if (pid <= 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/stat", pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                len = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (len <= 0)
                        continue;
                buf[len] = 0;
                /* "pid (comm) state ppid ...": comm may hold anything, so parse after its last ')' */
                char *p = strrchr(buf, ')');
                if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == parent && state != 'Z')
                        pids[n++] = pid;
        }
        closedir(dir);
        return n;
}
