/* SPDX-License-Identifier: MIT */
/* What zygoted does before each fork: see fork-gate.c. */
#pragma once

/* Two stages, in this order: the holders of other callers' fds let them go (to the closer, or
 * with the connection that holds them), then the closer makes sure that what it was handed is
 * out of the fd table. */
enum zd_fork_stage {
        ZD_FORK_RELEASE,
        ZD_FORK_SETTLE,
        _ZD_FORK_STAGE_MAX,
};

/* A module that keeps other callers' fds beyond the handling of their call registers one of
 * these while it may hold any. close_before_fork:
 *   ZD_FORK_RELEASE: hands every such fd over to be closed; returns how many went (it logs what
 *                    it did itself);
 *   ZD_FORK_SETTLE:  waits, a bounded time, until no fd handed over is left in the table;
 *                    returns 0, -EMFILE when no helper could be started for one, or another
 *                    negative errno when a helper did not take one out in time. */
struct zd_fork_holder {
        enum zd_fork_stage stage;
        int (*close_before_fork)(void *userdata);
        void *userdata;
        struct zd_fork_holder *next; /* the gate's */
};

/* Registering one already registered, or unregistering one that is not, does nothing. */
void zd_fork_gate_register(struct zd_fork_holder *h);
void zd_fork_gate_unregister(struct zd_fork_holder *h);

/* Before a fork whose child gets a copy of zygoted's fd table (a worker of the load and clone
 * tiers, a reference or an init started, a GetFilter compile): every caller fd but those of the
 * call being forked for leaves the table, or is known to be on its way out. Never fails: what it
 * could not settle is logged and the fork goes on. */
void zd_fork_gate(void);
