/* SPDX-License-Identifier: MIT */
/* The ttrpc handler of containerd.task.v2.Task: one table of its methods, each with its request
 * type; errors become gRPC status codes (containerd turns them back into its errdefs). */
#pragma once

#include "ttrpc.h"

#define ZS_TASK_SERVICE "containerd.task.v2.Task"

void zs_service_handle(const char *service, const char *method, const uint8_t *payload, size_t length,
                       struct zs_ttrpc_result *res);

/* The status code for a negative errno. */
int zs_service_code(int err);
