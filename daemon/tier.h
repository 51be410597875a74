/* SPDX-License-Identifier: MIT */
/* The three ways a worker gets its filter, and their names (see tier.c). */
#pragma once

enum zy_tier {
        ZY_TIER_AUTO = 0,
        ZY_TIER_CLONE,
        ZY_TIER_INHERIT,
        ZY_TIER_LOAD,
};

const char *zy_tier_to_string(enum zy_tier t);
/* 0, or -EINVAL for a name that is not a tier. */
int zy_tier_from_string(const char *s, enum zy_tier *ret);
