/* SPDX-License-Identifier: MIT */
/*
 * zygoted under a seccomp filter of its own: a container manager's default (systemd-nspawn,
 * Docker) or a unit's SystemCallFilter=. Every worker inherits that filter, whatever the
 * profile's; the profile's filter stacks on top, so the load tier still works, but a system
 * call the outer filter refuses is refused to every task, and a refusal of the seccomp calls the
 * tiers need shows up as callers refused. Said once at start-up, and in GetStatus (own_filter).
 *
 * Its callers have that filter too, and a caller under a filter is refused (a filter cannot be
 * read back nor carried to a task), unless its filters are exactly the ones every process of
 * this pid namespace has: when zygoted has as many filters as the namespace's init, they are
 * the init's, and a caller in the namespace, a descendant of the init, that has as many has no
 * other (filters are only ever added). Its task inherits them from zygoted anyway, below the
 * profile's. A process that entered the namespace from outside (setns) could have as many other
 * ones, but only a privileged one can enter it. That count is zd_own_filter_shared().
 */
#include <stdio.h>
#include <syslog.h>

#include "log.h"
#include "own-filter.h"

/* A process's "Seccomp:" mode and "Seccomp_filters:" count (-1: not said). */
static void seccomp_of(const char *status, int *ret_mode, int *ret_filters) {
        FILE *f = fopen(status, "re");
        char line[256];

        *ret_mode = *ret_filters = -1;
        if (!f)
                return;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Seccomp: %d", ret_mode) != 1)
                        (void) sscanf(line, "Seccomp_filters: %d", ret_filters);
        fclose(f);
}

unsigned zd_own_filter_shared(void) {
        int mode, mine, init;

        seccomp_of("/proc/self/status", &mode, &mine);
        if (mode != 2 || mine <= 0)
                return 0;
        seccomp_of("/proc/1/status", &mode, &init);
        return mode == 2 && init == mine ? (unsigned) mine : 0;
}

bool zd_own_filter_check(void) {
        int mode, filters;

        seccomp_of("/proc/self/status", &mode, &filters);
        if (mode != 2)
                return false;
        zd_log(LOG_WARNING,
               "zygoted runs under a seccomp filter of its own (a container's or the unit's "
               "SystemCallFilter=): every task inherits it below its profile's filter, so what it refuses is "
               "refused to every task; run zygoted without it (SYSTEMD_SECCOMP=0 for systemd-nspawn, "
               "docker --security-opt seccomp=unconfined, or no SystemCallFilter= in the unit) to serve "
               "profiles as written");
        return true;
}
