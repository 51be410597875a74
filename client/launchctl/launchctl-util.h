/* SPDX-License-Identifier: MIT */
/*
 * launchctl's helpers (launchctl-util.c), shared by launchctl.c (verbs, output) and
 * launchctl-run.c (run).
 */
#pragma once

#include <stdbool.h>

#include "zygote.h"

/* The program name in every message. */
#define LC_PROGRAM "launchctl"

/* launchctl's exit codes besides a task's own status (see launchctl --help). */
enum {
        LC_EXIT_FAILURE = 1, /* the daemon said no, or cannot be reached */
        LC_EXIT_USAGE = 2,
        LC_EXIT_SPAWN_SETUP = 125,
        LC_EXIT_NOT_EXECUTABLE = 126,
        LC_EXIT_NOT_FOUND = 127,
};

/* Connects to socket_path, else to the default socket: $ZYGOTE_SOCKET; for root the system
 * daemon's; for anyone else the user's own daemon's if one listens there, else the system one's.
 * On success *ret_used (when not NULL) is a malloc'd "PATH (why this one)" for launchctl status;
 * on failure prints every path it tried and why each failed. */
int lc_connect(const char *socket_path, zy_conn **ret, char **ret_used);

/* Prints "launchctl: WHAT: reason" for a failed call, using the daemon's error when there is
 * one. Returns LC_EXIT_FAILURE. */
int lc_fail(zy_conn *c, const char *what, int r);

/* Prints a usage error for verb and returns LC_EXIT_USAGE. */
int lc_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The exit status of launchctl run / wait for a task that exited: its code, or 128 + signal. */
int lc_task_exit_status(const struct zy_task_info *t);

/* Prints json pretty to stdout. */
void lc_print_json(json_object *o);
