/* SPDX-License-Identifier: MIT */
/*
 * Workers that copy nothing (zygote-ref's own, worker-nocopy.c): a worker made with
 * clone(CLONE_VM | CLONE_PARENT | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID),
 * without CLONE_VFORK. It runs on the reference's memory (no page table copied, no page faulted
 * in twice, nothing torn down at its exec) while the reference serves on: a worker that blocks
 * before its exec (a caller's fd or path on a FUSE file system that never answers) stalls only
 * itself, as a forked one does.
 *
 * What the worker uses of that memory is a slot's, and the reference touches a slot again only
 * once the kernel has cleared the slot's tid word: CLONE_CHILD_CLEARTID clears it when the worker
 * leaves the memory, at its execve (the old memory released) as at its exit or death. A slot holds
 *   - the worker's stack (a guard page below);
 *   - the worker's thread-local storage: a copy of the reference's static TLS blocks and the first
 *     words of its thread control block (self pointers moved to the copy), so that errno and
 *     everything else glibc keeps per thread are the worker's own, never the reference's;
 *   - the worker's plan, unpacked there (strings, arrays, the PATH search's scratch).
 * ZR_NOCOPY_SLOTS of them, mapped once before the filter (which may refuse mmap); when every slot
 * is busy (workers held at their gate, or blocked), the next worker is forked as before.
 *
 * Available on x86_64 only (the thread control block's layout is the architecture's); elsewhere,
 * or when a module's TLS block is not where this expects it, every worker is forked.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plan.h"

#define ZR_NOCOPY_SLOTS 16

struct zr_nocopy_slot;

/* Maps the slots and prepares their TLS. 0, or a negative errno: no slot (every worker forked). */
int zr_nocopy_init(void);
/* Gives up the mechanism (the kernel or the filter refused its clone): slots stay mapped, unused. */
void zr_nocopy_disable(void);

/* A slot no worker uses any more, or NULL (none mapped, or all busy). Reclaims the slots whose
 * worker left: *ret_dumpable_reset is set when one of them switched ids (the reference clears its
 * dumpable flag again, which that switch set to fs.suid_dumpable in the shared memory). */
struct zr_nocopy_slot *zr_nocopy_free_slot(bool *ret_dumpable_reset);

/* ze_plan_unpack() into the slot's memory; the plan stays there until the slot is used or taken
 * again. */
int zr_nocopy_unpack(struct zr_nocopy_slot *slot, const void *buf, size_t len, const int *fds, size_t n_fds,
                     struct ze_plan **ret_plan);

/* Makes the worker that runs ze_child_run() on the slot's plan, sharing our memory; the slot is
 * busy until it leaves. Every signal is blocked across the clone, and the worker empties its mask
 * (our dispositions, which it got a copy of, are all SIG_DFL: plan->signals_default) before any
 * step. Its pid, or a negative errno: nothing made, the slot free. */
pid_t zr_nocopy_clone(struct zr_nocopy_slot *slot);

/* How many slots are busy (tests, and the decision to fork). */
size_t zr_nocopy_busy(void);
