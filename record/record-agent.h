/* SPDX-License-Identifier: MIT */
/*
 * Recording a container through the OCI runtime's own seccomp agent interface
 * (`linux.seccomp.listenerPath`, SCMP_ACT_NOTIFY): any runtime that hands a listener to an agent
 * (zygote-runc, runc 1.1, crun) records this way, its own calls after the filter's load included.
 *
 * rec_oci_recording turns a container's seccomp object (an allow-list: default action that
 * refuses) into the one to record with: every allowing rule notifies instead, so the agent sees
 * exactly the calls the profile allows and answers them FLAG_CONTINUE, while what it refuses
 * stays refused without a notification. sendmsg and write keep their allow: a runtime hands the
 * listener over with one of them, before any agent could answer (zygote-runc refuses a notifying
 * sendmsg, runc a notifying write); the agent adds both to what it writes.
 *
 * rec_agent_take reads the runtime's one message on the agent socket: the container process
 * state (JSON) with its fds as SCM_RIGHTS, "seccompFd" among them.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether name is one of the calls left allowed and unseen; the i-th of them (NULL past the end). */
bool rec_agent_unseen(const char *name);
const char *rec_agent_unseen_name(size_t i);

/* A new object: o with its allowing rules notifying and listenerPath set to socket_path.
 * -EOPNOTSUPP (and a message) for an object that allows by default. */
int rec_oci_recording(json_object *o, const char *socket_path, json_object **ret, char **ret_error);

/* Accepts one connection on the listening socket lfd and returns the listener it carries
 * (CLOEXEC), after checking the message's form; every other fd it carried is closed. */
int rec_agent_take(int lfd);
/* The same, from a connection accepted already (c, left open). */
int rec_agent_read(int c);
