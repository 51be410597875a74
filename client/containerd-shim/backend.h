/* SPDX-License-Identifier: MIT */
/* zygoted, as the Task service uses it: a connection per call (calls run in parallel, and
 * libzygote takes one call at a time per connection), and the daemon's errors as messages. */
#pragma once

#include <zygote.h>

#include "ttrpc.h"

int zs_backend_connect(zy_conn **ret);

/* Records what failed (what: "create", "start"...) with the daemon's error and returns r. */
int zs_backend_fail(struct zs_ttrpc_result *res, zy_conn *c, int r, const char *what);
