/* SPDX-License-Identifier: MIT */
/* The Task service's dispatch table. */
#include "service.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "log.h"
#include "reply.h"
#include "task.h"
#include "util.h"

#define REQ(name) &containerd__task__v2__##name##__descriptor

/* Every method of the service; those without a function answer UNIMPLEMENTED with the reason. */
static const struct method {
        const char *name;
        const ProtobufCMessageDescriptor *request;
        zs_task_method fn;
        const char *missing;
} methods[] = {
        { "State", REQ(state_request), zs_task_state, NULL },
        { "Create", REQ(create_task_request), zs_task_create, NULL },
        { "Start", REQ(start_request), zs_task_start, NULL },
        { "Delete", REQ(delete_request), zs_task_delete, NULL },
        { "Pids", REQ(pids_request), zs_task_pids, NULL },
        { "Pause", REQ(pause_request), zs_task_pause, NULL },
        { "Resume", REQ(resume_request), zs_task_resume, NULL },
        { "Checkpoint", REQ(checkpoint_task_request), NULL, "checkpoints are not supported" },
        { "Kill", REQ(kill_request), zs_task_kill, NULL },
        { "Exec", REQ(exec_process_request), zs_task_exec, NULL },
        { "ResizePty", REQ(resize_pty_request), zs_task_resize_pty, NULL },
        { "CloseIO", REQ(close_iorequest), zs_task_close_io, NULL },
        { "Update", REQ(update_task_request), zs_task_update, NULL },
        { "Wait", REQ(wait_request), zs_task_wait, NULL },
        { "Stats", REQ(stats_request), zs_task_stats, NULL },
        { "Connect", REQ(connect_request), zs_task_connect, NULL },
        { "Shutdown", REQ(shutdown_request), zs_task_shutdown, NULL },
};

int zs_service_code(int err) {
        switch (-err) {
        case 0:
                return ZS_CODE_OK;
        case ESRCH:
        case ENOENT:
                return ZS_CODE_NOT_FOUND;
        case EEXIST:
                return ZS_CODE_ALREADY_EXISTS;
        case EBUSY:
                return ZS_CODE_FAILED_PRECONDITION;
        case EINVAL:
        case E2BIG:
                return ZS_CODE_INVALID_ARGUMENT;
        case EPERM:
        case EACCES:
                return ZS_CODE_PERMISSION_DENIED;
        case EOPNOTSUPP:
        case ENOSYS:
                return ZS_CODE_UNIMPLEMENTED;
        case EAGAIN:
        case ENOMEM:
                return ZS_CODE_RESOURCE_EXHAUSTED;
        case ETIMEDOUT:
                return ZS_CODE_DEADLINE_EXCEEDED;
        case ECONNREFUSED:
        case ECONNRESET:
        case ENOTCONN:
                return ZS_CODE_UNAVAILABLE;
        default:
                return ZS_CODE_UNKNOWN;
        }
}

__attribute__((format(printf, 3, 4))) static void fail(struct zs_ttrpc_result *res, int code, const char *fmt, ...) {
        va_list ap;

        res->code = code;
        free(res->message);
        va_start(ap, fmt);
        if (vasprintf(&res->message, fmt, ap) < 0)
                res->message = NULL;
        va_end(ap);
}

void zs_service_handle(const char *service, const char *method, const uint8_t *payload, size_t length,
                       struct zs_ttrpc_result *res) {
        const struct method *m = NULL;
        ProtobufCMessage *rq;
        int r;

        if (!streq(service, ZS_TASK_SERVICE)) {
                fail(res, ZS_CODE_UNIMPLEMENTED, "service %s", service);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                if (streq(methods[i].name, method))
                        m = &methods[i];
        if (!m) {
                fail(res, ZS_CODE_UNIMPLEMENTED, "method %s.%s", service, method);
                return;
        }
        if (!m->fn) {
                fail(res, ZS_CODE_UNIMPLEMENTED, "%s: %s", method, m->missing);
                return;
        }
        rq = protobuf_c_message_unpack(m->request, NULL, length, payload);
        if (!rq) {
                fail(res, ZS_CODE_INVALID_ARGUMENT, "%s: the request is not a %s", method, m->request->name);
                return;
        }
        r = m->fn(rq, res);
        protobuf_c_message_free_unpacked(rq, NULL);
        if (r >= 0)
                return;
        res->code = zs_service_code(r);
        if (!res->message)
                zs_fail(res, r, "%s: %s", method, strerror(-r));
        zs_log("%s", res->message ? res->message : strerror(-r));
        free(res->payload);
        res->payload = NULL;
        res->length = 0;
}
