/* SPDX-License-Identifier: MIT */
/* GetFilter: compiled seccomp programs as sealed memfds, compiled once per content; see filter.c. */
#pragma once

struct zd_call;
struct zd_conn;
struct zd_daemon;

/* The handler of io.zygote.Launcher.GetFilter (methods.c's table). */
int zd_get_filter(struct zd_call *call);
/* A caller went away: its GetFilter waiting for a compile gets no answer; a compile nobody
 * waits for any more is killed (and still charged). */
void zd_filter_drop_conn(struct zd_daemon *d, struct zd_conn *c);
/* Kills the compiles running and drops every cached program (shutdown). */
void zd_filters_free(struct zd_daemon *d);
