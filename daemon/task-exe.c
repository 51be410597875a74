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
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "task-exe.h"

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
