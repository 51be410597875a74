/* SPDX-License-Identifier: MIT */
/*
 * The task lifecycle (Create = Spawn with hold, Start, State, Pids, Kill, Wait, Delete, CloseIO,
 * Events) through libzygote's C API, against a real zygoted that this test starts.
 *
 *   test-lifecycle auto   the daemon chooses the tiers (inherit on a kernel without
 *                         SECCOMP_CLONE_FILTER, clone with it)
 *   test-lifecycle load   the daemon is forced to the load tier (the fallback path)
 *   test-lifecycle session  Kill with all against a session member in its own process group
 *                         (its own ctest entry: it fails while the daemon signals the group)
 *
 * The daemon is socket-activated by the test: the test binds and listens on the socket and hands
 * it over as LISTEN_FDS, so the socket accepts connections before the daemon even runs and no
 * readiness polling is needed. Environment (set by ctest): ZYGOTE_DAEMON (zygoted),
 * ZYGOTE_REF_HELPER (zygote-ref, also read by the daemon), ZYGOTE_PROFILES (the profiles dir).
 *
 * Workloads read a pipe the test holds (cat, sh -c 'read ...'), so that nothing outlives the
 * test even when an assertion fails half-way. Every blocking wait has a deadline, which is a
 * failure, never a way to synchronise.
 *
 * Needs root (exit 77 otherwise): the other-uid test runs a caller as uid 65534 through setpriv.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pidfd-util.h"
#include "zygote.h"

#define DEADLINE_MS 30000
#define NOBODY 65534

static struct {
        const char *tier;       /* "auto" or "load" */
        char dir[64];
        char socket[96];
        char log[128];
        char daemon_exe[PATH_MAX];
        char helper_exe[PATH_MAX];
        char self_exe[PATH_MAX];
        pid_t daemon_pid;
        int daemon_pidfd;
} g = { .daemon_pidfd = -1 };

/* ---- helpers ------------------------------------------------------------------------------- */

static double now_realtime(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool fd_readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        return r > 0;
}

static zy_conn *conn(void) {
        zy_conn *c = NULL;

        assert_int_equal(zy_connect(g.socket, &c), 0);
        return c;
}

static void pipe_cloexec(int p[2]) {
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
}

static void close_fd(int *fd) {
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

/* Spawns argv held (created) with stdin from in_fd and stdout to out_fd (-1: /dev/null). */
static int spawn_held(zy_conn *c, const char *id, const char *const *argv, int in_fd, int out_fd,
                      struct zy_spawn_result **ret) {
        static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
        struct zy_fd_map fds[3];
        size_t n = 0;
        struct zy_spawn_opts o = { .argv = argv, .env = env, .id = id, .hold = true };

        if (in_fd >= 0)
                fds[n++] = (struct zy_fd_map) { .fd = in_fd, .target = 0 };
        if (out_fd >= 0)
                fds[n++] = (struct zy_fd_map) { .fd = out_fd, .target = 1 };
        fds[n++] = (struct zy_fd_map) { .fd = 2, .target = 2 };
        o.fds = fds;
        o.n_fds = n;
        return zy_spawn(c, &o, ret);
}

/* spawn_held on new pipes: in (NULL: none) becomes the task's stdin, out (NULL: none) its stdout.
 * The task's ends are closed here; ours stay open in in[1] and out[0]. */
static void spawn_piped(zy_conn *c, const char *id, const char *const *argv, int in[2], int out[2],
                        struct zy_spawn_result **ret) {
        if (in)
                pipe_cloexec(in);
        if (out)
                pipe_cloexec(out);
        assert_int_equal(spawn_held(c, id, argv, in ? in[0] : -1, out ? out[1] : -1, ret), 0);
        if (in)
                close_fd(&in[0]);
        if (out)
                close_fd(&out[1]);
}

/* Wait with a deadline: a task that never exits fails the test instead of hanging it. */
static int wait_task(zy_conn *c, const char *id, struct zy_task_info **ret) {
        int r = zy_wait_send(c, id);

        if (r < 0)
                return r;
        if (!zy_conn_has_input(c) && !fd_readable(zy_conn_get_fd(c), DEADLINE_MS))
                fail_msg("Wait(%s): no reply within %d ms", id, DEADLINE_MS);
        return zy_wait_read(c, ret);
}

static struct zy_task_info *state_of(zy_conn *c, const char *id) {
        struct zy_task_info *t = NULL;

        assert_int_equal(zy_state(c, id, &t), 0);
        assert_string_equal(t->id, id);
        return t;
}

/* A field of /proc/PID/status ("Seccomp", "NoNewPrivs"), or "" when absent. */
static void proc_status_field(pid_t pid, const char *key, char *buf, size_t size) {
        char path[64], line[512];
        size_t klen = strlen(key);
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        buf[0] = 0;
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        const char *v = line + klen + 1;
                        v += strspn(v, " \t");
                        snprintf(buf, size, "%.*s", (int) strcspn(v, "\n"), v);
                        break;
                }
        fclose(f);
}

static void exe_of(pid_t pid, char *buf, size_t size) {
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
        n = readlink(path, buf, size - 1);
        assert_true(n > 0);
        buf[n] = 0;
}

/* The session of a process from /proc/PID/stat, -1 if it is gone. */
static pid_t session_of(pid_t pid) {
        char path[64], buf[512];
        char *rp;
        int sid = -1, ppid, pgrp;
        char st;
        size_t n;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        rp = strrchr(buf, ')'); /* comm may hold spaces and ')' */
        if (!rp || sscanf(rp + 1, " %c %d %d %d", &st, &ppid, &pgrp, &sid) != 4)
                return -1;
        return sid;
}

static void write_all(int fd, const char *s) {
        assert_int_equal(write(fd, s, strlen(s)), (ssize_t) strlen(s));
}

/* Reads from fd until want has arrived (or EOF/deadline) into buf; returns the length. */
static size_t read_until(int fd, const char *want, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = 0;
        while (len + 1 < size && !strstr(buf, want)) {
                ssize_t n;

                if (!fd_readable(fd, DEADLINE_MS))
                        fail_msg("no '%s' on the task's output within %d ms (got '%s')", want, DEADLINE_MS, buf);
                n = read(fd, buf + len, size - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t) n;
                buf[len] = 0;
        }
        return len;
}

static void expect_no_such_task(zy_conn *c, int r) {
        assert_int_equal(r, -ESRCH);
        assert_non_null(zy_conn_error_name(c));
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.NoSuchTask");
}

/* The binary a held worker still runs: the reference helper in the inherit tier (it forked the
 * worker), zygoted itself in the clone and load tiers. */
static const char *held_exe(const char *tier) {
        return strcmp(tier, "inherit") == 0 ? g.helper_exe : g.daemon_exe;
}

static void check_tier(const struct zy_spawn_result *sr) {
        if (strcmp(g.tier, "load") == 0)
                assert_string_equal(sr->tier, "load");
}

/* ---- tests --------------------------------------------------------------------------------- */

/* Create -> created (sandboxed, not exec'd) -> Start -> running -> Kill -> Wait -> stopped ->
 * Delete -> NoSuchTask, with the state checks of each step. */
static void test_full_lifecycle(void **state) {
        static const char *const argv[] = { "cat", NULL };
        const char *id = "lc-full";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL, *d = NULL;
        int in[2], out[2];
        char buf[PATH_MAX], cat_exe[PATH_MAX];
        pid_t *pids = NULL;
        size_t n_pids = 0;
        double t0 = now_realtime();
        zy_conn *c = conn();

        spawn_piped(c, id, argv, in, out, &sr);
        assert_string_equal(sr->id, id);
        assert_true(sr->pid > 0);
        check_tier(sr);

        /* Created: pid set, no status yet. */
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_CREATED);
        assert_string_equal(t->state_name, "created");
        assert_int_equal(t->pid, sr->pid);
        assert_int_equal(t->exit_code, -1);
        assert_int_equal(t->signal, 0);
        assert_true(t->created_at >= t0 - 1 && t->created_at <= now_realtime() + 1);
        assert_true(t->started_at == 0 && t->exited_at == 0);
        assert_int_equal(zy_task_info_status(t), -1);
        assert_string_equal(t->argv[0], "cat");
        assert_null(t->argv[1]);
        t = zy_task_info_free(t);

        /* Already sandboxed while held: the filter is on, and the command is not exec'd yet. */
        proc_status_field(sr->pid, "Seccomp", buf, sizeof(buf));
        assert_string_equal(buf, "2");
        proc_status_field(sr->pid, "NoNewPrivs", buf, sizeof(buf));
        assert_string_equal(buf, "1");
        exe_of(sr->pid, buf, sizeof(buf));
        assert_string_equal(buf, held_exe(sr->tier));

        /* A held worker is its own session: Pids lists it. */
        assert_int_equal(zy_pids(c, id, &pids, &n_pids), 0);
        assert_int_equal(n_pids, 1);
        assert_int_equal(pids[0], sr->pid);
        free(pids);

        assert_int_equal(zy_close_io(c, id), 0);

        /* Start: now the command runs, in the same process. */
        assert_int_equal(zy_start(c, id), 0);
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_RUNNING);
        assert_int_equal(t->pid, sr->pid);
        assert_true(t->started_at >= t->created_at);
        assert_true(t->exited_at == 0);
        t = zy_task_info_free(t);
        assert_non_null(realpath("/usr/bin/cat", cat_exe));
        exe_of(sr->pid, buf, sizeof(buf));
        assert_string_equal(buf, cat_exe);
        proc_status_field(sr->pid, "Seccomp", buf, sizeof(buf));
        assert_string_equal(buf, "2");
        write_all(in[1], "ping\n");
        read_until(out[0], "ping\n", buf, sizeof(buf));
        assert_string_equal(buf, "ping\n");

        /* Start twice, Delete while running: InvalidState. */
        assert_int_equal(zy_start(c, id), -EBUSY);
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.InvalidState");
        assert_int_equal(zy_delete(c, id, NULL), -EBUSY);
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.InvalidState");
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_RUNNING);
        t = zy_task_info_free(t);

        /* Kill -> Wait -> stopped with the signal. */
        assert_int_equal(zy_kill(c, id, SIGTERM, false), 0);
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(t->state, ZY_TASK_STOPPED);
        assert_int_equal(t->signal, SIGTERM);
        assert_int_equal(t->exit_code, -1);
        assert_int_equal(zy_task_info_status(t), 128 + SIGTERM);
        assert_true(t->exited_at >= t->started_at && t->started_at >= t->created_at);
        assert_true(t->exited_at <= now_realtime() + 1);
        /* The status is kept: State says the same until Delete. */
        d = state_of(c, id);
        assert_int_equal(d->state, ZY_TASK_STOPPED);
        assert_int_equal(d->signal, SIGTERM);
        assert_true(d->exited_at == t->exited_at);
        d = zy_task_info_free(d);
        /* A stopped task cannot be signalled. */
        assert_int_equal(zy_kill(c, id, SIGKILL, false), -EBUSY);

        /* Delete: returns the last state, then the task is gone. */
        assert_int_equal(zy_delete(c, id, &d), 0);
        assert_int_equal(d->state, ZY_TASK_STOPPED);
        assert_int_equal(d->signal, SIGTERM);
        d = zy_task_info_free(d);
        t = zy_task_info_free(t);
        expect_no_such_task(c, zy_state(c, id, &t));
        expect_no_such_task(c, zy_delete(c, id, NULL));
        expect_no_such_task(c, wait_task(c, id, &t));
        expect_no_such_task(c, zy_close_io(c, id));
        expect_no_such_task(c, zy_kill(c, id, SIGTERM, false));
        assert_null(t);

        close_fd(&in[1]);
        close_fd(&out[0]);
        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* A created task whose command would print "ran" if it ever started; our end of its stdout in
 * *ret_out. */
static const char *const echo_ran[] = { "sh", "-c", "echo ran", NULL };

static void spawn_echo_ran(zy_conn *c, const char *id, int *ret_out, struct zy_spawn_result **ret) {
        int out[2];

        spawn_piped(c, id, echo_ran, NULL, out, ret);
        *ret_out = out[0];
}

/* The task's stdout ended without "ran": it went without ever exec'ing. Closes out. */
static void assert_never_ran(int *out) {
        char buf[64];

        assert_int_equal(read_until(*out, "ran", buf, sizeof(buf)), 0);
        close_fd(out);
}

/* Delete of a created task kills it: the process goes, the command never runs. */
static void test_delete_created_kills(void **state) {
        const char *id = "lc-delete-created";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int out;
        zy_conn *c = conn();

        spawn_echo_ran(c, id, &out, &sr);
        assert_true(sr->pidfd >= 0);
        assert_false(fd_readable(sr->pidfd, 0));

        assert_int_equal(zy_delete(c, id, &t), 0);
        assert_int_equal(t->state, ZY_TASK_CREATED);
        t = zy_task_info_free(t);
        expect_no_such_task(c, zy_state(c, id, &t));
        /* The worker exits (its pidfd turns readable) without having exec'd: EOF, no output. */
        assert_true(fd_readable(sr->pidfd, DEADLINE_MS));
        assert_never_ran(&out);
        /* The id is free again. */
        zy_spawn_result_free(sr);
        sr = NULL;
        assert_int_equal(spawn_held(c, id, echo_ran, -1, -1, &sr), 0);
        assert_int_equal(zy_delete(c, id, NULL), 0);

        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* Kill of a created task: it stops with the signal and never starts. */
static void test_kill_created(void **state) {
        const char *id = "lc-kill-created";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int out;
        zy_conn *c = conn();

        spawn_echo_ran(c, id, &out, &sr);
        assert_int_equal(zy_kill(c, id, SIGTERM, false), 0);
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(t->state, ZY_TASK_STOPPED);
        assert_int_equal(t->signal, SIGTERM);
        assert_int_equal(zy_task_info_status(t), 128 + SIGTERM);
        assert_true(t->started_at == 0);
        t = zy_task_info_free(t);
        assert_never_ran(&out);
        /* Too late to start. */
        assert_int_equal(zy_start(c, id), -EBUSY);
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.InvalidState");
        assert_int_equal(zy_delete(c, id, NULL), 0);

        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* Caller-chosen ids are unique while the task exists, stopped or not; daemon-chosen ids too. */
static void test_ids(void **state) {
        static const char *const argv[] = { "true", NULL };
        const char *id = "lc-dup";
        struct zy_spawn_result *a = NULL, *b = NULL, *x = NULL, *y = NULL;
        struct zy_task_info *t = NULL;
        zy_conn *c = conn();

        assert_int_equal(spawn_held(c, id, argv, -1, -1, &a), 0);
        assert_int_equal(spawn_held(c, id, argv, -1, -1, &b), -EEXIST);
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.TaskExists");
        assert_null(b);
        /* The refused Spawn did not touch the first task. */
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_CREATED);
        assert_int_equal(t->pid, a->pid);
        t = zy_task_info_free(t);

        /* Stopped but not deleted: the id is still taken (its status is still readable). */
        assert_int_equal(zy_start(c, id), 0);
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(t->exit_code, 0);
        t = zy_task_info_free(t);
        assert_int_equal(spawn_held(c, id, argv, -1, -1, &b), -EEXIST);
        assert_int_equal(zy_delete(c, id, NULL), 0);
        /* Deleted: free again. */
        assert_int_equal(spawn_held(c, id, argv, -1, -1, &b), 0);
        assert_int_equal(zy_delete(c, id, NULL), 0);

        /* Chosen by the daemon: present and distinct. */
        assert_int_equal(spawn_held(c, NULL, argv, -1, -1, &x), 0);
        assert_int_equal(spawn_held(c, NULL, argv, -1, -1, &y), 0);
        assert_true(x->id[0] && y->id[0]);
        assert_string_not_equal(x->id, y->id);
        assert_int_equal(zy_delete(c, x->id, NULL), 0);
        assert_int_equal(zy_delete(c, y->id, NULL), 0);

        zy_spawn_result_free(a);
        zy_spawn_result_free(b);
        zy_spawn_result_free(x);
        zy_spawn_result_free(y);
        zy_conn_free(c);
}

/* Events: create, start, exit, delete, in this order, with timestamps in order and within the
 * test's wall-clock window, and the exit's signal. */
static void test_events(void **state) {
        static const char *const argv[] = { "cat", NULL };
        static const enum zy_event_type want[] = { ZY_EVENT_CREATE, ZY_EVENT_START, ZY_EVENT_EXIT, ZY_EVENT_DELETE };
        static const char *const want_names[] = { "create", "start", "exit", "delete" };
        const char *id = "lc-events";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int in[2];
        double t0, t1, last = 0;
        size_t seen = 0;
        zy_conn *e = conn(), *c;

        t0 = now_realtime();
        assert_int_equal(zy_events_subscribe(e), 0);
        /* The subscription is read by the daemon before the create event exists: that event
         * comes one loop turn after Spawn (when the held worker reports), and the Events call
         * went out before Spawn did. */
        c = conn();
        spawn_piped(c, id, argv, in, NULL, &sr);
        assert_int_equal(zy_start(c, id), 0);
        assert_int_equal(zy_kill(c, id, SIGKILL, false), 0);
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(zy_delete(c, id, NULL), 0);
        t1 = now_realtime();

        while (seen < 4) {
                struct zy_event *ev = NULL;

                if (!zy_conn_has_input(e) && !fd_readable(zy_conn_get_fd(e), DEADLINE_MS))
                        fail_msg("event %zu (%s) did not arrive within %d ms", seen, want_names[seen], DEADLINE_MS);
                assert_int_equal(zy_events_next(e, &ev), 0);
                assert_non_null(ev);
                if (strcmp(ev->id, id) != 0) { /* another test's task (none run in parallel) */
                        zy_event_free(ev);
                        continue;
                }
                assert_int_equal(ev->type, want[seen]);
                assert_string_equal(ev->type_name, want_names[seen]);
                assert_int_equal(ev->pid, sr->pid);
                assert_true(ev->time >= last);
                assert_true(ev->time >= t0 - 1 && ev->time <= t1 + 1);
                last = ev->time;
                if (ev->type == ZY_EVENT_EXIT || ev->type == ZY_EVENT_DELETE)
                        assert_int_equal(ev->signal, SIGKILL);
                else
                        assert_int_equal(ev->signal, 0);
                if (ev->type == ZY_EVENT_EXIT)
                        assert_true(ev->time == t->exited_at || ev->time >= t->exited_at);
                zy_event_free(ev);
                seen++;
        }
        /* Nothing more about this task. */
        assert_false(zy_conn_has_input(e) || fd_readable(zy_conn_get_fd(e), 0));

        zy_task_info_free(t);
        close_fd(&in[1]);
        zy_spawn_result_free(sr);
        zy_conn_free(c);
        zy_conn_free(e);
}

/* The exit status survives the client: a task that exits while nobody is connected, and a Wait
 * whose connection went away, are both answered to a new connection. */
static void test_wait_after_disconnect(void **state) {
        static const char *const argv[] = { "sh", "-c", "read x; exit 7", NULL };
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int in[2], pidfd;
        zy_conn *a, *b;

        /* 1. Exit with no client connected. */
        a = conn();
        spawn_piped(a, "lc-orphan", argv, in, NULL, &sr);
        assert_int_equal(zy_start(a, "lc-orphan"), 0);
        pidfd = sr->pidfd;
        sr->pidfd = -1;
        zy_spawn_result_free(sr);
        zy_conn_free(a);
        close_fd(&in[1]); /* EOF: read returns, the shell exits 7 */
        assert_true(fd_readable(pidfd, DEADLINE_MS));
        close(pidfd);
        b = conn();
        assert_int_equal(wait_task(b, "lc-orphan", &t), 0);
        assert_int_equal(t->state, ZY_TASK_STOPPED);
        assert_int_equal(t->exit_code, 7);
        assert_int_equal(t->signal, 0);
        assert_int_equal(zy_task_info_status(t), 7);
        t = zy_task_info_free(t);
        zy_conn_free(b);
        /* And again from yet another connection, until Delete. */
        b = conn();
        t = state_of(b, "lc-orphan");
        assert_int_equal(t->exit_code, 7);
        t = zy_task_info_free(t);
        assert_int_equal(zy_delete(b, "lc-orphan", NULL), 0);
        zy_conn_free(b);

        /* 2. A Wait in flight whose connection closes; a second connection waits instead. */
        a = conn();
        spawn_piped(a, "lc-rewait", argv, in, NULL, &sr);
        assert_int_equal(zy_start(a, "lc-rewait"), 0);
        assert_int_equal(zy_wait_send(a, "lc-rewait"), 0);
        zy_conn_free(a);
        b = conn();
        t = state_of(b, "lc-rewait");
        assert_int_equal(t->state, ZY_TASK_RUNNING);
        t = zy_task_info_free(t);
        assert_int_equal(zy_wait_send(b, "lc-rewait"), 0);
        assert_false(zy_conn_has_input(b) || fd_readable(zy_conn_get_fd(b), 0)); /* still running */
        close_fd(&in[1]);
        assert_true(fd_readable(zy_conn_get_fd(b), DEADLINE_MS));
        assert_int_equal(zy_wait_read(b, &t), 0);
        assert_int_equal(t->exit_code, 7);
        t = zy_task_info_free(t);
        assert_int_equal(zy_delete(b, "lc-rewait", NULL), 0);
        zy_spawn_result_free(sr);
        zy_conn_free(b);
}

/* Pids lists every process of the task's session; Kill with all reaches every one of them. */
static void test_pids_kill_all(void **state) {
        /* Two children, then "ready" once both are forked (dash forks at '&'). A background
         * job of a non-interactive shell gets /dev/null as stdin (and "<&0" would copy that):
         * the children read the test's pipe through fd 3. */
        static const char *const argv[] = { "sh", "-c", "exec 3<&0; cat <&3 & cat <&3 & echo ready; wait", NULL };
        const char *id = "lc-pids";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int in[2], out[2], pidfds[8];
        pid_t *pids = NULL;
        size_t n = 0;
        char buf[64];
        bool leader = false;
        zy_conn *c = conn();

        spawn_piped(c, id, argv, in, out, &sr);
        assert_int_equal(zy_start(c, id), 0);
        read_until(out[0], "ready\n", buf, sizeof(buf));
        assert_string_equal(buf, "ready\n");

        assert_int_equal(zy_pids(c, id, &pids, &n), 0);
        assert_int_equal(n, 3); /* the shell and its two children */
        for (size_t i = 0; i < n; i++) {
                leader |= pids[i] == sr->pid;
                assert_int_equal(session_of(pids[i]), sr->pid);
                pidfds[i] = pidfd_open_pid(pids[i]);
                assert_true(pidfds[i] >= 0);
        }
        assert_true(leader);

        assert_int_equal(zy_kill(c, id, SIGKILL, true), 0);
        for (size_t i = 0; i < n; i++) {
                assert_true(fd_readable(pidfds[i], DEADLINE_MS));
                close(pidfds[i]);
        }
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(t->signal, SIGKILL);
        t = zy_task_info_free(t);
        free(pids);
        pids = NULL;
        /* Stopped: no processes to list any more. */
        assert_int_equal(zy_pids(c, id, &pids, &n), 0);
        assert_int_equal(n, 0);
        free(pids);
        assert_int_equal(zy_delete(c, id, NULL), 0);

        close_fd(&in[1]);
        close_fd(&out[0]);
        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* Kill with all reaches every process of the session, as Pids lists them and the protocol says
 * ("every process in the task's session"), also one that moved to a process group of its own
 * (as a shell with job control puts each job). Run as its own ctest entry (session). */
static void test_kill_all_session(void **state) {
        /* The child: this binary in newpgrp mode (setpgid, "ready", read stdin to EOF). */
        static const char *argv[] = { "sh", "-c", "exec 3<&0; \"$0\" newpgrp <&3 & wait", NULL, NULL };
        const char *id = "lc-session";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int in[2], out[2], pidfds[2];
        pid_t *pids = NULL, child = 0;
        size_t n = 0;
        char buf[64];
        zy_conn *c = conn();

        argv[3] = g.self_exe;
        spawn_piped(c, id, argv, in, out, &sr);
        assert_int_equal(zy_start(c, id), 0);
        read_until(out[0], "ready\n", buf, sizeof(buf));
        assert_string_equal(buf, "ready\n");

        assert_int_equal(zy_pids(c, id, &pids, &n), 0);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(session_of(pids[i]), sr->pid);
                if (pids[i] != sr->pid)
                        child = pids[i];
                pidfds[i] = pidfd_open_pid(pids[i]);
                assert_true(pidfds[i] >= 0);
        }
        assert_int_equal(getpgid(child), child); /* its own group, same session */

        assert_int_equal(zy_kill(c, id, SIGKILL, true), 0);
        for (size_t i = 0; i < n; i++)
                if (!fd_readable(pidfds[i], DEADLINE_MS)) {
                        close_fd(&in[1]); /* lets the survivor go (EOF) */
                        fail_msg("Kill all: pid %d of the task's session (group %d) survived", (int) pids[i],
                                 (int) getpgid(pids[i]));
                }
        for (size_t i = 0; i < n; i++)
                close(pidfds[i]);
        assert_int_equal(wait_task(c, id, &t), 0);
        assert_int_equal(t->signal, SIGKILL);
        zy_task_info_free(t);
        assert_int_equal(zy_delete(c, id, NULL), 0);

        free(pids);
        close_fd(&in[1]);
        close_fd(&out[0]);
        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* The child of test_kill_all_session. */
static int newpgrp_main(void) {
        char buf[256];

        if (setpgid(0, 0) < 0 || write(STDOUT_FILENO, "ready\n", 6) != 6)
                return 1;
        while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
                ;
        return 0;
}

/* Another uid cannot see, start, signal, wait for or delete the task (run under setpriv). */
static void run_other_uid_check(const char *id) {
        char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", g.self_exe, "other-uid",
                         g.socket, (char *) id, NULL };
        int status;
        pid_t pid;

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execvp(argv[0], argv);
                fprintf(stderr, "cannot run setpriv: %m\n");
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("the uid %d caller reached task %s (status 0x%x; see its stderr)", NOBODY, id, status);
}

static void test_other_uid(void **state) {
        static const char *const argv[] = { "cat", NULL };
        const char *id = "lc-private";
        struct zy_spawn_result *sr = NULL;
        struct zy_task_info *t = NULL;
        int in[2];
        zy_conn *c = conn();

        spawn_piped(c, id, argv, in, NULL, &sr);

        run_other_uid_check(id);
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_CREATED); /* not started, not killed, not deleted */
        t = zy_task_info_free(t);

        assert_int_equal(zy_start(c, id), 0);
        run_other_uid_check(id);
        t = state_of(c, id);
        assert_int_equal(t->state, ZY_TASK_RUNNING); /* not killed */
        t = zy_task_info_free(t);

        assert_int_equal(zy_kill(c, id, SIGTERM, false), 0);
        assert_int_equal(wait_task(c, id, &t), 0);
        t = zy_task_info_free(t);
        run_other_uid_check(id); /* a stopped one neither */
        assert_int_equal(zy_delete(c, id, NULL), 0);

        close_fd(&in[1]);
        zy_spawn_result_free(sr);
        zy_conn_free(c);
}

/* The other-uid side: every call about the task must say NoSuchTask. Exit 0 when so. */
static int other_uid_main(const char *socket_path, const char *id) {
        static const char *const names[] = { "State", "Start", "Kill", "Kill all", "Wait", "Pids", "CloseIO", "Delete" };
        struct zy_task_info *t = NULL;
        struct zy_task_list *l = NULL;
        pid_t *pids = NULL;
        size_t n;
        zy_conn *c = NULL;
        int r[8], bad = 0;

        if (getuid() != NOBODY) {
                fprintf(stderr, "other-uid: running as uid %u, not %d\n", (unsigned) getuid(), NOBODY);
                return 1;
        }
        if (zy_connect(socket_path, &c) < 0) {
                fprintf(stderr, "other-uid: cannot connect to %s\n", socket_path);
                return 1;
        }
        r[0] = zy_state(c, id, &t);
        r[1] = zy_start(c, id);
        r[2] = zy_kill(c, id, SIGKILL, false);
        r[3] = zy_kill(c, id, SIGKILL, true);
        r[4] = zy_wait(c, id, &t);
        r[5] = zy_pids(c, id, &pids, &n);
        r[6] = zy_close_io(c, id);
        r[7] = zy_delete(c, id, NULL);
        for (size_t i = 0; i < 8; i++)
                if (r[i] != -ESRCH) {
                        fprintf(stderr, "other-uid: %s(%s) gave %d (%s), not NoSuchTask\n", names[i], id, r[i],
                                r[i] < 0 ? strerror(-r[i]) : "success");
                        bad = 1;
                }
        if (zy_list(c, &l) < 0) {
                fprintf(stderr, "other-uid: List failed\n");
                bad = 1;
        } else {
                for (size_t i = 0; i < l->n_tasks; i++)
                        if (strcmp(l->tasks[i]->id, id) == 0) {
                                fprintf(stderr, "other-uid: List shows %s\n", id);
                                bad = 1;
                        }
                zy_task_list_free(l);
        }
        zy_task_info_free(t);
        free(pids);
        zy_conn_free(c);
        return bad;
}

/* ---- the daemon ---------------------------------------------------------------------------- */

static void print_daemon_log(void) {
        char buf[4096];
        ssize_t n;
        int fd = open(g.log, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        fprintf(stderr, "----- zygoted's log -----\n");
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                fwrite(buf, 1, (size_t) n, stderr);
        close(fd);
}

static int start_daemon(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd, logfd;
        pid_t pid;

        snprintf(g.dir, sizeof(g.dir), "/tmp/zylc-XXXXXX");
        if (!mkdtemp(g.dir) || chmod(g.dir, 0755) < 0)
                return -errno;
        snprintf(g.socket, sizeof(g.socket), "%s/zygoted.sock", g.dir);
        snprintf(g.log, sizeof(g.log), "%s/zygoted.log", g.dir);
        /* g.socket is short (/tmp/zylc-XXXXXX/zygoted.sock) and fits sun_path. */
        memcpy(sa.sun_path, g.socket, strlen(g.socket) + 1);

        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(g.socket, 0666) < 0 ||
            listen(lfd, 64) < 0)
                return -errno;
        logfd = open(g.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (logfd < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char pidbuf[32];
                const char *profiles = getenv("ZYGOTE_PROFILES");
                char *argv[] = { g.daemon_exe, "--socket", g.socket, "--profiles", (char *) profiles, "--tier",
                                 (char *) g.tier, NULL };

                /* Socket activation: the socket as fd 3, for this very process. dup2() onto
                 * itself would keep O_CLOEXEC: then clear it by hand. */
                if (lfd == 3 ? fcntl(lfd, F_SETFD, 0) < 0 : dup2(lfd, 3) < 0)
                        _exit(127);
                if (dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
                        _exit(127);
                snprintf(pidbuf, sizeof(pidbuf), "%d", (int) getpid());
                setenv("LISTEN_FDS", "1", 1);
                setenv("LISTEN_PID", pidbuf, 1);
                unsetenv("LISTEN_FDNAMES");
                unsetenv("NOTIFY_SOCKET");
                unsetenv("ZYGOTE_SOCKET");
                execv(argv[0], argv);
                _exit(127);
        }
        close(lfd);
        close(logfd);
        g.daemon_pid = pid;
        g.daemon_pidfd = pidfd_open_pid(pid);
        return g.daemon_pidfd < 0 ? g.daemon_pidfd : 0;
}

static int setup_all(void **state) {
        const char *daemon = getenv("ZYGOTE_DAEMON"), *helper = getenv("ZYGOTE_REF_HELPER");
        int r;

        if (!daemon || !helper || !getenv("ZYGOTE_PROFILES") || !realpath(daemon, g.daemon_exe) ||
            !realpath(helper, g.helper_exe)) {
                fprintf(stderr, "set ZYGOTE_DAEMON, ZYGOTE_REF_HELPER and ZYGOTE_PROFILES (ctest does)\n");
                return -1;
        }
        if (!realpath("/proc/self/exe", g.self_exe))
                return -1;
        r = start_daemon();
        if (r < 0) {
                fprintf(stderr, "cannot start zygoted: %s\n", strerror(-r));
                return -1;
        }
        return 0;
}

static int teardown_all(void **state) {
        int status = 0, bad = 0;
        char path[160];

        if (g.daemon_pidfd >= 0) {
                /* The daemon must have survived every test, and stop cleanly. */
                if (fd_readable(g.daemon_pidfd, 0)) {
                        fprintf(stderr, "zygoted died during the tests\n");
                        bad = 1;
                } else
                        (void) pidfd_kill(g.daemon_pidfd, SIGTERM);
                if (waitpid(g.daemon_pid, &status, 0) == g.daemon_pid && (!WIFEXITED(status) || WEXITSTATUS(status)))
                        bad = 1;
                close(g.daemon_pidfd);
        }
        if (bad)
                print_daemon_log();
        snprintf(path, sizeof(path), "%s", g.socket);
        (void) unlink(path);
        (void) unlink(g.log);
        (void) rmdir(g.dir);
        return bad ? -1 : 0;
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_full_lifecycle),
                cmocka_unit_test(test_delete_created_kills),
                cmocka_unit_test(test_kill_created),
                cmocka_unit_test(test_ids),
                cmocka_unit_test(test_events),
                cmocka_unit_test(test_wait_after_disconnect),
                cmocka_unit_test(test_pids_kill_all),
                cmocka_unit_test(test_other_uid),
        };

        const struct CMUnitTest session[] = {
                cmocka_unit_test(test_kill_all_session),
        };
        bool is_session;

        if (argc == 4 && strcmp(argv[1], "other-uid") == 0)
                return other_uid_main(argv[2], argv[3]);
        if (argc == 2 && strcmp(argv[1], "newpgrp") == 0)
                return newpgrp_main();
        if (argc != 2 || (strcmp(argv[1], "auto") != 0 && strcmp(argv[1], "load") != 0 &&
                          strcmp(argv[1], "session") != 0)) {
                fprintf(stderr, "usage: test-lifecycle auto|load|session\n");
                return 2;
        }
        is_session = strcmp(argv[1], "session") == 0;
        if (geteuid() != 0) {
                fprintf(stderr, "skip: needs root (starts zygoted and a caller as uid %d through setpriv)\n", NOBODY);
                return 77;
        }
        if (access("/usr/bin/setpriv", X_OK) < 0) {
                fprintf(stderr, "skip: needs setpriv (util-linux) for the other-uid caller\n");
                return 77;
        }
        g.tier = is_session ? "auto" : argv[1];
        if (is_session)
                return cmocka_run_group_tests_name("session", session, setup_all, teardown_all);
        return cmocka_run_group_tests_name(g.tier, tests, setup_all, teardown_all);
}
