/* SPDX-License-Identifier: MIT */
/*
 * zygoted under a seccomp filter of its own: a container manager's default (systemd-nspawn,
 * Docker) or a unit's SystemCallFilter=. Every worker inherits that filter, whatever the
 * profile's; the profile's filter stacks on top, so the load tier still works, but a system
 * call the outer filter refuses is refused to every task, and a refusal of the seccomp calls the
 * tiers need shows up as callers refused. Said once at start-up, and in GetStatus (own_filter).
 */
#include <stdio.h>
#include <syslog.h>

#include "log.h"
#include "own-filter.h"

bool zd_own_filter_check(void) {
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        int mode = -1;
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Seccomp: %d", &mode) == 1)
                        break;
        fclose(f);
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
