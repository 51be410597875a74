/* SPDX-License-Identifier: MIT */
/*
 * A worker plan for the tests of the worker and of the reference (child.h). Header-only, so that
 * testutil does not link the worker module.
 */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "child.h"

/* A plan that runs argv with envp and nothing else: no status, hold or reference fd, no ids,
 * capabilities or filter; path_buf is the caller's scratch buffer. */
static inline void tu_plan_init(struct zy_plan *p, char *const *argv, char *const *envp, char *path_buf,
                                size_t path_buf_len) {
        *p = (struct zy_plan){
                .argv = argv,
                .envp = envp,
                .status_fd = -EBADF,
                .hold_fd = -EBADF,
                .ref_pidfd = -EBADF,
                .filter_mode = ZY_FILTER_NONE,
                .path_buf = path_buf,
                .path_buf_len = path_buf_len,
        };
}
