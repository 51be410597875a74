/* SPDX-License-Identifier: MIT */
/*
 * The processes of a task's session. The worker called setsid(), so its pid is the sid of
 * everything it starts, unless they setsid() themselves; Pids lists them and Kill with "all"
 * signals them. Nothing but /proc knows a session's members: each process's stat is read.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "session.h"
#include "util.h"

/* The session id of pid, read from /proc; a negative errno when it cannot be read. */
static pid_t session_of(pid_t pid) {
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -ESRCH;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -ESRCH;
        buf[n] = 0;
        /* pid (comm) state ppid pgrp session: comm may hold spaces and ')' */
        char *rp = strrchr(buf, ')');
        int ppid, pgrp, session;
        char state;
        if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4)
                return -EINVAL;
        return (pid_t) session;
}

/* Calls fn for every process in the session whose id is sid (the worker called setsid(), so its
 * pid is the sid of everything it starts, unless they setsid() themselves). */
static void for_each_in_session(pid_t sid, void (*fn)(pid_t pid, void *userdata), void *userdata) {
        DIR *dir = opendir("/proc");
        struct dirent *de;
        while (dir && (de = readdir(dir))) {
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                pid_t pid = (pid_t) atoi(de->d_name);
                if (session_of(pid) == sid)
                        fn(pid, userdata);
        }
        if (dir)
                closedir(dir);
}

static void add_pid(pid_t pid, void *userdata) {
        json_object_array_add(userdata, json_object_new_int(pid));
}

struct kill_ctx {
        pid_t leader;
        int sig;
        int err;
};

static void kill_pid(pid_t pid, void *userdata) {
        struct kill_ctx *k = userdata;
        if (pid == k->leader)
                return; /* through its pidfd */
        /* Between the scan and a kill by number, pid could exit and be reused by another
         * process, which root would then signal. The pidfd pins one process; its session read
         * again after it was opened is that process's if it still lives when signalled (a pid
         * is not reused while its process lives, and a process that died stays dead). */
        _cleanup_close_ int pidfd = pidfd_open_pid(pid);
        if (pidfd < 0) {
                if (pidfd != -ESRCH && k->err == 0)
                        k->err = -pidfd;
                return;
        }
        if (session_of(pid) != k->leader)
                return;
        int r = pidfd_kill(pidfd, k->sig);
        if (r < 0 && r != -ESRCH && k->err == 0)
                k->err = -r;
}

json_object *zd_session_pids(pid_t sid) {
        json_object *pids = json_object_new_array();

        for_each_in_session(sid, add_pid, pids);
        return pids;
}

int zd_session_kill(pid_t leader, int sig) {
        struct kill_ctx k = { .leader = leader, .sig = sig };

        for_each_in_session(leader, kill_pid, &k);
        return -k.err;
}
