/* SPDX-License-Identifier: MIT */
/*
 * Before zygoted forks, its fd table is made clean of other callers' fds.
 *
 * A child made by fork() (not CLONE_FILES) holds a copy of every fd in the table, and a worker
 * closes each copy it does not keep before its exec; close() of a FUSE file waits for the FUSE
 * server's answer to FLUSH. So a caller fd of someone else that sat in the table at the fork
 * would hold up this spawn for as long as that caller's server likes. Three kinds of caller fds
 * outlive the handling of their own call; each goes, or is made sure to have gone, here:
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
 */
#include <errno.h>
#include <syslog.h>

#include "daemon.h"
#include "fork-gate.h"
#include "log.h"
#include "server.h"
#include "spawn-park.h"

void zd_fork_prepare(struct zd_daemon *d) {
        unsigned dropped = zd_server_drop_partial_fds(&d->server);
        unsigned released = zd_spawn_park_release_fds(d);
        int r;

        if (dropped > 0)
                zd_log(LOG_INFO, "%u connection%s dropped: %s the fds of a message not yet complete when a "
                       "fork needed a clean fd table", dropped, dropped == 1 ? "" : "s",
                       dropped == 1 ? "it held" : "they held");
        if (released > 0)
                zd_log(LOG_DEBUG, "%u fds of parked spawns released before a fork", released);
        r = zd_closer_settle(&d->server.closer);
        if (r < 0)
                zd_log(LOG_WARNING, "forking while a caller fd may still be in the fd table: %s",
                       r == -EMFILE ? "no closer helper could be started for it"
                                    : "a closer helper did not take it out within its time");
}
