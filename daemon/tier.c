/* SPDX-License-Identifier: MIT */
/*
 * Tier names, as the protocol, the logs, the fd store and --tier spell them: clone (the worker
 * clones the reference's filter), inherit (the reference forks the worker), load (the worker
 * loads the compiled program), auto (--tier only: let the probes decide).
 */
#include <errno.h>

#include "tier.h"
#include "util.h"

/* The tiers in the order of the enum; zd_tier_from_string() reads the same table back. */
static const char *const tier_names[] = {
        [ZD_TIER_AUTO] = "auto",
        [ZD_TIER_CLONE] = "clone",
        [ZD_TIER_INHERIT] = "inherit",
        [ZD_TIER_LOAD] = "load",
};

const char *zd_tier_to_string(enum zd_tier t) {
        if ((size_t) t >= ELEMENTSOF(tier_names) || !tier_names[t])
                return "unknown";
        return tier_names[t];
}

int zd_tier_from_string(const char *s, enum zd_tier *ret) {
        for (size_t i = 0; i < ELEMENTSOF(tier_names); i++)
                if (tier_names[i] && streq(s, tier_names[i])) {
                        *ret = (enum zd_tier) i;
                        return 0;
                }
        return -EINVAL;
}
