/* SPDX-License-Identifier: MIT */
/*
 * zygote-shim: an example of the process that sits between a container manager and zygoted,
 * one per task, the way containerd's runc shim sits between containerd and runc
 * (docs/SHIM.md). It drives one task through the lifecycle with libzygote's public API only:
 *
 *   Create  Spawn with hold: the worker is fully sandboxed (ids, capabilities, seccomp filter)
 *           and blocks before execve; its stdio are fifos (--stdin/--stdout/--stderr, as
 *           containerd hands them to a shim) or the shim's own fds 0-2
 *   Start   at once, or with --hold when SIGUSR1 arrives (containerd's separate Start call)
 *   Kill    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR2 (and SIGUSR1 once started) are sent on
 *           with the Kill method, to every process of the task with --kill-all; a created
 *           task that is killed never runs
 *   Wait    on its own connection, so that Start and Kill can go out meanwhile
 *   Delete  once stopped; then the shim exits with the task's status
 *
 * The task lives in zygoted, not in the shim: a shim that dies leaves the task and its exit
 * status in the daemon until Delete, and `zygote-shim --attach ID` picks it up again (Wait,
 * signals, Delete), as a restarted containerd shim would.
 *
 * With --events-fd the shim writes the daemon's events of its task (create, start, exit,
 * delete) as JSON lines, as a containerd shim publishes /tasks/create ... /tasks/delete; with
 * --attach, first an "attach" line with the task's state as found.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "zygote.h"
/* header-only helpers shared with launchctl; nothing beyond zygote.h is linked */
#include "zygote-private.h"

/* The shim's own exit codes, besides the task's status (as launchctl run, see --help). */
enum {
        SHIM_EXIT_FAILURE = 1, /* the daemon refused, cannot be reached, or went away */
        SHIM_EXIT_USAGE = 2,
        SHIM_EXIT_SETUP = 125, /* the sandbox could not be set up */
};

#define MAX_ENV 1024

static const int handled_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

struct shim {
        const char *socket_path;
        const char *id; /* --id or --attach; after Create, the daemon's id */
        bool attach;
        bool hold;
        bool kill_all;
        const char *pid_file;
        int events_fd;    /* -1: no event output */
        zy_conn *ctl;     /* Spawn, State, Start, Kill, Delete */
        zy_conn *waitc;   /* the Wait in flight */
        zy_conn *evc;     /* the Events stream */
        int sfd;          /* signalfd of handled_signals */
        bool started;     /* Start went out (or the task already ran) */
        char *spawned_id; /* owned copy of the id the daemon chose */
};

static void help(void) {
        printf("Usage: zygote-shim [OPTIONS] [--] CMD [ARGS...]\n"
               "       zygote-shim [OPTIONS] --attach ID\n"
               "Run CMD as one zygote task through its lifecycle (create, start, wait, delete) the\n"
               "way a containerd shim drives its runtime, and exit with the task's status. With\n"
               "--attach, take over an existing task (after a shim crashed or was restarted).\n\n"
               "  --socket PATH     zygoted's socket (default: $ZYGOTE_SOCKET, else the system's)\n"
               "  --id ID           the task's id (default: chosen by the daemon)\n"
               "  --profile NAME    the seccomp profile (default: \"default\")\n"
               "  --stdin PATH      CMD's stdin: a fifo (or file) opened for reading\n"
               "  --stdout PATH     CMD's stdout: a fifo (or file) opened for writing\n"
               "  --stderr PATH     CMD's stderr, likewise (without these three: the shim's own)\n"
               "  --env K=V         CMD's environment, nothing else (repeatable)\n"
               "  --cwd DIR         CMD's working directory (default: /)\n"
               "  --user USER       run as USER (root callers only)\n"
               "  --group GROUP     with group GROUP (root callers only)\n"
               "  --hold            create, then start only on SIGUSR1 (kill on SIGTERM/INT/HUP/QUIT)\n"
               "  --kill-all        send signals to every process of the task, not only CMD\n"
               "  --pid-file PATH   write the task's pid there once it is created\n"
               "  --events-fd N     write the task's events (create, start, exit, delete) to fd N,\n"
               "                    one JSON object a line (with --attach, first an \"attach\"\n"
               "                    line: the task's state when the shim took it over)\n"
               "  --attach ID       take over task ID: wait for it, forward signals, delete it\n"
               "  --help            show this help\n\n"
               "Signals: SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR2 go to the task (Kill); SIGUSR1\n"
               "starts a created task, and goes to the task once it runs.\n"
               "Exit codes: the task's status (its code, or 128+N for signal N); 125 the sandbox\n"
               "could not be set up; 126 CMD not executable; 127 CMD not found; 1 the daemon\n"
               "refused, cannot be reached or went away; 2 usage.\n");
}

static int usage_error(const char *msg, const char *arg) {
        fprintf(stderr, "zygote-shim: %s%s%s (see --help)\n", msg, arg ? ": " : "", arg ? arg : "");
        return SHIM_EXIT_USAGE;
}

/* Prints why a call failed, with the daemon's error name when it sent one. */
static int fail(zy_conn *c, const char *what, int r) {
        const char *name = c ? zy_conn_error_name(c) : NULL;

        if (name)
                fprintf(stderr, "zygote-shim: %s: %s (%s)\n", what, name, strerror(-r));
        else
                fprintf(stderr, "zygote-shim: %s: %s\n", what, strerror(-r));
        return SHIM_EXIT_FAILURE;
}

/* ---- events ---------------------------------------------------------------------------- */

/* Writes o as one line to the events fd. A reader that went away ends the output. */
static void write_line(struct shim *s, json_object *o) {
        const char *text;
        size_t len, off = 0;

        if (s->events_fd < 0)
                return;
        text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        while (off <= len) {
                /* The text from json-c's buffer, then its newline. */
                const char *p = off < len ? text + off : "\n";
                size_t n = off < len ? len - off : 1;
                ssize_t k = write(s->events_fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        fprintf(stderr, "zygote-shim: events output: %s; no more events\n",
                                k < 0 ? strerror(errno) : "short write");
                        s->events_fd = -1;
                        return;
                }
                off += (size_t) k;
        }
}

/* A line of the events output: {"type", "id"}; NULL when out of memory. */
static json_object *record_new(const char *type, const char *id) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "type", json_object_new_string(type));
        json_object_object_add(o, "id", json_object_new_string(id));
        return o;
}

/* Adds how the task ended, when it did (an exit code, or the signal that killed it), writes the
 * line and frees it. */
static void record_write(struct shim *s, json_object *o, int exit_code, int signal) {
        if (exit_code >= 0 && signal == 0)
                json_object_object_add(o, "exitCode", json_object_new_int(exit_code));
        if (signal > 0)
                json_object_object_add(o, "signal", json_object_new_int(signal));
        write_line(s, o);
        json_object_put(o);
}

/* One event of our task, as the daemon sent it. */
static void event_write(struct shim *s, const struct zy_event *e) {
        json_object *o;

        if (s->events_fd < 0 || !s->id || strcmp(e->id, s->id) != 0)
                return;
        o = record_new(e->type_name, e->id);
        if (!o)
                return;
        json_object_object_add(o, "time", json_object_new_double(e->time));
        if (e->pid > 0)
                json_object_object_add(o, "pid", json_object_new_int(e->pid));
        record_write(s, o, e->exit_code, e->signal);
}

/* --attach: the task as found, before any of its later events. Also tells a supervisor that
 * the shim is ready for signals (they are blocked and queued from here on). */
static void attach_write(struct shim *s, const struct zy_task_info *t) {
        json_object *o = record_new("attach", t->id);

        if (!o)
                return;
        json_object_object_add(o, "state", json_object_new_string(t->state_name));
        json_object_object_add(o, "pid", json_object_new_int(t->pid));
        record_write(s, o, t->exit_code, t->signal);
}

/* Reads one event (the stream is readable) and writes it if it is ours. A broken stream
 * ends the event output, never the task. */
static void event_read(struct shim *s) {
        struct zy_event *e = NULL;
        int r;

        r = zy_events_next(s->evc, &e);
        if (r < 0 || !e) {
                fprintf(stderr, "zygote-shim: the event stream ended%s%s\n", r < 0 ? ": " : "",
                        r < 0 ? strerror(-r) : "");
                s->evc = zy_conn_free(s->evc);
                return;
        }
        event_write(s, e);
        zy_event_free(e);
}

static bool readable_now(zy_conn *c) {
        struct pollfd p = { .fd = zy_conn_get_fd(c), .events = POLLIN };

        return zy_conn_has_input(c) || poll(&p, 1, 0) > 0;
}

/* The daemon writes each event before the reply to the call that caused it, so once a reply
 * is in, the events before it are in our socket: print those, without waiting for more. */
static void events_drain(struct shim *s) {
        while (s->evc && readable_now(s->evc))
                event_read(s);
}

/* ---- create ------------------------------------------------------------------------------ */

/* Opens a stdio path for the task. A fifo blocks until its other end is open: containerd
 * opens its ends before it asks the shim to create the task. */
static int open_stdio(const char *path, int flags, int *ret) {
        int fd = open(path, flags | O_CLOEXEC | O_NOCTTY);

        if (fd < 0) {
                int r = -errno;
                fprintf(stderr, "zygote-shim: cannot open %s: %s\n", path, strerror(errno));
                return r;
        }
        *ret = fd;
        return 0;
}

static int write_pid_file(const char *path, pid_t pid) {
        char tmp[4096];
        char buf[32];
        int fd, n, r = 0;

        /* Written aside and renamed, as runc does: a reader never sees half a pid. */
        if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int) sizeof(tmp))
                return -ENAMETOOLONG;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        n = snprintf(buf, sizeof(buf), "%d", (int) pid);
        if (write(fd, buf, (size_t) n) != n)
                r = errno ? -errno : -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

static int create_failed(zy_conn *c, int r) {
        const char *step = NULL, *msg = NULL;
        int err = 0;

        if (r != -ECHILD || zy_conn_spawn_failure(c, &step, &err, &msg) < 0)
                return fail(c, "create", r);
        fprintf(stderr, "zygote-shim: create: sandbox setup failed at step %s: %s\n", step, strerror(err));
        return SHIM_EXIT_SETUP;
}

/* Create: Spawn with hold. Returns 0 or the shim's exit code. */
static int create(struct shim *s, struct zy_spawn_opts *o, const char *stdio_paths[3]) {
        static const int flags[3] = { O_RDONLY, O_WRONLY | O_APPEND, O_WRONLY | O_APPEND };
        int owned[3] = { -1, -1, -1 };
        struct zy_fd_map map[3];
        struct zy_spawn_result *sr = NULL;
        int r, ret = 0;

        for (int i = 0; i < 3; i++)
                if (stdio_paths[i] && open_stdio(stdio_paths[i], flags[i], &owned[i]) < 0) {
                        ret = SHIM_EXIT_FAILURE;
                        goto out;
                }
        o->fds = map;
        o->n_fds = lzy_stdio_map(map, owned);
        o->hold = true;

        r = zy_spawn(s->ctl, o, &sr);
        /* The daemon passed its copies to the worker (or refused): ours go now, so that the
         * fifos' readers see EOF when the task, not the shim, closes them. */
        for (int i = 0; i < 3; i++)
                if (owned[i] >= 0)
                        close(owned[i]);
        owned[0] = owned[1] = owned[2] = -1;
        if (r < 0) {
                ret = create_failed(s->ctl, r);
                goto out;
        }
        s->spawned_id = strdup(sr->id);
        if (!s->spawned_id) {
                ret = fail(NULL, "create", -ENOMEM);
                goto out;
        }
        s->id = s->spawned_id;
        if (s->pid_file) {
                r = write_pid_file(s->pid_file, sr->pid);
                if (r < 0) {
                        fprintf(stderr, "zygote-shim: cannot write %s: %s\n", s->pid_file, strerror(-r));
                        /* A shim that cannot report its task must not leave it held. */
                        (void) zy_delete(s->ctl, s->id, NULL);
                        ret = SHIM_EXIT_FAILURE;
                        goto out;
                }
        }
        /* The shim handed its stdio over: nothing of the task's io stays with the daemon
         * (containerd's CloseIO of stdin). */
        r = zy_close_io(s->ctl, s->id);
        if (r < 0)
                fprintf(stderr, "zygote-shim: closeio: %s\n", strerror(-r));
out:
        for (int i = 0; i < 3; i++)
                if (owned[i] >= 0)
                        close(owned[i]);
        zy_spawn_result_free(sr); /* also closes the pidfd: Kill goes through the daemon */
        return ret;
}

/* ---- start, kill --------------------------------------------------------------------------- */

/* The control connection for a call made while the task runs: zygoted closes a connection with
 * no call in progress after two minutes (docs/SECURITY.md, "Accounts"), and a task runs for as
 * long as it likes. Between calls nothing may arrive on it, so anything readable (its EOF) says
 * it was closed: a fresh one is a connect away. */
static zy_conn *ctl(struct shim *s) {
        struct pollfd p = { .fd = zy_conn_get_fd(s->ctl), .events = POLLIN };
        zy_conn *fresh = NULL;

        if (poll(&p, 1, 0) <= 0 || zy_conn_has_input(s->ctl))
                return s->ctl;
        if (zy_connect(s->socket_path, &fresh) < 0)
                return s->ctl; /* the call fails on the old one, and says why */
        zy_conn_free(s->ctl);
        s->ctl = fresh;
        return s->ctl;
}

static void start(struct shim *s) {
        const char *step = NULL;
        int err = 0;
        int r;

        s->started = true;
        r = zy_start(ctl(s), s->id);
        if (r == 0)
                return;
        if (r == -ECHILD && zy_conn_spawn_failure(s->ctl, &step, &err, NULL) >= 0) {
                /* execve failed: the worker exits 126 or 127, and Wait reports it. */
                fprintf(stderr, "zygote-shim: start: %s failed: %s\n", step, strerror(err));
                return;
        }
        if (r == -EBUSY) /* killed (or stopped) before it could start */
                return;
        fail(s->ctl, "start", r);
}

static void on_signal(struct shim *s, int sig) {
        int r;

        if (sig == SIGUSR1 && !s->started) {
                start(s);
                return;
        }
        r = zy_kill(ctl(s), s->id, sig, s->kill_all);
        /* EBUSY: it stopped meanwhile; Wait is about to say how. */
        if (r < 0 && r != -EBUSY)
                fail(s->ctl, "kill", r);
}

/* ---- wait ---------------------------------------------------------------------------------- */

/* Waits for the task's exit, handling signals and events meanwhile. */
static int wait_loop(struct shim *s, struct zy_task_info **ret) {
        int r;

        r = zy_wait_send(s->waitc, s->id);
        if (r < 0)
                return fail(s->waitc, "wait", r);
        if (!s->attach && !s->hold)
                start(s);

        while (!zy_conn_has_input(s->waitc)) {
                struct pollfd p[3] = {
                        { .fd = zy_conn_get_fd(s->waitc), .events = POLLIN },
                        { .fd = s->sfd, .events = POLLIN },
                        { .fd = s->evc ? zy_conn_get_fd(s->evc) : -1, .events = POLLIN },
                };

                if (s->evc && zy_conn_has_input(s->evc)) {
                        event_read(s);
                        continue;
                }
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return fail(NULL, "poll", -errno);
                }
                if (p[2].revents)
                        event_read(s);
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;

                        while (read(s->sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                on_signal(s, (int) si.ssi_signo);
                }
                if (p[0].revents)
                        break;
        }
        r = zy_wait_read(s->waitc, ret);
        if (r == -ECONNRESET || r == -ENOTCONN) {
                fprintf(stderr,
                        "zygote-shim: the daemon went away; the task's status is kept "
                        "only by a daemon that kept its tasks (then: zygote-shim --attach %s)\n",
                        s->id);
                return SHIM_EXIT_FAILURE;
        }
        if (r < 0)
                return fail(s->waitc, "wait", r);
        return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

static int parse_fd(const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || !*s || *end || v < 0 || v > 65535 || fcntl((int) v, F_GETFD) < 0)
                return -EBADF;
        *ret = (int) v;
        return 0;
}

static int shim_run(struct shim *s, int argc, char **argv) {
        enum { O_STDIN = LZY_OPT_OWN, O_STDOUT, O_STDERR, O_KILL_ALL, O_PID_FILE, O_EVENTS_FD, O_ATTACH };
        static const struct option opts[] = {
                LZY_SPAWN_OPTIONS,
                /* --stdin, --stdout, --stderr: O_STDIN + the fd number */
                { "stdin", required_argument, NULL, O_STDIN },
                { "stdout", required_argument, NULL, O_STDOUT },
                { "stderr", required_argument, NULL, O_STDERR },
                { "kill-all", no_argument, NULL, O_KILL_ALL },
                { "pid-file", required_argument, NULL, O_PID_FILE },
                { "events-fd", required_argument, NULL, O_EVENTS_FD },
                { "attach", required_argument, NULL, O_ATTACH },
                {},
        };
        static const char *env[MAX_ENV + 1];
        const char *stdio_paths[3] = {};
        struct zy_spawn_opts so = { .env = env, .cwd = "/" };
        struct zy_task_info *t = NULL;
        size_t n_env = 0;
        int o, r;

        while ((o = lzy_spawn_getopt(argc, argv, opts, &so)) >= 0) {
                switch (o) {
                case LZY_OPT_SOCKET:
                        s->socket_path = optarg;
                        break;
                case O_STDIN:
                case O_STDOUT:
                case O_STDERR:
                        stdio_paths[o - O_STDIN] = optarg;
                        break;
                case LZY_OPT_ENV:
                        if (!lzy_env_arg_ok(optarg))
                                return usage_error("--env wants KEY=VALUE", optarg);
                        if (n_env == MAX_ENV)
                                return usage_error("too many --env", NULL);
                        env[n_env++] = optarg;
                        break;
                case LZY_OPT_HOLD:
                        s->hold = true;
                        break;
                case O_KILL_ALL:
                        s->kill_all = true;
                        break;
                case O_PID_FILE:
                        s->pid_file = optarg;
                        break;
                case O_EVENTS_FD:
                        if (parse_fd(optarg, &s->events_fd) < 0)
                                return usage_error("--events-fd wants an open fd", optarg);
                        break;
                case O_ATTACH:
                        s->attach = true;
                        s->id = optarg;
                        break;
                case LZY_OPT_HELP:
                        help();
                        return 0;
                default:
                        if (optopt >= LZY_OPT_PROFILE)
                                return usage_error("option needs an argument", argv[optind - 1]);
                        return usage_error("unknown option", argv[optind - 1]);
                }
        }
        if (s->attach && optind < argc)
                return usage_error("--attach takes no command", argv[optind]);
        if (!s->attach && optind >= argc)
                return usage_error("missing command", NULL);
        so.argv = (const char *const *) argv + optind;

        /* Blocked before anything is created, read from a signalfd afterwards: a signal that
         * arrives while the daemon creates the task is handled then, not lost, and a SIGTERM
         * before Start kills the created task instead of leaving it behind. */
        s->sfd = lzy_signalfd_block(handled_signals, sizeof(handled_signals) / sizeof(handled_signals[0]));
        if (s->sfd < 0)
                return fail(NULL, "blocking signals in a signalfd", s->sfd);
        /* An events reader that goes away must not kill the shim (EPIPE ends the output). */
        signal(SIGPIPE, SIG_IGN);

        r = zy_connect(s->socket_path, &s->ctl);
        if (r < 0)
                return fail(NULL, "cannot connect to zygoted", r);
        if (s->events_fd >= 0) {
                /* Subscribed before Create, so that the create event is in the stream. */
                r = zy_connect(s->socket_path, &s->evc);
                if (r >= 0)
                        r = zy_events_subscribe(s->evc);
                if (r < 0)
                        return fail(s->evc, "events", r);
        }

        if (s->attach) {
                struct zy_task_info *now = NULL;

                r = zy_state(s->ctl, s->id, &now);
                if (r < 0)
                        return fail(s->ctl, s->id, r);
                s->started = now->state != ZY_TASK_CREATED;
                attach_write(s, now);
                zy_task_info_free(now);
        } else {
                r = create(s, &so, stdio_paths);
                if (r != 0)
                        return r;
        }

        r = zy_connect(s->socket_path, &s->waitc);
        if (r < 0)
                return fail(NULL, "cannot connect to zygoted", r);
        r = wait_loop(s, &t);
        if (r != 0)
                return r;

        r = zy_delete(ctl(s), s->id, NULL);
        /* ESRCH: someone else (another shim, launchctl delete) deleted it after our Wait. */
        if (r < 0 && r != -ESRCH)
                fail(s->ctl, "delete", r);
        events_drain(s);

        r = zy_task_info_status(t);
        zy_task_info_free(t);
        if (r < 0) {
                fprintf(stderr, "zygote-shim: task %s stopped without a known status\n", s->id);
                return SHIM_EXIT_FAILURE;
        }
        return r;
}

int main(int argc, char **argv) {
        struct shim s = { .events_fd = -1, .sfd = -1 };
        int r;

        r = shim_run(&s, argc, argv);
        zy_conn_free(s.evc);
        zy_conn_free(s.waitc);
        zy_conn_free(s.ctl);
        if (s.sfd >= 0)
                close(s.sfd);
        free(s.spawned_id);
        return r;
}
