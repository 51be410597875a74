/* SPDX-License-Identifier: MIT */
/*
 * Where a container worker's seccomp program comes from (container-filter.c): the daemon's
 * filter cache as the fork left it, and the clone tier for containers: when the program is, byte
 * for byte, the program a profile's reference process holds in the clone tier, the container's
 * processes clone that reference's filter (SECCOMP_CLONE_FILTER) instead of loading the program.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "libcontainer.h"

struct zd_daemon;

/* The worker's view: the references it may clone from, their pidfds kept at fixed numbers. */
struct zd_container_filter {
        struct zd_daemon *d;
        struct zd_entry **entries; /* profiles in the clone tier, whose reference is up */
        int *fds;                  /* their reference pidfds, as the daemon holds them; then kept */
        size_t n;
        bool cloned; /* a reference was handed to the container's process */
};

/* In the worker, before its fds are moved: the entries of d in the clone tier with a running
 * reference and a program without a listener, and their pidfds (f->fds, the daemon's numbers, to
 * be kept by the caller). Without SECCOMP_CLONE_FILTER (or with clone_filter in
 * ZYGOTE_DISABLE_FEATURES, or --tier load or inherit) none: the container loads its program. */
int zd_container_filter_init(struct zd_daemon *d, struct zd_container_filter *f);
/* The fds have been moved: the i-th kept pidfd is now first + i. */
void zd_container_filter_moved(struct zd_container_filter *f, int first);
/* The struct zct_filter_source of the worker's context: the cache, then the clone tier. */
struct zct_filter_source zd_container_filter_source(struct zd_container_filter *f);
