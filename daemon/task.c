/* SPDX-License-Identifier: MIT */
/*
 * The task table. A task is a worker process known by its pidfd, from fork to Delete:
 *
 *   STARTING --status EOF--> RUNNING --pidfd readable--> STOPPED --Delete--> gone
 *      |  \--HELD record--> CREATED --Start, status EOF--> RUNNING
 *      \--failure record--> (hidden at once, reaped when its pidfd says so)
 *
 * Tasks are kept in json-c's linkhash keyed by id. A task that leaves the table before its
 * process is reaped (a failed spawn, Delete of a created task) stays "orphaned" until its pidfd
 * fires, so that no zombie is left and no pid is signalled after reuse.
 */
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include <fcntl.h>
#include <stdio.h>

#include "daemon.h"
#include "util.h"

double zy_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) (ts.tv_nsec / 1000) / 1e6;
}

const char *zy_task_state_to_string(enum zy_task_state s) {
        switch (s) {
        case ZY_TASK_STARTING:
                return "starting";
        case ZY_TASK_CREATED:
                return "created";
        case ZY_TASK_RUNNING:
                return "running";
        case ZY_TASK_STOPPED:
                return "stopped";
        }
        return "unknown";
}

int zy_tasks_init(struct zy_daemon *d) {
        d->tasks = lh_kchar_table_new(1024, NULL);
        return d->tasks ? 0 : -ENOMEM;
}

struct zy_task *zy_task_find(struct zy_daemon *d, const char *id) {
        void *v = NULL;
        if (!lh_table_lookup_ex(d->tasks, id, &v))
                return NULL;
        return v;
}

unsigned zy_tasks_count_uid(struct zy_daemon *d, uid_t uid) {
        unsigned n = 0;
        struct lh_entry *e;
        lh_foreach(d->tasks, e) {
                const struct zy_task *t = lh_entry_v(e);
                if (t->uid == uid)
                        n++;
        }
        return n;
}

static void task_free(struct zy_task *t) {
        struct zy_daemon *d = t->d;
        ev_io_stop(d->loop, &t->pid_watch);
        ev_io_stop(d->loop, &t->status_watch);
        safe_close(t->pidfd);
        safe_close(t->status_fd);
        safe_close(t->hold_fd);
        while (t->waiters) {
                struct zy_waiter *w = t->waiters;
                t->waiters = w->next;
                w->conn->task = NULL;
                free(w);
        }
        if (t->pending)
                t->pending->task = NULL;
        if (t->spawner)
                t->spawner->task = NULL;
        json_object_put(t->argv);
        free(t->fd_name);
        free(t->id);
        free(t->profile);
        free(t->exe);
        free(t);
}

static void task_unlink(struct zy_task *t) {
        zy_sd_forget_task(t);
        if (!t->in_table)
                return;
        lh_table_delete(t->d->tasks, t->id);
        t->in_table = false;
        t->d->n_tasks--;
}

int zy_task_new(struct zy_daemon *d, const char *id, uid_t owner, struct zy_task **ret) {
        char buf[32];
        if (!id) {
                do
                        snprintf(buf, sizeof(buf), "t%lu", ++d->next_task);
                while (zy_task_find(d, buf));
                id = buf;
        } else if (zy_task_find(d, id))
                return -EEXIST;
        struct zy_task *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->d = d;
        t->uid = owner;
        t->pidfd = t->status_fd = t->hold_fd = -EBADF;
        t->created_at = zy_now();
        t->id = strdup(id);
        if (!t->id || lh_table_insert(d->tasks, t->id, t) < 0) {
                free(t->id);
                free(t);
                return -ENOMEM;
        }
        t->in_table = true;
        d->n_tasks++;
        *ret = t;
        return 0;
}

json_object *zy_task_to_json(const struct zy_task *t) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(t->id));
        json_object_object_add(o, "profile", json_object_new_string(t->profile ? t->profile : ""));
        json_object_object_add(o, "state", json_object_new_string(zy_task_state_to_string(t->state)));
        json_object_object_add(o, "pid", json_object_new_int(t->pid));
        json_object_object_add(o, "uid", json_object_new_int64(t->run_uid));
        json_object_object_add(o, "tier", json_object_new_string(zy_tier_to_string(t->tier)));
        json_object_object_add(o, "argv", t->argv ? json_object_get(t->argv) : json_object_new_array());
        if (t->exited && !t->status_unknown) {
                if (t->signal)
                        json_object_object_add(o, "signal", json_object_new_int(t->signal));
                else
                        json_object_object_add(o, "exitCode", json_object_new_int(t->exit_code));
        }
        json_object_object_add(o, "createdAt", json_object_new_double(t->created_at));
        if (t->started_at > 0)
                json_object_object_add(o, "startedAt", json_object_new_double(t->started_at));
        if (t->exited)
                json_object_object_add(o, "exitedAt", json_object_new_double(t->exited_at));
        return o;
}

void zy_event_emit(struct zy_daemon *d, const char *type, const struct zy_task *t) {
        if (d->n_subscribers == 0)
                return;
        double now = zy_now();
        for (size_t i = 0; i < d->n_subscribers; i++) {
                struct zy_conn *c = d->subscribers[i];
                if (!zy_conn_is_root(c) && c->cred.uid != t->uid)
                        continue;
                json_object *ev = json_object_new_object();
                json_object_object_add(ev, "type", json_object_new_string(type));
                json_object_object_add(ev, "id", json_object_new_string(t->id));
                json_object_object_add(ev, "time", json_object_new_double(now));
                if (t->pid > 0)
                        json_object_object_add(ev, "pid", json_object_new_int(t->pid));
                if (t->exited && !t->status_unknown) {
                        if (t->signal)
                                json_object_object_add(ev, "signal", json_object_new_int(t->signal));
                        else
                                json_object_object_add(ev, "exitCode", json_object_new_int(t->exit_code));
                }
                json_object *p = json_object_new_object();
                json_object_object_add(p, "event", ev);
                zy_reply(c, p, true, -EBADF);
        }
}

static void reply_spawned(struct zy_task *t, struct zy_conn *c) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "id", json_object_new_string(t->id));
        json_object_object_add(p, "pid", json_object_new_int(t->pid));
        json_object_object_add(p, "tier", json_object_new_string(zy_tier_to_string(t->tier)));
        int fd = fcntl(t->pidfd, F_DUPFD_CLOEXEC, 3);
        /* Spawn with "more" keeps the call open until the exit, which then deletes the task. */
        bool more = c->more;
        if (more && zy_task_add_waiter(t, c) >= 0) {
                t->auto_delete = true;
                t->spawner = c;
        } else
                more = false;
        zy_reply(c, p, more, fd);
}

static void reply_failed(struct zy_task *t, struct zy_conn *c) {
        const char *step = zy_step_to_string((enum zy_step) t->failure.step);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "step", json_object_new_string(step ? step : "unknown"));
        json_object_object_add(p, "errno", json_object_new_int(t->failure.err));
        json_object_object_add(p, "message", json_object_new_string(strerror(t->failure.err)));
        zy_reply_error(c, "io.zygote.Launcher.SpawnFailed", p);
}

static void deliver_exit(struct zy_task *t) {
        while (t->waiters) {
                struct zy_waiter *w = t->waiters;
                t->waiters = w->next;
                w->conn->task = NULL;
                if (w->conn == t->spawner)
                        t->spawner = NULL;
                json_object *p = json_object_new_object();
                json_object_object_add(p, "task", zy_task_to_json(t));
                zy_reply(w->conn, p, false, -EBADF);
                free(w);
        }
}

/* The status pipe: a record (HELD or a failure) or EOF (execve happened). Also called from the
 * exit path, where the process is gone and whatever it wrote is already in the pipe. */
static void task_read_status(struct zy_task *t, bool exited) {
        struct zy_daemon *d = t->d;
        for (;;) {
                struct zy_status st;
                ssize_t n = read(t->status_fd, &st, sizeof(st));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN && !exited)
                        return;
                if (n == sizeof(st) && st.step == ZY_STEP_HELD) {
                        t->state = ZY_TASK_CREATED;
                        zy_log_task(LOG_INFO, t, "created");
                        zy_event_emit(d, "create", t);
                        if (t->pending) {
                                struct zy_conn *c = t->pending;
                                t->pending = NULL;
                                c->task = NULL;
                                reply_spawned(t, c);
                        }
                        continue;
                }
                /* Done with the pipe: a failure record, EOF, or nothing at all after exit. */
                ev_io_stop(d->loop, &t->status_watch);
                t->status_fd = safe_close(t->status_fd);
                struct zy_conn *c = t->pending;
                t->pending = NULL;
                if (c)
                        c->task = NULL;
                if (n == sizeof(st)) {
                        t->failure = st;
                        d->failed++;
                        zy_log(LOG_INFO, "task %s: worker failed at step %s: %s", t->id,
                               zy_step_to_string((enum zy_step) st.step), strerror(st.err));
                        bool was_created = t->state == ZY_TASK_CREATED;
                        if (c)
                                reply_failed(t, c);
                        if (was_created) {
                                /* Exec failed after Start: the task stays, as stopped. */
                                return;
                        }
                        task_unlink(t); /* reaped (and freed) when its pidfd fires */
                        return;
                }
                if (t->state == ZY_TASK_CREATED && !t->start_requested)
                        return; /* killed (or deleted) while held: it never ran */
                if (t->state == ZY_TASK_STARTING)
                        zy_event_emit(d, "create", t); /* not held: created and started at once */
                t->state = ZY_TASK_RUNNING;
                t->started_at = zy_now();
                zy_log_task(LOG_INFO, t, "start");
                zy_event_emit(d, "start", t);
                if (c) {
                        if (t->hold_was_used)
                                zy_reply(c, NULL, false, -EBADF); /* Start's reply */
                        else
                                reply_spawned(t, c);
                }
                return;
        }
}

static void on_status(struct ev_loop *loop, ev_io *w, int revents) {
        task_read_status(w->data, false);
}

static void task_exited(struct zy_task *t, int code, int sig, bool unknown) {
        struct zy_daemon *d = t->d;
        ev_io_stop(d->loop, &t->pid_watch);
        if (t->status_fd >= 0)
                task_read_status(t, true);
        t->exited = true;
        t->exited_at = zy_now();
        t->exit_code = code;
        t->signal = sig;
        t->status_unknown = unknown;
        t->hold_fd = safe_close(t->hold_fd);
        if (!t->in_table) {
                task_free(t); /* failed spawn or deleted while created */
                return;
        }
        t->state = ZY_TASK_STOPPED;
        zy_log_task(LOG_INFO, t, "exit");
        zy_event_emit(d, "exit", t);
        deliver_exit(t);
        if (t->auto_delete) {
                zy_event_emit(d, "delete", t);
                task_unlink(t);
                task_free(t);
        }
}

/* An adopted task's status, from the kernel (it is not our child). Between its exit and its
 * reaping by whoever is its parent now (the service manager) the kernel has no status yet. The
 * reaping is an event on the same pidfd: EPOLLHUP (Linux 6.9+), which libev's epoll backend
 * reports to an EV_WRITE watcher (a pidfd is never writable, so nothing else wakes it). */
static void adopted_exit(struct zy_task *t) {
        int code, sig;
        int r = zy_pidfd_exit_status(t->pidfd, &code, &sig);
        if (r >= 0) {
                task_exited(t, code, sig, false);
                return;
        }
        if (r == -ENODATA && !t->awaiting_reap) {
                zy_log(LOG_DEBUG, "task %s: exited while adopted; its status comes when its reaper reaps it", t->id);
                t->awaiting_reap = true;
                ev_io_stop(t->d->loop, &t->pid_watch);
                ev_io_set(&t->pid_watch, t->pidfd, EV_WRITE);
                ev_io_start(t->d->loop, &t->pid_watch);
                return;
        }
        zy_log(LOG_WARNING, "task %s: exited while adopted; this kernel cannot tell its status (%s)", t->id,
               strerror(-r));
        task_exited(t, 0, 0, true);
}

static void on_exit_pidfd(struct ev_loop *loop, ev_io *w, int revents) {
        struct zy_task *t = w->data;
        siginfo_t si = {};
        if (waitid((idtype_t) P_PIDFD, (id_t) t->pidfd, &si, WEXITED | WNOHANG) < 0) {
                if (errno == EINTR)
                        return;
                if (errno == ECHILD) {
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

void zy_task_adopt(struct zy_task *t, int pidfd) {
        struct zy_daemon *d = t->d;
        t->pidfd = pidfd;
        t->state = ZY_TASK_RUNNING;
        ev_io_init(&t->pid_watch, on_exit_pidfd, pidfd, EV_READ);
        t->pid_watch.data = t;
        ev_io_start(d->loop, &t->pid_watch);
}

void zy_task_attach(struct zy_task *t, pid_t pid, int pidfd, int status_fd, int hold_fd) {
        struct zy_daemon *d = t->d;
        t->pid = pid;
        t->pidfd = pidfd;
        t->status_fd = status_fd;
        t->hold_fd = hold_fd;
        t->hold_was_used = hold_fd >= 0;
        t->state = ZY_TASK_STARTING;
        ev_io_init(&t->pid_watch, on_exit_pidfd, pidfd, EV_READ);
        t->pid_watch.data = t;
        ev_io_start(d->loop, &t->pid_watch);
        ev_io_init(&t->status_watch, on_status, status_fd, EV_READ);
        t->status_watch.data = t;
        ev_io_start(d->loop, &t->status_watch);
        zy_sd_store_task(t);
}

int zy_task_start(struct zy_task *t, struct zy_conn *c) {
        if (t->state != ZY_TASK_CREATED || t->hold_fd < 0 || t->pending)
                return -EBUSY;
        char go = 1;
        ssize_t n = write(t->hold_fd, &go, 1);
        t->hold_fd = safe_close(t->hold_fd);
        if (n != 1)
                return -EPIPE;
        t->start_requested = true;
        t->pending = c;
        c->task = t;
        return 0;
}

int zy_task_add_waiter(struct zy_task *t, struct zy_conn *c) {
        struct zy_waiter *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->conn = c;
        w->next = t->waiters;
        t->waiters = w;
        c->task = t;
        return 0;
}

/* A task whose worker never started (fork failed). */
void zy_task_discard(struct zy_task *t) {
        task_unlink(t);
        task_free(t);
}

/* Delete: a stopped task goes at once; a created one is killed and reaped later. */
void zy_task_delete(struct zy_task *t) {
        zy_event_emit(t->d, "delete", t);
        task_unlink(t);
        if (t->exited) {
                task_free(t);
                return;
        }
        (void) syscall(SYS_pidfd_send_signal, t->pidfd, SIGKILL, NULL, 0);
        t->hold_fd = safe_close(t->hold_fd);
}

void zy_task_drop_conn(struct zy_daemon *d, struct zy_conn *c) {
        struct zy_task *t = c->task;
        if (!t)
                return;
        c->task = NULL;
        if (t->pending == c)
                t->pending = NULL;
        for (struct zy_waiter **p = &t->waiters; *p; p = &(*p)->next)
                if ((*p)->conn == c) {
                        struct zy_waiter *w = *p;
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

void zy_tasks_free(struct zy_daemon *d) {
        if (!d->tasks)
                return;
        struct lh_entry *e, *tmp;
        lh_foreach_safe(d->tasks, e, tmp) {
                struct zy_task *t = (struct zy_task *) lh_entry_v(e);
                task_unlink(t);
                task_free(t); /* the processes keep running: only our view goes */
        }
        lh_table_free(d->tasks);
        d->tasks = NULL;
}
