/* SPDX-License-Identifier: MIT */
/* The dispatch table of every method; see methods.c. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

struct zd_conn;

/* The server's callbacks; userdata is the struct zd_daemon. */
void zd_methods_call(void *userdata, struct zd_conn *c, json_object *msg, int *fds, size_t n_fds);
void zd_methods_disconnect(void *userdata, struct zd_conn *c);

/* The interface text (protocol/io.zygote.Launcher.varlink), answered by GetInterfaceDescription. */
extern const char zd_interface_description[];
