/* SPDX-License-Identifier: MIT */
/*
 * The worker: everything between fork and execve lives in child.c and nowhere else.
 *
 * The parent (zygoted's spawn.c, or the reference process in the inherit tier) prepares one
 * struct ze_plan with every string, array and buffer already allocated; the child only applies
 * it with raw system calls, in this order (the order is part of the security argument, see
 * docs/SECURITY.md):
 *
 *   0. signals:  every disposition back to SIG_DFL, empty signal mask (ignored signals and the
 *                mask would survive execve; a daemon handler must never run in the worker);
 *                cannot fail; skipped with plan->signals_default
 *   0b. cgroup:  "0" into cgroup.procs of each of plan->cgroup_fds (O_PATH directories of the
 *                caller's cgroups, one per hierarchy where it differs from the parent's): first,
 *                so that everything the worker does counts there, and before the fd step closes
 *                those fds and the rlimit step may lower RLIMIT_NOFILE
 *   0c. sched:   when plan->set_sched, the caller's scheduling (plan->sched, ze_step_sched, shared
 *                with zygoted's container worker): oom_score_adj
 *                (written to /proc/self/oom_score_adj, step "oom_score_adj"), policy and RT
 *                priority ("sched"), nice ("nice"), I/O priority ("ioprio"), CPU affinity
 *                ("affinity"), then umask (cannot fail). Before the fd step (the /proc file is
 *                opened and closed here, in the parent's mount namespace: the caller's root may
 *                have no /proc) and while the worker is still root with every capability, which
 *                a value more important than the parent's own needs; after the cgroup step, so
 *                that the affinity is taken within the caller's cpuset
 *   0d. lsm:     when plan->lsm_attr, plan->lsm_exec written to that file (the worker's own exec
 *                attribute under /proc/thread-self: "exec LABEL" for AppArmor, the context for
 *                SELinux), so that execve puts the task under its caller's label rather than
 *                the parent's. Opened and written here, in the parent's mount namespace (the
 *                caller's root may have no /proc), and before no_new_privs (step 8), under
 *                which AppArmor refuses most transitions, and before any filter
 *   1. fds:      move status/hold/ref_pidfd fds above every target, dup3 the fd map into place,
 *                then CLOSE every other fd (gaps below the highest target and everything above
 *                the kept ones): a held worker must not keep copies of the daemon's sockets,
 *                or a client whose connection the daemon closes would never see EOF
 *   1b. rlimit:  RLIMIT_NOFILE soft limit back to plan->nofile_soft (when not 0)
 *   1c. setns:   setns(plan->caller_pidfd, plan->ns_join) when ns_join is not 0: the caller's
 *                namespaces, all at once; after the fd step, so that /dev/null was opened in
 *                the parent's mount namespace, never in one the caller may have crafted
 *   1c'. mntns:  setns(plan->mntns_fd, CLONE_NEWNS) when plan->join_mntns: the mount namespace
 *                of the profile's pid namespace (pidns.h), whose /proc shows that namespace only
 *   1d. chroot:  fchdir(plan->root_fd) + chroot(".") when plan->enter_root: the caller's root
 *                (a chroot of its own, or its mount namespace's root). With plan->own_proc, a
 *                private copy of the mount namespace is made between the two (step "proc":
 *                unshare(CLONE_NEWNS), every mount a slave) and, after the chroot, a procfs of
 *                the worker's pid namespace goes on /proc (hidepid=invisible; skipped when the
 *                root has no /proc). No path is looked up as root after 1c and 1d but that
 *                /proc: the next one is chdir, as the target user
 *   2. setsid:   always (the worker never shares the daemon's session)
 *   3. capbset:  drop plan->capbset_drop from the bounding set (one PR_CAPBSET_DROP_MASK prctl
 *                when plan->capbset_mask_prctl, else a PR_CAPBSET_DROP loop); needs CAP_SETPCAP,
 *                so it comes before the uid switch
 *   3b. rlimits: every limit of plan->rlimits (the caller's, hard limits at most the
 *                parent's), before the uid switch: the switch checks RLIMIT_NPROC (a user over
 *                the caller's limit makes execve fail with EAGAIN, as the caller's own fork
 *                would)
 *   4. ids:      setgroups, setresgid, setresuid (when plan->set_ids)
 *   5. filter, early variant: only when plan->filter_early (no_new_privs off and the kept caps
 *                lack CAP_SYS_ADMIN, so the filter must be loaded while we still may)
 *   6. caps:     clear ambient; capset permitted/effective/inheritable to plan->caps_keep
 *                (the inheritable set less plan->caps_inh_drop)
 *   6b. ctty:    TIOCSCTTY on fd 0 when plan->ctty, with the task's own ids and caps, so the
 *                kernel's check that the caller may read the terminal applies
 *   7. chdir:    plan->cwd, as the target user
 *   8. nnp:      PR_SET_NO_NEW_PRIVS when plan->no_new_privs
 *   9. filter:   load plan->prog, or SECCOMP_CLONE_FILTER from plan->ref_pidfd, or nothing
 *                (inherited from the reference); always the last restriction. A LOAD plan first
 *                loads plan->caller_progs, the caller's own filters, oldest first
 *  10. hold:     when plan->hold_fd >= 0, report ZE_STEP_HELD (unless plan->hold_quiet) and block
 *                reading hold_fd; a byte means go on, EOF means abandon (exit ZE_EXIT_ABANDONED)
 *  11. exec:     execve argv[0] if it has a slash, else search plan->search_path (PATH), using
 *                plan->path_buf as scratch (ENOENT/ENOTDIR go on, EACCES is reported if nothing
 *                else is found, as execvp(3) does, without its /bin/sh fallback); with
 *                plan->exec_by_fd, execveat(plan->exec_fd, "", AT_EMPTY_PATH) instead
 *
 * When the uid switch leaves uid 0 with set_caps, and caps_keep is not empty or filter_early is
 * set, PR_SET_KEEPCAPS is set just before setresuid so that step 6 can still set caps_keep, and
 * step 5 first raises the effective set back to the permitted one (CAP_SYS_ADMIN) to load the
 * filter. execve clears KEEPCAPS; step 6 sets the final sets.
 *
 * Any failure writes one struct ze_status {step, errno} (steps.h) to plan->status_fd and exits
 * with a ZE_EXIT_* code of steps.h. The status fd is CLOEXEC: EOF on the parent's end with no
 * record means exec succeeded.
 *
 * Every step is a step function of the engine (steps.h), shared with the container init
 * (sandbox.h) where both take it; ze_child_run() is the recipe, one line per step.
 *
 * A worker may share its parent's memory until its execve: zygote-ref's workers by default
 * (reference/worker-nocopy.h), made with clone(ZE_NOCOPY_CLONE_FLAGS) on a stack of their own,
 * without CLONE_VFORK. The parent runs on meanwhile, in the same memory, and changes whatever it
 * likes but the worker's slot (its stack, its TLS, its unpacked plan), which it leaves alone until
 * the kernel clears the slot's tid word (CLONE_CHILD_CLEARTID: at the worker's execve as at its
 * exit). So ze_child_run() and every step it calls must keep to this:
 *   - write nothing but its own stack, plan->path_buf (scratch in the slot) and its own TLS (errno);
 *     no static or global variable (the engine has none it writes: check with nm for .data/.bss
 *     symbols before adding one), and read nothing the parent may change: only the plan and what
 *     it points to, all in the slot, and constants;
 *   - errno is the worker's own: its thread pointer is the slot's copy of the parent's TLS (glibc's
 *     static TLS blocks and the first words of its thread control block, canary included, so the
 *     stack protector's checks hold; fortify's checks write nothing but on a failure, whose
 *     abort() takes a lock in the shared memory and kills the worker with it held: a bug either
 *     way, and one that would make the parent's own abort() hang). A variable of a module with
 *     dynamic TLS (__tls_get_addr) would still be the parent's: the engine and libc have none on
 *     this path (worker-nocopy.c refuses to run if a loaded module's TLS block is not static);
 *   - no allocation, no stdio, no lock, no atexit or exit(): malloc's arenas and thread cache,
 *     a FILE buffer or a lock are the parent's, changing under the worker; leave with _exit() only;
 *   - no libc function that keeps state outside the thread (strerror, getpwnam, the environment,
 *     the locale, the pid cache...): raw system calls, or the thin glibc wrappers that only set
 *     errno (in the worker's own TLS). Today's (nm -u of child.c, steps.c, caps.c, exec.c,
 *     filter-load.c): syscall, open, openat, read, write, send, close, dup3, fcntl, ioctl, prctl,
 *     chdir, fchdir, chroot, mount, unshare, setsid, umask, getrlimit, setrlimit, access, stat,
 *     execve, _exit, and strlen, strchr, strchrnul, memcpy; step 0's (signal-util.c: sigaction,
 *     strtol...) runs only in a worker that does not share memory;
 *   - no signal handler may run in it: every signal is blocked across the clone (as posix_spawn
 *     does), the worker has a copy of the handler table (no CLONE_SIGHAND), which holds only
 *     SIG_DFL (zygote-ref checks every disposition at start-up and forks otherwise), and it empties
 *     its mask before step 0, which is then skipped (plan->signals_default);
 *   - it may wait (a FUSE file's FLUSH at the fd step, the hold step): only it waits, but it keeps
 *     its slot meanwhile; a worker that may wait long (a create held until Start) is forked, so as
 *     not to hold a slot;
 *   - the stack is bounded (256 KiB, a guard page below): no large array on the stack;
 *   - its ids switch (step 4) sets the shared memory's dumpable flag to fs.suid_dumpable: with
 *     1, any process of the worker's new uid could ptrace it before its exec and write the
 *     parent's memory through it, so the parent shares its memory with such a worker only when
 *     that setting reads 0 or 2, and clears its own flag again once the worker has left.
 */
#pragma once

#include "steps.h"
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sock_fprog;

/* The clone flags of a worker that shares its parent's memory (above): the daemon's child
 * (CLONE_PARENT), its own TLS, its tid in the slot and cleared when it leaves; SIGCHLD to the
 * daemon at its exit. Never CLONE_VFORK (the parent serves on), CLONE_FILES, CLONE_FS or
 * CLONE_SIGHAND (its fd table, root, cwd and handlers are copies). */
#define ZE_NOCOPY_CLONE_FLAGS \
        (0x00000100 /* CLONE_VM */ | 0x00008000 /* CLONE_PARENT */ | 0x00080000 /* CLONE_SETTLS */ | \
         0x00100000 /* CLONE_PARENT_SETTID */ | 0x00200000 /* CLONE_CHILD_CLEARTID */ | 17 /* SIGCHLD */)

/* Steps (enum ze_step), the status record (struct ze_status), the filter modes and the exit
 * codes of a worker that never reached execve: steps.h, shared with the container init. */

struct ze_fdmap {
        int src;    /* fd in the parent (CLOEXEC there) */
        int target; /* number it gets in the new program */
};

#define ZE_MAX_FDS 64
#define ZE_MAX_CGROUPS 16 /* hierarchies: v1 controllers, name=systemd, the unified one */

struct ze_plan {
        char *const *argv; /* NULL-terminated, argv[0] is the command */
        /* Every disposition is SIG_DFL and the mask empty already (zygote-ref checks it once at
         * start-up): step 0 is skipped, 65 system calls fewer. Never packed: the forker says. */
        bool signals_default;
        /* Otherwise step 0 resets only these dispositions (zygoted's: those it found not SIG_DFL,
         * which nothing changes later), NULL: every one. The mask is emptied either way. Never
         * packed: the forker says. */
        const sigset_t *signals_reset;
        char *const *envp;       /* NULL-terminated */
        const char *cwd;         /* NULL: stay in the parent's cwd ("/" for zygoted) */
        const char *search_path; /* PATH used when argv[0] has no '/'; NULL: default path */

        const struct ze_fdmap *fds;
        size_t n_fds;

        int status_fd; /* write end of the status pipe, CLOEXEC */
        int hold_fd;   /* read end of the hold pipe, or -1 */
        /* Wait at hold_fd without reporting HELD: the daemon's gate in the inherit tier, opened
         * once it tracks the worker, so that a worker it lost track of never execs. */
        bool hold_quiet;

        bool ctty; /* make fd 0 (a terminal) the controlling tty */

        bool set_ids;
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t n_groups;

        uint64_t capbset_drop;   /* capabilities to remove from the bounding set */
        bool capbset_mask_prctl; /* kernel has PR_CAPBSET_DROP_MASK */
        unsigned cap_last;       /* highest capability number the kernel knows */
        uint64_t caps_keep;      /* permitted/effective/inheritable after the uid switch */
        uint64_t caps_inh_drop;  /* not in the inheritable set all the same (the caller lacks them) */
        bool set_caps;           /* whether to capset at all (false for an unprivileged daemon) */

        bool no_new_privs;

        /* RLIMIT_NOFILE soft limit to give back (zygoted raises its own to hold many
         * connections and pidfds; a task gets what zygoted started with). 0: leave it. */
        uint64_t nofile_soft;

        /* The caller's resource limits, each set as it is (step 3b). */
        struct ze_rlimit rlimits[ZE_MAX_RLIMITS];
        size_t n_rlimits;

        /* The caller's scheduling and umask (step 0c); when false the worker keeps its
         * parent's, which the daemon found the same. */
        bool set_sched;
        struct ze_sched sched;

        /* O_PATH directories of the caller's cgroups (step 0b), borrowed. */
        int cgroup_fds[ZE_MAX_CGROUPS];
        size_t n_cgroups;

        /* The caller's namespaces (step 1c) and root (step 1d). Not packed for the reference: no
         * profile allows setns, and the filter of the inherit tier is in place before the worker
         * runs, so a spawn that needs them is forked by zygoted. */
        unsigned ns_join; /* CLONE_NEW* flags; 0: join none */
        int caller_pidfd; /* with ns_join */
        bool enter_root;
        int root_fd; /* with enter_root */

        /* The caller's LSM label (step 0d): the text lsm_exec for the exec attribute file
         * lsm_attr (a path under /proc/thread-self); NULL: the task keeps the parent's. Not
         * packed for the reference: the daemon forks such a spawn itself. */
        const char *lsm_attr;
        const char *lsm_exec;

        /* The profile's pid namespace (pidns.h): its mount namespace, joined at step 1c' (a
         * worker cloned into the pid namespace by zygoted), or, for a caller whose mount
         * namespace or root the worker enters, a private copy with a procfs of its own (step
         * 1d). Not packed: the reference joined the namespace itself, and such a caller's spawn
         * is forked by zygoted. */
        bool join_mntns;
        int mntns_fd;  /* with join_mntns, borrowed */
        bool own_proc; /* with enter_root */

        enum ze_filter_mode filter_mode;
        bool filter_early;
        /* The caller's own filters, oldest first, loaded at the filter step before prog (ZE_FILTER_LOAD
         * only: the daemon forks such a spawn itself). Not packed for the reference. */
        const struct sock_fprog *caller_progs;
        size_t n_caller_progs;
        const struct sock_fprog *prog; /* ZE_FILTER_LOAD */
        unsigned filter_flags;         /* SECCOMP_FILTER_FLAG_* for ZE_FILTER_LOAD */
        int ref_pidfd;                 /* ZE_FILTER_CLONE */

        /* Exec the file open at exec_fd (O_PATH is enough) rather than look argv[0] up: no
         * search permission on the directories above it is needed, only the file's own exec
         * permission. Kept through the fd step like status_fd, closed at exec. Not packed for
         * the reference: execveat is not in every profile, and an inherited filter applies. */
        bool exec_by_fd;
        int exec_fd;

        char *path_buf; /* scratch for the PATH search, at least path_buf_len bytes */
        size_t path_buf_len;
};

/* A plan that runs argv with envp and nothing else: no status, hold or reference fd (every fd
 * -EBADF), no ids, capabilities, limits, namespaces or filter; path_buf is the caller's scratch
 * buffer of the PATH search. The caller sets what its plan adds. */
static inline void ze_plan_init(struct ze_plan *p, char *const *argv, char *const *envp, char *path_buf,
                                size_t path_buf_len) {
        *p = (struct ze_plan){
                .argv = argv,
                .envp = envp,
                .status_fd = -EBADF,
                .hold_fd = -EBADF,
                .ref_pidfd = -EBADF,
                .caller_pidfd = -EBADF,
                .root_fd = -EBADF,
                .mntns_fd = -EBADF,
                .exec_fd = -EBADF,
                .filter_mode = ZE_FILTER_NONE,
                .path_buf = path_buf,
                .path_buf_len = path_buf_len,
        };
}

/* Runs the steps above in the current (freshly forked) process. Never returns. */
_Noreturn void ze_child_run(const struct ze_plan *plan);

/* Step 3 alone is ze_capbset_drop() (steps.h): zygote-ref also calls it once, for all its
 * workers. */

/* The system calls made between fork and execve once the profile's filter may already be in
 * place (the `inherit` tier: the reference process applied it, then forks the worker): the
 * reference's own calls to receive a spawn request and fork, then every step above, with the
 * arguments a filter may look at (glibc's wrappers named by the system call they make). The
 * profile module checks at start-up that a profile's filter allows each one, with these arguments
 * and 0 for the others; test-child runs the worker under a filter that allows only these. A new
 * step's system call goes in child-syscalls.c with it. */
enum ze_worker_syscall_when {
        ZE_WORKER_CALL_ALWAYS = 0,
        ZE_WORKER_CALL_KEEP_CAPS, /* only when the profile keeps capabilities (PR_SET_KEEPCAPS) */
        ZE_WORKER_CALL_TERMINAL,  /* only for a request with a terminal (TIOCSCTTY): a profile that
                                   * refuses it still serves every other request in that tier */
        ZE_WORKER_CALL_FORKED,    /* only in a worker zygoted forks itself (setns, chroot): never
                                   * under an inherited filter */
        ZE_WORKER_CALL_SCHED,     /* only for a caller scheduled otherwise than zygoted (step 0c):
                                   * a profile that refuses them still serves the others in that
                                   * tier, and such a caller's spawn is forked by zygoted */
        ZE_WORKER_CALL_NOCOPY,    /* only in a reference that makes workers sharing its memory: a
                                   * profile that refuses them gets forked workers */
};

struct ze_worker_syscall {
        const char *name; /* libseccomp's (and the kernel's) name */
        uint8_t match;    /* bit i set: args[i] is what the call passes; other arguments vary */
        uint8_t when;     /* enum ze_worker_syscall_when */
        uint64_t args[6];
};

extern const struct ze_worker_syscall ze_worker_syscalls[];
extern const size_t ze_worker_syscalls_n;
