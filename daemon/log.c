/* SPDX-License-Identifier: MIT */
/*
 * Logging at the edges: to the journal with structured fields when our stderr is the journal
 * (systemd sets JOURNAL_STREAM to the device:inode of the stream it gave us, and a stderr
 * redirected elsewhere no longer matches), plain lines on stderr otherwise.
 *
 * zd_log() is a line; zd_log_struct() is a line with fields of its own (the task audit trail
 * of task.c uses it), like systemd's log_struct(). If the journal cannot take a line (no
 * journald socket, or a failed send), the line goes to stderr instead, never nowhere.
 *
 * A leaf: it knows nothing of the rest of the daemon.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
/* Without it sd_journal_sendv() adds CODE_FILE=, CODE_LINE=, CODE_FUNC= of its call, which is
 * always journal_send() below: nothing about the line, and the build tree's absolute path. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

static bool use_journal;
static int max_priority = LOG_INFO;
static char binary_path[PATH_MAX];

void zd_log_open(const char *binary) {
        if (binary)
                snprintf(binary_path, sizeof(binary_path), "%s", binary);
        const char *e = getenv("JOURNAL_STREAM");
        const char *lvl = getenv("ZYGOTE_LOG_LEVEL");
        if (lvl) {
                if (streq_ptr(lvl, "debug"))
                        max_priority = LOG_DEBUG;
                else if (streq_ptr(lvl, "notice"))
                        max_priority = LOG_NOTICE;
                else if (streq_ptr(lvl, "warning"))
                        max_priority = LOG_WARNING;
                else if (streq_ptr(lvl, "err"))
                        max_priority = LOG_ERR;
        }
        if (!e)
                return;
        unsigned long long dev, ino;
        struct stat st;
        if (sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
            (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino)
                use_journal = true;
}

static const char *prio_prefix(int priority) {
        switch (priority) {
        case LOG_EMERG:
        case LOG_ALERT:
        case LOG_CRIT:
        case LOG_ERR:
                return "error: ";
        case LOG_WARNING:
                return "warning: ";
        default:
                return "";
        }
}

bool zd_log_enabled(int priority) {
        return priority <= max_priority;
}

void zd_log_field(struct zd_log_fields *f, const char *fmt, ...) {
        if (f->n >= ELEMENTSOF(f->iov) || f->used >= sizeof(f->buf))
                return;
        char *p = f->buf + f->used;
        size_t room = sizeof(f->buf) - f->used;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(p, room, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        size_t len = (size_t) n < room ? (size_t) n : room - 1; /* truncated, still one field */
        f->iov[f->n++] = (struct iovec){ .iov_base = p, .iov_len = len };
        f->used += len + 1;
}

static bool journal_send(struct zd_log_fields *f) {
        if (!use_journal)
                return false;
        /* sd_journal_sendv() drops a message silently, and reports success, when journald's
         * socket does not exist: look first, so that such lines reach stderr instead. */
        if (access("/run/systemd/journal/socket", F_OK) < 0)
                return false;
        return sd_journal_sendv(f->iov, (int) f->n) >= 0;
}

void zd_log(int priority, const char *fmt, ...) {
        if (priority > max_priority)
                return;
        int saved = errno;
        char buf[2048];
        va_list ap;
        va_start(ap, fmt);
        errno = saved; /* for %m */
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        struct zd_log_fields f = {};
        zd_log_struct(priority, &f, buf);
        errno = saved;
}

void zd_log_struct(int priority, struct zd_log_fields *f, const char *message) {
        if (priority > max_priority)
                return;
        int saved = errno;
        zd_log_field(f, "MESSAGE=%s", message);
        zd_log_field(f, "PRIORITY=%i", priority);
        zd_log_field(f, "SYSLOG_IDENTIFIER=zygoted");
        if (binary_path[0])
                zd_log_field(f, "ZYGOTE_BINARY=%s", binary_path);
        if (!journal_send(f))
                fprintf(stderr, "zygoted: %s%s\n", prio_prefix(priority), message);
        errno = saved;
}
