/* SPDX-License-Identifier: MIT */
/*
 * The shim's state: one container (containerd starts a shim per container) with its init and its
 * exec'd processes, under one lock. A process is zygoted's task; the shim keeps what containerd
 * asks about and zygoted does not know: the exec id, the stdio paths, the pty, and the exit status
 * once the monitor read it.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "process-io.h"

/* containerd's task states (containerd.v1.types.Status) */
enum zs_status {
        ZS_STATUS_UNKNOWN = 0,
        ZS_STATUS_CREATED = 1,
        ZS_STATUS_RUNNING = 2,
        ZS_STATUS_STOPPED = 3,
        ZS_STATUS_PAUSED = 4,
};

struct zs_process {
        char *exec_id; /* NULL for the init */
        char *task_id; /* zygoted's task id */
        char *stdin_path, *stdout_path, *stderr_path;
        bool terminal;
        pid_t pid;
        enum zs_status status;
        uint32_t exit_status;
        struct timespec exited_at;
        bool deleted; /* gone from the list; freed with the last reference */
        unsigned refs;
        struct zs_stdio io;
        struct zs_process *next;
};

struct zs_oom;

struct zs_container {
        char *id;
        char *bundle;
        bool rootfs_mounted;
        bool paused;
        struct zs_oom *oom;           /* the OOM watch, from the init's Start */
        struct zs_process *processes; /* the init first */
};

/* The lock over everything here, and the condition every state change signals. */
void zs_state_lock(void);
void zs_state_unlock(void);
void zs_state_changed(void);
void zs_state_wait(void);

/* With the lock held: the container, NULL before Create. */
struct zs_container *zs_container_get(void);
/* Takes ownership of id and bundle. -EEXIST when there is one. */
int zs_container_set(char *id, char *bundle);
void zs_container_clear(void);

/* With the lock held: the process (exec_id NULL or "" for the init), NULL when unknown. */
struct zs_process *zs_process_find(const char *id, const char *exec_id);
/* With the lock held: a new process on the list (one reference, the list's). */
int zs_process_add(const char *exec_id, const char *task_id, struct zs_process **ret);
/* With the lock held: takes p off the list and drops the list's reference (nothing when it is off
 * already). */
void zs_process_remove(struct zs_process *p);
void zs_process_ref(struct zs_process *p);
void zs_process_unref(struct zs_process *p);

/* The number of processes on the list. */
unsigned zs_process_count(void);

/* The bundle's file of the exec'd processes' task ids, one a line: "TASK_ID EXEC_ID_IN_HEX". */
#define ZS_EXEC_IDS_FILE "zygote-exec-ids"

/* zygoted's task id for an exec'd process: container.exec when that is a valid id of at most 64
 * characters, else "x" and a hash of both (the same for the same pair). */
int zs_exec_task_id(const char *container, const char *exec_id, char **ret);

/* The line of ZS_EXEC_IDS_FILE for the exec'd process exec_id of container_id (its task id, then the
 * exec id in hex), with its newline, in *ret. */
int zs_exec_ids_line(const char *container_id, const char *exec_id, char **ret);

/* The task id a line of ZS_EXEC_IDS_FILE names (its newline cut) in *ret when it is one of
 * container_id's exec'd processes: the task id zs_exec_task_id() gives for it and the
 * line's exec id; -EINVAL for any other line (a task id alone, of any other task). */
int zs_exec_ids_parse(const char *container_id, const char *line, char **ret);

/* Whether s is a valid task id: [A-Za-z0-9_.-]{1,64}. */
bool zs_task_id_valid(const char *s);
