/* SPDX-License-Identifier: MIT */
/*
 * Spawn: from a request, the caller's credentials and a profile to one struct ze_plan, and from
 * the plan to a worker in the profile's tier. Every decision about identity and privilege is made
 * here, in the parent, from SO_PEERCRED/SO_PEERGROUPS and the profile; the child (child.c) only
 * applies the plan.
 *
 * The rule: a caller never gets more than it already has. A non-root caller's worker runs as the
 * caller (uid, gid, groups) with no capabilities; only root holding CAP_SETUID and CAP_SETGID may
 * name another user. Who a root caller is, and the capabilities it holds, are read from the
 * process at each call (it may have dropped them since it connected). An
 * unprivileged zygoted cannot switch ids at all, so it serves only its own user (and root), with
 * no_new_privs always on.
 *
 * This file parses, authorizes and plans; the worker is started by spawn-worker.c, through the
 * reference's queue (spawn-park.c) in the inherit tier (spawn-worker.h: the three, layered).
 */
#include <grp.h>
#include <pwd.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "kernel-abi.h"
#include "call.h"
#include "caller.h"
#include "daemon.h"
#include "registry.h"
#include "server.h"
#include "signal-util.h"
#include "spawn-park.h"
#include "spawn-worker.h"
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
        { .name = "argv", .type = ZC_JSON_STRV, .offset = REQ(argv), .flags = ZC_JSON_MANDATORY | ZC_JSON_NONEMPTY,
          .max = ZD_MAX_ARGV, .callback = check_argv },
        { .name = "env", .type = ZC_JSON_STRV, .offset = REQ(env), .flags = ZC_JSON_NULLABLE, .max = ZD_MAX_ENV,
          .callback = check_env },
        { .name = "fds", .type = ZC_JSON_ARRAY, .offset = REQ(fds), .flags = ZC_JSON_NULLABLE, .max = ZE_MAX_FDS },
        { .name = "dropCapabilities", .type = ZC_JSON_STRV, .offset = REQ(drop_caps), .flags = ZC_JSON_NULLABLE,
          .max = 64 },
        { .name = "hold", .type = ZC_JSON_BOOL, .offset = REQ(hold), .flags = ZC_JSON_NULLABLE },
        { .name = "terminal", .type = ZC_JSON_BOOL, .offset = REQ(terminal), .flags = ZC_JSON_NULLABLE },
        { .name = "profile", .type = ZC_JSON_STRING, .offset = REQ(profile), .flags = ZC_JSON_NULLABLE },
        { .name = "cwd", .type = ZC_JSON_STRING, .offset = REQ(cwd), .flags = ZC_JSON_NULLABLE },
        { .name = "user", .type = ZC_JSON_STRING, .offset = REQ(user), .flags = ZC_JSON_NULLABLE },
        { .name = "group", .type = ZC_JSON_STRING, .offset = REQ(group), .flags = ZC_JSON_NULLABLE },
        { .name = "id", .type = ZC_JSON_STRING, .offset = REQ(id), .flags = ZC_JSON_NULLABLE },
        {},
};
#undef REQ

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

static int spawn_parse(struct zd_call *call, struct spawn_req *req) {
        *req = (struct spawn_req) { .profile = "default" };
        int r = zd_call_dispatch(call, spawn_fields, req);
        if (r < 0)
                return r;
        if (req->cwd && req->cwd[0] != '/')
                return zd_call_invalid(call, "cwd");
        if (req->id && !id_ok(req->id))
                return zd_call_invalid(call, "id");
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

static int deny(struct zd_call *call, const char *reason) {
        return zd_call_failf(call, -EPERM, ZY_ERROR_PERMISSION_DENIED, "reason", reason);
}

/* The supplementary groups of a named user, as login would give them; none when they cannot be
 * read. */
static int user_groups(const char *name, gid_t gid, struct identity *id) {
        int n = 64;
        for (;;) {
                gid_t *g = calloc((size_t) n, sizeof(gid_t));
                if (!g)
                        return -ENOMEM;
                int k = n;
                if (getgrouplist(name, gid, g, &k) >= 0) {
                        id->groups = g;
                        id->n_groups = (size_t) k;
                        return 0;
                }
                free(g);
                if (k <= n || k > ZE_MAX_GROUPS)
                        return 0;
                n = k;
        }
}

static bool has_cap(const struct spawn *s, unsigned cap) {
        return s->caller.cap_eff & (1ULL << cap);
}

/* Who the caller is for this call. The kernel recorded the connection's ids at connect(); a root
 * caller may have become less since (setuid to another user, groups dropped): its ids now, from
 * the process (zd_caller_read()), are what it has. Any other caller stays the connection's: a
 * process that connected as a user and then gained more (a setuid-root exec) may share the socket
 * with processes of that user, which must not borrow what it gained. So does root for an
 * unprivileged zygoted, which switches no ids for anyone. */
static void caller_identity(struct spawn *s) {
        struct zd_conn *conn = s->call->conn;
        const struct ucred *cr = zd_conn_cred(conn);

        if (zd_conn_root_at_connect(conn) && s->call->d->privileged) {
                s->who = (struct ucred) { .pid = cr->pid, .uid = s->caller.euid, .gid = s->caller.egid };
                s->who_groups = s->caller.groups;
                s->who_n_groups = s->caller.n_groups;
                /* the connection acts as that now (the task's owner), as after any other call */
                zd_conn_set_acting(conn, s->caller.euid, s->caller.egid);
        } else {
                s->who = *cr;
                s->who_groups = zd_conn_groups(s->call->conn, &s->who_n_groups);
        }
}

/* Decides who the worker runs as, from the caller's credentials; the request only narrows. */
static int decide_identity(struct spawn *s) {
        struct zd_call *call = s->call;
        const struct spawn_req *req = &s->req;
        struct identity *id = &s->id;
        struct zd_daemon *d = call->d;
        const struct ucred *cr = &s->who;
        size_t n_groups = s->who_n_groups;
        const gid_t *groups = s->who_groups;
        *id = (struct identity) { .uid = cr->uid, .gid = cr->gid };

        if (!d->privileged) {
                /* We can only give what we are. Serve our own user and root (who gets less). */
                if (cr->uid != d->uid && cr->uid != 0)
                        return deny(call, "this zygoted runs unprivileged and starts tasks only as its own user");
                if (req->user || req->group)
                        return deny(call, "an unprivileged zygoted cannot switch users or groups");
                id->uid = d->uid;
                id->gid = d->gid;
                return 0;
        }

        id->set_ids = true;
        /* Root may give its task other ids only with the capabilities that let it change its own:
         * a root process without them (a service with an empty bounding set) could not. */
        bool setuid_ok = cr->uid == 0 && has_cap(s, CAP_SETUID);
        bool setgid_ok = cr->uid == 0 && has_cap(s, CAP_SETGID);
        bool named = false;
        _cleanup_free_ char *name = NULL;
        if (req->user) {
                uid_t u;
                gid_t g;
                if (resolve_user(req->user, &u, &g, &name) < 0)
                        return zd_call_invalid(call, "user");
                if (cr->uid != 0 && u != cr->uid)
                        return deny(call, "only root may run tasks as another user");
                /* another user comes with its own gid and groups */
                if (u != cr->uid && !(setuid_ok && setgid_ok))
                        return deny(call, "the caller does not hold CAP_SETUID and CAP_SETGID, which running a "
                                    "task as another user needs");
                /* Root naming a user (itself too) gets the user's login gid and groups, when it may
                 * set groups. A caller naming itself otherwise keeps its own gid (SO_PEERCRED): the
                 * passwd entry's gid, or the uid number where there is none, may be a group it is
                 * not in. */
                named = u != cr->uid || setgid_ok;
                id->uid = u;
                if (named)
                        id->gid = g;
        }
        if (req->group) {
                gid_t g;
                if (resolve_group(req->group, &g) < 0)
                        return zd_call_invalid(call, "group");
                bool member = g == cr->gid;
                for (size_t i = 0; i < n_groups && !member; i++)
                        member = groups[i] == g;
                if (cr->uid != 0 && !member)
                        return deny(call, "only root may run tasks in a group it is not a member of");
                if (!member && !setgid_ok)
                        return deny(call, "the caller does not hold CAP_SETGID, which running a task in a group "
                                    "it is not a member of needs");
                id->gid = g;
        }
        if (named && name)
                return user_groups(name, id->gid, id);
        if (!named && n_groups > 0) {
                /* The caller's own supplementary groups, never more. */
                id->groups = calloc(n_groups, sizeof(gid_t));
                if (!id->groups)
                        return -ENOMEM;
                memcpy(id->groups, groups, n_groups * sizeof(gid_t));
                id->n_groups = n_groups;
        }
        return 0;
}

static uint64_t all_caps(unsigned cap_last) {
        return cap_last >= 63 ? ~0ULL : (1ULL << (cap_last + 1)) - 1;
}

/* Whether the caller may have this at all: the profile and its access list, the id, the task
 * limits, the capabilities it drops. */
static int spawn_authorize(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        const struct ucred *cr = zd_conn_cred(call->conn);
        const struct spawn_req *req = &s->req;

        s->entry = zd_registry_find(d, req->profile);
        if (!s->entry)
                return zd_call_failf(call, -ENOENT, ZY_ERROR_NO_SUCH_PROFILE, "profile", req->profile);
        const struct zp_profile *p = s->entry->profile;
        s->profile_name = strdup(p->name);
        if (!s->profile_name)
                return -ENOMEM;
        if (!zp_profile_allows(p, s->who.uid, s->who.gid, s->who_groups, s->who_n_groups))
                return deny(call, "the profile's access list does not include the caller");
        if (req->id && (zd_task_find(d, req->id) || zd_spawn_parked_id(d, req->id)))
                return zd_call_failf(call, -EEXIST, ZY_ERROR_TASK_EXISTS, "id", req->id);
        if (d->n_tasks >= ZD_MAX_TASKS)
                return zd_call_limit(call, "tasks", ZD_MAX_TASKS);
        s->argv_bytes = zd_task_argv_bytes(req->argv);
        size_t argv_bytes = 0;
        if (cr->uid != 0 && zd_tasks_count_uid(d, cr->uid, &argv_bytes) >= ZD_MAX_TASKS_PER_UID)
                return zd_call_limit(call, "tasks_per_user", ZD_MAX_TASKS_PER_UID);
        if (cr->uid != 0 && argv_bytes + s->argv_bytes > ZD_MAX_ARGV_BYTES_PER_UID)
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
static int spawn_fdmap(struct spawn *s) {
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
                s->map[i] = (struct ze_fdmap) { .src = call->fds[fi], .target = (int) ti };
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

/* argv/envp arrays pointing into the request (alive until the fork is done), and the PATH the
 * worker searches. */
static int spawn_argv(struct spawn *s) {
        const struct spawn_req *req = &s->req;
        size_t argc = json_object_array_length(req->argv);
        size_t envc = req->env ? json_object_array_length(req->env) : 0;
        s->argv = calloc(argc + 1, sizeof(char *));
        s->envp = calloc(envc + 1, sizeof(char *));
        if (!s->argv || !s->envp)
                return -ENOMEM;
        for (size_t i = 0; i < argc; i++)
                s->argv[i] = (char *) json_object_get_string(json_object_array_get_idx(req->argv, i));
        for (size_t i = 0; i < envc; i++) {
                s->envp[i] = (char *) json_object_get_string(json_object_array_get_idx(req->env, i));
                if (strncmp(s->envp[i], "PATH=", 5) == 0)
                        s->search = s->envp[i] + 5;
        }
        s->path_len = strlen(s->search ? s->search : ZC_DEFAULT_PATH) + strlen(s->argv[0]) + 2;
        s->path_buf = malloc(s->path_len);
        return s->path_buf ? 0 : -ENOMEM;
}

__attribute__((format(printf, 2, 3))) static int confined(struct zd_call *call, const char *fmt, ...) {
        char reason[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        return zd_call_failf(call, -EACCES, ZY_ERROR_CALLER_CONFINED, "reason", reason);
}

/* The caller as it is now, read from the kernel at each call: who it is, what it holds and what
 * confines it, for the checks and the plan below. */
static int spawn_read_caller(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_caller *c = &s->caller;
        int r;

        r = zd_caller_read(zd_conn_fd(call->conn), zd_conn_peer_cred(call->conn), c);
        if (r == -ESRCH)
                return confined(call, "the process that connected has exited: what confines it, which its "
                                "task must carry, cannot be read (spawn from the process that connects)");
        if (r == -EACCES)
                return confined(call, "what confines the caller cannot be read: zygoted may not look into "
                                "its namespaces (a process that is not dumpable, and a zygoted without "
                                "CAP_SYS_PTRACE)");
        if (r == -EXDEV)
                return confined(call, "the caller's cgroup is in a hierarchy that has no mount in zygoted's "
                                "mount namespace: its task could not be put there");
        if (r == -EMLINK)
                return confined(call, "the caller has more than 64 threads: each may hold other "
                                "capabilities or a filter of its own, and zygoted reads at most 64 per call");
        if (r == -ENOTUNIQ)
                return confined(call, "the caller's threads run with different user or group ids: which of "
                                "them made the call cannot be told");
        if (r < 0)
                return r;
        caller_identity(s);
        return 0;
}

/* The caller's own confinement: the task carries it (rlimits, no_new_privs, namespaces, root,
 * cgroups, scheduling), or the call is refused with the reason. */
static int spawn_confine(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_caller *c = &s->caller;

        /* A filter cannot be read back from the kernel nor copied to another process: the task
         * would run without it. */
        if (c->seccomp_mode != 0)
                return confined(call, "the caller runs under a seccomp filter of its own%s; its task could not "
                                "carry it", c->seccomp_mode == 1 ? " (strict mode)" : "");
        /* A pid namespace applies only to children (the task would have to be a grandchild that
         * zygoted does not track), and joining a user namespace would change what every uid of
         * the plan means. */
        if (c->ns_other)
                return confined(call, "the caller is in a %s namespace of its own, which its task cannot join",
                                c->ns_other);
        if (!call->d->privileged && c->ns_join)
                return confined(call, "the caller is in a %s namespace of its own, and this zygoted runs "
                                "unprivileged: it cannot join it",
                                zd_caller_ns_name(c->ns_join & -c->ns_join));
        if (!call->d->privileged && c->root_fd >= 0)
                return confined(call, "the caller runs in a chroot or mount namespace of its own, and this "
                                "zygoted runs unprivileged: it cannot enter it");
        /* Its task gets a /proc of its own pid namespace; a procfs elsewhere would still show
         * every process of the pid namespace it was mounted in. */
        if (call->d->features.pid_namespace && c->root_fd >= 0 && c->procfs_elsewhere[0])
                return confined(call, "the caller sees a procfs outside /proc (on %s), which would show its "
                                "task the processes outside its sandbox", c->procfs_elsewhere);
        return 0;
}

/* The caller's scheduling and umask, for step 0c of its worker: nothing to do where they are
 * zygoted's own, which the worker starts with (a reference has those zygoted had when it
 * started it). zygoted's are read at each spawn: cheap system calls, and an administrator may
 * renice it while it runs. An unprivileged zygoted cannot make its worker more important than
 * itself: its task gets the larger nice value of the two. Nor can its worker write its
 * oom_score_adj at all: a process that is not dumpable (zygoted's copies never are) has its
 * /proc files owned by root. Its tasks keep zygoted's (docs/SECURITY.md, known issues). */
static int spawn_sched(struct spawn *s) {
        struct ze_sched own;
        int r;

        r = zd_caller_own_sched(&own);
        if (r < 0)
                return r;
        s->sched = s->caller.sched;
        if (!s->call->d->privileged) {
                s->sched.nice = s->sched.nice > own.nice ? s->sched.nice : own.nice;
                s->sched.oom_score_adj = own.oom_score_adj;
        }
        s->set_sched = memcmp(&s->sched, &own, sizeof(own)) != 0;
        /* a write to /proc saved where nothing changes */
        if (s->sched.oom_score_adj == own.oom_score_adj)
                s->sched.oom_score_adj = ZE_OOM_KEEP;
        return 0;
}

/* The daemon's signal dispositions that are not SIG_DFL (its handlers, SIGPIPE ignored), read
 * once, at the first spawn (main.c sets them all before it serves, nothing later): a worker
 * forked here resets only those, not all 64 (many fewer system calls before exec). */
static const sigset_t *daemon_dispositions(void) {
        static sigset_t set;
        static bool known;

        if (!known) {
                zc_signals_handled(&set);
                known = true;
        }
        return &set;
}

/* The one plain struct the worker applies: fd map, ids, capabilities, filter, pipes. */
static int spawn_plan(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        const struct zp_profile *p = s->entry->profile;
        int r;

        r = spawn_fdmap(s);
        if (r < 0)
                return r;
        r = decide_identity(s);
        if (r < 0)
                return r;
        /* a root connection's process was read before authorize; any other's is read here, after
         * the checks that need only the connection's identity */
        if (s->caller.pidfd < 0) {
                r = spawn_read_caller(s);
                if (r < 0)
                        return r;
        }
        r = spawn_confine(s);
        if (r < 0)
                return r;
        /* Never a capability the caller lacks: the bounding set within the caller's. A task that
         * runs as root gets, at its exec, its bounding set (and inheritable one) as permitted and
         * effective sets: so also within those the caller holds now, which a root caller may have
         * emptied (capsh --drop, a service's CapabilityBoundingSet=) without leaving uid 0. */
        s->keep &= s->caller.cap_bnd;
        if (s->who.uid == 0)
                s->keep &= s->caller.cap_prm & s->caller.cap_eff;
        r = spawn_argv(s);
        if (r < 0)
                return r;
        s->ns = zd_entry_pidns(s->entry, &r);
        if (r < 0)
                return r;

        r = spawn_sched(s);
        if (r < 0)
                return r;

        bool root_worker = s->id.set_ids ? s->id.uid == 0 : d->uid == 0;
        s->capbset_drop = d->privileged ? all_caps(d->features.cap_last) & ~s->keep : 0;
        s->prog = (struct sock_fprog) { .len = (unsigned short) p->bpf_len, .filter = p->bpf };
        s->plan = (struct ze_plan) {
                .argv = s->argv,
                .envp = s->envp,
                .cwd = s->req.cwd ? s->req.cwd : "/",
                .search_path = s->search,
                .fds = s->map,
                .n_fds = s->n_map,
                .hold_fd = -1,
                .ctty = s->req.terminal,
                .set_ids = s->id.set_ids,
                .uid = s->id.uid,
                .gid = s->id.gid,
                .groups = s->id.groups,
                .n_groups = s->id.n_groups,
                .capbset_drop = s->capbset_drop, /* less in the inherit tier: zd_spawn_set_tier() */
                .capbset_mask_prctl = d->features.capbset_drop_mask,
                .cap_last = d->features.cap_last,
                .caps_keep = root_worker ? s->keep : 0,
                .caps_inh_drop = ~s->caller.cap_inh,
                .set_caps = d->privileged,
                /* A non-root caller never gains privileges through its task: no setuid or
                 * file-capability exec, whatever the profile says (and an unprivileged daemon
                 * cannot load a filter without it). */
                .no_new_privs = p->no_new_privs || !d->privileged || s->who.uid != 0 ||
                                s->caller.no_new_privs,
                .filter_flags = p->filter_flags,
                /* the caller's limits replace it, RLIMIT_NOFILE with the others */
                .nofile_soft = s->caller.n_rlimits > 0 ? 0 : d->nofile_soft,
                .n_rlimits = s->caller.n_rlimits,
                .n_cgroups = s->caller.n_cgroups,
                .ns_join = s->caller.ns_join,
                .caller_pidfd = s->caller.pidfd,
                .enter_root = s->caller.root_fd >= 0,
                .root_fd = s->caller.root_fd,
                /* the pid namespace's /proc: through its mount namespace, or for a caller whose
                 * root the worker enters, a private copy with a procfs of its own */
                .join_mntns = s->ns && s->caller.root_fd < 0,
                .mntns_fd = s->ns ? s->ns->mntns_fd : -EBADF,
                .set_sched = s->set_sched,
                .sched = s->sched,
                .own_proc = s->ns && s->caller.root_fd >= 0,
                .prog = &s->prog,
                .signals_reset = daemon_dispositions(),
                .path_buf = s->path_buf,
                .path_buf_len = s->path_len,
        };
        memcpy(s->plan.rlimits, s->caller.rlimits, sizeof(s->plan.rlimits));
        memcpy(s->plan.cgroup_fds, s->caller.cgroup_fds, sizeof(s->plan.cgroup_fds));
        /* clone and inherit need the reference: without it, this spawn loads. A worker that joins
         * the caller's namespaces or root is forked here: the inherit tier's filter, in place
         * before the worker runs, allows no setns nor chroot. */
        enum zd_tier tier = s->entry->tier;
        if ((tier == ZD_TIER_CLONE || tier == ZD_TIER_INHERIT) && !s->entry->ref_up)
                tier = ZD_TIER_LOAD;
        if (tier == ZD_TIER_INHERIT && (s->plan.ns_join || s->plan.enter_root))
                tier = ZD_TIER_LOAD;
        /* a profile whose filter refuses the calls of step 0c: forked here, before any filter */
        if (tier == ZD_TIER_INHERIT && s->plan.set_sched && !p->worker_sched_ok)
                tier = ZD_TIER_LOAD;
        zd_spawn_set_tier(s, tier);
        return zd_spawn_pipes(s);
}

/* The worker: through the reference (inherit: parked until it answers) or forked here (clone,
 * load). 1: parked. */
static int spawn_fork(struct spawn *s) {
        if (s->tier == ZD_TIER_INHERIT) {
                int r = zd_spawn_park(s);
                if (r != 0)
                        return r;
        }
        return zd_spawn_start(s, 0, -EBADF);
}

int zd_spawn(struct zd_call *call) {
        struct spawn *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        *s = (struct spawn){ .call = call, .caller = ZD_CALLER_INIT, .status = { -EBADF, -EBADF },
                             .hold = { -EBADF, -EBADF } };
        r = spawn_parse(call, &s->req);
        /* Who a root connection's process is now (it may have dropped its uid or capabilities
         * since connect) decides what the checks below allow: read it first. Any other
         * connection's identity is the kernel's record, and its process is read with its
         * confinement, after those checks; so is root's by an unprivileged zygoted, which
         * switches no ids for anyone. */
        if (r >= 0 && call->d->privileged && zd_conn_root_at_connect(call->conn))
                r = spawn_read_caller(s);
        else if (r >= 0)
                caller_identity(s);
        if (r >= 0)
                r = spawn_authorize(s);
        if (r >= 0)
                r = spawn_plan(s);
        if (r >= 0)
                r = spawn_fork(s);
        if (r == 1) {
                s->parked = true; /* the reference's reply finishes it */
                return 0;
        }
        if (r < 0)
                r = zd_spawn_fail(s, r);
        zd_spawn_free(s);
        return r;
}
