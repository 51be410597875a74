/* SPDX-License-Identifier: MIT */
/* zygoted's calls for the Task service. */
#include "backend.h"

#include <errno.h>
#include <string.h>

#include "reply.h"

int zs_backend_connect(zy_conn **ret) {
        return zy_connect(NULL, ret);
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
        if (name)
                return zs_fail(res, r, "%s: zygoted: %s", what, name);
        if (r == -EOPNOTSUPP)
                return zs_fail(res, r, "%s: this zygoted has no container support", what);
        return zs_fail(res, r, "%s: %s", what, strerror(-r));
}
