/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountinfo, as far as zygoted, its pid namespaces' inits and the containerd shim read it.
 */
#pragma once

#include <stddef.h>

/* Calls fn for every procfs mount of the mountinfo file open at fd (taken) that is neither on
 * /proc nor beneath it, with its mount point unescaped: such a procfs shows every process of the
 * pid namespace it was mounted in, whatever namespace its viewer is in. Mount points are listed
 * in mountinfo's order (a parent before what lies beneath it). A nonzero return of fn stops the
 * walk and is returned; else 0, or a negative errno. */
int zc_mountinfo_procfs_elsewhere(int fd, int (*fn)(const char *mount_point, void *userdata), void *userdata);

/* The same over a mountinfo text already read. */
int zc_mountinfo_procfs_elsewhere_text(const char *text, int (*fn)(const char *mount_point, void *userdata),
                                       void *userdata);

/* The mount point, unescaped, of mount id in a mountinfo text, into ret: 0, -ENOENT when no line
 * has that id, -ENAMETOOLONG when it does not fit. */
int zc_mountinfo_mount_point(const char *text, unsigned long long id, char *ret, size_t size);
