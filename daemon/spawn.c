/* SPDX-License-Identifier: MIT */
/*
 * Spawn: from a request, the caller's credentials and a profile to one struct zy_plan, and from
 * the plan to a worker in the profile's tier. Every decision about identity and privilege is made
 * here, in the parent, from SO_PEERCRED/SO_PEERGROUPS and the profile; the child (child.c) only
 * applies the plan.
 *
 * The rule: a caller never gets more than it already has. A non-root caller's worker runs as the
 * caller (uid, gid, groups) with no capabilities; only root may name another user. An
 * unprivileged zygoted cannot switch ids at all, so it serves only its own user (and root), with
 * no_new_privs always on.
 */
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <syslog.h>

#include <fcntl.h>
#include <stdio.h>

#include "daemon.h"
#include "util.h"

#define ZY_MAX_TARGET_FD 1024
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct spawn_req {
        json_object *argv;
        const char *profile;
        json_object *env;
        const char *cwd;
        json_object *fds;
        const char *user;
        const char *group;
        json_object *drop_caps;
        const char *id;
        bool hold;
        bool terminal;
};

/* A parameter problem: the name of the offending field for InvalidParameter. */
static const char *bad_param;

static bool string_ok(json_object *o) {
        /* JSON may carry \u0000: such a string would be cut short by execve; refuse it. */
        const char *s = json_object_get_string(o);
        return json_object_is_type(o, json_type_string) &&
               strlen(s) == (size_t) json_object_get_string_len(o);
}

static int parse_string_array(json_object *o, size_t max, bool need_eq, const char *name) {
        if (!json_object_is_type(o, json_type_array) || json_object_array_length(o) > max) {
                bad_param = name;
                return -EINVAL;
        }
        for (size_t i = 0; i < json_object_array_length(o); i++) {
                json_object *s = json_object_array_get_idx(o, i);
                if (!string_ok(s) || (need_eq && !strchr(json_object_get_string(s), '=')) ||
                    (need_eq && json_object_get_string(s)[0] == '=')) {
                        bad_param = name;
                        return -EINVAL;
                }
        }
        return 0;
}

static bool id_ok(const char *id) {
        size_t n = strlen(id);
        if (n == 0 || n > 64)
                return false;
        for (const char *p = id; *p; p++)
                if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
                      *p == '_' || *p == '.' || *p == '-'))
                        return false;
        return id[0] != '.';
}

static int parse_request(json_object *params, struct spawn_req *req) {
        *req = (struct spawn_req) { .profile = "default" };
        if (!json_object_is_type(params, json_type_object)) {
                bad_param = "parameters";
                return -EINVAL;
        }
        json_object_object_foreach(params, key, val) {
                bad_param = key;
                if (streq(key, "argv")) {
                        if (parse_string_array(val, ZY_MAX_ARGV, false, "argv") < 0 ||
                            json_object_array_length(val) == 0 ||
                            json_object_get_string_len(json_object_array_get_idx(val, 0)) == 0)
                                return -EINVAL;
                        req->argv = val;
                } else if (streq(key, "env")) {
                        if (json_object_is_type(val, json_type_null))
                                continue;
                        if (parse_string_array(val, ZY_MAX_ENV, true, "env") < 0)
                                return -EINVAL;
                        req->env = val;
                } else if (streq(key, "fds")) {
                        if (json_object_is_type(val, json_type_null))
                                continue;
                        if (!json_object_is_type(val, json_type_array) ||
                            json_object_array_length(val) > ZY_MAX_FDS)
                                return -EINVAL;
                        req->fds = val;
                } else if (streq(key, "dropCapabilities")) {
                        if (json_object_is_type(val, json_type_null))
                                continue;
                        if (parse_string_array(val, 64, false, "dropCapabilities") < 0)
                                return -EINVAL;
                        req->drop_caps = val;
                } else if (streq(key, "hold") || streq(key, "terminal")) {
                        if (json_object_is_type(val, json_type_null))
                                continue;
                        if (!json_object_is_type(val, json_type_boolean))
                                return -EINVAL;
                        *(streq(key, "hold") ? &req->hold : &req->terminal) = json_object_get_boolean(val);
                } else {
                        const char **dst = streq(key, "profile") ? &req->profile
                                           : streq(key, "cwd")   ? &req->cwd
                                           : streq(key, "user")  ? &req->user
                                           : streq(key, "group") ? &req->group
                                           : streq(key, "id")    ? &req->id
                                                                 : NULL;
                        if (!dst)
                                return -EINVAL; /* unknown field: say which */
                        if (json_object_is_type(val, json_type_null))
                                continue;
                        if (!string_ok(val))
                                return -EINVAL;
                        *dst = json_object_get_string(val);
                }
        }
        if (!req->argv) {
                bad_param = "argv";
                return -EINVAL;
        }
        if (req->cwd && req->cwd[0] != '/') {
                bad_param = "cwd";
                return -EINVAL;
        }
        if (req->id && !id_ok(req->id)) {
                bad_param = "id";
                return -EINVAL;
        }
        return 0;
}

/* Numbers or names. -ESRCH for an unknown name. */
static int resolve_user(const char *s, uid_t *ret_uid, gid_t *ret_gid, char **ret_name) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (*s && !*end && errno == 0 && v < (uid_t) -1) {
                int r = getpwuid_r((uid_t) v, &pw, buf, sizeof(buf), &res);
                *ret_uid = (uid_t) v;
                *ret_gid = res && r == 0 ? res->pw_gid : (gid_t) v;
                *ret_name = res && r == 0 ? strdup(res->pw_name) : NULL;
                return 0;
        }
        if (getpwnam_r(s, &pw, buf, sizeof(buf), &res) != 0 || !res)
                return -ESRCH;
        *ret_uid = res->pw_uid;
        *ret_gid = res->pw_gid;
        *ret_name = strdup(res->pw_name);
        return 0;
}

static int resolve_group(const char *s, gid_t *ret) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (*s && !*end && errno == 0 && v < (gid_t) -1) {
                *ret = (gid_t) v;
                return 0;
        }
        struct group gr, *res = NULL;
        char buf[16384];
        if (getgrnam_r(s, &gr, buf, sizeof(buf), &res) != 0 || !res)
                return -ESRCH;
        *ret = res->gr_gid;
        return 0;
}

struct identity {
        bool set_ids;
        uid_t uid;
        gid_t gid;
        gid_t *groups; /* owned */
        size_t n_groups;
};

/* Decides who the worker runs as. Replies itself on refusal and returns < 0. */
static int decide_identity(struct zy_conn *c, const struct spawn_req *req, struct identity *id) {
        struct zy_daemon *d = c->d;
        const struct ucred *cr = &c->cred;
        *id = (struct identity) { .uid = cr->uid, .gid = cr->gid };

        if (!d->privileged) {
                /* We can only give what we are. Serve our own user and root (who gets less). */
                if (cr->uid != d->uid && cr->uid != 0) {
                        zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason",
                                        "this zygoted runs unprivileged and starts tasks only as its own user");
                        return -EPERM;
                }
                if (req->user || req->group) {
                        zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason",
                                        "an unprivileged zygoted cannot switch users or groups");
                        return -EPERM;
                }
                id->uid = d->uid;
                id->gid = d->gid;
                return 0;
        }

        id->set_ids = true;
        bool named = false;
        _cleanup_free_ char *name = NULL;
        if (req->user) {
                uid_t u;
                gid_t g;
                if (resolve_user(req->user, &u, &g, &name) < 0) {
                        zy_reply_invalid(c, "user");
                        return -EINVAL;
                }
                if (cr->uid != 0 && u != cr->uid) {
                        zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason",
                                        "only root may run tasks as another user");
                        return -EPERM;
                }
                named = u != cr->uid || cr->uid == 0;
                id->uid = u;
                id->gid = g;
        }
        if (req->group) {
                gid_t g;
                if (resolve_group(req->group, &g) < 0) {
                        zy_reply_invalid(c, "group");
                        return -EINVAL;
                }
                bool member = g == cr->gid;
                for (size_t i = 0; i < c->n_groups && !member; i++)
                        member = c->groups[i] == g;
                if (cr->uid != 0 && !member) {
                        zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason",
                                        "only root may run tasks in a group it is not a member of");
                        return -EPERM;
                }
                id->gid = g;
        }
        if (named && name) {
                /* A named user gets that user's groups, as login would give them. */
                int n = 64;
                for (;;) {
                        gid_t *g = calloc((size_t) n, sizeof(gid_t));
                        if (!g)
                                return -ENOMEM;
                        int k = n;
                        if (getgrouplist(name, id->gid, g, &k) >= 0) {
                                id->groups = g;
                                id->n_groups = (size_t) k;
                                break;
                        }
                        free(g);
                        if (k <= n || k > ZY_MAX_GROUPS)
                                break;
                        n = k;
                }
        } else if (!named && c->n_groups > 0) {
                /* The caller's own supplementary groups, never more. */
                id->groups = calloc(c->n_groups, sizeof(gid_t));
                if (!id->groups)
                        return -ENOMEM;
                memcpy(id->groups, c->groups, c->n_groups * sizeof(gid_t));
                id->n_groups = c->n_groups;
        }
        return 0;
}

static uint64_t all_caps(unsigned cap_last) {
        return cap_last >= 63 ? ~0ULL : (1ULL << (cap_last + 1)) - 1;
}

int (*zy_spawn_fork_hook)(const struct zy_plan *plan, pid_t *ret_pid, int *ret_pidfd) = NULL;

static pid_t clone_pidfd(int *ret_pidfd) {
        int pidfd = -1;
        struct clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
        };
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid > 0)
                *ret_pidfd = pidfd;
        return pid;
}

int zy_spawn(struct zy_conn *c, json_object *params, int *fds, size_t n_fds) {
        struct zy_daemon *d = c->d;
        struct spawn_req req;
        _cleanup_free_ char **argv = NULL, **envp = NULL, *path_buf = NULL;
        _cleanup_free_ struct zy_fdmap *map = NULL;
        struct identity id = {};
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, hold[2] = { -EBADF, -EBADF };
        int r;

        if (parse_request(params, &req) < 0) {
                zy_reply_invalid(c, bad_param);
                r = -EINVAL;
                goto finish;
        }

        struct zy_entry *e = zy_registry_find(d, req.profile);
        if (!e) {
                zy_reply_errorf(c, "io.zygote.Launcher.NoSuchProfile", "profile", req.profile);
                r = -ENOENT;
                goto finish;
        }
        const struct zy_profile *p = e->profile;
        if (!zy_profile_allows(p, c->cred.uid, c->cred.gid, c->groups, c->n_groups)) {
                zy_reply_errorf(c, "io.zygote.Launcher.PermissionDenied", "reason",
                                "the profile's access list does not include the caller");
                r = -EPERM;
                goto finish;
        }
        if (req.id && zy_task_find(d, req.id)) {
                zy_reply_errorf(c, "io.zygote.Launcher.TaskExists", "id", req.id);
                r = -EEXIST;
                goto finish;
        }
        if (d->n_tasks >= ZY_MAX_TASKS ||
            (c->cred.uid != 0 && zy_tasks_count_uid(d, c->cred.uid) >= ZY_MAX_TASKS_PER_UID)) {
                json_object *ep = json_object_new_object();
                bool all = d->n_tasks >= ZY_MAX_TASKS;
                json_object_object_add(ep, "limit", json_object_new_string(all ? "tasks" : "tasks_per_user"));
                json_object_object_add(ep, "max", json_object_new_int(all ? ZY_MAX_TASKS : ZY_MAX_TASKS_PER_UID));
                zy_reply_error(c, "io.zygote.Launcher.LimitExceeded", ep);
                r = -EAGAIN;
                goto finish;
        }

        /* Capabilities: the profile's bounding set less what the caller drops; only a worker that
         * runs as root holds any of them, and only a privileged zygoted can shrink the set. */
        uint64_t keep = p->caps_keep;
        if (req.drop_caps)
                for (size_t i = 0; i < json_object_array_length(req.drop_caps); i++) {
                        unsigned cap;
                        if (zy_cap_from_name(json_object_get_string(json_object_array_get_idx(req.drop_caps, i)), &cap) < 0 ||
                            cap > d->features.cap_last) {
                                zy_reply_invalid(c, "dropCapabilities");
                                r = -EINVAL;
                                goto finish;
                        }
                        keep &= ~(1ULL << cap);
                }

        /* The fd map: client fd index -> target number, each target once. */
        size_t n_map = req.fds ? json_object_array_length(req.fds) : 0;
        map = calloc(n_map + 1, sizeof(*map));
        if (!map) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n_map; i++) {
                json_object *m = json_object_array_get_idx(req.fds, i), *f, *t;
                if (!json_object_is_type(m, json_type_object) || json_object_object_length(m) != 2 ||
                    !json_object_object_get_ex(m, "fd", &f) || !json_object_object_get_ex(m, "target", &t) ||
                    !json_object_is_type(f, json_type_int) || !json_object_is_type(t, json_type_int)) {
                        zy_reply_invalid(c, "fds");
                        r = -EINVAL;
                        goto finish;
                }
                int64_t fi = json_object_get_int64(f), ti = json_object_get_int64(t);
                if (fi < 0 || (size_t) fi >= n_fds || ti < 0 || ti >= ZY_MAX_TARGET_FD) {
                        zy_reply_invalid(c, "fds");
                        r = -EINVAL;
                        goto finish;
                }
                for (size_t j = 0; j < i; j++)
                        if (map[j].target == (int) ti) {
                                zy_reply_invalid(c, "fds");
                                r = -EINVAL;
                                goto finish;
                        }
                map[i] = (struct zy_fdmap) { .src = fds[fi], .target = (int) ti };
        }
        if (req.terminal) {
                /* TIOCSCTTY in the worker checks again; this is the clear message. */
                bool tty = false;
                for (size_t i = 0; i < n_map; i++)
                        if (map[i].target == 0)
                                tty = isatty(map[i].src);
                if (!tty) {
                        zy_reply_invalid(c, "terminal");
                        r = -EINVAL;
                        goto finish;
                }
        }

        r = decide_identity(c, &req, &id);
        if (r < 0)
                goto finish; /* replied */

        /* argv/envp arrays pointing into the request: alive until the fork is done. */
        size_t argc = json_object_array_length(req.argv);
        size_t envc = req.env ? json_object_array_length(req.env) : 0;
        argv = calloc(argc + 1, sizeof(char *));
        envp = calloc(envc + 1, sizeof(char *));
        if (!argv || !envp) {
                r = -ENOMEM;
                goto finish;
        }
        const char *search = NULL;
        for (size_t i = 0; i < argc; i++)
                argv[i] = (char *) json_object_get_string(json_object_array_get_idx(req.argv, i));
        for (size_t i = 0; i < envc; i++) {
                envp[i] = (char *) json_object_get_string(json_object_array_get_idx(req.env, i));
                if (strncmp(envp[i], "PATH=", 5) == 0)
                        search = envp[i] + 5;
        }
        size_t path_len = strlen(search ? search : DEFAULT_PATH) + strlen(argv[0]) + 2;
        path_buf = malloc(path_len);
        if (!path_buf) {
                r = -ENOMEM;
                goto finish;
        }

        bool root_worker = id.set_ids ? id.uid == 0 : d->uid == 0;
        uint64_t caps_now = root_worker ? keep : 0;
        struct zy_plan plan = {
                .argv = argv,
                .envp = envp,
                .cwd = req.cwd ? req.cwd : "/",
                .search_path = search,
                .fds = map,
                .n_fds = n_map,
                .hold_fd = -1,
                .ctty = req.terminal,
                .set_ids = id.set_ids,
                .uid = id.uid,
                .gid = id.gid,
                .groups = id.groups,
                .n_groups = id.n_groups,
                .capbset_drop = d->privileged ? all_caps(d->features.cap_last) & ~keep : 0,
                .capbset_mask_prctl = d->features.capbset_drop_mask,
                .cap_last = d->features.cap_last,
                .caps_keep = caps_now,
                .set_caps = d->privileged,
                /* A non-root caller never gains privileges through its task: no setuid or
                 * file-capability exec, whatever the profile says (and an unprivileged daemon
                 * cannot load a filter without it). */
                .no_new_privs = p->no_new_privs || !d->privileged || c->cred.uid != 0,
                .filter_flags = p->filter_flags,
                .nofile_soft = d->nofile_soft,
                .ref_pidfd = -1,
                .path_buf = path_buf,
                .path_buf_len = path_len,
        };
        enum zy_tier tier = e->tier;
        if (tier == ZY_TIER_CLONE || tier == ZY_TIER_INHERIT) {
                if (!e->ref_up)
                        tier = ZY_TIER_LOAD;
        }
        struct sock_fprog prog = { .len = (unsigned short) p->bpf_len, .filter = p->bpf };
        plan.prog = &prog;
        plan.filter_mode = tier == ZY_TIER_CLONE ? ZY_FILTER_CLONE
                           : tier == ZY_TIER_INHERIT ? ZY_FILTER_INHERITED
                                                     : ZY_FILTER_LOAD;
        if (tier == ZY_TIER_CLONE)
                plan.ref_pidfd = e->ref.pidfd;
        /* Without no_new_privs, loading (or cloning) a filter needs CAP_SYS_ADMIN: load it
         * while the worker still has it, before capabilities and ids change. */
        plan.filter_early = !plan.no_new_privs && !(caps_now & (1ULL << CAP_SYS_ADMIN)) &&
                            plan.filter_mode != ZY_FILTER_INHERITED;

        if (pipe2(status, O_CLOEXEC) < 0 || fcntl(status[0], F_SETFL, O_NONBLOCK) < 0) {
                r = negative_errno();
                goto finish;
        }
        plan.status_fd = status[1];
        if (req.hold) {
                if (pipe2(hold, O_CLOEXEC) < 0) {
                        r = negative_errno();
                        goto finish;
                }
                plan.hold_fd = hold[0];
        }

        struct zy_task *t;
        r = zy_task_new(d, req.id, c->cred.uid, &t);
        if (r < 0)
                goto finish;
        t->profile = strdup(p->name);
        t->exe = strdup(argv[0]);
        t->argv = json_object_get(req.argv);
        t->run_uid = id.set_ids ? id.uid : d->uid;

        pid_t pid = -1;
        int pidfd = -EBADF;
        if (tier == ZY_TIER_INHERIT) {
                r = zy_reference_spawn(&e->ref, &plan, &pid, &pidfd);
                if (r < 0) {
                        /* The reference is gone or stuck: this spawn is not lost, it loads. Its
                         * pidfd watcher restarts the reference. */
                        zy_log(LOG_WARNING, "profile %s: reference spawn failed (%s); using the load tier",
                               p->name, strerror(-r));
                        tier = ZY_TIER_LOAD;
                        plan.filter_mode = ZY_FILTER_LOAD;
                        plan.filter_early = !plan.no_new_privs && !(caps_now & (1ULL << CAP_SYS_ADMIN));
                }
        }
        if (tier != ZY_TIER_INHERIT && zy_spawn_fork_hook)
                r = zy_spawn_fork_hook(&plan, &pid, &pidfd);
        else if (tier != ZY_TIER_INHERIT) {
                pid = clone_pidfd(&pidfd);
                if (pid == 0)
                        zy_child_run(&plan); /* never returns */
                if (pid < 0)
                        r = negative_errno();
                else
                        r = 0;
        }
        if (r < 0) {
                zy_task_discard(t);
                goto finish;
        }
        t->tier = tier;
        d->spawned++;
        status[1] = safe_close(status[1]);
        hold[0] = safe_close(hold[0]);
        zy_task_attach(t, pid, pidfd, TAKE_FD(status[0]), TAKE_FD(hold[1]));
        t->pending = c;
        c->task = t;
        r = 0;

finish:
        /* The worker has its copies (or never will): ours go in every case. */
        for (size_t i = 0; i < n_fds; i++)
                safe_close(fds[i]);
        free(id.groups);
        if (r < 0 && c->busy) {
                /* Not answered yet: a resource problem in the daemon, not the caller's fault. */
                json_object *ep = json_object_new_object();
                json_object_object_add(ep, "step", json_object_new_string("fork"));
                json_object_object_add(ep, "errno", json_object_new_int(-r));
                json_object_object_add(ep, "message", json_object_new_string(strerror(-r)));
                zy_reply_error(c, "io.zygote.Launcher.SpawnFailed", ep);
        }
        return r;
}
