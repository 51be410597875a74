/* SPDX-License-Identifier: MIT */
/* The three ways a worker gets its filter, and their names (see tier.c). */
#pragma once

enum zd_tier {
        ZD_TIER_AUTO = 0,
        ZD_TIER_CLONE,
        ZD_TIER_INHERIT,
        ZD_TIER_LOAD,
};

const char *zd_tier_to_string(enum zd_tier t);
/* 0, or -EINVAL for a name that is not a tier. */
int zd_tier_from_string(const char *s, enum zd_tier *ret);
