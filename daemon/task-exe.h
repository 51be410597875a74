/* SPDX-License-Identifier: MIT */
/* The path a task's process executed, from /proc; see task-exe.c. */
#pragma once

#include <json-c/json.h>
#include <sys/types.h>

/* The target of /proc/pid/exe (malloc'd), or NULL when it cannot be known: the process has
 * exited, or the link is unreadable. pidfd is the process's. */
char *zd_task_exe_path(pid_t pid, int pidfd);
/* /proc/pid/cmdline as an array of strings, of at most ZD_TASK_CMDLINE_MAX bytes (the arguments
 * that fit whole), or NULL as zd_task_exe_path: a container's process, whose argv the daemon
 * never saw (the worker reads config.json), as ps shows it. What the process says: it may
 * rewrite its own cmdline. */
#define ZD_TASK_CMDLINE_MAX 4096
json_object *zd_task_cmdline(pid_t pid, int pidfd);
