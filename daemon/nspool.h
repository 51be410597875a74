/* SPDX-License-Identifier: MIT */
/*
 * Namespaces made ahead for containers (nspool.c): sets of a fresh network, IPC and UTS
 * namespace, each set used by one container at most, refilled off the critical path.
 */
#pragma once

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "pidref.h"

#define ZD_NSPOOL_SIZE 2 /* sets kept ready */

struct zd_daemon;

struct zd_nspool {
        bool enabled;                /* privileged, and not ZYGOTE_DISABLE_FEATURES=namespace_pool */
        int sets[ZD_NSPOOL_SIZE][3]; /* net, ipc, uts */
        size_t n;                    /* sets ready */
        int maker_fd;                /* the maker's socket while it runs, or -EBADF */
        struct zc_pidref maker;
        ev_io watch;
        unsigned long made, used, fallbacks;
};

void zd_nspool_init(struct zd_daemon *d);
/* One set (net, ipc, uts fds, the caller's now), 0; -ENOENT when none is ready (the pool is
 * refilled; the container makes its own). */
int zd_nspool_take(struct zd_daemon *d, int ret[3]);
/* Sets back to the pool that a container did not use (taken), or closed when it is full. */
void zd_nspool_give_back(struct zd_daemon *d, int set[3]);
void zd_nspool_free(struct zd_daemon *d);
