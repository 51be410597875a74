/* SPDX-License-Identifier: MIT */
/*
 * Kernel feature probes. Each probe runs in a throwaway child (fork + waitid on a pidfd) and is
 * semantic: a return code alone is never trusted, the effect is checked.
 *
 *   clone_filter       SECCOMP_CLONE_FILTER (seccomp op 4): a source child loads a known filter
 *                      (getppid -> errno 77), a probe child clones it from the source's pidfd and
 *                      checks that getppid now fails with errno 77.
 *   capbset_drop_mask  PR_CAPBSET_DROP_MASK (prctl 82): a child drops one capability with it and
 *                      checks with PR_CAPBSET_READ that exactly that one went away (82 may mean
 *                      something else on another kernel).
 *   pid_namespace      a child cloned with CLONE_NEWPID | CLONE_NEWNS is pid 1 (CONFIG_PID_NS, and
 *                      the privilege to make both: a profile's pid namespace, pidns.h).
 *
 * ZYGOTE_DISABLE_FEATURES=clone_filter,capbset_drop_mask,pid_namespace (comma-separated, "all" for every
 * feature) forces features off; their reason says so. Tests use it to force the fallbacks.
 */
#pragma once

#include <stdbool.h>

#define ZE_FEATURE_REASON_MAX 128

struct ze_features {
        bool clone_filter;
        bool capbset_drop_mask;
        bool pid_namespace;
        unsigned cap_last; /* /proc/sys/kernel/cap_last_cap */

        /* why the feature is present or absent, e.g. "seccomp op 4: Invalid argument" */
        char clone_filter_reason[ZE_FEATURE_REASON_MAX];
        char capbset_drop_mask_reason[ZE_FEATURE_REASON_MAX];
        char pid_namespace_reason[ZE_FEATURE_REASON_MAX];
};

/* Whether ZYGOTE_DISABLE_FEATURES (a comma-separated list, or "all") names this feature: the
 * switch that forces a fallback path, for tests. */
bool ze_feature_disabled(const char *name);

/* Whether the kernel applies AppArmor profiles (/sys/module/apparmor/parameters/enabled says Y
 * or 1). Read as it is: ZYGOTE_DISABLE_FEATURES is the caller's to consult, since a daemon that
 * carries its callers' labels must never drop them on a switch. */
bool ze_apparmor_enabled(void);

/* Fills *ret. Returns 0, or a negative errno when a probe could not be run at all (fork or
 * pipe failure, unreadable cap_last_cap); an absent feature is not an error. */
int ze_probe_features(struct ze_features *ret);

/* The highest capability number the running kernel knows (cap_last_cap, else PR_CAPBSET_READ). */
int ze_cap_last(unsigned *ret);
