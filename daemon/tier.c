/* SPDX-License-Identifier: MIT */
/*
 * Tier names, as the protocol, the logs, the fd store and --tier spell them: clone (the worker
 * clones the reference's filter), inherit (the reference forks the worker), load (the worker
 * loads the compiled program), auto (--tier only: let the probes decide).
 */
#include <errno.h>

#include "tier.h"
#include "util.h"

const char *zy_tier_to_string(enum zy_tier t) {
        switch (t) {
        case ZY_TIER_AUTO:
                return "auto";
        case ZY_TIER_CLONE:
                return "clone";
        case ZY_TIER_INHERIT:
                return "inherit";
        case ZY_TIER_LOAD:
                return "load";
        }
        return "unknown";
}

int zy_tier_from_string(const char *s, enum zy_tier *ret) {
        static const enum zy_tier all[] = { ZY_TIER_AUTO, ZY_TIER_CLONE, ZY_TIER_INHERIT, ZY_TIER_LOAD };
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (streq(s, zy_tier_to_string(all[i]))) {
                        *ret = all[i];
                        return 0;
                }
        return -EINVAL;
}
