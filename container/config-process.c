/* SPDX-License-Identifier: MIT */
/*
 * config.json's process: args, env, cwd, user, capabilities (names via the profile module),
 * noNewPrivileges, oomScoreAdj, rlimits. exec's --process file is read by the same code.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "config-util.h"
#include "profile.h"
#include "util.h"

int zct_oci_cap_last(void) {
        static int last = -1;
        FILE *f;

        if (last >= 0)
                return last;
        f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        if (!f || fscanf(f, "%d", &last) != 1)
                last = 40;
        if (f)
                fclose(f);
        return last;
}

/* A capability name this runtime does not know (a newer kernel's, or a typo) is ignored and noted,
 * as runc 1.1 and crun ignore it: the container gets fewer capabilities, never more. */
static int parse_caps(struct zct_oci *o, json_object *a, const char *what, uint64_t *ret) {
        uint64_t m = 0;

        for (size_t i = 0; i < zct_array_len(a); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(a, i));
                _cleanup_free_ char *full = NULL;
                unsigned c;

                if (!name)
                        continue;
                if (strncasecmp(name, "CAP_", 4) != 0 && asprintf(&full, "CAP_%s", name) >= 0)
                        name = full;
                if (zp_cap_from_name(name, &c) < 0 || c >= 64) {
                        if (zct_oci_note(o, "process.capabilities.%s: unknown capability \"%s\" ignored", what, name) <
                            0)
                                return -ENOMEM;
                        continue;
                }
                /* a capability the running kernel lacks is ignored, as runc does */
                if ((int) c <= zct_oci_cap_last())
                        m |= UINT64_C(1) << c;
        }
        *ret = m;
        return 0;
}

static const struct {
        const char *name;
        int resource;
} rlimit_names[] = {
        { "RLIMIT_AS", RLIMIT_AS },
        { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_CPU", RLIMIT_CPU },
        { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },
        { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
        { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },
        { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_NPROC", RLIMIT_NPROC },
        { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
        { "RLIMIT_RTTIME", RLIMIT_RTTIME },
        { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
        { "RLIMIT_STACK", RLIMIT_STACK },
};

int zct_oci_parse_process(struct zct_oci *o, json_object *p, char **ret_error) {
        json_object *user = zct_get(p, "user"), *caps = zct_get(p, "capabilities"), *v;
        static const char *const cap_sets[5] = { "bounding", "effective", "permitted", "inheritable", "ambient" };
        int r;

        if (!p)
                return zct_errorf(ret_error, -EINVAL, "config.json: no process");
        r = zct_str_array(zct_get(p, "args"), "process.args", &o->argv, ret_error);
        if (r < 0)
                return r;
        if (!o->argv[0])
                return zct_errorf(ret_error, -EINVAL, "config.json: process.args must not be empty");
        r = zct_str_array(zct_get(p, "env"), "process.env", &o->envp, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; o->envp[i]; i++)
                if (strncmp(o->envp[i], "PATH=", 5) == 0)
                        o->search_path = o->envp[i] + 5;
        o->cwd = zct_get_str(p, "cwd");
        if (!o->cwd)
                o->cwd = "/";
        if (o->cwd[0] != '/')
                return zct_errorf(ret_error, -EINVAL, "config.json: process.cwd must be an absolute path");
        o->terminal = (v = zct_get(p, "terminal")) && json_object_get_boolean(v);
        o->uid = (uid_t) json_object_get_int64(zct_get(user, "uid"));
        o->gid = (gid_t) json_object_get_int64(zct_get(user, "gid"));
        o->umask = (v = zct_get(user, "umask")) ? (mode_t) json_object_get_int(v) : (mode_t) 022;
        v = zct_get(user, "additionalGids");
        o->n_groups = zct_array_len(v);
        o->groups = calloc(o->n_groups + 1, sizeof(gid_t));
        if (!o->groups)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_groups; i++)
                o->groups[i] = (gid_t) json_object_get_int64(json_object_array_get_idx(v, i));
        /* crun's annotation: any value but "0" leaves the process the supplementary groups of the
         * runtime, its caller's own (no setgroups; additionalGids then unused, as crun) */
        v = zct_get(zct_get(o->root, "annotations"), "run.oci.keep_original_groups");
        o->keep_groups = v && json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), "0") != 0;
        for (size_t i = 0; i < 5; i++) {
                r = parse_caps(o, zct_get(caps, cap_sets[i]), cap_sets[i], &o->caps[i]);
                if (r < 0)
                        return r;
        }
        o->no_new_privs = (v = zct_get(p, "noNewPrivileges")) && json_object_get_boolean(v);
        o->oom_score_adj = INT_MIN;
        if ((v = zct_get(p, "oomScoreAdj"))) {
                int64_t adj = json_object_get_int64(v);
                if (!json_object_is_type(v, json_type_int) || adj < -1000 || adj > 1000)
                        return zct_errorf(ret_error, -EINVAL, "config.json: process.oomScoreAdj must be -1000 to 1000");
                o->oom_score_adj = (int) adj;
        }

        v = zct_get(p, "rlimits");
        o->n_rlimits = 0;
        free(o->rlimits);
        o->rlimits = calloc(zct_array_len(v) + 1, sizeof(*o->rlimits));
        if (!o->rlimits)
                return -ENOMEM;
        for (size_t i = 0; i < zct_array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *type = zct_get_str(e, "type");
                size_t k;

                for (k = 0; k < ELEMENTSOF(rlimit_names); k++)
                        if (type && streq(type, rlimit_names[k].name))
                                break;
                if (k == ELEMENTSOF(rlimit_names))
                        return zct_errorf(ret_error, -EINVAL, "config.json: process.rlimits[%zu]: unknown type \"%s\"",
                                          i, type ? type : "");
                o->rlimits[o->n_rlimits++] = (struct ze_rlimit){
                        .resource = (uint32_t) rlimit_names[k].resource,
                        .cur = json_object_get_uint64(zct_get(e, "soft")),
                        .max = json_object_get_uint64(zct_get(e, "hard")),
                };
        }
        return 0;
}
