/* SPDX-License-Identifier: MIT */
/* What zygoted does before each fork: see fork-gate.c. */
#pragma once

struct zd_daemon;

/* Before a fork whose child gets a copy of zygoted's fd table (a worker of the load and clone
 * tiers, a reference or an init started): every caller fd but those of the spawn being forked
 * leaves the table, or is known to be on its way out. Never fails: what it could not settle is
 * logged and the fork goes on. */
void zd_fork_prepare(struct zd_daemon *d);
