/* SPDX-License-Identifier: MIT */
/*
 * runc/options.c alone: how a verb's command line is read, as runc's urfave/cli reads it (long,
 * "=", short and single-dash long options, flags, "--", a repeatable option), the errors and their
 * words, and the table's flags: a missing container id, the container's lock taken for
 * ZCT_VERB_LOCK before the state is loaded for ZRC_VERB_STATE. zct_error(), zct_errstr(),
 * zct_state_lock() and zct_runc_load_state() are stubs that record what they were given.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "verbs.h"
#include "testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char last_error[256];
static const char *loaded_id, *locked_id;
static int calls; /* the order of the lock and the load: each records the count it saw */
static int locked_at, loaded_at;

const char *zct_errstr(int err) {
        return strerror(err);
}

int zct_state_lock(const char *root, const char *id) {
        (void) root;
        locked_id = id;
        locked_at = ++calls;
        if (strcmp(id, "gone") == 0)
                return -ENOENT;
        if (strcmp(id, "stuck") == 0)
                return -EIO;
        return 100;
}

int zct_error(const struct zct_ctx *c, const char *fmt, ...) {
        va_list ap;

        (void) c;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof(last_error), fmt, ap);
        va_end(ap);
        return 1;
}

int zct_runc_load_state(const struct zct_ctx *c, const char *id, struct zct_state *st) {
        loaded_id = id;
        loaded_at = ++calls;
        if (strcmp(id, "gone") == 0)
                return zct_error(c, "container does not exist"), -ENOENT;
        *st = (struct zct_state){ .pid = 42 };
        return 0;
}

static int setup(void **state) {
        (void) state;
        last_error[0] = '\0';
        loaded_id = locked_id = NULL;
        calls = locked_at = loaded_at = 0;
        return 0;
}

static const struct zct_ctx ctx;
static const struct zrc_verb plain = { "list", NULL, 0, NULL };
static const struct zrc_verb with_id = { "create", NULL, ZRC_VERB_ID, NULL };
static const struct zrc_verb flags_first = { "exec", NULL, ZRC_VERB_ID | ZRC_VERB_FLAGS_FIRST, NULL };
static const struct zrc_verb with_state = { "ps", NULL, ZRC_VERB_ID | ZRC_VERB_STATE, NULL };
static const struct zrc_verb locking = { "update", NULL, ZRC_VERB_ID | ZRC_VERB_STATE | ZCT_VERB_LOCK, NULL };
static const struct zrc_verb locking_only = { "delete", NULL, ZRC_VERB_ID | ZCT_VERB_LOCK, NULL };

static void test_forms(void **state) {
        char *argv[] = { "--bundle", "b1", "--pid-file=p", "-d", "-console-socket", "s", "--keep", "id", "more" };
        struct zrc_opt o[] = { { "bundle", 'b', true },  { "pid-file", 0, true }, { "console-socket", 0, true },
                               { "detach", 'd', false }, { "keep", 0, false },    { "tty", 't', false } };

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(argv), argv, o, N(o), NULL), 7);
        assert_string_equal(zrc_opt_get(o, N(o), "bundle"), "b1");
        assert_string_equal(zrc_opt_get(o, N(o), "pid-file"), "p");
        assert_string_equal(zrc_opt_get(o, N(o), "console-socket"), "s");
        assert_string_equal(zrc_opt_get(o, N(o), "detach"), ""); /* a given flag */
        assert_string_equal(zrc_opt_get(o, N(o), "keep"), "");
        assert_null(zrc_opt_get(o, N(o), "tty"));
        assert_null(zrc_opt_get(o, N(o), "nosuch"));
        assert_string_equal(last_error, "");
}

static void test_end_of_options(void **state) {
        char *after_dashes[] = { "-d", "--", "-t", "x" };
        char *dash[] = { "-", "-d" };
        char *command[] = { "id", "sh", "-c", "--tty" }; /* exec's command keeps its own options */
        struct zrc_opt o[] = { { "detach", 'd', false }, { "tty", 't', false } };

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &plain, N(after_dashes), after_dashes, o, N(o), NULL), 2);
        assert_null(o[1].value);
        assert_int_equal(zrc_verb_parse(&ctx, &flags_first, N(dash), dash, o, N(o), NULL), 0);
        assert_int_equal(zrc_verb_parse(&ctx, &flags_first, N(command), command, o, N(o), NULL), 0);
        assert_null(o[1].value);
}

/* Every verb but exec and ps takes its options after the id too, moved in front as runc's
 * urfave/cli moves them ("update ID --pids-limit 7"); nothing from "--" on, an unknown word stays
 * where it is (a positional argument). */
static void test_options_after_the_id(void **state) {
        char *argv[] = { "id", "--bundle", "b", "SIG", "-d", "--pid-file=p", "-9", "--", "--tty" };
        struct zrc_opt o[] = {
                { "bundle", 'b', true }, { "detach", 'd', false }, { "pid-file", 0, true }, { "tty", 't', false }
        };

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(argv), argv, o, N(o), NULL), 4);
        assert_string_equal(zrc_opt_get(o, N(o), "bundle"), "b");
        assert_string_equal(zrc_opt_get(o, N(o), "detach"), "");
        assert_string_equal(zrc_opt_get(o, N(o), "pid-file"), "p");
        assert_null(zrc_opt_get(o, N(o), "tty"));
        assert_string_equal(argv[4], "id");
        assert_string_equal(argv[5], "SIG");
        assert_string_equal(argv[6], "-9");
        assert_string_equal(argv[7], "--");
        assert_string_equal(argv[8], "--tty");
}

static void test_repeated(void **state) {
        char *argv[] = { "-e", "A=1", "--env", "B=2", "--env=C=3", "id" };
        const char *env[N(argv) + 1];
        struct zrc_opt o[] = { { "env", 'e', true, .list = env } };

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(argv), argv, o, N(o), NULL), 5);
        assert_int_equal(o[0].n_list, 3);
        assert_string_equal(env[0], "A=1");
        assert_string_equal(env[1], "B=2");
        assert_string_equal(env[2], "C=3");
}

static void test_errors(void **state) {
        char *unknown[] = { "--bogus", "id" };
        char *short_unknown[] = { "-x", "id" };
        char *no_value[] = { "--bundle" };
        char *no_id[] = { "--bundle", "b" };
        struct zrc_opt o[] = { { "bundle", 'b', true } };

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(unknown), unknown, o, N(o), NULL), -1);
        assert_string_equal(last_error, "create: unknown option --bogus");
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(short_unknown), short_unknown, o, N(o), NULL), -1);
        assert_string_equal(last_error, "create: unknown option -x");
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(no_value), no_value, o, N(o), NULL), -1);
        assert_string_equal(last_error, "create: option --bundle needs an argument");
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(no_id), no_id, o, N(o), NULL), -1);
        assert_string_equal(last_error, "create: a container id is required");
        /* a verb without ZRC_VERB_ID takes no positional argument at all */
        last_error[0] = '\0';
        assert_int_equal(zrc_verb_parse(&ctx, &plain, N(no_id), no_id, o, N(o), NULL), 2);
        assert_string_equal(last_error, "");
}

static void test_state(void **state) {
        char *argv[] = { "--format", "json", "c1" };
        char *gone[] = { "gone" };
        char *none[] = { "--format", "json" };
        struct zrc_opt o[] = { { "format", 'f', true } };
        struct zct_state st = {};

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &with_state, N(argv), argv, o, N(o), &st), 2);
        assert_string_equal(loaded_id, "c1");
        assert_int_equal(st.pid, 42);
        assert_int_equal(zrc_verb_parse(&ctx, &with_state, N(gone), gone, o, N(o), &st), -1);
        assert_string_equal(last_error, "container does not exist");
        /* no id: nothing is loaded */
        loaded_id = NULL;
        assert_int_equal(zrc_verb_parse(&ctx, &with_state, N(none), none, o, N(o), &st), -1);
        assert_null(loaded_id);
        /* without the flag the state is not the parser's business */
        assert_int_equal(zrc_verb_parse(&ctx, &with_id, N(argv), argv, o, N(o), NULL), 2);
        assert_null(loaded_id);
}

/* ZCT_VERB_LOCK: the lock before the state; a missing container is the state's (or the
 * handler's) to report; a lock that cannot be taken fails the command naming the container. */
static void test_lock(void **state) {
        char *argv[] = { "c1" };
        char *gone[] = { "gone" };
        char *stuck[] = { "stuck" };
        struct zct_state st = {};

        (void) state;
        assert_int_equal(zrc_verb_parse(&ctx, &locking, N(argv), argv, NULL, 0, &st), 0);
        assert_string_equal(locked_id, "c1");
        assert_string_equal(loaded_id, "c1");
        assert_true(locked_at > 0 && locked_at < loaded_at);
        assert_int_equal(zrc_verb_parse(&ctx, &locking, N(gone), gone, NULL, 0, &st), -1);
        assert_string_equal(last_error, "container does not exist");
        assert_int_equal(zrc_verb_parse(&ctx, &locking_only, N(gone), gone, NULL, 0, NULL), 0);
        assert_int_equal(zrc_verb_parse(&ctx, &locking_only, N(stuck), stuck, NULL, 0, NULL), -1);
        assert_non_null(strstr(last_error, "the lock of container stuck"));
        /* without the flag, no lock */
        locked_id = NULL;
        assert_int_equal(zrc_verb_parse(&ctx, &with_state, N(argv), argv, NULL, 0, &st), 0);
        assert_null(locked_id);
}

static void test_proc_args(void **state) {
        char *argv[] = { "--pid-file", "p", "--preserve-fds", "3", "-d", "id" };
        struct zrc_opt o[] = { { "pid-file", 0, true },
                               { "console-socket", 0, true },
                               { "preserve-fds", 0, true },
                               { "detach", 'd', false } };
        struct zct_proc_args p = {};
        int k;

        (void) state;
        k = zrc_verb_parse(&ctx, &with_id, N(argv), argv, o, N(o), NULL);
        assert_int_equal(k, 5);
        zrc_proc_args_get(&p, argv[k], o, N(o));
        assert_string_equal(p.id, "id");
        assert_string_equal(p.pid_file, "p");
        assert_null(p.console_socket);
        assert_int_equal(p.preserve_fds, 3);
        assert_true(p.detach);
}

TU_MAIN(cmocka_unit_test_setup(test_forms, setup), cmocka_unit_test_setup(test_end_of_options, setup),
        cmocka_unit_test_setup(test_options_after_the_id, setup), cmocka_unit_test_setup(test_repeated, setup),
        cmocka_unit_test_setup(test_errors, setup), cmocka_unit_test_setup(test_state, setup),
        cmocka_unit_test_setup(test_lock, setup), cmocka_unit_test_setup(test_proc_args, setup))
