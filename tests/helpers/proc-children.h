/* SPDX-License-Identifier: MIT */
/*
 * The live (not zombie) children of a process, read from /proc/PID/stat (this kernel may lack
 * /proc/PID/task/TID/children): bounded-run.c and testutil.c both look for what a test left.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Fills pids with at most max children of parent that have not exited; returns how many. */
size_t proc_children(pid_t parent, pid_t *pids, size_t max);
