/* SPDX-License-Identifier: MIT */
/*
 * libzygote's typed call (libzygote-call.h): parameters built from (kind, key, value) lists,
 * replies checked through json-dispatch tables into the structs of zygote.h. Unknown fields are
 * ignored (a newer daemon may add some); a missing or mistyped field is -EBADMSG.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>

#include "libzygote-call.h"
#include "util.h"

_Static_assert(sizeof(pid_t) == sizeof(int) && sizeof(uid_t) == sizeof(unsigned) &&
                       sizeof(enum zy_task_state) == sizeof(int) && sizeof(enum zy_event_type) == sizeof(int),
               "pid_t, uid_t and the enums are stored as int and unsigned");

/* ---- parameters ---------------------------------------------------------------------------- */

static json_object *strv_to_json(const char *const *l) {
        json_object *a = json_object_new_array();

        for (const char *const *p = l; a && *p; p++) {
                json_object *s = json_object_new_string(*p);
                if (!s || json_object_array_add(a, s) < 0) {
                        json_object_put(s);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

/* Builds {key: value, ...} from (kind, key, value) triples ended by P_END; NULL when all are left
 * out. What is left out keeps the daemon's default. */
static int params_build(va_list ap, json_object **ret) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        enum param_kind k;
        int r = 0;

        while ((k = va_arg(ap, enum param_kind)) != P_END) {
                const char *key = va_arg(ap, const char *), *s = NULL;
                const char *const *l = NULL;
                json_object *v = NULL;
                int i = 0;

                switch (k) {
                case P_ID:
                case P_STR:
                        if (!(s = va_arg(ap, const char *)) && k == P_STR)
                                continue;
                        if (k == P_ID && (!s || !*s))
                                r = -EINVAL;
                        v = json_object_new_string(s ?: "");
                        break;
                case P_STRV:
                        if (!(l = va_arg(ap, const char *const *)))
                                continue;
                        v = strv_to_json(l);
                        break;
                case P_BOOL:
                case P_INT:
                        if (!(i = va_arg(ap, int)))
                                continue;
                        v = k == P_BOOL ? json_object_new_boolean(1) : json_object_new_int(i);
                        break;
                case P_JSON:
                        if (!(v = va_arg(ap, json_object *)))
                                continue;
                        break;
                default:
                        return -EINVAL;
                }
                /* On error, keep reading to the end: a P_JSON later in the list is ours to free. */
                if (r == 0 && (!v || (!p && !(p = json_object_new_object())) || json_object_object_add(p, key, v) < 0))
                        r = -ENOMEM;
                else if (r == 0)
                        continue;
                json_object_put(v);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* ---- replies ------------------------------------------------------------------------------- */

/* Field callbacks: the dispatcher stores a borrowed value, these make it the struct's own. On
 * failure they leave NULL, so that lzy_shape_free() never sees a borrowed pointer. */
int lzy_own_string(const char *name, json_object *v, void *p, void *userdata) {
        char **s = p;

        *s = strdup(*s);
        return *s ? 0 : -ENOMEM;
}

int lzy_own_strv(const char *name, json_object *v, void *p, void *userdata) {
        size_t n = json_object_array_length(v);
        char **l = calloc(n + 1, sizeof(char *));

        *(char ***) p = l;
        for (size_t i = 0; l && i < n; i++)
                if (!(l[i] = strdup(json_object_get_string(json_object_array_get_idx(v, i))))) {
                        *(char ***) p = zy_strv_free(l);
                        return -ENOMEM;
                }
        return l ? 0 : -ENOMEM;
}

/* A float field may come as a JSON integer ("1700000000"). */
int lzy_get_time(const char *name, json_object *v, void *p, void *userdata) {
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return -EINVAL;
        *(double *) p = json_object_get_double(v);
        return isfinite(*(double *) p) ? 0 : -EINVAL;
}

void *lzy_shape_free(const struct shape *s, void *p) {
        if (!p)
                return NULL;
        for (const struct zc_json_field *f = s->fields; f->name; f++) {
                void **v = (void **) ((char *) p + f->offset);

                if (f->callback == lzy_own_string || f->callback == lzy_own_pids)
                        free(*v);
                else if (f->callback == lzy_own_strv)
                        zy_strv_free(*v);
                else if (f->callback == lzy_own_list || f->callback == lzy_own_list_ptr) {
                        void **items = f->callback == lzy_own_list ? *v : *v ? *(void **) *v : NULL;

                        for (size_t i = 0; items && items[i]; i++)
                                lzy_shape_free(s->element, items[i]);
                        free(items);
                        if (f->callback == lzy_own_list_ptr)
                                free(*v);
                }
        }
        free(p);
        return NULL;
}

int lzy_object_from_json(json_object *o, const struct shape *s, struct zy_reply *reply, void **ret) {
        void *p;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        if (!(p = calloc(1, s->size)))
                return -ENOMEM;
        if (s->minus_one)
                *(int *) ((char *) p + s->minus_one - 1) = -1;
        r = zc_json_dispatch(o, s->fields, ZC_JSON_ALLOW_UNKNOWN, p, (void *) s, NULL);
        if (r < 0) {
                lzy_shape_free(s, p);
                return r == -ENOMEM ? r : -EBADMSG;
        }
        for (int i = 1; s->names && s->names[i]; i++)
                if (streq(*(char **) ((char *) p + s->name_at), s->names[i]))
                        *(int *) ((char *) p + s->enum_at) = i;
        if (s->fd_at && reply && reply->n_fds == 1)
                *(int *) ((char *) p + s->fd_at - 1) = TAKE_FD(reply->fds[0]);
        *ret = p;
        return 0;
}

int lzy_own_pids(const char *name, json_object *a, void *p, void *userdata) {
        struct pid_list *l = p;
        size_t n = json_object_array_length(a);

        if (!(l->pids = calloc(n + 1, sizeof(pid_t))))
                return -ENOMEM;
        for (; l->n < n; l->n++) {
                json_object *v = json_object_array_get_idx(a, l->n);
                int64_t pid = json_object_get_int64(v);

                if (!json_object_is_type(v, json_type_int) || pid <= 0 || pid > INT_MAX)
                        return -EINVAL;
                l->pids[l->n] = (pid_t) pid;
        }
        return 0;
}

/* [Object] into { T **items (NULL-terminated); size_t n; } at p: every list of zygote.h. */
struct list {
        void **items;
        size_t n;
};
_Static_assert(offsetof(struct zy_task_list, n_tasks) == offsetof(struct list, n) &&
                       offsetof(struct zy_profile_list, n_profiles) == offsetof(struct list, n),
               "lists");

int lzy_own_list(const char *name, json_object *a, void *p, void *userdata) {
        const struct shape *s = userdata; /* the shape whose field this is: its element */
        struct list *l = p;
        size_t n = json_object_array_length(a);
        int r = 0;

        if (!(l->items = calloc(n + 1, sizeof(void *))))
                return -ENOMEM;
        for (; l->n < n && r >= 0; l->n++)
                r = lzy_object_from_json(json_object_array_get_idx(a, l->n), s->element, NULL, &l->items[l->n]);
        return r;
}

/* The same, into a newly allocated list whose pointer is at p. */
int lzy_own_list_ptr(const char *name, json_object *a, void *p, void *userdata) {
        if (!(*(void **) p = calloc(1, sizeof(struct list))))
                return -ENOMEM;
        return lzy_own_list(name, a, *(void **) p, userdata);
}

/* Sends method with the parameters of the (kind, key, value) list ap. */
static int vsend(zy_conn *c, const char *method, const int *fds, size_t n_fds, unsigned flags, va_list ap) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        int r;

        r = params_build(ap, &p);
        return r < 0 ? r : zy_call_send(c, method, p, fds, n_fds, flags);
}

int lzy_send_call_fds(zy_conn *c, const char *method, const int *fds, size_t n_fds, unsigned flags, ...) {
        va_list ap;
        int r;

        va_start(ap, flags);
        r = vsend(c, method, fds, n_fds, flags, ap);
        va_end(ap);
        return r;
}

int lzy_send_call(zy_conn *c, const char *method, unsigned flags, ...) {
        va_list ap;
        int r;

        va_start(ap, flags);
        r = vsend(c, method, NULL, 0, flags, ap);
        va_end(ap);
        return r;
}

int lzy_read_reply(zy_conn *c, const struct shape *s, void *ret) {
        _cleanup_(lzy_reply_freep) struct zy_reply *reply = NULL;
        void *p;
        int r;

        r = zy_reply_read(c, s && s->fd_at ? 1 : 0, &reply);
        if (r < 0 || !s)
                return r;
        r = lzy_object_from_json(s->key ? json_object_object_get(reply->parameters, s->key) : reply->parameters, s,
                                 reply, &p);
        if (r >= 0 && ret)
                *(void **) ret = p;
        else if (r >= 0)
                lzy_shape_free(s, p);
        return r;
}

int lzy_call(zy_conn *c, const char *method, const int *fds, size_t n_fds, const struct shape *s, void *ret, ...) {
        va_list ap;
        int r;

        va_start(ap, ret);
        r = vsend(c, method, fds, n_fds, 0, ap);
        va_end(ap);
        return r < 0 ? r : lzy_read_reply(c, s, ret);
}

_public_ char **zy_strv_free(char **l) {
        for (char **p = l; p && *p; p++)
                free(*p);
        free(l);
        return NULL;
}
