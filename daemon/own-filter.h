/* SPDX-License-Identifier: MIT */
/* Whether zygoted itself runs under a seccomp filter; see own-filter.c. */
#pragma once

#include <stdbool.h>

/* Reads /proc/self/status (Seccomp: 2 is a filter) and, when there is one, logs what it means. */
bool zd_own_filter_check(void);

/* The number of seccomp filters zygoted shares with its pid namespace's init (they are the
 * init's): a caller with exactly that many has no filter of its own (own-filter.c). 0 when
 * zygoted has none, or others. */
unsigned zd_own_filter_shared(void);
