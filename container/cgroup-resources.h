/* SPDX-License-Identifier: MIT */
/*
 * linux.resources (all but devices, which cgroup-devices.h covers) as a list of cgroup file
 * writes, for the controllers of one host: each controller on its v1 hierarchy where it has one,
 * else on cgroup2. cgroup-resources.c is a pure generator (config.json in, writes out), so that a
 * unit test can check every field and conversion; cgroup-limits.c probes the host and writes.
 *
 * Every field either becomes a write or is refused with a message naming it: a container never
 * runs without a limit it asked for.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zct_cgroup;

enum zct_res_controller {
        ZCT_RES_CPU,
        ZCT_RES_CPUSET,
        ZCT_RES_MEMORY,
        ZCT_RES_PIDS,
        ZCT_RES_IO, /* v1 "blkio", v2 "io" */
        ZCT_RES_HUGETLB,
        ZCT_RES_NET_CLS,
        ZCT_RES_NET_PRIO,
        ZCT_RES_RDMA,
        ZCT_RES_UNIFIED, /* a linux.resources.unified key: the cgroup2 directory itself */
        _ZCT_RES_MAX,
};

#define ZCT_RES_BIT(c) (1u << (c))

/* The controller's name in the kernel's lists (v1 mount options, v2 cgroup.controllers). */
const char *zct_res_controller_name(enum zct_res_controller c, bool v2);

struct zct_res_write {
        enum zct_res_controller controller;
        bool v2;           /* the cgroup2 directory, else the controller's v1 one */
        char *file;        /* below the container's directory */
        char *value;       /* written in one write(2) */
        char *alt_file;    /* where file does not exist (no BFQ: blkio.weight), or NULL */
        char *alt_value;   /* alt_file's value (its own scale) */
        char *enable;      /* v2: the controller to enable in the ancestors first, or NULL */
        char *field;       /* config.json's name of what asked for it, for errors */
        bool swap_partner; /* if refused (EINVAL), write the next first: v1 memory.limit_in_bytes
                            * before memsw, cpu.cfs_period_us before the quota */
};

struct zct_res_plan {
        struct zct_res_write *w;
        size_t n;
};

/* The writes linux.resources (res, may be NULL) asks for on a host whose controllers are on v1
 * (v1_mask) or cgroup2 (v2_mask; ZCT_RES_UNIFIED there: a cgroup2 hierarchy exists). A field that
 * cannot be applied here, or is not understood, fails with -EINVAL or -EOPNOTSUPP and a message
 * naming it ("linux.resources.rdma: ..."). ret untouched on failure. */
int zct_res_plan(json_object *res, unsigned v1_mask, unsigned v2_mask, struct zct_res_plan *ret, char **ret_error);
void zct_res_plan_done(struct zct_res_plan *p);

/* runc's conversions (cgroup v1 values in OCI, v2 files) */
uint64_t zct_res_shares_to_weight(uint64_t shares);
uint64_t zct_res_blkio_to_io_weight(uint64_t weight);
/* memory.swap.max from OCI's swap (memory+swap) and limit; 0 unset, -1 max. */
int zct_res_swap_v2(int64_t swap, int64_t limit, int64_t *ret, char **ret_error);

/* ---- cgroup-limits.c: the host's controllers and the writes ---- */

/* Which controllers this host has on v1 hierarchies and on cgroup2 (ZCT_RES_BIT masks). */
int zct_res_host(unsigned *ret_v1, unsigned *ret_v2);
/* cgroup.c: "+controller" into cgroup.subtree_control of every directory from the cgroup2 mount
 * mnt down to dir's parent, so that dir has the controller's files. */
int zct_cgroup_enable_v2(const char *mnt, const char *dir, const char *controller);
/* Applies plan to cg's directories, in order. -errno with a message naming the field. */
int zct_res_apply(const struct zct_cgroup *cg, const struct zct_res_plan *plan, char **ret_error);
