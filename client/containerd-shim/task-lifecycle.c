/* SPDX-License-Identifier: MIT */
/* The Task service's lifecycle: Create, Exec, Start (and each process's exit monitor), Delete. */
#include "task.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>

#include "backend.h"
#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "log.h"
#include "oom.h"
#include "process.h"
#include "publish.h"
#include "reply.h"
#include "rootfs.h"
#include "util.h"

/* How long the container's init may take to send its pty master once it was created. */
#define CONSOLE_TIMEOUT_MS 10000

static void publish(const char *topic, const ProtobufCMessage *event) {
        int r = zs_publish(topic, event);

        if (r < 0)
                zs_log("publishing %s failed: %s", topic, strerror(-r));
}

static char *dup_or_null(const char *s) {
        return s && *s ? strdup(s) : NULL;
}

/* The fds a task gets: libzygote's -1 for "none". */
static void task_stdio(const struct zs_stdio *io, int out[3]) {
        for (size_t i = 0; i < 3; i++)
                out[i] = io->task_fds[i] >= 0 ? io->task_fds[i] : -1;
}

static int create_init(const Containerd__Task__V2__CreateTaskRequest *rq, struct zs_process *p,
                       struct zs_ttrpc_result *res, pid_t *ret_pid) {
        struct zy_container_opts o = { .id = rq->id, .bundle = rq->bundle, .console_socket = -1 };
        struct zy_spawn_result *sr = NULL;
        zy_conn *c = NULL;
        int r;

        r = zs_rootfs_mount(rq->bundle, rq->rootfs, rq->n_rootfs);
        if (r < 0)
                return zs_fail(res, r, "create: mounting the rootfs: %s", strerror(-r));
        r = zs_stdio_open(&p->io, rq->stdin, rq->stdout, rq->stderr, rq->terminal);
        if (r < 0) {
                zs_fail(res, r, "create: opening the stdio fifos: %s", strerror(-r));
                goto fail;
        }
        r = zs_backend_connect(&c);
        if (r < 0) {
                r = zs_backend_fail(res, NULL, r, "create");
                goto fail;
        }
        task_stdio(&p->io, o.stdio);
        if (rq->terminal)
                o.console_socket = p->io.console_socket[1];
        r = zy_container_create(c, &o, &sr);
        if (r < 0) {
                r = zs_backend_fail(res, c, r, "create");
                goto fail;
        }
        r = zs_stdio_created(&p->io, CONSOLE_TIMEOUT_MS);
        if (r < 0) {
                zs_fail(res, r, "create: the container's terminal: %s", strerror(-r));
                (void) zy_delete(c, rq->id, NULL);
                goto fail;
        }
        *ret_pid = sr->pid;
        zy_spawn_result_free(sr);
        zy_conn_free(c);
        return 0;
fail:
        zy_spawn_result_free(sr);
        zy_conn_free(c);
        if (rq->n_rootfs > 0)
                (void) zs_rootfs_unmount(rq->bundle);
        return r;
}

static void publish_create(const Containerd__Task__V2__CreateTaskRequest *rq, pid_t pid) {
        Containerd__Events__TaskCreate ev = CONTAINERD__EVENTS__TASK_CREATE__INIT;
        Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;

        io.stdin = rq->stdin;
        io.stdout = rq->stdout;
        io.stderr = rq->stderr;
        io.terminal = rq->terminal;
        ev.container_id = rq->id;
        ev.bundle = rq->bundle;
        ev.n_rootfs = rq->n_rootfs;
        ev.rootfs = rq->rootfs;
        ev.io = &io;
        ev.checkpoint = rq->checkpoint;
        ev.pid = (uint32_t) pid;
        publish("/tasks/create", &ev.base);
}

int zs_task_create(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__CreateTaskRequest *rq = (const void *) request;
        Containerd__Task__V2__CreateTaskResponse resp = CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
        struct zs_process *p = NULL;
        char *id, *bundle;
        pid_t pid = 0;
        int r;

        if (!zs_task_id_valid(rq->id))
                return zs_fail(res, -EINVAL, "create: %s is not a valid container id for zygote", rq->id);
        if (*rq->checkpoint || *rq->parent_checkpoint)
                return zs_fail(res, -EOPNOTSUPP, "create: checkpoints are not supported");
        if (rq->bundle[0] != '/')
                return zs_fail(res, -EINVAL, "create: the bundle path is not absolute");
        id = strdup(rq->id);
        bundle = strdup(rq->bundle);
        zs_state_lock();
        r = id && bundle ? zs_container_set(id, bundle) : -ENOMEM;
        if (r < 0) {
                zs_state_unlock();
                free(id);
                free(bundle);
                return zs_fail(res, r, "create: %s", r == -EEXIST ? "this shim has a container already" : "no memory");
        }
        r = zs_process_add(NULL, rq->id, &p);
        if (r >= 0) {
                p->terminal = rq->terminal;
                p->stdin_path = dup_or_null(rq->stdin);
                p->stdout_path = dup_or_null(rq->stdout);
                p->stderr_path = dup_or_null(rq->stderr);
                zs_container_get()->rootfs_mounted = rq->n_rootfs > 0;
                zs_process_ref(p);
        }
        zs_state_unlock();
        if (r < 0)
                goto fail;
        r = create_init(rq, p, res, &pid);
        if (r < 0)
                goto fail;
        zs_state_lock();
        p->pid = pid;
        p->status = ZS_STATUS_CREATED;
        zs_process_unref(p);
        zs_state_changed();
        zs_state_unlock();
        publish_create(rq, pid);
        resp.pid = (uint32_t) pid;
        return zs_reply(res, &resp.base);
fail:
        zs_state_lock();
        zs_process_unref(p);
        zs_container_clear();
        zs_state_changed();
        zs_state_unlock();
        return res->message ? r : zs_fail(res, r, "create: %s", strerror(-r));
}

/* ---- Exec -------------------------------------------------------------------------------------- */

static int exec_process(const Containerd__Task__V2__ExecProcessRequest *rq, struct zs_process *p,
                        struct zs_ttrpc_result *res, pid_t *ret_pid) {
        struct zy_exec_opts o = { .container = rq->id, .id = p->task_id, .console_socket = -1 };
        _cleanup_free_ char *json = NULL;
        struct zy_spawn_result *sr = NULL;
        zy_conn *c = NULL;
        int r;

        json = strndup((const char *) rq->spec->value.data, rq->spec->value.len);
        if (!json)
                return -ENOMEM;
        o.process_json = json;
        r = zs_stdio_open(&p->io, rq->stdin, rq->stdout, rq->stderr, rq->terminal);
        if (r < 0)
                return zs_fail(res, r, "exec: opening the stdio fifos: %s", strerror(-r));
        r = zs_backend_connect(&c);
        if (r < 0)
                return zs_backend_fail(res, NULL, r, "exec");
        task_stdio(&p->io, o.stdio);
        if (rq->terminal)
                o.console_socket = p->io.console_socket[1];
        r = zy_container_exec(c, &o, &sr);
        if (r < 0) {
                r = zs_backend_fail(res, c, r, "exec");
                zy_conn_free(c);
                return r;
        }
        r = zs_stdio_created(&p->io, CONSOLE_TIMEOUT_MS);
        if (r < 0) {
                zs_fail(res, r, "exec: the process's terminal: %s", strerror(-r));
                (void) zy_delete(c, p->task_id, NULL);
        } else
                *ret_pid = sr->pid;
        zy_spawn_result_free(sr);
        zy_conn_free(c);
        return r;
}

/* Every exec'd process goes to the bundle's ZS_EXEC_IDS_FILE before it is made, where the delete
 * command of a dead shim finds it: its task id with the exec id it is made of, which that command
 * checks (zs_exec_ids_parse()). */
static void record_exec_id(const char *bundle, const char *container, const char *exec_id) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n;

        if (asprintf(&path, "%s/%s", bundle, ZS_EXEC_IDS_FILE) < 0 || zs_exec_ids_line(container, exec_id, &line) < 0)
                return;
        n = strlen(line);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, line, n) != (ssize_t) n)
                zs_log("exec: recording %s in %s: %m", exec_id, path);
}

int zs_task_exec(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__ExecProcessRequest *rq = (const void *) request;
        Containerd__Events__TaskExecAdded ev = CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
        Google__Protobuf__Empty resp = GOOGLE__PROTOBUF__EMPTY__INIT;
        _cleanup_free_ char *task_id = NULL;
        struct zs_process *p = NULL;
        pid_t pid = 0;
        int r;

        if (!*rq->exec_id)
                return zs_fail(res, -EINVAL, "exec: no exec id");
        if (!rq->spec || !rq->spec->value.data)
                return zs_fail(res, -EINVAL, "exec: no process spec");
        r = zs_exec_task_id(rq->id, rq->exec_id, &task_id);
        if (r < 0)
                return r;
        zs_state_lock();
        if (zs_process_find(rq->id, NULL) && !zs_process_find(rq->id, rq->exec_id))
                record_exec_id(zs_container_get()->bundle, rq->id, rq->exec_id);
        if (!zs_process_find(rq->id, NULL))
                r = zs_fail(res, -ESRCH, "exec: no container %s", rq->id);
        else if (zs_process_find(rq->id, rq->exec_id))
                r = zs_fail(res, -EEXIST, "exec: process %s exists", rq->exec_id);
        else
                r = zs_process_add(rq->exec_id, task_id, &p);
        if (r >= 0) {
                p->terminal = rq->terminal;
                p->stdin_path = dup_or_null(rq->stdin);
                p->stdout_path = dup_or_null(rq->stdout);
                p->stderr_path = dup_or_null(rq->stderr);
                zs_process_ref(p);
        }
        zs_state_unlock();
        if (r < 0)
                return r;
        r = exec_process(rq, p, res, &pid);
        zs_state_lock();
        if (r < 0)
                zs_process_remove(p);
        else {
                p->pid = pid;
                p->status = ZS_STATUS_CREATED;
        }
        zs_process_unref(p);
        zs_state_changed();
        zs_state_unlock();
        if (r < 0)
                return r;
        ev.container_id = rq->id;
        ev.exec_id = rq->exec_id;
        publish("/tasks/exec-added", &ev.base);
        return zs_reply(res, &resp.base);
}

/* ---- Start and the exit monitor --------------------------------------------------------------- */

/* A lost connection to zygoted while waiting: tried again every 250 ms for a minute (a restart
 * of zygoted under systemd takes well under that). */
#define ZS_WAIT_RETRY_MS 250
#define ZS_WAIT_RETRIES 240

struct monitor {
        struct zs_process *p; /* a reference */
        char *container_id;
};

/* Waits for the process's exit (zygoted keeps it), lets the pty copy drain, publishes /tasks/exit,
 * then records the status and wakes the Wait calls. */
static void *monitor_thread(void *arg) {
        struct monitor *m = arg;
        struct zs_process *p = m->p;
        Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
        Google__Protobuf__Timestamp ts;
        struct zy_task_info *ti = NULL;
        struct timespec at;
        uint32_t status;
        zy_conn *c = NULL;
        int r;

        /* task_id, exec_id and pid do not change once the process was started. zygoted keeps the
         * status until Delete, across its own restart under systemd (the task is adopted): a
         * connection lost meanwhile is made again and the Wait sent again, for a while. */
        for (unsigned attempt = 0;; attempt++) {
                r = zs_backend_connect(&c);
                if (r >= 0)
                        r = zy_wait(c, p->task_id, &ti);
                zy_conn_free(c);
                c = NULL;
                if (r >= 0 || r == -ESRCH || attempt >= ZS_WAIT_RETRIES)
                        break;
                zs_log("waiting for %s: %s; again in %d ms", p->task_id, strerror(-r), ZS_WAIT_RETRY_MS);
                (void) nanosleep(&(struct timespec){ .tv_nsec = ZS_WAIT_RETRY_MS * 1000000L }, NULL);
        }
        if (r < 0)
                zs_log("waiting for %s: %s", p->task_id, strerror(-r));
        status = ti ? (uint32_t) zy_task_info_status(ti) : 255;
        at = ti && ti->exited_at > 0 ? zs_timespec(ti->exited_at) : zs_now();
        zy_task_info_free(ti);
        zs_stdio_drain(&p->io);
        /* the event goes out before Wait answers: containerd's Delete, and its /tasks/delete,
         * follow the Wait, so they come after the exit */
        ts = zs_timestamp(at);
        ev.container_id = m->container_id;
        ev.id = p->exec_id ? p->exec_id : m->container_id;
        ev.pid = (uint32_t) p->pid;
        ev.exit_status = status;
        ev.exited_at = &ts;
        publish("/tasks/exit", &ev.base);
        zs_state_lock();
        p->status = ZS_STATUS_STOPPED;
        p->exit_status = status;
        p->exited_at = at;
        zs_state_changed();
        zs_process_unref(p);
        zs_state_unlock();
        free(m->container_id);
        free(m);
        return NULL;
}

/* With the lock held. */
static int start_monitor(struct zs_process *p, const char *container_id) {
        struct monitor *m = calloc(1, sizeof(*m));
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (!m || !(m->container_id = strdup(container_id))) {
                free(m);
                return -ENOMEM;
        }
        m->p = p;
        zs_process_ref(p);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = -pthread_create(&t, &attr, monitor_thread, m);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                zs_process_unref(p);
                free(m->container_id);
                free(m);
        }
        return r;
}

static void publish_start(const char *id, const char *exec_id, pid_t pid) {
        if (exec_id && *exec_id) {
                Containerd__Events__TaskExecStarted ev = CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;

                ev.container_id = (char *) id;
                ev.exec_id = (char *) exec_id;
                ev.pid = (uint32_t) pid;
                publish("/tasks/exec-started", &ev.base);
        } else {
                Containerd__Events__TaskStart ev = CONTAINERD__EVENTS__TASK_START__INIT;

                ev.container_id = (char *) id;
                ev.pid = (uint32_t) pid;
                publish("/tasks/start", &ev.base);
        }
}

/* The container's OOM watch, from before its init runs (a memory cgroup of its own is needed). */
static void watch_oom(const char *id, pid_t pid) {
        struct zs_oom *o = NULL;
        int r;

        r = zs_oom_watch(pid, id, &o);
        if (r < 0) {
                if (r != -EPERM && r != -EOPNOTSUPP)
                        zs_log("start: no OOM events for %s: %s", id, strerror(-r));
                return;
        }
        zs_state_lock();
        if (zs_container_get() && !zs_container_get()->oom)
                zs_container_get()->oom = TAKE_PTR(o);
        zs_state_unlock();
        zs_oom_stop(o);
}

int zs_task_start(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__StartRequest *rq = (const void *) request;
        Containerd__Task__V2__StartResponse resp = CONTAINERD__TASK__V2__START_RESPONSE__INIT;
        _cleanup_free_ char *task_id = NULL;
        struct zs_process *p = NULL;
        zy_conn *c = NULL;
        pid_t pid = 0;
        int r, m;

        zs_state_lock();
        p = zs_process_find(rq->id, rq->exec_id);
        if (!p)
                r = zs_fail(res, -ESRCH, "start: no process %s%s%s", rq->id, *rq->exec_id ? " " : "", rq->exec_id);
        else if (p->status != ZS_STATUS_CREATED)
                r = zs_fail(res, -EBUSY, "start: the process is not in the created state");
        else if (!(task_id = strdup(p->task_id)))
                r = -ENOMEM;
        else {
                /* a second Start finds it running; the reference keeps p past a concurrent Delete
                 * of the init, which takes the exec'd processes along */
                p->status = ZS_STATUS_RUNNING;
                pid = p->pid;
                zs_process_ref(p);
                r = 0;
        }
        zs_state_unlock();
        if (r < 0)
                return r;
        if (!*rq->exec_id)
                watch_oom(rq->id, pid);
        r = zs_backend_connect(&c);
        if (r >= 0)
                r = zy_start(c, task_id);
        if (r < 0)
                r = zs_backend_fail(res, c, r, "start");
        zy_conn_free(c);
        /* before the monitor exists, so that /tasks/start comes before the process's /tasks/exit */
        if (r >= 0)
                publish_start(rq->id, rq->exec_id, pid);
        zs_state_lock();
        /* after a failed execve zygoted has the process's exit status: the monitor reads it */
        m = r >= 0 || r == -ECHILD ? start_monitor(p, rq->id) : 0;
        if (r < 0 && r != -ECHILD)
                p->status = ZS_STATUS_CREATED;
        zs_process_unref(p);
        zs_state_changed();
        zs_state_unlock();
        if (m < 0)
                zs_log("start: no exit monitor for %s: %s", task_id, strerror(-m));
        if (r < 0)
                return r;
        resp.pid = (uint32_t) pid;
        return zs_reply(res, &resp.base);
}

/* ---- Delete ------------------------------------------------------------------------------------ */

static void publish_delete(const char *id, pid_t pid, uint32_t status, struct timespec at) {
        Containerd__Events__TaskDelete ev = CONTAINERD__EVENTS__TASK_DELETE__INIT;
        Google__Protobuf__Timestamp ts = zs_timestamp(at);

        ev.container_id = (char *) id;
        ev.id = (char *) id;
        ev.pid = (uint32_t) pid;
        ev.exit_status = status;
        ev.exited_at = &ts;
        publish("/tasks/delete", &ev.base);
}

/* With the lock held: the task ids of the exec'd processes, NULL-terminated. */
static char **exec_task_ids(void) {
        size_t n = 0, i = 0;
        char **ids;

        for (struct zs_process *p = zs_container_get()->processes; p; p = p->next)
                n++;
        ids = calloc(n + 1, sizeof(char *));
        if (!ids)
                return NULL;
        for (struct zs_process *p = zs_container_get()->processes; p; p = p->next)
                if (p->exec_id && !(ids[i++] = strdup(p->task_id)))
                        return zy_strv_free(ids);
        return ids;
}

/* The init's Delete takes the exec'd processes along: zygoted would keep their tasks otherwise.
 * They are gone with the container's pid namespace; without one, they are killed here. */
static void delete_execs(zy_conn *c, char **ids) {
        for (size_t i = 0; ids && ids[i]; i++) {
                struct zy_task_info *ti = NULL;
                int r;

                (void) zy_kill(c, ids[i], SIGKILL, false);
                r = zy_wait(c, ids[i], &ti);
                zy_task_info_free(ti);
                if (r >= 0)
                        r = zy_delete(c, ids[i], NULL);
                if (r < 0 && r != -ESRCH)
                        zs_log("delete: the exec'd task %s: %s", ids[i], strerror(-r));
        }
}

int zs_task_delete(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__DeleteRequest *rq = (const void *) request;
        Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
        Google__Protobuf__Timestamp ts;
        struct timespec at;
        _cleanup_free_ char *task_id = NULL, *bundle = NULL;
        bool init = !*rq->exec_id, mounted = false;
        struct zs_process *p = NULL;
        char **execs = NULL;
        zy_conn *c = NULL;
        int r;

        zs_state_lock();
        p = zs_process_find(rq->id, rq->exec_id);
        if (!p)
                r = zs_fail(res, -ESRCH, "delete: no process %s%s%s", rq->id, *rq->exec_id ? " " : "", rq->exec_id);
        else if (p->status != ZS_STATUS_STOPPED && p->status != ZS_STATUS_CREATED)
                r = zs_fail(res, -EBUSY, "delete: the process is running");
        else if (!(task_id = strdup(p->task_id)) || !(bundle = strdup(zs_container_get()->bundle)) ||
                 (init && !(execs = exec_task_ids())))
                r = -ENOMEM;
        else {
                mounted = zs_container_get()->rootfs_mounted;
                zs_process_ref(p);
                r = 0;
        }
        zs_state_unlock();
        if (r < 0)
                return r;
        r = zs_backend_connect(&c);
        if (r >= 0) {
                delete_execs(c, execs);
                r = zy_delete(c, task_id, NULL);
        }
        zy_strv_free(execs);
        if (r < 0 && r != -ESRCH) {
                r = zs_backend_fail(res, c, r, "delete");
                zy_conn_free(c);
                zs_state_lock();
                zs_process_unref(p);
                zs_state_unlock();
                return r;
        }
        zy_conn_free(c);
        if (init && mounted) {
                r = zs_rootfs_unmount(bundle);
                if (r < 0)
                        zs_log("delete: unmounting the rootfs of %s: %s", rq->id, strerror(-r));
        }
        zs_state_lock();
        if (p->status == ZS_STATUS_CREATED) {
                /* never started: killed by zygoted's Delete */
                p->status = ZS_STATUS_STOPPED;
                p->exit_status = 128 + SIGKILL;
                p->exited_at = zs_now();
        }
        resp.pid = (uint32_t) p->pid;
        resp.exit_status = p->exit_status;
        at = p->exited_at;
        ts = zs_timestamp(at);
        /* a concurrent Delete may have taken it off already */
        if (init && !p->deleted)
                zs_container_clear();
        else if (!p->deleted)
                zs_process_remove(p);
        zs_process_unref(p);
        zs_state_changed();
        zs_state_unlock();
        resp.exited_at = &ts;
        if (init)
                publish_delete(rq->id, (pid_t) resp.pid, resp.exit_status, at);
        return zs_reply(res, &resp.base);
}
