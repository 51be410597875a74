/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc exec: its options, for exec.c, which starts the process in the container.
 */
#include <stdlib.h>

#include "util.h"
#include "verbs.h"

int zrc_cmd_exec(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        /* -e repeats: at most once per word of argv */
        _cleanup_free_ const char **env = calloc((size_t) argc + 1, sizeof(*env));
        struct zrc_opt o[] = {
                { "process", 'p', true },          { "pid-file", 0, true },       { "console-socket", 0, true },
                { "detach", 'd', false },          { "tty", 't', false },         { "cwd", 0, true },
                { "env", 'e', true, .list = env }, { "user", 'u', true },         { "preserve-fds", 0, true },
                { "no-new-privs", 0, false },      { "ignore-paused", 0, false }, { "cap", 'c', true },
                { "process-label", 0, true },      { "apparmor", 0, true }
        };
        struct zrc_exec_args a = {};
        int k;

        if (!env)
                return zrc_error(c, "out of memory");
        k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        if (k < 0)
                return 1;
        zrc_proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
        a.args = argv + k + 1;
        a.n_args = argc - k - 1;
        a.process = zrc_opt_get(o, ELEMENTSOF(o), "process");
        a.tty = zrc_opt_get(o, ELEMENTSOF(o), "tty") != NULL;
        a.cwd = zrc_opt_get(o, ELEMENTSOF(o), "cwd");
        a.user = zrc_opt_get(o, ELEMENTSOF(o), "user");
        a.env = env;
        a.n_env = o[6].n_list;
        return zrc_exec_process(c, &a);
}
