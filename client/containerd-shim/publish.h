/* SPDX-License-Identifier: MIT */
/*
 * Task events back to containerd, the two ways containerd 1.6's shims publish: a Forward call to
 * containerd's ttrpc events service ($TTRPC_ADDRESS, which containerd sets for its shims: an
 * Envelope with the time, namespace, topic and the event as a google.protobuf.Any), and when that
 * is not there or fails, containerd's own binary: `BIN --address ADDR publish --topic TOPIC
 * --namespace NS` with the Any on stdin. The Any's type URL is the event's full name (e.g.
 * containerd.events.TaskExit). Events go out one at a time, in the order of the calls.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>

/* Borrows the strings for the life of the process. ttrpc_address: NULL or empty for the binary
 * alone; binary NULL or empty: no fallback (an event that cannot be forwarded is dropped). */
void zs_publish_init(const char *ttrpc_address, const char *binary, const char *address, const char *ns);

/* Publishes event under topic ("/tasks/exit"). */
int zs_publish(const char *topic, const ProtobufCMessage *event);
