/* SPDX-License-Identifier: MIT */
/*
 * A struct ze_plan packed into one flat buffer plus a list of fds, and back: this is how the
 * daemon hands a plan to a reference process (inherit tier), over a SOCK_SEQPACKET socket with
 * the fds as SCM_RIGHTS.
 *
 * Buffer: a fixed header (struct ze_plan_wire in plan.c, native byte order: both ends are the same build
 * on the same machine), then fd map entries, groups, BPF instructions, and a string area holding
 * argv, envp, cwd and search_path as NUL-terminated strings in that order (the caller's rlimits
 * between groups and BPF). fds travel in this order: one per fd map entry, one per cgroup
 * directory, then status_fd, then hold_fd (if >= 0), then ref_pidfd (only in
 * ZE_FILTER_CLONE mode). The BPF program is sent only in ZE_FILTER_LOAD mode. path_buf is not
 * sent; only its length is, and unpack allocates it.
 *
 * Unpack validates everything (sizes, counts, limits, string terminators, fd count) and fails
 * with -EBADMSG on a corrupt buffer; it never reads outside [buf, buf + len).
 */
#pragma once

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

#include "child.h"

#define ZE_PLAN_MAGIC 0x5a59504cu       /* "ZYPL" */
#define ZE_PLAN_VERSION 4u              /* 4: the caller's scheduling (struct ze_sched) in the header */
#define ZE_PLAN_MAX_SIZE (256u * 1024u) /* must fit one SEQPACKET message */
#define ZE_PLAN_MAX_FDS (ZE_MAX_FDS + ZE_MAX_CGROUPS + 3)
#define ZE_PLAN_MAX_STRINGS 65536
#define ZE_PLAN_MAX_INSNS 4096 /* BPF_MAXINSNS */
#define ZE_PLAN_MAX_PATH_BUF 8192

/* What ze_plan_unpack() fills; the plan's pointers point into it (so it must not be moved or
 * copied). Free with ze_plan_storage_done(). The fds are the caller's: never closed here. */
struct ze_plan_storage {
        struct ze_plan plan;
        struct sock_fprog prog;
        struct ze_fdmap fdmap[ZE_MAX_FDS];
        void *mem; /* one allocation: pointer arrays, groups, BPF, strings, path_buf */
};

/* Packs *plan. fds must have room for ZE_PLAN_MAX_FDS entries; *n_fds is set to the number used.
 * The fds are the plan's own (borrowed, not duplicated). -E2BIG if the result would exceed
 * ZE_PLAN_MAX_SIZE or a limit, -EINVAL for an inconsistent plan. */
int ze_plan_pack(const struct ze_plan *plan, void **ret_buf, size_t *ret_len, int *fds, size_t *n_fds);

int ze_plan_unpack(const void *buf, size_t len, const int *fds, size_t n_fds, struct ze_plan_storage *ret);

/* The most memory ze_plan_unpack_into() can need: the pointer arrays, then at most the whole
 * message's contents, then path_buf, each 8-byte aligned. */
#define ZE_PLAN_UNPACK_MAX ((ZE_PLAN_MAX_STRINGS + 2) * sizeof(char *) + ZE_PLAN_MAX_SIZE + ZE_PLAN_MAX_PATH_BUF + 64)

/* ze_plan_unpack() into mem (8-byte aligned, mem_size bytes, ZE_PLAN_UNPACK_MAX always enough)
 * instead of an allocation: for a pool worker, which must not allocate once its request is
 * there. ret->mem stays NULL (nothing to free); mem must outlive the plan. -E2BIG when the
 * message needs more than mem_size. */
int ze_plan_unpack_into(const void *buf, size_t len, const int *fds, size_t n_fds, void *mem, size_t mem_size,
                        struct ze_plan_storage *ret);

void ze_plan_storage_done(struct ze_plan_storage *s);
