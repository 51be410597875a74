/* SPDX-License-Identifier: MIT */
/*
 * A task's name: an id in its owner's namespace. Every uid (as zygoted sees it) names its tasks
 * in a namespace of its own, root's included, so that no caller can take, block or learn a name
 * of another's: an unprivileged user who spawns "web123" first does not make root's
 * CreateContainer "web123" fail, and TaskExists only ever answers about the caller's own names.
 *
 * The table's key is "OWNER:ID" (ids never hold ':', zd_task_id_ok(); task.c makes it). A caller names its own
 * tasks by their id; root, who may act on every task, names another owner's as "OWNER:ID" (what
 * List gives it as "name"); a plain id from root is root's own. Another caller's "OWNER:ID" of
 * an owner not itself is no task of its: NoSuchTask, as for a name nobody has.
 *
 * Also the per-owner count and List's pages, which go by the same names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "task.h"
#include "util.h"
#include "zygote-protocol.h"

/* "OWNER:ID" into its parts; -EINVAL when name is not of that form. */
static int name_parse(const char *name, uid_t *ret_owner, const char **ret_id) {
        const char *colon = strchr(name, ':');
        char *end;

        if (!colon || colon == name || colon[1] == 0)
                return -EINVAL;
        errno = 0;
        unsigned long v = strtoul(name, &end, 10);
        if (errno || end != colon || name[0] < '0' || name[0] > '9' || v > UINT32_MAX - 1)
                return -EINVAL;
        *ret_owner = (uid_t) v;
        *ret_id = colon + 1;
        return 0;
}

struct zd_task *zd_task_lookup(struct zd_daemon *d, uid_t caller, bool any_owner, const char *name) {
        uid_t owner;
        const char *id;

        if (name_parse(name, &owner, &id) < 0)
                return zd_task_find(d, caller, name);
        if (!any_owner && owner != caller)
                return NULL;
        return zd_task_find(d, owner, id);
}

unsigned zd_tasks_count_account(struct zd_daemon *d, uid_t account, size_t *ret_argv_bytes) {
        unsigned n = 0;
        size_t bytes = 0;
        struct lh_entry *e;
        lh_foreach(d->tasks, e) {
                const struct zd_task *t = lh_entry_v(e);
                if (t->account == account) {
                        n++;
                        bytes += t->argv_bytes;
                }
        }
        if (ret_argv_bytes)
                *ret_argv_bytes = bytes;
        return n;
}

/* List's order: by id, then by owner (root's list holds one id once per owner). */
static int order(const char *id_a, uid_t owner_a, const char *id_b, uid_t owner_b) {
        int c = strcmp(id_a, id_b);
        return c ? c : owner_a < owner_b ? -1 : owner_a > owner_b;
}

static int by_name(const void *a, const void *b) {
        const struct zd_task *x = *(const struct zd_task *const *) a, *y = *(const struct zd_task *const *) b;
        return order(x->id, x->uid, y->id, y->uid);
}

/* Whether t comes after the cursor, a name as the caller gives it: "ID" (its own) or
 * "OWNER:ID". */
static bool after_cursor(const struct zd_task *t, uid_t caller, const char *after) {
        uid_t owner = caller;
        const char *id = after;

        if (!after)
                return true;
        (void) name_parse(after, &owner, &id); /* else: a plain id, the caller's own */
        return order(t->id, t->uid, id, owner) > 0;
}

json_object *zd_tasks_list(struct zd_daemon *d, bool all, uid_t uid, const char *after) {
        struct lh_entry *e;
        size_t n = 0, size = 0, i;
        _cleanup_free_ const struct zd_task **page = calloc(d->n_tasks + 1, sizeof(*page));
        if (!page)
                return NULL;
        lh_foreach(d->tasks, e) {
                const struct zd_task *task = lh_entry_v(e);
                if ((all || task->uid == uid) && after_cursor(task, uid, after) && n < d->n_tasks)
                        page[n++] = task;
        }
        qsort(page, n, sizeof(*page), by_name);
        json_object *tasks = json_object_new_array();
        for (i = 0; i < n; i++) {
                size += page[i]->argv_bytes + ZD_TASK_JSON_MAX_OVERHEAD;
                if (i > 0 && size > ZD_LIST_PAGE_BYTES)
                        break;
                json_object_array_add(tasks, zd_task_to_json(page[i]));
        }
        json_object *p = json_object_new_object();
        json_object_object_add(p, "tasks", tasks);
        /* the last one as the caller names it: its own by id, another owner's as OWNER:ID */
        if (i < n)
                json_object_object_add(
                        p, "next",
                        json_object_new_string(page[i - 1]->uid == uid ? page[i - 1]->id : page[i - 1]->key));
        return p;
}
