/* SPDX-License-Identifier: MIT */
/*
 * pidfd helpers (see pidfd-util.h). Raw system calls only: clone_with_pidfd's child returns into
 * its caller, which may be about to run code that must not allocate (engine/child.c).
 */
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int neg_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* Set once clone3() was refused: a process whose seccomp filter refuses it keeps refusing, and
 * the inherit tier's zygote-ref forks every worker under such a filter. */
static bool clone3_refused;

pid_t clone_with_pidfd(uint64_t flags, int *ret_pidfd) {
        int pidfd = -1;
        long pid;

        bool no_clone3 = flags & CLONE_WITH_PIDFD_NO_CLONE3;

        flags &= ~CLONE_WITH_PIDFD_NO_CLONE3;
        if (!ret_pidfd || (flags & (CLONE_PIDFD | CLONE_THREAD | CLONE_VM | 0xff)))
                return -EINVAL;
        if (!no_clone3 && !__atomic_load_n(&clone3_refused, __ATOMIC_RELAXED)) {
                struct clone_args args = {
                        .flags = flags | CLONE_PIDFD,
                        .pidfd = (uint64_t) (uintptr_t) &pidfd,
                        /* clone3 refuses an exit signal with CLONE_PARENT (EINVAL): the
                         * child then gets its parent's, which clone() would impose anyway. */
                        .exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD,
                };

                pid = syscall(SYS_clone3, &args, sizeof(args));
                if (pid >= 0 || (errno != ENOSYS && errno != EPERM))
                        goto done;
                __atomic_store_n(&clone3_refused, true, __ATOMIC_RELAXED);
        }
        /* x86-64 argument order: flags, stack, parent_tid (the pidfd here), child_tid, tls */
        pid = syscall(SYS_clone, (unsigned long) (flags | CLONE_PIDFD | SIGCHLD), NULL, &pidfd, NULL, 0);
done:
        if (pid < 0)
                return neg_errno();
        if (pid > 0)
                *ret_pidfd = pidfd;
        return (pid_t) pid;
}

int pidfd_open_pid(pid_t pid) {
        long fd;

        if (pid <= 0)
                return -EINVAL;
        fd = syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? neg_errno() : (int) fd;
}

int pidfd_kill(int pidfd, int sig) {
        if (pidfd < 0)
                return -EBADF;
        return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? neg_errno() : 0;
}

int pidfd_wait(int pidfd, int options, siginfo_t *ret_si) {
        siginfo_t si = { 0 };

        if (pidfd < 0)
                return -EBADF;
        while (waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, options) < 0)
                if (errno != EINTR)
                        return neg_errno();
        if (ret_si)
                *ret_si = si;
        return 0;
}

int pidfd_reap(int pidfd, siginfo_t *ret_si) {
        return pidfd_wait(pidfd, WEXITED, ret_si);
}

/* linux/pidfd.h of 6.15 (PIDFD_INFO_SIZE_VER0), newer than Debian 12's; newer kernels take it. */
struct zc_pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
_Static_assert(sizeof(struct zc_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#define ZC_PIDFD_INFO_EXIT (1ULL << 3)
#define ZC_PIDFD_GET_INFO _IOWR(0xFF, 11, struct zc_pidfd_info)

int pidfd_exit_status(int pidfd, int *ret_code, int *ret_signal) {
        struct zc_pidfd_info info = { .mask = ZC_PIDFD_INFO_EXIT };
        /* ENOTTY/EINVAL: no PIDFD_GET_INFO (before 6.13). ESRCH: reaped, and a kernel before 6.15
         * kept no status for us. Both are final: the caller reports the exit without a status. */
        if (ioctl(pidfd, ZC_PIDFD_GET_INFO, &info) < 0)
                return negative_errno();
        if (!(info.mask & ZC_PIDFD_INFO_EXIT))
                return -ENODATA; /* alive, or a zombie nobody has reaped yet */
        int st = info.exit_code;
        if (WIFEXITED(st)) {
                *ret_code = WEXITSTATUS(st);
                *ret_signal = 0;
        } else {
                *ret_signal = WTERMSIG(st);
                *ret_code = 128 + *ret_signal;
        }
        return 0;
}
