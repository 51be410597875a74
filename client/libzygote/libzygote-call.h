/* SPDX-License-Identifier: MIT */
/*
 * libzygote's typed call, private to the library (libzygote-call.c): a method's parameters from a
 * list of (kind, key, value), and its reply's parameters checked against a table of the
 * interface's fields (common/json-dispatch) into a struct of zygote.h, whose free function frees
 * by the same table. libzygote-tasks.c defines one such table (a shape) and one function per
 * method on top of it.
 */
#pragma once

#include <stddef.h>

#include "json-dispatch.h"
#include "zygote-private.h"

enum param_kind {
        P_END,
        P_ID,   /* const char *: required, not empty (-EINVAL otherwise) */
        P_STR,  /* const char *: left out when NULL */
        P_STRV, /* const char *const *: left out when NULL */
        P_BOOL, /* bool: left out when false */
        P_INT,  /* int: left out when 0 */
        P_JSON, /* json_object *, taken: left out when NULL */
};

/* What a reply (or one element of a reply's list) becomes: a struct of size bytes, filled by
 * fields. The fields also say what the struct owns: lzy_shape_free() frees by them. */
struct shape {
        const char *key; /* the object is this member of the reply's parameters; NULL: the parameters */
        size_t size;
        const struct zc_json_field *fields;
        int minus_one; /* offset + 1 of an int whose default is -1; 0: none */
        /* an enum field (at enum_at) from a string field (at name_at): its index in names, 0 when
         * absent (every enum of zygote.h has its UNKNOWN at 0) */
        const char *const *names;
        size_t name_at, enum_at;
        int fd_at;                   /* offset + 1 of the int that takes the reply's one fd; 0: none */
        const struct shape *element; /* the elements of its list field (F_LIST), if it has one */
};

/* Field callbacks (json-dispatch): each makes the dispatched value the struct's own, and
 * lzy_shape_free() frees what they made. */
int lzy_own_string(const char *name, json_object *v, void *p, void *userdata);
int lzy_own_strv(const char *name, json_object *v, void *p, void *userdata);
/* A float field may come as a JSON integer ("1700000000"). */
int lzy_get_time(const char *name, json_object *v, void *p, void *userdata);
/* [Object] of the shape's element into { T **items (NULL-terminated); size_t n; } at p, or into
 * a newly allocated such list whose pointer is at p (_ptr). */
int lzy_own_list(const char *name, json_object *a, void *p, void *userdata);
int lzy_own_list_ptr(const char *name, json_object *a, void *p, void *userdata);
/* [int], each a pid, into a struct pid_list at p. */
/* "pids": [int], each a pid, into a malloc'd array (one slot more, so that an empty list is
 * still a valid allocation). */
struct pid_list {
        pid_t *pids;
        size_t n;
};
int lzy_own_pids(const char *name, json_object *a, void *p, void *userdata);

#define REQ ZC_JSON_MANDATORY
#define OPT ZC_JSON_NULLABLE /* the interface's "?type": absent or null keeps the default */
#define F_(k, t, key, f, fl, ...) \
        { .name = key, .type = ZC_JSON_##k, .offset = offsetof(t, f), .flags = fl, __VA_ARGS__ }
#define F_STR(t, key, f) F_(STRING, t, key, f, REQ, .callback = lzy_own_string)
#define F_STRV(t, key, f) F_(STRV, t, key, f, REQ, .callback = lzy_own_strv)
#define F_INT(t, key, f, fl, lo, hi) F_(INT, t, key, f, fl, .min = lo, .max = hi)
#define F_UINT(t, key, f) F_(UINT, t, key, f, REQ, .min = 0)
#define F_BOOL(t, key, f) F_(BOOL, t, key, f, REQ, .min = 0)
#define F_TIME(t, key, f, fl) F_(CUSTOM, t, key, f, fl, .callback = lzy_get_time)
#define F_LIST(t, key, f, cb) F_(ARRAY, t, key, f, REQ, .callback = cb)

static inline void lzy_reply_freep(struct zy_reply **r) {
        zy_reply_free(*r);
}

/* Frees the struct p of shape s and what its fields own; NULL. */
void *lzy_shape_free(const struct shape *s, void *p);
/* The JSON object o as a new struct of shape s; the reply's one fd taken when s has fd_at. */
int lzy_object_from_json(json_object *o, const struct shape *s, struct zy_reply *reply, void **ret);

/* Sends method (flags: 0 or ZY_CALL_MORE) with fds and the parameters of the (kind, key, value)
 * list after flags, ended by P_END. */
int lzy_send_call_fds(zy_conn *c, const char *method, const int *fds, size_t n_fds, unsigned flags, ...);
int lzy_send_call(zy_conn *c, const char *method, unsigned flags, ...);
/* Reads one reply; a daemon error is its errno. With s, the reply becomes *ret (freed again
 * when ret is NULL: a malformed reply is a broken daemon even when the caller wants nothing). */
int lzy_read_reply(zy_conn *c, const struct shape *s, void *ret);
/* The one call of every typed helper: method with fds and the parameters of the (kind, key,
 * value) list after ret, then one reply of shape s (NULL: nothing but success expected). */
int lzy_call(zy_conn *c, const char *method, const int *fds, size_t n_fds, const struct shape *s, void *ret, ...);
