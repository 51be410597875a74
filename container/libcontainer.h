/* SPDX-License-Identifier: MIT */
/*
 * The container library: OCI containers made, changed and removed, for whoever asks
 * (zygote-runc's command line in runc/, zygoted's container worker, containerd's shim for its
 * cgroup calls). Configured by its callers' arguments, never a global or the environment: a
 * struct zct_ctx (the state root, where messages go, where a seccomp program comes from), the
 * create and exec arguments (struct zct_create_args, zct_exec_args, with zygoted's handoff).
 *
 *   messages.c  error and debug messages: stderr and the log file (text or JSON), or zygoted's
 *               report socket
 *   create.c    create/run: the parent's side of engine/sandbox.c for the init
 *   process-exec.c  exec: a new process joined to a running container
 *   process.c   what create and exec share: sandbox preparation, status records and runc's
 *               failure messages, waiting, signal forwarding, destroy
 *   tty.c       the foreground terminal of run and exec -t without a console socket (tty.h)
 *   config.c    config.json -> struct zct_oci (everything the sandbox needs, resolved), spec;
 *               its parts config-process.c (process), config-mount.c (mounts, devices),
 *               config-mempolicy.c (linux.memoryPolicy), idmap-mount.c (id-mapped mounts;
 *               made by idmap-userns.c) and config-util.c (JSON access and errors,
 *               config-util.h)
 *   cgroup.c    the cgroup manager, v1, hybrid and v2: create, join, freeze, list, remove;
 *               cgroup-of.c the cgroups of a container its caller did not create, and update
 *   cgroup-devices.c  the device rules: OCI parsing, v1 lines, the v2 eBPF program
 *   cgroup-resources.c, cgroup-resources-blkio.c, cgroup-resources-plan.c, cgroup-limits.c
 *               linux.resources as cgroup writes (a pure plan), and writing them
 *               (cgroup-resources.h)
 *   state.c     the state directory of one container and its status
 *   fs-util.c   one whole write to a file, a directory and its parents
 *   filter-remote.c  the seccomp program from the caller's cache, zygoted (GetFilter) or
 *               compiled here, as struct zct_filter_source says
 *   seccomp-listener.c  a notifying filter's listener handed to linux.seccomp.listenerPath
 *   hooks.c     config.json's hooks
 *   procfs-write.c   the writes into procfs, through a procfs of the library's own
 *   sealed-copy.c    the program runs from a sealed memfd copy of itself, never the host's file
 *   sd-activation.c  systemd's LISTEN_FDS and NOTIFY_SOCKET carried into the container
 *   devices-premade.c  a user namespace's device nodes, made by the runtime
 *
 * Library-style parts return 0 or a negative errno and fill *ret_error with a message (malloc'd)
 * where the user needs more than strerror; only the parts that take a struct zct_ctx print.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

struct zp_profile;

#define ZCT_RUNC_DEFAULT_ROOT "/run/zygote-runc"
#define ZCT_RUNC_OCI_VERSION "1.0.2"

/* ---- config.c ---- */

struct zct_ns_path {
        int flag; /* CLONE_NEW* */
        char *path;
};

/* An id-mapped bind mount (idmap-mount.c): the config's mappings as /proc/PID/uid_map takes them
 * (NULL: the container's user namespace), found by its mount's dest (the same pointer). */
struct zct_mount_idmap {
        const char *dest;
        size_t index; /* in config.json's mounts, for messages */
        char *uid_map, *gid_map;
        bool recursive; /* ridmap: every mount of an rbind mapped, not the top one alone */
};

struct zct_idmap {
        char *text; /* "container host size\n" lines, for /proc/PID/{uid,gid}_map */
};

struct zct_oci {
        json_object *root; /* config.json; strings below may point into it */
        char *bundle;      /* absolute */
        char *rootfs;      /* absolute, resolved */

        char **argv;
        char **envp;
        const char *cwd;
        const char *search_path; /* PATH= of envp */
        bool terminal;
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        size_t n_groups;
        bool keep_groups; /* annotations' run.oci.keep_original_groups: the runtime's groups stay */
        mode_t umask;     /* (mode_t) -1 when unset */
        uint64_t caps[5]; /* bounding, effective, permitted, inheritable, ambient */
        struct ze_rlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privs;
        int oom_score_adj;   /* INT_MIN: unset */
        char *apparmor_exec; /* "exec PROFILE" (process.apparmorProfile, exec's --apparmor), or NULL */

        const char *hostname;
        const char *domainname;
        unsigned short console_rows, console_cols; /* process.consoleSize (0: none) */
        unsigned long personality;                 /* ZE_SB_NO_PERSONALITY: none */
        struct ze_sb_mempolicy mempolicy;          /* linux.memoryPolicy (config-mempolicy.c) */
        bool has_sched;                            /* process.scheduler (config-linux.c) */
        struct zct_sched {
                uint32_t policy;
                int32_t nice;
                uint32_t priority;
                uint64_t flags, runtime, deadline, period;
        } sched;
        int ioprio;         /* process.ioPriority as ioprio_set(2) takes it, or -1 */
        char *time_offsets; /* linux.timeOffsets as /proc/PID/timens_offsets takes it, or NULL */
        bool readonly_root;
        unsigned long rootfs_propagation;
        char *rootfs_parent; /* the mount point of the mount the rootfs is on */
        struct ze_sb_mount *mounts;
        size_t n_mounts;
        struct ze_sb_device *devices;
        size_t n_devices;
        char **symlinks;       /* pairs, NULL terminated */
        const char **masked;   /* NULL terminated */
        const char **readonly; /* NULL terminated */
        char *dev_console;

        int clone_flags;  /* CLONE_NEW* to create */
        bool new_time_ns; /* a time namespace to create (by the runtime: process-attrs.c) */
        bool uts_ns;      /* linux.namespaces has "uts", new or joined by path */
        struct zct_ns_path ns_paths[8];
        size_t n_ns_paths;
        char *uid_map, *gid_map; /* NULL when no user namespace */

        const char *cgroups_path;
        json_object *resources; /* linux.resources, or NULL (cgroup-resources.h reads it) */
        bool has_limits;        /* resources asks for more than device rules */
        json_object *sysctl;    /* linux.sysctl (keys checked), or NULL */

        struct zp_profile *seccomp;     /* NULL: no filter */
        char seccomp_source[512];       /* where it came from, for the debug line */
        const char *listener_path;      /* linux.seccomp.listenerPath (in root's tree), or NULL */
        const char *listener_metadata;  /* linux.seccomp.listenerMetadata, or NULL */
        struct zct_mount_idmap *idmaps; /* the mounts with premade set */
        size_t n_idmaps;
        char **owned; /* strings the mounts point to that nothing else owns */
        size_t n_owned;
        char *notes; /* what is accepted and ignored, as runc accepts it: lines for the log, or NULL */
};

struct zct_ctx;
/* Reads BUNDLE/config.json, or config_path when not NULL (and the process of it, or of
 * process_path when not NULL, as exec's --process gives). cgroup_v2_only tells how to mount "cgroup"; the seccomp program comes from
 * where c->filter says. */
int zct_oci_load(const struct zct_ctx *c, const char *bundle, const char *config_path, const char *process_path,
                 bool cgroup_v2_only, struct zct_oci **ret, char **ret_error);
void zct_oci_free(struct zct_oci *o);
struct zct_cgroup_view; /* cgroup.c */
/* v1/hybrid: turns each "cgroup" mount into a tmpfs with a bind (read-only unless the config says
 * rw) of each of the container's own cgroup directories (as runc mounts it), instead of the
 * host's whole tree. */
int zct_oci_cgroup_view(struct zct_oci *o, const struct zct_cgroup_view *v, size_t n);
/* The AppArmor profile of the process ("" or NULL: none), named what in a refusal. */
int zct_oci_set_apparmor(struct zct_oci *o, const char *profile, const char *what, char **ret_error);
/* idmap-userns.c: each id-mapped mount's detached copy made (o->mounts[i].tree_fd), before the
 * init is cloned: only the runtime, outside any user namespace, may set an id mapping. Prints. */
int zct_idmap_mounts_make(const struct zct_ctx *c, struct zct_oci *o);
/* config-mempolicy.c: the names linux.memoryPolicy takes (features), NULL terminated. */
extern const char *const zct_mempolicy_mode_names[];
extern const char *const zct_mempolicy_flag_names[];
/* Fills sb from o (pointers into o; o must outlive sb). */
void zct_oci_to_sandbox(const struct zct_oci *o, struct ze_sandbox *sb);
/* runc's default config.json (rootless: with a user namespace mapping the caller). */
json_object *zct_oci_default_spec(bool rootless);
/* config.json's name of a CLONE_NEW* namespace ("network" for CLONE_NEWNET), "unknown" else. */
const char *zct_oci_ns_name(int flag);
/* Capability name <-> number via the profile module; "CAP_" optional on input. */
int zct_oci_cap_last(void);

/* ---- process-attrs.c: what the runtime sets on the process from outside ---- */
struct zct_ctx;
/* process.scheduler and process.ioPriority on pid (before it runs: both survive execve). Prints. */
int zct_process_attrs_apply(const struct zct_ctx *c, const struct zct_oci *o, pid_t pid);
/* A new time namespace with linux.timeOffsets for the runtime's next child (o->new_time_ns),
 * *ret_restore_fd (-EBADF: none) to go back with zct_timens_leave() once it is cloned. Print. */
int zct_timens_enter(const struct zct_ctx *c, const struct zct_oci *o, int *ret_restore_fd);
int zct_timens_leave(const struct zct_ctx *c, int restore_fd);
/* The process's environment as runc makes it, in place in *envp (a malloc'd array): a variable
 * set twice set once (the last value, at the first place), o->search_path its PATH, and HOME
 * from the image's /etc/passwd for o->uid ("/" without an entry) when it has none or an empty
 * one. */
int zct_oci_add_home(struct zct_oci *o, char ***envp);
/* entry ("NAME=value", malloc'd, taken: kept in o->owned) in *envp in place of NAME's first
 * value, or appended. */
int zct_env_put(struct zct_oci *o, char ***envp, char *entry);
/* linux.sysctl, each written in the container's (pid's) own namespace of its kind; a key that is
 * not namespaced, or of a namespace shared with the host, is refused. Prints. */
int zct_sysctls_apply(const struct zct_ctx *c, const struct zct_oci *o, pid_t pid);

/* ---- procfs.c ---- */
/* A procfs of the runtime's own for its writes: a fresh detached instance, or (where that is
 * refused) /proc checked to be procfs. An O_PATH-like fd, or -errno (-EXDEV: not procfs). */
int zct_procfs_open(void);
/* One write of value to path below proc_fd, opened without following a symlink or crossing a
 * mount, and checked to be on procfs. */
int zct_procfs_write(int proc_fd, const char *path, const char *value);
/* One write of value to /proc/PID/FILE of a procfs opened for it (the id maps, oom_score_adj). */
int zct_procfs_write_pid(pid_t pid, const char *file, const char *value);

/* ---- cgroup.c ---- */

struct zct_cgroup {
        bool v2_only;      /* pure cgroup2 host */
        char *paths[16];   /* directories we created or joined (v1 controllers, unified) */
        char *origins[16]; /* the creator's own directory in the same hierarchy (not saved) */
        size_t n_paths;
        char *freezer; /* v1 freezer dir, or the v2 dir (freeze via cgroup.freeze) */
        char *procs;   /* a dir whose cgroup.procs lists every process of the container */
        bool freezer_v1;
        char *devices; /* the v1 devices controller's dir, or NULL (only while creating) */
        char *unified; /* the cgroup2 dir (pure v2 or hybrid), or NULL (only while creating) */
};

bool zct_cgroup_is_v2_only(void);
/* The mount point and root of the hierarchy with these controllers (a comma list; "" for cgroup2),
 * from /proc/self/mountinfo; -ENOENT when there is none. */
int zct_cgroup_find_mount(const char *controllers, char **ret_mnt, char **ret_root);
/* Whether every controller of the comma list is in options (a mount's, or /proc/PID/cgroup's). */
bool zct_cgroup_has_controllers(const char *options, const char *list);
/* Writes value to DIR/FILE in one write (cgroup and /proc files want that). */
int zct_write_at(const char *dir, const char *file, const char *value);
/* Creates the container's cgroups (relative paths are below the caller's own cgroup) and applies
 * linux.resources (resources, may be NULL) but its devices; a field it cannot apply on this host
 * fails before anything is made, with a message naming it. rootless: a hierarchy where it may not
 * make the cgroup (no cgroupsPath, or a systemd-style one) is gone without, and a field that needs
 * it fails naming it. */
int zct_cgroup_create(const char *cgroups_path, const char *id, json_object *resources, bool rootless,
                      struct zct_cgroup *ret, char **ret_error);
struct zct_dev_rule; /* cgroup-devices.h */
/* The device rules (zct_dev_rules_from_json's list): written to the v1 devices controller, or
 * else, as an eBPF program, attached to the cgroup2 directory. Before the init joins.
 * -EOPNOTSUPP when cg has neither. */
int zct_cgroup_set_devices(const struct zct_cgroup *cg, const struct zct_dev_rule *rules, size_t n, char **ret_error);
/* An fd of the v2 directory for CLONE_INTO_CGROUP, or -EOPNOTSUPP on v1/hybrid. */
int zct_cgroup_open_v2(const struct zct_cgroup *cg);
int zct_cgroup_join(const struct zct_cgroup *cg, pid_t pid);
/* What a container in cg sees of a v1 or hybrid host: per hierarchy mounted below
 * /sys/fs/cgroup, its name there ("pids", "unified") and the container's own directory. */
struct zct_cgroup_view {
        char *name;
        char *dir;
};
int zct_cgroup_views(const struct zct_cgroup *cg, struct zct_cgroup_view **ret, size_t *ret_n);
void zct_cgroup_views_free(struct zct_cgroup_view *v, size_t n);
/* Moves the calling process back to the directories it was in when it created cg. */
int zct_cgroup_return(const struct zct_cgroup *cg);
int zct_cgroup_freeze(const struct zct_cgroup *cg, bool frozen);
int zct_cgroup_is_frozen(const struct zct_cgroup *cg);
int zct_cgroup_pids(const struct zct_cgroup *cg, pid_t **ret, size_t *ret_n);
/* The container's processes as pidfds (*ret malloc'd, each fd the caller's to close): every pid of
 * cgroup.procs pinned by a pidfd, and kept only if the cgroup still lists it afterwards, so that a
 * pid reused meanwhile by a process outside the container is never among them. */
int zct_cgroup_pidfds(const struct zct_cgroup *cg, int **ret, size_t *ret_n);
int zct_cgroup_remove(const struct zct_cgroup *cg);
void zct_cgroup_done(struct zct_cgroup *cg);
json_object *zct_cgroup_to_json(const struct zct_cgroup *cg);
/* cgroup-of.c: the cgroups of a container its caller did not create (the containerd shim: the
 * container zygoted made), as the init's /proc/PID/cgroup names them, in the struct create fills:
 * every change of them goes through this manager. -EPERM when the init shares a cgroup with the
 * caller or sits at a hierarchy's root: that one is not the container's. */
int zct_cgroup_of_pid(pid_t pid, struct zct_cgroup *ret);
/* The container's directory in controller's v1 hierarchy, or its cgroup2 one (controller NULL,
 * or a v2-only host): for reading counters. -ENOENT when it has none there. */
int zct_cgroup_dir(const struct zct_cgroup *cg, const char *controller, const char **ret);
/* exec --cgroup: pid into sub-cgroups of the container's, each of subs "[CONTROLLER[,...]:]PATH"
 * (without controllers: every hierarchy's), PATH below the container's directory (no ".."); a
 * hierarchy no sub names takes pid in the container's own directory, as zct_cgroup_join(). A
 * controller this host has no v1 hierarchy of, a path going up, or a directory that does not
 * exist fails with runc's words in *ret_error. */
int zct_cgroup_join_sub(const struct zct_cgroup *cg, pid_t pid, const char *const *subs, size_t n, char **ret_error);
/* New linux.resources (res) for a created container, as `zygote-runc update` and containerd's
 * Update ask: the device rules must stay those applied (applied: the resources recorded, else
 * BUNDLE/config.json's), every other field planned as create plans it (a field this host cannot
 * apply refused by name, before anything is written) and written. -errno and *ret_error. */
int zct_cgroup_update(const struct zct_cgroup *cg, json_object *applied, const char *bundle, json_object *res,
                      char **ret_error);
/* v1: an eventfd (*ret_fd) the kernel signals at each OOM in the memory cgroup dir, and once more
 * when it is removed (registered on memory.oom_control through cgroup.event_control). */
int zct_cgroup_oom_eventfd(const char *dir, int *ret_fd);
int zct_cgroup_from_json(json_object *o, struct zct_cgroup *ret);

/* ---- state.c ---- */

enum zct_status {
        ZCT_STATUS_CREATED,
        ZCT_STATUS_RUNNING,
        ZCT_STATUS_PAUSED,
        ZCT_STATUS_STOPPED,
};

struct zct_state {
        char *id;
        char *dir; /* ROOT/ID */
        pid_t pid;
        uint64_t starttime; /* /proc/PID/stat field 22: tells a reused pid apart */
        char *bundle;
        char *rootfs;
        char *created; /* RFC 3339 */
        uid_t owner;
        struct zct_cgroup cgroup;
        json_object *annotations;
        json_object *hooks;     /* config.json's "hooks", kept for start's poststart and delete's poststop */
        json_object *resources; /* linux.resources as now applied: config.json's, then each update's
                                 * fields over them (runc keeps them in its state too) */
};

/* Rootless as runc counts it: an euid other than 0, or 0 in a user namespace other than the
 * initial one (where podman runs its runtime for a user). */
bool zct_rootless(void);
/* The state root without --root: XDG_RUNTIME_DIR/zygote-runc (*ret_xdg true) where runc takes
 * XDG_RUNTIME_DIR/runc, else ZCT_RUNC_DEFAULT_ROOT; xdg_runtime_dir and user are the
 * environment's XDG_RUNTIME_DIR and USER (NULL when unset). */
int zct_state_default_root(const char *xdg_runtime_dir, const char *user, bool rootless, char **ret, bool *ret_xdg);
int zct_state_dir(const char *root, const char *id, char **ret);
struct zct_ctx;
/* ROOT/ID made (and ROOT, sticky below XDG_RUNTIME_DIR): the new directory's path, or an error
 * printed (a root the user may not write names the path and --root). */
int zct_state_make_dir(const struct zct_ctx *c, const char *id, char **ret_dir);
/* path and each missing directory above it, made with mode (the state root, cgroups). */
int zct_mkdir_p(const char *path, mode_t mode);
/* fs-util.c: a new file to (refused when it exists, or is a symlink) with from's bytes. */
int zct_copy_file(const char *from, const char *to, mode_t mode);
/* --config FILE: a copy as ROOT/ID/config.json, which create and exec both read (*ret_path);
 * zct_state_config: that copy's path, or NULL (*ret_path) when the bundle's config.json is the
 * container's. */
int zct_state_keep_config(const char *dir, const char *config, char **ret_path);
int zct_state_config(const char *dir, char **ret_path);
int zct_state_load(const char *root, const char *id, struct zct_state *ret);
/* The container's lock: ROOT/ID opened and flock'ed exclusively, waiting for whoever holds it;
 * the fd (the lock goes with it, or with the process), -ENOENT when there is no such container,
 * -EINVAL for a bad id. Commands that change a container hold it (verbs.h, ZCT_VERB_LOCK), and
 * create from its directory's mkdir until the state is saved. */
int zct_state_lock(const char *root, const char *id);
int zct_state_save(const struct zct_state *st);
void zct_state_done(struct zct_state *st);
enum zct_status zct_state_status(const struct zct_state *st);
const char *zct_status_to_string(enum zct_status s);
json_object *zct_state_to_json(const struct zct_state *st);
int zct_proc_starttime(pid_t pid, uint64_t *ret, char *ret_state);
/* Now, RFC 3339 with nanoseconds (the state's "created"). */
void zct_state_now(char *buf, size_t len);
/* A pidfd of the container's init, or -ESRCH when it is gone (or its pid was reused). */
int zct_state_pidfd(const struct zct_state *st);
int zct_rm_rf(const char *path);

/* ---- record-annotation.c: io.containers.trace-syscall, a recording of the container ---- */

#define ZCT_TRACE_ANNOTATION "io.containers.trace-syscall"

/* The link in a recorded container's state directory to its agent's socket. */
#define ZCT_RECORD_AGENT_LINK "record-agent"
/* When o's annotations ask for one: the agent started (its socket linked from state_dir), o's
 * seccomp made the recording one. */
int zct_record_annotation(const struct zct_ctx *c, struct zct_oci *o, const char *state_dir);
/* An exec into a container recorded by an agent (the link in its state_dir): o's seccomp made
 * the recording one, so that the process is recorded too. 0 and nothing done otherwise. */
int zct_record_join(const struct zct_ctx *c, struct zct_oci *o, const char *state_dir);
/* The annotation's value, "[if:IN;][of:]OUT" (cut up in place): *in (or NULL) and *out, both
 * absolute paths, or -EINVAL. */
int zct_record_annotation_parse(char *v, const char **in, const char **out);

/* ---- filter-remote.c: the seccomp program from zygoted (GetFilter) or compiled here ---- */

/* Where a container's seccomp program comes from: the caller's choice, passed in its struct
 * zct_ctx (zygote-runc's command line, zygoted's container worker), never a global or the
 * environment. */
enum zct_filter_from {
        ZCT_FILTER_ZYGOTED_OR_LOCAL, /* zygoted if one we trust answers, else compiled here */
        ZCT_FILTER_LOCAL,            /* compiled here, zygoted not asked */
        ZCT_FILTER_ZYGOTED,          /* zygoted's, or an error (no compile here) */
};

struct zct_filter_source {
        enum zct_filter_from from;
        const char *socket; /* zygoted's socket; NULL: libzygote's default ($ZYGOTE_SOCKET, ...) */
        /* Asked first when set (zygoted's container worker: the daemon's cache as the fork left
         * it): 0 and *ret, or <0 to go on. why: where it came from, for the debug line. */
        int (*cached)(void *userdata, json_object *seccomp, struct zp_profile **ret, char *why, size_t why_size);
        /* Asked with the program in hand, when set (zygoted's container worker): a pidfd (the
         * caller's, kept open until the process is made) of a process whose filter is exactly
         * that program, for the container's process to clone with SECCOMP_CLONE_FILTER, without
         * the program to fall back on; or -1 to load the program. Never asked for a program with
         * a listener. */
        int (*reference)(void *userdata, const struct zp_profile *program);
        void *userdata;
};

struct zct_ctx;
/* seccomp (config's linux.seccomp) as a compiled profile, from where c->filter says; *source
 * (source_size bytes) tells where it came from, for a debug line. */
int zct_runc_filter_load(const struct zct_ctx *c, const char *config, json_object *seccomp, struct zp_profile **ret,
                         char *source, size_t source_size, char **ret_error);

/* ---- sd-activation.c: systemd's socket activation and readiness, as runc and crun carry them ---- */

/* LISTEN_FDS (the runtime's caller's, listen_fds > 0: the fds from 3 its caller passes on as
 * preserved fds): the process's environment says LISTEN_FDS=N and LISTEN_PID=1. */
int zct_listen_fds_env(struct zct_oci *o, int listen_fds);
/* NOTIFY_SOCKET (host_socket, the caller's): DIR/notify made with the socket "notify" bound in
 * it (*ret_sock), bound read-only into the container at host_socket's path (/run/notify for an
 * abstract socket) as a premade mount of o's (its tree o's to close), and the process's
 * NOTIFY_SOCKET naming the socket there. */
int zct_notify_prepare(struct zct_oci *o, const char *dir, const char *host_socket, int *ret_sock);
/* start: the socket bound again in DIR/notify (create's went with create); -ENOENT when the
 * container was created without one. */
int zct_notify_rebind(const char *dir, int *ret_sock);
/* What the container sends on sock, until READY=1: then "READY=1" and "MAINPID=pid" go to
 * host_socket (nothing else of the container's) and 1 is returned; 0 once pidfd says the init
 * is gone first; -errno. */
int zct_notify_relay(int sock, const char *host_socket, int pidfd, pid_t pid);

/* ---- devices-premade.c ---- */

/* A container with a user namespace (where mknod is refused), made by a runtime that may make
 * nodes (root of the initial user namespace): each device of o made in DIR/devices, owned by the
 * host ids its uid and gid map to, and handed to the init as a detached mount (premade, tree_fd).
 * Else nothing (the init binds the host's node of the same path). */
int zct_devices_premake(struct zct_oci *o, const char *dir);

/* ---- sealed-copy.c ---- */

/* Re-executes this program from a sealed, read-only memfd copy of itself unless it runs from
 * one already (then 0). Returns only then, or with a negative errno when it could not. */
int zct_runc_run_sealed(char **argv);

/* ---- log.c, process.c, container.c, exec.c ---- */

struct zct_ctx {
        const char *root;
        bool root_xdg; /* root is the default below XDG_RUNTIME_DIR: made sticky, as runc does */
        bool rootless; /* zct_rootless(), or --rootless: cgroups it may not make are gone without */
        const char *log_path;
        bool log_json;
        bool debug;
        struct zct_filter_source filter; /* where seccomp programs come from (filter-remote.c) */
        /* zygoted's container worker: error messages go to msg_fd (one write each, a
         * SOCK_SEQPACKET message) instead of stderr, which is the container's */
        bool msg_to_fd;
        int msg_fd;
};

/* What create, run and exec all take: the container, --pid-file, --console-socket,
 * --preserve-fds, --detach. */
struct zct_proc_args {
        const char *id;
        const char *pid_file;
        const char *console_socket;
        int preserve_fds;
        bool detach;
};

/* create as zygoted's container worker runs it (daemon/container.c): the init is born the
 * daemon's child (CLONE_PARENT), waits on the daemon's hold pipe instead of the exec fifo, and
 * its pidfd and sync socket go to the daemon, whose task it is from then on. */
struct zct_handoff {
        int start_fd;   /* in: the init waits for one byte here until Start (taken) */
        int console_fd; /* in: a connected console socket, or -1 (taken) */
        pid_t pid;      /* out: the init, once cloned (also when create failed after the clone) */
        int pidfd;      /* out: its pidfd, or -1 */
        int sync_fd;    /* out: the runtime's end of the sync socket (after "ready"), or -1 */
        /* in: a network, IPC and UTS namespace zygoted made ahead (daemon/nspool.c), or -1 each:
         * the init joins them instead of making its own, when the config asks for new ones of
         * those kinds and nothing before "go" looks into the init's namespaces (no user
         * namespace, no sysctl, no hook) */
        int premade[3];
        bool premade_used; /* out: they were */
        /* in: what the hooks zygoted's worker and the init run (prestart, createRuntime,
         * createContainer) hold: their caller's (daemon/container.c); NULL: the runtime's own */
        const struct ze_hook_creds *hook_creds;
        /* in: the lowest process.oomScoreAdj the config may ask for (the caller's, unless it
         * holds CAP_SYS_RESOURCE), lower ones refused; INT_MIN: any */
        int oom_floor;
        /* in: io.containers.trace-syscall recorded by zygote-record's agent, as zygote-runc's own
         * create does, rather than by zygoted's eBPF tracer (daemon/container-record.c) */
        bool record_agent;
};

struct zct_create_args {
        struct zct_proc_args p;
        const char *bundle;
        bool run;
        bool keep;                   /* run --keep: the stopped container stays until delete */
        int listen_fds;              /* LISTEN_FDS: fds 3.. of the caller (counted in p.preserve_fds) */
        const char *notify_socket;   /* NOTIFY_SOCKET: the caller's, READY=1 relayed there, or NULL */
        const char *config;          /* --config FILE (absolute), or NULL: BUNDLE/config.json */
        struct zct_handoff *handoff; /* NULL: zygote-runc's own create */
};

struct zct_exec_args {
        struct zct_proc_args p;
        const char *process; /* --process FILE, or NULL: args, env, cwd, user, tty below */
        const char *cwd;
        const char *user;
        const char **env;
        size_t n_env;
        bool tty;
        const char **caps; /* --cap: added to the process's five capability sets */
        size_t n_caps;
        const char **gids; /* --additional-gids */
        size_t n_gids;
        bool no_new_privs;    /* --no-new-privs */
        bool ignore_paused;   /* --ignore-paused: a paused container takes the process (frozen) */
        const char **cgroups; /* --cgroup "[CONTROLLER[,...]:]PATH": sub-cgroups to join instead */
        size_t n_cgroups;
        const char *apparmor; /* --apparmor PROFILE, or NULL: the config's */
        char **args;
        int n_args;
        struct zct_handoff *handoff; /* NULL: zygote-runc's own exec (the process is held on
                                      * handoff->start_fd, and is zygoted's child) */
};

/* log.c: print to stderr and log (error level): returns 1, the exit status of a failed command. */
__attribute__((format(printf, 2, 3))) int zct_error(const struct zct_ctx *c, const char *fmt, ...);
/* zct_error() of "MESSAGE: <errno's words>": returns errno as it was, negative. */
__attribute__((format(printf, 2, 3))) int zct_error_errno(const struct zct_ctx *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void zct_debug(const struct zct_ctx *c, const char *fmt, ...);
/* To the log file (and stderr with --debug): what an operator should know, not an error. */
__attribute__((format(printf, 2, 3))) void zct_info(const struct zct_ctx *c, const char *fmt, ...);
/* On stderr and in the log file, always: what the command went on with that the caller may not
 * expect. */
__attribute__((format(printf, 2, 3))) void zct_warn(const struct zct_ctx *c, const char *fmt, ...);
/* strerror in Go's lower case, which podman matches ("no such file or directory") */
const char *zct_errstr(int err);
int zct_parse_signal(const char *s);
/* Kill every process of the container, wait until they are gone, remove cgroups and state. */
void zct_destroy(const struct zct_state *st);
/* Loads ID's state, or prints runc's "container does not exist" and returns a negative errno. */
int zct_runc_load_state(const struct zct_ctx *c, const char *id, struct zct_state *st);
/* process.c */
struct ze_status;
/* Whether this kernel applies AppArmor profiles (and ZYGOTE_DISABLE_FEATURES does not name
 * "apparmor", which forces the refusal). */
bool zct_apparmor_enabled(void);
/* The sandbox settings of o plus the console socket (connected here) and the PATH-search buffer
 * (*ret_path_buf, freed by the caller); an AppArmor profile where the kernel applies them, else
 * refused. Prints and returns a negative errno on failure. */
int zct_runc_sandbox_prepare(const struct zct_ctx *c, const struct zct_oci *o, const char *console_socket,
                             int preserve_fds, struct ze_sandbox *sb, char **ret_path_buf, int *ret_console_fd);
/* One status record of the process's sync socket: 1, 0 at EOF (it exec'd or died), or -errno. */
int zct_runc_read_status(int fd, struct ze_status *ret);
/* seccomp-listener.c: the process whose listener it is, for the container process state. */
struct zct_listener_for {
        const struct zct_oci *o;    /* listenerPath, listenerMetadata */
        const struct zct_state *st; /* id, bundle, annotations, the init's pid */
        const char *status;         /* the state's status: "creating" (create), "running" (exec) */
        pid_t pid;                  /* the process, as the runtime sees it */
        int *agent_fd;              /* zct_seccomp_listener_connect's: used once, then closed */
};
/* When o's filter notifies (SECCOMP_FILTER_FLAG_NEW_LISTENER): a connection to listenerPath in
 * *ret_fd, made before the process exists and from the runtime's own namespaces and root (the
 * path is never resolved where the container could put a socket); else -EBADF there. A relative
 * path is refused with absolute_only (zygoted's worker). Prints and returns -errno when the agent
 * cannot be reached. */
int zct_seccomp_listener_connect(const struct zct_ctx *c, const struct zct_oci *o, bool absolute_only, int *ret_fd);
/* One status record as zct_runc_read_status reads it; a ZE_STEP_LISTENER record before it is
 * handed to f's agent (zct_seccomp_listener_send) and the next one read. Every failure (the read,
 * a hand-over) is printed here: 1, 0 at EOF, or -errno. */
int zct_runc_read_status_passing(const struct zct_ctx *c, const struct zct_listener_for *f, int sync_fd,
                                 struct ze_status *ret);
/* The state and the listener (SCM_RIGHTS) in one message on f's connection to the agent, which
 * is closed then; listener stays the caller's. Prints and returns -errno on failure. */
int zct_seccomp_listener_send(const struct zct_ctx *c, const struct zct_listener_for *f, int listener);
/* A namespace the config names by path, opened and checked to be of its kind: its fd, or a
 * negative errno after printing why. */
int zct_open_namespace(const struct zct_ctx *c, const struct zct_ns_path *ns);
/* zct_open_namespace for create's joins: a mount namespace also refused for zygoted (daemon) and
 * when it is the runtime's own or its pid 1's (the host's). */
int zct_open_join(const struct zct_ctx *c, const struct zct_ns_path *ns, bool daemon);
/* Prints a failure record in runc's words, where podman and containerd look for them. */
void zct_runc_report_failure(const struct zct_ctx *c, const struct zct_oci *o, const struct ze_status *s);
/* Reaps the process: its exit code, or 128 + its signal. */
int zct_runc_wait_exit_status(int pidfd);
/* Until a process, not necessarily our child, has exited (10 s at most). */
void zct_runc_wait_gone(int pidfd);
void zct_runc_forward_signals(pid_t pid);
/* clone3(ca) into the sandbox: the child closes close_fd (-1: none), reports on sync_fd and
 * runs sb (never returns). Returns the child's pid or a negative errno. */
struct clone_args;
pid_t zct_runc_clone_sandbox(struct clone_args *ca, struct ze_sandbox *sb, int sync_fd, int close_fd);
/* Writes pid to path atomically (nothing when path is NULL). */
int zct_runc_write_pid_file(const char *path, pid_t pid);
/* container.c: create (a->run: and start and wait); exec.c: exec. They print; they return the
 * command's exit status. */
int zct_container_create(const struct zct_ctx *c, const struct zct_create_args *a);
int zct_exec_process(const struct zct_ctx *c, const struct zct_exec_args *a);

/* ---- hooks.c: config.json's hooks ---- */
/* Checks config.json's "hooks" (root: the config): 0, or <0 with a located message in *err. */
int zct_hooks_check(json_object *root, char **err);
/* And for a container zygoted starts (zct_handoff): poststart and poststop refused. */
int zct_hooks_check_handoff(json_object *root, char **err);
/* The state a hook reads on its stdin. */
json_object *zct_hooks_state(const struct zct_state *st, const char *status, pid_t pid);
/* Runs hooks' KIND in order with state on their stdin: 0, or the first failure (<0, printed).
 * prestart, createRuntime and poststart stop at the first failure; poststop runs on after one.
 * Each hook takes creds before its execve (NULL: the runtime's own, as zygote-runc's hooks). */
int zct_hooks_run(const struct zct_ctx *c, json_object *hooks, const char *kind, json_object *state,
                  const struct ze_hook_creds *creds);
/* poststart (after start let the process go): 0, or the failure (printed; the caller ends the
 * container, as runc does); poststop (after delete): a failure is logged. */
int zct_hooks_poststart(const struct zct_ctx *c, const struct zct_state *st);
void zct_hooks_poststop(const struct zct_ctx *c, const struct zct_state *st);
/* hooks' KIND (createContainer, startContainer) as the container init runs them, with the state
 * (status, and the pid the init fills in) they read: *ret untouched when there are none. The
 * strings point into hooks (or envp: a hook without "env" gets the process's, as runc's). */
int zct_hooks_for_init(json_object *hooks, const char *kind, const struct zct_state *st, const char *status,
                       char *const *envp, struct ze_sb_hooks *ret);
void zct_hooks_for_init_free(struct ze_sb_hooks *h);
/* Prints the init's record of a hook that failed (ZE_STEP_CREATE_HOOK, ZE_STEP_START_HOOK), the
 * hook named by its kind, index and path: an exit status, a signal, its timeout. */
void zct_hooks_report_failure(const struct zct_ctx *c, json_object *hooks, const struct ze_status *s);
/* `start` hears of a failed startContainer hook through a fifo in the state directory (create's
 * init has no one else to tell). zct_hooks_report_fifo: made by create when hooks has
 * startContainer hooks, *ret_fd the init's end (untouched without them). zct_hooks_open_report:
 * start's end, or -ENOENT without such hooks. zct_hooks_wait_start: once the byte is written,
 * until the init has exec'd (0) or a hook failed (printed, <0). */
#define ZCT_HOOKS_FIFO "start-hooks.fifo"
int zct_hooks_report_fifo(const char *dir, json_object *hooks, int *ret_fd);
int zct_hooks_open_report(const struct zct_state *st);
int zct_hooks_wait_start(const struct zct_ctx *c, const struct zct_state *st, int fd);
