/* SPDX-License-Identifier: MIT */
/*
 * daemon/filter-cache.c alone: the key is the SHA-256 of the serialization, the cache keeps at
 * most 256 programs and 16 per non-root uid, least recently used first out, a non-root uid never
 * pushes out root's, and the compile-time budget of a non-root uid runs out and comes back with
 * the next bucket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "filter-cache.h"
#include "testutil.h"

static const struct sock_filter prog[2] = {
        { 0x20, 0, 0, 4 },          /* ld arch */
        { 0x06, 0, 0, 0x7fff0000 }, /* ret ALLOW */
};

/* A distinct key per number. */
static void key_of(unsigned n, uint8_t key[ZC_SHA256_DIGEST_SIZE]) {
        char text[64];

        snprintf(text, sizeof(text), "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"n\":%u}", n);
        zd_filter_key(text, strlen(text), key);
}

static int insert(struct zd_filter_cache *c, unsigned n, uid_t uid) {
        uint8_t key[ZC_SHA256_DIGEST_SIZE];

        key_of(n, key);
        return zd_filter_cache_insert(c, key, uid, prog, 2, 0, "h", 1000, NULL);
}

static bool present(struct zd_filter_cache *c, unsigned n) {
        uint8_t key[ZC_SHA256_DIGEST_SIZE];

        key_of(n, key);
        for (struct zd_filter *f = c->newest; f; f = f->older)
                if (memcmp(f->key, key, sizeof(key)) == 0)
                        return true;
        return false;
}

static void test_key_is_sha256_of_text(void **state) {
        uint8_t key[ZC_SHA256_DIGEST_SIZE];
        char hex[65];
        struct zd_filter_cache c = {};
        struct zd_filter *f = NULL;

        zd_filter_key("abc", 3, key);
        zc_sha256_hex("abc", 3, hex);
        assert_int_equal(zd_filter_cache_insert(&c, key, 0, prog, 2, 4, "h", 0, &f), 0);
        assert_string_equal(f->key_hex, hex);
        assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        /* The same text finds the entry, one byte more does not. */
        assert_ptr_equal(zd_filter_cache_lookup(&c, key, 0), f);
        zd_filter_key("abc ", 4, key);
        assert_null(zd_filter_cache_lookup(&c, key, 0));
        assert_int_equal(c.hits, 1);
        assert_int_equal(c.misses, 1);
        assert_int_equal(f->flags, 4);
        assert_int_equal(f->bpf_len, 2);
        assert_memory_equal(f->bpf, prog, sizeof(prog));
        zd_filter_key("abc", 3, key);
        assert_int_equal(zd_filter_cache_insert(&c, key, 0, prog, 2, 0, "h", 0, NULL), -EEXIST);
        zd_filter_cache_clear(&c);
        assert_int_equal(c.n, 0);
}

static void test_per_uid_limit_evicts_own_lru(void **state) {
        struct zd_filter_cache c = {};
        uint8_t key[ZC_SHA256_DIGEST_SIZE];

        for (unsigned i = 0; i < ZD_FILTER_CACHE_PER_UID; i++)
                assert_int_equal(insert(&c, i, 1000), 0);
        assert_int_equal(insert(&c, 500, 1001), 0);
        /* Use entry 0: entry 1 is now uid 1000's least recently used. */
        key_of(0, key);
        assert_non_null(zd_filter_cache_lookup(&c, key, 1000));
        assert_int_equal(insert(&c, 100, 1000), 0);
        assert_int_equal(zd_filter_cache_count(&c, 1000), ZD_FILTER_CACHE_PER_UID);
        assert_true(present(&c, 0));
        assert_false(present(&c, 1));
        assert_true(present(&c, 500)); /* another uid's entry is not touched */
        assert_int_equal(c.evictions, 1);
        zd_filter_cache_clear(&c);
}

static void test_global_limit_spares_root(void **state) {
        struct zd_filter_cache c = {};
        unsigned n = 0;

        /* Root fills all but one slot, then one user takes the last. */
        for (; n < ZD_FILTER_CACHE_MAX - 1; n++)
                assert_int_equal(insert(&c, n, 0), 0);
        assert_int_equal(insert(&c, n++, 1000), 0);
        assert_int_equal(c.n, ZD_FILTER_CACHE_MAX);
        /* Another user pushes out the user's entry, the only non-root one... */
        assert_int_equal(insert(&c, n++, 1001), 0);
        assert_false(present(&c, ZD_FILTER_CACHE_MAX - 1));
        /* ...and the next user pushes out that one; root's 255 all stay. */
        assert_int_equal(insert(&c, n++, 1002), 0);
        for (unsigned i = 0; i < ZD_FILTER_CACHE_MAX - 1; i++)
                assert_true(present(&c, i));
        assert_int_equal(c.n, ZD_FILTER_CACHE_MAX);
        zd_filter_cache_clear(&c);

        /* All root's: a user's program is not kept, and nothing is pushed out. */
        for (n = 0; n < ZD_FILTER_CACHE_MAX; n++)
                assert_int_equal(insert(&c, n, 0), 0);
        assert_int_equal(insert(&c, n, 1000), -ENOSPC);
        assert_int_equal(c.n, ZD_FILTER_CACHE_MAX);
        assert_false(present(&c, n));
        /* Root pushes out its own least recently used. */
        assert_int_equal(insert(&c, n, 0), 0);
        assert_false(present(&c, 0));
        assert_true(present(&c, 1));
        zd_filter_cache_clear(&c);
}

static void test_root_use_protects_a_user_entry(void **state) {
        struct zd_filter_cache c = {};
        uint8_t key[ZC_SHA256_DIGEST_SIZE];

        assert_int_equal(insert(&c, 0, 1000), 0);
        key_of(0, key);
        assert_non_null(zd_filter_cache_lookup(&c, key, 0)); /* root uses it: root's now */
        assert_int_equal(zd_filter_cache_count(&c, 1000), 0);
        for (unsigned i = 1; i <= ZD_FILTER_CACHE_PER_UID + 4; i++)
                assert_int_equal(insert(&c, i, 1000), 0);
        assert_true(present(&c, 0));
        assert_int_equal(zd_filter_cache_count(&c, 1000), ZD_FILTER_CACHE_PER_UID);
        zd_filter_cache_clear(&c);
}

static void test_budget(void **state) {
        struct zd_filter_cache c = {};
        uint64_t t = 5 * ZD_FILTER_BUCKET_NSEC + 1;

        assert_int_equal(zd_filter_budget_check(&c, 1000, t), 0);
        zd_filter_budget_charge(&c, 1000, t, ZD_FILTER_BUDGET_NSEC - 1);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + 1), 0);
        zd_filter_budget_charge(&c, 1000, t + 1, 1);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + 2), -EDQUOT);
        /* Another uid and root are not affected. */
        assert_int_equal(zd_filter_budget_check(&c, 1001, t + 2), 0);
        zd_filter_budget_charge(&c, 0, t, 100 * ZD_FILTER_BUDGET_NSEC);
        assert_int_equal(zd_filter_budget_check(&c, 0, t + 2), 0);
        /* Paid back at the rate of the budget per bucket. */
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + ZD_FILTER_BUCKET_NSEC), 0);

        /* More uids at once than the table tracks: the next one waits until a slot is a bucket
         * old and paid back. */
        t = 8 * ZD_FILTER_BUCKET_NSEC;
        for (uid_t u = 2000; u < 2000 + ZD_FILTER_BUDGET_UIDS; u++)
                assert_int_equal(zd_filter_budget_check(&c, u, t), 0);
        assert_int_equal(zd_filter_budget_check(&c, 5000, t), -EUSERS);
        assert_int_equal(zd_filter_budget_check(&c, 5000, t + ZD_FILTER_BUCKET_NSEC), 0);
        zd_filter_cache_clear(&c);
}

/* One compile that cost 5 s of CPU keeps its uid out until 4 s of it are paid back (40 s), across
 * any bucket boundary: the window a compile started in does not matter. */
static void test_expensive_compile_is_paid_back(void **state) {
        struct zd_filter_cache c = {};
        uint64_t t = 3 * ZD_FILTER_BUCKET_NSEC - 1; /* just before a boundary */
        uint64_t rate = ZD_FILTER_BUCKET_NSEC / ZD_FILTER_BUDGET_NSEC;

        assert_int_equal(zd_filter_budget_check(&c, 1000, t), 0);
        zd_filter_budget_charge(&c, 1000, t + 2, 5 * ZD_FILTER_BUDGET_NSEC);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + 3), -EDQUOT);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + ZD_FILTER_BUCKET_NSEC), -EDQUOT);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + 2 + 4 * ZD_FILTER_BUDGET_NSEC * rate - rate), -EDQUOT);
        assert_int_equal(zd_filter_budget_check(&c, 1000, t + 2 + 4 * ZD_FILTER_BUDGET_NSEC * rate + rate), 0);
        zd_filter_cache_clear(&c);
}

static void test_complexity(void **state) {
        size_t names[] = { 1, 1, 3, 400 }, args[] = { 6, 6, 2, 0 };
        size_t huge[] = { SIZE_MAX, SIZE_MAX };

        assert_int_equal(zd_filter_complexity(3, names, args, 4), 3 * (6 + 6 + 6 + 0));
        assert_int_equal(zd_filter_complexity(0, names, args, 4), 18); /* at least one */
        assert_int_equal(zd_filter_complexity(3, names, args, 0), 0);
        assert_true(zd_filter_complexity(16, huge, huge, 2) == UINT64_MAX);
        /* an object that is costly to compile (about 180 entries of six comparisons, three architectures) */
        size_t n180[180], a180[180];
        for (size_t i = 0; i < 180; i++)
                n180[i] = 1, a180[i] = 6;
        assert_true(zd_filter_complexity(3, n180, a180, 180) > ZD_FILTER_ARG_CMP_MAX);
        /* a container engine's default profile: a few comparisons */
        assert_true(zd_filter_complexity(3, names + 2, args + 2, 2) <= ZD_FILTER_ARG_CMP_MAX);
}

TU_MAIN(cmocka_unit_test(test_key_is_sha256_of_text), cmocka_unit_test(test_per_uid_limit_evicts_own_lru),
        cmocka_unit_test(test_global_limit_spares_root), cmocka_unit_test(test_root_use_protects_a_user_entry),
        cmocka_unit_test(test_budget), cmocka_unit_test(test_expensive_compile_is_paid_back),
        cmocka_unit_test(test_complexity))
