/* SPDX-License-Identifier: MIT */
/* How a method of the Task service answers: its response message packed into the ttrpc result,
 * or a negative errno with a message (service.c turns the errno into the status code). */
#pragma once

#include <errno.h>
#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "google/protobuf/timestamp.pb-c.h"
#include "ttrpc.h"

static inline int zs_reply(struct zs_ttrpc_result *res, const ProtobufCMessage *m) {
        size_t n = protobuf_c_message_get_packed_size(m);

        free(res->payload);
        res->payload = malloc(n ? n : 1);
        if (!res->payload)
                return -ENOMEM;
        res->length = protobuf_c_message_pack(m, res->payload);
        return 0;
}

/* Records the message of a failure and returns err (negative). */
__attribute__((format(printf, 3, 4))) static inline int zs_fail(struct zs_ttrpc_result *res, int err, const char *fmt,
                                                                ...) {
        va_list ap;

        free(res->message);
        res->message = NULL;
        va_start(ap, fmt);
        if (vasprintf(&res->message, fmt, ap) < 0)
                res->message = NULL;
        va_end(ap);
        return err;
}

static inline Google__Protobuf__Timestamp zs_timestamp(struct timespec ts) {
        Google__Protobuf__Timestamp t = GOOGLE__PROTOBUF__TIMESTAMP__INIT;

        t.seconds = ts.tv_sec;
        t.nanos = (int32_t) ts.tv_nsec;
        return t;
}

static inline struct timespec zs_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return ts;
}

static inline struct timespec zs_timespec(double seconds) {
        struct timespec ts = { .tv_sec = (time_t) seconds };

        ts.tv_nsec = (long) ((seconds - (double) ts.tv_sec) * 1e9);
        return ts;
}
