/* SPDX-License-Identifier: MIT */
/*
 * A live caller for the tests of what a connection keeps of its caller between calls
 * (test-caller-conn): a child that hands over its end of a socketpair and
 * then changes on command, made by the thread that serves the commands:
 *   'c' CAP_NET_RAW alone   'f' a seccomp filter (and no_new_privs)   'p' no_new_privs
 *   'n' a network namespace 'm' a mount namespace   'P'/'U' a procfs on live_dir, unmounted
 *   'r' a chroot into live_dir   'g' into live_cgroup   'G' this thread alone into live_cgroup (v1)
 *   'V' this thread alone into live_cgroup (a threaded cgroup v2)
 *   'l' RLIMIT_NOFILE 50/60   'u' uid and gid nobody   's' nice 10   'x' exits
 *   't' a UTS namespace   'S' the saved uid nobody   'k' each group one more (4242 alone for none)
 *   'K' the same groups set again   'C' the same capability sets set again
 *   'h' the commands handed to a new thread   'e' the serving thread replaced by a new one
 *   'i' three idle threads   'F' a thread with a filter of its own
 */
#pragma once

#include <limits.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "caller.h"

#define NOBODY 65534

extern char live_dir[64];          /* a directory for 'P' (a procfs on it) and 'r' (a chroot into it) */
extern char live_cgroup[PATH_MAX]; /* a cgroup for 'g', 'G' and 'V' */

struct live {
        pid_t pid;
        int sock; /* our end of the socketpair the child made: its peer is the child */
        int cmd;  /* a byte per change */
        int ack;  /* an errno per change, 0 for done */
        struct ucred cred;
};

void live_start(struct live *ret);
/* The child makes change cmd, and says it is done (or, for 'x', has exited). */
void live_do(struct live *p, char cmd);
void live_stop(struct live *p);

/* A thread that idles for ever. */
void *idle_thread(void *arg);

/* The path fd stands for. */
void fd_path(int fd, char *buf, size_t size);
/* Two reads of the same caller agree on everything that decides its task. */
void assert_same(const struct zd_caller *a, const struct zd_caller *b);
/* The caller read through k (kept from the calls before), checked against a read that keeps
 * nothing and against one through /proc alone (ZD_CALLER_READ_PROC). */
void read_kept(struct live *p, struct zd_caller_conn *k, struct zd_caller *ret);
/* A connection's kept state, as zygoted makes it: its threads' files kept too. */
struct zd_caller_conn *conn_new(void);
void skip_unless_root(const char *why);
