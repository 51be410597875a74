/* SPDX-License-Identifier: MIT */
/* zygoted's calls for the Task service. */
#include "backend.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#include "reply.h"

int zs_backend_connect(zy_conn **ret) {
        return zy_connect(NULL, ret);
}

/* Appends to buf (of len, n used so far) and returns the new n, never more than len - 1. */
__attribute__((format(printf, 4, 5))) static size_t append(char *buf, size_t len, size_t n, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(buf + n, len - n, fmt, ap);
        va_end(ap);
        return k < 0 ? n : (size_t) k >= len - n ? len - 1 : n + (size_t) k;
}

/* What zygoted's error parameters say, for containerd (and so the kubelet) to show rather than
 * the name alone: ": REASON" (its reason or message), then " (KEY VALUE, ...)" for the others
 * (the profile, parameter or limit it concerns); "" when the error carried none. */
static void error_detail(zy_conn *c, char *buf, size_t len) {
        json_object *p = zy_conn_error_parameters(c), *v = NULL;
        size_t n = 0, others = 0;

        buf[0] = '\0';
        if (!p || !json_object_is_type(p, json_type_object))
                return;
        if ((json_object_object_get_ex(p, "reason", &v) || json_object_object_get_ex(p, "message", &v)) &&
            json_object_is_type(v, json_type_string))
                n = append(buf, len, n, ": %s", json_object_get_string(v));
        json_object_object_foreach(p, key, val) {
                if (val == v ||
                    !(json_object_is_type(val, json_type_string) || json_object_is_type(val, json_type_int)))
                        continue;
                n = append(buf, len, n, "%s%s %s", others++ ? ", " : " (", key, json_object_get_string(val));
        }
        if (others)
                (void) append(buf, len, n, ")");
}

int zs_backend_fail(struct zs_ttrpc_result *res, zy_conn *c, int r, const char *what) {
        const char *step = NULL, *message = NULL;
        const char *name = c ? zy_conn_error_name(c) : NULL;
        int err = 0;

        /* containerd's "unavailable", whatever kept the daemon out of reach */
        if (!c)
                return zs_fail(res, -ENOTCONN, "%s: cannot reach zygoted: %s", what, strerror(-r));
        /* the runtime's message says more than its errno, when there is one */
        if (r == -ECHILD && zy_conn_spawn_failure(c, &step, &err, &message) >= 0) {
                if (message && *message)
                        return zs_fail(res, r, "%s: the container failed at step %s: %s", what, step ? step : "?",
                                       message);
                return zs_fail(res, r, "%s: the container failed at step %s: %s", what, step ? step : "?",
                               strerror(err));
        }
        if (name) {
                char detail[512];

                error_detail(c, detail, sizeof(detail));
                return zs_fail(res, r, "%s: zygoted: %s%s", what, name, detail);
        }
        if (r == -EOPNOTSUPP)
                return zs_fail(res, r, "%s: this zygoted has no container support", what);
        return zs_fail(res, r, "%s: %s", what, strerror(-r));
}
