/* SPDX-License-Identifier: MIT */
/* One journal line per refused call, rate-limited per uid; see refused.c. */
#pragma once

#include <json-c/json.h>
#include <sys/types.h>

/* At most this many lines per uid per second; the rest are counted and said in one line. */
#define ZD_REFUSED_BURST 10

/* Logs that method (NULL: none named) was refused with error, params as answered. */
void zd_refused_log(const char *method, const char *error, json_object *params, uid_t uid, pid_t pid);
