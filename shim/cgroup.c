/* SPDX-License-Identifier: MIT */
/* The cgroup v2 freezer of the container's cgroup. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* The cgroup v2 path of pid ("0::/a/b" in /proc/PID/cgroup), malloc'd. */
static int cgroup_of(pid_t pid, char **ret) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        FILE *f;
        int r = -EOPNOTSUPP;

        if (asprintf(&path, "/proc/%d/cgroup", (int) (pid > 0 ? pid : getpid())) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (getline(&line, &size, f) > 0) {
                if (strncmp(line, "0::", 3) != 0)
                        continue;
                line[strcspn(line, "\n")] = 0;
                *ret = strdup(line + 3);
                r = *ret ? 0 : -ENOMEM;
                break;
        }
        fclose(f);
        return r;
}

int zs_cgroup_freeze(pid_t init, bool frozen) {
        _cleanup_free_ char *cg = NULL, *own = NULL, *file = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (init <= 0)
                return -ESRCH;
        r = cgroup_of(init, &cg);
        if (r < 0)
                return r;
        r = cgroup_of(0, &own);
        if (r < 0)
                return r;
        if (streq(cg, "/") || streq(cg, own))
                return -EPERM;
        if (asprintf(&file, "/sys/fs/cgroup%s/cgroup.freeze", cg) < 0)
                return -ENOMEM;
        fd = open(file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, frozen ? "1" : "0", 1) != 1)
                return negative_errno();
        return 0;
}
