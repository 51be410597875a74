/* SPDX-License-Identifier: MIT */
/*
 * Capability names <-> numbers, through libcap, in the one spelling Docker and the OCI spec use
 * ("CAP_CHOWN"). Used by the profile module (a profile's "capabilities", the seccomp object's
 * includes/excludes "caps"), by Spawn's dropCapabilities and by zygote-runc's config.
 */
#pragma once

/* Capability n of a canonical upper-case name; -EINVAL for an unknown name, or for any other
 * spelling libcap would also take (lower case, a bare number). */
int zp_cap_from_name(const char *name, unsigned *ret);

/* Canonical name ("CAP_CHOWN") of capability n, malloc'd; -EINVAL when libcap has no name. */
int zp_cap_to_name(unsigned cap, char **ret);
