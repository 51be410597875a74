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
 *   cmd-update.c    update
 *   cmd-events.c    events
 *
 * A handler parses its own options, calls the container library (libcontainer.h) and prints; it returns
 * the process's exit status.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "libcontainer.h"

/* ---- the verb table ---- */

enum {
        /* The first argument after the options is the container's id: without it the verb fails
         * with "CMD: a container id is required" before doing anything. */
        ZRC_VERB_ID = 1 << 0,
        /* The verb works on the container's saved state (state.c), loaded before its handler goes
         * on: without it the verb fails with runc's "container does not exist". */
        ZRC_VERB_STATE = 1 << 1,
        /* The verb changes the container: it takes the container's lock (zct_state_lock) before
         * the state is read and holds it until the process exits, so that two such commands on
         * one container run one after the other (two updates would each write state.json from
         * what it read; delete would remove a directory a create is still filling). */
        ZCT_VERB_LOCK = 1 << 2,
        /* Options only before the first positional argument (exec's and ps's command and its own
         * flags follow the id): runc's SkipArgReorder. Every other verb takes its options after
         * the id too ("update ID --cpu-period N"), as runc's urfave/cli moves them in front. */
        ZRC_VERB_FLAGS_FIRST = 1 << 3,
};

struct zrc_verb;
typedef int zrc_verb_handler(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv);

struct zrc_verb {
        const char *name;
        zrc_verb_handler *run; /* argv: what follows the verb's name */
        unsigned flags;        /* ZRC_VERB_* */
        const char *help;      /* its line(s) in --help, or NULL when another verb's line covers it */
};

/* ---- options.c: runc's flags come before the positional arguments ---- */

struct zrc_opt {
        const char *name; /* long name without "--" */
        char short_name;
        bool has_arg;
        const char *value; /* NULL when not given; "" for a given flag without argument */
        const char **list; /* for repeatable options (-e): room for as many values as argv has words */
        size_t n_list;
};

/* A verb's command line: fills opts from argv[0..] and returns the index of the first positional
 * argument (after which everything is positional, as exec's command needs), or -1 after printing
 * an error. As v's flags say, that argument must be there (ZRC_VERB_ID), the container's lock is
 * taken (ZCT_VERB_LOCK; none where the container does not exist) and the state of the container
 * it names is loaded into *ret_state (ZRC_VERB_STATE; else ret_state may be NULL). */
int zrc_verb_parse(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv, struct zrc_opt *opts,
                   size_t n_opts, struct zct_state *ret_state);
/* Releases the container's lock zrc_verb_parse took before the process's end: start, once the
 * container is started and it only waits for READY=1 (runc's start holds nothing then). */
void zrc_verb_unlock(void);
/* The value of the option called name (NULL: not given). */
const char *zrc_opt_get(const struct zrc_opt *opts, size_t n, const char *name);
/* The options create, run and exec share, from their parsed opts. */
void zrc_proc_args_get(struct zct_proc_args *p, const char *id, const struct zrc_opt *opts, size_t n);

/* ---- the handlers ---- */

zrc_verb_handler zrc_cmd_create, zrc_cmd_run, zrc_cmd_start,         /* cmd-create.c */
        zrc_cmd_exec,                                                /* cmd-exec.c */
        zrc_cmd_state, zrc_cmd_list, zrc_cmd_ps,                     /* cmd-state.c */
        zrc_cmd_kill, zrc_cmd_delete, zrc_cmd_pause, zrc_cmd_resume, /* cmd-kill.c */
        zrc_cmd_spec,                                                /* cmd-spec.c */
        zrc_cmd_features,                                            /* cmd-features.c */
        zrc_cmd_update,                                              /* cmd-update.c */
        zrc_cmd_events;                                              /* cmd-events.c */
