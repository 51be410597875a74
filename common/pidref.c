/* SPDX-License-Identifier: MIT */
/* A process as one handle: see pidref.h. */
#include <sys/wait.h>

#include "pidfd-util.h"
#include "pidref.h"
#include "util.h"

int zc_pidref_set_pid(struct zc_pidref *ret, pid_t pid) {
        int fd;

        if (!ret || pid <= 0)
                return -EINVAL;
        fd = pidfd_open_pid(pid);
        if (fd < 0)
                return fd;
        *ret = zc_pidref_make(pid, fd);
        return 0;
}

void zc_pidref_done(struct zc_pidref *p) {
        if (!p)
                return;
        safe_close(p->fd);
        *p = ZC_PIDREF_NULL;
}

int zc_pidref_kill(const struct zc_pidref *p, int sig) {
        if (!zc_pidref_is_set(p))
                return -ESRCH;
        return pidfd_kill(p->fd, sig);
}

int zc_pidref_wait(const struct zc_pidref *p, int options, siginfo_t *ret_si) {
        if (!zc_pidref_is_set(p))
                return -ECHILD;
        return pidfd_wait(p->fd, options, ret_si);
}

void zc_pidref_kill_and_reap(struct zc_pidref *p) {
        if (!zc_pidref_is_set(p))
                return;
        /* ESRCH (already gone) and ECHILD (someone reaped it) are both fine here */
        (void) pidfd_kill(p->fd, SIGKILL);
        (void) pidfd_reap(p->fd, NULL);
        zc_pidref_done(p);
}
