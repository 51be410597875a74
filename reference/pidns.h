/* SPDX-License-Identifier: MIT */
/*
 * A profile's pid namespace: `zygote-ref --init` (zygote-init.c) is started by zygoted with
 * CLONE_NEWPID | CLONE_NEWNS and is that namespace's init. It makes its mounts slaves of the
 * host's (MS_SLAVE | MS_REC: host mounts still reach the tasks, nothing of theirs goes back),
 * mounts a procfs of the namespace on /proc with hidepid=invisible and detaches every other
 * procfs mount, then reaps orphans. Every task of the profile is born in that namespace (the
 * reference joins it before its filter, workers zygoted forks are cloned into it with
 * zr_pidns_clone() and join its mount namespace in child.c), so a task cannot name, signal,
 * ptrace or read any process outside it, its caller's other processes included.
 *
 * The init outlives zygoted: tasks keep running across a daemon restart (the kernel kills a
 * namespace's processes when its init dies). It exits once its control socket (fd 3) has closed
 * and it is the last process in its namespace.
 *
 * Protocol on fd 3 (SOCK_SEQPACKET): init -> daemon one struct zr_pidns_ready once /proc is in
 * place (err 0) or a step failed (err > 0, nothing else follows). Nothing else is ever sent.
 *
 * Daemon side: library code, no logging, every wait bounded.
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pidref.h"

#define ZR_PIDNS_CTL_FD 3
#define ZR_PIDNS_INIT_ARG "--init"

struct zr_pidns_ready {
        uint32_t magic; /* ZR_PIDNS_MAGIC */
        int32_t err;    /* 0, or the positive errno of the failed step */
        char what[56];  /* the step that failed, NUL-terminated */
};
#define ZR_PIDNS_MAGIC 0x5a59504eu /* "ZYPN" */

struct zr_pidns {
        struct zc_pidref pidref; /* the init, in zygoted's pid namespace; fd -EBADF when not running */
        int ctl_fd;              /* closing it tells the init to leave once its namespace is empty */
        int pidns_fd;            /* /proc/PID/ns/pid and ns/mnt of the init, O_RDONLY */
        int mntns_fd;
};

#define ZR_PIDNS_NULL \
        ((struct zr_pidns){ .pidref = ZC_PIDREF_NULL, .ctl_fd = -EBADF, .pidns_fd = -EBADF, .mntns_fd = -EBADF })

/* Starts the helper open at helper_fd as the init of a new pid and mount namespace and waits
 * (bounded) until its /proc is in place. Errors: the clone's or exec's errno, the init's
 * (negative) errno with its step written to what (when not NULL), -ETIMEDOUT. */
int zr_pidns_start(int helper_fd, struct zr_pidns *ret, char *what, size_t what_size);

/* Lets go of the init without ending it: its namespace lives on while it holds a task, and the
 * init leaves after the last. Closes our fds and stops nothing; the init is our child until then
 * and stays watchable through the pidfd the caller took (zygoted reaps it when it leaves). */
void zr_pidns_release(struct zr_pidns *ns);

/* SIGKILLs the init (and with it every process of its namespace) and reaps it. For tests. */
void zr_pidns_kill(struct zr_pidns *ns);

/* Forks a child that is born in ns's pid namespace: pid_for_children is switched to it for the
 * one clone and back (so the caller must hold CAP_SYS_ADMIN). Like clone_with_pidfd(0, ...):
 * 0 in the child, its pid (in our namespace) in the parent with *ret_pidfd set, or a negative
 * errno. ns NULL or without a pid namespace: a plain fork. */
pid_t zr_pidns_clone(const struct zr_pidns *ns, int *ret_pidfd);
