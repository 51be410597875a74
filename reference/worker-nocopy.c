/* SPDX-License-Identifier: MIT */
/*
 * Workers that copy nothing: see worker-nocopy.h for the design, engine/child.h for what such a
 * worker may touch.
 */
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "worker-nocopy.h"

_Static_assert(ZE_NOCOPY_CLONE_FLAGS ==
                       (CLONE_VM | CLONE_PARENT | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD),
               "child.h's ZE_NOCOPY_CLONE_FLAGS are the kernel's flags");

#define STACK_SIZE (256u * 1024u)
/* The thread control block of x86_64's glibc (tcbhead_t) starts at the thread pointer: tcb (a
 * pointer to itself) at 0, dtv at 8, self at 16, multiple_threads, gscope_flag, sysinfo, the stack
 * protector's canary at 0x28, the pointer guard at 0x30, and so on to the CET features at 0x48.
 * The worker gets a copy of these words; the rest of its TCB page is zero (no cancellation
 * pending, no thread-specific data). */
#define TCB_COPY 0x50u
#define TCB_ROOM 4096u

struct zr_nocopy_slot {
        /* The worker's tid while it may use the slot; the kernel clears it (and wakes a futex on
         * it) when the worker's exec or exit releases our memory. Written by the kernel only. */
        pid_t tid;
        bool set_ids; /* its plan switched ids: the shared dumpable flag changed */
        char *stack_top;
        char *tp; /* the worker's thread pointer */
        char *mem;
        size_t mem_size;
        struct ze_plan_storage s;
};

static struct zr_nocopy_slot slots[ZR_NOCOPY_SLOTS];
static size_t n_slots; /* 0: forked workers only */

#if defined(__x86_64__)
static char *thread_pointer(void) {
        char *tp;

        __asm__("mov %%fs:0, %0" : "=r"(tp));
        return tp;
}

struct tls_bounds {
        uintptr_t tp, low;
        bool bad;
};

/* Every module's static TLS block, in this thread, lies below the thread pointer (x86_64's TLS
 * variant II): the lowest start is where the worker's copy begins. A block elsewhere (a module
 * with dynamic TLS) makes the mechanism unavailable: the worker would share that block. */
static int tls_block(struct dl_phdr_info *info, size_t size, void *data) {
        struct tls_bounds *b = data;

        (void) size;
        for (size_t i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t start = (uintptr_t) info->dlpi_tls_data;

                if (ph->p_type != PT_TLS || ph->p_memsz == 0)
                        continue;
                if (!start || start > b->tp || ph->p_memsz > b->tp - start) {
                        b->bad = true;
                        continue;
                }
                if (start < b->low)
                        b->low = start;
        }
        return 0;
}

/* Bytes of static TLS below the thread pointer; 0 when the layout is not the expected one. */
static size_t tls_size_below(void) {
        struct tls_bounds b = { .tp = (uintptr_t) thread_pointer() };

        b.low = b.tp;
        (void) dl_iterate_phdr(tls_block, &b);
        if (b.bad || ((char **) b.tp)[2] != (char *) b.tp) /* self, as tcb is */
                return 0;
        return b.tp - b.low;
}

/* The slot's TLS: the blocks below the thread pointer as ours are (the same offsets, errno's
 * included), the first words of the TCB, and its two self pointers pointing at the copy. */
static void tls_copy(char *wtp, size_t below) {
        char *tp = thread_pointer();

        memcpy(wtp - below, tp - below, below + TCB_COPY);
        ((char **) (void *) wtp)[0] = wtp; /* tcb */
        ((char **) (void *) wtp)[2] = wtp; /* self */
}
#else
static size_t tls_size_below(void) {
        return 0;
}
static void tls_copy(char *wtp, size_t below) {
        (void) wtp;
        (void) below;
}
#endif

int zr_nocopy_init(void) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE), below = tls_size_below(), tls, total;

        if (below == 0)
                return -EOPNOTSUPP;
        tls = (below + page - 1) / page * page;
        /* [guard][stack][TLS blocks | TCB][plan memory] */
        total = page + STACK_SIZE + tls + TCB_ROOM + ZE_PLAN_UNPACK_MAX;
        for (size_t i = 0; i < ZR_NOCOPY_SLOTS; i++) {
                struct zr_nocopy_slot *s = &slots[i];
                char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

                if (p == MAP_FAILED)
                        break;
                /* an overflow of the stack faults rather than writes into our memory */
                if (mprotect(p, page, PROT_NONE) < 0) {
                        (void) munmap(p, total);
                        break;
                }
                s->stack_top = p + page + STACK_SIZE;
                s->tp = s->stack_top + tls;
                s->mem = s->tp + TCB_ROOM;
                s->mem_size = ZE_PLAN_UNPACK_MAX;
                tls_copy(s->tp, below);
                n_slots = i + 1;
        }
        return n_slots > 0 ? 0 : -ENOMEM;
}

void zr_nocopy_disable(void) {
        n_slots = 0;
}

size_t zr_nocopy_busy(void) {
        size_t n = 0;

        for (size_t i = 0; i < n_slots; i++)
                n += __atomic_load_n(&slots[i].tid, __ATOMIC_ACQUIRE) != 0;
        return n;
}

struct zr_nocopy_slot *zr_nocopy_free_slot(bool *ret_dumpable_reset) {
        struct zr_nocopy_slot *found = NULL;

        for (size_t i = 0; i < n_slots; i++) {
                struct zr_nocopy_slot *s = &slots[i];

                /* acquire: every access of the worker to the slot happened before the clear */
                if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) != 0)
                        continue;
                if (s->set_ids) {
                        *ret_dumpable_reset = true;
                        s->set_ids = false;
                }
                if (!found)
                        found = s;
        }
        return found;
}

int zr_nocopy_unpack(struct zr_nocopy_slot *slot, const void *buf, size_t len, const int *fds, size_t n_fds,
                     struct ze_plan **ret_plan) {
        int r = ze_plan_unpack_into(buf, len, fds, n_fds, slot->mem, slot->mem_size, &slot->s);

        if (r < 0)
                return r;
        *ret_plan = &slot->s.plan;
        return 0;
}

/* Runs on the slot's stack, with the slot's TLS. */
static int nocopy_worker_main(void *arg) {
        struct zr_nocopy_slot *slot = arg;
        uint64_t none = 0;

        /* Blocked by our parent across the clone; every disposition is SIG_DFL (its copy of the
         * table, not shared: no CLONE_SIGHAND), so no handler of the reference's can ever run
         * here. The mask the task inherits is the empty one. */
        (void) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
        ze_child_run(&slot->s.plan);
}

pid_t zr_nocopy_clone(struct zr_nocopy_slot *slot) {
        sigset_t all, old;
        long pid;
        int err;

        slot->set_ids = slot->s.plan.set_ids;
        /* as posix_spawn: nothing may be delivered to the worker before it is ready for it */
        sigfillset(&all);
        if (sigprocmask(SIG_BLOCK, &all, &old) < 0)
                return -errno;
        /* CLONE_PARENT_SETTID puts the tid in the slot before the worker runs (so the slot is
         * busy from the start); CLONE_CHILD_CLEARTID clears it when the worker leaves. */
        pid = clone(nocopy_worker_main, slot->stack_top, ZE_NOCOPY_CLONE_FLAGS, slot, &slot->tid, slot->tp, &slot->tid);
        err = errno;
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
                __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
                slot->set_ids = false;
                return -err;
        }
        return (pid_t) pid;
}
