/* SPDX-License-Identifier: MIT */
/*
 * The kernel interfaces the C library does not name, once for every file that uses them.
 *
 * Two are RFCs, not in mainline (tests/kernel/patches/ has the project's own versions): an
 * unpatched kernel answers EINVAL to both, so every use is probed first (probe.c), never assumed.
 *   - PR_CAPBSET_DROP_MASK: prctl(82, low 32 bits, high 32 bits, 0, 0) drops every capability of
 *     the mask from the bounding set in one call.
 *   - SECCOMP_CLONE_FILTER: seccomp(4, 0, (void *) (intptr_t) pidfd) gives the caller the filter
 *     of the process behind pidfd (the pidfd by value in the pointer argument).
 */
#pragma once

#define ZC_PR_CAPBSET_DROP_MASK 82
#define ZC_SECCOMP_CLONE_FILTER 4

/* The PATH a command is searched in when the caller gives none (execvp's and a login's). */
#define ZC_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
