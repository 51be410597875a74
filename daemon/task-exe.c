/* SPDX-License-Identifier: MIT */
/*
 * The path a task executed, for the audit trail: the name as given (argv[0], "true") is not what
 * ran; /proc/pid/exe is, after the PATH search and the symlinks. Read when the status pipe says
 * exec happened, and trusted only if the pidfd says the process has not exited after the read:
 * until then its pid cannot have been reused by another process. A script gives its
 * interpreter, which is what the kernel executed; a program that has already exec'd again gives
 * the later one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "task-exe.h"
#include "util.h"

char *zd_task_exe_path(pid_t pid, int pidfd) {
        char path[64], target[PATH_MAX];
        if (pid <= 0 || pidfd < 0)
                return NULL;
        snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        /* the pid still named that task after the read (an adopted task is not our child) */
        if (n <= 0 || pidfd_kill(pidfd, 0) == -ESRCH)
                return NULL;
        target[n] = 0;
        return strdup(target);
}

json_object *zd_task_cmdline(pid_t pid, int pidfd) {
        char path[64], buf[ZD_TASK_CMDLINE_MAX + 1];
        _cleanup_close_ int fd = -EBADF;
        json_object *argv;
        ssize_t n;

        if (pid <= 0 || pidfd < 0)
                return NULL;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf));
        if (n <= 0 || pidfd_kill(pidfd, 0) == -ESRCH)
                return NULL;
        /* longer than the bound: the arguments that fit whole */
        if (n > ZD_TASK_CMDLINE_MAX) {
                while (n > 0 && buf[n - 1] != '\0')
                        n--;
        } else if (buf[n - 1] != '\0')
                buf[n++] = '\0';
        argv = json_object_new_array();
        for (ssize_t i = 0; argv && i < n; i += (ssize_t) strlen(buf + i) + 1)
                json_object_array_add(argv, json_object_new_string(buf + i));
        return argv;
}
