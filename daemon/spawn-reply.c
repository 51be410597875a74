/* SPDX-License-Identifier: MIT */
/*
 * Every reply to a Spawn: the task started, or SpawnFailed naming the step that failed, its
 * errno and a message, whether the worker reported it (task.c, from the status pipe) or the
 * daemon failed before the worker ran (spawn-start.c, spawn-park.c). One place composes them, so
 * that every SpawnFailed has the same fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "call.h"
#include "child.h"
#include "server.h"
#include "spawn-reply.h"
#include "util.h"

static json_object *failed_params(const char *step, int err, const char *message) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "step", json_object_new_string(step));
        json_object_object_add(p, "errno", json_object_new_int(err));
        json_object_object_add(p, "message", json_object_new_string(message ? message : strerror(err)));
        return p;
}

void zd_spawn_reply_spawned(struct zd_conn *c, const char *id, pid_t pid, enum zd_tier tier, int pidfd, bool more) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "id", json_object_new_string(id));
        json_object_object_add(p, "pid", json_object_new_int(pid));
        json_object_object_add(p, "tier", json_object_new_string(zd_tier_to_string(tier)));
        zd_reply(c, p, more, pidfd);
}

void zd_spawn_reply_failed(struct zd_conn *c, const struct ze_status *st) {
        const char *name = ze_step_to_string((enum ze_step) st->step);
        char msg[96];

        /* a container's hook (its init runs them): which one and how it ended, not an errno */
        if (st->step == ZE_STEP_CREATE_HOOK || st->step == ZE_STEP_START_HOOK) {
                if (st->status < 0)
                        snprintf(msg, sizeof(msg), "%s %d could not be run: %s", name, st->index, strerror(st->err));
                else if (st->err == ETIME)
                        snprintf(msg, sizeof(msg), "%s %d timed out and was killed", name, st->index);
                else
                        snprintf(msg, sizeof(msg), "%s %d failed: %s %d", name, st->index,
                                 st->status > 128 ? "killed by signal" : "exit status",
                                 st->status > 128 ? st->status - 128 : st->status);
        }
        zd_reply_error(c, ZY_ERROR_SPAWN_FAILED,
                       failed_params(name, st->err,
                                     st->step == ZE_STEP_CREATE_HOOK || st->step == ZE_STEP_START_HOOK ? msg : NULL));
}

void zd_spawn_reply_failed_text(struct zd_conn *c, const char *step, int err, const char *message) {
        zd_reply_error(c, ZY_ERROR_SPAWN_FAILED, failed_params(step, err, message));
}

int zd_spawn_fail_call(struct zd_call *call, int r, const char *step, const char *message) {
        return zd_call_fail(call, r, ZY_ERROR_SPAWN_FAILED, failed_params(step, -r, message));
}

void zd_spawn_reply_recorded(struct zd_call *call) {
        zd_reply_error(call->conn, call->error, TAKE_PTR(call->error_params));
}
