/* SPDX-License-Identifier: MIT */
/*
 * The set of calls a recorded run made (record-set.h): a sorted array of (arch, nr), searched on
 * every notification, and the argument facts of clone, socket and personality.
 */
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "record-set.h"
#include "util.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static const struct {
        const char *name;
        char kind;
} kinds[4] = { { "clone", 'c' }, { "clone3", '3' }, { "socket", 's' }, { "personality", 'p' } };

void rec_set_init(struct rec_set *s) {
        *s = (struct rec_set){};
}

void rec_set_done(struct rec_set *s) {
        free(s->calls);
        rec_set_init(s);
}

static int call_cmp(const struct rec_call *a, uint32_t arch, uint32_t nr) {
        if (a->arch != arch)
                return a->arch < arch ? -1 : 1;
        if (a->nr != nr)
                return a->nr < nr ? -1 : 1;
        return 0;
}

/* Index of (arch, nr) in s->calls, or where it would go. */
static size_t call_find(const struct rec_set *s, uint32_t arch, uint32_t nr, bool *ret_found) {
        size_t lo = 0, hi = s->n_calls;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = call_cmp(&s->calls[mid], arch, nr);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

bool rec_set_has(const struct rec_set *s, uint32_t arch, uint32_t nr) {
        bool found;

        (void) call_find(s, arch, nr, &found);
        return found;
}

int rec_set_add_arch(struct rec_set *s, uint32_t arch) {
        for (size_t i = 0; i < s->n_arches; i++)
                if (s->arches[i] == arch)
                        return 0;
        if (s->n_arches >= REC_MAX_ARCHES)
                return -E2BIG;
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++)
                s->kind_nrs[s->n_arches][k] = seccomp_syscall_resolve_name_arch(arch, kinds[k].name);
        s->arches[s->n_arches++] = arch;
        return 1;
}

/* Adds (arch, nr) itself: 1 when new. */
static int call_add(struct rec_set *s, uint32_t arch, uint32_t nr) {
        bool found;
        size_t i = call_find(s, arch, nr, &found);
        int r;

        if (found)
                return 0;
        if (s->n_calls >= REC_MAX_CALLS)
                return -E2BIG;
        r = rec_set_add_arch(s, arch);
        if (r < 0)
                return r;
        if (s->n_calls == s->n_alloc) {
                size_t n = s->n_alloc ? s->n_alloc * 2 : 64;
                struct rec_call *c = reallocarray(s->calls, n, sizeof(*c));
                if (!c)
                        return -ENOMEM;
                s->calls = c;
                s->n_alloc = n;
        }
        memmove(s->calls + i + 1, s->calls + i, (s->n_calls - i) * sizeof(*s->calls));
        s->calls[i] = (struct rec_call){ .arch = arch, .nr = nr };
        s->n_calls++;
        return 1;
}

static bool is_s390(uint32_t arch) {
        return arch == AUDIT_ARCH_S390 || arch == AUDIT_ARCH_S390X;
}

/* The name of a call on arch, through libseccomp's tables. */
char *rec_syscall_name(uint32_t arch, uint32_t nr) {
        if (arch == AUDIT_ARCH_X86_64 && (nr & __X32_SYSCALL_BIT)) {
                char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X32, (int) nr);
                return n ? n : seccomp_syscall_resolve_num_arch(SCMP_ARCH_X32, (int) (nr & ~__X32_SYSCALL_BIT));
        }
        return seccomp_syscall_resolve_num_arch(arch, (int) nr);
}

char rec_set_kind(const struct rec_set *s, uint32_t arch, uint32_t nr) {
        size_t a;

        for (a = 0; a < s->n_arches && s->arches[a] != arch; a++)
                ;
        if (arch == AUDIT_ARCH_X86_64)
                nr &= ~(uint32_t) __X32_SYSCALL_BIT; /* x32 numbers these as x86_64 does */
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                /* an architecture not (yet) in the set: asked of libseccomp */
                int n = a < s->n_arches ? s->kind_nrs[a][k] : seccomp_syscall_resolve_name_arch(arch, kinds[k].name);
                if (n >= 0 && (uint32_t) n == nr)
                        return kinds[k].kind;
        }
        return 0;
}

static int persona_add(struct rec_set *s, uint32_t v) {
        if (s->personality_any)
                return 0;
        for (size_t i = 0; i < s->n_personas; i++)
                if (s->personas[i] == v)
                        return 0;
        if (s->n_personas == REC_MAX_PERSONAS) {
                s->personality_any = true;
                return 1;
        }
        s->personas[s->n_personas++] = v;
        return 1;
}

int rec_set_add(struct rec_set *s, uint32_t arch, uint32_t nr, const uint64_t args[6]) {
        int r, changed;

        changed = call_add(s, arch, nr);
        if (changed < 0)
                return changed;
        switch (rec_set_kind(s, arch, nr)) {
        case 'c': {
                uint64_t ns = (is_s390(arch) ? args[1] : args[0]) & REC_CLONE_NS_MASK;
                if (is_s390(arch) && !s->clone_s390) {
                        s->clone_s390 = true;
                        changed = 1;
                }
                if ((s->clone_ns | ns) != s->clone_ns) {
                        s->clone_ns |= ns;
                        changed = 1;
                }
                break;
        }
        case 's':
                if (s->socket_any)
                        break;
                if (args[0] >= 64) {
                        s->socket_any = true;
                        changed = 1;
                } else if (!(s->socket_families & (UINT64_C(1) << args[0]))) {
                        s->socket_families |= UINT64_C(1) << args[0];
                        changed = 1;
                }
                break;
        case 'p':
                /* personality(2) takes an unsigned int: the kernel compares the low 32 bits */
                r = persona_add(s, (uint32_t) args[0]);
                if (r > 0)
                        changed = 1;
                break;
        }
        return changed;
}

int rec_set_add_any(struct rec_set *s, uint32_t arch, uint32_t nr) {
        int r = call_add(s, arch, nr);

        if (r < 0)
                return r;
        switch (rec_set_kind(s, arch, nr)) {
        case 'c':
                s->clone_any = true;
                s->clone_s390 = s->clone_s390 || is_s390(arch);
                break;
        case 's':
                s->socket_any = true;
                break;
        case 'p':
                s->personality_any = true;
                break;
        }
        return 0;
}

int rec_set_merge(struct rec_set *dst, const struct rec_set *src) {
        int r;

        for (size_t i = 0; i < src->n_arches; i++) {
                r = rec_set_add_arch(dst, src->arches[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < src->n_calls; i++) {
                r = call_add(dst, src->calls[i].arch, src->calls[i].nr);
                if (r < 0)
                        return r;
        }
        dst->clone_any |= src->clone_any;
        dst->clone_ns |= src->clone_ns;
        dst->clone_s390 |= src->clone_s390;
        dst->socket_any |= src->socket_any;
        dst->socket_families |= src->socket_families;
        dst->personality_any |= src->personality_any;
        for (size_t i = 0; i < src->n_personas; i++)
                (void) persona_add(dst, src->personas[i]);
        return 0;
}
