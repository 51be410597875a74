/* SPDX-License-Identifier: MIT */
/*
 * OCI containers started by zygoted (container.c): CreateContainer forks a container worker that
 * runs zygote-runc's create recipe; the container's init is zygoted's child and a task like any
 * other (Start, Kill, Wait, State, Pids, Delete, Events).
 *
 * Who may: a root caller with every capability, no seccomp filter, no no_new_privs, no LSM label
 * of its own, in zygoted's namespaces and root: the daemon reads the bundle through the caller's
 * fd and acts with root's whole authority, which such a caller has already. Anyone else is
 * refused (PermissionDenied or CallerConfined, with the reason).
 */
#pragma once

struct json_object;
struct zd_call;
struct zd_conn;
struct zd_daemon;

/* CreateContainer(id, bundle, stdin, stdout, stderr, consoleSocket): the fds by their index
 * among the call's. The reply comes when the worker reports. */
int zd_container_create(struct zd_call *call);
/* ExecContainer(container, id, process, stdin, stdout, stderr, consoleSocket): a process in a
 * running container, held until Start; a task of its own. */
int zd_container_exec(struct zd_call *call);
/* The pids in the container's cgroup (an empty array when it has none left). */
struct json_object *zd_container_pids(struct zd_daemon *d, const char *id);
/* Signals every process in the container's cgroup (Kill with all). */
int zd_container_kill_all(struct zd_daemon *d, const char *id, int sig);
/* Delete of a container (container-delete.c): its processes killed, its cgroups and state
 * removed in a child; the reply (taken) goes to c once the child is done, so that nothing of the
 * container is left when the caller hears of it. 0: replied or will reply. */
int zd_container_destroy(struct zd_daemon *d, const char *id, struct zd_conn *c, struct json_object *reply);
void zd_container_deletes_drop_conn(struct zd_daemon *d, struct zd_conn *c);
/* At exit: the deletes still running finish on their own; their callers get no reply. */
void zd_container_deletes_free(struct zd_daemon *d);
/* A caller went away: its CreateContainer still creates the container (as "created"). */
void zd_container_drop_conn(struct zd_daemon *d, struct zd_conn *c);
/* At exit: the workers still running are killed. */
void zd_container_starts_free(struct zd_daemon *d);
