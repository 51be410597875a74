/* SPDX-License-Identifier: MIT */
/* The lifecycle tests' zygoted (socket-activated by the test) and their helpers; see test-lifecycle.c. */
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

struct lc_globals g = { .daemon_pidfd = -1 };

/* ---- helpers ------------------------------------------------------------------------------- */

double now_realtime(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

bool fd_readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        return r > 0;
}

zy_conn *conn(void) {
        zy_conn *c = NULL;

        assert_int_equal(zy_connect(g.socket, &c), 0);
        return c;
}

void pipe_cloexec(int p[2]) {
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
}

void close_fd(int *fd) {
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

/* Spawns argv held (created) with stdin from in_fd and stdout to out_fd (-1: /dev/null). */
int spawn_held(zy_conn *c, const char *id, const char *const *argv, int in_fd, int out_fd,
               struct zy_spawn_result **ret) {
        static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
        struct zy_fd_map fds[3];
        size_t n = 0;
        struct zy_spawn_opts o = { .argv = argv, .env = env, .id = id, .hold = true };

        if (in_fd >= 0)
                fds[n++] = (struct zy_fd_map){ .fd = in_fd, .target = 0 };
        if (out_fd >= 0)
                fds[n++] = (struct zy_fd_map){ .fd = out_fd, .target = 1 };
        fds[n++] = (struct zy_fd_map){ .fd = 2, .target = 2 };
        o.fds = fds;
        o.n_fds = n;
        return zy_spawn(c, &o, ret);
}

/* spawn_held on new pipes: in (NULL: none) becomes the task's stdin, out (NULL: none) its stdout.
 * The task's ends are closed here; ours stay open in in[1] and out[0]. */
void spawn_piped(zy_conn *c, const char *id, const char *const *argv, int in[2], int out[2],
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
int wait_task(zy_conn *c, const char *id, struct zy_task_info **ret) {
        int r = zy_wait_send(c, id);

        if (r < 0)
                return r;
        if (!zy_conn_has_input(c) && !fd_readable(zy_conn_get_fd(c), DEADLINE_MS))
                fail_msg("Wait(%s): no reply within %d ms", id, DEADLINE_MS);
        return zy_wait_read(c, ret);
}

struct zy_task_info *state_of(zy_conn *c, const char *id) {
        struct zy_task_info *t = NULL;

        assert_int_equal(zy_state(c, id, &t), 0);
        assert_string_equal(t->id, id);
        return t;
}

/* A field of /proc/PID/status ("Seccomp", "NoNewPrivs"), or "" when absent. */
void proc_status_field(pid_t pid, const char *key, char *buf, size_t size) {
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

void exe_of(pid_t pid, char *buf, size_t size) {
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
        n = readlink(path, buf, size - 1);
        assert_true(n > 0);
        buf[n] = 0;
}

/* The session of a process from /proc/PID/stat, -1 if it is gone. */
pid_t session_of(pid_t pid) {
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

void write_all(int fd, const char *s) {
        assert_int_equal(write(fd, s, strlen(s)), (ssize_t) strlen(s));
}

/* Reads from fd until want has arrived (or EOF/deadline) into buf; returns the length. */
size_t read_until(int fd, const char *want, char *buf, size_t size) {
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

void expect_no_such_task(zy_conn *c, int r) {
        assert_int_equal(r, -ESRCH);
        assert_non_null(zy_conn_error_name(c));
        assert_string_equal(zy_conn_error_name(c), "io.zygote.Launcher.NoSuchTask");
}

/* The binary a held worker still runs: the reference helper in the inherit tier (it forked the
 * worker), zygoted itself in the clone and load tiers. */
/* What a held worker still runs: the helper (inherit), or zygoted's sealed memfd copy of itself
 * (load, clone: daemon/main.c). */
const char *held_exe(const char *tier) {
        return strcmp(tier, "inherit") == 0 ? g.helper_exe : "/memfd:zygoted (deleted)";
}

void check_tier(const struct zy_spawn_result *sr) {
        if (strcmp(g.tier, "load") == 0)
                assert_string_equal(sr->tier, "load");
}

/* ---- the daemon ---------------------------------------------------------------------------- */

void print_daemon_log(void) {
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

int start_daemon(void) {
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
                char *argv[] = { g.daemon_exe,      "--socket", g.socket,        "--profiles",
                                 (char *) profiles, "--tier",   (char *) g.tier, NULL };

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

int setup_all(void **state) {
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

int teardown_all(void **state) {
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

int lc_run(const char *name, int argc, char **argv, const struct CMUnitTest *tests, size_t n_tests,
           const struct CMUnitTest *session, size_t n_session) {
        bool is_session = argc == 2 && session && strcmp(argv[1], "session") == 0;

        if (argc != 2 || (strcmp(argv[1], "auto") != 0 && strcmp(argv[1], "load") != 0 && !is_session)) {
                fprintf(stderr, "usage: %s auto|load%s\n", name, session ? "|session" : "");
                return 2;
        }
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
                return _cmocka_run_group_tests("session", session, n_session, setup_all, teardown_all);
        return _cmocka_run_group_tests(g.tier, tests, n_tests, setup_all, teardown_all);
}
