/* SPDX-License-Identifier: MIT */
/*
 * Command-line options of the benchmark and load tools; see bench-opts.h.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-opts.h"

#define BENCH_OPTS_MAX 16

static int parse_number(const char *arg, int base, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        /* strtoull accepts a sign and wraps "-1" around: refuse both */
        if (arg[0] < '0' || arg[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(arg, &end, base);
        if (errno != 0 || end == arg || *end || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int bench_parse_opts(int argc, char **argv, const char *tool, const struct bench_opt *opts) {
        struct option lo[BENCH_OPTS_MAX + 1] = {};
        size_t n = 0;
        int c;

        for (; opts[n].name; n++) {
                if (n == BENCH_OPTS_MAX)
                        return -E2BIG;
                lo[n] = (struct option){ opts[n].name, opts[n].kind == BENCH_OPT_FLAG ? no_argument : required_argument,
                                         NULL, (int) n + 1 };
        }
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+", lo, NULL)) >= 0) {
                const struct bench_opt *o = c >= 1 && c <= (int) n ? &opts[c - 1] : NULL;
                uint64_t v = 0;
                int r = 0;

                if (!o) {
                        fprintf(stderr, "%s: unknown option or missing value: %s\n", tool, argv[optind - 1]);
                        return -EINVAL;
                }
                switch (o->kind) {
                case BENCH_OPT_STRING:
                        *(const char **) o->dest = optarg;
                        break;
                case BENCH_OPT_ULONG:
                case BENCH_OPT_COUNT:
                        r = parse_number(optarg, 10, ULONG_MAX, &v);
                        if (r == 0 && v == 0 && o->kind == BENCH_OPT_COUNT) {
                                fprintf(stderr, "%s: --%s must be > 0\n", tool, o->name);
                                return -EINVAL;
                        }
                        if (r == 0)
                                *(unsigned long *) o->dest = (unsigned long) v;
                        break;
                case BENCH_OPT_U64:
                        r = parse_number(optarg, 0, UINT64_MAX, &v);
                        if (r == 0)
                                *(uint64_t *) o->dest = v;
                        break;
                case BENCH_OPT_FLAG:
                        *(bool *) o->dest = true;
                        break;
                case BENCH_OPT_CALL:
                        /* the callback says why itself */
                        if (o->call(optarg, o->dest) < 0)
                                return -EINVAL;
                        break;
                }
                if (r < 0) {
                        fprintf(stderr, "%s: --%s wants a whole number, not '%s'\n", tool, o->name, optarg);
                        return -EINVAL;
                }
        }
        return optind;
}
