/* SPDX-License-Identifier: MIT */
/*
 * A process's stdio, from the fifo paths containerd gives: without a terminal the task gets the
 * fifos themselves (nothing is copied; the readers see EOF when the task's side closes); with a
 * terminal the task sends its pty master over a socket pair, and the shim copies between the
 * master and the fifos.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>

struct zs_stdio {
        bool terminal;
        int task_fds[3];       /* what the task gets as 0, 1, 2; -EBADF: /dev/null */
        int console_socket[2]; /* with a terminal: [0] ours, [1] the task's */
        int stdin_hold;        /* a writer of the stdin fifo, kept until CloseIO: the task (or the
                                  copy) sees EOF only when containerd closes stdin */
        int master;            /* the pty master, with a terminal */
        int copy_in;           /* with a terminal: the stdin fifo (read) and the stdout fifo (write) */
        int copy_out;
        int out_keep[2]; /* readers of the stdout and stderr fifos the shim keeps */
        int cancel[2];   /* a pipe that ends the copies */
        pthread_t in_thread, out_thread;
        bool in_running, out_running;
};

/* Sets every fd to -EBADF. */
void zs_stdio_init(struct zs_stdio *io);

/* Opens the fifos (empty or NULL paths: none) and, with a terminal, the console socket pair. */
int zs_stdio_open(struct zs_stdio *io, const char *in, const char *out, const char *err, bool terminal);

/* After the task was created: closes the shim's copies of the task's fds and, with a terminal,
 * receives the pty master (timeout_ms at most) and starts the copies. */
int zs_stdio_created(struct zs_stdio *io, int timeout_ms);

/* CloseIO: containerd closed stdin; the task sees EOF once no other writer is left. */
void zs_stdio_close_stdin(struct zs_stdio *io);

/* ResizePty: -ENOTTY without a terminal. */
int zs_stdio_resize(struct zs_stdio *io, unsigned width, unsigned height);

/* After the task exited: waits until the output copy drained the pty (the readers see EOF). */
void zs_stdio_drain(struct zs_stdio *io);

/* Stops the copies and closes everything. */
void zs_stdio_done(struct zs_stdio *io);
