/* SPDX-License-Identifier: MIT */
/*
 * The task table: every worker from fork to Delete, known by its pidfd; its exit, its waiters,
 * the Events subscribers; the audit lines; its pidfd in systemd's fd store. See task.c.
 */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

#include "child.h"
#include "pidref.h"
#include "tier.h"

#define ZD_MAX_TASKS_PER_UID 1024 /* live + not yet deleted, non-root uid */
#define ZD_MAX_TASKS 16384        /* everyone */
/* argv kept for List and State, as JSON text (json-c writes a control byte as six), of all the
 * tasks of one non-root uid: what one user can make the daemon store and send. */
#define ZD_MAX_ARGV_BYTES_PER_UID (1024u * 1024u)
/* A task's JSON apart from its argv, at most (List counts a reply before building it). */
#define ZD_TASK_JSON_MAX_OVERHEAD 640u
#define ZD_LIST_PAGE_BYTES (256u * 1024u) /* one List reply, at most (a task more than that alone) */

struct zd_conn;
struct zd_daemon;

enum zd_task_state {
        ZD_TASK_STARTING, /* forked, waiting for exec (or HELD) on the status pipe */
        ZD_TASK_CREATED,  /* held before exec */
        ZD_TASK_RUNNING,
        ZD_TASK_STOPPED,
};

struct zd_waiter {
        struct zd_conn *conn;
        struct zd_waiter *next;
};

struct zd_task {
        struct zd_daemon *d;
        char *id;
        char *key; /* "OWNER:ID", the table's (task-names.c) */
        char *profile;
        char *exe;
        json_object *argv; /* array of strings */
        size_t argv_bytes; /* zd_task_argv_bytes(argv), counted against its owner */
        enum zd_tier tier;
        enum zd_task_state state;
        uid_t uid;                    /* the caller who owns it */
        uid_t account;                /* whose budgets it counts in (zd_conn_account): uid unless set */
        uid_t run_uid;                /* what it runs as */
        struct zc_pidref pidref;      /* the worker */
        int status_fd;                /* read end, while STARTING/CREATED */
        int hold_fd;                  /* write end, while CREATED */
        int scope_gate;               /* write end of its gate while its scope is made (spawn-scope.c) */
        uint64_t record_id;           /* its eBPF recording under way (record-bpf.h), or 0 */
        json_object *record;          /* what the recording saw, once it exited: its exit replies carry it */
        char *record_out, *record_in; /* a container's io.containers.trace-syscall (container-record.c) */
        ev_io pid_watch;
        ev_io status_watch;
        bool exited;
        int exit_code;            /* valid when exited and !signal */
        int signal;               /* killed by this signal, 0 otherwise */
        struct ze_status failure; /* worker failed before exec */
        /* why the daemon closed the worker's gate without a go (spawn-scope.c), or step 0 */
        struct ze_status gate_failure;
        char *gate_message; /* and in words, for the caller (the manager's or ours), or NULL */
        bool auto_delete;   /* Spawn with "more": forget it once its exit went to the spawner */
        bool in_table;
        /* Out of the table while alive (deleted, a failed spawn, a worker killed at its gate):
         * on the daemon's dying list until its pidfd says it has gone, so that a stop frees it too. */
        struct zd_task *dying_next, **dying_prev;
        bool hold_was_used;
        bool start_requested;
        bool adopted;        /* from the fd store: not our child */
        bool container;      /* an OCI container's init (container.c): its cgroup and state go with it */
        char *fd_name;       /* its pidfd's name in systemd's fd store; NULL when not stored */
        bool status_unknown; /* exited, but the kernel could not tell us how */
        bool awaiting_reap;  /* adopted and exited: its status exists once its reaper reaps it */
        struct zd_conn *spawner;
        double created_at, started_at, exited_at;
        struct zd_conn *pending;   /* Spawn or Start waiting for the status pipe */
        struct zd_waiter *waiters; /* Wait calls */
};

int zd_tasks_init(struct zd_daemon *d);
/* Deleted tasks killed and not yet seen to exit (freed by zd_tasks_free() too). */
unsigned zd_tasks_dying(const struct zd_daemon *d);
void zd_tasks_free(struct zd_daemon *d);
/* A task's key in the table: "OWNER:ID", an id in its owner's namespace (task-names.c says how
 * callers name tasks); its longest form. */
#define ZD_TASK_KEY_MAX (11 + 1 + 64 + 1)
int zd_task_key(char *buf, size_t size, uid_t owner, const char *id);
struct zd_task *zd_task_find_key(struct zd_daemon *d, const char *key);
/* The task owner names id. */
struct zd_task *zd_task_find(struct zd_daemon *d, uid_t owner, const char *id);
/* The task a caller names: an id of its own, or "OWNER:ID" of any owner when any_owner (root),
 * of itself otherwise. NULL: none (the same whether another owner has that id or not). */
struct zd_task *zd_task_lookup(struct zd_daemon *d, uid_t caller, bool any_owner, const char *name);
/* How many tasks count in account, and (ret_argv_bytes, may be NULL) the argv_bytes they hold. */
unsigned zd_tasks_count_account(struct zd_daemon *d, uid_t account, size_t *ret_argv_bytes);
/* How many tasks the table holds (live and not yet deleted). */
unsigned zd_tasks_count(const struct zd_daemon *d);
/* List's reply parameters: one page ("tasks", and "next" naming the last one when more follow)
 * of the tasks uid owns (all: everyone's), in the order of their ids, from the first after
 * "after" (NULL: from the start): as many as fit in ZD_LIST_PAGE_BYTES (counted before the reply
 * is built, at the most a task can take as JSON), at least one. NULL: no memory. */
json_object *zd_tasks_list(struct zd_daemon *d, bool all, uid_t uid, const char *after);
/* How long argv (an array of strings) is as JSON text, at most: what a reply carrying it takes. */
size_t zd_task_argv_bytes(json_object *argv);
/* A new entry in the table (id NULL: one is made up); -EEXIST when id is taken. */
int zd_task_new(struct zd_daemon *d, const char *id, uid_t owner, struct zd_task **ret);
/* A task id as the protocol allows them: [A-Za-z0-9_.-]{1,64}, not starting with '.'. */
static inline bool zd_task_id_ok(const char *id) {
        size_t n = strlen(id);
        if (n == 0 || n > 64)
                return false;
        for (const char *p = id; *p; p++)
                if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || *p == '_' ||
                      *p == '.' || *p == '-'))
                        return false;
        return id[0] != '.';
}

/* The worker was forked: watch its pidfd and status pipe; c (the Spawn call) gets the reply.
 * Takes the worker's handle and the fds. */
void zd_task_attach(struct zd_task *t, struct zc_pidref worker, int status_fd, int hold_fd, struct zd_conn *c);
/* The same for a process already held (a container's init, whose runtime read its HELD): the
 * task is "created" now and c (may be NULL: the caller has gone) gets the reply. */
void zd_task_attach_created(struct zd_task *t, struct zc_pidref init, int status_fd, int hold_fd, struct zd_conn *c);
/* An entry whose worker never started (fork failed). */
void zd_task_discard(struct zd_task *t);
/* A worker no request owns (its spawn failed after the fork): SIGKILLed, reaped when its pidfd
 * says so, never listed. Takes the handle. */
void zd_task_reap_orphan(struct zd_daemon *d, struct zc_pidref worker);
/* The same without the SIGKILL: a child of the daemon's own that ends by itself. */
void zd_task_reap_child(struct zd_daemon *d, struct zc_pidref worker);
/* A task of an earlier zygoted (adopt.c): watch its pidfd. */
void zd_task_adopt(struct zd_task *t, int pidfd);
void zd_task_delete(struct zd_task *t);
/* Start of a held task; c gets the reply when the status pipe says exec. -EBUSY when it is not
 * held (or a Start is in progress). */
/* A recorded task's recording has seen its last thread exit (record-bpf.h's on_done, owner the
 * task): its exit is answered now if it has exited. */
void zd_task_record_done(void *owner);
int zd_task_start(struct zd_task *t, struct zd_conn *c);
int zd_task_add_waiter(struct zd_task *t, struct zd_conn *c);
json_object *zd_task_to_json(const struct zd_task *t);
const char *zd_task_state_to_string(enum zd_task_state s);

/* A connection went away: it waits for nothing and receives no events any more (events.h). */
void zd_task_drop_conn(struct zd_daemon *d, struct zd_conn *c);
