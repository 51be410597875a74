/* SPDX-License-Identifier: MIT */
/*
 * The engine's filter step: a compiled program loaded, or the filter of a reference process
 * cloned (the SECCOMP_CLONE_FILTER RFC). Never libseccomp here: programs arrive compiled.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"

int ze_step_filter_load(const struct sock_fprog *prog, unsigned flags) {
        long r;

        if (!prog)
                return -EINVAL;
        r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
        /* seccomp(2) refused by a filter in place (a caller's: systemd's @system-service allows
         * prctl but not seccomp), not by the kernel's own checks: the same load through prctl,
         * which takes no flags */
        if (r < 0 && flags == 0 && errno != EACCES && errno != EINVAL && errno != EFAULT && errno != ENOMEM)
                r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0);
        if (r < 0)
                return -errno;
        /* the listener (with NEW_LISTENER; the kernel makes it O_CLOEXEC), else 0 */
        return (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) ? (int) r : 0;
}

int ze_step_filter_clone(int pidfd) {
        if (pidfd < 0)
                return -EBADF;
        /* The RFC's ABI: flags 0, the pidfd by value in the pointer argument. */
        return syscall(SYS_seccomp, ZC_SECCOMP_CLONE_FILTER, 0, (void *) (intptr_t) pidfd) < 0 ? -errno : 0;
}

int ze_step_filter(enum ze_filter_mode mode, int ref_pidfd, const struct sock_fprog *prog, unsigned flags) {
        int r;

        switch (mode) {
        case ZE_FILTER_NONE:
        case ZE_FILTER_INHERITED:
                return 0;
        case ZE_FILTER_LOAD:
                return ze_step_filter_load(prog, flags);
        case ZE_FILTER_CLONE:
                if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
                        return ze_step_filter_load(prog, flags);
                r = ze_step_filter_clone(ref_pidfd);
                /* a kernel without the op answers EINVAL and installed nothing: load instead */
                if (r == -EINVAL && prog)
                        return ze_step_filter_load(prog, flags);
                return r;
        }
        return -EINVAL;
}
