/* SPDX-License-Identifier: MIT */
/* The path a task's process executed, from /proc; see task-exe.c. */
#pragma once

#include <sys/types.h>

/* The target of /proc/pid/exe (malloc'd), or NULL when it cannot be known: the process has
 * exited, or the link is unreadable. pidfd is the process's. */
char *zd_task_exe_path(pid_t pid, int pidfd);
