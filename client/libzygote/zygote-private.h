/* SPDX-License-Identifier: MIT */
/*
 * libzygote's internals shared by its source files (not installed).
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "zygote.h"
#include "util.h"

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
static inline size_t lzy_stdio_map(struct zy_fd_map map[static 3], const int override[3]) {
        size_t n = 0;

        for (int i = 0; i < 3; i++) {
                int fd = override && override[i] >= 0 ? override[i] : i;

                if (fd != i || fcntl(i, F_GETFD) >= 0)
                        map[n++] = (struct zy_fd_map){ .fd = fd, .target = i };
        }
        return n;
}

/* The command-line options launchctl run and zygote-shim share: LZY_SPAWN_OPTIONS goes into their
 * getopt_long tables. The first five are each one field of zy_spawn_opts, which
 * lzy_spawn_option() stores; --socket PATH, --env KEY=VALUE (lzy_env_arg_ok), --hold and --help
 * each program acts on itself. Their own options are numbered from LZY_OPT_OWN. Header-only, as
 * above. */
enum {
        LZY_OPT_PROFILE = 256,
        LZY_OPT_USER,
        LZY_OPT_GROUP,
        LZY_OPT_CWD,
        LZY_OPT_ID,
        LZY_OPT_SOCKET,
        LZY_OPT_ENV,
        LZY_OPT_HOLD,
        LZY_OPT_HELP,
        LZY_OPT_OWN
};
#define LZY_SPAWN_OPTIONS \
        { "profile", required_argument, NULL, LZY_OPT_PROFILE }, { "user", required_argument, NULL, LZY_OPT_USER }, \
                { "group", required_argument, NULL, LZY_OPT_GROUP }, { "cwd", required_argument, NULL, LZY_OPT_CWD }, \
                { "id", required_argument, NULL, LZY_OPT_ID }, { "socket", required_argument, NULL, LZY_OPT_SOCKET }, \
                { "env", required_argument, NULL, LZY_OPT_ENV }, { "hold", no_argument, NULL, LZY_OPT_HOLD }, { \
                "help", no_argument, NULL, LZY_OPT_HELP \
        }

/* An --env argument: KEY=VALUE with a non-empty KEY. */
static inline bool lzy_env_arg_ok(const char *arg) {
        return arg[0] != '=' && strchr(arg, '=');
}

/* Blocks the n signals of sigs and returns a signalfd (CLOEXEC, non-blocking) that reads them,
 * or a negative errno. Blocked before anything is created, read afterwards: a signal that
 * arrives meanwhile is handled then, not lost. */
static inline int lzy_signalfd_block(const int *sigs, size_t n) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        for (size_t i = 0; i < n; i++)
                sigaddset(&mask, sigs[i]);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

/* Stores arg where option o belongs in so; false when o is not a shared option. */
static inline bool lzy_spawn_option(struct zy_spawn_opts *so, int o, const char *arg) {
        const char **f = o == LZY_OPT_PROFILE ? &so->profile
                         : o == LZY_OPT_USER  ? &so->user
                         : o == LZY_OPT_GROUP ? &so->group
                         : o == LZY_OPT_CWD   ? &so->cwd
                         : o == LZY_OPT_ID    ? &so->id
                                              : NULL;

        if (f)
                *f = arg;
        return f;
}

/* getopt_long over opts ("+": stops at the command), the shared spawn options stored in so on the
 * way: returns the next option that is not one of those (or -1 at the end). getopt prints
 * nothing; the caller reports '?' and ':' itself. */
static inline int lzy_spawn_getopt(int argc, char **argv, const struct option *opts, struct zy_spawn_opts *so) {
        int o;

        opterr = 0;
        while ((o = getopt_long(argc, argv, "+", opts, NULL)) >= 0 && lzy_spawn_option(so, o, optarg))
                ;
        return o;
}
