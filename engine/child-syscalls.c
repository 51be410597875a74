/* SPDX-License-Identifier: MIT */
/*
 * The system calls of the window between fork and execve, step by step (see child.h). Kept
 * beside child.c so that a step and its system calls change together; test-child checks that the
 * worker needs nothing else.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "kernel-abi.h"
#include "child.h"
#include "util.h"

#define ARG0 (1u << 0)
#define ARG1 (1u << 1)
#define ALWAYS ZE_WORKER_CALL_ALWAYS

const struct ze_worker_syscall ze_worker_syscalls[] = {
        /* the reference process: receive the request, fork the worker into the daemon, reply */
        { "recvmsg", 0, ALWAYS, {} },
        { "clone", ARG0, ALWAYS, { CLONE_PARENT | CLONE_PIDFD | SIGCHLD } },
        /* a worker sharing the reference's memory (worker-nocopy.h): every signal blocked across
         * the clone, emptied in the worker; the reference's dumpable flag cleared again after a
         * worker that switched ids (the check of fs.suid_dumpable is an openat, read, close) */
        { "clone", ARG0, ZE_WORKER_CALL_NOCOPY, { ZE_NOCOPY_CLONE_FLAGS } },
        { "prctl", ARG0 | ARG1, ZE_WORKER_CALL_NOCOPY, { PR_SET_DUMPABLE, 0 } },
        { "sendmsg", 0, ALWAYS, {} },
        { "close", 0, ALWAYS, {} },
        /* 0. signals */
        { "rt_sigaction", 0, ALWAYS, {} },
        { "rt_sigprocmask", 0, ALWAYS, {} },
        /* 0b. cgroup: openat "cgroup.procs", write "0", close (listed below) */
        /* 0c. the caller's scheduling and umask, when it differs from zygoted's: oom_score_adj
         * (openat, write, close, listed with the other steps), policy, nice, I/O priority, CPU
         * affinity, umask */
        { "sched_setscheduler", 0, ZE_WORKER_CALL_SCHED, {} },
        { "setpriority", ARG0, ZE_WORKER_CALL_SCHED, { PRIO_PROCESS } },
        { "ioprio_set", ARG0, ZE_WORKER_CALL_SCHED, { 1 /* IOPRIO_WHO_PROCESS */ } },
        { "sched_setaffinity", 0, ZE_WORKER_CALL_SCHED, {} },
        { "umask", 0, ZE_WORKER_CALL_SCHED, {} },
        /* 1. fds */
        { "fcntl", ARG1, ALWAYS, { 0, F_DUPFD_CLOEXEC } },
        { "openat", 0, ALWAYS, {} }, /* /dev/null for a missing standard fd */
        { "dup3", 0, ALWAYS, {} },
        { "close_range", 0, ALWAYS, {} },
        /* 1b. rlimit (glibc's getrlimit and setrlimit), and 3b the caller's limits */
        { "prlimit64", 0, ALWAYS, {} },
        /* 1c and 1d. the caller's namespaces and root: only in a worker zygoted forks */
        { "setns", 0, ZE_WORKER_CALL_FORKED, {} },
        { "fchdir", 0, ZE_WORKER_CALL_FORKED, {} },
        { "chroot", 0, ZE_WORKER_CALL_FORKED, {} },
        /* 1c' and 1d. the profile's pid namespace: its mount namespace, or a private copy with
         * its own /proc; only in a worker zygoted forks (the reference joined it itself) */
        { "unshare", 0, ZE_WORKER_CALL_FORKED, {} },
        { "mount", 0, ZE_WORKER_CALL_FORKED, {} },
        /* 2. setsid, controlling tty */
        { "setsid", 0, ALWAYS, {} },
        { "ioctl", ARG1, ZE_WORKER_CALL_TERMINAL, { 0, TIOCSCTTY } },
        /* 3. bounding set */
        { "prctl", ARG0, ALWAYS, { ZC_PR_CAPBSET_DROP_MASK } },
        { "prctl", ARG0, ALWAYS, { PR_CAPBSET_READ } },
        { "prctl", ARG0, ALWAYS, { PR_CAPBSET_DROP } },
        /* 4. ids */
        { "setgroups", 0, ALWAYS, {} },
        { "setresgid", 0, ALWAYS, {} },
        { "prctl", ARG0 | ARG1, ZE_WORKER_CALL_KEEP_CAPS, { PR_SET_KEEPCAPS, 1 } },
        { "setresuid", 0, ALWAYS, {} },
        /* 5 and 6. capabilities */
        { "capget", 0, ALWAYS, {} },
        { "prctl", ARG0 | ARG1, ALWAYS, { PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL } },
        { "capset", 0, ALWAYS, {} },
        /* 7. chdir */
        { "chdir", 0, ALWAYS, {} },
        /* 8. no_new_privs */
        { "prctl", ARG0 | ARG1, ALWAYS, { PR_SET_NO_NEW_PRIVS, 1 } },
        /* 9. filter: inherited, nothing to call. 10. hold, and every failure report */
        { "read", 0, ALWAYS, {} },
        { "write", 0, ALWAYS, {} },
        /* 11. exec, or _exit after a failure */
        { "execve", 0, ALWAYS, {} },
        { "exit_group", 0, ALWAYS, {} },
};

const size_t ze_worker_syscalls_n = ELEMENTSOF(ze_worker_syscalls);
