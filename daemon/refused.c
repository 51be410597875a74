/* SPDX-License-Identifier: MIT */
/*
 * The line a refused call leaves: the method, the error, its reason or parameter, and who asked.
 * The dispatcher (methods.c) calls it once per error it answers.
 *
 * A caller must not be able to fill the journal through its own errors: each uid has a budget
 * of ZD_REFUSED_BURST lines per second (a window that starts at its first line); what goes over
 * is counted, and the count is said in one line when the uid next logs after its window ended.
 * The table is small and fixed: a uid not in it takes the slot of the least recently seen one
 * (losing a count of suppressed lines at worst, never logging more than the budget of a slot).
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"
#include "refused.h"
#include "util.h"

struct bucket {
        uid_t uid;
        bool used;
        uint64_t window_start; /* ms, CLOCK_MONOTONIC */
        unsigned n;            /* lines in this window */
        unsigned long suppressed;
        uint64_t last_seen;
};

static struct bucket buckets[64];

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static struct bucket *bucket_of(uid_t uid, uint64_t now) {
        struct bucket *oldest = &buckets[0];
        for (size_t i = 0; i < ELEMENTSOF(buckets); i++) {
                struct bucket *b = &buckets[i];
                if (b->used && b->uid == uid)
                        return b;
                if (!b->used || (oldest->used && b->last_seen < oldest->last_seen))
                        oldest = b;
        }
        *oldest = (struct bucket){ .uid = uid, .used = true, .window_start = now };
        return oldest;
}

/* The parameter that says why: the first of these the error carries as a string. */
static const char *reason_of(json_object *params) {
        static const char *const keys[] = { "reason", "parameter", "profile", "limit", "id", "interface", "method" };
        json_object *v;
        for (size_t i = 0; params && i < ELEMENTSOF(keys); i++)
                if (json_object_object_get_ex(params, keys[i], &v) && json_object_is_type(v, json_type_string))
                        return json_object_get_string(v);
        return NULL;
}

static void suppressed_line(uid_t uid, unsigned long k) {
        char line[128];
        snprintf(line, sizeof(line), "refused calls of uid %u: %lu more not logged (more than %d a second)",
                 (unsigned) uid, k, ZD_REFUSED_BURST);
        struct zd_log_fields f = {};
        zd_log_field(&f, "ZYGOTE_EVENT=refused-suppressed");
        zd_log_field(&f, "ZYGOTE_UID=%u", (unsigned) uid);
        zd_log_field(&f, "ZYGOTE_SUPPRESSED=%lu", k);
        zd_log_struct(LOG_NOTICE, &f, line);
}

void zd_refused_log(const char *method, const char *error, json_object *params, uid_t uid, pid_t pid) {
        if (!zd_log_enabled(LOG_NOTICE) || !error)
                return;
        int saved = errno;
        uint64_t now = now_ms();
        struct bucket *b = bucket_of(uid, now);
        b->last_seen = now;
        if (now - b->window_start >= 1000) {
                if (b->suppressed > 0)
                        suppressed_line(uid, b->suppressed);
                b->window_start = now;
                b->n = 0;
                b->suppressed = 0;
        }
        if (b->n >= ZD_REFUSED_BURST) {
                b->suppressed++;
                errno = saved;
                return;
        }
        b->n++;
        const char *m = method ? method : "-";
        const char *reason = reason_of(params);
        char line[1024];
        snprintf(line, sizeof(line), "refused %s: %s%s%s uid=%u pid=%d", m, error, reason ? " " : "",
                 reason ? reason : "", (unsigned) uid, (int) pid);
        struct zd_log_fields f = {};
        zd_log_field(&f, "ZYGOTE_EVENT=refused");
        zd_log_field(&f, "ZYGOTE_METHOD=%s", m);
        zd_log_field(&f, "ZYGOTE_ERROR=%s", error);
        if (reason)
                zd_log_field(&f, "ZYGOTE_REASON=%s", reason);
        zd_log_field(&f, "ZYGOTE_UID=%u", (unsigned) uid);
        zd_log_field(&f, "ZYGOTE_CALLER_PID=%d", (int) pid);
        zd_log_struct(LOG_NOTICE, &f, line);
        errno = saved;
}
