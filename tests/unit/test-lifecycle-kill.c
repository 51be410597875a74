/* SPDX-License-Identifier: MIT */
/*
 * The task lifecycle against a real zygoted (lifecycle-daemon.h), continued: Pids and Kill with
 * all (in the session mode, against a session member in a process group of its own), and what
 * another uid can do to a task (nothing: it runs this binary as uid 65534 through setpriv).
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
        char *argv[] = { "setpriv",        "--reuid=65534", "--regid=65534",
                         "--clear-groups", g.self_exe,      "other-uid",
                         g.socket,         (char *) id,     NULL };
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
        static const char *const names[] = {
                "State", "Start", "Kill", "Kill all", "Wait", "Pids", "CloseIO", "Delete"
        };
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

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pids_kill_all),
                cmocka_unit_test(test_other_uid),
        };
        const struct CMUnitTest session[] = {
                cmocka_unit_test(test_kill_all_session),
        };

        if (argc == 4 && strcmp(argv[1], "other-uid") == 0)
                return other_uid_main(argv[2], argv[3]);
        if (argc == 2 && strcmp(argv[1], "newpgrp") == 0)
                return newpgrp_main();
        return lc_run("test-lifecycle-kill", argc, argv, tests, ELEMENTSOF(tests), session, ELEMENTSOF(session));
}
