/* SPDX-License-Identifier: MIT */
/*
 * Spawn's caller: who it is for this call, who its worker runs as, and what confines it. Every
 * decision about identity and privilege is made here, in the parent, from SO_PEERCRED,
 * SO_PEERGROUPS, the caller's process as the kernel shows it (caller.c) and the profile; the
 * child (child.c) only applies the plan.
 *
 * The rule: a caller never gets more than it already has. A non-root caller's worker runs as the
 * caller (uid, gid, groups) with no capabilities; only root holding CAP_SETUID and CAP_SETGID may
 * name another user. Who a root caller is, and the capabilities it holds, are read from the
 * process at each call (it may have dropped them since it connected). An unprivileged zygoted
 * cannot switch ids at all, so it serves only its own user (and root), with no_new_privs always
 * on.
 */
#include <grp.h>
#include <pwd.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "call.h"
#include "caller.h"
#include "daemon.h"
#include "server.h"
#include "spawn-identity.h"
#include "spawn-state.h"
#include "util.h"

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
void zd_spawn_identify(struct spawn *s) {
        struct zd_conn *conn = s->call->conn;
        const struct ucred *cr = zd_conn_cred(conn);

        if (zd_conn_root_at_connect(conn) && s->call->d->privileged) {
                s->who = (struct ucred){ .pid = cr->pid, .uid = s->caller.euid, .gid = s->caller.egid };
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
int zd_spawn_decide_identity(struct spawn *s) {
        struct zd_call *call = s->call;
        const struct spawn_req *req = &s->req;
        struct identity *id = &s->id;
        struct zd_daemon *d = call->d;
        const struct ucred *cr = &s->who;
        size_t n_groups = s->who_n_groups;
        const gid_t *groups = s->who_groups;
        *id = (struct identity){ .uid = cr->uid, .gid = cr->gid };

        if (!d->privileged) {
                /* We can only give what we are. Serve our own user and root (who gets less). */
                if (cr->uid != d->uid && cr->uid != 0)
                        return zd_call_denied(call, "this zygoted runs unprivileged and starts tasks only as its "
                                                    "own user");
                if (req->user || req->group)
                        return zd_call_denied(call, "an unprivileged zygoted cannot switch users or groups");
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
                        return zd_call_denied(call, "only root may run tasks as another user");
                /* another user comes with its own gid and groups */
                if (u != cr->uid && !(setuid_ok && setgid_ok))
                        return zd_call_denied(call, "the caller does not hold CAP_SETUID and CAP_SETGID, which "
                                                    "running a task as another user needs");
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
                        return zd_call_denied(call, "only root may run tasks in a group it is not a member of");
                if (!member && !setgid_ok)
                        return zd_call_denied(call, "the caller does not hold CAP_SETGID, which running a task in "
                                                    "a group it is not a member of needs");
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

__attribute__((format(printf, 2, 3))) static int confined(struct zd_call *call, const char *fmt, ...) {
        char reason[384];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        return zd_call_failf(call, -EACCES, ZY_ERROR_CALLER_CONFINED, "reason", reason);
}

/* Why a caller whose confinement cannot be read is refused, by what zd_caller_read() says. */
static const struct {
        int err;
        const char *reason;
} unreadable[] = {
        { -ESRCH, "the process that connected has exited: what confines it, which its task must carry, cannot be read "
                  "(spawn from the process that connects)" },
        { -EACCES, "what confines the caller cannot be read: zygoted may not look into its namespaces (a process that "
                   "is not dumpable, and a zygoted without CAP_SYS_PTRACE)" },
        { -EXDEV, "the caller's cgroup is in a hierarchy that has no mount in zygoted's mount namespace: its task "
                  "could not be put there" },
        { -EMLINK, "the caller has more than 64 threads: each may hold other capabilities or a filter of its own, and "
                   "zygoted reads at most 64 per call" },
        { -ENOTUNIQ,
          "the caller's threads run with different user or group ids: which of them made the call cannot be told" },
        { -ENODATA,
          "the caller's AppArmor or SELinux label (or zygoted's) cannot be read: its task could not carry it" },
        { -EILSEQ, "the caller's threads run under different AppArmor or SELinux labels: which of them made the call "
                   "cannot be told" },
        { -EREMCHG, "the caller's threads are in different namespaces or cgroups: which of them made the call cannot "
                    "be told" },
};

/* The caller as it is now, read from the kernel at each call: who it is, what it holds and what
 * confines it, for the checks and the plan below. */
int zd_spawn_read_caller(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_caller *c = &s->caller;
        int r;

        r = zd_caller_read(zd_conn_fd(call->conn), zd_conn_peer_cred(call->conn),
                           zd_caller_conn_get(zd_conn_caller(call->conn), call->d->caller_cache), c);
        for (size_t i = 0; i < ELEMENTSOF(unreadable); i++)
                if (r == unreadable[i].err)
                        return confined(call, "%s", unreadable[i].reason);
        if (r < 0)
                return r;
        zd_spawn_identify(s);
        return 0;
}

/* Why a caller's filters cannot be carried, by what zd_caller_read_filters() says. */
static const struct {
        int err;
        const char *reason;
} filters_unread[] = {
        { -ENOTUNIQ, "the caller's threads run under different seccomp filters: which of them made the call cannot "
                     "be told" },
        { -EPERM, "the caller's seccomp filters cannot be read: a thread of it cannot be traced (traced already, "
                  "Yama's ptrace_scope 3, or an LSM refuses)" },
        { -EACCES, "the caller's seccomp filters cannot be read: the kernel gives them only to a tracer with "
                   "CAP_SYS_ADMIN and no filter of its own" },
        { -EIO, "the caller's seccomp filters cannot be read: this kernel lacks PTRACE_SECCOMP_GET_FILTER "
                "(CONFIG_CHECKPOINT_RESTORE)" },
        { -E2BIG, "the caller has more seccomp filters than zygoted carries (64 programs, 32768 instructions)" },
        { -ETIME, "the caller's seccomp filters cannot be read: a thread of it did not stop to be read in time "
                  "(uninterruptible sleep)" },
};

/* The caller's own seccomp programs, for its worker to load under the profile's: 0, or the call
 * refused with the reason and what to do. */
static int carry_filters(struct spawn *s) {
        struct zd_call *call = s->call;
        int r;

        if (!call->d->caller_filters && call->d->privileged)
                return confined(call, "the caller runs under a seccomp filter of its own, which this zygoted does not "
                                      "read (ZYGOTE_DISABLE_FEATURES=caller_filters); its task could not carry it "
                                      "(start zygoted without that, or run the caller without SystemCallFilter= "
                                      "and the options systemd implements with seccomp: docs/SYSTEMD.md)");
        if (!call->d->caller_filters)
                return confined(call, "the caller runs under a seccomp filter of its own, which only a zygoted running "
                                      "as root can read; its task could not carry it (call the system zygoted, or run "
                                      "the caller without SystemCallFilter= and the options systemd implements with "
                                      "seccomp: docs/SYSTEMD.md)");
        r = zd_caller_read_filters(s->caller.pid, s->caller.pidfd, &s->caller_filters);
        for (size_t i = 0; i < ELEMENTSOF(filters_unread); i++)
                if (r == filters_unread[i].err)
                        return confined(call, "%s", filters_unread[i].reason);
        if (r == -ESRCH)
                return confined(call, "%s", unreadable[0].reason);
        if (r < 0)
                return confined(call, "the caller's seccomp filters cannot be read: %s", strerror(-r));
        return 0;
}

/* The caller's own confinement: the task carries it (rlimits, no_new_privs, namespaces, root,
 * cgroups, scheduling, LSM label), or the call is refused with the reason. */
int zd_spawn_confine(struct spawn *s) {
        struct zd_call *call = s->call;
        struct zd_caller *c = &s->caller;

        /* A caller's own filters go with its task: a root zygoted reads them (caller-filter.c)
         * and the worker loads them under the profile's. Unless it has only the filters every
         * process here has, which the task inherits from zygoted too (a container's:
         * own-filter.c). */
        bool shared = c->seccomp_mode == 2 && call->d->shared_filters > 0 &&
                      c->seccomp_filters == call->d->shared_filters && !c->ns_other;
        if (c->seccomp_mode == 1)
                return confined(call, "the caller runs in seccomp's strict mode, which its task could not carry "
                                      "(strict mode allows no execve)");
        if (c->seccomp_mode == 2 && !shared) {
                int r = carry_filters(s);
                if (r != 0)
                        return r;
        }
        /* Landlock: a domain cannot be read from outside the process nor applied to another,
         * and a process may make one with no privilege at all; all that shows of it is the
         * no_new_privs that landlock_restrict_self() needs (root with CAP_SYS_ADMIN can do
         * without it, and is then out of reach). A task would escape the domain: refused,
         * unless the profile says its tasks may run without it. */
        if (c->no_new_privs && !s->entry->profile->nnp_callers_allow)
                return confined(call, "the caller has no_new_privs: it may be confined by Landlock, which cannot "
                                      "be read or carried (a profile with \"noNewPrivsCallers\": \"allow\" admits it "
                                      "without its Landlock domain)");
        /* A pid namespace applies only to children (the task would have to be a grandchild that
         * zygoted does not track), and joining a user namespace would change what every uid of
         * the plan means. */
        if (c->ns_other)
                return confined(call, "the caller is in a %s namespace of its own, which its task cannot join",
                                c->ns_other);
        if (!call->d->privileged && c->ns_join)
                return confined(call,
                                "the caller is in a %s namespace of its own, and this zygoted runs "
                                "unprivileged: it cannot join it",
                                zd_caller_ns_name(c->ns_join & -c->ns_join));
        if (!call->d->privileged && c->root_fd >= 0)
                return confined(call, "the caller runs in a chroot or mount namespace of its own, and this "
                                      "zygoted runs unprivileged: it cannot enter it");
        /* Its task gets a /proc of its own pid namespace; a procfs elsewhere would still show
         * every process of the pid namespace it was mounted in. */
        if (call->d->features.pid_namespace && c->root_fd >= 0 && c->procfs_elsewhere[0])
                return confined(call,
                                "the caller sees a procfs outside /proc (on %s), which would show its "
                                "task the processes outside its sandbox",
                                c->procfs_elsewhere);
        return 0;
}
