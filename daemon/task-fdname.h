/* SPDX-License-Identifier: MIT */
/* A task's name in systemd's fd store; see task-fdname.c for the format. */
#pragma once

#include <stdbool.h>

#include "tier.h"

#define ZD_FDNAME_MAX 255 /* systemd's limit for FDNAME= */

/* What the name of a task's pidfd carries. */
struct zd_stored_task {
        unsigned owner, run_uid;
        int pid;
        enum zd_tier tier;
        unsigned long long created_ms; /* ms since the epoch */
        char *profile, *id;            /* owned after zd_task_fdname_parse() */
        bool container;                /* a container's init or exec'd process: "zc/" */
};

/* The name for t (profile and id %-encoded); -ENAMETOOLONG when it exceeds ZD_FDNAME_MAX. The
 * name is computed once, when the fd is stored, and kept: FDSTOREREMOVE must repeat it exactly. */
int zd_task_fdname_format(const struct zd_stored_task *t, char **ret);
/* Parses a task's fd name; *ret is untouched on failure. */
int zd_task_fdname_parse(const char *name, struct zd_stored_task *ret);
void zd_stored_task_done(struct zd_stored_task *s);
