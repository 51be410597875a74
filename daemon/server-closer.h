/* SPDX-License-Identifier: MIT */
/* The callers' fds closed by helpers, for server.c; see server-closer.c. zd_server_close_caller_fd()
 * is in server.h, for every module that closes a caller's fd. */
#pragma once

struct zd_server;

/* Starts the helpers and watches them on s's loop. A negative errno when none can start. */
int zd_server_closer_start(struct zd_server *s);
/* Stops watching them and lets them go once their work is done; nothing without a closer. */
void zd_server_closer_stop(struct zd_server *s);
