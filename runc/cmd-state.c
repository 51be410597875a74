/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc state, list and ps: what the state directory (state.c) and the container's cgroup
 * (cgroup.c) say, in runc's formats.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "verbs.h"

int zrc_cmd_state(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zct_state st;
        json_object *o;

        if (zrc_verb_parse(c, v, argc, argv, NULL, 0, &st) < 0)
                return 1;
        o = zct_state_to_json(&st);
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        zct_state_done(&st);
        return 0;
}

int zrc_cmd_list(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt opts[] = { { "format", 'f', true }, { "quiet", 'q', false } };
        int k = zrc_verb_parse(c, v, argc, argv, opts, ELEMENTSOF(opts), NULL);
        bool quiet = opts[1].value != NULL, json = opts[0].value && streq(opts[0].value, "json");
        json_object *arr;
        struct dirent **de = NULL;
        int n;

        if (k < 0)
                return 1;
        /* by id, as runc lists them */
        n = scandir(c->root, &de, NULL, alphasort);
        arr = json_object_new_array();
        if (!json && !quiet)
                printf("%-20s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
        for (int i = 0; i < n; i++) {
                struct zct_state st;
                json_object *o;

                if (de[i]->d_name[0] == '.' || zct_state_load(c->root, de[i]->d_name, &st) < 0)
                        continue;
                o = zct_state_to_json(&st);
                if (quiet)
                        printf("%s\n", st.id);
                else if (!json)
                        printf("%-20s %-8d %-10s %-40s %-32s %u\n", st.id,
                               json_object_get_int(json_object_object_get(o, "pid")),
                               json_object_get_string(json_object_object_get(o, "status")), st.bundle, st.created,
                               (unsigned) st.owner);
                json_object_array_add(arr, o);
                zct_state_done(&st);
        }
        for (int i = 0; i < n; i++)
                free(de[i]);
        free(de);
        if (json)
                printf("%s\n",
                       json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(arr);
        return 0;
}

/* Whether pid is one of pids. */
static bool among(pid_t pid, const pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

/* ps(1) with args (runc's default -ef): its header, then its lines whose PID column is a process
 * of the container, as runc prints them. */
static int ps_table(const struct zct_ctx *c, char **args, int n_args, const pid_t *pids, size_t n) {
        _cleanup_free_ char **argv = calloc((size_t) n_args + 3, sizeof(char *));
        _cleanup_free_ char *line = NULL;
        int column = -1, status, p[2];
        size_t len = 0;
        bool header = true;
        pid_t child;
        FILE *f;

        if (!argv)
                return zct_error(c, "out of memory");
        argv[0] = (char *) "ps";
        for (int i = 0; i < n_args; i++)
                argv[i + 1] = args[i];
        if (n_args == 0)
                argv[1] = (char *) "-ef";
        if (pipe2(p, O_CLOEXEC) < 0)
                return zct_error(c, "ps: %s", zct_errstr(errno));
        fflush(stdout);
        child = fork();
        if (child == 0) {
                if (dup2(p[1], 1) < 0)
                        _exit(127);
                execvp("ps", argv);
                _exit(127);
        }
        close(p[1]);
        f = child > 0 ? fdopen(p[0], "re") : NULL;
        if (!f) {
                close(p[0]);
                return zct_error(c, "ps: %s", zct_errstr(errno));
        }
        while (getline(&line, &len, f) > 0) {
                char *copy = strdup(line), *save = NULL, *w = copy ? strtok_r(copy, " \t\n", &save) : NULL;
                int k = 0;

                for (; w && (header ? !streq(w, "PID") : k < column); k++)
                        w = strtok_r(NULL, " \t\n", &save);
                if (header) {
                        column = w ? k : -1;
                        fputs(line, stdout);
                } else if (w && among((pid_t) atoi(w), pids, n))
                        fputs(line, stdout);
                free(copy);
                if (header && column < 0)
                        break;
                header = false;
        }
        fclose(f);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                ;
        if (column < 0)
                return zct_error(c, "couldn't find PID field in ps output");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return zct_error(c, "ps: exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
        return 0;
}

int zrc_cmd_ps(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "format", 'f', true } };
        _cleanup_free_ pid_t *pids = NULL;
        struct zct_state st;
        size_t n = 0;
        bool json;
        int k, r;

        k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), &st);
        if (k < 0)
                return 1;
        json = o[0].value && streq(o[0].value, "json");
        r = zct_cgroup_pids(&st.cgroup, &pids, &n);
        zct_state_done(&st);
        if (r < 0)
                return zct_error(c, "ps: %s", zct_errstr(-r));
        if (json) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
                return 0;
        }
        /* ps(1)'s options follow the id, after a "--" or not */
        argv += k + 1;
        argc -= k + 1;
        if (argc > 0 && streq(argv[0], "--")) {
                argv++;
                argc--;
        }
        return ps_table(c, argv, argc, pids, n);
}
