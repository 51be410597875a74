/* SPDX-License-Identifier: MIT */
/*
 * launchctl run --record FILE and launchctl profile check FILE: both exec zygote-record (the
 * listener of a recording, record/zygote-record.c), which runs `launchctl run` again, without
 * --record, for the task. zygote-record is looked for beside launchctl (the build tree), then in
 * zygote's libexec directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launchctl-record.h"
#include "launchctl-util.h"
#include "util.h"

bool lc_run_wants_record(int argc, char **argv) {
        for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
                if (streq(argv[i], "--record") || strncmp(argv[i], "--record=", 9) == 0)
                        return true;
        return false;
}

/* zygote-record's path, in buf. */
static int find_recorder(char *buf, size_t size, char self[static PATH_MAX]) {
        ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
        char *slash;

        if (n < 0)
                return -errno;
        self[n] = 0;
        slash = strrchr(self, '/');
        snprintf(buf, size, "%.*s/zygote-record", slash ? (int) (slash - self) : 1, slash ? self : ".");
        if (access(buf, X_OK) == 0)
                return 0;
        snprintf(buf, size, "%s/zygote-record", ZYGOTE_LIBEXEC_DIR);
        return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

/* Execs zygote-record MODE --launchctl SELF KEY VALUE [--via VIA] ARGS... (socket_path as
 * --socket). */
static int exec_recorder(const char *verb, const char *mode, const char *key, const char *value, const char *via,
                         const char *socket_path, int argc, char **argv) {
        char recorder[PATH_MAX + 32], self[PATH_MAX];
        _cleanup_free_ char **v = calloc((size_t) argc + 12, sizeof(char *));
        size_t k = 0;
        int r;

        if (!v)
                return lc_fail(NULL, verb, -ENOMEM);
        r = find_recorder(recorder, sizeof(recorder), self);
        if (r < 0) {
                fprintf(stderr, "launchctl: %s: zygote-record is not installed\n", verb);
                return LC_EXIT_FAILURE;
        }
        v[k++] = recorder;
        v[k++] = (char *) mode;
        v[k++] = (char *) "--launchctl";
        v[k++] = self;
        v[k++] = (char *) key;
        v[k++] = (char *) value;
        if (via) {
                v[k++] = (char *) "--via";
                v[k++] = (char *) via;
        }
        if (socket_path) {
                v[k++] = (char *) "--socket";
                v[k++] = (char *) socket_path;
        }
        for (int i = 0; i < argc; i++)
                v[k++] = argv[i];
        execv(recorder, v);
        fprintf(stderr, "launchctl: %s: cannot run %s: %m\n", verb, recorder);
        return LC_EXIT_FAILURE;
}

int lc_run_record(const char *socket_path, int argc, char **argv) {
        _cleanup_free_ char **rest = calloc((size_t) argc + 1, sizeof(char *));
        const char *file = NULL, *via = NULL;
        int n = 0, i;

        if (!rest)
                return lc_fail(NULL, "run", -ENOMEM);
        /* every argument but --record FILE, in order; the command untouched */
        for (i = 1; i < argc && !streq(argv[i], "--"); i++) {
                if (streq(argv[i], "--record")) {
                        if (i + 1 >= argc)
                                return lc_usage_error("run", "option '--record' needs a file");
                        file = argv[++i];
                } else if (strncmp(argv[i], "--record=", 9) == 0)
                        file = argv[i] + 9;
                else if (streq(argv[i], "--record-via")) {
                        if (i + 1 >= argc)
                                return lc_usage_error("run", "option '--record-via' needs auto, bpf or notify");
                        via = argv[++i];
                } else if (strncmp(argv[i], "--record-via=", 13) == 0)
                        via = argv[i] + 13;
                else if (streq(argv[i], "--detach") || streq(argv[i], "--hold"))
                        return lc_usage_error("run", "--record runs in the foreground (no %s)", argv[i]);
                else
                        rest[n++] = argv[i];
        }
        if (i >= argc - 1)
                return lc_usage_error("run", "--record needs the command after --");
        for (; i < argc; i++)
                rest[n++] = argv[i];
        if (!file || !*file)
                return lc_usage_error("run", "option '--record' needs a file");
        if (via && !streq(via, "auto") && !streq(via, "bpf") && !streq(via, "notify"))
                return lc_usage_error("run", "--record-via wants auto, bpf or notify, not '%s'", via);
        return exec_recorder("run", "record", "--out", file, via, socket_path, n, rest);
}

int lc_verb_profile(const char *socket_path, int argc, char **argv) {
        int i;

        if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "help"))) {
                printf("Usage: launchctl profile check FILE [RUN-OPTIONS] -- CMD [ARGS...]\n"
                       "Run CMD as 'launchctl run' does, deciding each of its system calls as the\n"
                       "profile FILE (a recording, or any OCI/Docker seccomp JSON) would, and name the\n"
                       "calls FILE refused. Exit codes: CMD's status when FILE refused nothing; 3 when it\n"
                       "refused a call (named on stderr); 77 when the kernel lacks seccomp user\n"
                       "notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE.\n");
                return 0;
        }
        if (argc < 3 || !streq(argv[1], "check"))
                return lc_usage_error("profile", "usage: launchctl profile check FILE [RUN-OPTIONS] -- CMD");
        for (i = 3; i < argc && !streq(argv[i], "--"); i++)
                if (streq(argv[i], "--detach") || streq(argv[i], "--hold") || strncmp(argv[i], "--record", 8) == 0)
                        return lc_usage_error("profile", "check runs in the foreground (no %s)", argv[i]);
        if (i >= argc - 1)
                return lc_usage_error("profile", "check needs the command after --");
        return exec_recorder("profile", "check", "--profile-file", argv[2], NULL, socket_path, argc - 3, argv + 3);
}
