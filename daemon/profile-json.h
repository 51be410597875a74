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

struct pj_loader {
        const char *path; /* the profile file */
        const char *file; /* the file being read: path, or the Docker/OCI file it refers to */
        char *error;      /* the first failure, malloc'd */
};

/* Records "<path>: <loc>: <message>" (or "<path>: seccomp file <file>: ..." while a referenced
 * file is read) unless a message is already there; returns err. loc may be NULL or "". */
int pj_fail(struct pj_loader *l, int err, const char *loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A string from the file, quoted for a message: escaped and cut at 64 bytes; returns buf. */
const char *pj_quote(const char *s, char buf[static PJ_QUOTE_MAX]);

/* Locations, built by bounded copies: one cut at PJ_LOC_MAX still reads fine. */
void pj_loc_key(char out[static PJ_LOC_MAX], const char *parent, const char *key);   /* parent.key */
void pj_loc_index(char out[static PJ_LOC_MAX], const char *parent, size_t i);         /* parent[i] */

/* The value of key, or NULL when absent or JSON null (Docker's Go structs read null as absent). */
json_object *pj_field(json_object *o, const char *key);

/* o must be an object whose keys are all in allowed (NULL-terminated). */
int pj_object(struct pj_loader *l, json_object *o, const char *loc, const char *const *allowed);
int pj_get_array(struct pj_loader *l, json_object *v, const char *loc, size_t max, size_t *ret_n);
int pj_get_string(struct pj_loader *l, json_object *v, const char *loc, const char **ret);
/* A non-negative integer up to max. */
int pj_get_uint(struct pj_loader *l, json_object *v, const char *loc, uint64_t max, uint64_t *ret);
int pj_get_bool(struct pj_loader *l, json_object *v, const char *loc, bool *ret);

/* o's key, which must be present: *ret the value, loc_out its location ("missing \"key\"" at loc
 * otherwise). */
int pj_require(struct pj_loader *l, json_object *o, const char *loc, const char *key, char loc_out[static PJ_LOC_MAX],
               json_object **ret);
int pj_require_string(struct pj_loader *l, json_object *o, const char *loc, const char *key,
                      char loc_out[static PJ_LOC_MAX], const char **ret);
/* o's optional array key of at most max entries: *ret is NULL (and *ret_n 0) when absent, else
 * the array, with its location in loc_out. */
int pj_optional_array(struct pj_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                      char loc_out[static PJ_LOC_MAX], json_object **ret, size_t *ret_n);
/* o's optional integer key, up to max: *ret untouched when absent, loc_out set when present. */
int pj_optional_uint(struct pj_loader *l, json_object *o, const char *loc, const char *key, uint64_t max,
                     char loc_out[static PJ_LOC_MAX], uint64_t *ret);
/* o's optional string key: *ret is NULL when absent. */
int pj_optional_string(struct pj_loader *l, json_object *o, const char *loc, const char *key, const char **ret);

/* The one walk over a list of strings: o's optional key, an array of at most max strings; fn
 * gets each one with its location, in order, and the first negative return stops the walk.
 * *ret_n (may be NULL) is the number of entries, 0 when the key is absent. */
typedef int (*pj_string_fn)(struct pj_loader *l, const char *s, const char *loc, void *userdata);
int pj_string_array(struct pj_loader *l, json_object *o, const char *loc, const char *key, size_t max,
                    pj_string_fn fn, void *userdata, size_t *ret_n);

/* Strict RFC 8259 JSON whose top level is an object; integers beyond 64 bits are refused (json-c
 * would clamp them). Messages give line and column. At most ZY_PROFILE_MAX_FILE_SIZE bytes. */
int pj_parse(struct pj_loader *l, const char *data, size_t size, json_object **ret);

/* Reads a regular file of at most ZY_PROFILE_MAX_FILE_SIZE bytes, NUL-terminated; -EBADFD for
 * anything but a regular file, -EFBIG beyond the limit. Records no message: callers word it. */
int pj_read_file(const char *path, char **ret, size_t *ret_size);
/* The same for rel, opened beneath the directory dir: -EXDEV when the path would leave it
 * ("..", a symlink pointing out). openat2(RESOLVE_BENEATH) where the kernel has it, else an
 * open checked afterwards through the opened file's path; pj_no_openat2 forces the latter
 * (tests). */
int pj_read_file_beneath(const char *dir, const char *rel, char **ret, size_t *ret_size);
extern bool pj_no_openat2;

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
