/* SPDX-License-Identifier: MIT */
/*
 * The plan being built and the helpers every controller's planner shares (cgroup-resources-plan.h):
 * failures naming the field, where a controller is (its v1 hierarchy or cgroup2), the writes
 * appended, members read with their type checked. Below cgroup-resources.c and
 * cgroup-resources-blkio.c, which call them; pure like them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cgroup-resources-plan.h"
#include "util.h"

int zct_plan_fail(struct planner *p, int r, const char *fmt, ...) {
        va_list ap;

        if (p->err) {
                free(*p->err);
                va_start(ap, fmt);
                if (vasprintf(p->err, fmt, ap) < 0)
                        *p->err = NULL;
                va_end(ap);
        }
        return r;
}

const char *zct_res_controller_name(enum zct_res_controller c, bool v2) {
        static const char *const names[_ZCT_RES_MAX] = {
                [ZCT_RES_CPU] = "cpu",         [ZCT_RES_CPUSET] = "cpuset",     [ZCT_RES_MEMORY] = "memory",
                [ZCT_RES_PIDS] = "pids",       [ZCT_RES_IO] = "blkio",          [ZCT_RES_HUGETLB] = "hugetlb",
                [ZCT_RES_NET_CLS] = "net_cls", [ZCT_RES_NET_PRIO] = "net_prio", [ZCT_RES_RDMA] = "rdma",
                [ZCT_RES_UNIFIED] = "",
        };

        if (c == ZCT_RES_IO && v2)
                return "io";
        return c < _ZCT_RES_MAX ? names[c] : "";
}

/* Where controller c is on this host: its v1 hierarchy, else cgroup2; else field is refused. */
int zct_plan_where(struct planner *p, enum zct_res_controller c, const char *field, bool *ret_v2) {
        if (p->v1 & ZCT_RES_BIT(c))
                return *ret_v2 = false, 0;
        if (p->v2 & ZCT_RES_BIT(c))
                return *ret_v2 = true, 0;
        if (c == ZCT_RES_UNIFIED)
                return zct_plan_fail(p, -EOPNOTSUPP, "%s: this host has no cgroup2 hierarchy", field);
        return zct_plan_fail(p, -EOPNOTSUPP, "%s: this host has no %s cgroup controller%s", field,
                             zct_res_controller_name(c, false),
                             c == ZCT_RES_NET_CLS || c == ZCT_RES_NET_PRIO ? " (cgroup v2 has none)" : "");
}

/* Appends a write of the formatted value; a controller on cgroup2 is enabled first. */
int zct_plan_add(struct planner *p, enum zct_res_controller c, bool v2, const char *field, const char *file,
                 const char *fmt, ...) {
        struct zct_res_write *grown, *w;
        va_list ap;
        int r;

        grown = reallocarray(p->w, p->n + 1, sizeof(*p->w));
        if (!grown)
                return -ENOMEM;
        p->w = grown;
        w = &p->w[p->n];
        *w = (struct zct_res_write){ .controller = c, .v2 = v2 };
        va_start(ap, fmt);
        r = vasprintf(&w->value, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        p->n++;
        w->file = strdup(file);
        w->field = strdup(field);
        if (v2 && c != ZCT_RES_UNIFIED)
                w->enable = strdup(zct_res_controller_name(c, true));
        if (!w->file || !w->field || (v2 && c != ZCT_RES_UNIFIED && !w->enable))
                return -ENOMEM;
        return 0;
}

/* The last write's fallback file (when its own does not exist) and value. */
int zct_plan_add_alt(struct planner *p, const char *file, const char *fmt, ...) {
        struct zct_res_write *w = &p->w[p->n - 1];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&w->alt_value, fmt, ap);
        va_end(ap);
        if (r < 0) {
                w->alt_value = NULL;
                return -ENOMEM;
        }
        w->alt_file = strdup(file);
        return w->alt_file ? 0 : -ENOMEM;
}

/* Refuses any member of o not in known (NULL-terminated): an unknown field is never ignored. */
/* The known key that key spells in other case ("CPU", "Cpus"), or NULL. */
static const char *other_case(const char *key, const char *const *known) {
        for (size_t i = 0; known[i]; i++)
                if (strcasecmp(key, known[i]) == 0 && !streq(key, known[i]))
                        return known[i];
        return NULL;
}

/* from's members over into's, an object member by member: Go's decoder fills the struct (or map)
 * it has already; an array or a value replaces. */
static int merge_members(json_object *into, json_object *from) {
        json_object_object_foreach(from, k, v) {
                json_object *cur = NULL;
                int r;

                if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(into, k, &cur) &&
                    json_object_is_type(cur, json_type_object)) {
                        if ((r = merge_members(cur, v)) < 0)
                                return r;
                        continue;
                }
                if (json_object_object_add(into, k, json_object_get(v)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Whether member a comes before member b in o (document order). */
static bool comes_first(json_object *o, const char *a, const char *b) {
        json_object_object_foreach(o, k, v) {
                (void) v;
                if (streq(k, a) || streq(k, b))
                        return streq(k, a);
        }
        return false;
}

/* The member key of o, spelt name in other case, as Go's decoder reads it: renamed to name; where
 * o has name too, the later of the two fills (objects: member by member) or replaces the other. */
static int fold_case(json_object *o, const char *key, const char *name) {
        json_object *val = json_object_get(json_object_object_get(o, key)), *canon = NULL;
        bool both = json_object_object_get_ex(o, name, &canon);
        bool canon_first = both && comes_first(o, name, key);
        bool objects =
                both && json_object_is_type(val, json_type_object) && json_object_is_type(canon, json_type_object);
        int r = 0;

        json_object_object_del(o, key);
        if (objects)
                r = canon_first ? merge_members(canon, val) : merge_members(val, canon);
        /* o[name] stays where it is filled, or comes first and is replaced; else val takes it */
        if (r >= 0 && !(objects && canon_first) && !(both && !objects && !canon_first))
                r = json_object_object_add(o, name, json_object_get(val)) < 0 ? -ENOMEM : 0;
        json_object_put(val);
        return r;
}

int zct_plan_check_keys(struct planner *p, json_object *o, const char *what, const char *const *known) {
        const char *name;

        if (!json_object_is_type(o, json_type_object))
                return zct_plan_fail(p, -EINVAL, "%s: not an object", what);
        /* Go's decoder (runc's) takes a member whose name matches a field's in any case: renamed
         * here to the field's own, one at a time (a rename ends the walk), so that the rest of the
         * generator and the state recorded after it see only the spellings OCI gives. */
again:; /* a label before a declaration: C23 and gcc only */
        json_object_object_foreach(o, k, v) {
                (void) v;
                if ((name = other_case(k, known))) {
                        if (fold_case(o, k, name) < 0)
                                return zct_plan_fail(p, -ENOMEM, "%s: out of memory", what);
                        goto again;
                }
        }
        json_object_object_foreach(o, key, val) {
                bool ok = false;

                (void) val;
                for (size_t i = 0; known[i] && !ok; i++)
                        ok = streq(key, known[i]);
                if (!ok)
                        return zct_plan_fail(p, -EOPNOTSUPP, "%s.%s: not supported by zygote-runc", what, key);
        }
        return 0;
}

/* o[key] as an integer: 1 when present, 0 when absent or null (*ret = 0), or -EINVAL. */
int zct_plan_get_int(struct planner *p, json_object *o, const char *what, const char *key, int64_t *ret) {
        json_object *v = NULL;

        *ret = 0;
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return zct_plan_fail(p, -EINVAL, "%s.%s: not an integer", what, key);
        *ret = json_object_get_int64(v);
        return 1;
}

/* "max" for cgroup2's unlimited (-1), else the number */
const char *zct_plan_v2_value(int64_t v, char *buf, size_t len) {
        if (v < 0)
                return "max";
        snprintf(buf, len, "%lld", (long long) v);
        return buf;
}
