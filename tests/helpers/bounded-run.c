/* SPDX-License-Identifier: MIT */
/*
 * bounded-run: runs one test command with a time bound and fails it when it leaves processes
 * behind. Every ctest entry runs through it (tests/CMakeLists.txt, zy_add_test).
 *
 *   bounded-run [--timeout SECONDS] [--grace SECONDS] -- COMMAND [ARGS...]
 *
 * It makes itself a child subreaper, so that every process the test starts and orphans (a
 * daemon, its tasks, a pid namespace's init, a shim that double-forked) becomes its child
 * instead of init's. After the command exits it waits up to --grace seconds (default 5) for
 * those to end on their own; whatever is still running then is listed on stderr, killed, and
 * the test fails (exit 1) whatever its own status, a skip included. A command still running
 * after --timeout seconds (default 120) is killed with everything it started, and fails.
 * Otherwise the command's exit status is passed on (77, a skip, stays 77).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc-children.h"

#define MAX_LEFT 256

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The processes whose parent is us (orphans reparent here), at most max of them. */
static size_t children(pid_t *pids, size_t max) {
        return proc_children(getpid(), pids, max);
}

static void describe(pid_t pid) {
        char path[64], cmd[512];
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
        FILE *f = fopen(path, "re");
        size_t len = f ? fread(cmd, 1, sizeof(cmd) - 1, f) : 0;
        if (f)
                fclose(f);
        for (size_t i = 0; i + 1 < len; i++)
                if (!cmd[i])
                        cmd[i] = ' ';
        cmd[len] = 0;
        fprintf(stderr, "bounded-run:   pid %d: %s\n", (int) pid, len ? cmd : "(no command line)");
}

static void reap_all(pid_t main_pid, int *main_status, bool *main_done) {
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
                if (p == main_pid) {
                        *main_status = st;
                        *main_done = true;
                }
}

/* Waits for SIGCHLD until the deadline (blocked, so none is lost between checks). */
static void wait_chld(double deadline) {
        double left = deadline - now();
        if (left <= 0)
                return;
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        struct timespec ts = { .tv_sec = (time_t) left, .tv_nsec = (long) ((left - (double) (time_t) left) * 1e9) };
        (void) sigtimedwait(&set, NULL, &ts);
}

/* Kills every child, then every process that reparents to us as its parent dies, until none. */
static size_t kill_left(bool report) {
        pid_t pids[MAX_LEFT];
        size_t total = 0, n;
        int dummy;
        bool done;
        for (int round = 0; round < 1000 && (n = children(pids, MAX_LEFT)) > 0; round++) {
                for (size_t i = 0; i < n; i++) {
                        if (report)
                                describe(pids[i]);
                        (void) kill(pids[i], SIGKILL);
                }
                total += n;
                double deadline = now() + 2;
                while (now() < deadline) {
                        reap_all(-1, &dummy, &done);
                        pid_t again[MAX_LEFT];
                        size_t m = children(again, MAX_LEFT);
                        bool same = false;
                        for (size_t i = 0; i < m && !same; i++)
                                for (size_t j = 0; j < n && !same; j++)
                                        same = again[i] == pids[j];
                        if (!same)
                                break;
                        wait_chld(now() + 0.05 < deadline ? now() + 0.05 : deadline);
                }
        }
        return total;
}

static int usage(FILE *f, int code) {
        fprintf(f, "usage: bounded-run [--timeout SECONDS] [--grace SECONDS] -- COMMAND [ARGS...]\n"
                   "Runs COMMAND; kills it after --timeout (default 120) and fails; fails when it leaves\n"
                   "processes running --grace seconds (default 5) after it exits (they are listed and killed).\n");
        return code;
}

int main(int argc, char **argv) {
        double timeout = 120, grace = 5;
        int i = 1;
        for (; i < argc; i++) {
                if (!strcmp(argv[i], "--")) {
                        i++;
                        break;
                }
                if (!strcmp(argv[i], "--help"))
                        return usage(stdout, 0);
                if (i + 1 < argc && !strcmp(argv[i], "--timeout"))
                        timeout = strtod(argv[++i], NULL);
                else if (i + 1 < argc && !strcmp(argv[i], "--grace"))
                        grace = strtod(argv[++i], NULL);
                else
                        return usage(stderr, 2);
        }
        if (i >= argc || timeout <= 0 || grace < 0)
                return usage(stderr, 2);

        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
                perror("bounded-run: PR_SET_CHILD_SUBREAPER");
                return 1;
        }
        sigset_t set, old;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigprocmask(SIG_BLOCK, &set, &old);

        double t0 = now();
        pid_t pid = fork();
        if (pid < 0) {
                perror("bounded-run: fork");
                return 1;
        }
        if (pid == 0) {
                sigprocmask(SIG_SETMASK, &old, NULL);
                execvp(argv[i], argv + i);
                fprintf(stderr, "bounded-run: %s: %s\n", argv[i], strerror(errno));
                _exit(127);
        }

        int status = 0;
        bool done = false;
        while (!done && now() - t0 < timeout) {
                reap_all(pid, &status, &done);
                if (!done)
                        wait_chld(t0 + timeout);
        }
        if (!done) {
                fprintf(stderr, "\nbounded-run: %s still running after %.0f s: killed with everything it started\n",
                        argv[i], timeout);
                (void) kill(pid, SIGKILL);
                kill_left(false);
                return 1;
        }

        /* What the test started and did not end: given the grace to end by itself. */
        double deadline = now() + grace;
        pid_t left[MAX_LEFT];
        size_t n;
        int dummy;
        bool d2;
        while ((n = children(left, MAX_LEFT)) > 0 && now() < deadline) {
                wait_chld(deadline);
                reap_all(-1, &dummy, &d2);
        }
        if (n > 0) {
                fprintf(stderr,
                        "\nbounded-run: %s left processes running %.0f s after it ended (killed; the test "
                        "fails):\n",
                        argv[i], grace);
                kill_left(true);
                return 1;
        }
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        fprintf(stderr, "bounded-run: %s killed by signal %d\n", argv[i], WTERMSIG(status));
        return 128 + WTERMSIG(status);
}
