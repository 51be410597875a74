/* SPDX-License-Identifier: MIT */
/*
 * The task table: every worker from fork to Delete, known by its pidfd; its exit, its waiters,
 * the Events subscribers; the audit lines; its pidfd in systemd's fd store. See task.c.
 */
#pragma once

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "child.h"
#include "tier.h"

#define ZY_MAX_TASKS_PER_UID 1024 /* live + not yet deleted, non-root uid */
#define ZY_MAX_TASKS 16384        /* everyone */
#define ZY_MAX_SUBSCRIBERS 64     /* Events streams */

struct zy_conn;
struct zy_daemon;

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
unsigned zy_tasks_count_uid(struct zy_daemon *d, uid_t uid);
/* A new entry in the table (id NULL: one is made up); -EEXIST when id is taken. */
int zy_task_new(struct zy_daemon *d, const char *id, uid_t owner, struct zy_task **ret);
/* The worker was forked: watch its pidfd and status pipe; c (the Spawn call) gets the reply. */
void zy_task_attach(struct zy_task *t, pid_t pid, int pidfd, int status_fd, int hold_fd, struct zy_conn *c);
/* An entry whose worker never started (fork failed). */
void zy_task_discard(struct zy_task *t);
/* A task of an earlier zygoted (adopt.c): watch its pidfd. */
void zy_task_adopt(struct zy_task *t, int pidfd);
void zy_task_delete(struct zy_task *t);
/* Start of a held task; c gets the reply when the status pipe says exec. -EBUSY when it is not
 * held (or a Start is in progress). */
int zy_task_start(struct zy_task *t, struct zy_conn *c);
int zy_task_add_waiter(struct zy_task *t, struct zy_conn *c);
json_object *zy_task_to_json(const struct zy_task *t);
const char *zy_task_state_to_string(enum zy_task_state s);

/* Events: c receives every event of the tasks it may see. -ENOSPC past ZY_MAX_SUBSCRIBERS. */
int zy_events_subscribe(struct zy_daemon *d, struct zy_conn *c);
/* A connection went away: it waits for nothing and receives no events any more. */
void zy_task_drop_conn(struct zy_daemon *d, struct zy_conn *c);

double zy_now(void);
