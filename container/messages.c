/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's messages: stderr for podman (it maps the text to 126/127), the log file for
 * containerd (it reports the last {"level":"error"} line). Debug and info lines are runc's
 * (logrus's): `time="..." level=debug msg="..."`, or with --log-format json
 * {"level":"debug","msg":"...","time":"..."}; in the log file when there is one, else (with
 * --debug) on stderr, as runc writes them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"

/* msg between double quotes, escaped as Go's %q escapes it (logrus's text format), so that a
 * message with a quote or a newline stays one parsable line. */
static void put_quoted(FILE *f, const char *msg) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) msg; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* One line of level in runc's text (logrus) or JSON shape, to f. */
static void format_line(FILE *f, bool json, const char *level, const char *msg) {
        char ts[64];
        struct timespec now;
        struct tm tm;

        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        if (json) {
                json_object *o = json_object_new_object();
                char t[96];

                snprintf(t, sizeof(t), "%s.%09ldZ", ts, now.tv_nsec);
                json_object_object_add(o, "level", json_object_new_string(level));
                json_object_object_add(o, "msg", json_object_new_string(msg));
                json_object_object_add(o, "time", json_object_new_string(t));
                fprintf(f, "%s\n",
                        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
                return;
        }
        fprintf(f, "time=\"%sZ\" level=%s msg=", ts, level);
        put_quoted(f, msg);
        fputc('\n', f);
}

static void log_line(const struct zct_ctx *c, const char *level, const char *msg) {
        FILE *f;

        if (!c->log_path)
                return;
        f = fopen(c->log_path, "ae");
        if (!f)
                return;
        format_line(f, c->log_json, level, msg);
        fclose(f);
}

/* One message: on stderr after "zygote-runc: " and prefix, unless prefix is NULL, and in the log
 * file at level. The format itself stands in for a message that cannot be formatted. */
__attribute__((format(printf, 4, 0))) static void emit(const struct zct_ctx *c, const char *level, const char *prefix,
                                                       const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;

        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        if (c->msg_to_fd) {
                const char *m = msg ? msg : fmt;
                if (streq(level, "error"))
                        (void) !write(c->msg_fd, m, strlen(m));
        } else if (prefix)
                fprintf(stderr, "zygote-runc: %s%s\n", prefix, msg ? msg : fmt);
        log_line(c, level, msg ? msg : fmt);
}

/* A debug or info line: in the log file when there is one, else on stderr with --debug, in
 * runc's text shape there (runc's --debug without --log). */
__attribute__((format(printf, 3, 0))) static void emit_quiet(const struct zct_ctx *c, const char *level,
                                                             const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;

        if (c->msg_to_fd || c->log_path) {
                emit(c, level, NULL, fmt, ap);
                return;
        }
        if (!c->debug)
                return;
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        format_line(stderr, false, level, msg ? msg : fmt);
}

int zct_error(const struct zct_ctx *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        emit(c, "error", "", fmt, ap);
        va_end(ap);
        return 1;
}

/* zct_error() of "MESSAGE: <errno's words>", errno taken before anything can change it. */
int zct_error_errno(const struct zct_ctx *c, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        int r = negative_errno();
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        zct_error(c, "%s: %s", msg ? msg : fmt, zct_errstr(-r));
        return r;
}

/* Only with --debug: in the log file, or on stderr without one. */
void zct_debug(const struct zct_ctx *c, const char *fmt, ...) {
        va_list ap;

        if (!c->debug)
                return;
        va_start(ap, fmt);
        emit_quiet(c, "debug", fmt, ap);
        va_end(ap);
}

/* In the log file; on stderr with --debug and no log file. */
void zct_info(const struct zct_ctx *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        emit_quiet(c, "info", fmt, ap);
        va_end(ap);
}

/* On stderr ("warning: ") and in the log file, with or without --debug. */
void zct_warn(const struct zct_ctx *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        emit(c, "warning", "warning: ", fmt, ap);
        va_end(ap);
}

/* strerror in Go's lower case, which podman matches ("no such file or directory") */
const char *zct_errstr(int err) {
        static char buf[128];

        snprintf(buf, sizeof(buf), "%s", strerror(err));
        if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
                buf[0] = (char) (buf[0] - 'A' + 'a');
        return buf;
}
