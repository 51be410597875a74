/* SPDX-License-Identifier: MIT */
/*
 * libzygote, the typed helpers: one function per method of io.zygote.Launcher, building the
 * parameters and checking every field of the reply against the interface's types. Unknown
 * fields are ignored (a newer daemon may add some); a missing or mistyped field is -EBADMSG.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "zygote-private.h"
#include "../daemon/util.h"

/* ---- reading typed fields ------------------------------------------------------------------ */

/* The field, or NULL when it is absent or null (the interface's "?type"). */
static json_object *field(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

static int get_string(json_object *o, const char *key, bool optional, char **ret) {
        json_object *v = field(o, key);
        char *s;

        if (!v) {
                if (!optional)
                        return -EBADMSG;
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = strdup(json_object_get_string(v));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int get_int(json_object *o, const char *key, bool optional, int64_t min, int64_t max, int64_t def,
                   int64_t *ret) {
        json_object *v = field(o, key);
        int64_t i;

        if (!v) {
                if (!optional)
                        return -EBADMSG;
                *ret = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EBADMSG;
        errno = 0;
        i = json_object_get_int64(v);
        /* json-c clamps out-of-range numbers to INT64_MIN/MAX and says so in errno. */
        if (errno != 0 || i < min || i > max)
                return -EBADMSG;
        *ret = i;
        return 0;
}

static int get_double(json_object *o, const char *key, bool optional, double *ret) {
        json_object *v = field(o, key);
        double d;

        if (!v) {
                if (!optional)
                        return -EBADMSG;
                *ret = 0;
                return 0;
        }
        /* A float field may come as a JSON integer ("1700000000"). */
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        d = json_object_get_double(v);
        if (!isfinite(d))
                return -EBADMSG;
        *ret = d;
        return 0;
}

static int get_bool(json_object *o, const char *key, bool *ret) {
        json_object *v = field(o, key);

        if (!v || !json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(v);
        return 0;
}

_public_ char **zy_strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
        return NULL;
}

static void strv_freep(char ***l) {
        zy_strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

static int get_strv(json_object *o, const char *key, bool optional, char ***ret) {
        json_object *v = field(o, key);
        _cleanup_strv_free_ char **l = NULL;
        size_t n;

        if (!v) {
                if (!optional)
                        return -EBADMSG;
                v = NULL;
                n = 0;
        } else {
                if (!json_object_is_type(v, json_type_array))
                        return -EBADMSG;
                n = json_object_array_length(v);
        }
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(v, i);

                if (!json_object_is_type(s, json_type_string))
                        return -EBADMSG;
                l[i] = strdup(json_object_get_string(s));
                if (!l[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* ---- building parameters ------------------------------------------------------------------- */

static int add_string(json_object *o, const char *key, const char *value) {
        json_object *s;

        if (!value)
                return 0;
        s = json_object_new_string(value);
        if (!s)
                return -ENOMEM;
        if (json_object_object_add(o, key, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

static int add_strv(json_object *o, const char *key, const char *const *l) {
        json_object *a;

        if (!l)
                return 0;
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (const char *const *p = l; *p; p++) {
                json_object *s = json_object_new_string(*p);
                if (!s || json_object_array_add(a, s) < 0) {
                        json_object_put(s);
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        if (json_object_object_add(o, key, a) < 0) {
                json_object_put(a);
                return -ENOMEM;
        }
        return 0;
}

static int add_new(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static bool id_valid(const char *id) {
        return id && *id;
}

/* {"id": id} */
static int id_params(const char *id, json_object **ret) {
        json_object *p;
        int r;

        if (!id_valid(id))
                return -EINVAL;
        p = json_object_new_object();
        if (!p)
                return -ENOMEM;
        r = add_string(p, "id", id);
        if (r < 0) {
                json_object_put(p);
                return r;
        }
        *ret = p;
        return 0;
}

/* A call with {"id": id} and one reply without fds. */
static int call_id(zy_conn *c, const char *method, const char *id, struct zy_reply **ret) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        int r;

        r = id_params(id, &p);
        if (r < 0)
                return r;
        return zy_call(c, method, p, NULL, 0, 0, ret);
}

/* ---- tasks --------------------------------------------------------------------------------- */

_public_ struct zy_task_info *zy_task_info_free(struct zy_task_info *t) {
        if (!t)
                return NULL;
        free(t->id);
        free(t->profile);
        free(t->state_name);
        free(t->tier);
        zy_strv_free(t->argv);
        free(t);
        return NULL;
}

static void task_info_freep(struct zy_task_info **t) {
        zy_task_info_free(*t);
}

static enum zy_task_state task_state_from_string(const char *s) {
        if (streq(s, "created"))
                return ZY_TASK_CREATED;
        if (streq(s, "running"))
                return ZY_TASK_RUNNING;
        if (streq(s, "stopped"))
                return ZY_TASK_STOPPED;
        return ZY_TASK_UNKNOWN;
}

_public_ int zy_task_info_from_json(json_object *o, struct zy_task_info **ret) {
        _cleanup_(task_info_freep) struct zy_task_info *t = NULL;
        int64_t pid, uid, code, sig;
        int r;

        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        if ((r = get_string(o, "id", false, &t->id)) < 0 ||
            (r = get_string(o, "profile", false, &t->profile)) < 0 ||
            (r = get_string(o, "state", false, &t->state_name)) < 0 ||
            (r = get_string(o, "tier", false, &t->tier)) < 0 ||
            (r = get_strv(o, "argv", false, &t->argv)) < 0 ||
            (r = get_int(o, "pid", false, 0, INT_MAX, 0, &pid)) < 0 ||
            (r = get_int(o, "uid", false, 0, UINT32_MAX - 1, 0, &uid)) < 0 ||
            (r = get_int(o, "exitCode", true, 0, 255, -1, &code)) < 0 ||
            (r = get_int(o, "signal", true, 1, 127, 0, &sig)) < 0 ||
            (r = get_double(o, "createdAt", false, &t->created_at)) < 0 ||
            (r = get_double(o, "startedAt", true, &t->started_at)) < 0 ||
            (r = get_double(o, "exitedAt", true, &t->exited_at)) < 0)
                return r;
        t->state = task_state_from_string(t->state_name);
        t->pid = (pid_t) pid;
        t->uid = (uid_t) uid;
        t->exit_code = (int) code;
        t->signal = (int) sig;
        *ret = TAKE_PTR(t);
        return 0;
}

_public_ int zy_task_info_status(const struct zy_task_info *t) {
        if (!t || t->state != ZY_TASK_STOPPED)
                return -1;
        if (t->signal > 0)
                return 128 + t->signal;
        return t->exit_code >= 0 ? t->exit_code : -1;
}

/* A reply's {"task": Task}. */
static int reply_task(struct zy_reply *reply, struct zy_task_info **ret) {
        json_object *task = NULL;

        if (!json_object_object_get_ex(reply->parameters, "task", &task))
                return -EBADMSG;
        return zy_task_info_from_json(task, ret);
}

_public_ struct zy_spawn_result *zy_spawn_result_free(struct zy_spawn_result *r) {
        if (!r)
                return NULL;
        free(r->id);
        free(r->tier);
        safe_close(r->pidfd);
        free(r);
        return NULL;
}

static void spawn_result_freep(struct zy_spawn_result **r) {
        zy_spawn_result_free(*r);
}

/* Sends each distinct fd of the map once; FdMapping.fd is its position among the sent fds. */
static int spawn_fds(json_object *p, const struct zy_fd_map *map, size_t n_map, int *ret_fds, size_t *ret_n) {
        json_object *a;
        size_t n = 0;
        int r;

        if (n_map == 0)
                return 0;
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n_map; i++) {
                json_object *m;
                size_t k;

                if (map[i].fd < 0 || map[i].target < 0) {
                        json_object_put(a);
                        return -EBADF;
                }
                for (k = 0; k < n; k++)
                        if (ret_fds[k] == map[i].fd)
                                break;
                if (k == n) {
                        if (n == ZY_FDS_MAX) {
                                json_object_put(a);
                                return -EMSGSIZE;
                        }
                        ret_fds[n++] = map[i].fd;
                }
                m = json_object_new_object();
                if (!m || add_new(m, "fd", json_object_new_int((int) k)) < 0 ||
                    add_new(m, "target", json_object_new_int(map[i].target)) < 0 ||
                    json_object_array_add(a, m) < 0) {
                        json_object_put(m);
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        r = add_new(p, "fds", a);
        if (r < 0)
                return r;
        *ret_n = n;
        return 0;
}

_public_ int zy_spawn(zy_conn *c, const struct zy_spawn_opts *o, struct zy_spawn_result **ret) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_(spawn_result_freep) struct zy_spawn_result *res = NULL;
        int fds[ZY_FDS_MAX];
        size_t n_fds = 0;
        int64_t pid;
        int r;

        if (!c || !o || !ret || !o->argv || !o->argv[0] || (o->n_fds > 0 && !o->fds))
                return -EINVAL;

        p = json_object_new_object();
        if (!p)
                return -ENOMEM;
        if ((r = add_strv(p, "argv", o->argv)) < 0 || (r = add_string(p, "profile", o->profile)) < 0 ||
            (r = add_strv(p, "env", o->env)) < 0 || (r = add_string(p, "cwd", o->cwd)) < 0 ||
            (r = add_string(p, "user", o->user)) < 0 || (r = add_string(p, "group", o->group)) < 0 ||
            (r = add_strv(p, "dropCapabilities", o->drop_caps)) < 0 || (r = add_string(p, "id", o->id)) < 0 ||
            (r = spawn_fds(p, o->fds, o->n_fds, fds, &n_fds)) < 0)
                return r;
        if (o->hold && (r = add_new(p, "hold", json_object_new_boolean(1))) < 0)
                return r;
        if (o->terminal && (r = add_new(p, "terminal", json_object_new_boolean(1))) < 0)
                return r;

        r = zy_call(c, ZY_IFACE ".Spawn", p, fds, n_fds, 1, &reply);
        if (r < 0)
                return r;

        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        res->pidfd = -1;
        if ((r = get_string(reply->parameters, "id", false, &res->id)) < 0 ||
            (r = get_string(reply->parameters, "tier", false, &res->tier)) < 0 ||
            (r = get_int(reply->parameters, "pid", false, 1, INT_MAX, 0, &pid)) < 0)
                return r;
        res->pid = (pid_t) pid;
        if (reply->n_fds == 1)
                res->pidfd = TAKE_FD(reply->fds[0]);
        *ret = TAKE_PTR(res);
        return 0;
}

_public_ int zy_start(zy_conn *c, const char *id) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;

        return call_id(c, ZY_IFACE ".Start", id, &reply);
}

_public_ int zy_kill(zy_conn *c, const char *id, int signal, bool all) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        int r;

        if (signal < 0 || signal > 64)
                return -EINVAL;
        r = id_params(id, &p);
        if (r < 0)
                return r;
        if (signal > 0 && (r = add_new(p, "signal", json_object_new_int(signal))) < 0)
                return r;
        if (all && (r = add_new(p, "all", json_object_new_boolean(1))) < 0)
                return r;
        return zy_call(c, ZY_IFACE ".Kill", p, NULL, 0, 0, &reply);
}

_public_ int zy_wait_send(zy_conn *c, const char *id) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        int r;

        r = id_params(id, &p);
        if (r < 0)
                return r;
        return zy_call_send(c, ZY_IFACE ".Wait", p, NULL, 0, 0);
}

_public_ int zy_wait_read(zy_conn *c, struct zy_task_info **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_reply_read(c, 0, &reply);
        if (r < 0)
                return r;
        return reply_task(reply, ret);
}

_public_ int zy_wait(zy_conn *c, const char *id, struct zy_task_info **ret) {
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_wait_send(c, id);
        if (r < 0)
                return r;
        return zy_wait_read(c, ret);
}

_public_ int zy_state(zy_conn *c, const char *id, struct zy_task_info **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = call_id(c, ZY_IFACE ".State", id, &reply);
        if (r < 0)
                return r;
        return reply_task(reply, ret);
}

_public_ int zy_pids(zy_conn *c, const char *id, pid_t **ret_pids, size_t *ret_n) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        json_object *a;
        size_t n;
        int r;

        if (!ret_pids || !ret_n)
                return -EINVAL;
        r = call_id(c, ZY_IFACE ".Pids", id, &reply);
        if (r < 0)
                return r;
        a = field(reply->parameters, "pids");
        if (!a || !json_object_is_type(a, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(a);
        /* One slot more, so that an empty list is still a valid allocation. */
        pids = calloc(n + 1, sizeof(pid_t));
        if (!pids)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(a, i);
                int64_t pid;

                if (!json_object_is_type(v, json_type_int))
                        return -EBADMSG;
                errno = 0;
                pid = json_object_get_int64(v);
                if (errno != 0 || pid <= 0 || pid > INT_MAX)
                        return -EBADMSG;
                pids[i] = (pid_t) pid;
        }
        *ret_pids = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

_public_ struct zy_task_list *zy_task_list_free(struct zy_task_list *l) {
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_tasks; i++)
                zy_task_info_free(l->tasks[i]);
        free(l->tasks);
        free(l);
        return NULL;
}

static void task_list_freep(struct zy_task_list **l) {
        zy_task_list_free(*l);
}

_public_ int zy_list(zy_conn *c, struct zy_task_list **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_(task_list_freep) struct zy_task_list *l = NULL;
        json_object *a;
        size_t n;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_call(c, ZY_IFACE ".List", NULL, NULL, 0, 0, &reply);
        if (r < 0)
                return r;
        a = field(reply->parameters, "tasks");
        if (!a || !json_object_is_type(a, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(a);
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->tasks = calloc(n + 1, sizeof(struct zy_task_info *));
        if (!l->tasks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = zy_task_info_from_json(json_object_array_get_idx(a, i), &l->tasks[i]);
                if (r < 0)
                        return r;
                l->n_tasks++;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

_public_ int zy_delete(zy_conn *c, const char *id, struct zy_task_info **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_(task_info_freep) struct zy_task_info *t = NULL;
        int r;

        r = call_id(c, ZY_IFACE ".Delete", id, &reply);
        if (r < 0)
                return r;
        /* Check the reply even when the caller does not want it: a malformed one is a broken
         * daemon either way. */
        r = reply_task(reply, &t);
        if (r < 0)
                return r;
        if (ret)
                *ret = TAKE_PTR(t);
        return 0;
}

_public_ int zy_close_io(zy_conn *c, const char *id) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;

        return call_id(c, ZY_IFACE ".CloseIO", id, &reply);
}

/* ---- events -------------------------------------------------------------------------------- */

_public_ struct zy_event *zy_event_free(struct zy_event *e) {
        if (!e)
                return NULL;
        free(e->type_name);
        free(e->id);
        free(e);
        return NULL;
}

static void event_freep(struct zy_event **e) {
        zy_event_free(*e);
}

static int event_from_json(json_object *o, struct zy_event **ret) {
        _cleanup_(event_freep) struct zy_event *e = NULL;
        int64_t pid, code, sig;
        int r;

        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        if ((r = get_string(o, "type", false, &e->type_name)) < 0 || (r = get_string(o, "id", false, &e->id)) < 0 ||
            (r = get_double(o, "time", false, &e->time)) < 0 ||
            (r = get_int(o, "pid", true, 1, INT_MAX, 0, &pid)) < 0 ||
            (r = get_int(o, "exitCode", true, 0, 255, -1, &code)) < 0 ||
            (r = get_int(o, "signal", true, 1, 127, 0, &sig)) < 0)
                return r;
        e->type = streq(e->type_name, "create") ? ZY_EVENT_CREATE
                  : streq(e->type_name, "start") ? ZY_EVENT_START
                  : streq(e->type_name, "exit")  ? ZY_EVENT_EXIT
                  : streq(e->type_name, "delete") ? ZY_EVENT_DELETE
                                                  : ZY_EVENT_UNKNOWN;
        e->pid = (pid_t) pid;
        e->exit_code = (int) code;
        e->signal = (int) sig;
        *ret = TAKE_PTR(e);
        return 0;
}

_public_ int zy_events_subscribe(zy_conn *c) {
        return zy_call_send(c, ZY_IFACE ".Events", NULL, NULL, 0, ZY_CALL_MORE);
}

_public_ int zy_events_next(zy_conn *c, struct zy_event **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        json_object *ev;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_reply_read(c, 0, &reply);
        if (r < 0)
                return r;
        ev = field(reply->parameters, "event");
        /* The stream's last reply (the daemon ending it) may carry no event. */
        if (!ev && !reply->continues) {
                *ret = NULL;
                return 0;
        }
        return event_from_json(ev, ret);
}

_public_ int zy_events(zy_conn *c, zy_event_cb cb, void *userdata) {
        int r;

        if (!c || !cb)
                return -EINVAL;
        r = zy_events_subscribe(c);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_(event_freep) struct zy_event *e = NULL;

                r = zy_events_next(c, &e);
                if (r < 0)
                        return r;
                if (!e)
                        return 0;
                r = cb(e, userdata);
                if (r != 0)
                        /* The stream stays subscribed on c; the caller frees c to end it. */
                        return r < 0 ? r : 0;
        }
}

/* ---- profiles and the daemon --------------------------------------------------------------- */

static struct zy_profile_info *profile_info_free(struct zy_profile_info *p) {
        if (!p)
                return NULL;
        free(p->name);
        free(p->path);
        free(p->tier);
        free(p->tier_reason);
        free(p->hash);
        zy_strv_free(p->capabilities);
        free(p);
        return NULL;
}

static void profile_info_freep(struct zy_profile_info **p) {
        profile_info_free(*p);
}

static int profile_info_from_json(json_object *o, struct zy_profile_info **ret) {
        _cleanup_(profile_info_freep) struct zy_profile_info *p = NULL;
        int64_t insns, longest, ref, skipped;
        int r;

        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        if ((r = get_string(o, "name", false, &p->name)) < 0 || (r = get_string(o, "path", false, &p->path)) < 0 ||
            (r = get_string(o, "tier", false, &p->tier)) < 0 ||
            (r = get_string(o, "tierReason", false, &p->tier_reason)) < 0 ||
            (r = get_string(o, "hash", false, &p->hash)) < 0 ||
            (r = get_strv(o, "capabilities", false, &p->capabilities)) < 0 ||
            (r = get_bool(o, "noNewPrivileges", &p->no_new_privileges)) < 0 ||
            (r = get_int(o, "bpfInstructions", false, 0, UINT_MAX, 0, &insns)) < 0 ||
            (r = get_int(o, "longestPath", false, 0, UINT_MAX, 0, &longest)) < 0 ||
            (r = get_int(o, "referencePid", true, 1, INT_MAX, 0, &ref)) < 0 ||
            (r = get_int(o, "skippedSyscalls", false, 0, UINT_MAX, 0, &skipped)) < 0)
                return r;
        p->bpf_instructions = (unsigned) insns;
        p->longest_path = (unsigned) longest;
        p->reference_pid = (pid_t) ref;
        p->skipped_syscalls = (unsigned) skipped;
        *ret = TAKE_PTR(p);
        return 0;
}

_public_ struct zy_profile_list *zy_profile_list_free(struct zy_profile_list *l) {
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_profiles; i++)
                profile_info_free(l->profiles[i]);
        free(l->profiles);
        free(l);
        return NULL;
}

static void profile_list_freep(struct zy_profile_list **l) {
        zy_profile_list_free(*l);
}

static int profile_list_from_json(json_object *a, struct zy_profile_list **ret) {
        _cleanup_(profile_list_freep) struct zy_profile_list *l = NULL;
        size_t n;
        int r;

        if (!a || !json_object_is_type(a, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(a);
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->profiles = calloc(n + 1, sizeof(struct zy_profile_info *));
        if (!l->profiles)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = profile_info_from_json(json_object_array_get_idx(a, i), &l->profiles[i]);
                if (r < 0)
                        return r;
                l->n_profiles++;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

_public_ int zy_list_profiles(zy_conn *c, struct zy_profile_list **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_call(c, ZY_IFACE ".ListProfiles", NULL, NULL, 0, 0, &reply);
        if (r < 0)
                return r;
        return profile_list_from_json(field(reply->parameters, "profiles"), ret);
}

_public_ struct zy_daemon_status *zy_daemon_status_free(struct zy_daemon_status *s) {
        if (!s)
                return NULL;
        free(s->version);
        zy_profile_list_free(s->profiles);
        free(s);
        return NULL;
}

static void daemon_status_freep(struct zy_daemon_status **s) {
        zy_daemon_status_free(*s);
}

_public_ int zy_get_status(zy_conn *c, struct zy_daemon_status **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_(daemon_status_freep) struct zy_daemon_status *s = NULL;
        json_object *features;
        int64_t tasks, conns;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_call(c, ZY_IFACE ".GetStatus", NULL, NULL, 0, 0, &reply);
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        features = field(reply->parameters, "features");
        if (!features || !json_object_is_type(features, json_type_object))
                return -EBADMSG;
        if ((r = get_string(reply->parameters, "version", false, &s->version)) < 0 ||
            (r = get_bool(features, "clone_filter", &s->clone_filter)) < 0 ||
            (r = get_bool(features, "capbset_drop_mask", &s->capbset_drop_mask)) < 0 ||
            (r = get_int(reply->parameters, "tasks", false, 0, UINT_MAX, 0, &tasks)) < 0 ||
            (r = get_int(reply->parameters, "connections", false, 0, UINT_MAX, 0, &conns)) < 0 ||
            (r = profile_list_from_json(field(reply->parameters, "profiles"), &s->profiles)) < 0)
                return r;
        s->tasks = (unsigned) tasks;
        s->connections = (unsigned) conns;
        *ret = TAKE_PTR(s);
        return 0;
}

_public_ struct zy_reload_result *zy_reload_result_free(struct zy_reload_result *r) {
        if (!r)
                return NULL;
        zy_strv_free(r->loaded);
        zy_strv_free(r->failed);
        free(r);
        return NULL;
}

static void reload_result_freep(struct zy_reload_result **r) {
        zy_reload_result_free(*r);
}

_public_ int zy_reload_profiles(zy_conn *c, struct zy_reload_result **ret) {
        _cleanup_(zy_reply_freep) struct zy_reply *reply = NULL;
        _cleanup_(reload_result_freep) struct zy_reload_result *res = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_call(c, ZY_IFACE ".ReloadProfiles", NULL, NULL, 0, 0, &reply);
        if (r < 0)
                return r;
        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        if ((r = get_strv(reply->parameters, "loaded", false, &res->loaded)) < 0 ||
            (r = get_strv(reply->parameters, "failed", false, &res->failed)) < 0)
                return r;
        *ret = TAKE_PTR(res);
        return 0;
}
