/* SPDX-License-Identifier: MIT */
/*
 * Table-driven JSON dispatch: one table of {name, type, offset, flags} says what a JSON object
 * may hold and where each field lands in a C struct, and one call checks the object against it
 * and fills the struct. The first bad field (wrong type, out of range, refused by its callback,
 * unknown) or the first missing mandatory field is named, so that a protocol error can say which
 * parameter was wrong.
 *
 * The object's keys are visited in their order in the object; a bad one stops the dispatch.
 * Mandatory fields that were absent (or null) are looked for afterwards, in table order.
 *
 * Values that are JSON themselves (objects, arrays, string arrays) are stored as borrowed
 * json_object pointers: they live as long as the object given to zc_json_dispatch(). Strings are
 * borrowed the same way. Nothing here logs or allocates beyond what json-c does.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zc_json_type {
        ZC_JSON_STRING, /* const char *, without an embedded NUL ("\u0000") */
        ZC_JSON_BOOL,   /* bool */
        ZC_JSON_INT,    /* int, within [min, max] when min < max */
        ZC_JSON_INT64,  /* int64_t, within [min, max] when min < max */
        ZC_JSON_UINT,   /* unsigned, within [min, max] when min < max */
        ZC_JSON_UINT64, /* uint64_t, within [min, max] when min < max */
        ZC_JSON_OBJECT, /* json_object *, a JSON object */
        ZC_JSON_ARRAY,  /* json_object *, a JSON array of at most max elements (max > 0) */
        ZC_JSON_STRV,   /* json_object *, an array of strings: at most max (when > 0), each
                          * without an embedded NUL */
        ZC_JSON_CUSTOM, /* the callback decides; it gets a pointer to the field */
};

enum {
        ZC_JSON_MANDATORY = 1u << 0, /* absent (or null) is an error */
        ZC_JSON_NULLABLE = 1u << 1,  /* null is accepted and leaves the field as it was */
        ZC_JSON_NONEMPTY = 1u << 3,  /* strings and arrays: refuse "" and [] */
};

/* Flags of zc_json_dispatch() itself. */
enum {
        ZC_JSON_ALLOW_UNKNOWN = 1u << 0, /* keys that are not in the table are skipped, not refused */
};

/* For ZC_JSON_CUSTOM, and as an extra check after the built-in one for every other type (then
 * ret points at the value just stored). Returns 0, or a negative errno that fails the dispatch
 * and names this field. */
typedef int (*zc_json_dispatch_fn)(const char *name, json_object *v, void *ret, void *userdata);

struct zc_json_field {
        const char *name;
        enum zc_json_type type;
        size_t offset; /* where the value goes in the struct given to zc_json_dispatch() */
        unsigned flags;
        int64_t min, max; /* ranges of the integer types; the length limit of arrays */
        zc_json_dispatch_fn callback;
};

/* Checks obj against table (ended by an entry with a NULL name) and fills data. Returns 0;
 * -EINVAL when obj is not an object (*ret_bad_field = NULL) or a value is bad; -ENXIO when a
 * mandatory field is missing; -EADDRNOTAVAIL for a key the table lacks; or a callback's error.
 * On failure *ret_bad_field names the field (a key of obj or a name of the table) and data may
 * hold the fields dispatched before the bad one. ret_bad_field may be NULL. */
int zc_json_dispatch(json_object *obj, const struct zc_json_field *table, unsigned flags, void *data, void *userdata,
                     const char **ret_bad_field);

/* The string of v when it is a string without an embedded NUL, else NULL. */
const char *zc_json_string_strict(json_object *v);

/* How many \u0000 escapes the JSON text s (n bytes) holds, keys included. */
size_t zc_json_text_nul_escapes(const char *s, size_t n);
/* How many NUL bytes the string values of v (and of everything it holds) carry. json-c cuts a
 * key at its first NUL, so a text whose escapes outnumber its values' NULs has a key holding
 * one: a key another parser reads whole ("method\u0000x") and json-c as another ("method"). */
size_t zc_json_nuls(json_object *v);

/* Whether the n bytes at s are UTF-8 (RFC 3629): no overlong form, no surrogate, nothing past
 * U+10FFFF, no stray byte. json-c's own check lets the first three through. */
bool zc_utf8_valid(const char *s, size_t n);
/* A copy of s (n bytes) with every byte that starts no valid sequence replaced by U+FFFD, NUL
 * terminated, its length in *ret_len; NULL when out of memory. */
char *zc_utf8_make_valid(const char *s, size_t n, size_t *ret_len);
/* Whether the JSON text holds a raw control byte other than the whitespace JSON allows between
 * tokens (RFC 8259 wants them escaped in strings; json-c takes them, and writes each back as a
 * six-byte \u00XX). */
bool zc_json_text_has_control(const char *s, size_t n);
