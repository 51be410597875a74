/* SPDX-License-Identifier: MIT */
/*
 * launchctl run (launchctl-run.c): spawn a task with our stdio, forward signals, exit with its
 * status.
 */
#pragma once

/* The run verb. argv[0] is "run". Returns launchctl's exit code. */
int lc_verb_run(const char *socket_path, int argc, char **argv);
