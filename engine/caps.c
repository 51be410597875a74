/* SPDX-License-Identifier: MIT */
/*
 * The engine's credential steps: bounding set, ids, capabilities, no_new_privs. See steps.h.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "steps.h"

/* cap_last 0 would mean "only CAP_CHOWN exists": treat it as unknown rather than silently keep
 * every other capability; PR_CAPBSET_READ answers EINVAL past the kernel's last. */
static unsigned last_cap(unsigned cap_last) {
        return cap_last > 0 && cap_last < 64 ? cap_last : 63;
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
        last = last_cap(cap_last);
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

int ze_step_ids(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups, bool keep_caps, bool groups_deny_ok,
                enum ze_step *ret_step) {
        *ret_step = ZE_STEP_GROUPS;
        if (n_groups != ZE_KEEP_GROUPS && (n_groups > ZE_MAX_GROUPS || (n_groups > 0 && !groups)))
                return -EINVAL;
        if (n_groups != ZE_KEEP_GROUPS && syscall(SYS_setgroups, n_groups, groups) < 0 &&
            !(groups_deny_ok && errno == EPERM && n_groups == 0))
                return -errno;
        *ret_step = ZE_STEP_GID;
        if (syscall(SYS_setresgid, gid, gid, gid) < 0)
                return -errno;
        *ret_step = ZE_STEP_UID;
        if (keep_caps && prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL) < 0)
                return -errno;
        if (syscall(SYS_setresuid, uid, uid, uid) < 0)
                return -errno;
        return 0;
}

int ze_step_capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2] = {
                { .effective = (uint32_t) effective,
                  .permitted = (uint32_t) permitted,
                  .inheritable = (uint32_t) inheritable },
                { .effective = (uint32_t) (effective >> 32),
                  .permitted = (uint32_t) (permitted >> 32),
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

int ze_step_caps(bool set, uint64_t effective, uint64_t permitted, uint64_t inheritable, uint64_t ambient,
                 unsigned cap_last) {
        uint64_t raise = ambient & permitted & inheritable;
        unsigned last = last_cap(cap_last);
        int r;

        /* Ambient capabilities would survive execve for a non-root uid: never pass any on that
         * was not asked for. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0)
                return -errno;
        if (!set)
                return 0;
        r = ze_step_capset(effective, permitted, inheritable);
        if (r < 0)
                return r;
        /* the kernel raises an ambient capability only when it is permitted and inheritable;
         * others are skipped, as runc does (its default spec asks for ambient ones with an
         * empty inheritable set) */
        for (unsigned c = 0; raise != 0 && c <= last; c++)
                if ((raise & (UINT64_C(1) << c)) &&
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long) c, 0UL, 0UL) < 0)
                        return -errno;
        return 0;
}

int ze_step_nnp(void) {
        return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0 ? -errno : 0;
}

int ze_step_hook_creds(const struct ze_hook_creds *c) {
        int r;

        if (!c || !c->set)
                return 0;
        /* first, while CAP_SETPCAP may still be effective: both need it */
        if (c->securebits != 0 && prctl(PR_SET_SECUREBITS, (unsigned long) c->securebits, 0UL, 0UL, 0UL) < 0)
                return -errno;
        r = ze_capbset_drop(~c->bounding, false, c->cap_last);
        if (r < 0)
                return r;
        return ze_step_caps(true, c->caps, c->caps, c->inheritable, c->ambient, c->cap_last);
}
