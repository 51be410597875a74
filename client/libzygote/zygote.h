/* SPDX-License-Identifier: MIT */
/*
 * libzygote: the C client of zygoted, the sandbox launcher (protocol: io.zygote.Launcher.varlink).
 *
 * A small blocking library: one connection object per socket, one call in flight per
 * connection, no threads, no logging, no signal handlers. Every function returns 0 (or a
 * documented non-negative value) on success and a negative errno on failure; out-parameters
 * (ret*) are left untouched on failure. Every fd the library creates or receives is
 * O_CLOEXEC. Every struct the library returns has its own free function, and every free
 * function accepts NULL.
 *
 * Example: run /bin/echo in the "default" profile with our stdout, and wait for it.
 *
 *     #include <zygote.h>
 *
 *     zy_conn *c = NULL;
 *     struct zy_spawn_result *sr = NULL;
 *     struct zy_task_info *ti = NULL;
 *     const char *argv[] = { "/bin/echo", "hello", NULL };
 *     const struct zy_fd_map fds[] = { { .fd = 1, .target = 1 } };
 *     struct zy_spawn_opts o = { .argv = argv, .fds = fds, .n_fds = 1 };
 *     int r;
 *
 *     r = zy_connect(NULL, &c);                 // $ZYGOTE_SOCKET or the default path
 *     if (r < 0) ...;                           // e.g. -ENOENT: no daemon there
 *     r = zy_spawn(c, &o, &sr);
 *     if (r == -ECHILD) {                       // the sandbox could not be set up
 *             const char *step; int err;
 *             zy_conn_spawn_failure(c, &step, &err, NULL);
 *     }
 *     r = zy_wait(c, sr->id, &ti);              // blocks until the task exits
 *     printf("exit code %d\n", ti->exit_code);
 *     zy_task_info_free(ti);
 *     zy_spawn_result_free(sr);                 // also closes the worker's pidfd
 *     zy_conn_free(c);
 *
 * Errors of the daemon ("varlink errors") come back as distinct negative errnos; the error's
 * name and parameters stay readable on the connection until the next call
 * (zy_conn_error_name(), zy_conn_error_parameters(), zy_conn_spawn_failure()):
 *
 *     io.zygote.Launcher.NoSuchTask         -ESRCH
 *     io.zygote.Launcher.NoSuchProfile      -ENOENT
 *     io.zygote.Launcher.NoSuchFilter       -ENOENT  (GetFilter by a key that is not cached)
 *     io.zygote.Launcher.PermissionDenied   -EPERM   (and org.varlink.service.PermissionDenied)
 *     io.zygote.Launcher.TaskExists         -EEXIST
 *     io.zygote.Launcher.InvalidState       -EBUSY
 *     io.zygote.Launcher.SpawnFailed        -ECHILD  (step and errno: zy_conn_spawn_failure())
 *     io.zygote.Launcher.CallerConfined     -EACCES  (the caller is confined in a way its task
 *                                                    could not carry; "reason" says how)
 *     io.zygote.Launcher.LimitExceeded      -EAGAIN  when "limit" names a resource in use that
 *                                                    may free up ("tasks", "tasks_per_user",
 *                                                    "connections", "connections_per_user",
 *                                                    "subscribers", "memory",
 *                                                    "compile_time_per_user")
 *                                           -E2BIG   for any other limit (the size of the
 *                                                    request: "message", "fds")
 *     org.varlink.service.InvalidParameter  -EINVAL
 *     org.varlink.service.MethodNotFound    -EOPNOTSUPP (also MethodNotImplemented and
 *                                                    InterfaceNotFound)
 *     org.varlink.service.ExpectedMore      -EBADRQC
 *     any other error name                  -EREMOTEIO
 *
 * Errors of the library or the transport are plain errnos that the table above never uses:
 *     -EMSGSIZE    a request over 64 KiB (not sent), or a reply over the reply limit (dropped;
 *                  the connection stays usable after a single-reply call)
 *     -EBADMSG     a malformed reply, or a reply with more fds than the call expects (its fds
 *                  are closed); the connection is unusable afterwards
 *     -ECONNRESET  the daemon closed the connection; -ENOTCONN for every later call
 *     -EINPROGRESS a call is already in flight on this connection
 *     -ENOMSG      zy_reply_read() with no call in flight
 *
 * Link with -lzygote (pkg-config json-c for the generic call API, which takes json_object).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "zygote-protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- connections ------------------------------------------------------------------------- */

typedef struct zy_conn zy_conn;

/* ZY_MESSAGE_MAX, ZY_FDS_MAX and ZY_SOCKET_SYSTEM come from zygote-protocol.h. */
/* Default limit on the size of one reply; larger replies are dropped (zy_conn_set_reply_limit). */
#define ZY_REPLY_LIMIT_DEFAULT (16U * 1024U * 1024U)

/* The path zy_connect(NULL, ...) uses, malloc'd: $ZYGOTE_SOCKET if set and not empty, else
 * ZY_SOCKET_SYSTEM for root, else $XDG_RUNTIME_DIR/zygote/zygoted.sock (with
 * /run/user/UID when XDG_RUNTIME_DIR is unset). */
int zy_default_socket_path(char **ret);

/* Connects to zygoted. path: a filesystem path, "@name" for an abstract socket, or NULL for
 * zy_default_socket_path(). Returns -ENOENT/-ECONNREFUSED/-EACCES when no daemon listens
 * there, -ENAMETOOLONG when the path does not fit a sockaddr_un. zygoted closes a connection
 * with no call in progress for two minutes (a Wait or an Events stream that waits is a call in
 * progress): a client that keeps one between calls connects again when it finds it closed. */
int zy_connect(const char *path, zy_conn **ret);

/* Wraps a connected AF_UNIX stream socket (e.g. one end of a socketpair). Takes ownership of fd
 * on success only. */
int zy_connect_fd(int fd, zy_conn **ret);

/* Closes the connection (and any fds received but not handed out). Returns NULL. */
zy_conn *zy_conn_free(zy_conn *c);

/* The socket, for poll(): readable when (part of) a reply arrived. Check zy_conn_has_input()
 * first: a reply may already be buffered. Do not read or write it yourself. */
int zy_conn_get_fd(const zy_conn *c);

/* Whether received bytes wait in the library's buffer (then poll() on the fd may not wake). */
bool zy_conn_has_input(const zy_conn *c);

/* Replies longer than limit bytes (JSON text, without the NUL) are read, dropped and reported
 * as -EMSGSIZE. limit 0 restores ZY_REPLY_LIMIT_DEFAULT. */
int zy_conn_set_reply_limit(zy_conn *c, size_t limit);

/* The last call's varlink error: its name (e.g. "io.zygote.Launcher.NoSuchTask") and
 * parameters (borrowed, valid until the next call on c), or NULL when the last call did not
 * fail with a varlink error. */
const char *zy_conn_error_name(const zy_conn *c);
json_object *zy_conn_error_parameters(const zy_conn *c);

/* When the last call failed with SpawnFailed (-ECHILD): the step that failed ("fds", "setsid",
 * "ctty", "capbset", "groups", "gid", "uid", "caps", "chdir", "nnp", "filter", "hold",
 * "exec"), the worker's errno (positive) and the daemon's message. Any ret may be NULL; the
 * strings are borrowed like zy_conn_error_parameters(). -ENODATA when the last call did not
 * fail with SpawnFailed, -EBADMSG when its parameters are malformed. */
int zy_conn_spawn_failure(const zy_conn *c, const char **ret_step, int *ret_errno, const char **ret_message);

/* The negative errno for a varlink error name (and, for LimitExceeded, its "limit"
 * parameter, which may be NULL), following the table at the top of this file. */
int zy_error_to_errno(const char *error_name, const char *limit);

/* ---- the generic call --------------------------------------------------------------------- */

/* One reply. */
struct zy_reply {
        json_object *parameters; /* owned; an empty object when the reply had none */
        int *fds;                /* owned, O_CLOEXEC; take one by setting its slot to -1 */
        size_t n_fds;
        bool continues; /* more replies of the same call follow */
};

/* Closes the fds still >= 0, drops parameters. Returns NULL. */
struct zy_reply *zy_reply_free(struct zy_reply *r);

enum {
        ZY_CALL_MORE = 1 << 0,   /* "more": true; read replies until !continues */
        ZY_CALL_ONEWAY = 1 << 1, /* "oneway": true; no reply at all */
};

/* Sends one call: method (e.g. "io.zygote.Launcher.List"), parameters (borrowed; NULL for
 * none) and fds (borrowed: the library sends duplicates the kernel makes, the caller keeps
 * its own; at most ZY_FDS_MAX). -EMSGSIZE when the message would exceed ZY_MESSAGE_MAX,
 * -EINPROGRESS when the replies of an earlier call are still to be read. */
int zy_call_send(zy_conn *c, const char *method, json_object *parameters, const int *fds, size_t n_fds, unsigned flags);

/* Same, with the parameters as JSON text (an object, or NULL/"" for none). -EINVAL when the
 * text is not one JSON object. */
int zy_call_send_json(zy_conn *c, const char *method, const char *parameters_json, const int *fds, size_t n_fds,
                      unsigned flags);

/* Reads the next reply of the call in flight, blocking. max_fds: how many fds this reply may
 * carry (more is -EBADMSG). A varlink error reply ends the call and returns its errno. The
 * call stays in flight while the returned reply has continues set. */
int zy_reply_read(zy_conn *c, size_t max_fds, struct zy_reply **ret);

/* zy_call_send() + zy_reply_read() for a call with one reply. */
int zy_call(zy_conn *c, const char *method, json_object *parameters, const int *fds, size_t n_fds, size_t max_reply_fds,
            struct zy_reply **ret);

/* ---- typed helpers: tasks ----------------------------------------------------------------- */

/* One fd of the caller that the new program gets as number target. The same fd may be
 * listed for several targets (it is sent once). */
struct zy_fd_map {
        int fd;
        int target;
};

struct zy_spawn_opts {
        const char *const *argv;     /* required, NULL-terminated; argv[0] without '/' is
                                        * searched in env's PATH */
        const char *const *env;      /* NULL-terminated "KEY=VALUE" list; NULL: empty */
        const char *cwd;             /* NULL: the daemon's default, "/" */
        const char *profile;         /* NULL: "default" */
        const struct zy_fd_map *fds; /* NULL/0: 0, 1 and 2 on /dev/null */
        size_t n_fds;
        const char *user; /* root callers only; name or number */
        const char *group;
        const char *const *drop_caps; /* NULL-terminated, e.g. "CAP_NET_RAW" */
        const char *id;               /* NULL: chosen by the daemon */
        bool hold;                    /* stop before execve until zy_start() */
        bool terminal;                /* fd 0 becomes the controlling terminal */
        /* outlive the caller: under a service manager the task gets a scope unit of its own
         * beside the caller's unit (same slice), so that the end of the caller's unit (a
         * service, a session) does not kill it; not with hold */
        bool outlive;
        /* record its system calls with zygoted's eBPF tracer: the exit's reply carries them
         * ("record", see the interface's Wait); -EOPNOTSUPP when zygoted has no tracer
         * (zy_conn_error_parameters()' "reason" says why) */
        bool record;
};

struct zy_spawn_result {
        char *id;
        pid_t pid;
        char *tier; /* "clone", "inherit" or "load" */
        int pidfd;  /* the worker's pidfd, O_CLOEXEC; -1 if the daemon sent none. Owned:
                      * set to -1 to keep it past zy_spawn_result_free() */
};

/* Starts a task. -ECHILD with zy_conn_spawn_failure() when the worker failed before execve. */
int zy_spawn(zy_conn *c, const struct zy_spawn_opts *opts, struct zy_spawn_result **ret);

/* The same with "more": one call answers at exec (or at hold) and again at the exit, which
 * zy_wait_read() then reads (the call stays in flight until then: the connection takes no
 * other call meanwhile); the daemon forgets the task once that exit went out, so that no Wait
 * and no Delete are needed. A task whose caller leaves before its exit stays until Delete. */
int zy_spawn_more(zy_conn *c, const struct zy_spawn_opts *opts, struct zy_spawn_result **ret);
struct zy_spawn_result *zy_spawn_result_free(struct zy_spawn_result *r);

/* Lets a held task (opts.hold) go on to execve. */
int zy_start(zy_conn *c, const char *id);

/* Sends signal (1..64; 0 means the daemon's default, SIGTERM) to the task, or with all to every
 * process in its session. */
int zy_kill(zy_conn *c, const char *id, int signal, bool all);

enum zy_task_state {
        ZY_TASK_UNKNOWN = 0, /* a state this library version does not know */
        ZY_TASK_CREATED,     /* held before execve */
        ZY_TASK_RUNNING,
        ZY_TASK_STOPPED,
};

struct zy_task_info {
        char *id;
        char *profile;
        enum zy_task_state state;
        char *state_name; /* as the daemon sent it */
        pid_t pid;
        uid_t uid;
        char *tier;
        char **argv;       /* NULL-terminated */
        int exit_code;     /* -1 unless the task exited */
        int signal;        /* 0 unless a signal killed the task */
        double created_at; /* seconds since the epoch; started_at/exited_at are 0 when unset */
        double started_at;
        double exited_at;
        /* "OWNER:ID": task ids are per owner, and this is how root names another owner's task
         * (NULL from a zygoted that sends no name) */
        char *name;
};
struct zy_task_info *zy_task_info_free(struct zy_task_info *t);

/* Parses a Task object of the protocol (e.g. from a zy_reply of Wait called with
 * ZY_CALL_MORE). -EBADMSG when a field is missing or mistyped. */
int zy_task_info_from_json(json_object *task, struct zy_task_info **ret);

/* The exit status a shell would report: exit_code, 128 + signal, or -1 while not stopped. */
int zy_task_info_status(const struct zy_task_info *t);

/* Blocks until the task has exited (at once if it has) and returns its final state. */
int zy_wait(zy_conn *c, const char *id, struct zy_task_info **ret);

/* The same in two halves, for callers that poll() zy_conn_get_fd() meanwhile (e.g. to forward
 * signals): zy_wait_send() sends the call, zy_wait_read() blocks for the reply. */
int zy_wait_send(zy_conn *c, const char *id);
int zy_wait_read(zy_conn *c, struct zy_task_info **ret);

int zy_state(zy_conn *c, const char *id, struct zy_task_info **ret);

/* The pids of the processes in the task's session; *ret_pids is malloc'd. */
int zy_pids(zy_conn *c, const char *id, pid_t **ret_pids, size_t *ret_n);

struct zy_task_list {
        struct zy_task_info **tasks;
        size_t n_tasks;
};
struct zy_task_list *zy_task_list_free(struct zy_task_list *l);

/* The caller's tasks (root: everyone's), in the order of their ids. The daemon answers a page at
 * a time (about 256 KiB each); this follows every page, so the list is whole. */
int zy_list(zy_conn *c, struct zy_task_list **ret);

/* Forgets a stopped task (kills and forgets a held one); ret (may be NULL) gets its last state.
 * -EBUSY for a running task. */
int zy_delete(zy_conn *c, const char *id, struct zy_task_info **ret);

/* Closes the daemon's copies of the task's stdio. */
int zy_close_io(zy_conn *c, const char *id);

/* ---- typed helpers: OCI containers ---------------------------------------------------------- */

/* A container started by zygoted: its init is a task like any other (zy_start, zy_kill with all:
 * every process in the container, zy_wait, zy_state, zy_pids, zy_delete, events), whose id is
 * the container's. Root callers with every capability, no seccomp filter of their own and the
 * daemon's namespaces only (the daemon acts with the caller's full authority): anyone else gets
 * -EPERM or -EACCES with the reason on the connection. */
struct zy_container_opts {
        const char *id;     /* the container's id, [A-Za-z0-9_.-]{1,64}: its task's id */
        const char *bundle; /* the bundle directory (config.json, and rootfs unless mounts
                               * replace it); opened here and passed to the daemon as an fd */
        int stdio[3];       /* the init's fds 0, 1 and 2; -1: /dev/null (ignored with a console) */
        int console_socket; /* -1, or a connected AF_UNIX socket: with process.terminal, the init
                               * sends its pty's master there (SCM_RIGHTS), as runc's
                               * --console-socket does */
};

/* Creates the container, held before its process's execve ("created") until zy_start(). On
 * failure -ECHILD with zy_conn_spawn_failure(): step, errno and the runtime's message. */
int zy_container_create(zy_conn *c, const struct zy_container_opts *opts, struct zy_spawn_result **ret);

/* A process in a running container (runc exec): its namespaces, cgroup, filter and capability
 * bounds, with its own process object. A task of its own, held until zy_start(). */
struct zy_exec_opts {
        const char *container;    /* the container's task id */
        const char *id;           /* the new process's task id, [A-Za-z0-9_.-]{1,64} */
        const char *process_json; /* an OCI "process" object, as in config.json */
        int stdio[3];             /* as in zy_container_opts */
        int console_socket;
};

int zy_container_exec(zy_conn *c, const struct zy_exec_opts *opts, struct zy_spawn_result **ret);

/* ---- typed helpers: events ------------------------------------------------------------------ */

enum zy_event_type {
        ZY_EVENT_UNKNOWN = 0,
        ZY_EVENT_CREATE,
        ZY_EVENT_START,
        ZY_EVENT_EXIT,
        ZY_EVENT_DELETE,
};

struct zy_event {
        enum zy_event_type type;
        char *type_name;
        char *id;
        double time;
        pid_t pid;     /* 0 when unset */
        int exit_code; /* -1 when unset */
        int signal;    /* 0 when unset */
};
struct zy_event *zy_event_free(struct zy_event *e);

/* Subscribes c to the event stream. The stream occupies the connection until it ends (the
 * daemon ends it, or zy_conn_free()): use another connection for other calls. */
int zy_events_subscribe(zy_conn *c);

/* The next event, blocking. 0 and *ret = NULL when the daemon ended the stream. */
int zy_events_next(zy_conn *c, struct zy_event **ret);

/* Subscribes and calls cb for each event until cb returns non-zero or the stream ends.
 * Returns cb's negative return, 0 when cb returned a positive value or the stream ended. The
 * event is only borrowed by cb. */
typedef int (*zy_event_cb)(const struct zy_event *e, void *userdata);
int zy_events(zy_conn *c, zy_event_cb cb, void *userdata);

/* ---- typed helpers: profiles and the daemon -------------------------------------------------- */

struct zy_profile_info {
        char *name;
        char *path;
        char *tier; /* "clone", "inherit" or "load" */
        char *tier_reason;
        unsigned bpf_instructions;
        unsigned longest_path;
        char *hash;
        char **capabilities; /* NULL-terminated */
        bool no_new_privileges;
        pid_t reference_pid; /* 0 when there is no reference process */
        unsigned skipped_syscalls;
};

struct zy_profile_list {
        struct zy_profile_info **profiles;
        size_t n_profiles;
        char **failed_files; /* NULL-terminated "PATH: why" of the files zygoted refused, or NULL */
};
struct zy_profile_list *zy_profile_list_free(struct zy_profile_list *l);

int zy_list_profiles(zy_conn *c, struct zy_profile_list **ret);

struct zy_daemon_status {
        char *version;
        bool clone_filter;      /* the kernel has SECCOMP_CLONE_FILTER */
        bool capbset_drop_mask; /* the kernel has PR_CAPBSET_DROP_MASK */
        struct zy_profile_list *profiles;
        unsigned tasks;
        unsigned connections;
        bool own_filter;     /* zygoted runs under a seccomp filter of its own */
        char **failed_files; /* as zy_profile_list's */
};
struct zy_daemon_status *zy_daemon_status_free(struct zy_daemon_status *s);

int zy_get_status(zy_conn *c, struct zy_daemon_status **ret);

struct zy_reload_result {
        char **loaded; /* NULL-terminated profile names (or files) */
        char **failed;
};
struct zy_reload_result *zy_reload_result_free(struct zy_reload_result *r);

/* Root only. */
int zy_reload_profiles(zy_conn *c, struct zy_reload_result **ret);

/* ---- typed helpers: compiled seccomp programs ----------------------------------------------- */

/* A compiled seccomp program from GetFilter, ready for seccomp(SECCOMP_SET_MODE_FILTER, flags,
 * &(struct sock_fprog){ n_instructions, program }). */
struct zy_filter {
        void *program; /* n_instructions struct sock_filter (8 bytes each), malloc'd */
        size_t n_instructions;
        unsigned flags; /* SECCOMP_FILTER_FLAG_* */
        char *key;      /* SHA-256 of the seccomp object's plain serialization */
        char *hash;     /* SHA-256 of the program */
        bool cached;    /* the daemon had compiled it before */
        int memfd;      /* the sealed memfd it came in, O_CLOEXEC; owned (set to -1 to keep) */
};
struct zy_filter *zy_filter_free(struct zy_filter *f);

/* The program of a loaded profile (profile) or of an OCI `linux.seccomp` object (seccomp,
 * borrowed; sent as json-c's plain serialization): exactly one of the two (-EINVAL otherwise).
 * The memfd must carry F_SEAL_WRITE, F_SEAL_SHRINK and F_SEAL_GROW and hold exactly the
 * announced instructions, else -EBADMSG: what was checked cannot change afterwards. Bad content
 * is -EINVAL with the field named in zy_conn_error_parameters() ("parameter", "message"). */
int zy_get_filter(zy_conn *c, const char *profile, json_object *seccomp, struct zy_filter **ret);
/* The same in two halves, for a caller that waits with a timeout (poll() on zy_conn_get_fd()
 * unless zy_conn_has_input()) and gives up by freeing the connection. */
int zy_get_filter_send(zy_conn *c, const char *profile, json_object *seccomp);
int zy_get_filter_read(zy_conn *c, struct zy_filter **ret);
/* GetFilter by key alone (the SHA-256, lower-case hex, of json-c's plain serialization of the
 * object, as zy_filter.key gives it): a program compiled before; -ENOENT (NoSuchFilter) when it
 * is not cached, and then the object itself is to be sent. Read with zy_get_filter_read(). */
int zy_get_filter_key_send(zy_conn *c, const char *key);

/* Frees a NULL-terminated string array. Returns NULL. */
char **zy_strv_free(char **l);

#ifdef __cplusplus
}
#endif
