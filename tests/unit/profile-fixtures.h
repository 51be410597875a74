/* SPDX-License-Identifier: MIT */
/* The profile tests' helpers: JSON with single quotes, loading, decisions, scratch directories. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "bpf.h"
#include "profile-json.h"
#include "profile.h"
#include "testutil.h"
#include "sha256.h"

extern const char *profiles_dir;

/* JSON written with single quotes, for readability: 'x' becomes "x". */
char *J(const char *s);

#define BUF_PATH "t/x.json"

struct zp_profile *load_ok(const char *json);

/* Fails with exactly this errno and this message (after "t/x.json: "). */
void load_fail(const char *json, int want_r, const char *want_msg);

uint32_t decide_arch(const struct zp_profile *p, uint32_t arch, int nr, uint64_t a0, uint64_t a1);

uint32_t decide(const struct zp_profile *p, const char *name, uint64_t a0, uint64_t a1);

/* One rule on getpid with the given action fields, under defaultAction ALLOW. */
struct zp_profile *getpid_rule(const char *fields);

char *tmpdir_new(void);

void write_file(const char *dir, const char *name, const char *json);

void rm_rf(const char *dir);

/* main() of a profile test: PROFILES_DIR from the command line into profiles_dir, then the tests. */
int profile_tests_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n_tests);

/* The main() of a profile test whose table is tests. */
#define PROFILE_TESTS_MAIN(tests) \
        int main(int argc, char **argv) { \
                return profile_tests_run(argc, argv, tests, sizeof(tests) / sizeof((tests)[0])); \
        }
