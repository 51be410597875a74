/* SPDX-License-Identifier: MIT */
/*
 * The compiled-filter cache of GetFilter (filter.c): compiled seccomp programs keyed by the
 * SHA-256 of the OCI seccomp object's plain json-c serialization (the exact text that was
 * compiled), least recently used first out, and the compile-time budget of each non-root uid.
 *
 * Pure bookkeeping: no libev, no daemon state, no logging, time passed in. So the unit test
 * (tests/unit/test-filter-cache.c) links this file and sha256.c alone.
 *
 * Who may push out what:
 *   - at most ZD_FILTER_CACHE_MAX entries in all, ZD_FILTER_CACHE_PER_UID owned by one non-root
 *     uid (an entry is owned by the uid that compiled it; root using an entry makes it root's);
 *   - a non-root uid at its own limit pushes out its own least recently used entry; with the
 *     cache full, the least recently used entry of any non-root uid; never one of root's (when
 *     all are root's, its program is answered but not kept);
 *   - root pushes out the least recently used entry of anyone.
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sha256.h"

#define ZD_FILTER_CACHE_MAX 256
#define ZD_FILTER_CACHE_PER_UID 16
/* Compile time a non-root uid may spend: CPU time of its compile children, as a debt that is
 * paid back at ZD_FILTER_BUDGET_NSEC per ZD_FILTER_BUCKET_NSEC. A compile may start while the
 * debt is under ZD_FILTER_BUDGET_NSEC; what it cost is charged when it ends, whatever its
 * length, so one expensive compile keeps its uid out for as long as it takes to pay back. */
#define ZD_FILTER_BUDGET_NSEC 1000000000ULL
#define ZD_FILTER_BUCKET_NSEC 10000000000ULL
/* uids whose debt is tracked at once (a uid's slot is free again once its debt is paid and a
 * bucket passed since its last compile); beyond that, compiles for new uids wait. */
#define ZD_FILTER_BUDGET_UIDS 128

/* What an object may ask of the compiler, before it is compiled (root included): argument
 * comparisons, each syscall name of an entry counted once per argument it compares, once per
 * architecture the filter holds. libseccomp's time grows with the square of it, and just above
 * this bound one compile already costs seconds of CPU (docs/BENCHMARKS.md). */
#define ZD_FILTER_ARG_CMP_MAX 1024

/* A compile runs in a child (filter-compile.c): its CPU time (RLIMIT_CPU; past it, LimitExceeded
 * compile_cpu), its wall-clock time (killed past it: LimitExceeded compile_wall_time), and
 * how many run at once: in all, for all non-root uids together (so that root's always has a
 * place), and for one non-root uid (a compile already running for the same object is shared,
 * never counted again). */
#define ZD_FILTER_CPU_SEC 5
#define ZD_FILTER_WALL_SEC 20
#define ZD_FILTER_COMPILES_MAX 4
#define ZD_FILTER_COMPILES_USERS_MAX 3
#define ZD_FILTER_COMPILES_PER_UID 1

struct zd_filter {
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        char key_hex[2 * ZC_SHA256_DIGEST_SIZE + 1];
        struct sock_filter *bpf; /* owned */
        size_t bpf_len;
        unsigned flags;                           /* SECCOMP_FILTER_FLAG_* */
        char hash[2 * ZC_SHA256_DIGEST_SIZE + 1]; /* of the program */
        uint64_t compile_nsec;
        uid_t owner;
        struct zd_filter *newer, *older;
};

struct zd_filter_budget {
        uid_t uid;
        uint64_t at;        /* when debt_nsec was last brought up to date */
        uint64_t debt_nsec; /* CPU time charged and not yet paid back */
};

struct zd_filter_compile; /* filter.c's: a compile running in a child */

struct zd_filter_cache {
        struct zd_filter *newest, *oldest;
        struct zd_filter_compile *compiling; /* filter.c's list; not touched here */
        size_t n;
        struct zd_filter_budget budgets[ZD_FILTER_BUDGET_UIDS];
        size_t n_budgets;
        unsigned long hits, misses, evictions;
        unsigned long compiles; /* compile children started (getfilter.c) */
};

/* The key of a seccomp object: SHA-256 of its serialization text. */
void zd_filter_key(const char *text, size_t size, uint8_t ret[ZC_SHA256_DIGEST_SIZE]);

/* The entry of key, made the most recently used (and root's when uid is 0); NULL when absent.
 * Counts a hit or a miss. */
struct zd_filter *zd_filter_cache_lookup(struct zd_filter_cache *c, const uint8_t key[ZC_SHA256_DIGEST_SIZE],
                                         uid_t uid);

/* Stores a program compiled for uid under key (bpf copied). Returns 0 and *ret (may be NULL)
 * the new entry, -ENOSPC when the rules above leave no room for it (nothing stored), -EEXIST
 * when key is already there, -ENOMEM. */
int zd_filter_cache_insert(struct zd_filter_cache *c, const uint8_t key[ZC_SHA256_DIGEST_SIZE], uid_t uid,
                           const struct sock_filter *bpf, size_t bpf_len, unsigned flags, const char *hash,
                           uint64_t compile_nsec, struct zd_filter **ret);

/* Entries owned by uid. */
size_t zd_filter_cache_count(const struct zd_filter_cache *c, uid_t uid);

void zd_filter_cache_clear(struct zd_filter_cache *c);

/* Whether uid may compile now (now_nsec: CLOCK_MONOTONIC). 0 for root and for a uid whose debt
 * is under ZD_FILTER_BUDGET_NSEC; -EDQUOT when it is not; -EUSERS when ZD_FILTER_BUDGET_UIDS
 * other uids hold a slot. */
int zd_filter_budget_check(struct zd_filter_cache *c, uid_t uid, uint64_t now_nsec);

/* Charges nsec of CPU time to uid (nothing for root; nothing when the check refused it). */
void zd_filter_budget_charge(struct zd_filter_cache *c, uid_t uid, uint64_t now_nsec, uint64_t nsec);

/* The complexity of an object (see ZD_FILTER_ARG_CMP_MAX): n_arches architectures, and per
 * entry of "syscalls" its number of names and of argument comparisons. Saturates. */
uint64_t zd_filter_complexity(size_t n_arches, const size_t *names, const size_t *args, size_t n_rules);
