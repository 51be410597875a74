/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's verb options, as runc's urfave/cli takes them: "--name value", "--name=value",
 * "-n value" and single-dash long names ("-bundle"), before the first positional argument or
 * "--"; a verb without ZRC_VERB_FLAGS_FIRST takes them after its positional arguments too, moved
 * in front first as urfave/cli's reorderArgs moves them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "verbs.h"

/* The option a word names ("--name", "--name=V", "-n", "-name"), or NULL: an unknown word stays a
 * positional argument, as urfave/cli leaves it. */
static struct zrc_opt *opt_named(struct zrc_opt *opts, size_t n_opts, const char *a) {
        size_t len;

        if (a[0] != '-' || a[1] == '\0')
                return NULL;
        a += a[1] == '-' ? 2 : 1;
        len = strcspn(a, "=");
        for (size_t k = 0; k < n_opts; k++)
                if ((len == 1 && !a[1] && opts[k].short_name == a[0]) ||
                    (strlen(opts[k].name) == len && strncmp(opts[k].name, a, len) == 0))
                        return &opts[k];
        return NULL;
}

/* argv's known options (with the value of one that takes it as the next word) moved in front of
 * the positional arguments, each group in its order; nothing moves from "--" on. */
static int reorder(int argc, char **argv, struct zrc_opt *opts, size_t n_opts) {
        _cleanup_free_ char **rest = calloc(argc + 1, sizeof(char *));
        int n_front = 0, n_rest = 0, i;

        if (!rest)
                return -ENOMEM;
        for (i = 0; i < argc && !streq(argv[i], "--"); i++) {
                struct zrc_opt *o = opt_named(opts, n_opts, argv[i]);

                if (!o) {
                        rest[n_rest++] = argv[i];
                        continue;
                }
                argv[n_front++] = argv[i];
                if (o->has_arg && !strchr(argv[i], '=') && i + 1 < argc)
                        argv[n_front++] = argv[++i];
        }
        for (; i < argc; i++)
                rest[n_rest++] = argv[i];
        memcpy(argv + n_front, rest, n_rest * sizeof(char *));
        return 0;
}

/* The lock zrc_verb_parse took (ZCT_VERB_LOCK): one verb per process, so one lock. */
static int verb_lock = -EBADF;

void zrc_verb_unlock(void) {
        verb_lock = safe_close(verb_lock);
}

int zrc_verb_parse(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv, struct zrc_opt *opts,
                   size_t n_opts, struct zct_state *ret_state) {
        const char *cmd = v->name;
        int i;

        if (!(v->flags & ZRC_VERB_FLAGS_FIRST) && reorder(argc, argv, opts, n_opts) < 0) {
                zct_error(c, "%s: %s", cmd, zct_errstr(ENOMEM));
                return -1;
        }
        for (i = 0; i < argc; i++) {
                const char *a = argv[i], *val = NULL, *eq;
                struct zrc_opt *o = NULL;
                size_t len;

                if (a[0] != '-' || streq(a, "-"))
                        break;
                if (streq(a, "--")) {
                        i++;
                        break;
                }
                if (a[1] == '-') {
                        eq = strchr(a + 2, '=');
                        len = eq ? (size_t) (eq - a - 2) : strlen(a + 2);
                        for (size_t k = 0; k < n_opts; k++)
                                if (strlen(opts[k].name) == len && strncmp(opts[k].name, a + 2, len) == 0)
                                        o = &opts[k];
                        if (eq)
                                val = eq + 1;
                } else if (a[2] == '\0') {
                        for (size_t k = 0; k < n_opts; k++)
                                if (opts[k].short_name == a[1])
                                        o = &opts[k];
                }
                if (!o) {
                        /* single-dash long flags (-bundle) are accepted by urfave/cli too */
                        for (size_t k = 0; k < n_opts && a[1] != '-'; k++)
                                if (streq(opts[k].name, a + 1))
                                        o = &opts[k];
                        if (!o) {
                                zct_error(c, "%s: unknown option %s", cmd, a);
                                return -1;
                        }
                }
                if (o->has_arg && !val) {
                        if (i + 1 >= argc) {
                                zct_error(c, "%s: option %s needs an argument", cmd, a);
                                return -1;
                        }
                        val = argv[++i];
                }
                if (!o->has_arg)
                        val = "";
                o->value = val;
                if (o->list) {
                        o->list[o->n_list++] = val;
                }
        }
        if ((v->flags & ZRC_VERB_ID) && i >= argc) {
                zct_error(c, "%s: a container id is required", cmd);
                return -1;
        }
        if (v->flags & ZCT_VERB_LOCK) {
                /* held until the process exits (or zrc_verb_unlock) */
                int lock = zct_state_lock(c->root, argv[i]);
                if (lock < 0 && lock != -ENOENT && lock != -EINVAL) {
                        zct_error(c, "%s: the lock of container %s: %s", cmd, argv[i], zct_errstr(-lock));
                        return -1;
                }
                verb_lock = lock;
        }
        if ((v->flags & ZRC_VERB_STATE) && zct_runc_load_state(c, argv[i], ret_state) < 0)
                return -1;
        return i;
}

const char *zrc_opt_get(const struct zrc_opt *opts, size_t n, const char *name) {
        for (size_t k = 0; k < n; k++)
                if (streq(opts[k].name, name))
                        return opts[k].value;
        return NULL;
}

void zrc_proc_args_get(struct zct_proc_args *p, const char *id, const struct zrc_opt *o, size_t n) {
        const char *fds = zrc_opt_get(o, n, "preserve-fds");

        p->id = id;
        p->pid_file = zrc_opt_get(o, n, "pid-file");
        p->console_socket = zrc_opt_get(o, n, "console-socket");
        p->detach = zrc_opt_get(o, n, "detach") != NULL;
        p->preserve_fds = fds ? atoi(fds) : 0;
}
