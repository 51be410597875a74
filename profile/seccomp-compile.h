/* SPDX-License-Identifier: MIT */
/*
 * A parsed OCI seccomp spec to a seccomp BPF program, through libseccomp, in its binary-tree
 * layout (SCMP_FLTATR_CTL_OPTIMIZE 2), and the program's measurements: size, longest path, hash,
 * and whether the worker's setup survives it (the `inherit` tier).
 *
 * Internal to the profile module.
 */
#pragma once

#include <seccomp.h>

#include "profile-json.h"
#include "profile.h"
#include "seccomp-oci.h"

/* Adds s's active rules the way runc and crun do and exports the program: fills p->bpf, bpf_len,
 * arches, filter_flags, n_rules, skipped_syscalls and compile_nsec. optimize is libseccomp's
 * SCMP_FLTATR_CTL_OPTIMIZE (1 or 2). */
int zp_seccomp_compile(struct zp_json_loader *l, const struct zp_oci_spec *s, unsigned optimize, struct zp_profile *p);

/* ctx's program, exported by libseccomp, as a malloc'd array of *ret_len instructions. Also used
 * by the tests' and benchmarks' own libseccomp builders. */
int zp_seccomp_export_bpf(scmp_filter_ctx ctx, struct sock_filter **ret, size_t *ret_len);

/* runc 1.1's -ENOSYS stub (seccomp-enosys.c) put before p's program: on each architecture s
 * lists, a system call number above the highest that s's active rules name there answers
 * ERRNO(ENOSYS) instead of reaching the program (on x86_64, x32's numbers against x32's highest;
 * s390's multiplexer, number 0, too). Nothing when the default action allows, logs or traces
 * calls, or answers ENOSYS already. 0, -E2BIG (the program too long), -ENOMEM. */
int zp_seccomp_enosys_stub(const struct zp_oci_spec *s, struct zp_profile *p);

/* From p's program: longest_path, worker_setup_ok/worker_setup_blocked and hash. */
int zp_seccomp_measure(struct zp_profile *p);
