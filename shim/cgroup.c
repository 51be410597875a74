/* SPDX-License-Identifier: MIT */
/* The container's cgroup: where it is, its freezer. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Whether the comma-separated list has the controller. */
static bool has_controller(const char *list, size_t n, const char *name) {
        size_t k = strlen(name);

        for (const char *p = list; p < list + n;) {
                size_t m = strcspn(p, ",:");
                if (m == k && strncmp(p, name, k) == 0)
                        return true;
                p += m + 1;
        }
        return false;
}

/* pid's cgroup in the v2 hierarchy ("0::/a/b") or, with a v1 controller, in that controller's
 * ("6:freezer:/a/b"), malloc'd. */
static int cgroup_of(pid_t pid, const char *controller, char **ret) {
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
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

                if (!c2)
                        continue;
                if (controller ? !has_controller(c1 + 1, (size_t) (c2 - c1 - 1), controller)
                               : strncmp(line, "0::", 3) != 0)
                        continue;
                c2[1 + strcspn(c2 + 1, "\n")] = 0;
                *ret = strdup(c2 + 1);
                r = *ret ? 0 : -ENOMEM;
                break;
        }
        fclose(f);
        return r;
}

bool zs_cgroup_v2(void) {
        return access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
}

int zs_cgroup_dir(pid_t pid, const char *controller, char **ret) {
        _cleanup_free_ char *cg = NULL, *own = NULL;
        bool v1 = !zs_cgroup_v2();
        int r;

        if (pid <= 0)
                return -ESRCH;
        r = cgroup_of(pid, v1 ? controller : NULL, &cg);
        if (r < 0)
                return r;
        r = cgroup_of(0, v1 ? controller : NULL, &own);
        if (r < 0)
                return r;
        if (streq(cg, "/") || streq(cg, own))
                return -EPERM;
        if (v1 ? asprintf(ret, "/sys/fs/cgroup/%s%s", controller, cg) < 0 : asprintf(ret, "/sys/fs/cgroup%s", cg) < 0)
                return -ENOMEM;
        return 0;
}

int zs_cgroup_freeze(pid_t init, bool frozen) {
        _cleanup_free_ char *dir = NULL, *file = NULL;
        _cleanup_close_ int fd = -EBADF;
        bool v2 = zs_cgroup_v2();
        const char *value = v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
        size_t n = strlen(value);
        int r;

        r = zs_cgroup_dir(init, "freezer", &dir);
        if (r < 0)
                return r;
        if (asprintf(&file, "%s/%s", dir, v2 ? "cgroup.freeze" : "freezer.state") < 0)
                return -ENOMEM;
        fd = open(file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        if (write(fd, value, n) != (ssize_t) n)
                return negative_errno();
        return 0;
}
