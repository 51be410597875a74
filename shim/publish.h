/* SPDX-License-Identifier: MIT */
/*
 * Task events back to containerd, the way its shims publish when they run a binary: containerd's
 * own binary, `BIN --address ADDR publish --topic TOPIC --namespace NS`, with the event on stdin
 * as an encoded google.protobuf.Any (type URL: the event's full name, e.g.
 * containerd.events.TaskExit). Events go out one at a time, in the order of the calls.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>

/* Borrows the strings for the life of the process. A NULL binary: events are dropped. */
void zs_publish_init(const char *binary, const char *address, const char *ns);

/* Publishes event under topic ("/tasks/exit"); waits for the binary. */
int zs_publish(const char *topic, const ProtobufCMessage *event);
