/* SPDX-License-Identifier: MIT */
/*
 * ttrpc, the transport containerd speaks to its shims: frames on a Unix stream socket, each a
 * 10-byte header (length and stream id, big-endian uint32 each, then a type and a flags byte)
 * and a protobuf message (zs_ttrpc.Request or zs_ttrpc.Response, ttrpc.proto).
 *
 * The server reads each connection in a thread of its own and answers each request in a thread
 * of its own: a Wait stays blocked while the Start, Kill and State calls that end it go through
 * on the same connection. Replies are written whole, one at a time per connection.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZS_TTRPC_HEADER_SIZE 10
/* ttrpc's own limit on one message: longer frames are refused, on both sides */
#define ZS_TTRPC_MESSAGE_MAX (4U << 20)

enum zs_ttrpc_type {
        ZS_TTRPC_REQUEST = 1,
        ZS_TTRPC_RESPONSE = 2,
};

/* gRPC status codes, the ones this shim answers with */
enum zs_code {
        ZS_CODE_OK = 0,
        ZS_CODE_UNKNOWN = 2,
        ZS_CODE_INVALID_ARGUMENT = 3,
        ZS_CODE_DEADLINE_EXCEEDED = 4,
        ZS_CODE_NOT_FOUND = 5,
        ZS_CODE_ALREADY_EXISTS = 6,
        ZS_CODE_PERMISSION_DENIED = 7,
        ZS_CODE_RESOURCE_EXHAUSTED = 8,
        ZS_CODE_FAILED_PRECONDITION = 9,
        ZS_CODE_UNIMPLEMENTED = 12,
        ZS_CODE_INTERNAL = 13,
        ZS_CODE_UNAVAILABLE = 14,
};

struct zs_ttrpc_header {
        uint32_t length;
        uint32_t stream;
        uint8_t type;
        uint8_t flags;
};

void zs_ttrpc_header_encode(const struct zs_ttrpc_header *h, uint8_t buf[ZS_TTRPC_HEADER_SIZE]);
void zs_ttrpc_header_decode(const uint8_t buf[ZS_TTRPC_HEADER_SIZE], struct zs_ttrpc_header *h);

/* What a request's handler answers: a status code with its message (malloc'd, may be NULL), the
 * encoded response (malloc'd, may be NULL for an empty message) and whether the server stops once
 * this reply is written (Shutdown). */
struct zs_ttrpc_result {
        int code;
        char *message;
        uint8_t *payload;
        size_t length;
        bool stop;
};

typedef void (*zs_ttrpc_handler)(const char *service, const char *method, const uint8_t *payload, size_t length,
                                 struct zs_ttrpc_result *result);

/* Serves listen_fd until a handler's result asks to stop (after that reply went out). Returns 0,
 * or a negative errno when the listening socket fails. */
int zs_ttrpc_serve(int listen_fd, zs_ttrpc_handler handler);

/* A call on a connected socket (the client side; one call in flight per connection): the status
 * code (>= 0; with a failure's message in *ret_message, malloc'd, when ret_message is given), or a
 * negative errno when the transport failed. The response's payload is not kept. */
int zs_ttrpc_call(int fd, uint32_t stream, const char *service, const char *method, const uint8_t *payload,
                  size_t length, char **ret_message);
