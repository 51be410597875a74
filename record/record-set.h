/* SPDX-License-Identifier: MIT */
/*
 * What a recorded run called: a set of (architecture, system call number) pairs, and for the three
 * calls Docker's default profile filters on their arguments, the argument facts seen:
 *   clone       the namespace flags (CLONE_NEW*, Docker's mask) ever set;
 *   socket      the address families asked for;
 *   personality the personas asked for.
 * A fact marked "any" means the call was allowed without an argument rule (merged from a file
 * that allows it outright, or more distinct values than are kept).
 *
 * record-json.c reads such a set back from an OCI/Docker seccomp file (the union of a new run with
 * an earlier one) and writes it as one. Library code: returns 0 or a negative errno, never logs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Docker's mask of namespace flags in clone's flags: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC,
 * NEWUSER, NEWPID, NEWNET. */
#define REC_CLONE_NS_MASK UINT64_C(0x7E020000)
/* Distinct personality values kept before the call is allowed outright. */
#define REC_MAX_PERSONAS 16
/* Calls a set holds: far more than any architecture has; a program that calls numbers at
 * random cannot make its recorder grow without bound. */
#define REC_MAX_CALLS 65536
/* Architectures a set holds (every one libseccomp knows fits). */
#define REC_MAX_ARCHES 16

struct rec_call {
        uint32_t arch; /* AUDIT_ARCH_* (= SCMP_ARCH_*) */
        uint32_t nr;
};

struct rec_set {
        struct rec_call *calls; /* sorted by (arch, nr), unique */
        size_t n_calls, n_alloc;
        uint32_t arches[REC_MAX_ARCHES]; /* in the order first seen */
        size_t n_arches;
        /* per architecture (as arches[]): the numbers of clone, clone3, socket and personality
         * there (-1: none), looked up once rather than at every notification */
        int kind_nrs[REC_MAX_ARCHES][4];

        bool clone_any;
        uint64_t clone_ns; /* namespace flags seen, within REC_CLONE_NS_MASK */
        bool clone_s390;   /* flags are clone's second argument there */

        bool socket_any;
        uint64_t socket_families; /* bit f: family f (0..63) */

        bool personality_any;
        uint32_t personas[REC_MAX_PERSONAS];
        size_t n_personas;
};

void rec_set_init(struct rec_set *s);
void rec_set_done(struct rec_set *s);

/* Whether (arch, nr) is in the set. */
bool rec_set_has(const struct rec_set *s, uint32_t arch, uint32_t nr);

/* Adds one observed call with its arguments (seccomp_data's). Returns 1 when the set changed
 * (a new call or a new fact), 0 when not, -ENOMEM, -E2BIG past REC_MAX_ARCHES or REC_MAX_CALLS. */
int rec_set_add(struct rec_set *s, uint32_t arch, uint32_t nr, const uint64_t args[6]);

/* Adds an architecture without any call (a profile's). 1 when new, 0, -E2BIG. */
int rec_set_add_arch(struct rec_set *s, uint32_t arch);

/* Adds (arch, nr) with the facts of an outright allow (clone, socket, personality: "any"). */
int rec_set_add_any(struct rec_set *s, uint32_t arch, uint32_t nr);

/* What nr is on arch: 'c' clone, '3' clone3, 's' socket, 'p' personality, 0 anything else. */
char rec_set_kind(const struct rec_set *s, uint32_t arch, uint32_t nr);

/* The union: every call and fact of src added to dst. */
int rec_set_merge(struct rec_set *dst, const struct rec_set *src);

/* The name of nr on arch ("openat"), malloc'd, or NULL when libseccomp does not know it
 * (x32's numbers, which arrive as x86_64's with __X32_SYSCALL_BIT, are resolved as x32's). */
char *rec_syscall_name(uint32_t arch, uint32_t nr);
