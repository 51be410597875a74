/* SPDX-License-Identifier: MIT */
/*
 * Command-line options of the benchmark and load tools (zygote-bench's subcommands,
 * zygote-load): one table of --name VALUE options per command instead of a getopt switch each,
 * and numbers that must be whole numbers ("12x" and "-1" are errors, not 12 and ULONG_MAX).
 */
#pragma once

#include <stdbool.h>

enum bench_opt_kind {
        BENCH_OPT_STRING, /* const char **dest = the argument */
        BENCH_OPT_ULONG,  /* unsigned long *dest, decimal */
        BENCH_OPT_COUNT,  /* unsigned long *dest, decimal, at least 1 */
        BENCH_OPT_U64,    /* uint64_t *dest, decimal or 0x hex (seeds) */
        BENCH_OPT_FLAG,   /* bool *dest = true; takes no argument */
        BENCH_OPT_CALL,   /* call(argument, dest): 0, or a negative errno after its own message */
};

struct bench_opt {
        const char *name;
        enum bench_opt_kind kind;
        void *dest;
        int (*call)(const char *arg, void *dest);
};

/* Parses argv[1..] against opts (ended by an entry with a NULL name), stopping at the first
 * argument that is not an option (or after "--"). Returns the index of that argument (argc when
 * none), or -EINVAL after saying why on stderr, prefixed with tool. */
int bench_parse_opts(int argc, char **argv, const char *tool, const struct bench_opt *opts);
