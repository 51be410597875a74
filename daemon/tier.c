/* SPDX-License-Identifier: MIT */
/*
 * Tier names, as the protocol, the logs, the fd store and --tier spell them: clone (the worker
 * clones the reference's filter), inherit (the reference forks the worker), load (the worker
 * loads the compiled program), auto (--tier only: let the probes decide).
 */
#include <errno.h>

#include "tier.h"
#include "util.h"

const char *zd_tier_to_string(enum zd_tier t) {
        switch (t) {
        case ZD_TIER_AUTO:
                return "auto";
        case ZD_TIER_CLONE:
                return "clone";
        case ZD_TIER_INHERIT:
                return "inherit";
        case ZD_TIER_LOAD:
                return "load";
        }
        return "unknown";
}

int zd_tier_from_string(const char *s, enum zd_tier *ret) {
        static const enum zd_tier all[] = { ZD_TIER_AUTO, ZD_TIER_CLONE, ZD_TIER_INHERIT, ZD_TIER_LOAD };
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (streq(s, zd_tier_to_string(all[i]))) {
                        *ret = all[i];
                        return 0;
                }
        return -EINVAL;
}
