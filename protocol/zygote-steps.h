/* SPDX-License-Identifier: MIT */
/*
 * The steps of the fork-to-exec engine (engine/steps.h), one table for the task worker and the
 * container init: X(ID, "name") gives the engine's ZE_STEP_ID, with its number on the wire (the
 * step of a status record) and its name in the protocol (SpawnFailed's "step").
 *
 * The numbers are the wire's: a new step goes at the end, so that none moves. The worker's steps
 * come first; the container init's own (its filesystem, hostname, console) follow them. A step
 * both take (fds, setns, setsid, capbset, ids, caps, chdir, nnp, filter, held, exec) has one
 * entry and one name.
 */
#pragma once

#define ZY_STEPS(X) \
        X(NONE, "none") \
        X(FDS, "fds") \
        X(SETSID, "setsid") \
        X(CTTY, "ctty") \
        X(CAPBSET, "capbset") \
        X(GROUPS, "groups") \
        X(GID, "gid") \
        X(UID, "uid") \
        X(CAPS, "caps") \
        X(CHDIR, "chdir") \
        X(NNP, "nnp") \
        X(FILTER, "filter") \
        X(HELD, "held") /* not a failure: "sandboxed and waiting for Start" (err is 0) */ \
        X(HOLD, "hold") \
        X(EXEC, "exec")     /* index 0: searched PATH; 1: argv[0] had a slash */ \
        X(RLIMIT, "rlimit") /* index: which limit (container init) */ \
        X(CGROUP, "cgroup") \
        X(SETNS, "setns") /* index: which namespace fd (container init) */ \
        X(CHROOT, "chroot") \
        X(MNTNS, "mntns")       /* the mount namespace of the profile's pid namespace */ \
        X(PROC, "proc")         /* a private mount namespace with a /proc of its own */ \
        X(OOM, "oom_score_adj") /* the caller's scheduling and umask */ \
        X(SCHED, "sched") \
        X(NICE, "nice") \
        X(IOPRIO, "ioprio") \
        X(AFFINITY, "affinity") \
        /* the container init's own steps */ \
        X(SYNC, "sync") /* the parent's go (maps written, cgroups joined) */ \
        X(DUMPABLE, "non-dumpable") \
        X(PROPAGATION, "propagation") \
        X(ROOTFS, "rootfs") \
        X(MOUNT, "mount")   /* index: which mount */ \
        X(DEVICE, "device") /* index: which device */ \
        X(PIVOT, "pivot_root") \
        X(MASK, "maskedPaths")       /* index: which masked path */ \
        X(READONLY, "readonlyPaths") /* index: which read-only path */ \
        X(ROOT_RO, "readonly root") \
        X(HOSTNAME, "hostname") \
        X(CONSOLE, "console") \
        /* appended where the wire numbers allow: the worker's */ \
        X(LSM, "lsm") /* the caller's AppArmor or SELinux label for the exec */ \
        /* the container init's, appended */ \
        X(DOMAINNAME, "domainname") \
        X(PERSONALITY, "personality") \
        /* the task worker's again: the scope unit the daemon asked for it (daemon/scope.c) */ \
        X(SCOPE, "scope") \
        /* the container init's again: its hooks (index: which hook; status: its exit status, 128 + \
         * its signal, or -1: never ran) */ \
        X(CREATE_HOOK, "createContainer hook") \
        X(START_HOOK, "startContainer hook") \
        X(COPYUP, "tmpcopyup")          /* index: which mount */ \
        X(LISTENER, "seccomp listener") /* err 0: the filter's listener, passed with the record */ \
        X(LOOPBACK, "loopback")         /* lo up in the container's new network namespace */ \
        X(MEMPOLICY, "memoryPolicy")    /* set_mempolicy of linux.memoryPolicy */
