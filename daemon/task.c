/* SPDX-License-Identifier: MIT */
/*
 * The task table. A task is a worker process known by its pidfd, from fork to Delete:
 *
 *   STARTING --status EOF--> RUNNING --pidfd readable--> STOPPED --Delete--> gone
 *      |  \--HELD record--> CREATED --Start, status EOF--> RUNNING
 *      \--failure record--> (hidden at once, reaped when its pidfd says so)
 *
 * Tasks are kept in json-c's linkhash keyed by "OWNER:ID", an id in its owner's namespace
 * (task-names.c). A task that leaves the table before its
 * process is reaped (a failed spawn, Delete of a created task) stays "orphaned" until its pidfd
 * fires, so that no zombie is left and no pid is signalled after reuse.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include "daemon.h"
#include "events.h"
#include "log.h"
#include "pidfd-util.h"
#include "sd.h"
#include "server.h"
#include "spawn-reply.h"
#include "task-exe.h"
#include "task-fdname.h"
#include "task.h"
#include "tier.h"
#include "util.h"
#include "zygote-protocol.h"

const char *zd_task_state_to_string(enum zd_task_state s) {
        switch (s) {
        case ZD_TASK_STARTING:
                return "starting";
        case ZD_TASK_CREATED:
                return "created";
        case ZD_TASK_RUNNING:
                return "running";
        case ZD_TASK_STOPPED:
                return "stopped";
        }
        return "unknown";
}

/* The audit trail: one line per start and one per exit (and one when a held task is created),
 * saying who launched what, as whom, with which profile and tier. In the journal they carry
 * ZYGOTE_TASK, ZYGOTE_EVENT, ZYGOTE_PROFILE, ZYGOTE_TIER, ZYGOTE_UID (the caller),
 * ZYGOTE_RUN_UID, ZYGOTE_PID, ZYGOTE_EXE (the path executed, task-exe.c) and, on exit, ZYGOTE_EXIT (the code, or 128+N for
 * signal N) and ZYGOTE_SIGNAL. The arguments are left out on purpose: they may hold secrets. */
static void task_log(int priority, const struct zd_task *t, const char *what) {
        if (!zd_log_enabled(priority))
                return;
        int saved = errno;
        char result[64] = "";
        if (t->exited) {
                if (t->status_unknown)
                        snprintf(result, sizeof(result), " status=unknown");
                else if (t->signal)
                        snprintf(result, sizeof(result), " signal=%d", t->signal);
                else
                        snprintf(result, sizeof(result), " status=%d", t->exit_code);
        }
        const char *exe = t->exe ? t->exe : "?";
        const char *profile = t->profile ? t->profile : "?";
        const char *tier = zd_tier_to_string(t->tier);
        char line[1024];
        snprintf(line, sizeof(line), "task %s %s: uid=%u run_uid=%u pid=%d profile=%s tier=%s exe=%s%s%s", t->id, what,
                 (unsigned) t->uid, (unsigned) t->run_uid, (int) t->pidref.pid, profile, tier, exe, result,
                 t->adopted ? " (adopted)" : "");
        struct zd_log_fields f = {};
        zd_log_field(&f, "ZYGOTE_TASK=%s", t->id);
        zd_log_field(&f, "ZYGOTE_EVENT=%s", what);
        zd_log_field(&f, "ZYGOTE_PROFILE=%s", profile);
        zd_log_field(&f, "ZYGOTE_TIER=%s", tier);
        zd_log_field(&f, "ZYGOTE_UID=%u", (unsigned) t->uid);
        zd_log_field(&f, "ZYGOTE_RUN_UID=%u", (unsigned) t->run_uid);
        zd_log_field(&f, "ZYGOTE_PID=%d", (int) t->pidref.pid);
        zd_log_field(&f, "ZYGOTE_EXE=%s", exe);
        if (t->exited && !t->status_unknown) {
                zd_log_field(&f, "ZYGOTE_EXIT=%d", t->signal ? 128 + t->signal : t->exit_code);
                if (t->signal)
                        zd_log_field(&f, "ZYGOTE_SIGNAL=%d", t->signal);
        }
        zd_log_struct(priority, &f, line);
        errno = saved;
}

/* ---- the fd store ------------------------------------------------------------------------- */

/* The task's pidfd goes to systemd's fd store (without polling: see sd.c), so that a restarted
 * zygoted adopts it (adopt.c). */
static void task_store(struct zd_task *t) {
        if (!zd_sd_enabled() || t->pidref.fd < 0 || t->fd_name)
                return;
        _cleanup_free_ char *name = NULL;
        /* Rounded, not truncated: an adopted task's created_at is ms / 1000.0, which must give
         * back the same ms. */
        struct zd_stored_task s = {
                .owner = (unsigned) t->uid,
                .run_uid = (unsigned) t->run_uid,
                .pid = (int) t->pidref.pid,
                .tier = t->tier,
                .created_ms = (unsigned long long) (t->created_at * 1000.0 + 0.5),
                .profile = t->profile ? t->profile : (char *) "",
                .id = t->id,
                .container = t->container,
        };
        int r = zd_task_fdname_format(&s, &name);
        if (r < 0) {
                zd_log(LOG_WARNING, "task %s: not put in the fd store (%s): a restart of zygoted will not adopt it",
                       t->id, strerror(-r));
                return;
        }
        r = zd_sd_fdstore_add(name, t->pidref.fd, false);
        if (r <= 0) {
                zd_log(LOG_WARNING,
                       "task %s: sending its pidfd to the fd store failed (%s): a restart of zygoted "
                       "will not adopt it",
                       t->id, r < 0 ? strerror(-r) : "no NOTIFY_SOCKET");
                return;
        }
        t->fd_name = TAKE_PTR(name);
}

static void task_forget(struct zd_task *t) {
        if (!t->fd_name)
                return;
        /* Shutting down: the tasks go on, and their pidfds must stay in the store for the next
         * zygoted. Only our view of them is being freed. */
        if (t->d->stopping)
                return;
        zd_sd_fdstore_remove(t->fd_name);
        free(t->fd_name);
        t->fd_name = NULL;
}

int zd_tasks_init(struct zd_daemon *d) {
        d->tasks = lh_kchar_table_new(1024, NULL);
        return d->tasks ? 0 : -ENOMEM;
}

int zd_task_key(char *buf, size_t size, uid_t owner, const char *id) {
        int n = snprintf(buf, size, "%u:%s", (unsigned) owner, id);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

struct zd_task *zd_task_find(struct zd_daemon *d, uid_t owner, const char *id) {
        char key[ZD_TASK_KEY_MAX];

        if (zd_task_key(key, sizeof(key), owner, id) < 0)
                return NULL;
        return zd_task_find_key(d, key);
}

struct zd_task *zd_task_find_key(struct zd_daemon *d, const char *key) {
        void *v = NULL;
        if (!lh_table_lookup_ex(d->tasks, key, &v))
                return NULL;
        return v;
}

unsigned zd_tasks_count(const struct zd_daemon *d) {
        return d->n_tasks;
}

size_t zd_task_argv_bytes(json_object *argv) {
        size_t n = 2; /* [] */
        for (size_t i = 0; i < json_object_array_length(argv); i++) {
                json_object *v = json_object_array_get_idx(argv, i);
                const unsigned char *s = (const unsigned char *) json_object_get_string(v);
                size_t len = (size_t) json_object_get_string_len(v);
                n += 3; /* "", */
                for (size_t k = 0; k < len; k++)
                        n += s[k] < 0x20 ? 6 : (s[k] == '"' || s[k] == '\\' || s[k] == '/') ? 2 : 1;
        }
        return n;
}

static void task_free(struct zd_task *t) {
        struct zd_daemon *d = t->d;
        if (t->dying_prev) {
                *t->dying_prev = t->dying_next;
                if (t->dying_next)
                        t->dying_next->dying_prev = t->dying_prev;
        }
        ev_io_stop(d->loop, &t->pid_watch);
        ev_io_stop(d->loop, &t->status_watch);
        zc_pidref_done(&t->pidref);
        safe_close(t->status_fd);
        safe_close(t->hold_fd);
        safe_close(t->scope_gate);
        zd_recorder_cancel(&d->recorder, t->record_id);
        json_object_put(t->record);
        free(t->record_out);
        free(t->record_in);
        free(t->gate_message);
        while (t->waiters) {
                struct zd_waiter *w = t->waiters;
                t->waiters = w->next;
                zd_conn_set_data(w->conn, NULL);
                free(w);
        }
        if (t->pending)
                zd_conn_set_data(t->pending, NULL);
        if (t->spawner)
                zd_conn_set_data(t->spawner, NULL);
        json_object_put(t->argv);
        free(t->fd_name);
        free(t->key);
        free(t->id);
        free(t->profile);
        free(t->exe);
        free(t);
}

static void task_unlink(struct zd_task *t) {
        task_forget(t);
        if (!t->in_table)
                return;
        lh_table_delete(t->d->tasks, t->key);
        t->in_table = false;
        t->d->n_tasks--;
}

/* A task out of the table whose process has not been seen to exit (a failed spawn, a deleted
 * created task, a worker killed at its gate): kept on the dying list until its pidfd fires, so
 * that a daemon stopping before then frees it too (zd_tasks_free). */
static void task_to_dying(struct zd_task *t) {
        if (t->dying_prev)
                return;
        t->dying_next = t->d->dying;
        if (t->dying_next)
                t->dying_next->dying_prev = &t->dying_next;
        t->dying_prev = &t->d->dying;
        t->d->dying = t;
}

int zd_task_new(struct zd_daemon *d, const char *id, uid_t owner, struct zd_task **ret) {
        char buf[32], key[ZD_TASK_KEY_MAX];
        if (!id) {
                do
                        snprintf(buf, sizeof(buf), "t%lu", ++d->next_task);
                while (zd_task_find(d, owner, buf));
                id = buf;
        } else if (zd_task_find(d, owner, id))
                return -EEXIST; /* in owner's namespace only: no one else's names count */
        if (zd_task_key(key, sizeof(key), owner, id) < 0)
                return -EINVAL;
        struct zd_task *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->d = d;
        t->uid = t->account = owner;
        t->pidref = ZC_PIDREF_NULL;
        t->status_fd = t->hold_fd = t->scope_gate = -EBADF;
        t->created_at = zd_now();
        t->id = strdup(id);
        t->key = strdup(key);
        if (!t->id || !t->key || lh_table_insert(d->tasks, t->key, t) < 0) {
                free(t->key);
                free(t->id);
                free(t);
                return -ENOMEM;
        }
        t->in_table = true;
        d->n_tasks++;
        *ret = t;
        return 0;
}

/* A time in seconds to the microsecond (zd_now()) as JSON: its text made from integers, where
 * json-c would print the double with "%.17g", glibc's float formatting, at each reply of a task
 * (three per Spawn that waits for its exit). The same number to the microsecond. */
static json_object *time_json(double t) {
        long long us = (long long) (t * 1e6 + 0.5);
        char text[32];

        if (t < 0)
                return json_object_new_double(t);
        snprintf(text, sizeof(text), "%lld.%06lld", us / 1000000, us % 1000000);
        return json_object_new_double_s(t, text);
}

json_object *zd_task_to_json(const struct zd_task *t) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(t->id));
        json_object_object_add(o, "profile", json_object_new_string(t->profile ? t->profile : ""));
        json_object_object_add(o, "state", json_object_new_string(zd_task_state_to_string(t->state)));
        json_object_object_add(o, "pid", json_object_new_int(t->pidref.pid));
        json_object_object_add(o, "uid", json_object_new_int64(t->run_uid));
        json_object_object_add(o, "owner", json_object_new_int64(t->uid));
        json_object_object_add(o, "name", json_object_new_string(t->key));
        json_object_object_add(o, "tier", json_object_new_string(zd_tier_to_string(t->tier)));
        json_object_object_add(o, "argv", t->argv ? json_object_get(t->argv) : json_object_new_array());
        if (t->exited && !t->status_unknown) {
                if (t->signal)
                        json_object_object_add(o, "signal", json_object_new_int(t->signal));
                else
                        json_object_object_add(o, "exitCode", json_object_new_int(t->exit_code));
        }
        json_object_object_add(o, "createdAt", time_json(t->created_at));
        if (t->started_at > 0)
                json_object_object_add(o, "startedAt", time_json(t->started_at));
        if (t->exited)
                json_object_object_add(o, "exitedAt", time_json(t->exited_at));
        return o;
}

static void task_event(struct zd_daemon *d, const char *type, const struct zd_task *t) {
        zd_event_emit(&d->events, &(struct zd_event){ .type = type,
                                                      .id = t->id,
                                                      .uid = t->uid,
                                                      .pid = t->pidref.pid,
                                                      .has_status = t->exited && !t->status_unknown,
                                                      .signal = t->signal,
                                                      .exit_code = t->exit_code });
}

/* The caller's pidfd is one of its own, not a copy of ours: epoll registers the file, so with a
 * copy our registration would outlive our close while the caller holds it, and the stale event
 * that follows makes libev rebuild its whole epoll set. pidfd_open by pid is exact while the
 * worker is our unreaped child; once reaped (reaped: the exit path) its pid may be reused, and
 * only a copy is safe. */
static int client_pidfd(const struct zd_task *t, bool reaped) {
        int fd = reaped ? -EBADF : pidfd_open_pid(t->pidref.pid);
        return fd >= 0 ? fd : fcntl(t->pidref.fd, F_DUPFD_CLOEXEC, 3);
}

static void reply_spawned(struct zd_task *t, struct zd_conn *c, bool reaped) {
        int fd = client_pidfd(t, reaped);
        /* Spawn with "more" keeps the call open until the exit, which then deletes the task. */
        bool more = zd_conn_more(c);
        if (more && zd_task_add_waiter(t, c) >= 0) {
                t->auto_delete = true;
                t->spawner = c;
        } else
                more = false;
        zd_spawn_reply_spawned(c, t->id, t->pidref.pid, t->tier, fd, more);
}

static void deliver_exit(struct zd_task *t) {
        while (t->waiters) {
                struct zd_waiter *w = t->waiters;
                t->waiters = w->next;
                zd_conn_set_data(w->conn, NULL);
                if (w->conn == t->spawner)
                        t->spawner = NULL;
                json_object *p = json_object_new_object();
                json_object_object_add(p, "task", zd_task_to_json(t));
                if (t->record)
                        json_object_object_add(p, "record", json_object_get(t->record));
                zd_reply(w->conn, p, false, -EBADF);
                free(w);
        }
}

/* Held before exec: "created", and the Spawn's reply. */
static void task_held(struct zd_task *t, bool reaped) {
        t->state = ZD_TASK_CREATED;
        task_log(LOG_INFO, t, "created");
        task_event(t->d, "create", t);
        if (t->pending) {
                struct zd_conn *c = t->pending;
                t->pending = NULL;
                zd_conn_set_data(c, NULL);
                reply_spawned(t, c, reaped);
        }
}

/* The status pipe: a record (HELD or a failure) or EOF (execve happened). Also called from the
 * exit path, where the process is gone and whatever it wrote is already in the pipe (exited),
 * and after it was reaped (reaped). */
static void task_read_status(struct zd_task *t, bool exited, bool reaped) {
        struct zd_daemon *d = t->d;
        for (;;) {
                struct ze_status st;
                ssize_t n = read(t->status_fd, &st, sizeof(st));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN && !exited)
                        return;
                if (n == sizeof(st) && st.step == ZE_STEP_HELD) {
                        task_held(t, reaped);
                        continue;
                }
                /* Done with the pipe: a failure record, EOF, or nothing at all after exit. */
                ev_io_stop(d->loop, &t->status_watch);
                t->status_fd = safe_close(t->status_fd);
                struct zd_conn *c = t->pending;
                t->pending = NULL;
                if (c)
                        zd_conn_set_data(c, NULL);
                if (n != sizeof(st) && t->gate_failure.step) { /* it left at the gate we closed */
                        st = t->gate_failure;
                        n = sizeof(st);
                }
                if (n == sizeof(st)) {
                        t->failure = st;
                        d->failed++;
                        zd_log(LOG_INFO, "task %s: worker failed at step %s: %s", t->id,
                               ze_step_to_string((enum ze_step) st.step), strerror(st.err));
                        bool was_created = t->state == ZD_TASK_CREATED;
                        if (c && st.step == ZE_STEP_SCOPE && t->gate_message)
                                zd_spawn_reply_failed_text(c, ze_step_to_string(ZE_STEP_SCOPE), st.err,
                                                           t->gate_message);
                        else if (c)
                                zd_spawn_reply_failed(c, &t->failure);
                        if (was_created) {
                                /* Exec failed after Start: the task stays, as stopped. */
                                return;
                        }
                        task_unlink(t);
                        task_to_dying(t); /* reaped (and freed) when its pidfd fires */
                        return;
                }
                if (t->state == ZD_TASK_CREATED && !t->start_requested)
                        return; /* killed (or deleted) while held: it never ran */
                if (t->state == ZD_TASK_STARTING)
                        task_event(d, "create", t); /* not held: created and started at once */
                t->state = ZD_TASK_RUNNING;
                t->started_at = zd_now();
                char *exe = zd_task_exe_path(t->pidref.pid, t->pidref.fd);
                if (exe) {
                        free(t->exe);
                        t->exe = exe; /* the path executed, not the name as given */
                }
                json_object *cmdline = t->argv && json_object_array_length(t->argv) == 0
                                               ? zd_task_cmdline(t->pidref.pid, t->pidref.fd)
                                               : NULL;
                if (cmdline) {
                        /* a container's: the worker, not the call, had its argv (config.json) */
                        json_object_put(t->argv);
                        t->argv = cmdline;
                        t->argv_bytes = zd_task_argv_bytes(cmdline);
                }
                task_log(LOG_INFO, t, "start");
                task_event(d, "start", t);
                if (c) {
                        if (t->hold_was_used)
                                zd_reply(c, NULL, false, -EBADF); /* Start's reply */
                        else
                                reply_spawned(t, c, reaped);
                }
                return;
        }
}

static void on_status(struct ev_loop *loop, ev_io *w, int revents) {
        task_read_status(w->data, false, false);
}

static void task_exit_replies(struct zd_task *t);

static void task_exited(struct zd_task *t, int code, int sig, bool unknown) {
        struct zd_daemon *d = t->d;
        ev_io_stop(d->loop, &t->pid_watch);
        if (t->status_fd >= 0)
                task_read_status(t, true, true);
        t->exited = true;
        t->exited_at = zd_now();
        t->exit_code = code;
        t->signal = sig;
        t->status_unknown = unknown;
        t->hold_fd = safe_close(t->hold_fd);
        if (!t->in_table) {
                task_free(t); /* failed spawn or deleted while created */
                return;
        }
        t->state = ZD_TASK_STOPPED;
        task_log(LOG_INFO, t, "exit");
        task_event(d, "exit", t);
        /* a recorded task's exit is answered once every thread it started has exited too: its
         * recording ends there (zd_task_record_done) */
        if (t->record_id && !zd_recorder_done(&d->recorder, t->record_id))
                return;
        task_exit_replies(t);
}

void zd_task_record_done(void *owner) {
        struct zd_task *t = owner;
        if (t->exited && t->state == ZD_TASK_STOPPED && t->in_table)
                task_exit_replies(t);
}

/* The exit's replies (with what the recording saw, when it was recorded), and a task that was
 * to be forgotten then forgotten. */
static void task_exit_replies(struct zd_task *t) {
        struct zd_daemon *d = t->d;
        if (t->record_id) {
                t->record = zd_recorder_take(&d->recorder, t->record_id);
                t->record_id = 0;
        }
        deliver_exit(t);
        if (t->auto_delete) {
                task_event(d, "delete", t);
                task_unlink(t);
                task_free(t);
        }
}

/* An adopted task's status, from the kernel (it is not our child). Between its exit and its
 * reaping by whoever is its parent now (the service manager) the kernel has no status yet. The
 * reaping is an event on the same pidfd: EPOLLHUP (Linux 6.9+), which libev's epoll backend
 * reports to an EV_WRITE watcher (a pidfd is never writable, so nothing else wakes it). */
static void adopted_exit(struct zd_task *t) {
        int code, sig;
        int r = pidfd_exit_status(t->pidref.fd, &code, &sig);
        if (r >= 0) {
                task_exited(t, code, sig, false);
                return;
        }
        if (r == -ENODATA && !t->awaiting_reap) {
                zd_log(LOG_DEBUG, "task %s: exited while adopted; its status comes when its reaper reaps it", t->id);
                t->awaiting_reap = true;
                ev_io_stop(t->d->loop, &t->pid_watch);
                ev_io_set(&t->pid_watch, t->pidref.fd, EV_WRITE);
                ev_io_start(t->d->loop, &t->pid_watch);
                return;
        }
        zd_log(LOG_WARNING, "task %s: exited while adopted; this kernel cannot tell its status (%s)", t->id,
               strerror(-r));
        task_exited(t, 0, 0, true);
}

static void on_exit_pidfd(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_task *t = w->data;
        siginfo_t si = {};
        /* The status pipe before the reaping: a Spawn reply still due opens the caller's pidfd
         * by pid, which is exact only while the worker is an unreaped zombie (client_pidfd). */
        if (t->status_fd >= 0 && !t->adopted) {
                if (zc_pidref_wait(&t->pidref, WEXITED | WNOHANG | WNOWAIT, &si) >= 0 && si.si_pid == 0)
                        return; /* not yet */
                task_read_status(t, true, false);
        }
        int r = zc_pidref_wait(&t->pidref, WEXITED | WNOHANG, &si);
        if (r < 0) {
                if (r == -ECHILD) {
                        adopted_exit(t); /* not our child: adopted from the fd store */
                        return;
                }
                task_exited(t, 0, 0, true);
                return;
        }
        if (si.si_pid == 0)
                return; /* not yet */
        if (si.si_code == CLD_EXITED)
                task_exited(t, si.si_status, 0, false);
        else
                task_exited(t, 128 + si.si_status, si.si_status, false);
}

void zd_task_adopt(struct zd_task *t, int pidfd) {
        struct zd_daemon *d = t->d;
        t->pidref.fd = pidfd;
        t->state = ZD_TASK_RUNNING;
        ev_io_init(&t->pid_watch, on_exit_pidfd, pidfd, EV_READ);
        t->pid_watch.data = t;
        ev_io_start(d->loop, &t->pid_watch);
}

void zd_task_attach(struct zd_task *t, struct zc_pidref worker, int status_fd, int hold_fd, struct zd_conn *c) {
        struct zd_daemon *d = t->d;
        t->pidref = worker;
        t->status_fd = status_fd;
        t->hold_fd = hold_fd;
        t->hold_was_used = hold_fd >= 0;
        t->state = ZD_TASK_STARTING;
        ev_io_init(&t->pid_watch, on_exit_pidfd, t->pidref.fd, EV_READ);
        t->pid_watch.data = t;
        ev_io_start(d->loop, &t->pid_watch);
        ev_io_init(&t->status_watch, on_status, status_fd, EV_READ);
        t->status_watch.data = t;
        ev_io_start(d->loop, &t->status_watch);
        task_store(t);
        t->pending = c;
        if (c)
                zd_conn_set_data(c, t);
}

void zd_task_attach_created(struct zd_task *t, struct zc_pidref init, int status_fd, int hold_fd, struct zd_conn *c) {
        zd_task_attach(t, init, status_fd, hold_fd, c);
        task_held(t, false);
}

int zd_task_start(struct zd_task *t, struct zd_conn *c) {
        if (t->state != ZD_TASK_CREATED || t->hold_fd < 0 || t->pending)
                return -EBUSY;
        char go = 1;
        ssize_t n = write(t->hold_fd, &go, 1);
        t->hold_fd = safe_close(t->hold_fd);
        if (n != 1)
                return -EPIPE;
        t->start_requested = true;
        t->pending = c;
        zd_conn_set_data(c, t);
        return 0;
}

int zd_task_add_waiter(struct zd_task *t, struct zd_conn *c) {
        struct zd_waiter *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->conn = c;
        w->next = t->waiters;
        t->waiters = w;
        zd_conn_set_data(c, t);
        return 0;
}

/* A task whose worker never started (fork failed). */
void zd_task_discard(struct zd_task *t) {
        task_unlink(t);
        task_free(t);
}

void zd_task_reap_orphan(struct zd_daemon *d, struct zc_pidref worker) {
        (void) zc_pidref_kill(&worker, SIGKILL);
        zd_task_reap_child(d, worker);
}

void zd_task_reap_child(struct zd_daemon *d, struct zc_pidref worker) {
        struct zd_task *t = calloc(1, sizeof(*t));
        if (!t) {
                /* killed: its exit is near, and waiting for it is the only way not to leak it */
                zc_pidref_kill_and_reap(&worker);
                return;
        }
        t->d = d;
        t->pidref = worker;
        t->status_fd = t->hold_fd = t->scope_gate = -EBADF;
        ev_io_init(&t->pid_watch, on_exit_pidfd, t->pidref.fd, EV_READ);
        t->pid_watch.data = t;
        ev_io_start(d->loop, &t->pid_watch);
        task_to_dying(t);
}

/* Delete: a stopped task goes at once; a created one is killed and reaped later. */
void zd_task_delete(struct zd_task *t) {
        task_event(t->d, "delete", t);
        task_unlink(t);
        if (t->exited) {
                task_free(t);
                return;
        }
        (void) zc_pidref_kill(&t->pidref, SIGKILL);
        t->hold_fd = safe_close(t->hold_fd);
        /* freed on its pidfd's event, or by zd_tasks_free() if the daemon stops first */
        task_to_dying(t);
}

void zd_task_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        zd_events_drop_conn(&d->events, c);
        struct zd_task *t = zd_conn_get_data(c);
        if (!t)
                return;
        zd_conn_set_data(c, NULL);
        if (t->pending == c)
                t->pending = NULL;
        for (struct zd_waiter **p = &t->waiters; *p; p = &(*p)->next)
                if ((*p)->conn == c) {
                        struct zd_waiter *w = *p;
                        *p = w->next;
                        free(w);
                        break;
                }
        /* A Spawn-with-more whose caller left: keep the task (and its exit) until Delete. */
        if (t->spawner == c) {
                t->spawner = NULL;
                t->auto_delete = false;
        }
}

unsigned zd_tasks_dying(const struct zd_daemon *d) {
        unsigned n = 0;
        for (const struct zd_task *t = d->dying; t; t = t->dying_next)
                n++;
        return n;
}

void zd_tasks_free(struct zd_daemon *d) {
        if (!d->tasks)
                return;
        struct lh_entry *e, *tmp;
        lh_foreach_safe(d->tasks, e, tmp) {
                struct zd_task *t = (struct zd_task *) lh_entry_v(e);
                task_unlink(t);
                task_free(t); /* the processes keep running: only our view goes */
        }
        lh_table_free(d->tasks);
        d->tasks = NULL;
        /* deleted, killed, and not yet seen to exit: gone from the table, not from memory */
        while (d->dying)
                task_free(d->dying);
}
