/* SPDX-License-Identifier: MIT */
/*
 * Signal names as the command-line tools take them (launchctl kill, zygote-runc kill).
 */
#pragma once

/* A signal by number ("15") or name, with or without "SIG", in any case ("TERM", "SIGTERM",
 * "term"), and the real-time ones as "RTMIN", "RTMIN+N", "RTMAX", "RTMAX-N". Its number, or
 * -EINVAL. */
int zy_signal_from_string(const char *s);
