/* SPDX-License-Identifier: MIT */
/*
 * The methods of containerd.task.v2.Task: each takes its decoded request and answers with
 * zs_reply() (0) or a negative errno with zs_fail()'s message. task.c holds the lifecycle
 * (Create, Start, Exec, Delete and the exit monitor), task-query.c the rest.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>

#include "ttrpc.h"

typedef int (*zs_task_method)(const ProtobufCMessage *request, struct zs_ttrpc_result *res);

int zs_task_create(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_start(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_exec(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_delete(const ProtobufCMessage *request, struct zs_ttrpc_result *res);

int zs_task_state(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_pids(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_kill(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_wait(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_close_io(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_resize_pty(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_pause(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_resume(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_stats(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_update(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_connect(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
int zs_task_shutdown(const ProtobufCMessage *request, struct zs_ttrpc_result *res);
