/* SPDX-License-Identifier: MIT */
/*
 * Logging at the edges: to the journal with structured fields when our stderr is the journal
 * (systemd sets JOURNAL_STREAM to the device:inode of the stream it gave us, and a stderr
 * redirected elsewhere no longer matches), plain lines on stderr otherwise.
 *
 * Task lines are the audit trail: one per start and one per exit (and one when a held task is
 * created), saying who launched what, as whom, with which profile and tier. In the journal they
 * carry ZYGOTE_TASK, ZYGOTE_EVENT, ZYGOTE_PROFILE, ZYGOTE_TIER, ZYGOTE_UID (the caller),
 * ZYGOTE_RUN_UID, ZYGOTE_PID, ZYGOTE_EXE and, on exit, ZYGOTE_EXIT (the code, or 128+N for
 * signal N) and ZYGOTE_SIGNAL. The arguments are left out on purpose: they may hold secrets.
 *
 * If the journal cannot take a line (no journald socket, or a failed send), the line goes to
 * stderr instead, never nowhere.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "daemon.h"
#include "util.h"

static bool use_journal;
static int max_priority = LOG_INFO;

void zy_log_open(void) {
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

/* Journal fields, formatted into one fixed buffer: logging never allocates. */
struct fields {
        struct iovec iov[16];
        size_t n;
        char buf[6144];
        size_t used;
};

static void field(struct fields *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void field(struct fields *f, const char *fmt, ...) {
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
        f->iov[f->n++] = (struct iovec) { .iov_base = p, .iov_len = len };
        f->used += len + 1;
}

static bool journal_send(struct fields *f) {
        if (!use_journal)
                return false;
        /* sd_journal_sendv() drops a message silently, and reports success, when journald's
         * socket does not exist: look first, so that such lines reach stderr instead. */
        if (access("/run/systemd/journal/socket", F_OK) < 0)
                return false;
        return sd_journal_sendv(f->iov, (int) f->n) >= 0;
}

void zy_log(int priority, const char *fmt, ...) {
        if (priority > max_priority)
                return;
        int saved = errno;
        char buf[2048];
        va_list ap;
        va_start(ap, fmt);
        errno = saved; /* for %m */
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        struct fields f = {};
        field(&f, "MESSAGE=%s", buf);
        field(&f, "PRIORITY=%i", priority);
        field(&f, "SYSLOG_IDENTIFIER=zygoted");
        if (!journal_send(&f))
                fprintf(stderr, "zygoted: %s%s\n", prio_prefix(priority), buf);
        errno = saved;
}

void zy_log_task(int priority, const struct zy_task *t, const char *what) {
        if (priority > max_priority)
                return;
        int saved = errno;
        char result[64] = "";
        if (t->exited) {
                if (t->status_unknown)
                        snprintf(result, sizeof(result), " status=unknown");
                else if (t->signal)
                        snprintf(result, sizeof(result), " signal=%d", t->signal);
                else
                        snprintf(result, sizeof(result), " status=%d", t->exit_code);
        }
        const char *exe = t->exe ? t->exe : "?";
        const char *profile = t->profile ? t->profile : "?";
        const char *tier = zy_tier_to_string(t->tier);
        char line[1024];
        snprintf(line, sizeof(line), "task %s %s: uid=%u run_uid=%u pid=%d profile=%s tier=%s exe=%s%s%s", t->id,
                 what, (unsigned) t->uid, (unsigned) t->run_uid, (int) t->pid, profile, tier, exe, result,
                 t->adopted ? " (adopted)" : "");
        struct fields f = {};
        field(&f, "MESSAGE=%s", line);
        field(&f, "PRIORITY=%i", priority);
        field(&f, "SYSLOG_IDENTIFIER=zygoted");
        field(&f, "ZYGOTE_TASK=%s", t->id);
        field(&f, "ZYGOTE_EVENT=%s", what);
        field(&f, "ZYGOTE_PROFILE=%s", profile);
        field(&f, "ZYGOTE_TIER=%s", tier);
        field(&f, "ZYGOTE_UID=%u", (unsigned) t->uid);
        field(&f, "ZYGOTE_RUN_UID=%u", (unsigned) t->run_uid);
        field(&f, "ZYGOTE_PID=%d", (int) t->pid);
        field(&f, "ZYGOTE_EXE=%s", exe);
        if (t->exited && !t->status_unknown) {
                field(&f, "ZYGOTE_EXIT=%d", t->signal ? 128 + t->signal : t->exit_code);
                if (t->signal)
                        field(&f, "ZYGOTE_SIGNAL=%d", t->signal);
        }
        if (!journal_send(&f))
                fprintf(stderr, "zygoted: %s\n", line);
        errno = saved;
}
