/* SPDX-License-Identifier: MIT */
/*
 * The foreground terminal (tty.c): `run` or `exec -t` of a process.terminal without
 * --console-socket, as runc does it. The runtime makes a socket pair whose far end is the init's
 * console socket (the pty comes from the container's devpts: engine/sandbox.c, step 5), takes the
 * master once the process is ready and copies its own stdio to and from it until the process is
 * gone, handing its exit status back.
 */
#pragma once

#include <stdbool.h>
#include <termios.h>

struct zct_ctx;
struct zct_oci;

struct zct_tty {
        int sock;   /* our end of the pair, until the master arrived */
        int master; /* O_NONBLOCK */
        int host;   /* the runtime's terminal (for its size), or -EBADF */
        int host_owned;
        int raw_fd; /* the terminal put in raw mode (stdin), or -EBADF */
        struct termios saved;
};

#define ZCT_TTY_NONE \
        { .sock = -EBADF, .master = -EBADF, .host = -EBADF, .host_owned = -EBADF, .raw_fd = -EBADF }

/* When o asks for a terminal and there is no console socket (console_socket NULL, *console_fd <
 * 0): the pair, its far end in *console_fd (the init's console socket, the caller's to close),
 * the runtime's terminal found as runc finds it (stderr, stdout or stdin, else /dev/tty) and its
 * size made o's (the pty's from its start). Else nothing: 0. */
int zct_tty_open(const struct zct_ctx *c, struct zct_tty *t, struct zct_oci *o, const char *console_socket,
                 int *console_fd);

/* Once the process reported ready: the master (sent before that report), its ONLCR cleared (the
 * runtime's terminal translates), its size the runtime's terminal's; the runtime's terminal raw
 * when stdin is one (output processing kept, as runc keeps it). */
int zct_tty_take_master(const struct zct_ctx *c, struct zct_tty *t);

/* Copies stdin to the master and the master to stdout, resizes the pty on SIGWINCH, until the
 * process (pidfd, our child) is gone and the pty has no more to say: its exit status. */
int zct_tty_relay(struct zct_tty *t, int pidfd);

/* The runtime's terminal as it was; every fd closed. */
void zct_tty_done(struct zct_tty *t);
