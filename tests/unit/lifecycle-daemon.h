/* SPDX-License-Identifier: MIT */
/* The lifecycle tests' zygoted (socket-activated by the test) and their helpers; see test-lifecycle.c. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pidfd-util.h"
#include "zygote.h"

#define DEADLINE_MS 30000

#define NOBODY 65534

#ifndef ELEMENTSOF
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* The daemon this binary started, and what it runs with. */
struct lc_globals {
        const char *tier; /* "auto" or "load" */
        char dir[64];
        char socket[96];
        char log[128];
        char daemon_exe[PATH_MAX];
        char helper_exe[PATH_MAX];
        char self_exe[PATH_MAX];
        pid_t daemon_pid;
        int daemon_pidfd;
};
extern struct lc_globals g;

double now_realtime(void);

bool fd_readable(int fd, int timeout_ms);

zy_conn *conn(void);

void pipe_cloexec(int p[2]);

void close_fd(int *fd);

/* Spawns argv held (created) with stdin from in_fd and stdout to out_fd (-1: /dev/null). */
int spawn_held(zy_conn *c, const char *id, const char *const *argv, int in_fd, int out_fd,
               struct zy_spawn_result **ret);

/* spawn_held on new pipes: in (NULL: none) becomes the task's stdin, out (NULL: none) its stdout.
 * The task's ends are closed here; ours stay open in in[1] and out[0]. */
void spawn_piped(zy_conn *c, const char *id, const char *const *argv, int in[2], int out[2],
                 struct zy_spawn_result **ret);

/* Wait with a deadline: a task that never exits fails the test instead of hanging it. */
int wait_task(zy_conn *c, const char *id, struct zy_task_info **ret);

struct zy_task_info *state_of(zy_conn *c, const char *id);

/* A field of /proc/PID/status ("Seccomp", "NoNewPrivs"), or "" when absent. */
void proc_status_field(pid_t pid, const char *key, char *buf, size_t size);

void exe_of(pid_t pid, char *buf, size_t size);

/* The session of a process from /proc/PID/stat, -1 if it is gone. */
pid_t session_of(pid_t pid);

void write_all(int fd, const char *s);

/* Reads from fd until want has arrived (or EOF/deadline) into buf; returns the length. */
size_t read_until(int fd, const char *want, char *buf, size_t size);

void expect_no_such_task(zy_conn *c, int r);

/* The binary a held worker still runs: the reference helper in the inherit tier (it forked the
 * worker), zygoted itself in the clone and load tiers. */
const char *held_exe(const char *tier);

void check_tier(const struct zy_spawn_result *sr);

void print_daemon_log(void);

int start_daemon(void);

int setup_all(void **state);

int teardown_all(void **state);

/* main() of a lifecycle test binary: MODE auto or load runs tests against a daemon started with
 * that --tier; session (when given) runs the session group against an auto daemon. Exit 77
 * without root or setpriv. */
int lc_run(const char *name, int argc, char **argv, const struct CMUnitTest *tests, size_t n_tests,
           const struct CMUnitTest *session, size_t n_session);
