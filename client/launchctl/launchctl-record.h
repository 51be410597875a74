/* SPDX-License-Identifier: MIT */
/*
 * launchctl run --record FILE and launchctl profile check FILE (launchctl-record.c): both are
 * zygote-record's work, which launchctl execs (record/zygote-record.c).
 */
#pragma once

#include <stdbool.h>

/* Whether run's arguments ask for a recording (--record before the command). */
bool lc_run_wants_record(int argc, char **argv);

/* run --record: execs zygote-record; returns launchctl's exit code only on failure. */
int lc_run_record(const char *socket_path, int argc, char **argv);

/* The profile verb: `profile check FILE [RUN-OPTIONS] -- CMD`. */
int lc_verb_profile(const char *socket_path, int argc, char **argv);
