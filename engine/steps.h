/* SPDX-License-Identifier: MIT */
/*
 * The one fork-to-exec engine: the steps that the task worker (child.c, ze_child_run) and the
 * container init (sandbox.c, ze_sandbox_run) take, each written once as a step function: raw
 * system calls, no allocation, no stdio, no locks, each returning 0 or a negative errno for its
 * recipe to report as one {step, errno} record. Also the one step enumeration, the one status
 * record and the one table of exit codes of a process that never reached execve.
 *
 * Facets: steps.c (signals, status records, fds, resource limits, the hold), caps.c (bounding set, ids,
 * capabilities, no_new_privs), filter-load.c (the seccomp filter, loaded or cloned), exec.c
 * (PATH search and execve).
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "zygote-steps.h"

/* Every step of both recipes: ZE_STEP_ID, numbered as on the wire (zygote-steps.h). */
enum ze_step {
#define ZE_STEP_ENUM(id, name) ZE_STEP_##id,
        ZY_STEPS(ZE_STEP_ENUM)
#undef ZE_STEP_ENUM
                _ZE_STEP_MAX,
};

/* Protocol name of a step ("fds", "uid", "mount", ...); "unknown" for a value outside the enum. */
const char *ze_step_to_string(enum ze_step step);

/* Exit codes of a worker or container init that never reached execve (docs/ARCHITECTURE.md).
 * They follow env(1)/podman: 125 the sandbox could not be set up, 126 found but not executable,
 * 127 not found; 124 a held one whose hold (Start, the exec fifo) went away without a go. */
enum {
        ZE_EXIT_SETUP_FAILED = 125,
        ZE_EXIT_NOT_EXECUTABLE = 126,
        ZE_EXIT_NOT_FOUND = 127,
        ZE_EXIT_ABANDONED = 124,
};

/* The one status record, of the worker (on its status pipe) and of the container init (one
 * datagram on its sync socket). 16 bytes: written whole or not at all on either. */
struct ze_status {
        int32_t step;  /* enum ze_step */
        int32_t err;   /* positive errno, 0 for ZE_STEP_HELD */
        int32_t index; /* which mount, device, path, namespace or limit; -1 when none */
        union {
                int32_t pid;    /* ZE_STEP_HELD of a container init: its pid in its own pid namespace */
                int32_t status; /* a hook's step (container init): the hook's exit status, 128 + the
                                 * signal that ended it, or -1 when it never ran (err says why) */
        };
};

/* Where a recipe reports: fd (-1: nowhere), a socket (send with MSG_NOSIGNAL, so that a parent
 * that went away cannot kill us with SIGPIPE before we exit with our code) or a pipe (write). */
struct ze_reporter {
        int fd;
        bool socket;
};

/* Sends one record; 0, or a negative errno. */
int ze_report(const struct ze_reporter *to, enum ze_step step, int err, int index, int pid);

/* Reports {step, err (EIO when not positive), index} and leaves with _exit(code). */
_Noreturn void ze_fail(const struct ze_reporter *to, enum ze_step step, int err, int index, int code);

/* How the filter goes on. */
enum ze_filter_mode {
        ZE_FILTER_NONE = 0,  /* no filter (only for tests of the worker itself, or no profile) */
        ZE_FILTER_LOAD,      /* seccomp(SECCOMP_SET_MODE_FILTER, filter_flags, prog) */
        ZE_FILTER_CLONE,     /* seccomp(SECCOMP_CLONE_FILTER, 0, ref_pidfd) */
        ZE_FILTER_INHERITED, /* already in place: forked by the reference process */
};

#define ZE_MAX_RLIMITS 16 /* RLIM_NLIMITS today */

/* A resource limit, soft and hard, as the worker's plan carries it (the same on the wire) and the
 * container init's config gives it. */
struct ze_rlimit {
        uint32_t resource; /* RLIMIT_* */
        uint32_t unused;
        uint64_t cur, max; /* RLIM_INFINITY is ~0 */
};

/* --- steps.c ---------------------------------------------------------------------------------- */

/* The signal step is common/signal-util.h's zc_signals_reset(), shared with the fd closer's
 * helpers. */

/* Closes every fd from first up but the n of keep (any order; negative ones ignored), one
 * close_range per gap. */
int ze_step_close_all_but(unsigned first, const int *keep, size_t n);

/* setns(fd, flags): the namespaces of fd (a pidfd: several at once), only of the kinds in flags.
 * flags 0 is refused (-EINVAL): the kernel would join whatever fd is, and a file declared as one
 * kind could be another (an "ipc" entry naming the host's mount namespace). */
int ze_step_setns(int fd, unsigned flags);

/* Every limit of rl, soft and hard at once (prlimit64, so that a soft limit above the old hard
 * one is never refused in between). The entry that failed in *ret_index. */
int ze_step_rlimits(const struct ze_rlimit *rl, size_t n, int *ret_index);

#define ZE_AFFINITY_WORDS 16 /* a CPU mask of 1024 CPUs, as glibc's cpu_set_t */
#define ZE_OOM_KEEP INT32_MIN

/* How the kernel treats a process, which a task takes from its caller (step 0c), and a container worker too: never more
 * important than the caller. */
struct ze_sched {
        int32_t policy;                       /* SCHED_OTHER, _BATCH, _IDLE, _FIFO or _RR (no flag) */
        int32_t priority;                     /* sched_priority: 0 but for FIFO and RR */
        int32_t nice;                         /* -20..19 */
        int32_t ioprio;                       /* as ioprio_get(2) gives it: class << 13 | level */
        int32_t oom_score_adj;                /* -1000..1000, or ZE_OOM_KEEP: the parent's, not written */
        uint32_t umask;                       /* 0..0777 */
        uint64_t affinity[ZE_AFFINITY_WORDS]; /* CPU i is bit i % 64 of word i / 64 */
};

/* The scheduling of c, each value set as it is (the caller made them no more important than its
 * own): oom_score_adj (unless ZE_OOM_KEEP; a value below the current one needs CAP_SYS_RESOURCE),
 * policy and priority, nice, I/O priority, affinity, then umask. Raw system calls, no allocation.
 * The step that failed (OOM, SCHED, NICE, IOPRIO or AFFINITY) in *ret_step. */
int ze_step_sched(const struct ze_sched *c, enum ze_step *ret_step);

/* Blocks for one byte on fd (a hold pipe, the sync socket, the exec fifo): 1 for the byte (go
 * on), 0 for EOF (the holder gave up), or a negative errno. */
int ze_step_wait_go(int fd);

/* --- caps.c ----------------------------------------------------------------------------------- */

/* Drops the capabilities of drop from the bounding set: one prctl(PR_CAPBSET_DROP_MASK) where
 * mask_prctl (the kernel has it: probed), else one PR_CAPBSET_DROP each for those still there,
 * up to cap_last (0 or past 63: up to where the kernel says EINVAL). */
int ze_capbset_drop(uint64_t drop, bool mask_prctl, unsigned cap_last);

#define ZE_MAX_GROUPS 65536 /* NGROUPS_MAX */
/* ze_step_ids' n_groups for "no setgroups": the caller's supplementary groups stay as they are */
#define ZE_KEEP_GROUPS ((size_t) -1)

/* setgroups, setresgid, setresuid, raw (glibc's wrappers would broadcast to threads that do not
 * exist in this copy of the process). With keep_caps, PR_SET_KEEPCAPS just before setresuid, so
 * that leaving uid 0 keeps the permitted set (execve clears it). With groups_deny_ok, a refused
 * empty group list (a user namespace with "setgroups deny") keeps none and goes on; n_groups
 * ZE_KEEP_GROUPS makes no setgroups at all. The step that
 * failed (groups, gid or uid) in *ret_step. */
int ze_step_ids(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups, bool keep_caps, bool groups_deny_ok,
                enum ze_step *ret_step);

/* capset(2) of the three sets, 64 bits each. */
int ze_step_capset(uint64_t effective, uint64_t permitted, uint64_t inheritable);

/* The effective set back to the permitted one (a switch away from uid 0 under KEEPCAPS emptied
 * it): loading a filter without no_new_privs needs CAP_SYS_ADMIN there. */
int ze_step_raise_effective(void);

/* The final capabilities: the ambient set cleared (it would survive execve for a non-root uid);
 * then, when set, the three sets, and each of ambient that is permitted and inheritable raised
 * (others are skipped, as runc does), up to cap_last. */
int ze_step_caps(bool set, uint64_t effective, uint64_t permitted, uint64_t inheritable, uint64_t ambient,
                 unsigned cap_last);

/* PR_SET_NO_NEW_PRIVS. */
int ze_step_nnp(void);

/* What an OCI hook holds when its runtime acts for another process (zygoted's container worker
 * for its caller), applied by the hook's child just before its execve: the securebits (with their
 * locks), then the bounding set, then the three sets and the ambient one (ze_step_caps). A hook
 * runs as uid 0: without SECBIT_NOROOT its execve gives it its bounding set, with it only its
 * ambient set. set false: the hook keeps what its runtime has (zygote-runc's own hooks are its
 * caller's children already). */
struct ze_hook_creds {
        bool set;
        unsigned securebits; /* SECBIT_* set before anything else (needs CAP_SETPCAP); 0: none */
        uint64_t bounding, caps, inheritable, ambient; /* caps: effective and permitted */
        unsigned cap_last;
};

/* Applies c (nothing when NULL or !c->set); 0 or the first negative errno. */
int ze_step_hook_creds(const struct ze_hook_creds *c);

/* --- filter-load.c ---------------------------------------------------------------------------- */

/* Loads a compiled program: seccomp(SECCOMP_SET_MODE_FILTER, flags, prog). Returns 0, or with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER in flags the listener's fd (CLOEXEC), or -errno. */
int ze_step_filter_load(const struct sock_fprog *prog, unsigned flags);

/* Takes the filter of the process behind pidfd (the SECCOMP_CLONE_FILTER RFC): -EINVAL on a
 * kernel without it, where nothing was installed. */
int ze_step_filter_clone(int pidfd);

/* The filter by mode: NONE and INHERITED do nothing, LOAD loads prog, CLONE clones from
 * ref_pidfd and, on a kernel without the op (EINVAL, nothing installed), loads prog instead when
 * there is one. A listener's fd is returned as ze_step_filter_load returns it (a filter with a
 * listener is never cloned: the RFC refuses such a source). */
int ze_step_filter(enum ze_filter_mode mode, int ref_pidfd, const struct sock_fprog *prog, unsigned flags);

/* --- exec.c ----------------------------------------------------------------------------------- */

/* The exit code of a failed execve or PATH search: not found, or not executable. */
int ze_exec_exit_code(int err);

/* execvp(3) without malloc and without its /bin/sh fallback for ENOEXEC: argv[0] as it is when
 * it has a slash, else each element of search_path (NULL: the default PATH; an empty element is
 * the current directory), built in buf. ENOENT, ENOTDIR and the like go on to the next element,
 * EACCES is returned if nothing else is found, ENAMETOOLONG when no element fit in buf. Returns
 * only on failure, a negative errno, with *ret_index 1 when argv[0] had a slash, else 0. */
int ze_step_execvp(char *const *argv, char *const *envp, const char *search_path, char *buf, size_t len,
                   int *ret_index);

/* The same search without exec, for a process that must fail before it is started (a container's
 * create): the first element (empty ones skipped) where argv[0] is a regular file the current
 * ids may execute, in *ret_path (buf, or argv[0] itself when it has a slash). On failure a
 * negative errno with *ret_index as ze_step_execvp's. */
int ze_step_resolve(char *const *argv, const char *search_path, char *buf, size_t len, const char **ret_path,
                    int *ret_index);
