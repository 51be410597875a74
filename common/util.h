/* SPDX-License-Identifier: MIT */
/*
 * Small ownership helpers shared by every zygote source file.
 *
 * Conventions: functions return 0 or a negative errno; -EBADF stands for
 * "no fd"; _cleanup_ attributes free on scope exit; TAKE_FD/TAKE_PTR hand ownership out.
 * Everything here is header-only and async-signal-safe except where it calls free().
 */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* close() that keeps errno and ignores "no fd"; returns -EBADF so callers can write fd = safe_close(fd). */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void close_pairp(int (*p)[2]) {
        safe_close((*p)[0]);
        safe_close((*p)[1]);
}
#define _cleanup_close_pair_ _cleanup_(close_pairp)

#define TAKE_FD(fd) \
        ({ \
                int *_pfd_ = &(fd); \
                int _f_ = *_pfd_; \
                *_pfd_ = -EBADF; \
                _f_; \
        })

#define TAKE_PTR(ptr) \
        ({ \
                __typeof__(ptr) *_pptr_ = &(ptr); \
                __typeof__(ptr) _p_ = *_pptr_; \
                *_pptr_ = NULL; \
                _p_; \
        })

/* errno as a negative value, never 0 (some libc paths forget to set errno). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#define streq(a, b) (strcmp((a), (b)) == 0)

static inline int streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
