/* SPDX-License-Identifier: MIT */
/*
 * zygoted's shared state. One process, one thread, one libev loop; every file below works on
 * the struct zy_daemon that main.c owns:
 *
 *   main.c      options, start-up, signals, shutdown
 *   server.c    listening socket, connections, NUL-framed messages, fds, limits
 *   methods.c   the dispatch table: every varlink method with its parameter checks
 *   spawn.c     request + caller + profile -> struct zy_plan -> worker (all tiers)
 *   task.c      the task table: pidfd watchers, exit status, waiters, events
 *   registry.c  profiles, their reference processes and tiers, reloads, restarts
 *   log.c       logging to the journal (structured) or stderr
 */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "zygote-protocol.h"
#include "child.h"
#include "probe.h"
#include "profile.h"
#include "reference.h"

/* Hard limits on what a client can make the daemon hold (docs/SECURITY.md). */
#define ZY_MAX_ARGV 4096                    /* argv entries */
#define ZY_MAX_ENV 4096                     /* env entries */
#define ZY_MAX_CONNECTIONS 1024             /* all callers */
#define ZY_MAX_CONNECTIONS_PER_UID 128      /* one non-root uid */
#define ZY_MAX_TASKS_PER_UID 1024           /* live + not yet deleted, non-root uid */
#define ZY_MAX_TASKS 16384                  /* everyone */
#define ZY_MAX_OUTPUT (4u * 1024u * 1024u)  /* unsent replies before a client is dropped */
#define ZY_PARTIAL_TIMEOUT 10.0             /* seconds a partial message may sit idle */

enum zy_tier {
        ZY_TIER_AUTO = 0,
        ZY_TIER_CLONE,
        ZY_TIER_INHERIT,
        ZY_TIER_LOAD,
};
const char *zy_tier_to_string(enum zy_tier t);
int zy_tier_from_string(const char *s, enum zy_tier *ret);

struct zy_daemon;
struct zy_conn;
struct zy_task;

/* ---- registry.c ---------------------------------------------------------------------------- */

struct zy_entry {
        struct zy_daemon *d;
        struct zy_profile *profile;
        struct zy_reference ref;
        bool ref_up;
        enum zy_tier tier;       /* what spawns use now */
        enum zy_tier best_tier;  /* what spawns use while the reference is up */
        char reason[256];        /* why this tier */
        ev_io ref_watch;         /* reference pidfd: its death */
        ev_timer restart;        /* backoff restart */
        double backoff;
        double ref_started_at;
        unsigned restarts;
};

int zy_registry_load(struct zy_daemon *d);   /* start-up: fatal errors only when nothing loads */
int zy_registry_reload(struct zy_daemon *d, json_object **ret_loaded, json_object **ret_failed);
void zy_registry_free(struct zy_daemon *d);
struct zy_entry *zy_registry_find(struct zy_daemon *d, const char *name);
json_object *zy_entry_to_json(const struct zy_entry *e);

/* ---- task.c -------------------------------------------------------------------------------- */

enum zy_task_state {
        ZY_TASK_STARTING, /* forked, waiting for exec (or HELD) on the status pipe */
        ZY_TASK_CREATED,  /* held before exec */
        ZY_TASK_RUNNING,
        ZY_TASK_STOPPED,
};

struct zy_waiter {
        struct zy_conn *conn;
        struct zy_waiter *next;
};

struct zy_task {
        struct zy_daemon *d;
        char *id;
        char *profile;
        char *exe;
        json_object *argv; /* array of strings */
        enum zy_tier tier;
        enum zy_task_state state;
        uid_t uid;        /* the caller who owns it */
        uid_t run_uid;    /* what it runs as */
        pid_t pid;
        int pidfd;
        int status_fd;    /* read end, while STARTING/CREATED */
        int hold_fd;      /* write end, while CREATED */
        ev_io pid_watch;
        ev_io status_watch;
        bool exited;
        int exit_code;    /* valid when exited and !signal */
        int signal;       /* killed by this signal, 0 otherwise */
        struct zy_status failure; /* worker failed before exec */
        bool auto_delete;  /* Spawn with "more": forget it once its exit went to the spawner */
        bool in_table;
        bool hold_was_used;
        bool start_requested;
        bool adopted;      /* from the fd store: not our child */
        char *fd_name;     /* its pidfd's name in systemd's fd store; NULL when not stored */
        bool status_unknown; /* exited, but the kernel could not tell us how */
        bool awaiting_reap;  /* adopted and exited: its status exists once its reaper reaps it */
        struct zy_conn *spawner;
        double created_at, started_at, exited_at;
        struct zy_conn *pending;    /* Spawn or Start waiting for the status pipe */
        struct zy_waiter *waiters;  /* Wait calls */
};

int zy_tasks_init(struct zy_daemon *d);
void zy_tasks_free(struct zy_daemon *d);
struct zy_task *zy_task_find(struct zy_daemon *d, const char *id);
int zy_task_new(struct zy_daemon *d, const char *id, uid_t owner, struct zy_task **ret);
void zy_task_attach(struct zy_task *t, pid_t pid, int pidfd, int status_fd, int hold_fd);
void zy_task_delete(struct zy_task *t);
void zy_task_discard(struct zy_task *t);
int zy_task_start(struct zy_task *t, struct zy_conn *c);
int zy_task_add_waiter(struct zy_task *t, struct zy_conn *c);
void zy_task_drop_conn(struct zy_daemon *d, struct zy_conn *c); /* a connection went away */
json_object *zy_task_to_json(const struct zy_task *t);
const char *zy_task_state_to_string(enum zy_task_state s);
unsigned zy_tasks_count_uid(struct zy_daemon *d, uid_t uid);
void zy_event_emit(struct zy_daemon *d, const char *type, const struct zy_task *t);
double zy_now(void);

void zy_task_adopt(struct zy_task *t, int pidfd);

/* ---- sd.c: systemd ------------------------------------------------------------------------- */

int zy_sd_listen(struct zy_daemon *d);  /* > 0: fds were passed (listen_fd set if a socket) */
int zy_sd_adopt(struct zy_daemon *d);   /* tasks and references from the fd store */
void zy_sd_ready(struct zy_daemon *d);
void zy_sd_status(struct zy_daemon *d);
void zy_sd_stopping(struct zy_daemon *d);
void zy_sd_reloading(struct zy_daemon *d, bool done);
void zy_sd_store_task(struct zy_task *t);
void zy_sd_forget_task(struct zy_task *t);
void zy_sd_store_reference(pid_t pid, int pidfd);
void zy_sd_forget_reference(pid_t pid);
void zy_sd_free(struct zy_daemon *d);
/* Exit status of a process that is not our child (PIDFD_INFO_EXIT, Linux 6.15+): 0; -ENODATA
 * while it runs or is an unreaped zombie; another negative errno when the kernel cannot tell. */
int zy_pidfd_exit_status(int pidfd, int *ret_code, int *ret_signal);

/* ---- spawn.c ------------------------------------------------------------------------------- */

/* Parses and checks Spawn's parameters, builds the plan and starts the worker. On success the
 * reply is sent later, from task.c, when the status pipe says exec (or HELD). */
struct zy_call;
int zy_spawn(struct zy_call *call);
/* Test seam (tests/fuzz only; NULL in zygoted): called instead of forking a worker in the clone
 * and load tiers, with the finished plan. Returns 0 with the pid and a pollable fd that stands
 * for its pidfd (taken), or a negative errno. */
extern int (*zy_spawn_fork_hook)(const struct zy_plan *plan, pid_t *ret_pid, int *ret_pidfd);

/* ---- server.c ------------------------------------------------------------------------------ */

struct zy_conn {
        struct zy_daemon *d;
        struct zy_conn *prev, *next;
        int fd;
        ev_io io;
        ev_timer partial;
        ev_idle kick;     /* process buffered calls after an asynchronous reply */
        struct ucred cred;
        gid_t *groups;
        size_t n_groups;
        char *in;
        size_t in_len, in_size;
        int in_fds[ZY_FDS_MAX];
        size_t n_in_fds;
        struct zy_out *out_head, *out_tail;
        size_t out_bytes;
        bool busy;        /* a call is waiting for its (last) reply */
        bool more;        /* the current call asked for more replies */
        bool streaming;   /* an Events subscription */
        bool closing;     /* close once the output is flushed */
        bool dead;
        bool processing;  /* inside conn_process() */
        struct zy_task *task; /* the task the current call waits on */
        unsigned refs;
};

int zy_server_listen(struct zy_daemon *d);
/* Test seam (tests/fuzz): fd, a connected non-blocking AF_UNIX stream socket, becomes a
 * connection of the caller cred with these supplementary groups (copied), as if accepted; no
 * limit is checked. Takes fd on success. */
int zy_server_add_conn(struct zy_daemon *d, int fd, const struct ucred *cred, const gid_t *groups, size_t n_groups);
void zy_server_stop(struct zy_daemon *d);
/* Replies to the current call. With continues=true the call stays open. fd (or -EBADF) is sent
 * as SCM_RIGHTS and closed here. */
void zy_reply(struct zy_conn *c, json_object *params, bool continues, int fd);
void zy_reply_error(struct zy_conn *c, const char *error, json_object *params);
void zy_reply_errorf(struct zy_conn *c, const char *error, const char *key, const char *value);
void zy_reply_invalid(struct zy_conn *c, const char *parameter);
bool zy_conn_is_root(const struct zy_conn *c);

/* ---- methods.c ----------------------------------------------------------------------------- */

void zy_dispatch(struct zy_conn *c, json_object *msg, int *fds, size_t n_fds);
extern const char zy_interface_description[];

/* ---- log.c --------------------------------------------------------------------------------- */

void zy_log_open(void);
void zy_log(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void zy_log_task(int priority, const struct zy_task *t, const char *what);

/* ---- the daemon ---------------------------------------------------------------------------- */

struct zy_daemon {
        struct ev_loop *loop;
        const char *socket_path;
        bool socket_activated;
        char **profile_dirs;
        size_t n_profile_dirs;
        enum zy_tier forced_tier;
        char helper[4096];

        bool privileged;  /* running as root: workers switch to the callers' ids */
        uint64_t nofile_soft; /* RLIMIT_NOFILE soft limit before we raised it (0: unchanged) */
        uid_t uid;
        gid_t gid;
        struct zy_features features;

        struct zy_entry **entries;
        size_t n_entries;

        struct lh_table *tasks;
        unsigned long next_task;
        unsigned n_tasks;

        int listen_fd;
        ev_io listen_watch;
        struct zy_conn *conns;
        unsigned n_conns;
        struct zy_conn *subscribers[64]; /* Events streams */
        size_t n_subscribers;

        int *activation_fds;     /* from LISTEN_FDS, until adopted */
        char **activation_names;
        size_t n_activation;
        ev_timer watchdog;
        ev_timer status_timer;

        ev_signal sig_term, sig_int, sig_hup;
        bool stopping;
        unsigned long spawned, failed;
};
