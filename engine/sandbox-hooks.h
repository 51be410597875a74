/* SPDX-License-Identifier: MIT */
/*
 * The sandbox-setup module's hooks (sandbox-hooks.c), called by ze_sandbox_run(): the OCI
 * createContainer and startContainer hooks, run by the container init itself. Internal to the
 * module; raw system calls only, like the rest of it.
 */
#pragma once

#include "sandbox.h"

/* Writes pid into the state's slot (struct ze_sb_hooks); nothing without hooks. */
void ze_sb_hooks_set_pid(const struct ze_sb_hooks *h, int pid);

/* Runs the hooks of h in order, each a child of the caller with the state on its stdin, and stops
 * at the first that fails. Returns 0, or a negative errno with the hook's index in *ret_index
 * and its status in *ret_status: -EPROTO when it ran and did not exit 0 (status: its exit status,
 * or 128 + the signal), -ETIME when it was killed past its timeout (status 128 + SIGKILL), another
 * errno when it could not be started (status -1). */
int ze_sb_run_hooks(const struct ze_sb_hooks *h, int *ret_index, int *ret_status);
