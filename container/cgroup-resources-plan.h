/* SPDX-License-Identifier: MIT */
/*
 * What the parts of the linux.resources generator share (cgroup-resources.c, one file per
 * controller family beside it): the plan being built and its helpers. Private to them.
 */
#pragma once

#include "cgroup-resources.h"

struct planner {
        unsigned v1, v2; /* ZCT_RES_BIT masks of the host's controllers */
        struct zct_res_write *w;
        size_t n;
        char **err;
};

/* Sets *p->err to the message; returns r. */
__attribute__((format(printf, 3, 4))) int zct_plan_fail(struct planner *p, int r, const char *fmt, ...);
/* Whether controller c is on cgroup2 (*ret_v2) or its v1 hierarchy; else field is refused. */
int zct_plan_where(struct planner *p, enum zct_res_controller c, const char *field, bool *ret_v2);
/* Appends a write of the formatted value to file for field. */
__attribute__((format(printf, 6, 7))) int zct_plan_add(struct planner *p, enum zct_res_controller c, bool v2,
                                                       const char *field, const char *file, const char *fmt, ...);
/* The last write's fallback file, where its own does not exist, and that file's value. */
__attribute__((format(printf, 3, 4))) int zct_plan_add_alt(struct planner *p, const char *file, const char *fmt, ...);
/* Refuses any member of o not in known (NULL-terminated): an unknown field is never ignored. A
 * member named as a known one in other case is renamed to it first (Go's decoder takes it). */
int zct_plan_check_keys(struct planner *p, json_object *o, const char *what, const char *const *known);
/* o[key] as an integer: 1 when present, 0 when absent or null (*ret = 0), or -EINVAL. */
int zct_plan_get_int(struct planner *p, json_object *o, const char *what, const char *key, int64_t *ret);
/* cgroup2's value of a limit: "max" for -1 (unlimited), else the number in buf. */
const char *zct_plan_v2_value(int64_t v, char *buf, size_t len);

/* cgroup-resources-blkio.c */
int zct_plan_blkio(struct planner *p, json_object *o);
