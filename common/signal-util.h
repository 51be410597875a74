/* SPDX-License-Identifier: MIT */
/*
 * Signal names as the command-line tools take them (launchctl kill, zygote-runc kill), and the
 * dispositions a process has set (what a forked worker must reset before its exec).
 */
#pragma once

#include <signal.h>

/* A signal by number ("15") or name, with or without "SIG", in any case ("TERM", "SIGTERM",
 * "term"), and the real-time ones as "RTMIN", "RTMIN+N", "RTMAX", "RTMAX-N". Its number, or
 * -EINVAL. */
int zc_signal_from_string(const char *s);

/* The signals whose disposition is not SIG_DFL, into *ret. Left out: SIGKILL and SIGSTOP, and
 * what sigaction() refuses to read (glibc's two internal signals: a handler of its own is reset by
 * execve anyway, and a worker could not reset it either). */
void zc_signals_handled(sigset_t *ret);

/* Every disposition back to SIG_DFL (only those in *only when it is not NULL) and an empty
 * mask: a parent's ignored signals and mask survive execve, and its handlers must never run in a
 * child of its own. Raw calls, no allocation: safe between fork and exec. Errors are ignored on
 * purpose: glibc refuses its two internal signals, which are handlers and so reset by execve
 * anyway. */
void zc_signals_reset(const sigset_t *only);
