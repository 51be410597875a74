/* SPDX-License-Identifier: MIT */
/*
 * The profile module's JSON layer: reads a profile file, parses it strictly with json-c, and gives
 * typed access to its values where every failure becomes one message that names the file and the
 * JSON location, e.g. "profiles/x.json: syscalls[3].action: unknown action \"SCMP_ACT_FOO\"".
 *
 * Internal to the profile module (profile.c, seccomp-oci.c, seccomp-compile.c); the public face
 * is profile.h. Every getter returns 0 or a negative errno and records the first message in the
 * loader; later failures keep it, since the first is the most precise.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PJ_LOC_MAX 192 /* a JSON location in messages, e.g. seccomp.syscalls[12].args[0].op */
#define PJ_QUOTE_MAX (64 * 4 + 8)

struct zp_json_loader {
        const char *path; /* the profile file */
        const char *file; /* the file being read: path, or the Docker/OCI file it refers to */
        char *error;      /* the first failure, malloc'd */
};

/* Records "<path>: <loc>: <message>" (or "<path>: seccomp file <file>: ..." while a referenced
 * file is read) unless a message is already there; returns err. loc may be NULL or "". */
int zp_json_fail(struct zp_json_loader *l, int err, const char *loc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* A string from the file, quoted for a message: escaped and cut at 64 bytes; returns buf. */
const char *zp_json_quote(const char *s, char buf[static PJ_QUOTE_MAX]);

/* Locations, built by bounded copies: one cut at PJ_LOC_MAX still reads fine. */
void zp_json_loc_key(char out[static PJ_LOC_MAX], const char *parent, const char *key); /* parent.key */
void zp_json_loc_index(char out[static PJ_LOC_MAX], const char *parent, size_t i);      /* parent[i] */

/* The value of key, or NULL when absent or JSON null (Docker's Go structs read null as absent). */
json_object *zp_json_field(json_object *o, const char *key);

/* o must be an object whose keys are all in allowed (NULL-terminated). */
int zp_json_object(struct zp_json_loader *l, json_object *o, const char *loc, const char *const *allowed);
int zp_json_get_array(struct zp_json_loader *l, json_object *v, const char *loc, size_t max, size_t *ret_n);
int zp_json_get_string(struct zp_json_loader *l, json_object *v, const char *loc, const char **ret);
/* A non-negative integer up to max. */
int zp_json_get_uint(struct zp_json_loader *l, json_object *v, const char *loc, uint64_t max, uint64_t *ret);
int zp_json_get_bool(struct zp_json_loader *l, json_object *v, const char *loc, bool *ret);

/* o's key, which must be present: *ret the value, loc_out its location ("missing \"key\"" at loc
 * otherwise). */
int zp_json_require(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                    char loc_out[static PJ_LOC_MAX], json_object **ret);
int zp_json_require_string(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                           char loc_out[static PJ_LOC_MAX], const char **ret);
/* o's optional array key of at most max entries: *ret is NULL (and *ret_n 0) when absent, else
 * the array, with its location in loc_out. */
int zp_json_optional_array(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                           char loc_out[static PJ_LOC_MAX], json_object **ret, size_t *ret_n);
/* o's optional integer key, up to max: *ret untouched when absent, loc_out set when present. */
int zp_json_optional_uint(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, uint64_t max,
                          char loc_out[static PJ_LOC_MAX], uint64_t *ret);
/* o's optional string key: *ret is NULL when absent. */
int zp_json_optional_string(struct zp_json_loader *l, json_object *o, const char *loc, const char *key,
                            const char **ret);

/* The one walk over a list of strings: o's optional key, an array of at most max strings; fn
 * gets each one with its location, in order, and the first negative return stops the walk.
 * *ret_n (may be NULL) is the number of entries, 0 when the key is absent. */
typedef int (*zp_json_string_fn)(struct zp_json_loader *l, const char *s, const char *loc, void *userdata);
int zp_json_string_array(struct zp_json_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                         zp_json_string_fn fn, void *userdata, size_t *ret_n);

/* Strict RFC 8259 JSON whose top level is an object; integers beyond 64 bits are refused (json-c
 * would clamp them). Messages give line and column. At most ZP_PROFILE_MAX_FILE_SIZE bytes. */
int zp_json_parse(struct zp_json_loader *l, const char *data, size_t size, json_object **ret);

/* Reads a regular file of at most ZP_PROFILE_MAX_FILE_SIZE bytes, NUL-terminated; -EBADFD for
 * anything but a regular file, -EFBIG beyond the limit. Records no message: callers word it. */
int zp_json_read_file(const char *path, char **ret, size_t *ret_size);
/* The same for rel, opened beneath the directory dir: -EXDEV when the path would leave it
 * ("..", a symlink pointing out). openat2(RESOLVE_BENEATH) where the kernel has it, else an
 * open checked afterwards through the opened file's path; zp_json_no_openat2 forces the latter
 * (tests). */
int zp_json_read_file_beneath(const char *dir, const char *rel, char **ret, size_t *ret_size);
extern bool zp_json_no_openat2;

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
