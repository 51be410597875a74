/* SPDX-License-Identifier: MIT */
/*
 * The names under which task pidfds sit in systemd's fd store, and back.
 *
 * Each task's pidfd goes to the service manager under a name that carries what
 * the next zygoted needs to rebuild the task's table entry:
 *
 *     zt/<owner uid>/<run uid>/<pid>/<tier>/<created, ms since the epoch>/<profile>/<task id>
 *
 * and zc/ instead of zt/ for a container's process (daemon/container.c: its cgroup and state
 * go with it, so the next daemon must know it is one).
 *
 * An fd name is ASCII without control characters and ':', at most 255 bytes (systemd's
 * fdname_is_valid()); profile and id are %-encoded so that any profile file name fits ('/', ':',
 * '%' and everything outside 0x21..0x7e become %XX). argv and exe are not in the name: the next
 * daemon reads them from /proc while the task lives (a task that ended before the restart is
 * adopted with an empty argv). Reference processes are stored as ref/<pid>: the next daemon
 * ends the ones still alive (they would also leave by themselves, on EOF of their control
 * socket).
 *
 * Pure string work: no fd, no notify, no task table (task.c stores, adopt.c reads back).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "task-fdname.h"
#include "util.h"

static bool fdname_plain(unsigned char c) {
        return c > ' ' && c <= '~' && c != '%' && c != '/' && c != ':';
}

/* Appends s, %-encoded, at *p (before end); -ENAMETOOLONG when it does not fit. */
static int put_encoded(char **p, const char *end, const char *s) {
        static const char hex[] = "0123456789ABCDEF";
        for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
                size_t need = fdname_plain(*c) ? 1 : 3;
                if ((size_t) (end - *p) <= need)
                        return -ENAMETOOLONG;
                if (need == 1)
                        *(*p)++ = (char) *c;
                else {
                        *(*p)++ = '%';
                        *(*p)++ = hex[*c >> 4];
                        *(*p)++ = hex[*c & 15];
                }
        }
        **p = 0;
        return 0;
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Decodes the field [s, s + n) into a new string; -EINVAL for a bad escape or an empty field. */
static int get_decoded(const char *s, size_t n, char **ret) {
        if (n == 0)
                return -EINVAL;
        char *out = malloc(n + 1), *o = out;
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (s[i] != '%') {
                        *o++ = s[i];
                        continue;
                }
                int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                        free(out);
                        return -EINVAL;
                }
                *o++ = (char) (hi << 4 | lo);
                i += 2;
        }
        *o = 0;
        *ret = out;
        return 0;
}

int zd_task_fdname_format(const struct zd_stored_task *t, char **ret) {
        char buf[ZD_FDNAME_MAX + 1];
        int n = snprintf(buf, sizeof(buf), "%s/%u/%u/%d/%s/%llu/", t->container ? "zc" : "zt", t->owner, t->run_uid,
                         t->pid, zd_tier_to_string(t->tier), t->created_ms);
        if (n < 0 || (size_t) n >= sizeof(buf))
                return -ENAMETOOLONG;
        char *p = buf + n, *end = buf + sizeof(buf);
        int r = put_encoded(&p, end, t->profile ? t->profile : "");
        if (r < 0)
                return r;
        if (end - p < 2)
                return -ENAMETOOLONG;
        *p++ = '/';
        r = put_encoded(&p, end, t->id);
        if (r < 0)
                return r;
        char *s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

void zd_stored_task_done(struct zd_stored_task *s) {
        free(s->profile);
        free(s->id);
}

static int parse_uint(const char *s, size_t n, unsigned long long max, unsigned long long *ret) {
        if (n == 0 || n > 20)
                return -EINVAL;
        unsigned long long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (max - (unsigned long long) (s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (unsigned long long) (s[i] - '0');
        }
        *ret = v;
        return 0;
}

int zd_task_fdname_parse(const char *name, struct zd_stored_task *ret) {
        const char *f[8];
        size_t len[8], k = 0;
        bool container = strncmp(name, "zc/", 3) == 0;
        if (strncmp(name, "zt/", 3) != 0 && !container)
                return -EINVAL;
        for (const char *p = name + 3;; k++) {
                if (k == ELEMENTSOF(f))
                        return -EINVAL; /* too many fields */
                const char *slash = strchr(p, '/');
                f[k] = p;
                len[k] = slash ? (size_t) (slash - p) : strlen(p);
                if (!slash) {
                        k++;
                        break;
                }
                p = slash + 1;
        }
        if (k != 7)
                return -EINVAL;
        unsigned long long owner, run_uid, pid, created;
        char tier[16];
        if (parse_uint(f[0], len[0], UINT32_MAX, &owner) < 0 || parse_uint(f[1], len[1], UINT32_MAX, &run_uid) < 0 ||
            parse_uint(f[2], len[2], INT32_MAX, &pid) < 0 || parse_uint(f[4], len[4], UINT64_MAX, &created) < 0 ||
            len[3] >= sizeof(tier))
                return -EINVAL;
        memcpy(tier, f[3], len[3]);
        tier[len[3]] = 0;
        struct zd_stored_task s = {
                .owner = (unsigned) owner,
                .run_uid = (unsigned) run_uid,
                .pid = (int) pid,
                .created_ms = created,
                .container = container,
        };
        if (zd_tier_from_string(tier, &s.tier) < 0 || s.tier == ZD_TIER_AUTO)
                return -EINVAL;
        int r = get_decoded(f[5], len[5], &s.profile);
        if (r < 0)
                return r;
        r = get_decoded(f[6], len[6], &s.id);
        if (r < 0) {
                zd_stored_task_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}
