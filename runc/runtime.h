/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc, the OCI runtime: shared declarations of its parts.
 *
 *   main.c      command line (runc's): global options and the verb table; the verbs' option
 *               parser (options.c) and handlers (cmd-*.c) are declared in verbs.h
 *   log.c       error and debug messages: stderr and the log file (text or JSON)
 *   container.c create/run: the parent's side of engine/sandbox.c for the init
 *   exec.c      exec: a new process joined to a running container
 *   process.c   what create and exec share: sandbox preparation, status records and runc's
 *               failure messages, waiting, signal forwarding, destroy
 *   tty.c       the foreground terminal of run and exec -t without a console socket (tty.h)
 *   config.c    config.json -> struct zrc_oci (everything the sandbox needs, resolved), spec;
 *               its parts config-process.c (process), config-mount.c (mounts, devices) and
 *               config-util.c (JSON access and errors, config-util.h)
 *   cgroup.c   cgroups v1, hybrid and v2: create, limits, join, freeze, list, remove
 *   cgroup-devices.c  the device rules: OCI parsing, v1 lines, the v2 eBPF program
 *   cgroup-resources.c, cgroup-limits.c  linux.resources as cgroup writes, and writing them
 *               (cgroup-resources.h)
 *   state.c    the state directory of one container and its status
 *   filter-remote.c  the seccomp program from zygoted (GetFilter) or compiled here
 *   seccomp-listener.c  a notifying filter's listener handed to linux.seccomp.listenerPath
 *   sealed-copy.c    the runtime runs from a sealed memfd copy of itself, never the host's file
 *
 * Library-style parts return 0 or a negative errno and fill *ret_error with a message (malloc'd)
 * where the user needs more than strerror; only the parts that take a struct zrc_ctx print.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

struct zp_profile;

#define ZRC_RUNC_DEFAULT_ROOT "/run/zygote-runc"
#define ZRC_RUNC_OCI_VERSION "1.0.2"

/* ---- config.c ---- */

struct zrc_ns_path {
        int flag; /* CLONE_NEW* */
        char *path;
};

struct zrc_idmap {
        char *text; /* "container host size\n" lines, for /proc/PID/{uid,gid}_map */
};

struct zrc_oci {
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
        bool has_sched;                            /* process.scheduler (config-linux.c) */
        struct zrc_sched {
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
        struct zrc_ns_path ns_paths[8];
        size_t n_ns_paths;
        char *uid_map, *gid_map; /* NULL when no user namespace */

        const char *cgroups_path;
        json_object *resources; /* linux.resources, or NULL (cgroup-resources.h reads it) */
        bool has_limits;        /* resources asks for more than device rules */
        json_object *sysctl;    /* linux.sysctl (keys checked), or NULL */

        struct zp_profile *seccomp;    /* NULL: no filter */
        const char *listener_path;     /* linux.seccomp.listenerPath (in root's tree), or NULL */
        const char *listener_metadata; /* linux.seccomp.listenerMetadata, or NULL */
        char **owned;                  /* strings the mounts point to that nothing else owns */
        size_t n_owned;
        char *notes; /* what is accepted and ignored, as runc accepts it: lines for the log, or NULL */
};

/* Reads BUNDLE/config.json (and the process of it, or of process_path when not NULL, as exec's
 * --process gives). cgroup_v2_only tells how to mount "cgroup". */
int zrc_oci_load(const char *bundle, const char *process_path, bool cgroup_v2_only, struct zrc_oci **ret,
                 char **ret_error);
void zrc_oci_free(struct zrc_oci *o);
struct zrc_cgroup_view; /* cgroup.c */
/* v1/hybrid: turns each "cgroup" mount into a tmpfs with a bind (read-only unless the config says
 * rw) of each of the container's own cgroup directories (as runc mounts it), instead of the
 * host's whole tree. */
int zrc_oci_cgroup_view(struct zrc_oci *o, const struct zrc_cgroup_view *v, size_t n);
/* The AppArmor profile of the process ("" or NULL: none), named what in a refusal. */
int zrc_oci_set_apparmor(struct zrc_oci *o, const char *profile, const char *what, char **ret_error);
/* Fills sb from o (pointers into o; o must outlive sb). */
void zrc_oci_to_sandbox(const struct zrc_oci *o, struct ze_sandbox *sb);
/* runc's default config.json (rootless: with a user namespace mapping the caller). */
json_object *zrc_oci_default_spec(bool rootless);
/* config.json's name of a CLONE_NEW* namespace ("network" for CLONE_NEWNET), "unknown" else. */
const char *zrc_oci_ns_name(int flag);
/* Capability name <-> number via the profile module; "CAP_" optional on input. */
int zrc_oci_cap_last(void);

/* ---- process-attrs.c: what the runtime sets on the process from outside ---- */
struct zrc_ctx;
/* process.scheduler and process.ioPriority on pid (before it runs: both survive execve). Prints. */
int zrc_process_attrs_apply(const struct zrc_ctx *c, const struct zrc_oci *o, pid_t pid);
/* A new time namespace with linux.timeOffsets for the runtime's next child (o->new_time_ns),
 * *ret_restore_fd (-EBADF: none) to go back with zrc_timens_leave() once it is cloned. Print. */
int zrc_timens_enter(const struct zrc_ctx *c, const struct zrc_oci *o, int *ret_restore_fd);
int zrc_timens_leave(const struct zrc_ctx *c, int restore_fd);
/* The process's environment as runc makes it, in place in *envp (a malloc'd array): a variable
 * set twice set once (the last value, at the first place), o->search_path its PATH, and HOME
 * from the image's /etc/passwd for o->uid ("/" without an entry) when it has none or an empty
 * one. */
int zrc_oci_add_home(struct zrc_oci *o, char ***envp);
/* linux.sysctl, each written in the container's (pid's) own namespace of its kind; a key that is
 * not namespaced, or of a namespace shared with the host, is refused. Prints. */
int zrc_sysctls_apply(const struct zrc_ctx *c, const struct zrc_oci *o, pid_t pid);

/* ---- procfs.c ---- */
/* A procfs of the runtime's own for its writes: a fresh detached instance, or (where that is
 * refused) /proc checked to be procfs. An O_PATH-like fd, or -errno (-EXDEV: not procfs). */
int zrc_procfs_open(void);
/* One write of value to path below proc_fd, opened without following a symlink or crossing a
 * mount, and checked to be on procfs. */
int zrc_procfs_write(int proc_fd, const char *path, const char *value);

/* ---- cgroup.c ---- */

struct zrc_cgroup {
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

bool zrc_cgroup_is_v2_only(void);
/* Writes value to DIR/FILE in one write (cgroup and /proc files want that). */
int zrc_write_at(const char *dir, const char *file, const char *value);
/* Creates the container's cgroups (relative paths are below the caller's own cgroup) and applies
 * linux.resources (resources, may be NULL) but its devices; a field it cannot apply on this host
 * fails before anything is made, with a message naming it. rootless: a hierarchy where it may not
 * make the cgroup (no cgroupsPath, or a systemd-style one) is gone without, and a field that needs
 * it fails naming it. */
int zrc_cgroup_create(const char *cgroups_path, const char *id, json_object *resources, bool rootless,
                      struct zrc_cgroup *ret, char **ret_error);
struct zrc_dev_rule; /* cgroup-devices.h */
/* The device rules (zrc_dev_rules_from_json's list): written to the v1 devices controller, or
 * else, as an eBPF program, attached to the cgroup2 directory. Before the init joins.
 * -EOPNOTSUPP when cg has neither. */
int zrc_cgroup_set_devices(const struct zrc_cgroup *cg, const struct zrc_dev_rule *rules, size_t n, char **ret_error);
/* An fd of the v2 directory for CLONE_INTO_CGROUP, or -EOPNOTSUPP on v1/hybrid. */
int zrc_cgroup_open_v2(const struct zrc_cgroup *cg);
int zrc_cgroup_join(const struct zrc_cgroup *cg, pid_t pid);
/* What a container in cg sees of a v1 or hybrid host: per hierarchy mounted below
 * /sys/fs/cgroup, its name there ("pids", "unified") and the container's own directory. */
struct zrc_cgroup_view {
        char *name;
        char *dir;
};
int zrc_cgroup_views(const struct zrc_cgroup *cg, struct zrc_cgroup_view **ret, size_t *ret_n);
void zrc_cgroup_views_free(struct zrc_cgroup_view *v, size_t n);
/* Moves the calling process back to the directories it was in when it created cg. */
int zrc_cgroup_return(const struct zrc_cgroup *cg);
int zrc_cgroup_freeze(const struct zrc_cgroup *cg, bool frozen);
int zrc_cgroup_is_frozen(const struct zrc_cgroup *cg);
int zrc_cgroup_pids(const struct zrc_cgroup *cg, pid_t **ret, size_t *ret_n);
/* The container's processes as pidfds (*ret malloc'd, each fd the caller's to close): every pid of
 * cgroup.procs pinned by a pidfd, and kept only if the cgroup still lists it afterwards, so that a
 * pid reused meanwhile by a process outside the container is never among them. */
int zrc_cgroup_pidfds(const struct zrc_cgroup *cg, int **ret, size_t *ret_n);
int zrc_cgroup_remove(const struct zrc_cgroup *cg);
void zrc_cgroup_done(struct zrc_cgroup *cg);
json_object *zrc_cgroup_to_json(const struct zrc_cgroup *cg);
int zrc_cgroup_from_json(json_object *o, struct zrc_cgroup *ret);

/* ---- state.c ---- */

enum zrc_status {
        ZRC_STATUS_CREATED,
        ZRC_STATUS_RUNNING,
        ZRC_STATUS_PAUSED,
        ZRC_STATUS_STOPPED,
};

struct zrc_state {
        char *id;
        char *dir; /* ROOT/ID */
        pid_t pid;
        uint64_t starttime; /* /proc/PID/stat field 22: tells a reused pid apart */
        char *bundle;
        char *rootfs;
        char *created; /* RFC 3339 */
        uid_t owner;
        struct zrc_cgroup cgroup;
        json_object *annotations;
        json_object *hooks;     /* config.json's "hooks", kept for start's poststart and delete's poststop */
        json_object *resources; /* linux.resources as now applied: config.json's, then each update's
                                 * fields over them (runc keeps them in its state too) */
};

/* Rootless as runc counts it: an euid other than 0, or 0 in a user namespace other than the
 * initial one (where podman runs its runtime for a user). */
bool zrc_rootless(void);
/* The state root without --root: XDG_RUNTIME_DIR/zygote-runc (*ret_xdg true) where runc takes
 * XDG_RUNTIME_DIR/runc, else ZRC_RUNC_DEFAULT_ROOT; xdg_runtime_dir and user are the
 * environment's XDG_RUNTIME_DIR and USER (NULL when unset). */
int zrc_state_default_root(const char *xdg_runtime_dir, const char *user, bool rootless, char **ret, bool *ret_xdg);
int zrc_state_dir(const char *root, const char *id, char **ret);
struct zrc_ctx;
/* ROOT/ID made (and ROOT, sticky below XDG_RUNTIME_DIR): the new directory's path, or an error
 * printed (a root the user may not write names the path and --root). */
int zrc_state_make_dir(const struct zrc_ctx *c, const char *id, char **ret_dir);
/* path and each missing directory above it, made with mode (the state root, cgroups). */
int zrc_mkdir_p(const char *path, mode_t mode);
int zrc_state_load(const char *root, const char *id, struct zrc_state *ret);
/* The container's lock: ROOT/ID opened and flock'ed exclusively, waiting for whoever holds it;
 * the fd (the lock goes with it, or with the process), -ENOENT when there is no such container,
 * -EINVAL for a bad id. Commands that change a container hold it (verbs.h, ZRC_VERB_LOCK), and
 * create from its directory's mkdir until the state is saved. */
int zrc_state_lock(const char *root, const char *id);
int zrc_state_save(const struct zrc_state *st);
void zrc_state_done(struct zrc_state *st);
enum zrc_status zrc_state_status(const struct zrc_state *st);
const char *zrc_status_to_string(enum zrc_status s);
json_object *zrc_state_to_json(const struct zrc_state *st);
int zrc_proc_starttime(pid_t pid, uint64_t *ret, char *ret_state);
/* A pidfd of the container's init, or -ESRCH when it is gone (or its pid was reused). */
int zrc_state_pidfd(const struct zrc_state *st);
int zrc_rm_rf(const char *path);

/* ---- record-annotation.c: io.containers.trace-syscall, a recording of the container ---- */

/* When o's annotations ask for one: the agent started, o's seccomp made the recording one. */
int zrc_record_annotation(const struct zrc_ctx *c, struct zrc_oci *o);

/* ---- filter-remote.c: the seccomp program from zygoted (GetFilter) or compiled here ---- */

struct zrc_ctx;
/* The command's context and options (socket NULL: $ZYGOTE_SOCKET or the default). */
void zrc_runc_filter_setup(const struct zrc_ctx *c, const char *socket, bool no_zygote);
/* seccomp (config's linux.seccomp) as a compiled profile, from zygoted or compiled here. */
int zrc_runc_filter_load(const char *config, json_object *seccomp, struct zp_profile **ret, char **ret_error);
/* Asked before zygoted's socket (zygoted's container worker: the daemon's cache as the fork left
 * it): 0 and *ret, or <0 to go on asking zygoted. why: for the debug line. */
extern int (*zrc_runc_filter_provider)(json_object *seccomp, struct zp_profile **ret, char *why, size_t why_size);
/* Where the last program came from, for a debug line. */
const char *zrc_runc_filter_source(void);

/* ---- sealed-copy.c ---- */

/* Re-executes this program from a sealed, read-only memfd copy of itself unless it runs from
 * one already (then 0). Returns only then, or with a negative errno when it could not. */
int zrc_runc_run_sealed(char **argv);

/* ---- log.c, process.c, container.c, exec.c ---- */

struct zrc_ctx {
        const char *root;
        bool root_xdg; /* root is the default below XDG_RUNTIME_DIR: made sticky, as runc does */
        bool rootless; /* zrc_rootless(), or --rootless: cgroups it may not make are gone without */
        const char *log_path;
        bool log_json;
        bool debug;
        const char *zygote_socket; /* --zygote-socket */
        bool no_zygote;            /* --no-zygote */
        /* zygoted's container worker: error messages go to msg_fd (one write each, a
         * SOCK_SEQPACKET message) instead of stderr, which is the container's */
        bool msg_to_fd;
        int msg_fd;
};

/* What create, run and exec all take: the container, --pid-file, --console-socket,
 * --preserve-fds, --detach. */
struct zrc_proc_args {
        const char *id;
        const char *pid_file;
        const char *console_socket;
        int preserve_fds;
        bool detach;
};

/* create as zygoted's container worker runs it (daemon/container.c): the init is born the
 * daemon's child (CLONE_PARENT), waits on the daemon's hold pipe instead of the exec fifo, and
 * its pidfd and sync socket go to the daemon, whose task it is from then on. */
struct zrc_handoff {
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
};

struct zrc_create_args {
        struct zrc_proc_args p;
        const char *bundle;
        bool run;
        bool keep;                   /* run --keep: the stopped container stays until delete */
        struct zrc_handoff *handoff; /* NULL: zygote-runc's own create */
};

struct zrc_exec_args {
        struct zrc_proc_args p;
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
        const char *apparmor; /* --apparmor PROFILE, or NULL: the config's */
        char **args;
        int n_args;
        struct zrc_handoff *handoff; /* NULL: zygote-runc's own exec (the process is held on
                                      * handoff->start_fd, and is zygoted's child) */
};

/* log.c: print to stderr and log (error level): returns 1, the exit status of a failed command. */
__attribute__((format(printf, 2, 3))) int zrc_error(const struct zrc_ctx *c, const char *fmt, ...);
/* zrc_error() of "MESSAGE: <errno's words>": returns errno as it was, negative. */
__attribute__((format(printf, 2, 3))) int zrc_error_errno(const struct zrc_ctx *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void zrc_debug(const struct zrc_ctx *c, const char *fmt, ...);
/* To the log file (and stderr with --debug): what an operator should know, not an error. */
__attribute__((format(printf, 2, 3))) void zrc_info(const struct zrc_ctx *c, const char *fmt, ...);
/* strerror in Go's lower case, which podman matches ("no such file or directory") */
const char *zrc_errstr(int err);
int zrc_parse_signal(const char *s);
/* Kill every process of the container, wait until they are gone, remove cgroups and state. */
void zrc_destroy(const struct zrc_state *st);
/* Loads ID's state, or prints runc's "container does not exist" and returns a negative errno. */
int zrc_runc_load_state(const struct zrc_ctx *c, const char *id, struct zrc_state *st);
/* process.c */
struct ze_status;
/* Whether this kernel applies AppArmor profiles (and ZYGOTE_DISABLE_FEATURES does not name
 * "apparmor", which forces the refusal). */
bool zrc_apparmor_enabled(void);
/* The sandbox settings of o plus the console socket (connected here) and the PATH-search buffer
 * (*ret_path_buf, freed by the caller); an AppArmor profile where the kernel applies them, else
 * refused. Prints and returns a negative errno on failure. */
int zrc_runc_sandbox_prepare(const struct zrc_ctx *c, const struct zrc_oci *o, const char *console_socket,
                             int preserve_fds, struct ze_sandbox *sb, char **ret_path_buf, int *ret_console_fd);
/* One status record of the process's sync socket: 1, 0 at EOF (it exec'd or died), or -errno. */
int zrc_runc_read_status(int fd, struct ze_status *ret);
/* seccomp-listener.c: the process whose listener it is, for the container process state. */
struct zrc_listener_for {
        const struct zrc_oci *o;    /* listenerPath, listenerMetadata */
        const struct zrc_state *st; /* id, bundle, annotations, the init's pid */
        const char *status;         /* the state's status: "creating" (create), "running" (exec) */
        pid_t pid;                  /* the process, as the runtime sees it */
        int *agent_fd;              /* zrc_seccomp_listener_connect's: used once, then closed */
};
/* When o's filter notifies (SECCOMP_FILTER_FLAG_NEW_LISTENER): a connection to listenerPath in
 * *ret_fd, made before the process exists and from the runtime's own namespaces and root (the
 * path is never resolved where the container could put a socket); else -EBADF there. A relative
 * path is refused with absolute_only (zygoted's worker). Prints and returns -errno when the agent
 * cannot be reached. */
int zrc_seccomp_listener_connect(const struct zrc_ctx *c, const struct zrc_oci *o, bool absolute_only, int *ret_fd);
/* One status record as zrc_runc_read_status reads it; a ZE_STEP_LISTENER record before it is
 * handed to f's agent (zrc_seccomp_listener_send) and the next one read. Every failure (the read,
 * a hand-over) is printed here: 1, 0 at EOF, or -errno. */
int zrc_runc_read_status_passing(const struct zrc_ctx *c, const struct zrc_listener_for *f, int sync_fd,
                                 struct ze_status *ret);
/* The state and the listener (SCM_RIGHTS) in one message on f's connection to the agent, which
 * is closed then; listener stays the caller's. Prints and returns -errno on failure. */
int zrc_seccomp_listener_send(const struct zrc_ctx *c, const struct zrc_listener_for *f, int listener);
/* Prints a failure record in runc's words, where podman and containerd look for them. */
void zrc_runc_report_failure(const struct zrc_ctx *c, const struct zrc_oci *o, const struct ze_status *s);
/* Reaps the process: its exit code, or 128 + its signal. */
int zrc_runc_wait_exit_status(int pidfd);
/* Until a process, not necessarily our child, has exited (10 s at most). */
void zrc_runc_wait_gone(int pidfd);
void zrc_runc_forward_signals(pid_t pid);
/* clone3(ca) into the sandbox: the child closes close_fd (-1: none), reports on sync_fd and
 * runs sb (never returns). Returns the child's pid or a negative errno. */
struct clone_args;
pid_t zrc_runc_clone_sandbox(struct clone_args *ca, struct ze_sandbox *sb, int sync_fd, int close_fd);
/* Writes pid to path atomically (nothing when path is NULL). */
int zrc_runc_write_pid_file(const char *path, pid_t pid);
/* container.c: create (a->run: and start and wait); exec.c: exec. They print; they return the
 * command's exit status. */
int zrc_container_create(const struct zrc_ctx *c, const struct zrc_create_args *a);
int zrc_exec_process(const struct zrc_ctx *c, const struct zrc_exec_args *a);

/* ---- hooks.c: config.json's hooks ---- */
/* Checks config.json's "hooks" (root: the config): 0, or <0 with a located message in *err. */
int zrc_hooks_check(json_object *root, char **err);
/* And for a container zygoted starts (zrc_handoff): poststart and poststop refused. */
int zrc_hooks_check_handoff(json_object *root, char **err);
/* The state a hook reads on its stdin. */
json_object *zrc_hooks_state(const struct zrc_state *st, const char *status, pid_t pid);
/* Runs hooks' KIND in order with state on their stdin: 0, or the first failure (<0, printed).
 * prestart, createRuntime and poststart stop at the first failure; poststop runs on after one.
 * Each hook takes creds before its execve (NULL: the runtime's own, as zygote-runc's hooks). */
int zrc_hooks_run(const struct zrc_ctx *c, json_object *hooks, const char *kind, json_object *state,
                  const struct ze_hook_creds *creds);
/* poststart (after start let the process go): 0, or the failure (printed; the caller ends the
 * container, as runc does); poststop (after delete): a failure is logged. */
int zrc_hooks_poststart(const struct zrc_ctx *c, const struct zrc_state *st);
void zrc_hooks_poststop(const struct zrc_ctx *c, const struct zrc_state *st);
/* hooks' KIND (createContainer, startContainer) as the container init runs them, with the state
 * (status, and the pid the init fills in) they read: *ret untouched when there are none. The
 * strings point into hooks (or envp: a hook without "env" gets the process's, as runc's). */
int zrc_hooks_for_init(json_object *hooks, const char *kind, const struct zrc_state *st, const char *status,
                       char *const *envp, struct ze_sb_hooks *ret);
void zrc_hooks_for_init_free(struct ze_sb_hooks *h);
/* Prints the init's record of a hook that failed (ZE_STEP_CREATE_HOOK, ZE_STEP_START_HOOK), the
 * hook named by its kind, index and path: an exit status, a signal, its timeout. */
void zrc_hooks_report_failure(const struct zrc_ctx *c, json_object *hooks, const struct ze_status *s);
/* `start` hears of a failed startContainer hook through a fifo in the state directory (create's
 * init has no one else to tell). zrc_hooks_report_fifo: made by create when hooks has
 * startContainer hooks, *ret_fd the init's end (untouched without them). zrc_hooks_open_report:
 * start's end, or -ENOENT without such hooks. zrc_hooks_wait_start: once the byte is written,
 * until the init has exec'd (0) or a hook failed (printed, <0). */
#define ZRC_HOOKS_FIFO "start-hooks.fifo"
int zrc_hooks_report_fifo(const char *dir, json_object *hooks, int *ret_fd);
int zrc_hooks_open_report(const struct zrc_state *st);
int zrc_hooks_wait_start(const struct zrc_ctx *c, const struct zrc_state *st, int fd);
