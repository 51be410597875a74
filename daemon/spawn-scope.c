/* SPDX-License-Identifier: MIT */
/*
 * Where a task lives when it cannot or must not live in its caller's cgroup (spawn-state.h's
 * facet): in a scope unit of its own, which the service manager makes (scope.c) while the worker
 * waits at its gate, just before execve.
 *
 * Two cases. The caller asked the task to outlive it ("outlive": `launchctl run --detach`): a
 * task in its caller's cgroup is killed when the caller's unit stops (a systemd-run service, a
 * cron job's or an SSH session's scope), so it gets a scope in one slice shared by all the
 * detached tasks of the caller's unit, made below the slice the manager says that unit is in
 * (whose limits still count it) and carrying every limit and access rule of the unit's own, or
 * it is refused (scope.c, scope-unit.c); a caller in a login session of the system manager, served
 * by a user's zygoted, gets the session's limits in the user's manager. Or a user's zygoted serves a caller whose cgroup it
 * may not join (a login session's scope belongs to root): the task gets a scope of the user's
 * manager, as `systemd-run --user --scope` would. Without a service manager neither happens:
 * the task stays where its caller is, which no unit's end can take away.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "call.h"
#include "daemon.h"
#include "log.h"
#include "scope.h"
#include "spawn-scope.h"
#include "spawn-state.h"
#include "task.h"
#include "util.h"

/* Whether the worker can join every cgroup of its caller's: an unprivileged zygoted needs write
 * access to their cgroup.procs (and the kernel may ask more of a common ancestor: the worker's
 * own step still tells). */
static bool caller_cgroups_joinable(const struct spawn *s) {
        for (size_t i = 0; i < s->caller.n_cgroups; i++)
                if (faccessat(s->caller.cgroup_fds[i], "cgroup.procs", W_OK, AT_EACCESS) < 0)
                        return false;
        return true;
}

int zd_spawn_place(struct spawn *s) {
        struct zd_daemon *d = s->call->d;

        if (!d->privileged && !caller_cgroups_joinable(s) && zd_scope_available(d))
                s->scope = true;
        if (s->req.outlive && zd_scope_available(d))
                s->scope = true;
        /* The manager moves the worker, which then must not join its caller's cgroups: that
         * step could come after the move and undo it. Its cgroups are the scope's, in the
         * hierarchies the manager keeps for it, zygoted's in any other. */
        if (s->scope) {
                for (size_t i = 0; i < s->caller.n_cgroups; i++)
                        s->caller.cgroup_fds[i] = safe_close(s->caller.cgroup_fds[i]);
                s->caller.n_cgroups = 0;
        }
        if (s->scope && s->req.hold)
                return zd_call_failf(s->call, -EINVAL, ZY_ERROR_INVALID_PARAMETER, "parameter",
                                     s->req.outlive ? "outlive" : "hold");
        return 0;
}

static void on_scope(struct zd_daemon *d, const char *id, pid_t pid, int r, const char *error) {
        struct zd_task *t = zd_task_find_key(d, id);

        if (!t || t->pidref.pid != pid || t->scope_gate < 0)
                return; /* gone meanwhile (killed, its worker dead): nothing waits */
        if (r < 0) {
                zd_log(LOG_WARNING, "task %s: no scope unit for it: %s", id, error ? error : strerror(-r));
                t->gate_failure = (struct ze_status){ .step = ZE_STEP_SCOPE, .err = -r, .index = -1 };
                free(t->gate_message);
                t->gate_message = error ? strdup(error) : NULL;
        } else {
                ssize_t n = write(t->scope_gate, "", 1);
                (void) n; /* EPIPE: it died already; its pidfd and status pipe say how */
        }
        t->scope_gate = safe_close(t->scope_gate);
}

/* The scope takes after the caller's unit, which the manager finds from the caller's cgroup
 * (scope.c, scope-unit.c): its slice and its limits, or the task is refused. A task that is to
 * outlive its caller must find that unit; a user's zygoted that may not join a caller outside
 * its manager's tree (a login session's scope) puts it in its manager's default slice, as
 * before (docs/SECURITY.md says what that loses). */
void zd_spawn_scope_begin(struct spawn *s, struct zd_task *t, int gate) {
        struct zd_daemon *d = s->call->d;
        const char *cgroup = s->caller.unit_cgroup;
        char what[256];
        int r;

        snprintf(what, sizeof(what), "zygote: task %s of uid %u", t->id, (unsigned) zd_conn_cred(s->call->conn)->uid);
        t->scope_gate = gate;
        /* On a hybrid host the manager knows units by name=systemd, which systemd keeps equal to
         * the unified hierarchy for every process it placed: a caller elsewhere in the unified
         * one moved itself there, in a subtree delegated to its unit, where BPF programs of its
         * delegate may hold it. */
        if (s->req.outlive && cgroup[0] && s->caller.unified_cgroup[0] &&
            strcmp(cgroup, s->caller.unified_cgroup) != 0) {
                char why[1200];
                snprintf(why, sizeof(why),
                         "the caller's cgroup %s in the unified hierarchy is not its unit's cgroup %s: it is in a "
                         "subtree delegated to its unit, whose delegate's limits cannot be carried",
                         s->caller.unified_cgroup, cgroup);
                on_scope(d, t->key, t->pidref.pid, -EPERM, why);
                return;
        }
        if (cgroup[0])
                r = zd_scope_start_for(d, "task", t->pidref.pid, cgroup, s->req.outlive, what, t->key, on_scope);
        else if (!s->req.outlive)
                r = zd_scope_start(d, "task", t->pidref.pid, NULL, what, t->key, on_scope);
        else {
                on_scope(d, t->key, t->pidref.pid, -ESRCH,
                         "the caller's cgroup is not known: its unit cannot be found");
                return;
        }
        if (r < 0)
                on_scope(d, t->key, t->pidref.pid, r, NULL);
}
