/* SPDX-License-Identifier: MIT */
/*
 * The dispatch table: every method the daemon answers, with who may call it. A method checks its
 * parameters through a table (json-dispatch.h) and replies, now or later from task.c, or fails
 * with an error that the dispatcher answers (call.h); whatever a caller sends, it gets an error
 * reply and the daemon goes on serving everyone else.
 *
 * Tasks are private to the uid that started them (root sees all): another caller asking about
 * one gets NoSuchTask, exactly as if it did not exist.
 */
#include <signal.h>
#include <syslog.h>

#include "caller.h"
#include "call.h"
#include "container.h"
#include "container-record.h"
#include "daemon.h"
#include "events.h"
#include "getfilter.h"
#include "methods.h"
#include "pidfd-util.h"
#include "refused.h"
#include "registry.h"
#include "server.h"
#include "session.h"
#include "spawner.h"
#include "task.h"
#include "util.h"

enum {
        M_ROOT = 1u << 0,         /* root only */
        M_FDS = 1u << 1,          /* may come with fds */
        M_TASK = 1u << 2,         /* its one parameter is "id": the handler gets the caller's task */
        M_NO_PARAMS = 1u << 3,    /* takes no parameters */
        M_READS_CALLER = 1u << 4, /* reads the caller's process itself, and sets who acts (spawn-identity.c) */
};

/* t: the task of an M_TASK method, NULL for the others. */
typedef int (*method_fn)(struct zd_call *call, struct zd_task *t);

struct method {
        const char *name;
        method_fn fn;
        unsigned flags;
};

/* ---- parameters --------------------------------------------------------------------------- */

struct id_param {
        const char *id;
};

static const struct zc_json_field id_fields[] = {
        { .name = "id", .type = ZC_JSON_STRING, .offset = offsetof(struct id_param, id), .flags = ZC_JSON_MANDATORY },
        {},
};

static const struct zc_json_field no_fields[] = {
        {},
};

static bool visible(const struct zd_conn *c, const struct zd_task *t) {
        return zd_conn_is_root(c) || t->uid == zd_conn_cred(c)->uid;
}

/* The task the caller names: its own id, or root's "OWNER:ID" of anyone's (task-names.c). */
static struct zd_task *find(struct zd_call *call, const char *name) {
        return zd_task_lookup(call->d, zd_conn_cred(call->conn)->uid, zd_conn_is_root(call->conn), name);
}

static int no_such_task(struct zd_call *call, const char *id) {
        return zd_call_failf(call, -ENOENT, ZY_ERROR_NO_SUCH_TASK, "id", id);
}

/* The caller's task named by params.id (the only parameter), or NoSuchTask. */
static int get_task(struct zd_call *call, struct zd_task **ret) {
        struct id_param p = {};
        int r = zd_call_dispatch(call, id_fields, &p);
        if (r < 0)
                return r;
        struct zd_task *t = find(call, p.id);
        if (!t || !visible(call->conn, t))
                return no_such_task(call, p.id);
        *ret = t;
        return 0;
}

static int invalid_state(struct zd_call *call, const struct zd_task *t) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "id", json_object_new_string(t->id));
        json_object_object_add(p, "state", json_object_new_string(zd_task_state_to_string(t->state)));
        return zd_call_fail(call, -EBUSY, ZY_ERROR_INVALID_STATE, p);
}

/* The call's (last) reply. */
static int reply(struct zd_call *call, json_object *params) {
        zd_reply(call->conn, params, false, -EBADF);
        return 0;
}

static json_object *with_task(const struct zd_task *t) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "task", zd_task_to_json(t));
        return p;
}

static json_object *with_value(const char *key, json_object *v) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, key, v);
        return p;
}

/* ---- methods ------------------------------------------------------------------------------ */

static int m_spawn(struct zd_call *call, struct zd_task *t) {
        return zd_spawn(call);
}

static int m_create_container(struct zd_call *call, struct zd_task *t) {
        return zd_container_create(call);
}

static int m_exec_container(struct zd_call *call, struct zd_task *t) {
        return zd_container_exec(call);
}

static int m_start(struct zd_call *call, struct zd_task *t) {
        int r = zd_task_start(t, call->conn);
        if (r == -EBUSY)
                return invalid_state(call, t);
        if (r < 0)
                return zd_call_failf(call, r, ZY_ERROR_INVALID_STATE, "id", t->id);
        return 0; /* the reply comes when the status pipe says exec */
}

struct kill_param {
        const char *id;
        int64_t signal;
        bool all;
};

/* SIGRTMAX is not a constant: the range is checked here. */
static int check_signal(const char *name, json_object *v, void *ret, void *userdata) {
        int64_t sig = *(int64_t *) ret;
        return sig >= 1 && sig <= SIGRTMAX ? 0 : -ERANGE;
}

static const struct zc_json_field kill_fields[] = {
        { .name = "id", .type = ZC_JSON_STRING, .offset = offsetof(struct kill_param, id), .flags = ZC_JSON_MANDATORY },
        { .name = "signal",
          .type = ZC_JSON_INT64,
          .offset = offsetof(struct kill_param, signal),
          .flags = ZC_JSON_NULLABLE,
          .callback = check_signal },
        { .name = "all", .type = ZC_JSON_BOOL, .offset = offsetof(struct kill_param, all), .flags = ZC_JSON_NULLABLE },
        {},
};

static int m_kill(struct zd_call *call, struct zd_task *t) {
        struct kill_param p = { .signal = SIGTERM };
        int r = zd_call_dispatch(call, kill_fields, &p);
        if (r < 0)
                return r;
        t = find(call, p.id);
        if (!t || !visible(call->conn, t))
                return no_such_task(call, p.id);
        if (t->exited || t->state == ZD_TASK_STOPPED)
                return invalid_state(call, t);
        /* The pidfd names exactly this process, never a reused pid. The rest of the session
         * (the worker is a session leader; Pids lists the same set) is found through /proc and
         * each member signalled through a pidfd of its own (kill_pid). Only while the leader
         * is not reaped, so that the session id itself cannot have been reused. */
        /* The leader first: signalled after its children, a shell waiting for them would exit
         * on its own before the signal reached it. */
        r = zc_pidref_kill(&t->pidref, (int) p.signal);
        if (r == -ESRCH)
                r = 0;
        if (p.all) {
                int k = t->container ? zd_container_kill_all(call->d, t->id, (int) p.signal)
                                     : zd_session_kill(t->pidref.pid, (int) p.signal);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (r < 0)
                return r; /* PermissionDenied, with the errno's text */
        return reply(call, NULL);
}

static int m_wait(struct zd_call *call, struct zd_task *t) {
        if (t->exited && t->state == ZD_TASK_STOPPED)
                return reply(call, with_task(t));
        int r = zd_task_add_waiter(t, call->conn);
        if (r < 0)
                return zd_call_failf(call, r, ZY_ERROR_LIMIT_EXCEEDED, "limit", "memory");
        if (zd_conn_more(call->conn))
                zd_reply(call->conn, with_task(t), true, -EBADF);
        return 0;
}

static int m_state(struct zd_call *call, struct zd_task *t) {
        return reply(call, with_task(t));
}

static int m_pids(struct zd_call *call, struct zd_task *t) {
        json_object *pids = t->container ? zd_container_pids(call->d, t->id)
                            : t->exited  ? json_object_new_array()
                                         : zd_session_pids(t->pidref.pid);
        return reply(call, with_value("pids", pids));
}

/* zygoted keeps no copy of a task's stdio (its copies are closed right after the fork), so
 * there is nothing for it to close: the caller holds the other ends. Checked, then answered. */
static int m_close_io(struct zd_call *call, struct zd_task *t) {
        return reply(call, NULL);
}

static const struct zc_json_field list_fields[] = {
        { .name = "after", .type = ZC_JSON_STRING, .offset = offsetof(struct id_param, id), .flags = ZC_JSON_NULLABLE },
        {},
};

/* One page of the caller's tasks (root: everyone's): task.c's zd_tasks_list(). So a reply stays
 * small whatever root holds, and no other caller waits behind one List. */
static int m_list(struct zd_call *call, struct zd_task *t) {
        struct id_param p = {};
        int r = zd_call_dispatch(call, list_fields, &p);
        if (r < 0)
                return r;
        json_object *params = zd_tasks_list(call->d, zd_conn_is_root(call->conn), zd_conn_cred(call->conn)->uid, p.id);
        if (!params)
                return -ENOMEM;
        return reply(call, params);
}

static int m_delete(struct zd_call *call, struct zd_task *t) {
        if (t->state == ZD_TASK_RUNNING || t->state == ZD_TASK_STARTING)
                return invalid_state(call, t);
        json_object *p = with_task(t);
        _cleanup_free_ char *id = t->container ? strdup(t->id) : NULL;
        zd_container_record_write(call->d, t); /* io.containers.trace-syscall's file */
        zd_task_delete(t);
        if (id)
                return zd_container_destroy(call->d, id, call->conn, p); /* replies once it is gone */
        return reply(call, p);
}

static int m_events(struct zd_call *call, struct zd_task *t) {
        struct zd_daemon *d = call->d;
        if (!zd_conn_more(call->conn))
                return zd_call_invalid(call, "more");
        int r = zd_events_subscribe(&d->events, call->conn);
        if (r == -EDQUOT)
                return zd_call_limit(call, "subscribers_per_user", ZD_MAX_SUBSCRIBERS_PER_UID);
        if (r < 0)
                return zd_call_limit(call, "subscribers", ZD_MAX_SUBSCRIBERS);
        return 0; /* no reply now: events arrive as they happen */
}

static json_object *profiles_to_json(struct zd_daemon *d) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < d->n_entries; i++)
                json_object_array_add(arr, zd_entry_to_json(d->entries[i]));
        return arr;
}

static int m_list_profiles(struct zd_call *call, struct zd_task *t) {
        json_object *p = with_value("profiles", profiles_to_json(call->d));

        zd_registry_add_failures(call->d, p);
        return reply(call, p);
}

static int m_reload(struct zd_call *call, struct zd_task *t) {
        json_object *loaded, *failed;
        int r = zd_registry_reload(call->d, &loaded, &failed);
        if (r < 0)
                return r; /* PermissionDenied, with the errno's text */
        json_object *p = with_value("loaded", loaded);
        json_object_object_add(p, "failed", failed);
        return reply(call, p);
}

static int m_get_filter(struct zd_call *call, struct zd_task *t) {
        return zd_get_filter(call);
}

static int m_get_status(struct zd_call *call, struct zd_task *t) {
        struct zd_daemon *d = call->d;
        json_object *p = json_object_new_object(), *f = json_object_new_object();
        json_object_object_add(p, "version", json_object_new_string(ZYGOTE_VERSION));
        json_object_object_add(f, "clone_filter", json_object_new_boolean(d->features.clone_filter));
        json_object_object_add(f, "capbset_drop_mask", json_object_new_boolean(d->features.capbset_drop_mask));
        json_object_object_add(p, "features", f);
        json_object_object_add(p, "profiles", profiles_to_json(d));
        zd_registry_add_failures(d, p);
        json_object_object_add(p, "tasks", json_object_new_int((int) zd_tasks_count(d)));
        json_object_object_add(p, "connections", json_object_new_int((int) zd_server_n_conns(&d->server)));
        json_object_object_add(p, "subscribers", json_object_new_int((int) zd_events_n_subscribers(&d->events)));
        json_object_object_add(p, "privileged", json_object_new_boolean(d->privileged));
        json_object_object_add(p, "own_filter", json_object_new_boolean(d->own_filter));
        json_object *fc = json_object_new_object();
        json_object_object_add(fc, "cached", json_object_new_int64((int64_t) d->filters.n));
        json_object_object_add(fc, "hits", json_object_new_int64((int64_t) d->filters.hits));
        json_object_object_add(fc, "misses", json_object_new_int64((int64_t) d->filters.misses));
        json_object_object_add(fc, "compiles", json_object_new_int64((int64_t) d->filters.compiles));
        json_object_object_add(p, "filters", fc);
        json_object *np = json_object_new_object();
        json_object_object_add(np, "enabled", json_object_new_boolean(d->nspool.enabled));
        json_object_object_add(np, "ready", json_object_new_int64((int64_t) d->nspool.n));
        json_object_object_add(np, "made", json_object_new_int64((int64_t) d->nspool.made));
        json_object_object_add(np, "used", json_object_new_int64((int64_t) d->nspool.used));
        json_object_object_add(np, "fallbacks", json_object_new_int64((int64_t) d->nspool.fallbacks));
        json_object_object_add(p, "namespacePool", np);
        json_object_object_add(p, "recording", zd_recorder_status(&d->recorder));
        return reply(call, p);
}

static int m_get_info(struct zd_call *call, struct zd_task *t) {
        json_object *p = json_object_new_object(), *ifaces = json_object_new_array();
        json_object_object_add(p, "vendor", json_object_new_string("zygote"));
        json_object_object_add(p, "product", json_object_new_string("zygoted"));
        json_object_object_add(p, "version", json_object_new_string(ZYGOTE_VERSION));
        json_object_object_add(p, "url", json_object_new_string("https://zygote.invalid/"));
        json_object_array_add(ifaces, json_object_new_string(ZY_VARLINK_SERVICE));
        json_object_array_add(ifaces, json_object_new_string(ZY_INTERFACE));
        json_object_object_add(p, "interfaces", ifaces);
        return reply(call, p);
}

struct interface_param {
        const char *interface;
};

static const struct zc_json_field interface_fields[] = {
        { .name = "interface",
          .type = ZC_JSON_STRING,
          .offset = offsetof(struct interface_param, interface),
          .flags = ZC_JSON_MANDATORY },
        {},
};

static int m_get_interface_description(struct zd_call *call, struct zd_task *t) {
        struct interface_param p = {};
        int r = zd_call_dispatch(call, interface_fields, &p);
        if (r < 0)
                return r;
        if (!streq(p.interface, ZY_INTERFACE))
                return zd_call_failf(call, -ENOENT, ZY_ERROR_INTERFACE_NOT_FOUND, "interface", p.interface);
        return reply(call, with_value("description", json_object_new_string(zd_interface_description)));
}

static const struct method methods[] = {
        { ZY_METHOD_SPAWN, m_spawn, M_FDS | M_READS_CALLER },
        { ZY_METHOD_CREATE_CONTAINER, m_create_container, M_FDS | M_READS_CALLER },
        { ZY_METHOD_EXEC_CONTAINER, m_exec_container, M_FDS | M_READS_CALLER },
        { ZY_METHOD_START, m_start, M_TASK },
        { ZY_METHOD_KILL, m_kill, 0 },
        { ZY_METHOD_WAIT, m_wait, M_TASK },
        { ZY_METHOD_STATE, m_state, M_TASK },
        { ZY_METHOD_PIDS, m_pids, M_TASK },
        { ZY_METHOD_CLOSE_IO, m_close_io, M_TASK },
        { ZY_METHOD_LIST, m_list, 0 },
        { ZY_METHOD_DELETE, m_delete, M_TASK },
        { ZY_METHOD_EVENTS, m_events, M_NO_PARAMS },
        { ZY_METHOD_LIST_PROFILES, m_list_profiles, M_NO_PARAMS },
        { ZY_METHOD_RELOAD_PROFILES, m_reload, M_ROOT | M_NO_PARAMS },
        { ZY_METHOD_GET_FILTER, m_get_filter, 0 },
        { ZY_METHOD_GET_STATUS, m_get_status, M_NO_PARAMS },
        { ZY_METHOD_GET_INFO, m_get_info, M_NO_PARAMS },
        { ZY_METHOD_GET_INTERFACE_DESCRIPTION, m_get_interface_description, 0 },
};

static const struct method *find_method(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                if (streq(methods[i].name, name))
                        return &methods[i];
        return NULL;
}

/* A connection that was root at connect: the process may have dropped its uid since, and root's
 * powers here (every task visible, Kill and Delete of anyone's, ReloadProfiles) go by what it is
 * now, at each call. A connection that was not root keeps SO_PEERCRED's identity (the kernel
 * lets it gain none without an exec). */
static void acting_identity(struct zd_call *call) {
        struct zd_conn *c = call->conn;
        uid_t uid;
        gid_t gid;
        int r;

        if (!zd_conn_root_at_connect(c))
                return;
        r = zd_caller_read_ids(zd_conn_fd(c), zd_conn_peer_cred(c),
                               zd_caller_conn_get(zd_conn_caller(c), call->d->caller_cache), &uid, &gid);
        if (r < 0) {
                /* Not known (the process that connected has exited and another holds the
                 * socket, or zygoted is out of fds): no one, rather than root. A uid no task has
                 * and no permission names: what needs no one (GetStatus, GetInfo) is still
                 * served; a Spawn reads the process itself and fails on its own. */
                uid = (uid_t) -1;
                gid = (gid_t) -1;
        }
        zd_conn_set_acting(c, uid, gid);
}

/* Which method, whether this caller may call it, and its parameters (null: none). */
static int call_prepare(struct zd_call *call, json_object *msg, const struct method **ret) {
        json_object *jm, *jp = NULL;
        if (!json_object_object_get_ex(msg, "method", &jm) || !json_object_is_type(jm, json_type_string))
                return zd_call_invalid(call, "method");
        /* A name with an embedded NUL is no method: compared as a C string it would be the
         * method named by its prefix, one method to a filter in front of the socket and another
         * here. It is echoed whole (json-c writes the NUL as \u0000). */
        const char *name = zc_json_string_strict(jm);
        const struct method *m = name ? find_method(name) : NULL;
        if (!m)
                return zd_call_fail(call, -ENOENT, ZY_ERROR_METHOD_NOT_FOUND,
                                    with_value("method", json_object_get(jm)));
        if (json_object_object_get_ex(msg, "parameters", &jp) && !json_object_is_type(jp, json_type_object) &&
            !json_object_is_type(jp, json_type_null))
                return zd_call_invalid(call, "parameters");
        if (!(m->flags & M_READS_CALLER))
                acting_identity(call);
        if ((m->flags & M_ROOT) && !zd_conn_is_root(call->conn))
                return zd_call_failf(call, -EPERM, ZY_ERROR_PERMISSION_DENIED, "reason", "root only");
        if (!(m->flags & M_FDS) && call->n_fds > 0)
                return zd_call_invalid(call, "fds");
        call->params = jp && json_object_is_type(jp, json_type_object) ? json_object_get(jp) : json_object_new_object();
        *ret = m;
        return 0;
}

void zd_methods_call(void *userdata, struct zd_conn *c, json_object *msg, int *fds, size_t n_fds) {
        struct zd_call call = { .d = userdata, .conn = c, .fds = fds, .n_fds = n_fds };
        const struct method *m = NULL;
        struct zd_task *t = NULL;
        int r = call_prepare(&call, msg, &m);
        if (r >= 0 && (m->flags & M_TASK))
                r = get_task(&call, &t);
        else if (r >= 0 && (m->flags & M_NO_PARAMS))
                r = zd_call_dispatch(&call, no_fields, NULL);
        if (r >= 0)
                r = m->fn(&call, t);
        if (r < 0) {
                if (!call.error)
                        (void) zd_call_failf(&call, r, ZY_ERROR_PERMISSION_DENIED, "reason", strerror(-r));
                zd_refused_log(m ? m->name : NULL, call.error, call.error_params, zd_conn_cred(c)->uid,
                               zd_conn_cred(c)->pid);
                zd_reply_error(c, call.error, TAKE_PTR(call.error_params));
        }
        /* The worker has its copies (or never will): ours go in every case, but for those a
         * handler took (a Spawn parked for the reference sets n_fds to 0), through a helper (the
         * close of a caller's file may wait on the caller: a FUSE file's FLUSH). */
        for (size_t i = 0; i < call.n_fds; i++)
                zd_server_close_caller_fd(&call.d->server, fds[i], zd_conn_account(c));
        json_object_put(call.params);
        json_object_put(call.error_params);
}

void zd_methods_disconnect(void *userdata, struct zd_conn *c) {
        *zd_conn_caller(c) = zd_caller_conn_free(*zd_conn_caller(c));
        zd_spawn_drop_conn(userdata, c);
        zd_container_drop_conn(userdata, c);
        zd_task_drop_conn(userdata, c);
        zd_filter_drop_conn(userdata, c);
}
