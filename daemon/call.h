/* SPDX-License-Identifier: MIT */
/*
 * One method call while its handler runs: the connection, the parameters, the fds that came
 * with it, and the error to answer if the handler fails.
 *
 * A handler returns 0 when it replied or its reply comes later (from the task table), or a
 * negative errno after recording, with zd_call_fail() and friends, the error the caller gets.
 * The dispatcher (methods.c) answers that error; a failure with no recorded error is answered
 * with PermissionDenied and the errno's text. So no handler needs to know whether a reply
 * already went out: only the dispatcher answers errors.
 *
 * Header-only: the spawn module and methods.c both use it, and neither may call the other's
 * helpers.
 */
#pragma once

#include <errno.h>
#include <json-c/json.h>
#include <stddef.h>

#include "json-dispatch.h"
#include "zygote-protocol.h"

struct zd_conn;
struct zd_daemon;

struct zd_call {
        struct zd_daemon *d;
        struct zd_conn *conn;
        json_object *params; /* always an object */
        int *fds;            /* closed by the dispatcher after the handler returns */
        size_t n_fds;
        const char *error; /* ZD_ERROR_*: what a failed handler answers */
        json_object *error_params;
};

/* Records the error the dispatcher answers (params taken) and returns r (< 0). */
static inline int zd_call_fail(struct zd_call *call, int r, const char *error, json_object *params) {
        json_object_put(call->error_params);
        call->error = error;
        call->error_params = params;
        return r < 0 ? r : -EINVAL;
}

/* An error with one string parameter. */
static inline int zd_call_failf(struct zd_call *call, int r, const char *error, const char *key, const char *value) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, key, json_object_new_string(value ? value : ""));
        return zd_call_fail(call, r, error, p);
}

/* PermissionDenied with the reason. */
static inline int zd_call_denied(struct zd_call *call, const char *reason) {
        return zd_call_failf(call, -EPERM, ZY_ERROR_PERMISSION_DENIED, "reason", reason);
}

/* InvalidParameter naming the parameter. */
static inline int zd_call_invalid(struct zd_call *call, const char *parameter) {
        return zd_call_failf(call, -EINVAL, ZY_ERROR_INVALID_PARAMETER, "parameter", parameter);
}

/* LimitExceeded: which limit, and its maximum. */
static inline int zd_call_limit(struct zd_call *call, const char *limit, long max) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "limit", json_object_new_string(limit));
        json_object_object_add(p, "max", json_object_new_int64(max));
        return zd_call_fail(call, -EAGAIN, ZY_ERROR_LIMIT_EXCEEDED, p);
}

/* The call's parameters through a dispatch table (unknown keys refused); InvalidParameter
 * naming the bad one. */
static inline int zd_call_dispatch(struct zd_call *call, const struct zc_json_field *table, void *data) {
        const char *bad = NULL;
        int r = zc_json_dispatch(call->params, table, 0, data, call, &bad);
        if (r < 0)
                return zd_call_invalid(call, bad ? bad : "parameters");
        return 0;
}
