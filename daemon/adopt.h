/* SPDX-License-Identifier: MIT */
/* Tasks and references of an earlier zygoted, from systemd's fd store; see adopt.c. */
#pragma once

struct zy_daemon;
struct zy_sd_activation;

/* Takes every fd of a: adopts the tasks, ends the references, drops the rest from the store.
 * Returns how many tasks were adopted. */
int zy_adopt(struct zy_daemon *d, struct zy_sd_activation *a);
