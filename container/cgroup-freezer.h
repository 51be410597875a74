/* SPDX-License-Identifier: MIT */
/*
 * The cgroup v1 freezer's freeze, retried as runc retries it (cgroup-freezer.c): pure, over the
 * three operations cgroup.c gives it on freezer.state, so that a test can hold the cgroup in
 * FREEZING as a loaded kernel does.
 */
#pragma once

#include <stdbool.h>

enum zct_freezer_state {
        ZCT_FREEZER_THAWED,
        ZCT_FREEZER_FREEZING,
        ZCT_FREEZER_FROZEN,
};

struct zct_freezer_io {
        int (*write)(void *userdata, bool frozen); /* "FROZEN" or "THAWED" to freezer.state: 0 or -errno */
        int (*read)(void *userdata);               /* freezer.state: enum zct_freezer_state, or -errno */
        void (*pause)(void *userdata, unsigned usec);
        void *userdata;
};

/* How many times FROZEN is written before the freeze gives up. */
#define ZCT_FREEZER_V1_TRIES 1000

/* Writes FROZEN until the state reads FROZEN: 0. Every 50th try thaws first and pauses 10 ms,
 * every 25th pauses 10 us before reading back (at most about 0.2 s of pauses in all). A state
 * that reads THAWED right after FROZEN was written (someone thawed it) is -EAGAIN, still
 * FREEZING after every try -EBUSY, a failed write or read its errno: on each failure the cgroup
 * is thawed again, never left half frozen. */
int zct_freezer_v1_freeze(const struct zct_freezer_io *io);
