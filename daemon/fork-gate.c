/* SPDX-License-Identifier: MIT */
/*
 * Before zygoted forks, its fd table is made clean of other callers' fds.
 *
 * A child made by fork() (not CLONE_FILES) holds a copy of every fd in the table, and a worker
 * closes each copy it does not keep before its exec; close() of a FUSE file waits for the FUSE
 * server's answer to FLUSH. So a caller fd of someone else that sat in the table at the fork
 * would hold up this spawn for as long as that caller's server likes. Three kinds of caller fds
 * outlive the handling of their own call, and their modules register here (fork-gate.h):
 *
 * - the fds of a message not yet complete (server.c): the connection is dropped;
 * - the fds parked inherit-tier spawns keep for a load-tier retry (spawn-park.c): released;
 * - the fds handed to the closer helpers but not yet out of the table (server-closer.c,
 *   common/fd-closer.h): waited for, a bounded time, until each is closed or its helper is
 *   inside close() for it.
 *
 * The spawn being forked keeps its own (they are in its call, or its parked entry was taken off
 * the queue before the fork). A reference does the same before each of its forks
 * (zygote-ref.c: its closer only; it keeps nothing else).
 *
 * The fd table is the process's, and so is the gate: one list of holders, whichever module
 * forks. The gate calls no module by name: those below it register.
 */
#include <errno.h>
#include <stddef.h>
#include <syslog.h>

#include "fork-gate.h"
#include "log.h"

static struct zd_fork_holder *holders;

void zd_fork_gate_register(struct zd_fork_holder *h) {
        struct zd_fork_holder **p;

        for (p = &holders; *p; p = &(*p)->next)
                if (*p == h)
                        return;
        h->next = NULL;
        *p = h; /* at the end: holders act in the order they came */
}

void zd_fork_gate_unregister(struct zd_fork_holder *h) {
        for (struct zd_fork_holder **p = &holders; *p; p = &(*p)->next)
                if (*p == h) {
                        *p = h->next;
                        h->next = NULL;
                        return;
                }
}

void zd_fork_gate(void) {
        int r;

        for (enum zd_fork_stage stage = 0; stage < _ZD_FORK_STAGE_MAX; stage++)
                for (struct zd_fork_holder *h = holders, *next; h; h = next) {
                        next = h->next; /* a holder may leave the list as it lets go */
                        if (h->stage != stage)
                                continue;
                        r = h->close_before_fork(h->userdata);
                        if (stage == ZD_FORK_SETTLE && r < 0)
                                zd_log(LOG_WARNING, "forking while a caller fd may still be in the fd table: %s",
                                       r == -EMFILE ? "no closer helper could be started for it"
                                                    : "a closer helper did not take it out within its time");
                }
}
