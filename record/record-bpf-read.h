/* SPDX-License-Identifier: MIT */
/*
 * A recording made by zygoted's eBPF tracer (the "record" of a recorded task's exit reply, as
 * io.zygote.Launcher's Wait describes it) read into a set (record-set.h). Library code.
 */
#pragma once

#include <json-c/json.h>

#include "record-set.h"

/* Adds every call and argument fact of o to s. clone3 brings clone along with the same flags:
 * the profile written answers clone3 ENOSYS, and the C library then takes clone, which must be
 * there. *ret_incomplete (borrowed from o) says what the tracer missed, NULL when nothing.
 * -EINVAL on a malformed record, -ENOMEM, -E2BIG (record-set.h). */
int rec_bpf_parse(json_object *o, struct rec_set *s, const char **ret_incomplete);
