/* SPDX-License-Identifier: MIT */
/* The reference tests' helpers: small filters, a plan, a worker spawned through a reference, /proc fields. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "plan.h"
#include "reference.h"
#include "util.h"

#define BLOCKED_ERRNO 95

/* TU_FILTER_BLOCKING programs: personality(2) fails with BLOCKED_ERRNO, setresuid(2) with EPERM */
extern struct sock_filter block_personality[TU_FILTER_BLOCKING_LEN];

extern struct sock_filter block_setresuid[TU_FILTER_BLOCKING_LEN];

extern char helper[PATH_MAX];

extern int helper_fd;

extern char try_syscall[PATH_MAX];

extern char path_buf[PATH_MAX];

extern char *const test_env[];

void plan_init(struct ze_plan *p, char *const *argv);

/* Whether the reference's fd is its closer helper's /proc/self/syscall, which the helper opens
 * as it starts (where it may: common/fd-closer.h), at a moment of its own. */
bool is_helper_syscall_file(pid_t pid, int fd);

/* The reference keeps fds 0 to 3 and its fd closer's (common/fd-closer.h, made at its start:
 * two pipes and the helper's pidfd, and maybe its /proc/self/syscall) only: nothing a request
 * brought stays behind. */
void assert_ref_fds_clean(const struct zr_reference *r);

const char *field(const char *text, const char *key, char *buf, size_t size);

void file_field(pid_t pid, const char *key, char *buf, size_t size);

struct worker {
        int code;
        int n_recs;
        struct ze_status rec;
        char out[16384];
};

/* Spawns argv through the reference with stdout on a pipe; collects output, records, exit. */
int spawn_through(struct zr_reference *r, char *const *argv, const char *cwd, struct worker *w);
