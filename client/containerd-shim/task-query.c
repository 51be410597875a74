/* SPDX-License-Identifier: MIT */
/* The Task service's calls about a process that exists: State, Pids, Kill, Wait, CloseIO,
 * ResizePty, Pause, Resume, Stats, Update; and the shim's own: Connect, Shutdown. */
#include "task.h"

#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup.h"
#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "log.h"
#include "process.h"
#include "publish.h"
#include "reply.h"
#include "stats.h"
#include "util.h"

static int reply_empty(struct zs_ttrpc_result *res) {
        Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;

        return zs_reply(res, &e.base);
}

/* With the lock held: the process, or the NotFound failure. */
static int find(const char *what, const char *id, const char *exec_id, struct zs_ttrpc_result *res,
                struct zs_process **ret) {
        struct zs_process *p = zs_process_find(id, exec_id);

        if (!p)
                return zs_fail(res, -ESRCH, "%s: no process %s%s%s", what, id, *exec_id ? " " : "", exec_id);
        *ret = p;
        return 0;
}

/* The container's init, running (or created too: update), as the cgroup calls take it; its bundle
 * (malloc'd) when ret_bundle is not NULL. Takes and releases the lock. */
static int container_init(const char *what, const char *id, bool created_too, struct zs_ttrpc_result *res,
                          pid_t *ret_pid, char **ret_bundle) {
        struct zs_process *p = NULL;
        struct zs_container *c;
        int r;

        zs_state_lock();
        r = find(what, id, "", res, &p);
        if (r >= 0 && p->status != ZS_STATUS_RUNNING && !(created_too && p->status == ZS_STATUS_CREATED))
                r = zs_fail(res, -EBUSY, "%s: the container %s", what, created_too ? "has exited" : "is not running");
        c = zs_container_get();
        if (r >= 0 && ret_bundle && c && c->bundle && !(*ret_bundle = strdup(c->bundle)))
                r = zs_fail(res, -ENOMEM, "%s: out of memory", what);
        if (r >= 0)
                *ret_pid = p->pid;
        zs_state_unlock();
        return r;
}

int zs_task_state(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__StateRequest *rq = (const void *) request;
        Containerd__Task__V2__StateResponse resp = CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
        Google__Protobuf__Timestamp ts;
        struct zs_process *p = NULL;
        int r;

        zs_state_lock();
        r = find("state", rq->id, rq->exec_id, res, &p);
        if (r >= 0) {
                resp.id = rq->id;
                resp.exec_id = rq->exec_id;
                resp.bundle = zs_container_get()->bundle;
                resp.pid = (uint32_t) p->pid;
                resp.status = (Containerd__V1__Types__Status) p->status;
                if (p->status == ZS_STATUS_RUNNING && zs_container_get()->paused)
                        resp.status = CONTAINERD__V1__TYPES__STATUS__PAUSED;
                if (p->stdin_path)
                        resp.stdin = p->stdin_path;
                if (p->stdout_path)
                        resp.stdout = p->stdout_path;
                if (p->stderr_path)
                        resp.stderr = p->stderr_path;
                resp.terminal = p->terminal;
                if (p->status == ZS_STATUS_STOPPED) {
                        resp.exit_status = p->exit_status;
                        ts = zs_timestamp(p->exited_at);
                        resp.exited_at = &ts;
                }
                r = zs_reply(res, &resp.base);
        }
        zs_state_unlock();
        return r;
}

int zs_task_pids(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__PidsRequest *rq = (const void *) request;
        Containerd__Task__V2__PidsResponse resp = CONTAINERD__TASK__V2__PIDS_RESPONSE__INIT;
        _cleanup_free_ Containerd__V1__Types__ProcessInfo *infos = NULL;
        _cleanup_free_ Containerd__V1__Types__ProcessInfo **ptrs = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        struct zs_process *p = NULL;
        zy_conn *c = NULL;
        size_t n = 0;
        int r;

        zs_state_lock();
        r = find("pids", rq->id, "", res, &p);
        zs_state_unlock();
        if (r < 0)
                return r;
        r = zs_backend_connect(&c);
        if (r >= 0)
                r = zy_pids(c, rq->id, &pids, &n);
        if (r < 0) {
                r = zs_backend_fail(res, c, r, "pids");
                zy_conn_free(c);
                return r;
        }
        zy_conn_free(c);
        infos = calloc(n + 1, sizeof(*infos));
        ptrs = calloc(n + 1, sizeof(*ptrs));
        if (!infos || !ptrs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                containerd__v1__types__process_info__init(&infos[i]);
                infos[i].pid = (uint32_t) pids[i];
                ptrs[i] = &infos[i];
        }
        resp.n_processes = n;
        resp.processes = ptrs;
        return zs_reply(res, &resp.base);
}

int zs_task_kill(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__KillRequest *rq = (const void *) request;
        _cleanup_free_ char *task_id = NULL;
        struct zs_process *p = NULL;
        zy_conn *c = NULL;
        int r;

        if (rq->signal > 64)
                return zs_fail(res, -EINVAL, "kill: signal %u", rq->signal);
        zs_state_lock();
        r = find("kill", rq->id, rq->exec_id, res, &p);
        if (r >= 0 && p->status == ZS_STATUS_STOPPED)
                r = zs_fail(res, -ESRCH, "kill: the process has exited");
        if (r >= 0 && !(task_id = strdup(p->task_id)))
                r = -ENOMEM;
        zs_state_unlock();
        if (r < 0)
                return r;
        r = zs_backend_connect(&c);
        /* "all": every process of the container, which only the init's task covers */
        if (r >= 0)
                r = zy_kill(c, task_id, (int) rq->signal, rq->all && !*rq->exec_id);
        /* InvalidState: zygoted saw the exit before the exit monitor told this shim. NotFound,
         * as above and as runc's shim answers: containerd's StopContainer takes it as done,
         * where FailedPrecondition would fail the kubelet's call (tests/runtime/test_cri.py). */
        if (r == -EBUSY)
                r = zs_fail(res, -ESRCH, "kill: the process has exited");
        else if (r < 0)
                r = zs_backend_fail(res, c, r, "kill");
        zy_conn_free(c);
        return r < 0 ? r : reply_empty(res);
}

int zs_task_wait(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__WaitRequest *rq = (const void *) request;
        Containerd__Task__V2__WaitResponse resp = CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
        Google__Protobuf__Timestamp ts;
        struct zs_process *p = NULL;
        int r;

        zs_state_lock();
        r = find("wait", rq->id, rq->exec_id, res, &p);
        if (r >= 0) {
                /* the exit monitor or Delete (of a process never started) ends it */
                zs_process_ref(p);
                while (p->status != ZS_STATUS_STOPPED && !p->deleted)
                        zs_state_wait();
                if (p->status == ZS_STATUS_STOPPED) {
                        resp.exit_status = p->exit_status;
                        ts = zs_timestamp(p->exited_at);
                        resp.exited_at = &ts;
                        r = zs_reply(res, &resp.base);
                } else
                        r = zs_fail(res, -ESRCH, "wait: the process was deleted");
                zs_process_unref(p);
        }
        zs_state_unlock();
        return r;
}

int zs_task_close_io(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__CloseIORequest *rq = (const void *) request;
        struct zs_process *p = NULL;
        int r;

        zs_state_lock();
        r = find("closeio", rq->id, rq->exec_id, res, &p);
        if (r >= 0 && rq->stdin)
                zs_stdio_close_stdin(&p->io);
        zs_state_unlock();
        return r < 0 ? r : reply_empty(res);
}

int zs_task_resize_pty(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__ResizePtyRequest *rq = (const void *) request;
        struct zs_process *p = NULL;
        int r;

        zs_state_lock();
        r = find("resizepty", rq->id, rq->exec_id, res, &p);
        if (r >= 0) {
                r = zs_stdio_resize(&p->io, rq->width, rq->height);
                if (r < 0)
                        zs_fail(res, r, "resizepty: %s", r == -ENOTTY ? "the process has no terminal" : strerror(-r));
        }
        zs_state_unlock();
        return r < 0 ? r : reply_empty(res);
}

static int freeze(const char *id, bool frozen, struct zs_ttrpc_result *res) {
        const char *what = frozen ? "pause" : "resume";
        pid_t pid = 0;
        int r;

        r = container_init(what, id, false, res, &pid, NULL);
        if (r < 0)
                return r;
        r = zs_cgroup_freeze(pid, frozen);
        if (r < 0)
                return zs_fail(res, r, "%s: %s", what,
                               r == -EPERM ? "the container has no cgroup of its own" : strerror(-r));
        zs_state_lock();
        if (zs_container_get())
                zs_container_get()->paused = frozen;
        zs_state_unlock();
        return 0;
}

int zs_task_pause(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__PauseRequest *rq = (const void *) request;
        Containerd__Events__TaskPaused ev = CONTAINERD__EVENTS__TASK_PAUSED__INIT;
        int r;

        r = freeze(rq->id, true, res);
        if (r < 0)
                return r;
        ev.container_id = rq->id;
        if (zs_publish("/tasks/paused", &ev.base) < 0)
                zs_log("publishing /tasks/paused failed");
        return reply_empty(res);
}

int zs_task_resume(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__ResumeRequest *rq = (const void *) request;
        Containerd__Events__TaskResumed ev = CONTAINERD__EVENTS__TASK_RESUMED__INIT;
        int r;

        r = freeze(rq->id, false, res);
        if (r < 0)
                return r;
        ev.container_id = rq->id;
        if (zs_publish("/tasks/resumed", &ev.base) < 0)
                zs_log("publishing /tasks/resumed failed");
        return reply_empty(res);
}

int zs_task_stats(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__StatsRequest *rq = (const void *) request;
        Containerd__Task__V2__StatsResponse resp = CONTAINERD__TASK__V2__STATS_RESPONSE__INIT;
        Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
        _cleanup_free_ uint8_t *data = NULL;
        const char *url = NULL;
        pid_t pid = 0;
        size_t n = 0;
        int r;

        r = container_init("stats", rq->id, false, res, &pid, NULL);
        if (r < 0)
                return r;
        r = zs_stats(pid, &url, &data, &n);
        if (r < 0)
                return zs_fail(res, r, "stats: %s",
                               r == -EPERM ? "the container has no cgroup of its own" : strerror(-r));
        any.type_url = (char *) url;
        any.value.data = data;
        any.value.len = n;
        resp.stats = &any;
        return zs_reply(res, &resp.base);
}

int zs_task_update(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__UpdateTaskRequest *rq = (const void *) request;
        _cleanup_free_ char *bundle = NULL, *err = NULL;
        pid_t pid = 0;
        int r;

        if (!rq->resources || !rq->resources->value.data)
                return zs_fail(res, -EINVAL, "update: no resources");
        r = container_init("update", rq->id, true, res, &pid, &bundle);
        if (r < 0)
                return r;
        /* the manager's update, as `zygote-runc update` runs it: a field refused by name */
        r = zs_cgroup_update(pid, bundle, (const char *) rq->resources->value.data, rq->resources->value.len, &err);
        if (r < 0 && err)
                return zs_fail(res, r, "update: %s", err);
        if (r < 0)
                return zs_fail(res, r, "update: %s",
                               r == -EPERM ? "the container has no cgroup of its own" : strerror(-r));
        return reply_empty(res);
}

int zs_task_connect(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__ConnectRequest *rq = (const void *) request;
        Containerd__Task__V2__ConnectResponse resp = CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
        struct zs_process *p = NULL;

        resp.shim_pid = (uint32_t) getpid();
        resp.version = (char *) "zygote " ZYGOTE_VERSION;
        zs_state_lock();
        p = zs_process_find(rq->id, NULL);
        if (p)
                resp.task_pid = (uint32_t) p->pid;
        zs_state_unlock();
        return zs_reply(res, &resp.base);
}

int zs_task_shutdown(const ProtobufCMessage *request, struct zs_ttrpc_result *res) {
        const Containerd__Task__V2__ShutdownRequest *rq = (const void *) request;
        unsigned n;

        zs_state_lock();
        n = zs_process_count();
        zs_state_unlock();
        /* containerd asks after every Delete; the shim stays while it has a process */
        res->stop = n == 0 || rq->now;
        return reply_empty(res);
}
