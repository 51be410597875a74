/* SPDX-License-Identifier: MIT */
/*
 * Spawn's last step, shared by spawn.c and spawn-park.c (spawn-start.h): the worker forked here
 * or taken from the reference and tracked as a task, a worker the spawn cannot keep, and the
 * spawn's failure and end.
 */
#include <signal.h>
#include <sys/wait.h>

#include "daemon.h"
#include "fork-gate.h"
#include "pidfd-util.h"
#include "server.h"
#include "spawn-reply.h"
#include "spawn-scope.h"
#include "spawn-start.h"
#include "spawn-state.h"
#include "spawner.h"
#include "task.h"
#include "util.h"

int (*zd_spawn_fork_hook)(const struct ze_plan *plan, pid_t *ret_pid, int *ret_pidfd) = NULL;

static void spawn_done(struct spawn *s) {
        free(s->profile_name);
        free(s->argv);
        free(s->envp);
        free(s->path_buf);
        free(s->map);
        free(s->id.groups);
        zd_caller_done(&s->caller);
        zd_caller_filters_done(&s->caller_filters);
        close_pairp(&s->status);
        close_pairp(&s->hold);
}

/* A worker forked for this spawn that it cannot keep (pidfd is -EBADF when none could be opened):
 * its gate closes, so that it never execs, and it is killed and reaped. */
void zd_spawn_drop_worker(struct spawn *s, pid_t pid, int pidfd) {
        s->hold[1] = safe_close(s->hold[1]);
        if (pidfd < 0) {
                /* Our own fds of this spawn are free now: one is enough for its pidfd. */
                s->status[0] = safe_close(s->status[0]);
                pidfd = pidfd_open_pid(pid);
        }
        if (pidfd < 0) {
                /* Still none: by pid, which stays this worker's until we reap it. */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, __WALL);
                return;
        }
        zd_task_reap_orphan(s->call->d, zc_pidref_make(pid, pidfd));
}

/* The worker: forked here (clone, load: pid 0) or by the reference (inherit: pid and its pidfd,
 * waiting at its gate), then tracked as a task that answers the Spawn. The gate opens only once
 * the task is attached: a worker this spawn cannot keep never execs. */
int zd_spawn_start(struct spawn *s, pid_t pid, int pidfd) {
        struct zd_call *call = s->call;
        struct zd_daemon *d = call->d;
        struct zd_conn *c = call->conn;
        struct zd_task *t;
        int r;

        r = zd_task_new(d, s->req.id, zd_conn_cred(c)->uid, &t);
        if (r < 0) {
                if (pid > 0)
                        zd_spawn_drop_worker(s, pid, pidfd);
                return r;
        }
        t->profile = strdup(s->profile_name);
        t->exe = strdup(s->argv[0]);
        t->argv = json_object_get(s->req.argv);
        t->argv_bytes = s->argv_bytes;
        t->account = zd_conn_account(c);
        t->run_uid = s->id.set_ids ? s->id.uid : d->uid;

        if (pid > 0) {
                if (s->plan.hold_quiet && !s->scope && !s->req.record) {
                        /* EPIPE: it died already; its pidfd and status pipe say how */
                        ssize_t n = write(s->hold[1], "", 1);
                        (void) n;
                        s->hold[1] = safe_close(s->hold[1]);
                }
        } else {
                /* the child copies our fd table: no other caller's fd may be in it */
                zd_fork_gate();
                if (zd_spawn_fork_hook)
                        r = zd_spawn_fork_hook(&s->plan, &pid, &pidfd);
                else {
                        /* born in the profile's pid namespace (a plain fork without one) */
                        pid = zr_pidns_clone(s->ns, &pidfd);
                        if (pid == 0)
                                ze_child_run(&s->plan); /* never returns */
                        r = pid < 0 ? (int) pid : 0;
                }
        }
        if (r < 0) {
                zd_task_discard(t);
                return r;
        }
        /* the worker waits at its gate, to exec only once it is followed; its calls count from
         * that execve (its steps until the gate may still be running now) */
        if (s->req.record) {
                r = zd_recorder_begin(&d->recorder, pid, t->account, ZD_RECORD_FROM_EXEC, t, &t->record_id);
                if (r < 0) {
                        zd_spawn_drop_worker(s, pid, pidfd);
                        zd_task_discard(t);
                        if (r == -EUSERS)
                                return zd_call_limit(call, "recordings_per_user", ZD_RECORDINGS_PER_UID);
                        return zd_call_failf(call, r, ZY_ERROR_RECORDING_UNAVAILABLE, "reason",
                                             r == -EAGAIN ? "64 recordings under way" : strerror(-r));
                }
        }
        t->tier = s->tier;
        d->spawned++;
        s->status[1] = safe_close(s->status[1]);
        s->hold[0] = safe_close(s->hold[0]);
        int gate = s->scope || s->req.record ? TAKE_FD(s->hold[1]) : -EBADF;
        zd_task_attach(t, zc_pidref_make(pid, pidfd), TAKE_FD(s->status[0]), TAKE_FD(s->hold[1]), c);
        if (gate >= 0 && s->scope)
                zd_spawn_scope_begin(s, t, gate);
        else if (gate >= 0) {
                /* EPIPE: it died already; its pidfd and status pipe say how */
                ssize_t n = write(gate, "", 1);
                (void) n;
                safe_close(gate);
        }
        return 0;
}

void zd_spawn_free(struct spawn *s) {
        spawn_done(s);
        free(s);
}

/* A failed spawn's answer, now: the dispatcher's for a call still in its handler, ours for a
 * parked one. Not the caller's fault when no error was recorded: a resource problem in the
 * daemon. */
int zd_spawn_fail(struct spawn *s, int r) {
        struct zd_call *call = s->call;

        if (!call->error)
                r = zd_spawn_fail_call(call, r, ZD_SPAWN_STEP_FORK, NULL);
        if (s->parked)
                zd_spawn_reply_recorded(call);
        return r;
}
