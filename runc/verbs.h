/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's command line: the verb table (main.c), the option parser of every verb
 * (options.c) and the handlers, one file per command family:
 *
 *   cmd-create.c    create, run, start
 *   cmd-exec.c      exec
 *   cmd-state.c     state, list, ps
 *   cmd-kill.c      kill, delete, pause, resume
 *   cmd-spec.c      spec
 *   cmd-features.c  features
 *
 * A handler parses its own options, calls the runtime's parts (runtime.h) and prints; it returns
 * the process's exit status.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "runtime.h"

/* ---- the verb table ---- */

enum {
        /* The first argument after the options is the container's id: without it the verb fails
         * with "CMD: a container id is required" before doing anything. */
        ZRC_VERB_ID = 1 << 0,
};

struct zrc_verb;
typedef int (*zrc_verb_handler)(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);

struct zrc_verb {
        const char *name;
        zrc_verb_handler run;   /* argv: what follows the verb's name */
        unsigned flags;         /* ZRC_VERB_* */
        const char *help;       /* its line(s) in --help, or NULL when another verb's line covers it */
};

/* ---- options.c: runc's flags come before the positional arguments ---- */

struct zrc_opt {
        const char *name;  /* long name without "--" */
        char short_name;
        bool has_arg;
        const char *value; /* NULL when not given; "" for a given flag without argument */
        const char **list; /* for repeatable options (-e): room for as many values as argv has words */
        size_t n_list;
};

/* Fills opts from argv[0..]; returns the index of the first positional argument (after which
 * everything is positional, as exec's command needs), or -1 after printing an error; with
 * ZRC_VERB_ID in v's flags, also -1 (printed) when that argument is missing. */
int zrc_opts_parse(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv, struct zrc_opt *opts,
                   size_t n_opts);
/* The value of the option called name (NULL: not given). */
const char *zrc_opt_get(const struct zrc_opt *opts, size_t n, const char *name);
/* The options create, run and exec share, from their parsed opts. */
void zrc_proc_args_get(struct proc_args *p, const char *id, const struct zrc_opt *opts, size_t n);

/* ---- the handlers ---- */

int zrc_cmd_create(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_run(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_start(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_exec(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_state(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_list(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_ps(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_kill(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_delete(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_pause(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_resume(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_spec(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
int zrc_cmd_features(const struct ctx *c, const struct zrc_verb *v, int argc, char **argv);
