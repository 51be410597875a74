/* SPDX-License-Identifier: MIT */
/*
 * The cgroup v1 freezer's freeze. See cgroup-freezer.h.
 *
 * v1 freezes asynchronously: a write of FROZEN leaves the cgroup FREEZING while some task has not
 * reached the freezer yet (one in the middle of a fork, an exec joining the cgroup, a task that
 * does not run for a while on a loaded machine), and the kernel tries the stragglers again each
 * time FROZEN is written. Nothing signals the change (freezer.state has no poll notification, as
 * v2's cgroup.events has), so the only way is to write again; runc retries the same way, with a
 * thaw now and then so that tasks caught mid-fork can finish and be frozen whole.
 */
#include <errno.h>

#include "cgroup-freezer.h"

int zct_freezer_v1_freeze(const struct zct_freezer_io *io) {
        int r = -EBUSY;

        for (int i = 0; i < ZCT_FREEZER_V1_TRIES; i++) {
                if (i % 50 == 49) {
                        (void) io->write(io->userdata, false);
                        /* a back-off, not a synchronisation: there is no event to wait for */
                        io->pause(io->userdata, 10000);
                }
                r = io->write(io->userdata, true);
                if (r < 0)
                        break;
                if (i % 25 == 24)
                        io->pause(io->userdata, 10);
                r = io->read(io->userdata);
                if (r == ZCT_FREEZER_FROZEN)
                        return 0;
                if (r < 0)
                        break;
                r = r == ZCT_FREEZER_FREEZING ? -EBUSY : -EAGAIN;
                if (r == -EAGAIN)
                        break;
        }
        /* still FREEZING (or failed): a cgroup left half frozen would hold whatever it caught */
        (void) io->write(io->userdata, false);
        return r;
}
