/* SPDX-License-Identifier: MIT */
/* The dispatch table of every method; see methods.c. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

struct zy_conn;

/* The server's callbacks; userdata is the struct zy_daemon. */
void zy_methods_call(void *userdata, struct zy_conn *c, json_object *msg, int *fds, size_t n_fds);
void zy_methods_disconnect(void *userdata, struct zy_conn *c);

/* The interface text (daemon/io.zygote.Launcher.varlink), answered by GetInterfaceDescription. */
extern const char zy_interface_description[];
