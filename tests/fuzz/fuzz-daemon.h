/* SPDX-License-Identifier: MIT */
/*
 * The harness the protocol fuzzers share: a zygoted in the fuzzer's own process, with its real
 * server.c, methods.c, spawn.c, task.c and registry.c, serving connections whose other end the
 * fuzzer holds (a socketpair), and never forking.
 *
 *   - The profiles are the bundled ones plus tests/fuzz/profiles (one with an access list and
 *     kept capabilities), all in the load tier with no reference process.
 *   - Workers are stand-ins (spawn-start.c's zd_spawn_fork_hook): a pipe whose read end plays the
 *     pidfd (EOF = the process exited), a status record written as the worker would write it,
 *     a hold pipe watched so that Start lets the stand-in "exec". argv[0] chooses the story:
 *     a name starting with "fail" fails at exec (ENOENT), "exit" or "true" exits at once, any
 *     other runs until the input ends.
 *   - The hook is also the oracle of the identity rules: a non-root caller's plan must run as
 *     that caller, with its own groups only, no capabilities, and no_new_privs; an unprivileged
 *     daemon's plans switch no ids; every fd of the plan is open; targets are distinct and below
 *     1024; env entries have a '=' that does not start them. Any breach aborts (a finding).
 *   - After each input every connection and stand-in is gone, the task table is empty, and the
 *     process holds exactly the fds it held before the input (an fd leak aborts).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Callers an input may pick (its first byte, low two bits). */
enum fz_caller {
        FZ_ROOT,       /* uid 0 */
        FZ_NOBODY,     /* 65534, primary group 65534, supplementary group 4242 */
        FZ_OTHER,      /* 65533, no supplementary groups */
        FZ_DAEMON_UID, /* the unprivileged daemon's own user (65532) */
};

/* Sets the daemon up once (idempotent). Aborts when that fails. */
void fz_init(void);

/* Starts an input: the caller and whether the daemon runs privileged, from the header byte.
 * Returns the client's end of a new connection (non-blocking). */
int fz_begin(uint8_t header);

/* Sends bytes (with fds on the first byte when n_fds > 0) as far as the socket takes them,
 * running the daemon in between. Returns 0, or -EPIPE when the daemon closed the connection. */
int fz_send(int client, const void *data, size_t len, const int *fds, size_t n_fds);

/* Runs the daemon until nothing moves, reading (and checking) every reply on the way. */
void fz_pump(int client);

/* Every running stand-in exits (as a killed process would). */
void fz_exit_all(void);

/* Ends the input: closes the client, lets every stand-in exit, empties the task table and
 * checks that nothing (fd, connection, subscriber) is left. */
void fz_end(int client);
