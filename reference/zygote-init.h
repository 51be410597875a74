/* SPDX-License-Identifier: MIT */
/* `zygote-ref --init`, the init of a profile's pid namespace: see zygote-init.c and pidns.h. */
#pragma once

/* Runs the init; returns only on a usage error (its exit code). */
int zr_init_main(void);
