/* SPDX-License-Identifier: MIT */
/*
 * Table-driven JSON dispatch; see json-dispatch.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json-dispatch.h"

const char *zc_json_string_strict(json_object *v) {
        if (!json_object_is_type(v, json_type_string))
                return NULL;
        const char *s = json_object_get_string(v);
        return strlen(s) == (size_t) json_object_get_string_len(v) ? s : NULL;
}

static const struct zc_json_field *find_field(const struct zc_json_field *table, const char *name) {
        for (const struct zc_json_field *f = table; f->name; f++)
                if (strcmp(f->name, name) == 0)
                        return f;
        return NULL;
}

/* [min, max] when the table gives a range, else the C type's own. */
static bool in_range(const struct zc_json_field *f, int64_t v, int64_t lo, int64_t hi) {
        if (f->min < f->max) {
                lo = f->min;
                hi = f->max;
        }
        return v >= lo && v <= hi;
}

static int dispatch_int(const struct zc_json_field *f, json_object *v, void *p) {
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        int64_t i = json_object_get_int64(v);
        /* json-c keeps integers above INT64_MAX as uint64 and clamps them here. */
        if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t) INT64_MAX && f->type != ZC_JSON_UINT64)
                return -ERANGE;
        switch (f->type) {
        case ZC_JSON_INT:
                if (!in_range(f, i, INT32_MIN, INT32_MAX))
                        return -ERANGE;
                *(int *) p = (int) i;
                return 0;
        case ZC_JSON_INT64:
                if (!in_range(f, i, INT64_MIN, INT64_MAX))
                        return -ERANGE;
                *(int64_t *) p = i;
                return 0;
        case ZC_JSON_UINT:
                if (!in_range(f, i, 0, UINT32_MAX))
                        return -ERANGE;
                *(unsigned *) p = (unsigned) i;
                return 0;
        case ZC_JSON_UINT64: {
                if (i < 0)
                        return -ERANGE;
                uint64_t u = json_object_get_uint64(v);
                if (f->min < f->max && (u < (uint64_t) f->min || u > (uint64_t) f->max))
                        return -ERANGE;
                *(uint64_t *) p = u;
                return 0;
        }
        default:
                return -EINVAL;
        }
}

/* The JSON type a field of each type must have (json_type_null: none checked here; the integer
 * types are checked in dispatch_int, CUSTOM by its callback). */
static const enum json_type json_type_of[] = {
        [ZC_JSON_STRING] = json_type_string, [ZC_JSON_BOOL] = json_type_boolean, [ZC_JSON_OBJECT] = json_type_object,
        [ZC_JSON_ARRAY] = json_type_array,   [ZC_JSON_STRV] = json_type_array,
};

static int dispatch_one(const struct zc_json_field *f, json_object *v, void *p, void *userdata) {
        int r;

        if ((size_t) f->type < sizeof(json_type_of) / sizeof(json_type_of[0]) &&
            json_type_of[f->type] != json_type_null && !json_object_is_type(v, json_type_of[f->type]))
                return -EINVAL;

        switch (f->type) {
        case ZC_JSON_STRING: {
                /* Never a string with an embedded NUL ("\u0000"): C would cut it short, and a
                 * caller could then name one thing to a filter and another to the daemon. */
                const char *s = zc_json_string_strict(v);
                if (!s || ((f->flags & ZC_JSON_NONEMPTY) && !*s))
                        return -EINVAL;
                *(const char **) p = s;
                break;
        }
        case ZC_JSON_BOOL:
                *(bool *) p = json_object_get_boolean(v);
                break;
        case ZC_JSON_INT:
        case ZC_JSON_INT64:
        case ZC_JSON_UINT:
        case ZC_JSON_UINT64:
                r = dispatch_int(f, v, p);
                if (r < 0)
                        return r;
                break;
        case ZC_JSON_OBJECT:
                *(json_object **) p = v;
                break;
        case ZC_JSON_ARRAY:
        case ZC_JSON_STRV: {
                size_t n = json_object_array_length(v);
                if ((f->max > 0 && n > (uint64_t) f->max) || ((f->flags & ZC_JSON_NONEMPTY) && n == 0))
                        return -EINVAL;
                if (f->type == ZC_JSON_STRV)
                        for (size_t i = 0; i < n; i++)
                                if (!zc_json_string_strict(json_object_array_get_idx(v, i)))
                                        return -EINVAL;
                *(json_object **) p = v;
                break;
        }
        case ZC_JSON_CUSTOM:
                break;
        default:
                return -EINVAL;
        }
        if (f->callback)
                return f->callback(f->name, v, p, userdata);
        return f->type == ZC_JSON_CUSTOM ? -EINVAL : 0;
}

int zc_json_dispatch(json_object *obj, const struct zc_json_field *table, unsigned flags, void *data, void *userdata,
                     const char **ret_bad_field) {
        const char *bad = NULL;
        int r = 0;

        if (!json_object_is_type(obj, json_type_object)) {
                r = -EINVAL;
                goto finish;
        }
        json_object_object_foreach(obj, key, val) {
                const struct zc_json_field *f = find_field(table, key);
                if (!f) {
                        if (flags & ZC_JSON_ALLOW_UNKNOWN)
                                continue;
                        bad = key;
                        r = -EADDRNOTAVAIL;
                        goto finish;
                }
                if (json_object_is_type(val, json_type_null)) {
                        /* Null is "absent" for a mandatory field, found missing below. */
                        if (f->flags & (ZC_JSON_NULLABLE | ZC_JSON_MANDATORY))
                                continue;
                        bad = key;
                        r = -EINVAL;
                        goto finish;
                }
                r = dispatch_one(f, val, (char *) data + f->offset, userdata);
                if (r < 0) {
                        bad = key;
                        goto finish;
                }
        }
        for (const struct zc_json_field *f = table; f->name; f++) {
                json_object *v;
                if ((f->flags & ZC_JSON_MANDATORY) &&
                    (!json_object_object_get_ex(obj, f->name, &v) || json_object_is_type(v, json_type_null))) {
                        bad = f->name;
                        r = -ENXIO;
                        goto finish;
                }
        }
finish:
        if (r < 0 && ret_bad_field)
                *ret_bad_field = bad;
        return r;
}

size_t zc_json_text_nul_escapes(const char *s, size_t n) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] != '\\')
                        continue;
                /* An escape: \\ is one (so "\\u0000" is a backslash and text), \u0000 a NUL. */
                if (i + 5 < n && memcmp(s + i + 1, "u0000", 5) == 0) {
                        count++;
                        i += 5;
                } else
                        i++;
        }
        return count;
}

size_t zc_json_nuls(json_object *v) {
        size_t count = 0;
        switch (json_object_get_type(v)) {
        case json_type_string: {
                const char *s = json_object_get_string(v), *end = s + json_object_get_string_len(v);
                for (const char *p = s; (p = memchr(p, 0, (size_t) (end - p))); p++)
                        count++;
                break;
        }
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        count += zc_json_nuls(json_object_array_get_idx(v, i));
                break;
        case json_type_object: {
                struct json_object_iterator it = json_object_iter_begin(v), end = json_object_iter_end(v);
                for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
                        count += zc_json_nuls(json_object_iter_peek_value(&it));
                break;
        }
        default:
                break;
        }
        return count;
}

/* The length of the UTF-8 sequence at s (n > 0 bytes left) when it is one (RFC 3629: shortest
 * form, no surrogate, at most U+10FFFF), else 0. */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
        size_t len;
        uint32_t cp, min;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f, min = 0x80;
        else if ((s[0] & 0xf0) == 0xe0)
                len = 3, cp = s[0] & 0x0f, min = 0x800;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07, min = 0x10000;
        else
                return 0; /* a continuation byte, C0/C1 (always overlong), F5..FF */
        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

bool zc_utf8_valid(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        for (size_t i = 0, k; i < n; i += k)
                if ((k = utf8_sequence(p + i, n - i)) == 0)
                        return false;
        return true;
}

char *zc_utf8_make_valid(const char *s, size_t n, size_t *ret_len) {
        const unsigned char *p = (const unsigned char *) s;
        char *out = malloc(n * 3 + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0, k; i < n; i += k) {
                k = utf8_sequence(p + i, n - i);
                if (k > 0)
                        o = mempcpy(o, s + i, k);
                else {
                        o = mempcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD for the one bad byte */
                        k = 1;
                }
        }
        *o = 0;
        *ret_len = (size_t) (o - out);
        return out;
}

bool zc_json_text_has_control(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                        return true;
        }
        return false;
}
