/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc exec: its options, for exec.c, which starts the process in the container.
 */
#include <stdlib.h>

#include "util.h"
#include "verbs.h"

int zrc_cmd_exec(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        /* -e repeats: at most once per word of argv */
        _cleanup_free_ const char **env = calloc((size_t) argc + 1, sizeof(*env));
        _cleanup_free_ const char **caps = calloc((size_t) argc + 1, sizeof(*caps));
        _cleanup_free_ const char **gids = calloc((size_t) argc + 1, sizeof(*gids));
        _cleanup_free_ const char **cgroups = calloc((size_t) argc + 1, sizeof(*cgroups));
        struct zrc_opt o[] = {
                { "process", 'p', true },
                { "pid-file", 0, true },
                { "console-socket", 0, true },
                { "detach", 'd', false },
                { "tty", 't', false },
                { "cwd", 0, true },
                { "env", 'e', true, .list = env },
                { "user", 'u', true },
                { "preserve-fds", 0, true },
                { "no-new-privs", 0, false },
                { "ignore-paused", 0, false },
                { "cap", 'c', true, .list = caps },
                { "process-label", 0, true },
                { "apparmor", 0, true },
                { "additional-gids", 'g', true, .list = gids },
                { "cgroup", 0, true, .list = cgroups },
        };
        struct zct_exec_args a = {};
        const char *label;
        int k;

        if (!env || !caps || !gids || !cgroups)
                return zct_error(c, "out of memory");
        k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        if (k < 0)
                return 1;
        /* no SELinux label is applied: refused rather than run unconfined */
        if ((label = zrc_opt_get(o, ELEMENTSOF(o), "process-label")) && *label)
                return zct_error(c, "exec: --process-label is not supported by zygote-runc (no SELinux label is "
                                    "applied)");
        if ((label = zrc_opt_get(o, ELEMENTSOF(o), "apparmor")) && *label)
                a.apparmor = label;
        a.caps = caps;
        a.n_caps = o[11].n_list;
        a.gids = gids;
        a.n_gids = o[14].n_list;
        a.no_new_privs = zrc_opt_get(o, ELEMENTSOF(o), "no-new-privs") != NULL;
        a.ignore_paused = zrc_opt_get(o, ELEMENTSOF(o), "ignore-paused") != NULL;
        a.cgroups = cgroups;
        a.n_cgroups = o[15].n_list;
        zrc_proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
        a.args = argv + k + 1;
        a.n_args = argc - k - 1;
        a.process = zrc_opt_get(o, ELEMENTSOF(o), "process");
        a.tty = zrc_opt_get(o, ELEMENTSOF(o), "tty") != NULL;
        a.cwd = zrc_opt_get(o, ELEMENTSOF(o), "cwd");
        a.user = zrc_opt_get(o, ELEMENTSOF(o), "user");
        a.env = env;
        a.n_env = o[6].n_list;
        return zct_exec_process(c, &a);
}
