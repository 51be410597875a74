/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc state, list and ps: what the state directory (state.c) and the container's cgroup
 * (cgroup.c) say, in runc's formats.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "verbs.h"

int zrc_cmd_state(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_state st;
        json_object *o;

        if (zrc_verb_parse(c, v, argc, argv, NULL, 0, &st) < 0)
                return 1;
        o = zrc_state_to_json(&st);
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        zrc_state_done(&st);
        return 0;
}

int zrc_cmd_list(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt opts[] = { { "format", 'f', true }, { "quiet", 'q', false } };
        int k = zrc_verb_parse(c, v, argc, argv, opts, ELEMENTSOF(opts), NULL);
        bool quiet = opts[1].value != NULL, json = opts[0].value && streq(opts[0].value, "json");
        json_object *arr;
        struct dirent *de;
        DIR *d;

        if (k < 0)
                return 1;
        d = opendir(c->root);
        arr = json_object_new_array();
        if (!json && !quiet)
                printf("%-20s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
        while (d && (de = readdir(d))) {
                struct zrc_state st;
                json_object *o;

                if (de->d_name[0] == '.' || zrc_state_load(c->root, de->d_name, &st) < 0)
                        continue;
                o = zrc_state_to_json(&st);
                if (quiet)
                        printf("%s\n", st.id);
                else if (!json)
                        printf("%-20s %-8d %-10s %-40s %-32s %u\n", st.id,
                               json_object_get_int(json_object_object_get(o, "pid")),
                               json_object_get_string(json_object_object_get(o, "status")), st.bundle, st.created,
                               (unsigned) st.owner);
                json_object_array_add(arr, o);
                zrc_state_done(&st);
        }
        if (d)
                closedir(d);
        if (json)
                printf("%s\n",
                       json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(arr);
        return 0;
}

int zrc_cmd_ps(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "format", 'f', true } };
        _cleanup_free_ pid_t *pids = NULL;
        struct zrc_state st;
        size_t n = 0;
        bool json;
        int r;

        if (zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), &st) < 0)
                return 1;
        json = o[0].value && streq(o[0].value, "json");
        r = zrc_cgroup_pids(&st.cgroup, &pids, &n);
        zrc_state_done(&st);
        if (r < 0)
                return zrc_error(c, "ps: %s", zrc_errstr(-r));
        if (json) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
                return 0;
        }
        printf("%-8s %s\n", "PID", "CMD");
        for (size_t i = 0; i < n; i++) {
                char path[64], comm[256] = "?";
                FILE *f;

                snprintf(path, sizeof(path), "/proc/%d/comm", (int) pids[i]);
                f = fopen(path, "re");
                if (f) {
                        if (fgets(comm, sizeof(comm), f))
                                comm[strcspn(comm, "\n")] = '\0';
                        fclose(f);
                }
                printf("%-8d %s\n", (int) pids[i], comm);
        }
        return 0;
}
