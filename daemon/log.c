/* SPDX-License-Identifier: MIT */
/*
 * Logging at the edges: the journal with structured fields when our stderr is the journal
 * (systemd sets JOURNAL_STREAM to its device:inode), plain lines on stderr otherwise.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
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
            st.st_dev == dev && st.st_ino == ino)
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
        if (use_journal)
                sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%i", priority,
                                "SYSLOG_IDENTIFIER=zygoted", NULL);
        else
                fprintf(stderr, "zygoted: %s%s\n", prio_prefix(priority), buf);
        errno = saved;
}

/* One audit-style line per task start and exit: who launched what, with which profile. */
void zy_log_task(int priority, const struct zy_task *t, const char *what) {
        if (priority > max_priority)
                return;
        char result[64] = "";
        if (t->exited) {
                if (t->signal)
                        snprintf(result, sizeof(result), " signal=%d", t->signal);
                else
                        snprintf(result, sizeof(result), " status=%d", t->exit_code);
        }
        const char *exe = t->exe ? t->exe : "?";
        const char *profile = t->profile ? t->profile : "?";
        const char *tier = zy_tier_to_string(t->tier);
        if (use_journal) {
                char exit_field[32] = "ZYGOTE_EXIT=";
                if (t->exited)
                        snprintf(exit_field, sizeof(exit_field), "ZYGOTE_EXIT=%d",
                                 t->signal ? 128 + t->signal : t->exit_code);
                sd_journal_send("MESSAGE=task %s %s: uid=%u pid=%d profile=%s tier=%s exe=%s%s",
                                t->id, what, (unsigned) t->uid, (int) t->pid, profile, tier, exe, result,
                                "PRIORITY=%i", priority, "SYSLOG_IDENTIFIER=zygoted",
                                "ZYGOTE_TASK=%s", t->id, "ZYGOTE_PROFILE=%s", profile,
                                "ZYGOTE_TIER=%s", tier, "ZYGOTE_UID=%u", (unsigned) t->uid,
                                "ZYGOTE_EXE=%s", exe, "ZYGOTE_EVENT=%s", what, exit_field, NULL);
        } else
                fprintf(stderr, "zygoted: task %s %s: uid=%u pid=%d profile=%s tier=%s exe=%s%s\n",
                        t->id, what, (unsigned) t->uid, (int) t->pid, profile, tier, exe, result);
}
