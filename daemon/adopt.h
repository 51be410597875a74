/* SPDX-License-Identifier: MIT */
/* Tasks and references of an earlier zygoted, from systemd's fd store; see adopt.c. */
#pragma once

struct zd_daemon;
struct zd_sd_activation;

/* Takes every fd of a: adopts the tasks, ends the references, drops the rest from the store.
 * Returns how many tasks were adopted. */
int zd_adopt(struct zd_daemon *d, struct zd_sd_activation *a);
