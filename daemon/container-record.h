/* SPDX-License-Identifier: MIT */
/*
 * io.containers.trace-syscall for zygoted's containers (container-record.c): a container whose
 * bundle asks for it is recorded by zygoted's eBPF tracer from its filter's load to its init's
 * exit, and the profile written when it is deleted.
 */
#pragma once

#include <stdbool.h>

struct zd_call;
struct zd_daemon;
struct zd_task;

/* The annotation of the bundle's config.json, if any, checked: *ret_out and *ret_in (NULL
 * without if:), malloc'd, both NULL without the annotation; without the tracer, both NULL and
 * *ret_agent set: the worker records through zygote-record's agent. 0, or the error recorded in
 * call (InvalidParameter for a malformed value or a config without linux.seccomp). */
int zd_container_record_parse(struct zd_call *call, int bundle_fd, char **ret_out, char **ret_in, bool *ret_agent);

/* Just before the fork of a recorded container's worker (t->record_out): the recording begun,
 * zygoted itself followed (not armed) so that the worker is from its birth. For an exec's worker
 * (container: the container's task), zygoted followed in the container's recording, if one is
 * under way: the exec'd process is recorded into the container's profile. 0, or the error
 * recorded in call. */
int zd_container_record_before_fork(struct zd_call *call, struct zd_task *t, const struct zd_task *container);
/* Just after that fork (or its failure): zygoted no longer followed. */
void zd_container_record_after_fork(struct zd_daemon *d, struct zd_task *t, const struct zd_task *container);

/* At Delete: the profile written to t->record_out from what the init and its descendants
 * called, the union with t->record_in (if:) or else with what the file held. Logs a failure. */
void zd_container_record_write(struct zd_daemon *d, struct zd_task *t);
