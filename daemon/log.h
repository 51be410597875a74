/* SPDX-License-Identifier: MIT */
/* Logging to the journal (structured fields) or stderr; see log.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* binary: the program's file on disk, or NULL. zygoted runs from a sealed memfd copy of itself,
 * so the journal's own _EXE= says /memfd:zygoted; every entry then names the file as
 * ZYGOTE_BINARY= too. */
void zd_log_open(const char *binary);
bool zd_log_enabled(int priority);
void zd_log(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Journal fields of one line, formatted into one fixed buffer: logging never allocates. A field
 * that does not fit is cut short or left out, never the line. */
struct zd_log_fields {
        struct iovec iov[16];
        size_t n;
        char buf[6144];
        size_t used;
};

/* Adds one "NAME=value" field. */
void zd_log_field(struct zd_log_fields *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs message with the fields added so far (MESSAGE, PRIORITY and SYSLOG_IDENTIFIER are added
 * here); on stderr only the message. */
void zd_log_struct(int priority, struct zd_log_fields *f, const char *message);
