/* SPDX-License-Identifier: MIT */
/*
 * launchctl's helpers shared by its verbs (launchctl.c) and run (launchctl-run.c): connecting,
 * the messages for a failed call or a usage error, a task's exit status, JSON output.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launchctl-util.h"
#include "zygote-private.h"
#include "util.h"

int lc_usage_error(const char *verb, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "%s%s%s: ", LC_PROGRAM, verb ? " " : "", verb ? verb : "");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s%s%s --help'.\n", LC_PROGRAM, verb ? " " : "", verb ? verb : "");
        return LC_EXIT_USAGE;
}

static int connect_path(const char *path, const char *source, zy_conn **ret, char **ret_used) {
        int r = zy_connect(path, ret);

        if (r >= 0 && ret_used && asprintf(ret_used, "%s (%s)", path, source) < 0) {
                *ret_used = NULL;
                zy_conn_free(*ret);
                *ret = NULL;
                return -ENOMEM;
        }
        return r;
}

static bool in_my_groups(gid_t gid) {
        _cleanup_free_ gid_t *groups = NULL;
        int n = getgroups(0, NULL);

        if (getegid() == gid)
                return true;
        if (n <= 0 || !(groups = calloc((size_t) n, sizeof(gid_t))))
                return false;
        n = getgroups(n, groups);
        for (int i = 0; i < n; i++)
                if (groups[i] == gid)
                        return true;
        return false;
}

/* /etc/group's line of gid: its name into name (else "GID") and whether user is listed. Read
 * here, not through NSS: launchctl is linked statically and resolves no names (CMakeLists.txt);
 * the package's group zygote is a local one. */
static void local_group(gid_t gid, const char *user, char *name, size_t len, bool *ret_listed) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f = fopen("/etc/group", "re");

        snprintf(name, len, "%u", (unsigned) gid);
        *ret_listed = false;
        while (f && getline(&line, &cap, f) > 0) {
                char *fields[4] = {}, *p = line;

                line[strcspn(line, "\n")] = '\0';
                for (size_t i = 0; i < 4 && p; i++) {
                        fields[i] = p;
                        p = strchr(p, ':');
                        if (p)
                                *p++ = '\0';
                }
                if (!fields[3] || strtoul(fields[2], NULL, 10) != gid)
                        continue;
                snprintf(name, len, "%s", fields[0]);
                for (char *m = strtok(fields[3], ","); user && m; m = strtok(NULL, ","))
                        *ret_listed = *ret_listed || streq(m, user);
                break;
        }
        if (f)
                fclose(f);
}

/* What to do about a socket that would not connect (r), for the parentheses after the error: for
 * a refusal, how to be let in (the socket's group, whose members may use zygoted:
 * docs/SYSTEMD.md); else whether zygoted runs at all. */
static void connect_hint(const char *path, int r, char *buf, size_t len) {
        const char *user = secure_getenv("USER");
        char group[64];
        struct stat st;
        bool listed;

        if ((r != -EACCES && r != -EPERM) || stat(path, &st) < 0) {
                snprintf(buf, len, "is zygoted running? set ZYGOTE_SOCKET or --socket");
                return;
        }
        if (st.st_gid == 0) {
                snprintf(buf, len, "the socket is root's alone (mode %04o)", (unsigned) (st.st_mode & 07777));
                return;
        }
        local_group(st.st_gid, user, group, sizeof(group), &listed);
        if (in_my_groups(st.st_gid))
                snprintf(buf, len, "the socket's mode %04o keeps its group %s out", (unsigned) (st.st_mode & 07777),
                         group);
        else if (listed)
                snprintf(buf, len,
                         "you were added to group %s after this session began: log in again, or run newgrp %s", group,
                         group);
        else
                snprintf(buf, len,
                         "zygoted is for root and the members of group %s: an administrator adds you with "
                         "usermod -aG %s %s, then you log in again",
                         group, group, user ? user : "USER");
}

int lc_connect(const char *socket_path, zy_conn **ret, char **ret_used) {
        _cleanup_free_ char *def = NULL, *why = NULL;
        const char *env = secure_getenv("ZYGOTE_SOCKET");
        char hint[1024];
        int r, r_sys;

        if (socket_path)
                r = connect_path(socket_path, "--socket", ret, ret_used);
        else if (env && *env)
                r = connect_path(socket_path = env, "$ZYGOTE_SOCKET", ret, ret_used);
        else if (geteuid() == 0)
                r = connect_path(socket_path = ZY_SOCKET_SYSTEM, "the system daemon", ret, ret_used);
        else {
                /* Not root: the user's own daemon if one listens, else the system one, which a
                 * member of group zygote may use (docs/SYSTEMD.md). */
                r = zy_default_socket_path(&def);
                if (r < 0) {
                        fprintf(stderr, "%s: cannot find the daemon's socket: %s\n", LC_PROGRAM, strerror(-r));
                        return r;
                }
                r = connect_path(def, "your own daemon", ret, ret_used);
                if (r >= 0 || r == -ENOMEM)
                        return r;
                if (asprintf(&why, "the system daemon; none at %s: %s", def, strerror(-r)) < 0)
                        return -ENOMEM;
                r_sys = connect_path(ZY_SOCKET_SYSTEM, why, ret, ret_used);
                if (r_sys >= 0 || r_sys == -ENOMEM)
                        return r_sys;
                connect_hint(ZY_SOCKET_SYSTEM, r_sys, hint, sizeof(hint));
                fprintf(stderr, "%s: cannot connect to %s: %s, nor to %s: %s (%s)\n", LC_PROGRAM, def, strerror(-r),
                        ZY_SOCKET_SYSTEM, strerror(-r_sys), hint);
                return r_sys;
        }
        if (r < 0) {
                connect_hint(socket_path, r, hint, sizeof(hint));
                fprintf(stderr, "%s: cannot connect to %s: %s (%s)\n", LC_PROGRAM, socket_path, strerror(-r), hint);
        }
        return r;
}

static const char *error_param(zy_conn *c, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(zy_conn_error_parameters(c), key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int lc_fail(zy_conn *c, const char *what, int r) {
        const char *name = zy_conn_error_name(c);
        const char *s, *step = NULL, *msg = NULL;
        int err = 0;

        if (!name) {
                if (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)
                        fprintf(stderr, "%s: %s: lost the connection to zygoted: %s\n", LC_PROGRAM, what, strerror(-r));
                else
                        fprintf(stderr, "%s: %s: %s\n", LC_PROGRAM, what, strerror(-r));
                return LC_EXIT_FAILURE;
        }
        if (r == -ECHILD && zy_conn_spawn_failure(c, &step, &err, &msg) >= 0)
                /* the daemon's message says what (a container's config, the runtime's words) */
                fprintf(stderr, "%s: %s: failed at step %s: %s\n", LC_PROGRAM, what, step ? step : "?",
                        msg && *msg ? msg : strerror(err));
        else if (r == -ESRCH && (s = error_param(c, "id")))
                fprintf(stderr, "%s: %s: no such task '%s'\n", LC_PROGRAM, what, s);
        else if (r == -ENOENT && (s = error_param(c, "profile"))) {
                json_object *failed = NULL;
                size_t n = json_object_object_get_ex(zy_conn_error_parameters(c), "failedFiles", &failed) &&
                                           json_object_is_type(failed, json_type_array)
                                   ? json_object_array_length(failed)
                                   : 0;

                fprintf(stderr, "%s: %s: no such profile '%s'\n", LC_PROGRAM, what, s);
                /* a file that does not parse names no profile: it may be the one asked for */
                if (n > 0)
                        fprintf(stderr, "%s: %zu profile file%s failed to load:\n", LC_PROGRAM, n, n == 1 ? "" : "s");
                for (size_t i = 0; i < n; i++)
                        fprintf(stderr, "  %s\n", json_object_get_string(json_object_array_get_idx(failed, i)));
        } else if (r == -EEXIST && (s = error_param(c, "id")))
                fprintf(stderr, "%s: %s: a task '%s' exists already\n", LC_PROGRAM, what, s);
        else if (r == -EBUSY && (s = error_param(c, "state")))
                fprintf(stderr, "%s: %s: the task is %s\n", LC_PROGRAM, what, s);
        else if (r == -EPERM && (s = error_param(c, "reason")))
                fprintf(stderr, "%s: %s: permission denied: %s\n", LC_PROGRAM, what, s);
        else if (r == -EACCES && (s = error_param(c, "reason")))
                fprintf(stderr, "%s: %s: refused: %s (%s)\n", LC_PROGRAM, what, s, name);
        else if ((r == -E2BIG || r == -EAGAIN) && (s = error_param(c, "limit"))) {
                json_object *max = NULL;
                json_object_object_get_ex(zy_conn_error_parameters(c), "max", &max);
                fprintf(stderr, "%s: %s: limit '%s' exceeded (max %" PRId64 ")\n", LC_PROGRAM, what, s,
                        max ? json_object_get_int64(max) : (int64_t) 0);
        } else
                fprintf(stderr, "%s: %s: %s (%s)\n", LC_PROGRAM, what, strerror(-r), name);
        return LC_EXIT_FAILURE;
}

int lc_task_exit_status(const struct zy_task_info *t) {
        int s = zy_task_info_status(t);

        /* A code above 255 cannot be an exit status; nor can a missing one. */
        return s >= 0 && s <= 255 ? s : LC_EXIT_FAILURE;
}

void lc_print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
}
