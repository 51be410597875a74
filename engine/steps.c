/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"

void ze_step_reset_signals(const sigset_t *only) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigset_t none;

        for (int sig = 1; sig < _NSIG; sig++) {
                if (sig == SIGKILL || sig == SIGSTOP || (only && sigismember(only, sig) != 1))
                        continue;
                (void) sigaction(sig, &sa, NULL);
        }
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
}

int ze_capbset_drop(uint64_t drop, bool mask_prctl, unsigned cap_last) {
        unsigned last;

        if (drop == 0)
                return 0;
        if (mask_prctl) {
                if (prctl(ZC_PR_CAPBSET_DROP_MASK, (unsigned long) (uint32_t) drop,
                          (unsigned long) (uint32_t) (drop >> 32), 0UL, 0UL) < 0)
                        return -errno;
                return 0;
        }
        /* cap_last 0 would mean "only CAP_CHOWN exists": treat it as unknown rather than silently
         * keep every other capability; PR_CAPBSET_READ answers EINVAL past the kernel's last. */
        last = cap_last > 0 && cap_last < 64 ? cap_last : 63;
        for (unsigned c = 0; c <= last; c++) {
                int r;

                if (!(drop & (UINT64_C(1) << c)))
                        continue;
                r = prctl(PR_CAPBSET_READ, (unsigned long) c, 0UL, 0UL, 0UL);
                if (r < 0) {
                        if (errno == EINVAL)
                                break; /* the kernel has no capability c, nor any above it */
                        return -errno;
                }
                if (r == 0)
                        continue; /* already gone: dropping it again would still need CAP_SETPCAP */
                if (prctl(PR_CAPBSET_DROP, (unsigned long) c, 0UL, 0UL, 0UL) < 0)
                        return -errno;
        }
        return 0;
}

int ze_step_capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2] = {
                { .effective = (uint32_t) effective, .permitted = (uint32_t) permitted,
                  .inheritable = (uint32_t) inheritable },
                { .effective = (uint32_t) (effective >> 32), .permitted = (uint32_t) (permitted >> 32),
                  .inheritable = (uint32_t) (inheritable >> 32) },
        };

        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int ze_step_raise_effective(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        d[0].effective = d[0].permitted;
        d[1].effective = d[1].permitted;
        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int ze_step_filter_load(const struct sock_fprog *prog, unsigned flags) {
        if (!prog)
                return -EINVAL;
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog) < 0 ? -errno : 0;
}

int ze_step_filter_clone(int pidfd) {
        if (pidfd < 0)
                return -EBADF;
        /* The RFC's ABI: flags 0, the pidfd by value in the pointer argument. */
        return syscall(SYS_seccomp, ZC_SECCOMP_CLONE_FILTER, 0, (void *) (intptr_t) pidfd) < 0 ? -errno : 0;
}
