/* SPDX-License-Identifier: MIT */
/* Whether zygoted itself runs under a seccomp filter; see own-filter.c. */
#pragma once

#include <stdbool.h>

/* Reads /proc/self/status (Seccomp: 2 is a filter) and, when there is one, logs what it means. */
bool zd_own_filter_check(void);
