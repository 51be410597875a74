/* SPDX-License-Identifier: MIT */
/* GetFilter's compile, in a child process: see filter-compile.c. */
#pragma once

#include <linux/filter.h>
#include <stddef.h>
#include <sys/types.h>

#include "sha256.h"

/* What the compile child sends back. */
struct zd_compile_result {
        int error;               /* 0, or the profile module's negative errno */
        unsigned flags;          /* SECCOMP_FILTER_FLAG_* */
        struct sock_filter *bpf; /* malloc'd; NULL on error */
        size_t bpf_len;
        char hash[2 * ZC_SHA256_DIGEST_SIZE + 1];
        char *message; /* malloc'd: the error's words (NULL when none) */
};

/* The most a child's answer may hold: the kernel's longest program and a message. */
#define ZD_COMPILE_MAX_INSNS 65536
#define ZD_COMPILE_MAX_MESSAGE 4096

/* Forks the child that compiles text (an OCI seccomp object's serialization) with the profile
 * module, under RLIMIT_CPU cpu_sec (killed by SIGXCPU past it, SIGKILL a second later), at a
 * lower priority, with only its end of the answer's pipe open; it dies with the daemon
 * (PR_SET_PDEATHSIG). The caller has made the fd table clean of callers' fds first (the fork
 * gate). Returns the pid, its pidfd in *ret_pidfd and the answer's read end (CLOEXEC,
 * O_NONBLOCK) in *ret_fd; a negative errno. */
pid_t zd_compile_fork(const char *text, size_t size, unsigned cpu_sec, int *ret_pidfd, int *ret_fd);

/* The answer read to its EOF (buf, size) → *ret. -EBADMSG when it is not a whole answer. */
int zd_compile_result_parse(const void *buf, size_t size, struct zd_compile_result *ret);
void zd_compile_result_done(struct zd_compile_result *r);
