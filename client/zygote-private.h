/* SPDX-License-Identifier: MIT */
/*
 * libzygote's internals shared by its source files (not installed).
 */
#pragma once

#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "zygote.h"
#include "../daemon/util.h"

/* The shared library exports only what zygote.h declares; every definition of a public
 * function carries this (the library is built with -fvisibility=hidden). */
#ifndef _public_
#define _public_ __attribute__((visibility("default")))
#endif

/* util.h may define it (a macro) or not yet; either way one definition. */
#ifndef streq
#define streq(a, b) (strcmp((a), (b)) == 0)
#endif

static inline void *lzy_mfree(void *p) {
        free(p);
        return NULL;
}

static inline void lzy_json_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* A task's stdio as a Spawn fd map: fd i (0, 1, 2) on override[i] where that is >= 0 (override
 * may be NULL), else on our own fd i if it is open; a closed one is left out, so the task gets
 * /dev/null there. Returns the number of entries. Header-only, so that zygote-shim, which links
 * only what zygote.h exports, shares it with launchctl. */
static inline size_t zy_stdio_map(struct zy_fd_map map[static 3], const int override[3]) {
        size_t n = 0;

        for (int i = 0; i < 3; i++) {
                int fd = override && override[i] >= 0 ? override[i] : i;

                if (fd != i || fcntl(i, F_GETFD) >= 0)
                        map[n++] = (struct zy_fd_map) { .fd = fd, .target = i };
        }
        return n;
}

/* The command-line options launchctl run and zygote-shim share, each one field of
 * zy_spawn_opts: ZY_SPAWN_OPTIONS goes into their getopt_long tables, zy_spawn_option() stores
 * the argument. Their own options are numbered from ZY_OPT_OWN. Header-only, as above. */
enum { ZY_OPT_PROFILE = 256, ZY_OPT_USER, ZY_OPT_GROUP, ZY_OPT_CWD, ZY_OPT_ID, ZY_OPT_OWN };
#define ZY_SPAWN_OPTIONS                                                                        \
        { "profile", required_argument, NULL, ZY_OPT_PROFILE },                                 \
        { "user", required_argument, NULL, ZY_OPT_USER },                                       \
        { "group", required_argument, NULL, ZY_OPT_GROUP },                                     \
        { "cwd", required_argument, NULL, ZY_OPT_CWD },                                         \
        { "id", required_argument, NULL, ZY_OPT_ID }

/* Stores arg where option o belongs in so; false when o is not a shared option. */
static inline bool zy_spawn_option(struct zy_spawn_opts *so, int o, const char *arg) {
        const char **f = o == ZY_OPT_PROFILE ? &so->profile
                         : o == ZY_OPT_USER  ? &so->user
                         : o == ZY_OPT_GROUP ? &so->group
                         : o == ZY_OPT_CWD   ? &so->cwd
                         : o == ZY_OPT_ID    ? &so->id
                                             : NULL;

        if (f)
                *f = arg;
        return f;
}
