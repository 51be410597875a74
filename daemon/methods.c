/* SPDX-License-Identifier: MIT */
/*
 * The dispatch table: every method the daemon answers, with who may call it. A method checks its
 * own parameters and replies (now, or later from task.c); whatever a caller sends, it gets an
 * error reply and the daemon goes on serving everyone else.
 *
 * Tasks are private to the uid that started them (root sees all): another caller asking about
 * one gets NoSuchTask, exactly as if it did not exist.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <syslog.h>

#include <fcntl.h>
#include <stdio.h>

#include "daemon.h"
#include "util.h"

enum perm {
        PERM_ANY,
        PERM_ROOT,
};

typedef void (*method_fn)(struct zy_conn *c, json_object *params, int *fds, size_t n_fds);

struct method {
        const char *name;
        method_fn fn;
        enum perm perm;
        bool takes_fds;
};

/* ---- parameter helpers -------------------------------------------------------------------- */

/* Checks that params has only the given keys. Replies and returns false otherwise. */
static bool only_keys(struct zy_conn *c, json_object *params, const char *const *keys) {
        json_object_object_foreach(params, key, val) {
                (void) val;
                bool ok = false;
                for (const char *const *k = keys; *k && !ok; k++)
                        ok = streq(*k, key);
                if (!ok) {
                        zy_reply_invalid(c, key);
                        return false;
                }
        }
        return true;
}

static bool get_string(struct zy_conn *c, json_object *params, const char *key, bool required, const char **ret) {
        json_object *v;
        if (!json_object_object_get_ex(params, key, &v) || json_object_is_type(v, json_type_null)) {
                if (required) {
                        zy_reply_invalid(c, key);
                        return false;
                }
                *ret = NULL;
                return true;
        }
        if (!json_object_is_type(v, json_type_string)) {
                zy_reply_invalid(c, key);
                return false;
        }
        *ret = json_object_get_string(v);
        return true;
}

static bool get_int(struct zy_conn *c, json_object *params, const char *key, int64_t min, int64_t max, int64_t *ret) {
        json_object *v;
        if (!json_object_object_get_ex(params, key, &v) || json_object_is_type(v, json_type_null))
                return true; /* keeps the default */
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min ||
            json_object_get_int64(v) > max) {
                zy_reply_invalid(c, key);
                return false;
        }
        *ret = json_object_get_int64(v);
        return true;
}

static bool get_bool(struct zy_conn *c, json_object *params, const char *key, bool *ret) {
        json_object *v;
        if (!json_object_object_get_ex(params, key, &v) || json_object_is_type(v, json_type_null))
                return true;
        if (!json_object_is_type(v, json_type_boolean)) {
                zy_reply_invalid(c, key);
                return false;
        }
        *ret = json_object_get_boolean(v);
        return true;
}

static bool visible(const struct zy_conn *c, const struct zy_task *t) {
        return zy_conn_is_root(c) || t->uid == c->cred.uid;
}

/* Finds the caller's task named by params.id, or replies NoSuchTask. */
static struct zy_task *get_task(struct zy_conn *c, json_object *params) {
        static const char *const keys[] = { "id", NULL };
        const char *id;
        if (!only_keys(c, params, keys) || !get_string(c, params, "id", true, &id))
                return NULL;
        struct zy_task *t = zy_task_find(c->d, id);
        if (!t || !visible(c, t)) {
                zy_reply_errorf(c, "io.zygote.Launcher.NoSuchTask", "id", id);
                return NULL;
        }
        return t;
}

static void reply_invalid_state(struct zy_conn *c, const struct zy_task *t) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "id", json_object_new_string(t->id));
        json_object_object_add(p, "state", json_object_new_string(zy_task_state_to_string(t->state)));
        zy_reply_error(c, "io.zygote.Launcher.InvalidState", p);
}

static json_object *with_task(const struct zy_task *t) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "task", zy_task_to_json(t));
        return p;
}

/* Calls fn for every process in the session whose id is sid (the worker called setsid(), so its
 * pid is the sid of everything it starts, unless they setsid() themselves). */
static void for_each_in_session(pid_t sid, void (*fn)(pid_t pid, void *userdata), void *userdata) {
        DIR *dir = opendir("/proc");
        struct dirent *de;
        while (dir && (de = readdir(dir))) {
                char path[300], buf[512];
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                if (n <= 0)
                        continue;
                buf[n] = 0;
                /* pid (comm) state ppid pgrp session: comm may hold spaces and ')' */
                char *rp = strrchr(buf, ')');
                int ppid, pgrp, session;
                char state;
                if (rp && sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) == 4 && session == sid)
                        fn((pid_t) atoi(de->d_name), userdata);
        }
        if (dir)
                closedir(dir);
}

static void add_pid(pid_t pid, void *userdata) {
        json_object_array_add(userdata, json_object_new_int(pid));
}

struct kill_ctx {
        pid_t leader;
        int sig;
        int err;
};

static void kill_pid(pid_t pid, void *userdata) {
        struct kill_ctx *k = userdata;
        if (pid == k->leader)
                return; /* through its pidfd */
        if (kill(pid, k->sig) < 0 && errno != ESRCH && k->err == 0)
                k->err = errno;
}

/* ---- methods ------------------------------------------------------------------------------ */

static void m_spawn(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        (void) zy_spawn(c, params, fds, n_fds); /* replies on every path */
}

static void m_start(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (!t)
                return;
        int r = zy_task_start(t, c);
        if (r == -EBUSY)
                reply_invalid_state(c, t);
        else if (r < 0)
                zy_reply_errorf(c, "io.zygote.Launcher.InvalidState", "id", t->id);
        /* else: the reply comes when the status pipe says exec */
}

static void m_kill(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { "id", "signal", "all", NULL };
        const char *id;
        int64_t sig = SIGTERM;
        bool all = false;
        if (!only_keys(c, params, keys) || !get_string(c, params, "id", true, &id) ||
            !get_int(c, params, "signal", 1, SIGRTMAX, &sig) || !get_bool(c, params, "all", &all))
                return;
        struct zy_task *t = zy_task_find(c->d, id);
        if (!t || !visible(c, t)) {
                zy_reply_errorf(c, "io.zygote.Launcher.NoSuchTask", "id", id);
                return;
        }
        if (t->exited || t->state == ZY_TASK_STOPPED) {
                reply_invalid_state(c, t);
                return;
        }
        /* The pidfd names exactly this process, never a reused pid. The rest of the session
         * (the worker is a session leader; Pids lists the same set) is signalled by number,
         * found through /proc: a pid could be reused between the scan and the kill, a window
         * zygote accepts, as it has no cgroup to freeze. Only while the leader is not reaped,
         * so that the session id itself cannot have been reused. */
        int r = 0;
        /* The leader first: signalled after its children, a shell waiting for them would exit
         * on its own before the signal reached it. */
        if (syscall(SYS_pidfd_send_signal, t->pidfd, (int) sig, NULL, 0) < 0 && errno != ESRCH)
                r = -errno;
        if (all) {
                struct kill_ctx k = { .leader = t->pid, .sig = (int) sig };
                for_each_in_session(t->pid, kill_pid, &k);
                if (k.err && r == 0)
                        r = -k.err;
        }
        if (r < 0) {
                zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason", strerror(-r));
                return;
        }
        zy_reply(c, NULL, false, -EBADF);
}

static void m_wait(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (!t)
                return;
        if (t->exited && t->state == ZY_TASK_STOPPED) {
                zy_reply(c, with_task(t), false, -EBADF);
                return;
        }
        if (zy_task_add_waiter(t, c) < 0) {
                zy_reply_errorf(c, "io.zygote.Launcher.LimitExceeded", "limit", "memory");
                return;
        }
        if (c->more)
                zy_reply(c, with_task(t), true, -EBADF);
}

static void m_state(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (t)
                zy_reply(c, with_task(t), false, -EBADF);
}

static void m_pids(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (!t)
                return;
        json_object *pids = json_object_new_array();
        if (!t->exited)
                for_each_in_session(t->pid, add_pid, pids);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "pids", pids);
        zy_reply(c, p, false, -EBADF);
}

/* zygoted keeps no copy of a task's stdio (its copies are closed right after the fork), so
 * there is nothing for it to close: the caller holds the other ends. Checked, then answered. */
static void m_close_io(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (t)
                zy_reply(c, NULL, false, -EBADF);
}

static void m_list(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        json_object *tasks = json_object_new_array();
        struct lh_entry *e;
        lh_foreach(c->d->tasks, e) {
                const struct zy_task *t = lh_entry_v(e);
                if (visible(c, t))
                        json_object_array_add(tasks, zy_task_to_json(t));
        }
        json_object *p = json_object_new_object();
        json_object_object_add(p, "tasks", tasks);
        zy_reply(c, p, false, -EBADF);
}

static void m_delete(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_task *t = get_task(c, params);
        if (!t)
                return;
        if (t->state == ZY_TASK_RUNNING || t->state == ZY_TASK_STARTING) {
                reply_invalid_state(c, t);
                return;
        }
        json_object *p = with_task(t);
        zy_task_delete(t);
        zy_reply(c, p, false, -EBADF);
}

static void m_events(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        struct zy_daemon *d = c->d;
        if (!c->more) {
                zy_reply_invalid(c, "more");
                return;
        }
        if (d->n_subscribers >= ELEMENTSOF(d->subscribers)) {
                json_object *p = json_object_new_object();
                json_object_object_add(p, "limit", json_object_new_string("subscribers"));
                json_object_object_add(p, "max", json_object_new_int((int) ELEMENTSOF(d->subscribers)));
                zy_reply_error(c, "io.zygote.Launcher.LimitExceeded", p);
                return;
        }
        d->subscribers[d->n_subscribers++] = c;
        c->streaming = true; /* no reply now: events arrive as they happen */
}

static void m_list_profiles(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < c->d->n_entries; i++)
                json_object_array_add(arr, zy_entry_to_json(c->d->entries[i]));
        json_object *p = json_object_new_object();
        json_object_object_add(p, "profiles", arr);
        zy_reply(c, p, false, -EBADF);
}

static void m_reload(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        json_object *loaded, *failed;
        int r = zy_registry_reload(c->d, &loaded, &failed);
        if (r < 0) {
                zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason", strerror(-r));
                return;
        }
        json_object *p = json_object_new_object();
        json_object_object_add(p, "loaded", loaded);
        json_object_object_add(p, "failed", failed);
        zy_reply(c, p, false, -EBADF);
}

static void m_get_status(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        struct zy_daemon *d = c->d;
        json_object *p = json_object_new_object(), *f = json_object_new_object(), *arr = json_object_new_array();
        json_object_object_add(p, "version", json_object_new_string(ZYGOTE_VERSION));
        json_object_object_add(f, "clone_filter", json_object_new_boolean(d->features.clone_filter));
        json_object_object_add(f, "capbset_drop_mask", json_object_new_boolean(d->features.capbset_drop_mask));
        json_object_object_add(p, "features", f);
        for (size_t i = 0; i < d->n_entries; i++)
                json_object_array_add(arr, zy_entry_to_json(d->entries[i]));
        json_object_object_add(p, "profiles", arr);
        json_object_object_add(p, "tasks", json_object_new_int((int) d->n_tasks));
        json_object_object_add(p, "connections", json_object_new_int((int) d->n_conns));
        json_object_object_add(p, "privileged", json_object_new_boolean(d->privileged));
        zy_reply(c, p, false, -EBADF);
}

static void m_get_info(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { NULL };
        if (!only_keys(c, params, keys))
                return;
        json_object *p = json_object_new_object(), *ifaces = json_object_new_array();
        json_object_object_add(p, "vendor", json_object_new_string("zygote"));
        json_object_object_add(p, "product", json_object_new_string("zygoted"));
        json_object_object_add(p, "version", json_object_new_string(ZYGOTE_VERSION));
        json_object_object_add(p, "url", json_object_new_string("https://zygote.invalid/"));
        json_object_array_add(ifaces, json_object_new_string("org.varlink.service"));
        json_object_array_add(ifaces, json_object_new_string("io.zygote.Launcher"));
        json_object_object_add(p, "interfaces", ifaces);
        zy_reply(c, p, false, -EBADF);
}

static void m_get_interface_description(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        static const char *const keys[] = { "interface", NULL };
        const char *iface;
        if (!only_keys(c, params, keys) || !get_string(c, params, "interface", true, &iface))
                return;
        if (!streq(iface, "io.zygote.Launcher")) {
                zy_reply_errorf(c, "org.varlink.service.InterfaceNotFound", "interface", iface);
                return;
        }
        json_object *p = json_object_new_object();
        json_object_object_add(p, "description", json_object_new_string(zy_interface_description));
        zy_reply(c, p, false, -EBADF);
}

static const struct method methods[] = {
        { "io.zygote.Launcher.Spawn", m_spawn, PERM_ANY, true },
        { "io.zygote.Launcher.Start", m_start, PERM_ANY, false },
        { "io.zygote.Launcher.Kill", m_kill, PERM_ANY, false },
        { "io.zygote.Launcher.Wait", m_wait, PERM_ANY, false },
        { "io.zygote.Launcher.State", m_state, PERM_ANY, false },
        { "io.zygote.Launcher.Pids", m_pids, PERM_ANY, false },
        { "io.zygote.Launcher.CloseIO", m_close_io, PERM_ANY, false },
        { "io.zygote.Launcher.List", m_list, PERM_ANY, false },
        { "io.zygote.Launcher.Delete", m_delete, PERM_ANY, false },
        { "io.zygote.Launcher.Events", m_events, PERM_ANY, false },
        { "io.zygote.Launcher.ListProfiles", m_list_profiles, PERM_ANY, false },
        { "io.zygote.Launcher.ReloadProfiles", m_reload, PERM_ROOT, false },
        { "io.zygote.Launcher.GetStatus", m_get_status, PERM_ANY, false },
        { "org.varlink.service.GetInfo", m_get_info, PERM_ANY, false },
        { "org.varlink.service.GetInterfaceDescription", m_get_interface_description, PERM_ANY, false },
};

void zy_dispatch(struct zy_conn *c, json_object *msg, int *fds, size_t n_fds) {
        json_object *jm, *jp = NULL, *jmore;
        const struct method *m = NULL;

        c->more = json_object_object_get_ex(msg, "more", &jmore) && json_object_get_boolean(jmore);
        if (!json_object_object_get_ex(msg, "method", &jm) || !json_object_is_type(jm, json_type_string)) {
                zy_reply_invalid(c, "method");
                goto drop_fds;
        }
        for (size_t i = 0; i < ELEMENTSOF(methods) && !m; i++)
                if (streq(methods[i].name, json_object_get_string(jm)))
                        m = &methods[i];
        if (!m) {
                zy_reply_errorf(c, "org.varlink.service.MethodNotFound", "method", json_object_get_string(jm));
                goto drop_fds;
        }
        if (json_object_object_get_ex(msg, "parameters", &jp) && !json_object_is_type(jp, json_type_object) &&
            !json_object_is_type(jp, json_type_null)) {
                zy_reply_invalid(c, "parameters");
                goto drop_fds;
        }
        if (m->perm == PERM_ROOT && !zy_conn_is_root(c)) {
                zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason", "root only");
                goto drop_fds;
        }
        if (!m->takes_fds && n_fds > 0) {
                zy_reply_invalid(c, "fds");
                goto drop_fds;
        }
        json_object *empty = NULL;
        if (!jp || json_object_is_type(jp, json_type_null))
                jp = empty = json_object_new_object();
        m->fn(c, jp, fds, n_fds);
        json_object_put(empty);
        return;

drop_fds:
        for (size_t i = 0; i < n_fds; i++)
                safe_close(fds[i]);
}
