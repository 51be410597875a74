/* SPDX-License-Identifier: MIT */
/*
 * The compiled-filter cache and the compile-time budgets; see filter-cache.h for the rules.
 * A list ordered by use: at most ZD_FILTER_CACHE_MAX entries, so that a walk over it (a lookup
 * compares 32 bytes per entry) costs microseconds against the milliseconds of a compile.
 */
#include "filter-cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void zd_filter_key(const char *text, size_t size, uint8_t ret[ZC_SHA256_DIGEST_SIZE]) {
        zc_sha256(text, size, ret);
}

static void unlink_entry(struct zd_filter_cache *c, struct zd_filter *f) {
        if (f->newer)
                f->newer->older = f->older;
        else
                c->newest = f->older;
        if (f->older)
                f->older->newer = f->newer;
        else
                c->oldest = f->newer;
        f->newer = f->older = NULL;
}

static void push_newest(struct zd_filter_cache *c, struct zd_filter *f) {
        f->older = c->newest;
        f->newer = NULL;
        if (c->newest)
                c->newest->newer = f;
        c->newest = f;
        if (!c->oldest)
                c->oldest = f;
}

static void drop(struct zd_filter_cache *c, struct zd_filter *f) {
        unlink_entry(c, f);
        c->n--;
        free(f->bpf);
        free(f);
}

struct zd_filter *zd_filter_cache_lookup(struct zd_filter_cache *c, const uint8_t key[ZC_SHA256_DIGEST_SIZE],
                                         uid_t uid) {
        for (struct zd_filter *f = c->newest; f; f = f->older)
                if (memcmp(f->key, key, ZC_SHA256_DIGEST_SIZE) == 0) {
                        unlink_entry(c, f);
                        push_newest(c, f);
                        /* Root relies on it now: no other uid's inserts may push it out. */
                        if (uid == 0)
                                f->owner = 0;
                        c->hits++;
                        return f;
                }
        c->misses++;
        return NULL;
}

size_t zd_filter_cache_count(const struct zd_filter_cache *c, uid_t uid) {
        size_t n = 0;

        for (const struct zd_filter *f = c->newest; f; f = f->older)
                n += f->owner == uid;
        return n;
}

/* The least recently used entry that uid may push out; NULL when none. own_only: only uid's. */
static struct zd_filter *victim(struct zd_filter_cache *c, uid_t uid, bool own_only) {
        for (struct zd_filter *f = c->oldest; f; f = f->newer) {
                if (own_only ? f->owner == uid : uid == 0 || f->owner != 0)
                        return f;
        }
        return NULL;
}

int zd_filter_cache_insert(struct zd_filter_cache *c, const uint8_t key[ZC_SHA256_DIGEST_SIZE], uid_t uid,
                           const struct sock_filter *bpf, size_t bpf_len, unsigned flags, const char *hash,
                           uint64_t compile_nsec, struct zd_filter **ret) {
        struct zd_filter *f, *old = NULL;
        static const char hex[] = "0123456789abcdef";

        for (f = c->newest; f; f = f->older)
                if (memcmp(f->key, key, ZC_SHA256_DIGEST_SIZE) == 0)
                        return -EEXIST;
        /* Decided before anything is freed: a refusal leaves the cache as it was. */
        if (uid != 0 && zd_filter_cache_count(c, uid) >= ZD_FILTER_CACHE_PER_UID)
                old = victim(c, uid, true);
        else if (c->n >= ZD_FILTER_CACHE_MAX && !(old = victim(c, uid, false)))
                return -ENOSPC;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->bpf = malloc(bpf_len * sizeof(*bpf) ?: 1);
        if (!f->bpf) {
                free(f);
                return -ENOMEM;
        }
        if (old) {
                drop(c, old);
                c->evictions++;
        }
        memcpy(f->bpf, bpf, bpf_len * sizeof(*bpf));
        memcpy(f->key, key, ZC_SHA256_DIGEST_SIZE);
        for (size_t i = 0; i < ZC_SHA256_DIGEST_SIZE; i++) {
                f->key_hex[2 * i] = hex[key[i] >> 4];
                f->key_hex[2 * i + 1] = hex[key[i] & 15];
        }
        f->bpf_len = bpf_len;
        f->flags = flags;
        snprintf(f->hash, sizeof(f->hash), "%s", hash ? hash : "");
        f->compile_nsec = compile_nsec;
        f->owner = uid;
        push_newest(c, f);
        c->n++;
        if (ret)
                *ret = f;
        return 0;
}

void zd_filter_cache_clear(struct zd_filter_cache *c) {
        while (c->newest)
                drop(c, c->newest);
        c->n_budgets = 0;
}

/* The debt of b at now: what was charged, less what a rate of ZD_FILTER_BUDGET_NSEC per
 * ZD_FILTER_BUCKET_NSEC paid back since. */
static uint64_t debt_at(const struct zd_filter_budget *b, uint64_t now) {
        uint64_t paid = now > b->at ? (now - b->at) / (ZD_FILTER_BUCKET_NSEC / ZD_FILTER_BUDGET_NSEC) : 0;

        return b->debt_nsec > paid ? b->debt_nsec - paid : 0;
}

static struct zd_filter_budget *budget_of(struct zd_filter_cache *c, uid_t uid, uint64_t now, bool make) {
        struct zd_filter_budget *b = NULL, *stale = NULL;

        for (size_t i = 0; i < c->n_budgets && !b; i++) {
                if (c->budgets[i].uid == uid)
                        b = &c->budgets[i];
                else if (!stale && debt_at(&c->budgets[i], now) == 0 && now - c->budgets[i].at >= ZD_FILTER_BUCKET_NSEC)
                        stale = &c->budgets[i];
        }
        if (b) {
                /* brought up to date without losing the remainder of the division */
                uint64_t paid = now > b->at ? (now - b->at) / (ZD_FILTER_BUCKET_NSEC / ZD_FILTER_BUDGET_NSEC) : 0;
                if (paid >= b->debt_nsec) {
                        b->debt_nsec = 0;
                        b->at = now > b->at ? now : b->at;
                } else {
                        b->debt_nsec -= paid;
                        b->at += paid * (ZD_FILTER_BUCKET_NSEC / ZD_FILTER_BUDGET_NSEC);
                }
                return b;
        }
        if (!make)
                return NULL;
        if (!stale && c->n_budgets < ZD_FILTER_BUDGET_UIDS)
                stale = &c->budgets[c->n_budgets++];
        if (stale)
                *stale = (struct zd_filter_budget){ .uid = uid, .at = now };
        return stale;
}

int zd_filter_budget_check(struct zd_filter_cache *c, uid_t uid, uint64_t now_nsec) {
        struct zd_filter_budget *b;

        if (uid == 0)
                return 0;
        b = budget_of(c, uid, now_nsec, true);
        if (!b)
                return -EUSERS;
        return b->debt_nsec >= ZD_FILTER_BUDGET_NSEC ? -EDQUOT : 0;
}

void zd_filter_budget_charge(struct zd_filter_cache *c, uid_t uid, uint64_t now_nsec, uint64_t nsec) {
        struct zd_filter_budget *b;

        if (uid == 0)
                return;
        b = budget_of(c, uid, now_nsec, false);
        if (b)
                b->debt_nsec = b->debt_nsec + nsec < b->debt_nsec ? UINT64_MAX : b->debt_nsec + nsec;
}

uint64_t zd_filter_complexity(size_t n_arches, const size_t *names, const size_t *args, size_t n_rules) {
        uint64_t sum = 0;

        for (size_t i = 0; i < n_rules; i++) {
                uint64_t k;
                if (__builtin_mul_overflow((uint64_t) names[i], (uint64_t) args[i], &k) ||
                    __builtin_add_overflow(sum, k, &sum))
                        return UINT64_MAX;
        }
        if (__builtin_mul_overflow(sum, (uint64_t) (n_arches ? n_arches : 1), &sum))
                return UINT64_MAX;
        return sum;
}
