/* SPDX-License-Identifier: MIT */
/*
 * A container's first process (or an exec'd one) between clone and execve: the sandbox-setup
 * module. Same contract as child.c's worker: the parent (zygote-runc) prepares one struct
 * ze_sandbox with every path resolved and every buffer allocated; the child only applies it with
 * raw system calls: no malloc, no stdio, no locks.
 *
 * Namespaces come from the clone3 flags of the fork itself (the parent's choice); a namespace
 * given by path is an fd in ns_fds that the child joins with setns() first (a pid namespace by
 * path must be joined by the parent before it clones). Order of the steps:
 *
 *   0. signals back to SIG_DFL, empty mask; not dumpable (unless dumpable_until_go)
 *   1. go:        wait for "g" on sync_fd (step "sync"; the parent wrote uid/gid maps and
 *                 put the child into its cgroups, and ran the createRuntime hooks), with the
 *                 child's pid as the host sees it after it (4 bytes, native order; the hooks'
 *                 state); EOF means the parent gave up: exit quietly. Then not
 *                 dumpable, in any case, until execve
 *      lsm:       with lsm_exec, the thread's exec attribute file opened (sandbox-lsm.c), while
 *                 nothing of the container is mounted or joined yet
 *   2. setns:     every ns_fds entry, each with its declared CLONE_NEW* type (ns_types) so that
 *                 the kernel refuses a file of another kind; then, in a new user namespace,
 *                 setresgid/setresuid 0
 *      fds:       close every fd but stdio, the preserved ones and the four of this struct
 *                 (sync, start, console, ref_pidfd), and the premade mounts' trees (closed in
 *                 step 3 once attached): nothing else the runtime opened is there when
 *                 anything of config.json or the image is resolved
 *   3. mount namespace work, when new_mount_ns:
 *                 propagation of "/" (MS_SLAVE|MS_REC, or what rootfs_propagation says; a
 *                 shared one first makes "/" and rootfs_parent private: pivot_root refuses a
 *                 shared parent), rootfs
 *                 bind onto itself, the mounts in order (mkdir/creat of the target, every
 *                 component resolved inside the rootfs with openat2(RESOLVE_IN_ROOT) so that a
 *                 symlink in the image cannot lead a mount outside it, and one whose target is
 *                 missing is followed there and the target made; procfs and sysfs only
 *                 on a destination without any symlink; a bind is an open_tree copy given its
 *                 ro/nosuid/nodev/noexec with mount_setattr while detached, then move_mount'ed
 *                 on the target's fd (a premade one, id-mapped, attached as the runtime made
 *                 it); a tmpfs with copyup is filled with a copy of the directory
 *                 while detached, the same way), default device nodes (mknod, or a
 *                 bind of the host's node where mknod is refused, as in a user namespace),
 *                 /dev/fd etc. symlinks and /dev/ptmx, the createContainer hooks (cwd: the
 *                 rootfs; the host's paths still resolve), pivot_root (on the rootfs copy's fd),
 *                 maskedPaths (the container's /dev/null, only if it is 1:3 without a symlink,
 *                 or an empty tmpfs, by fd) and readonlyPaths (read-only before attached), each
 *                 resolved inside the root, a read-only /dev tmpfs (mounted writable for
 *                 what goes below it) made read-only, the read-only root; rootfs_propagation on the
 *                 new "/"; a missing cwd made inside the root (0755) after pivot_root, before
 *                 the read-only root
 *   4. hostname, domainname (when set); lo up with loopback_up
 *   5. console:   when console_fd >= 0: a pty from the container's /dev/ptmx, the master sent to
 *                 console_fd by SCM_RIGHTS, the peer (its own fd) bound over /dev/console
 *                 (resolved in the root, no symlink), made stdio and the controlling terminal;
 *                 with set_ids, owned by uid (its group devpts' gid=), as runc gives it
 *   6. setsid     (unless a console made it already)
 *      lsm:       lsm_exec written to that file (where runc applies the profile: after the
 *                 mounts, the createContainer hooks and the hostname, before ids and caps)
 *   7. rlimits; 7a. the memory policy (linux.memoryPolicy: set_mempolicy, sandbox-numa.c)
 *   8. capbset:   drop everything outside caps.bounding (needs CAP_SETPCAP: before the ids)
 *      cwd:       first entered with the runtime's ids and capabilities (resolved as in 9), as
 *                 runc tries it first; refused permission there is tried again as the user (9, 12)
 *   9. ids:       setgroups, setresgid, setresuid (KEEPCAPS across the switch)
 *      before the filter: personality, umask; a cwd not entered yet opened inside the root with
 *                 openat2(RESOLVE_IN_ROOT, no magic links), O_PATH (refused if that fails);
 *                 everything from 3 + preserve_fds up CLOEXEC. A profile is written for the
 *                 container's program: from step 10 on, the init makes only the calls runc makes
 *                 after its own load (capset, prctl, fchdir, close, stat/access, getpid, send,
 *                 read, the startContainer hooks' clone, poll, waitid, and execve)
 *  10. filter, early variant: when no_new_privs is off, the filter goes on while CAP_SYS_ADMIN
 *                 is still effective (the kernel refuses it afterwards)
 *  11. caps:      capset effective/permitted/inheritable, then the ambient set
 *  12. nnp; fchdir to the cwd's fd (the permission to enter it checked with the container's
 *                 capabilities), which is closed
 *  13. resolve:   find argv[0] on search_path and check it may be executed (X_OK as the final
 *                 user), so that `create` fails for a missing binary, as runc's does (step
 *                 "exec", index 0 when PATH was searched)
 *  14. filter:    SECCOMP_SET_MODE_FILTER with prog, or SECCOMP_CLONE_FILTER (op 4) from
 *                 ref_pidfd (prog instead on a kernel without op 4); always the last restriction
 *                 (unless step 10 loaded it). With SECCOMP_FILTER_FLAG_NEW_LISTENER in
 *                 filter_flags (an SCMP_ACT_NOTIFY rule; always loaded, never cloned) the
 *                 listener goes to the parent at once, in step 10 or here: one record
 *                 {ZE_STEP_LISTENER, 0, -1, 0} on sync_fd with the fd as SCM_RIGHTS (sendmsg),
 *                 then closed; the parent hands it to the agent before it waits for anything else
 *  15. ready:     report ZE_STEP_HELD (with the pid); then when start_fd >= 0 (or sync_fd with
 *                 start_on_sync), block reading one byte from
 *                 it (the exec fifo: the parent opened it O_RDWR, `start` writes a byte); EOF or
 *                 an error there exits ZE_EXIT_ABANDONED
 *      hooks:     the startContainer hooks, as the container's process (after the go: a
 *                 failure is also written to hook_report_fd, for `start`)
 *  16. execve
 *
 * Any failure writes one struct ze_status {step, err, index} (steps.h) to sync_fd and exits with
 * a ZE_EXIT_* code of steps.h. The sync fd is CLOEXEC: EOF after HELD means execve ran.
 *
 * Every step is a step function of the engine (steps.h), shared with the task worker (child.h)
 * where both take it; ze_sandbox_run() is the recipe, one line per step.
 */
#pragma once

#include "steps.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct sock_fprog;

/* Steps (enum ze_step: the container init's own ones follow the worker's), the status record
 * (struct ze_status) and the exit codes: steps.h, shared with the task worker. */

enum ze_sb_mount_kind {
        ZE_SB_MOUNT_FS = 0, /* a filesystem by type: proc, tmpfs, devpts, sysfs, mqueue, ... */
        ZE_SB_MOUNT_BIND,   /* bind (MS_REC when recursive) */
        ZE_SB_MOUNT_CGROUP, /* cgroup2 on a v2 host (where refused, a read-only bind of the process's own
                               * cgroup); a read-only rbind of the host's hierarchy on v1 */
        ZE_SB_MOUNT_VIEW,   /* an empty tmpfs with a directory for each later mount just below it
                               * (the v1 cgroup view), attr_set applied before it is attached */
};

struct ze_sb_mount {
        enum ze_sb_mount_kind kind;
        const char *source; /* device or bind source (host path, resolved) */
        const char *dest;   /* the container's path ("/dev/pts"): resolved inside the rootfs */
        const char *target; /* host path below the rootfs, for messages only */
        const char *fstype;
        const char *data;          /* fs options the kernel parses ("mode=755,size=65536k") */
        unsigned long flags;       /* MS_* for the mount call itself (nosuid, nodev, noexec, ro) */
        uint64_t attr_set;         /* MOUNT_ATTR_* applied after, by mount_setattr (binds): to the
                                    * bind's top mount only ("rbind,ro", as runc 1.1) */
        uint64_t attr_set_rec;     /* ... and to every mount below it too ("rro", "rnosuid") */
        bool recursive;            /* rbind */
        bool source_is_dir;        /* bind: the target must be a directory (else an empty file) */
        unsigned long propagation; /* MS_PRIVATE/MS_SLAVE/MS_SHARED (|MS_REC) after, or 0 */
        bool copyup;               /* tmpfs ("tmpcopyup"): starts as a copy of the directory it covers
                                    * (sandbox-copyup.c); a failure of the copy is step "tmpcopyup" */
        bool premade;              /* bind: tree_fd is the runtime's detached copy of the source, its
                                    * attributes and id mapping set (an id-mapped mount: only the
                                    * runtime, outside any user namespace, may make one); attached
                                    * as it is, then closed */
        int tree_fd;
};

/* At most this many premade mounts (the fds the init keeps until its mounts are made). */
#define ZE_SB_MAX_PREMADE 32

/* How many directories deep below a tmpcopyup destination the copy goes; deeper fails with
 * ENAMETOOLONG (step "tmpcopyup"). */
#define ZE_SB_COPYUP_MAX_DEPTH 64

struct ze_sb_device {
        const char *target; /* host path below the rootfs, for messages only */
        const char *host;   /* the container's path, and the host's node of the same path that
                               * is bound when mknod is refused ("/dev/null") */
        mode_t mode;        /* S_IFCHR|0666 */
        dev_t dev;
        uid_t uid;
        gid_t gid;
        /* made by the runtime (a user namespace refuses mknod): the node as a detached mount,
         * attached at the path, then closed; counted in ZE_SB_MAX_PREMADE with the mounts */
        bool premade;
        int tree_fd;
};

/* An OCI hook the init runs itself, between clone and execve (createContainer, startContainer):
 * everything prepared by the runtime before the clone. */
struct ze_sb_hook {
        const char *path;  /* executed as it is (no PATH search), in the init's mount namespace */
        char *const *argv; /* NULL terminated: the hook's args, or its path alone */
        char *const *envp; /* NULL terminated: the hook's env only */
        int timeout_ms;    /* killed (SIGKILL) past it, and failed; 0: none */
};

#define ZE_SB_PID_SLOT 10 /* characters kept in a hook's state for the init's pid */

/* The hooks of one kind, in order, and the state (JSON) each reads on its stdin, through a pipe
 * the init writes it into. The pid is the host's, known to the runtime only after the clone: it
 * comes with "go" (step 1), and the init writes it, right-aligned in decimal, into the
 * ZE_SB_PID_SLOT characters at state + pid_at (the spaces before it are JSON whitespace). */
struct ze_sb_hooks {
        const struct ze_sb_hook *list;
        size_t n;
        char *state; /* the init's own copy (after the clone) is written, never the runtime's */
        size_t state_len;
        size_t pid_at;
        /* What each hook holds, applied in its child before the execve (steps.h); set false: the
         * init's own (the createContainer hooks of zygoted's containers take their caller's) */
        struct ze_hook_creds creds;
};

#define ZE_SB_MAX_NS 8
#define ZE_SB_NO_PERSONALITY (~0UL)

#define ZE_SB_NUMA_WORDS 16 /* a node mask of 1024 nodes (the kernel's MAX_NUMNODES on x86) */

/* linux.memoryPolicy, as set_mempolicy(2) takes it (sandbox-numa.c): applied with the rlimits
 * (step 7a) when set; a process's policy is kept across fork and execve. */
struct ze_sb_mempolicy {
        bool set;
        int mode;                         /* MPOL_DEFAULT, MPOL_BIND, ... */
        unsigned flags;                   /* MPOL_F_STATIC_NODES, _RELATIVE_NODES, _NUMA_BALANCING */
        uint64_t nodes[ZE_SB_NUMA_WORDS]; /* node i is bit i % 64 of word i / 64 */
        unsigned long maxnode;            /* 0: no nodes; else the highest node given + 2, as the kernel counts */
};

struct ze_sandbox {
        int sync_fd;        /* SOCK_SEQPACKET to the parent, CLOEXEC: go byte in, status records out */
        int start_fd;       /* the exec fifo opened O_RDWR by the parent, or -1: exec at once */
        bool start_on_sync; /* start_fd -1: wait for one byte on sync_fd instead (run: the parent
                             * has saved the container's state before anything of it runs) */
        int console_fd;     /* connected console socket, or -1: no terminal */
        int preserve_fds;   /* fds 3 .. 3+n-1 stay open across execve (LISTEN_FDS style) */

        int ns_fds[ZE_SB_MAX_NS];   /* setns() targets, -1 terminated or ZE_SB_MAX_NS long */
        int ns_types[ZE_SB_MAX_NS]; /* the CLONE_NEW* each was declared as (0 is refused) */
        size_t n_ns_fds;
        bool dumpable_until_go; /* the parent writes our /proc files before "go" without
                                  * privilege over a non-dumpable process (rootless maps) */

        bool userns_root;                 /* a new user namespace: become its root (0/0) before step 3,
                                  * so that what the mounts create is owned by a mapped id */
        bool new_mount_ns;                /* do step 3 (false for exec, which joined the container's) */
        const char *rootfs;               /* absolute, resolved */
        unsigned long rootfs_propagation; /* MS_SLAVE|MS_REC by default */
        const char *rootfs_parent;        /* mount point of the mount the rootfs is on, or NULL */
        bool rootfs_readonly;
        const struct ze_sb_mount *mounts;
        size_t n_mounts;
        const struct ze_sb_device *devices;
        size_t n_devices;
        const char *const *symlinks; /* pairs {target, container path}, NULL terminated */
        const char *const *masked;   /* container paths, NULL terminated */
        const char *const *readonly; /* container paths, NULL terminated */
        const char *dev_console;     /* "/dev/console" (container path) for a terminal, or NULL */

        /* AppArmor: lsm_exec ("exec PROFILE") for the exec attribute file attr/lsm_attr
         * ("apparmor/exec", or "exec" on kernels without the per-LSM directory), opened before
         * step 2 and written after step 6 (sandbox-lsm.c); lsm_exec NULL: leave it */
        const char *lsm_attr;
        const char *lsm_exec;

        const char *hostname;                      /* NULL: leave it */
        const char *domainname;                    /* NULL: leave it */
        bool loopback_up;                          /* step 4: lo up (a new network namespace, as runc does) */
        unsigned short console_rows, console_cols; /* the terminal's size (0: leave it) */
        unsigned long personality;                 /* ZE_SB_NO_PERSONALITY: leave it */

        const struct ze_rlimit *rlimits;
        size_t n_rlimits;
        struct ze_sb_mempolicy mempolicy;

        bool set_ids;
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t n_groups;
        bool keep_groups; /* step 9 leaves the supplementary groups the runtime has (no setgroups) */

        unsigned cap_last;
        uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
        bool set_caps;

        bool no_new_privs;
        mode_t umask; /* (mode_t) -1: leave it */
        const char *cwd;

        const struct sock_fprog *prog; /* SECCOMP_SET_MODE_FILTER, or NULL */
        unsigned filter_flags;
        int ref_pidfd; /* SECCOMP_CLONE_FILTER source instead of prog, or -1 */

        /* createContainer: after the mounts, before pivot_root (cwd: the rootfs), in the container's
         * namespaces; startContainer: after the go of step 15, inside the container (its root, ids,
         * capabilities and filter), before the last fds step and execve. Each hook is a child of
         * the init with the state on its stdin, its stdout and stderr the init's stderr, nothing
         * else open. The first that fails (it could not be run, an exit status, a signal, its
         * timeout) ends the init: one record {step, err, index: which hook, status}. */
        struct ze_sb_hooks create_hooks, start_hooks;
        int hook_report_fd; /* a fifo (the init's end, O_RDWR) where a startContainer failure is
                             * written too, for `start` (the runtime that had the sync socket has
                             * exited by then), or -1 */

        char *const *argv;
        char *const *envp;
        const char *search_path; /* PATH of the container's env; NULL: a default */
        char *path_buf;          /* scratch for the PATH search and console paths */
        size_t path_buf_len;     /* at least PATH_MAX + 1 */
};

/* sandbox-lsm.c: the calling thread's attr/NAME file opened for writing through a procfs of its
 * own, no symlink or mount crossed, checked to be on procfs (-EXDEV if not): the fd or -errno. */
int ze_sb_lsm_open(const char *name);
/* text in one write to fd, which is closed: 0 or -errno. */
int ze_sb_lsm_write(int fd, const char *text);

/* sandbox-numa.c: step 7a, set_mempolicy(2) of p when p->set: 0 or -errno. */
int ze_sb_set_mempolicy(const struct ze_sb_mempolicy *p);

/* Runs the steps above in the current, freshly cloned process. Never returns. */
_Noreturn void ze_sandbox_run(const struct ze_sandbox *sb);
