/* SPDX-License-Identifier: MIT */
/*
 * The io.zygote.Launcher protocol's names and limits, shared by zygoted, libzygote, the fuzzers
 * and the tests, so that neither side can drift from the other. The method and error names are
 * those of protocol/io.zygote.Launcher.varlink; the limits are what zygoted enforces and what the
 * library refuses to send past.
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ZY_INTERFACE "io.zygote.Launcher"
#define ZY_VARLINK_SERVICE "org.varlink.service"

/* Methods. */
#define ZY_METHOD_SPAWN ZY_INTERFACE ".Spawn"
#define ZY_METHOD_CREATE_CONTAINER ZY_INTERFACE ".CreateContainer"
#define ZY_METHOD_EXEC_CONTAINER ZY_INTERFACE ".ExecContainer"
#define ZY_METHOD_START ZY_INTERFACE ".Start"
#define ZY_METHOD_KILL ZY_INTERFACE ".Kill"
#define ZY_METHOD_WAIT ZY_INTERFACE ".Wait"
#define ZY_METHOD_STATE ZY_INTERFACE ".State"
#define ZY_METHOD_PIDS ZY_INTERFACE ".Pids"
#define ZY_METHOD_CLOSE_IO ZY_INTERFACE ".CloseIO"
#define ZY_METHOD_LIST ZY_INTERFACE ".List"
#define ZY_METHOD_DELETE ZY_INTERFACE ".Delete"
#define ZY_METHOD_EVENTS ZY_INTERFACE ".Events"
#define ZY_METHOD_LIST_PROFILES ZY_INTERFACE ".ListProfiles"
#define ZY_METHOD_RELOAD_PROFILES ZY_INTERFACE ".ReloadProfiles"
#define ZY_METHOD_GET_STATUS ZY_INTERFACE ".GetStatus"
#define ZY_METHOD_GET_FILTER ZY_INTERFACE ".GetFilter"
#define ZY_METHOD_GET_INFO ZY_VARLINK_SERVICE ".GetInfo"
#define ZY_METHOD_GET_INTERFACE_DESCRIPTION ZY_VARLINK_SERVICE ".GetInterfaceDescription"

/* Errors of the interface. */
#define ZY_ERROR_NO_SUCH_PROFILE ZY_INTERFACE ".NoSuchProfile"
#define ZY_ERROR_NO_SUCH_FILTER ZY_INTERFACE ".NoSuchFilter"
#define ZY_ERROR_NO_SUCH_TASK ZY_INTERFACE ".NoSuchTask"
#define ZY_ERROR_TASK_EXISTS ZY_INTERFACE ".TaskExists"
#define ZY_ERROR_INVALID_STATE ZY_INTERFACE ".InvalidState"
#define ZY_ERROR_PERMISSION_DENIED ZY_INTERFACE ".PermissionDenied"
#define ZY_ERROR_LIMIT_EXCEEDED ZY_INTERFACE ".LimitExceeded"
#define ZY_ERROR_SPAWN_FAILED ZY_INTERFACE ".SpawnFailed"
#define ZY_ERROR_CALLER_CONFINED ZY_INTERFACE ".CallerConfined"
#define ZY_ERROR_RECORDING_UNAVAILABLE ZY_INTERFACE ".RecordingUnavailable"

/* Errors every varlink service may answer. */
#define ZY_ERROR_INTERFACE_NOT_FOUND ZY_VARLINK_SERVICE ".InterfaceNotFound"
#define ZY_ERROR_METHOD_NOT_FOUND ZY_VARLINK_SERVICE ".MethodNotFound"
#define ZY_ERROR_METHOD_NOT_IMPLEMENTED ZY_VARLINK_SERVICE ".MethodNotImplemented"
#define ZY_ERROR_INVALID_PARAMETER ZY_VARLINK_SERVICE ".InvalidParameter"
#define ZY_ERROR_VARLINK_PERMISSION_DENIED ZY_VARLINK_SERVICE ".PermissionDenied"
#define ZY_ERROR_EXPECTED_MORE ZY_VARLINK_SERVICE ".ExpectedMore"

/* Largest message either side sends or accepts: JSON text plus its terminating NUL. */
#define ZY_MESSAGE_MAX (64U * 1024U)
/* Most fds one message may carry (SCM_RIGHTS). */
#define ZY_FDS_MAX 64U

/* The system daemon's socket. */
#define ZY_SOCKET_SYSTEM "/run/zygote/zygoted.sock"

/* The socket both zygoted and libzygote use when none is named, written to buf:
 * $ZYGOTE_SOCKET if set and not empty; else ZY_SOCKET_SYSTEM for root; else
 * $XDG_RUNTIME_DIR/zygote/zygoted.sock, or /run/user/UID/zygote/zygoted.sock when
 * XDG_RUNTIME_DIR is unset or not absolute. Returns 0, or -ENAMETOOLONG when buf is too small. */
static inline int zy_protocol_socket_path(char *buf, size_t size) {
        const char *e = secure_getenv("ZYGOTE_SOCKET");
        int n;

        if (e && *e)
                n = snprintf(buf, size, "%s", e);
        else if (geteuid() == 0)
                n = snprintf(buf, size, "%s", ZY_SOCKET_SYSTEM);
        else {
                e = secure_getenv("XDG_RUNTIME_DIR");
                if (e && e[0] == '/')
                        n = snprintf(buf, size, "%s/zygote/zygoted.sock", e);
                else
                        n = snprintf(buf, size, "/run/user/%u/zygote/zygoted.sock", (unsigned) getuid());
        }
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}
