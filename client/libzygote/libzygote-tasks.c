/* SPDX-License-Identifier: MIT */
/*
 * libzygote, the typed helpers: one function per method of io.zygote.Launcher, each an
 * lzy_call() (libzygote-call.h) with its reply's shape: the interface's fields of the struct.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "libzygote-call.h"
#include "util.h"

/* ---- tasks --------------------------------------------------------------------------------- */

#define T struct zy_task_info
static const struct zc_json_field task_fields[] = {
        /* what runs: */
        F_STR(T, "id", id),
        F_STR(T, "profile", profile),
        F_STR(T, "tier", tier),
        F_STRV(T, "argv", argv),
        F_INT(T, "pid", pid, REQ, 0, INT_MAX),
        F_(UINT, T, "uid", uid, REQ, .max = UINT32_MAX - 1),
        /* how it went: */
        F_STR(T, "state", state_name),
        F_INT(T, "exitCode", exit_code, OPT, 0, 255),
        F_INT(T, "signal", signal, OPT, 1, 127),
        F_TIME(T, "createdAt", created_at, REQ),
        F_TIME(T, "startedAt", started_at, OPT),
        F_TIME(T, "exitedAt", exited_at, OPT),
        F_(STRING, T, "name", name, OPT, .callback = lzy_own_string),
        {}
};
#define TASK_SHAPE \
        .size = sizeof(T), .fields = task_fields, .minus_one = offsetof(T, exit_code) + 1, \
        .names = (const char *const[]){ "", "created", "running", "stopped", NULL }, \
        .name_at = offsetof(T, state_name), .enum_at = offsetof(T, state)
static const struct shape task_shape = { TASK_SHAPE };
static const struct shape task_reply_shape = { .key = "task", TASK_SHAPE }; /* a reply's {"task": Task} */
#undef T

/* A method without parameters whose reply is one struct: the struct's public free function and
 * the lzy_call itself. */
#define DEFINE_QUERY(type, free_fn, call_fn, method, shape) \
        _public_ type *free_fn(type *p) { \
                return lzy_shape_free(&(shape), p); \
        } \
        _public_ int call_fn(zy_conn *c, type **ret) { \
                return ret ? lzy_call(c, method, NULL, 0, &(shape), ret, P_END) : -EINVAL; \
        }

_public_ struct zy_task_info *zy_task_info_free(struct zy_task_info *t) {
        return lzy_shape_free(&task_shape, t);
}

_public_ int zy_task_info_from_json(json_object *o, struct zy_task_info **ret) {
        return lzy_object_from_json(o, &task_shape, NULL, (void **) ret);
}

_public_ int zy_task_info_status(const struct zy_task_info *t) {
        if (!t || t->state != ZY_TASK_STOPPED)
                return -1;
        if (t->signal > 0)
                return 128 + t->signal;
        return t->exit_code >= 0 ? t->exit_code : -1;
}

#define T struct zy_spawn_result
static const struct shape spawn_result_shape = {
        .size = sizeof(T),
        .minus_one = offsetof(T, pidfd) + 1,
        .fd_at = offsetof(T, pidfd) + 1,
        .fields =
                (const struct zc_json_field[]){
                        F_STR(T, "id", id), F_STR(T, "tier", tier), F_INT(T, "pid", pid, REQ, 1, INT_MAX), {} },
};
#undef T

_public_ struct zy_spawn_result *zy_spawn_result_free(struct zy_spawn_result *r) {
        if (r)
                safe_close(r->pidfd);
        return lzy_shape_free(&spawn_result_shape, r);
}

/* Sends each distinct fd of the map once; FdMapping.fd is its position among the sent fds. */
static int spawn_fds(const struct zy_fd_map *map, size_t n_map, json_object **ret, int *ret_fds, size_t *ret_n) {
        _cleanup_(lzy_json_putp) json_object *a = NULL;
        size_t n = 0;

        if (n_map == 0)
                return 0;
        if (!(a = json_object_new_array()))
                return -ENOMEM;
        for (size_t i = 0; i < n_map; i++) {
                json_object *m;
                size_t k;

                if (map[i].fd < 0 || map[i].target < 0)
                        return -EBADF;
                for (k = 0; k < n && ret_fds[k] != map[i].fd; k++)
                        ;
                if (k == n) {
                        if (n == ZY_FDS_MAX)
                                return -EMSGSIZE;
                        ret_fds[n++] = map[i].fd;
                }
                m = json_object_new_object();
                if (!m || json_object_array_add(a, m) < 0) {
                        json_object_put(m);
                        return -ENOMEM;
                }
                if (json_object_object_add(m, "fd", json_object_new_int((int) k)) < 0 ||
                    json_object_object_add(m, "target", json_object_new_int(map[i].target)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        *ret_n = n;
        return 0;
}

/* Sends Spawn (flags: 0 or ZY_CALL_MORE) and reads its first reply. */
static int spawn_call(zy_conn *c, const struct zy_spawn_opts *o, unsigned flags, struct zy_spawn_result **ret) {
        json_object *fd_map = NULL;
        int fds[ZY_FDS_MAX];
        size_t n_fds = 0;
        int r;

        if (!c || !o || !ret || !o->argv || !o->argv[0] || (o->n_fds > 0 && !o->fds))
                return -EINVAL;
        r = spawn_fds(o->fds, o->n_fds, &fd_map, fds, &n_fds);
        if (r < 0)
                return r;
        r = lzy_send_call_fds(c, ZY_METHOD_SPAWN, fds, n_fds, flags, P_STRV, "argv", o->argv, P_STR, "profile",
                              o->profile, P_STRV, "env", o->env, P_STR, "cwd", o->cwd, P_STR, "user", o->user, P_STR,
                              "group", o->group, P_STRV, "dropCapabilities", o->drop_caps, P_STR, "id", o->id, P_JSON,
                              "fds", fd_map, P_BOOL, "hold", o->hold, P_BOOL, "terminal", o->terminal, P_BOOL,
                              "outlive", o->outlive, P_BOOL, "record", o->record, P_END);
        return r < 0 ? r : lzy_read_reply(c, &spawn_result_shape, ret);
}

_public_ int zy_spawn(zy_conn *c, const struct zy_spawn_opts *o, struct zy_spawn_result **ret) {
        return spawn_call(c, o, 0, ret);
}

_public_ int zy_spawn_more(zy_conn *c, const struct zy_spawn_opts *o, struct zy_spawn_result **ret) {
        return spawn_call(c, o, ZY_CALL_MORE, ret);
}

_public_ int zy_start(zy_conn *c, const char *id) {
        return lzy_call(c, ZY_METHOD_START, NULL, 0, NULL, NULL, P_ID, "id", id, P_END);
}

_public_ int zy_kill(zy_conn *c, const char *id, int signal, bool all) {
        if (signal < 0 || signal > 64)
                return -EINVAL;
        return lzy_call(c, ZY_METHOD_KILL, NULL, 0, NULL, NULL, P_ID, "id", id, P_INT, "signal", signal, P_BOOL, "all",
                        all, P_END);
}

_public_ int zy_wait_send(zy_conn *c, const char *id) {
        return lzy_send_call(c, ZY_METHOD_WAIT, 0, P_ID, "id", id, P_END);
}

_public_ int zy_wait_read(zy_conn *c, struct zy_task_info **ret) {
        return ret ? lzy_read_reply(c, &task_reply_shape, ret) : -EINVAL;
}

_public_ int zy_wait(zy_conn *c, const char *id, struct zy_task_info **ret) {
        int r = ret ? zy_wait_send(c, id) : -EINVAL;

        return r < 0 ? r : zy_wait_read(c, ret);
}

_public_ int zy_state(zy_conn *c, const char *id, struct zy_task_info **ret) {
        return ret ? lzy_call(c, ZY_METHOD_STATE, NULL, 0, &task_reply_shape, ret, P_ID, "id", id, P_END) : -EINVAL;
}

_public_ int zy_delete(zy_conn *c, const char *id, struct zy_task_info **ret) {
        return lzy_call(c, ZY_METHOD_DELETE, NULL, 0, &task_reply_shape, ret, P_ID, "id", id, P_END);
}

_public_ int zy_close_io(zy_conn *c, const char *id) {
        return lzy_call(c, ZY_METHOD_CLOSE_IO, NULL, 0, NULL, NULL, P_ID, "id", id, P_END);
}

static const struct shape pids_shape = {
        .size = sizeof(struct pid_list),
        .fields = (const struct zc_json_field[]){ F_LIST(struct pid_list, "pids", pids, lzy_own_pids), {} },
};

_public_ int zy_pids(zy_conn *c, const char *id, pid_t **ret_pids, size_t *ret_n) {
        struct pid_list *l = NULL;
        int r;

        if (!ret_pids || !ret_n)
                return -EINVAL;
        r = lzy_call(c, ZY_METHOD_PIDS, NULL, 0, &pids_shape, &l, P_ID, "id", id, P_END);
        if (r < 0)
                return r;
        *ret_pids = l->pids;
        *ret_n = l->n;
        free(l);
        return 0;
}

static const struct shape task_list_shape = {
        .size = sizeof(struct zy_task_list),
        .element = &task_shape,
        .fields = (const struct zc_json_field[]){ F_LIST(struct zy_task_list, "tasks", tasks, lzy_own_list), {} },
};

_public_ struct zy_task_list *zy_task_list_free(struct zy_task_list *p) {
        return lzy_shape_free(&task_list_shape, p);
}

/* One List reply: a page of tasks, and the "after" of the next page when more follow. */
struct list_page {
        struct zy_task_list l; /* first: "tasks" fills it as a struct list */
        char *next;
};

static const struct shape list_page_shape = {
        .size = sizeof(struct list_page),
        .element = &task_shape,
        .fields = (const struct zc_json_field[]){ F_LIST(struct list_page, "tasks", l, lzy_own_list),
                                                  F_(STRING, struct list_page, "next", next, OPT,
                                                     .callback = lzy_own_string),
                                                  {} },
};

/* Every page, in order: the daemon bounds each reply (about 256 KiB), and "next" says where the
 * next one starts. A "next" that does not move forward is the daemon's error (-EBADMSG), not a
 * loop. */
_public_ int zy_list(zy_conn *c, struct zy_task_list **ret) {
        struct zy_task_list *all;
        char *after = NULL;
        int r = 0;

        if (!ret)
                return -EINVAL;
        if (!(all = calloc(1, sizeof(*all))) || !(all->tasks = calloc(1, sizeof(void *)))) {
                free(all);
                return -ENOMEM;
        }
        for (;;) {
                struct list_page *pg = NULL;
                struct zy_task_info **items;

                r = lzy_call(c, ZY_METHOD_LIST, NULL, 0, &list_page_shape, &pg, P_STR, "after", after, P_END);
                if (r < 0)
                        break;
                items = realloc(all->tasks, (all->n_tasks + pg->l.n_tasks + 1) * sizeof(void *));
                if (!items) {
                        lzy_shape_free(&list_page_shape, pg);
                        r = -ENOMEM;
                        break;
                }
                all->tasks = items;
                memcpy(all->tasks + all->n_tasks, pg->l.tasks, pg->l.n_tasks * sizeof(void *));
                all->n_tasks += pg->l.n_tasks;
                all->tasks[all->n_tasks] = NULL;
                free(pg->l.tasks);
                pg->l.tasks = NULL;
                if (!pg->next) {
                        lzy_shape_free(&list_page_shape, pg);
                        break;
                }
                if ((after && strcmp(pg->next, after) <= 0) || pg->l.n_tasks == 0) {
                        lzy_shape_free(&list_page_shape, pg);
                        r = -EBADMSG;
                        break;
                }
                free(after);
                after = TAKE_PTR(pg->next);
                lzy_shape_free(&list_page_shape, pg);
        }
        free(after);
        if (r < 0) {
                zy_task_list_free(all);
                return r;
        }
        *ret = all;
        return 0;
}

/* ---- events -------------------------------------------------------------------------------- */

#define T struct zy_event
static const struct shape event_shape = {
        .size = sizeof(T),
        .minus_one = offsetof(T, exit_code) + 1,
        .names = (const char *const[]){ "", "create", "start", "exit", "delete", NULL },
        .name_at = offsetof(T, type_name),
        .enum_at = offsetof(T, type),
        .fields = (const struct zc_json_field[]){ F_STR(T, "type", type_name),
                                                  F_STR(T, "id", id),
                                                  F_TIME(T, "time", time, REQ),
                                                  F_INT(T, "pid", pid, OPT, 1, INT_MAX),
                                                  F_INT(T, "exitCode", exit_code, OPT, 0, 255),
                                                  F_INT(T, "signal", signal, OPT, 1, 127),
                                                  {} },
};
#undef T

_public_ struct zy_event *zy_event_free(struct zy_event *e) {
        return lzy_shape_free(&event_shape, e);
}

static void event_freep(struct zy_event **e) {
        zy_event_free(*e);
}

_public_ int zy_events_subscribe(zy_conn *c) {
        return lzy_send_call(c, ZY_METHOD_EVENTS, ZY_CALL_MORE, P_END);
}

_public_ int zy_events_next(zy_conn *c, struct zy_event **ret) {
        _cleanup_(lzy_reply_freep) struct zy_reply *reply = NULL;
        json_object *ev = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = zy_reply_read(c, 0, &reply);
        if (r < 0)
                return r;
        /* The stream's last reply (the daemon ending it) may carry no event. */
        if ((!json_object_object_get_ex(reply->parameters, "event", &ev) || json_object_is_type(ev, json_type_null)) &&
            !reply->continues) {
                *ret = NULL;
                return 0;
        }
        return lzy_object_from_json(ev, &event_shape, reply, (void **) ret);
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

#define T struct zy_profile_info
static const struct shape profile_shape = {
        .size = sizeof(T),
        .fields =
                (const struct zc_json_field[]){ /* the file: */
                                                F_STR(T, "name", name),
                                                F_STR(T, "path", path),
                                                F_STR(T, "hash", hash),
                                                F_STRV(T, "capabilities", capabilities),
                                                F_BOOL(T, "noNewPrivileges", no_new_privileges),
                                                /* its program: */
                                                F_UINT(T, "bpfInstructions", bpf_instructions),
                                                F_UINT(T, "longestPath", longest_path),
                                                F_UINT(T, "skippedSyscalls", skipped_syscalls),
                                                /* how workers get it: */
                                                F_STR(T, "tier", tier),
                                                F_STR(T, "tierReason", tier_reason),
                                                F_INT(T, "referencePid", reference_pid, OPT, 1, INT_MAX),
                                                {} },
};
#undef T

static const struct shape profile_list_shape = {
        .size = sizeof(struct zy_profile_list),
        .element = &profile_shape,
        .fields = (const struct zc_json_field[]){ F_LIST(struct zy_profile_list, "profiles", profiles, lzy_own_list),
                                                  F_(STRV, struct zy_profile_list, "failedFiles", failed_files, OPT,
                                                     .callback = lzy_own_strv),
                                                  {} },
};

DEFINE_QUERY(struct zy_profile_list, zy_profile_list_free, zy_list_profiles, ZY_METHOD_LIST_PROFILES,
             profile_list_shape)

/* "features": {...}, whose members are fields of the status itself (p is its start). */
static int status_features(const char *name, json_object *v, void *p, void *userdata) {
        static const struct zc_json_field fields[] = { F_BOOL(struct zy_daemon_status, "clone_filter", clone_filter),
                                                       F_BOOL(struct zy_daemon_status, "capbset_drop_mask",
                                                              capbset_drop_mask),
                                                       {} };

        return zc_json_dispatch(v, fields, ZC_JSON_ALLOW_UNKNOWN, p, NULL, NULL);
}

#define T struct zy_daemon_status
static const struct shape daemon_status_shape = {
        .size = sizeof(T),
        .element = &profile_shape,
        .fields =
                (const struct zc_json_field[]){
                        F_STR(T, "version", version),
                        { .name = "features", .type = ZC_JSON_CUSTOM, .flags = REQ, .callback = status_features },
                        F_UINT(T, "tasks", tasks),
                        F_UINT(T, "connections", connections),
                        { .name = "own_filter",
                          .type = ZC_JSON_BOOL,
                          .offset = offsetof(T, own_filter),
                          .flags = ZC_JSON_NULLABLE },
                        F_LIST(T, "profiles", profiles, lzy_own_list_ptr),
                        F_(STRV, T, "failedFiles", failed_files, OPT, .callback = lzy_own_strv),
                        {} },
};
#undef T

DEFINE_QUERY(struct zy_daemon_status, zy_daemon_status_free, zy_get_status, ZY_METHOD_GET_STATUS, daemon_status_shape)

#define T struct zy_reload_result
static const struct shape reload_result_shape = {
        .size = sizeof(T),
        .fields = (const struct zc_json_field[]){ F_STRV(T, "loaded", loaded), F_STRV(T, "failed", failed), {} },
};
#undef T

DEFINE_QUERY(struct zy_reload_result, zy_reload_result_free, zy_reload_profiles, ZY_METHOD_RELOAD_PROFILES,
             reload_result_shape)

/* ---- compiled seccomp programs ------------------------------------------------------------- */

#define T struct zy_filter
static const struct shape filter_shape = {
        .size = sizeof(T),
        .minus_one = offsetof(T, memfd) + 1,
        .fd_at = offsetof(T, memfd) + 1,
        .fields = (const struct zc_json_field[]){ F_STR(T, "key", key),
                                                  F_STR(T, "hash", hash),
                                                  F_(UINT64, T, "instructions", n_instructions, REQ, .min = 1,
                                                     .max = 4096),
                                                  F_UINT(T, "flags", flags),
                                                  F_BOOL(T, "cached", cached),
                                                  {} },
};
#undef T

_public_ struct zy_filter *zy_filter_free(struct zy_filter *f) {
        if (f) {
                safe_close(f->memfd);
                free(f->program);
        }
        return lzy_shape_free(&filter_shape, f);
}

static void lzy_filter_freep(struct zy_filter **f) {
        zy_filter_free(*f);
}

/* Reads the program out of the memfd, after checking that it can no longer change. */
static int filter_read(struct zy_filter *f) {
        const unsigned need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
        size_t size = f->n_instructions * 8, done = 0;
        struct stat st;
        int seals;

        if (f->memfd < 0)
                return -EBADMSG;
        seals = fcntl(f->memfd, F_GET_SEALS);
        if (seals < 0 || ((unsigned) seals & need) != need)
                return -EBADMSG;
        if (fstat(f->memfd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size != size)
                return -EBADMSG;
        if (!(f->program = malloc(size)))
                return -ENOMEM;
        while (done < size) {
                ssize_t n = pread(f->memfd, (char *) f->program + done, size - done, (off_t) done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EBADMSG;
                done += (size_t) n;
        }
        return 0;
}

_public_ int zy_get_filter_send(zy_conn *c, const char *profile, json_object *seccomp) {
        if (!c || !profile == !seccomp)
                return -EINVAL;
        return lzy_send_call(c, ZY_METHOD_GET_FILTER, 0, P_STR, "profile", profile, P_JSON, "seccomp",
                             seccomp ? json_object_get(seccomp) : NULL, P_END);
}

_public_ int zy_get_filter_key_send(zy_conn *c, const char *key) {
        if (!c || !key)
                return -EINVAL;
        return lzy_send_call(c, ZY_METHOD_GET_FILTER, 0, P_ID, "key", key, P_END);
}

_public_ int zy_get_filter(zy_conn *c, const char *profile, json_object *seccomp, struct zy_filter **ret) {
        int r = ret ? zy_get_filter_send(c, profile, seccomp) : -EINVAL;

        return r < 0 ? r : zy_get_filter_read(c, ret);
}

_public_ int zy_get_filter_read(zy_conn *c, struct zy_filter **ret) {
        _cleanup_(lzy_filter_freep) struct zy_filter *f = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = lzy_read_reply(c, &filter_shape, &f);
        if (r < 0)
                return r;
        r = filter_read(f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

/* The index among fds[] of fd (appended), as a JSON int for the call; NULL for -1 (absent). */
static json_object *container_fd(int fd, int *fds, size_t *n) {
        if (fd < 0)
                return NULL;
        fds[*n] = fd;
        return json_object_new_int((int) (*n)++);
}

_public_ int zy_container_create(zy_conn *c, const struct zy_container_opts *o, struct zy_spawn_result **ret) {
        _cleanup_close_ int bundle = -EBADF;
        int fds[5];
        size_t n = 0;
        int r;

        if (!c || !o || !ret || !o->id || !o->bundle)
                return -EINVAL;
        bundle = open(o->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (bundle < 0)
                return -errno;
        json_object *jb = container_fd(bundle, fds, &n), *jin = container_fd(o->stdio[0], fds, &n),
                    *jout = container_fd(o->stdio[1], fds, &n), *jerr = container_fd(o->stdio[2], fds, &n),
                    *jcon = container_fd(o->console_socket, fds, &n);
        r = lzy_send_call_fds(c, ZY_METHOD_CREATE_CONTAINER, fds, n, 0, P_ID, "id", o->id, P_JSON, "bundle", jb, P_JSON,
                              "stdin", jin, P_JSON, "stdout", jout, P_JSON, "stderr", jerr, P_JSON, "consoleSocket",
                              jcon, P_END);
        return r < 0 ? r : lzy_read_reply(c, &spawn_result_shape, ret);
}

_public_ int zy_container_exec(zy_conn *c, const struct zy_exec_opts *o, struct zy_spawn_result **ret) {
        json_object *process;
        int fds[4];
        size_t n = 0;
        int r;

        if (!c || !o || !ret || !o->container || !o->id || !o->process_json)
                return -EINVAL;
        process = json_tokener_parse(o->process_json);
        if (!process || !json_object_is_type(process, json_type_object)) {
                json_object_put(process);
                return -EINVAL;
        }
        json_object *jin = container_fd(o->stdio[0], fds, &n), *jout = container_fd(o->stdio[1], fds, &n),
                    *jerr = container_fd(o->stdio[2], fds, &n), *jcon = container_fd(o->console_socket, fds, &n);
        r = lzy_send_call_fds(c, ZY_METHOD_EXEC_CONTAINER, fds, n, 0, P_ID, "container", o->container, P_ID, "id",
                              o->id, P_JSON, "process", process, P_JSON, "stdin", jin, P_JSON, "stdout", jout, P_JSON,
                              "stderr", jerr, P_JSON, "consoleSocket", jcon, P_END);
        return r < 0 ? r : lzy_read_reply(c, &spawn_result_shape, ret);
}
