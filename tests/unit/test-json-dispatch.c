/* SPDX-License-Identifier: MIT */
/* common/json-dispatch.c: every type, the flags, and which field a failure names. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json-dispatch.h"
#include "testutil.h"

struct req {
        const char *name;
        bool flag;
        int count;
        int64_t big;
        unsigned small;
        uint64_t huge;
        json_object *obj;
        json_object *list;
        json_object *argv;
        int custom;
};

static int even_only(const char *name, json_object *v, void *ret, void *userdata) {
        int *calls = userdata;
        (*calls)++;
        if (!json_object_is_type(v, json_type_int) || json_object_get_int(v) % 2)
                return -EDOM;
        *(int *) ret = json_object_get_int(v);
        return 0;
}

static const struct zc_json_field table[] = {
        { .name = "name",
          .type = ZC_JSON_STRING,
          .offset = offsetof(struct req, name),
          .flags = ZC_JSON_MANDATORY | ZC_JSON_NONEMPTY },
        { .name = "flag", .type = ZC_JSON_BOOL, .offset = offsetof(struct req, flag), .flags = ZC_JSON_NULLABLE },
        { .name = "count",
          .type = ZC_JSON_INT,
          .offset = offsetof(struct req, count),
          .flags = 0,
          .min = 1,
          .max = 64 },
        { .name = "big", .type = ZC_JSON_INT64, .offset = offsetof(struct req, big), .flags = 0 },
        { .name = "small", .type = ZC_JSON_UINT, .offset = offsetof(struct req, small), .flags = 0 },
        { .name = "huge", .type = ZC_JSON_UINT64, .offset = offsetof(struct req, huge), .flags = 0 },
        { .name = "obj", .type = ZC_JSON_OBJECT, .offset = offsetof(struct req, obj), .flags = 0 },
        { .name = "list", .type = ZC_JSON_ARRAY, .offset = offsetof(struct req, list), .flags = 0, .max = 2 },
        { .name = "argv",
          .type = ZC_JSON_STRV,
          .offset = offsetof(struct req, argv),
          .flags = ZC_JSON_NONEMPTY,
          .max = 3 },
        { .name = "custom", .type = ZC_JSON_CUSTOM, .offset = offsetof(struct req, custom), .callback = even_only },
        {},
};

/* Dispatches text; returns the result and the named field (or "" when none). */
static int run(const char *text, struct req *req, const char **bad, json_object **keep) {
        int calls = 0;
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        *req = (struct req){ .count = 7 };
        *bad = "";
        int r = zc_json_dispatch(o, table, 0, req, &calls, bad);
        if (!*bad)
                *bad = "(null)";
        *keep = o;
        return r;
}

/* text is refused with error r, naming field as the bad one. */
static void expect_refused(const char *text, int r, const char *field) {
        struct req q;
        const char *bad;
        json_object *o;

        assert_int_equal(run(text, &q, &bad, &o), r);
        assert_string_equal(bad, field);
        json_object_put(o);
}

static void test_all_types(void **state) {
        struct req q;
        const char *bad;
        json_object *o;
        int r = run("{\"name\":\"x\",\"flag\":true,\"count\":64,\"big\":-5000000000,\"small\":4000000000,"
                    "\"huge\":18446744073709551615,\"obj\":{\"a\":1},\"list\":[1,\"b\"],\"argv\":[\"a\",\"b\"],"
                    "\"custom\":4}",
                    &q, &bad, &o);
        assert_int_equal(r, 0);
        assert_string_equal(bad, "");
        assert_string_equal(q.name, "x");
        assert_true(q.flag);
        assert_int_equal(q.count, 64);
        assert_true(q.big == -5000000000LL);
        assert_int_equal(q.small, 4000000000u);
        assert_true(q.huge == UINT64_MAX);
        assert_non_null(q.obj);
        assert_int_equal(json_object_array_length(q.list), 2);
        assert_int_equal(json_object_array_length(q.argv), 2);
        assert_int_equal(q.custom, 4);
        json_object_put(o);
}

static void test_defaults_and_null(void **state) {
        struct req q;
        const char *bad;
        json_object *o;
        /* Absent and nullable-null fields keep what the caller put there. */
        assert_int_equal(run("{\"name\":\"x\",\"flag\":null}", &q, &bad, &o), 0);
        assert_int_equal(q.count, 7);
        assert_false(q.flag);
        assert_null(q.argv);
        json_object_put(o);
        /* Null where null is not allowed names the field. */
        expect_refused("{\"name\":\"x\",\"count\":null}", -EINVAL, "count");
}

static void test_mandatory(void **state) {
        expect_refused("{}", -ENXIO, "name");
        expect_refused("{\"name\":null}", -ENXIO, "name");
}

static void test_bad_values(void **state) {
        static const struct {
                const char *text;
                const char *field;
        } cases[] = {
                { "{\"name\":5}", "name" },
                { "{\"name\":\"\"}", "name" },
                { "{\"name\":\"a\\u0000b\"}", "name" },
                { "{\"name\":\"x\",\"flag\":1}", "flag" },
                { "{\"name\":\"x\",\"count\":0}", "count" },
                { "{\"name\":\"x\",\"count\":65}", "count" },
                { "{\"name\":\"x\",\"count\":1.5}", "count" },
                { "{\"name\":\"x\",\"small\":-1}", "small" },
                { "{\"name\":\"x\",\"small\":4294967296}", "small" },
                { "{\"name\":\"x\",\"big\":9223372036854775808}", "big" },
                { "{\"name\":\"x\",\"huge\":-1}", "huge" },
                { "{\"name\":\"x\",\"obj\":[]}", "obj" },
                { "{\"name\":\"x\",\"list\":[1,2,3]}", "list" },
                { "{\"name\":\"x\",\"argv\":[]}", "argv" },
                { "{\"name\":\"x\",\"argv\":[1]}", "argv" },
                { "{\"name\":\"x\",\"argv\":[\"a\\u0000\"]}", "argv" },
                { "{\"name\":\"x\",\"argv\":[\"a\",\"b\",\"c\",\"d\"]}", "argv" },
                { "{\"name\":\"x\",\"argv\":\"a\"}", "argv" },
                { "{\"name\":\"x\",\"custom\":3}", "custom" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct req q;
                const char *bad;
                json_object *o;
                int r = run(cases[i].text, &q, &bad, &o);
                if (r >= 0 || strcmp(bad, cases[i].field) != 0)
                        fail_msg("%s: r=%d bad=%s, expected %s", cases[i].text, r, bad, cases[i].field);
                json_object_put(o);
        }
}

static void test_unknown_and_order(void **state) {
        expect_refused("{\"name\":\"x\",\"bogus\":1}", -EADDRNOTAVAIL, "bogus");
        /* The first bad key in the object's order is the one named, before any missing field. */
        expect_refused("{\"count\":0,\"bogus\":1}", -ERANGE, "count");
        expect_refused("{\"bogus\":1,\"count\":0}", -EADDRNOTAVAIL, "bogus");
        /* Unknown keys may be allowed (a client reading replies that grow new fields). */
        json_object *v = json_tokener_parse("{\"name\":\"x\",\"bogus\":1}");
        int calls = 0;
        struct req r2 = {};
        assert_int_equal(zc_json_dispatch(v, table, ZC_JSON_ALLOW_UNKNOWN, &r2, &calls, NULL), 0);
        assert_string_equal(r2.name, "x");
        json_object_put(v);
}

static void test_not_an_object(void **state) {
        json_object *v = json_tokener_parse("[1]");
        struct req q = {};
        const char *bad = "unset";
        assert_int_equal(zc_json_dispatch(v, table, 0, &q, NULL, &bad), -EINVAL);
        assert_null(bad);
        assert_int_equal(zc_json_dispatch(NULL, table, 0, &q, NULL, NULL), -EINVAL);
        json_object_put(v);
}

static void test_callback_as_extra_check(void **state) {
        static const struct zc_json_field t[] = {
                { .name = "n", .type = ZC_JSON_INT, .offset = 0, .flags = 0, .callback = even_only },
                {},
        };
        json_object *v = json_tokener_parse("{\"n\":3}");
        int n = 0, calls = 0;
        const char *bad = NULL;
        assert_int_equal(zc_json_dispatch(v, t, 0, &n, &calls, &bad), -EDOM);
        assert_string_equal(bad, "n");
        assert_int_equal(calls, 1);
        json_object_put(v);
        /* A type error comes first: the callback is not asked. */
        v = json_tokener_parse("{\"n\":\"x\"}");
        calls = 0;
        assert_int_equal(zc_json_dispatch(v, t, 0, &n, &calls, &bad), -EINVAL);
        assert_int_equal(calls, 0);
        json_object_put(v);
}

/* A key with \u0000 is found by comparing the text's escapes with the values' NULs. */
static void test_nul_in_keys(void **state) {
        static const struct {
                const char *text;
                size_t escapes, nuls;
        } cases[] = {
                { "{\"a\":\"x\"}", 0, 0 },
                { "{\"a\":\"x\\u0000y\",\"b\":[\"\\u0000\",{\"c\":\"\\u0000\"}]}", 3, 3 },
                { "{\"a\\u0000b\":\"x\"}", 1, 0 },
                { "{\"a\":\"\\\\u0000\"}", 0, 0 }, /* an escaped backslash, then text */
                { "{\"a\":\"\\\\\\u0000\"}", 1, 1 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *v = json_tokener_parse(cases[i].text);
                assert_non_null(v);
                assert_int_equal(zc_json_text_nul_escapes(cases[i].text, strlen(cases[i].text)), cases[i].escapes);
                assert_int_equal(zc_json_nuls(v), cases[i].nuls);
                json_object_put(v);
        }
}

static void test_utf8(void **state) {
        static const char *good[] = { "",
                                      "a",
                                      "\xc2\x80",
                                      "\xe0\xa0\x80",
                                      "\xed\x9f\xbf",
                                      "\xee\x80\x80",
                                      "\xf0\x90\x80\x80",
                                      "\xf4\x8f\xbf\xbf",
                                      "\xef\xbf\xbd" };
        static const char *bad[] = { "\xc0\xaf",     "\xc1\xbf",     "\xe0\x80\xaf",     "\xf0\x80\x80\xaf",
                                     "\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
                                     "\xff",         "\x80",         "\xe2\x82",         "a\xe2\x82" };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                assert_true(zc_utf8_valid(good[i], strlen(good[i])));
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_false(zc_utf8_valid(bad[i], strlen(bad[i])));
                size_t n;
                char *v = zc_utf8_make_valid(bad[i], strlen(bad[i]), &n);
                assert_non_null(v);
                assert_int_equal(strlen(v), n);
                assert_true(zc_utf8_valid(v, n));
                free(v);
        }
        size_t n;
        char *v = zc_utf8_make_valid("x\xed\xa0\x80y\xc3\xa9", 7, &n);
        assert_string_equal(v, "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy\xc3\xa9");
        free(v);
}

TU_MAIN(cmocka_unit_test(test_all_types), cmocka_unit_test(test_defaults_and_null), cmocka_unit_test(test_mandatory),
        cmocka_unit_test(test_bad_values), cmocka_unit_test(test_unknown_and_order),
        cmocka_unit_test(test_not_an_object), cmocka_unit_test(test_callback_as_extra_check),
        cmocka_unit_test(test_nul_in_keys), cmocka_unit_test(test_utf8))
