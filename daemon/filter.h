/* SPDX-License-Identifier: MIT */
/* GetFilter: compiled seccomp programs as sealed memfds, compiled once per content; see filter.c. */
#pragma once

struct zd_call;
struct zd_daemon;

/* The handler of io.zygote.Launcher.GetFilter (methods.c's table). */
int zd_get_filter(struct zd_call *call);
/* Drops every cached program (shutdown). */
void zd_filters_free(struct zd_daemon *d);
