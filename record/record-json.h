/* SPDX-License-Identifier: MIT */
/*
 * A recorded set as an OCI/Docker seccomp profile, and back.
 *
 * Written: defaultAction SCMP_ACT_ERRNO (EPERM), the architectures seen, one SCMP_ACT_ALLOW rule
 * with every plain name, and Docker's argument rules for what it filters on: clone allowed with
 * no namespace flag but those seen (SCMP_CMP_MASKED_EQ on Docker's mask), socket for each family
 * seen and personality for each persona seen (SCMP_CMP_EQ), and clone3 answered with ENOSYS as
 * Docker does, so that the C library falls back to clone, whose flags a filter can see.
 *
 * Read: the same form back (a profile written here, or a plain allow-list), for the union of an
 * earlier run with a new one. What this form cannot hold (another default action, rules with other
 * arguments, includes/excludes) is refused with a message rather than dropped.
 */
#pragma once

#include <json-c/json.h>

#include "record-set.h"

/* The profile of s. *ret_unnamed (optional) counts calls libseccomp has no name for (left out).
 * Returns 0, -ENOMEM. */
int rec_json_build(const struct rec_set *s, json_object **ret, unsigned *ret_unnamed);

/* Adds the calls and facts of profile o to s. On a form it cannot hold: -EOPNOTSUPP (or -EINVAL
 * for a malformed one) and a malloc'd message in *ret_error. */
int rec_json_parse(json_object *o, struct rec_set *s, char **ret_error);

/* Reads path into s (nothing when it does not exist: returns 0, *ret_found false). */
int rec_json_read_file(const char *path, struct rec_set *s, bool *ret_found, char **ret_error);

/* Writes s to path, atomically (a temporary file beside it, renamed over it), mode 0644. */
int rec_json_write_file(const char *path, const struct rec_set *s, unsigned *ret_unnamed);
