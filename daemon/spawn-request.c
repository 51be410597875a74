/* SPDX-License-Identifier: MIT */
/*
 * Spawn's request: its parameters through one dispatch table, whether the caller may have it at
 * all (the profile and its access list, the task id, the task limits, the capabilities it
 * drops), and the fd map it asks for. The caller is who zd_spawn_identify() says (s->who).
 */
#include "call.h"
#include "daemon.h"
#include "registry.h"
#include "server.h"
#include "spawn-park.h"
#include "spawn-request.h"
#include "spawn-state.h"
#include "spawner.h"
#include "task.h"
#include "util.h"

#define ZD_MAX_TARGET_FD 1024

/* argv[0] is the command: it must be there and not empty. */
static int check_argv(const char *name, json_object *v, void *ret, void *userdata) {
        return json_object_get_string_len(json_object_array_get_idx(v, 0)) > 0 ? 0 : -EINVAL;
}

/* Every env entry is NAME=VALUE with a name. */
static int check_env(const char *name, json_object *v, void *ret, void *userdata) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(v, i));
                if (!strchr(e, '=') || e[0] == '=')
                        return -EINVAL;
        }
        return 0;
}

#define REQ(f) offsetof(struct spawn_req, f)
/* JSON may carry \u0000: such a string would be cut short by execve; the dispatcher refuses it. */
static const struct zc_json_field spawn_fields[] = {
        { .name = "argv",
          .type = ZC_JSON_STRV,
          .offset = REQ(argv),
          .flags = ZC_JSON_MANDATORY | ZC_JSON_NONEMPTY,
          .max = ZD_MAX_ARGV,
          .callback = check_argv },
        { .name = "env",
          .type = ZC_JSON_STRV,
          .offset = REQ(env),
          .flags = ZC_JSON_NULLABLE,
          .max = ZD_MAX_ENV,
          .callback = check_env },
        { .name = "fds", .type = ZC_JSON_ARRAY, .offset = REQ(fds), .flags = ZC_JSON_NULLABLE, .max = ZE_MAX_FDS },
        { .name = "dropCapabilities",
          .type = ZC_JSON_STRV,
          .offset = REQ(drop_caps),
          .flags = ZC_JSON_NULLABLE,
          .max = 64 },
        { .name = "hold", .type = ZC_JSON_BOOL, .offset = REQ(hold), .flags = ZC_JSON_NULLABLE },
        { .name = "outlive", .type = ZC_JSON_BOOL, .offset = REQ(outlive), .flags = ZC_JSON_NULLABLE },
        { .name = "record", .type = ZC_JSON_BOOL, .offset = REQ(record), .flags = ZC_JSON_NULLABLE },
        { .name = "terminal", .type = ZC_JSON_BOOL, .offset = REQ(terminal), .flags = ZC_JSON_NULLABLE },
        { .name = "profile", .type = ZC_JSON_STRING, .offset = REQ(profile), .flags = ZC_JSON_NULLABLE },
        { .name = "cwd", .type = ZC_JSON_STRING, .offset = REQ(cwd), .flags = ZC_JSON_NULLABLE },
        { .name = "user", .type = ZC_JSON_STRING, .offset = REQ(user), .flags = ZC_JSON_NULLABLE },
        { .name = "group", .type = ZC_JSON_STRING, .offset = REQ(group), .flags = ZC_JSON_NULLABLE },
        { .name = "id", .type = ZC_JSON_STRING, .offset = REQ(id), .flags = ZC_JSON_NULLABLE },
        {},
};
#undef REQ

int zd_spawn_parse(struct zd_call *call, struct spawn_req *req) {
        *req = (struct spawn_req){ .profile = "default" };
        int r = zd_call_dispatch(call, spawn_fields, req);
        if (r < 0)
                return r;
        if (req->cwd && req->cwd[0] != '/')
                return zd_call_invalid(call, "cwd");
        if (req->id && !zd_task_id_ok(req->id))
                return zd_call_invalid(call, "id");
        return 0;
}

/* Whether the caller may have this at all: the profile and its access list, the id, the task
 * limits, the capabilities it drops. */
int zd_spawn_authorize(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        const struct ucred *cr = zd_conn_cred(call->conn);
        const struct spawn_req *req = &s->req;

        s->entry = zd_registry_find(d, req->profile);
        if (!s->entry)
                return zd_registry_no_such_profile(call, req->profile);
        const struct zp_profile *p = s->entry->profile;
        s->profile_name = strdup(p->name);
        if (!s->profile_name)
                return -ENOMEM;
        if (!zp_profile_allows(p, s->who.uid, s->who.gid, s->who_groups, s->who_n_groups))
                return zd_call_denied(call, "the profile's access list does not include the caller");
        /* ids are the caller's own (task-names.c): another owner's same id is no conflict */
        if (req->id && (zd_task_find(d, cr->uid, req->id) || zd_spawn_parked_id(d, cr->uid, req->id)))
                return zd_call_failf(call, -EEXIST, ZY_ERROR_TASK_EXISTS, "id", req->id);
        /* an eBPF recording: nothing of the task changes, only the tracer follows it */
        if (req->record && req->hold)
                return zd_call_invalid(call, "record");
        if (req->record && !d->recorder.skel)
                return zd_call_failf(call, -EOPNOTSUPP, ZY_ERROR_RECORDING_UNAVAILABLE, "reason", d->recorder.reason);
        if (zd_tasks_count(d) >= ZD_MAX_TASKS)
                return zd_call_limit(call, "tasks", ZD_MAX_TASKS);
        s->argv_bytes = zd_task_argv_bytes(req->argv);
        size_t argv_bytes = 0;
        /* by the caller's account (server.h): a user's subordinate uids are that user */
        uid_t account = zd_conn_account(call->conn);
        if (account != 0 && zd_tasks_count_account(d, account, &argv_bytes) >= ZD_MAX_TASKS_PER_UID)
                return zd_call_limit(call, "tasks_per_user", ZD_MAX_TASKS_PER_UID);
        if (account != 0 && argv_bytes + s->argv_bytes > ZD_MAX_ARGV_BYTES_PER_UID)
                return zd_call_limit(call, "argv_bytes_per_user", ZD_MAX_ARGV_BYTES_PER_UID);

        /* Capabilities: the profile's bounding set less what the caller drops; only a worker that
         * runs as root holds any of them, and only a privileged zygoted can shrink the set. */
        s->keep = p->caps_keep;
        for (size_t i = 0; req->drop_caps && i < json_object_array_length(req->drop_caps); i++) {
                unsigned cap;
                if (zp_cap_from_name(json_object_get_string(json_object_array_get_idx(req->drop_caps, i)), &cap) < 0 ||
                    cap > d->features.cap_last)
                        return zd_call_invalid(call, "dropCapabilities");
                s->keep &= ~(1ULL << cap);
        }
        return 0;
}

/* The fd map: client fd index -> target number, each target once. */
int zd_spawn_fdmap(struct spawn *s) {
        struct zd_call *call = s->call;
        json_object *fds = s->req.fds;

        s->n_map = fds ? json_object_array_length(fds) : 0;
        s->map = calloc(s->n_map + 1, sizeof(*s->map));
        if (!s->map)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_map; i++) {
                json_object *m = json_object_array_get_idx(fds, i), *f, *t;
                if (!json_object_is_type(m, json_type_object) || json_object_object_length(m) != 2 ||
                    !json_object_object_get_ex(m, "fd", &f) || !json_object_object_get_ex(m, "target", &t) ||
                    !json_object_is_type(f, json_type_int) || !json_object_is_type(t, json_type_int))
                        return zd_call_invalid(call, "fds");
                int64_t fi = json_object_get_int64(f), ti = json_object_get_int64(t);
                if (fi < 0 || (size_t) fi >= call->n_fds || ti < 0 || ti >= ZD_MAX_TARGET_FD)
                        return zd_call_invalid(call, "fds");
                for (size_t j = 0; j < i; j++)
                        if (s->map[j].target == (int) ti)
                                return zd_call_invalid(call, "fds");
                s->map[i] = (struct ze_fdmap){ .src = call->fds[fi], .target = (int) ti };
        }
        if (s->req.terminal) {
                /* The daemon never asks the fd itself whether it is a terminal: isatty() is an
                 * ioctl, which a FUSE file forwards to its server, which may never answer. The
                 * worker's TIOCSCTTY checks it (SpawnFailed, step ctty). */
                bool stdin_mapped = false;
                for (size_t i = 0; i < s->n_map; i++)
                        if (s->map[i].target == 0)
                                stdin_mapped = true;
                if (!stdin_mapped)
                        return zd_call_invalid(call, "terminal");
        }
        return 0;
}
