/* SPDX-License-Identifier: MIT */
/* Spawn's caller: who it is now, what the worker runs as, what confines it; see spawn-identity.c. */
#pragma once

struct spawn;

/* Who the caller is for this call (s->who), from the connection or the process read. */
void zd_spawn_identify(struct spawn *s);
/* The caller as it is now, read from the kernel (s->caller), then zd_spawn_identify();
 * CallerConfined with the reason when it cannot be read. */
int zd_spawn_read_caller(struct spawn *s);
/* Who the worker runs as (s->id), from the caller's credentials; the request only narrows. */
int zd_spawn_decide_identity(struct spawn *s);
/* The caller's own confinement: what its task can carry, or CallerConfined with the reason. */
int zd_spawn_confine_seccomp(struct spawn *s);
int zd_spawn_confine(struct spawn *s);
int zd_spawn_filters_read(struct spawn *s, int r);
