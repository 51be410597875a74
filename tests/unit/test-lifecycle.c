/* SPDX-License-Identifier: MIT */
/*
 * The task lifecycle (Create = Spawn with hold, Start, State, Pids, Kill, Wait, Delete, CloseIO,
 * Events) through libzygote's C API, against a real zygoted that this test starts.
 *
 *   test-lifecycle auto   the daemon chooses the tiers (inherit on a kernel without
 *                         SECCOMP_CLONE_FILTER, clone with it)
 *   test-lifecycle load   the daemon is forced to the load tier (the fallback path)
 *   test-lifecycle-kill session  Kill with all against a session member in its own process
 *                         group (its own ctest entry: it fails while the daemon signals the group)
 *
 * This file holds create, start, kill, wait, delete and events; test-lifecycle-kill.c holds Pids,
 * Kill with all and another uid's calls; lifecycle-daemon.c starts the daemon for both.
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

#include "lifecycle-daemon.h"

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

/* A created task whose command would print "ran" if it ever started, on a connection of its own. */
static const char *const echo_ran[] = { "sh", "-c", "echo ran", NULL };

struct created {
        zy_conn *c;
        struct zy_spawn_result *sr;
        int out; /* our end of its stdout */
};

static void spawn_echo_ran(const char *id, struct created *e) {
        int out[2];

        e->c = conn();
        e->sr = NULL;
        spawn_piped(e->c, id, echo_ran, NULL, out, &e->sr);
        e->out = out[0];
}

static void created_done(struct created *e) {
        zy_spawn_result_free(e->sr);
        zy_conn_free(e->c);
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
        struct zy_task_info *t = NULL;
        struct created e;

        spawn_echo_ran(id, &e);
        assert_true(e.sr->pidfd >= 0);
        assert_false(fd_readable(e.sr->pidfd, 0));

        assert_int_equal(zy_delete(e.c, id, &t), 0);
        assert_int_equal(t->state, ZY_TASK_CREATED);
        t = zy_task_info_free(t);
        expect_no_such_task(e.c, zy_state(e.c, id, &t));
        /* The worker exits (its pidfd turns readable) without having exec'd: EOF, no output. */
        assert_true(fd_readable(e.sr->pidfd, DEADLINE_MS));
        assert_never_ran(&e.out);
        /* The id is free again. */
        zy_spawn_result_free(e.sr);
        e.sr = NULL;
        assert_int_equal(spawn_held(e.c, id, echo_ran, -1, -1, &e.sr), 0);
        assert_int_equal(zy_delete(e.c, id, NULL), 0);

        created_done(&e);
}

/* Kill of a created task: it stops with the signal and never starts. */
static void test_kill_created(void **state) {
        const char *id = "lc-kill-created";
        struct zy_task_info *t = NULL;
        struct created e;

        spawn_echo_ran(id, &e);
        assert_int_equal(zy_kill(e.c, id, SIGTERM, false), 0);
        assert_int_equal(wait_task(e.c, id, &t), 0);
        assert_int_equal(t->state, ZY_TASK_STOPPED);
        assert_int_equal(t->signal, SIGTERM);
        assert_int_equal(zy_task_info_status(t), 128 + SIGTERM);
        assert_true(t->started_at == 0);
        t = zy_task_info_free(t);
        assert_never_ran(&e.out);
        /* Too late to start. */
        assert_int_equal(zy_start(e.c, id), -EBUSY);
        assert_string_equal(zy_conn_error_name(e.c), "io.zygote.Launcher.InvalidState");
        assert_int_equal(zy_delete(e.c, id, NULL), 0);

        created_done(&e);
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

static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_lifecycle), cmocka_unit_test(test_delete_created_kills),
        cmocka_unit_test(test_kill_created),   cmocka_unit_test(test_ids),
        cmocka_unit_test(test_events),         cmocka_unit_test(test_wait_after_disconnect),
};

int main(int argc, char **argv) {
        return lc_run("test-lifecycle", argc, argv, tests, ELEMENTSOF(tests), NULL, 0);
}
