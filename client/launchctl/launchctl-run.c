/* SPDX-License-Identifier: MIT */
/*
 * launchctl run: spawn a task with our stdio, forward our signals to it, wait for it and exit
 * with its status.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked before the Spawn call and read from
 * a signalfd afterwards, so that one that arrives while the daemon is spawning is forwarded
 * too, not lost. They go to the worker with pidfd_send_signal() on the pidfd of the Spawn
 * reply; when that is impossible (no pidfd, or the kernel or permissions refuse), with the
 * Kill method on a second connection (the first one is busy with the Spawn call).
 *
 * A foreground run is one call, Spawn with "more": its first reply comes at exec, its last at
 * the exit, after which the daemon forgets the task (no Wait, no Delete). --detach is a plain
 * Spawn: the task stays until `launchctl delete`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "launchctl-run.h"
#include "launchctl-util.h"
#include "pidfd-util.h"
#include "zygote-private.h"
#include "util.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void run_help(void) {
        printf("Usage: launchctl run [OPTIONS] [--] CMD [ARGS...]\n"
               "Run CMD in a sandbox with this terminal's stdin, stdout and stderr, forward\n"
               "SIGINT, SIGTERM, SIGHUP and SIGQUIT to it, and exit with its status (its exit\n"
               "code, or 128+N when signal N killed it).\n\n"
               "  --profile NAME  the seccomp profile (default: \"default\")\n"
               "  --user USER     run as USER (needs CAP_SETUID and CAP_SETGID; name or number)\n"
               "  --group GROUP   with group GROUP (needs CAP_SETGID, or membership)\n"
               "  --drop-cap CAP  drop capability CAP too (repeatable)\n"
               "  --env K=V       set K to V in CMD's environment (repeatable). The environment\n"
               "                  is PATH, TERM and LANG from launchctl's own environment plus\n"
               "                  these; nothing else of launchctl's environment is passed\n"
               "  --env-clear     pass only the --env variables\n"
               "  --cwd DIR       CMD's working directory (default: launchctl's)\n"
               "  --id ID         the task's id (default: chosen by the daemon)\n"
               "  --hold          prepare the sandbox, hold before exec until 'launchctl start ID'\n"
               "  --terminal      make stdin (a terminal) CMD's controlling terminal\n"
               "  --detach        print the task's id and exit 0 at once (CMD keeps our stdio);\n"
               "                  the task is kept until 'launchctl delete ID' (without --detach\n"
               "                  it is deleted once its exit status has been read), and it\n"
               "                  outlives the caller's unit: under systemd it gets a scope of\n"
               "                  its own in the caller's slice (not with --hold)\n"
               "  --json          with --detach: print the Spawn reply as JSON; without: print\n"
               "                  the final task as JSON on stderr when CMD exits\n"
               "  --socket PATH   zygoted's socket\n"
               "  --record FILE   record the system calls CMD and every process it starts make,\n"
               "                  and write FILE, an OCI/Docker seccomp profile that allows\n"
               "                  them (merged with what FILE held); not with --detach or --hold\n"
               "  --record-via HOW with --record: bpf (zygoted's eBPF tracer: a root zygoted; the\n"
               "                  task gets no filter), notify (seccomp user notification: any\n"
               "                  zygoted), or auto (the default: bpf where zygoted can)\n"
               "  --help          show this help\n\n"
               "Exit codes: CMD's status; 125 the sandbox could not be set up; 126 CMD is not\n"
               "executable; 127 CMD not found; 1 the daemon refused or cannot be reached; 2 usage.\n");
}

/* Adds or replaces K=V in the NULL-terminated env (which has room for one more). */
static void env_set(char **env, size_t *n, char *kv) {
        size_t klen = strcspn(kv, "=");

        for (size_t i = 0; i < *n; i++)
                if (strncmp(env[i], kv, klen) == 0 && env[i][klen] == '=') {
                        env[i] = kv;
                        return;
                }
        env[(*n)++] = kv;
        env[*n] = NULL;
}

/* --record-fd's: zygote-record's file gets {"unavailable": REASON} when zygoted cannot record
 * with eBPF (nothing ran), or the exit's record. */
static int write_record(int fd, json_object *o) {
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        size_t len = strlen(text);

        for (size_t done = 0; done < len;) {
                ssize_t n = write(fd, text + done, len - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -errno;
                done += (size_t) n;
        }
        return 0;
}

/* --record-fd's argument: an open fd above stdio, or -EINVAL. */
static int record_fd_arg(const char *arg) {
        char *end = NULL;
        long v = strtol(arg, &end, 10);

        if (!*arg || *end || v < 3 || v > INT_MAX || fcntl((int) v, F_GETFD) < 0)
                return -EINVAL;
        return (int) v;
}

/* The variables of names[] launchctl has, as K=V in kv[] (malloc'd), set in env. */
static int inherit_env(const char *const *names, size_t n, char **kv, char **env, size_t *n_env) {
        for (size_t i = 0; i < n; i++) {
                const char *v = getenv(names[i]);
                if (!v)
                        continue;
                if (asprintf(&kv[i], "%s=%s", names[i], v) < 0) {
                        kv[i] = NULL;
                        return -ENOMEM;
                }
                env_set(env, n_env, kv[i]);
        }
        return 0;
}

static int spawn_failed(zy_conn *c, const char *cmd, int r, int record_fd) {
        const char *step = NULL, *msg = NULL;
        int err = 0;

        if (record_fd >= 0 && streq(zy_conn_error_name(c) ?: "", ZY_ERROR_RECORDING_UNAVAILABLE)) {
                json_object *o = json_object_new_object(), *reason;
                reason = json_object_object_get(zy_conn_error_parameters(c), "reason");
                json_object_object_add(o, "unavailable", json_object_new_string(json_object_get_string(reason) ?: "?"));
                (void) write_record(record_fd, o); /* zygote-record says why, or that it got nothing */
                json_object_put(o);
                return LC_EXIT_FAILURE;
        }

        if (r != -ECHILD || zy_conn_spawn_failure(c, &step, &err, &msg) < 0)
                return lc_fail(c, "run", r);
        if (streq(step, "exec")) {
                fprintf(stderr, "launchctl: cannot run '%s': %s\n", cmd, strerror(err));
                if (err == ENOENT)
                        return LC_EXIT_NOT_FOUND;
                if (err == EACCES || err == ENOEXEC)
                        return LC_EXIT_NOT_EXECUTABLE;
                return LC_EXIT_SPAWN_SETUP;
        }
        /* the daemon's words when it has some (a scope refused: which limit), else the errno's */
        fprintf(stderr, "launchctl: sandbox setup failed at step %s: %s\n", step, msg && *msg ? msg : strerror(err));
        return LC_EXIT_SPAWN_SETUP;
}

/* Sends sig to the task: pidfd first, then the Kill method on *kill_conn (opened on demand). */
static void forward_signal(int pidfd, const char *socket_path, const char *id, zy_conn **kill_conn, int sig) {
        int r;

        if (pidfd >= 0) {
                r = pidfd_kill(pidfd, sig);
                /* ESRCH: it has exited already; Wait is about to say how. */
                if (r == 0 || r == -ESRCH)
                        return;
        }
        if (!*kill_conn) {
                r = zy_connect(socket_path, kill_conn);
                if (r < 0) {
                        fprintf(stderr, "launchctl: cannot forward signal %d: %s\n", sig, strerror(-r));
                        return;
                }
        }
        r = zy_kill(*kill_conn, id, sig, false);
        /* A task that exited meanwhile is not worth a message. */
        if (r < 0 && r != -EBUSY && r != -ESRCH)
                lc_fail(*kill_conn, "run: cannot forward signal", r);
}

/* Waits for the final reply of the Spawn call (the task's exit) while forwarding signals;
 * returns launchctl's exit status. */
static int wait_forwarding(zy_conn *c, const char *socket_path, const struct zy_spawn_result *sr, int sfd, bool json,
                           int record_fd) {
        zy_conn *kill_conn = NULL;
        struct zy_task_info *t = NULL;
        struct zy_reply *reply = NULL;
        int r = 0;

        while (!zy_conn_has_input(c)) {
                struct pollfd p[2] = {
                        { .fd = zy_conn_get_fd(c), .events = POLLIN },
                        { .fd = sfd, .events = POLLIN },
                };

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        ssize_t n;

                        while ((n = read(sfd, &si, sizeof(si))) == (ssize_t) sizeof(si))
                                forward_signal(sr->pidfd, socket_path, sr->id, &kill_conn, (int) si.ssi_signo);
                }
                if (p[0].revents)
                        break;
        }
        zy_conn_free(kill_conn);
        if (r < 0) {
                fprintf(stderr, "launchctl: run: %s\n", strerror(-r));
                return LC_EXIT_FAILURE;
        }

        /* The generic read, not zy_wait_read(): --json prints the reply as the daemon sent it. */
        r = zy_reply_read(c, 0, &reply);
        if (r < 0)
                return lc_fail(c, "run: wait", r);
        r = zy_task_info_from_json(json_object_object_get(reply->parameters, "task"), &t);
        if (r < 0) {
                zy_reply_free(reply);
                return lc_fail(c, "run: wait", r);
        }
        if (json)
                fprintf(stderr, "%s\n",
                        json_object_to_json_string_ext(reply->parameters, JSON_C_TO_STRING_PRETTY |
                                                                                  JSON_C_TO_STRING_SPACED |
                                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
        /* none: a zygoted that restarted meanwhile adopted the task without its recording */
        json_object *record = json_object_object_get(reply->parameters, "record"), *none = NULL;
        if (record_fd >= 0 && !record)
                record = none = json_object_new_object();
        if (record_fd >= 0 && write_record(record_fd, record) < 0)
                fprintf(stderr, "launchctl: run: cannot pass the record on: %m\n");
        json_object_put(none);
        zy_reply_free(reply);
        r = lc_task_exit_status(t);
        zy_task_info_free(t);
        return r;
}

/* _cleanup_free_ on an array would free its first element only. */
static void free_inherited(char *(*kv)[3]) {
        for (size_t i = 0; i < ELEMENTSOF(*kv); i++)
                free((*kv)[i]);
}

int lc_verb_run(const char *socket_path, int argc, char **argv) {
        enum { O_DROP_CAP = LZY_OPT_OWN, O_ENV_CLEAR, O_TERMINAL, O_DETACH, O_JSON, O_RECORD_FD };
        static const struct option opts[] = {
                LZY_SPAWN_OPTIONS,
                { "drop-cap", required_argument, NULL, O_DROP_CAP },
                { "env-clear", no_argument, NULL, O_ENV_CLEAR },
                { "terminal", no_argument, NULL, O_TERMINAL },
                { "detach", no_argument, NULL, O_DETACH },
                { "json", no_argument, NULL, O_JSON },
                /* zygote-record's (its eBPF path): Spawn with record, the record written to FD */
                { "record-fd", required_argument, NULL, O_RECORD_FD },
                {},
        };
        static const char *const inherited[] = { "PATH", "TERM", "LANG" };
        _Static_assert(ELEMENTSOF(inherited) == 3, "free_inherited() frees 3");
        struct zy_spawn_opts so = {};
        _cleanup_free_ char **env = NULL, **extra_env = NULL;
        _cleanup_free_ const char **drop = NULL;
        _cleanup_free_ char *cwd = NULL;
        _cleanup_(free_inherited) char *inherited_kv[ELEMENTSOF(inherited)] = {};
        size_t n_env = 0, n_extra = 0, n_drop = 0;
        bool env_clear = false, detach = false, json = false;
        int record_fd = -EBADF;
        struct zy_fd_map fds[3];
        _cleanup_close_ int sfd = -EBADF;
        zy_conn *c = NULL;
        struct zy_spawn_result *sr = NULL;
        int o, r;

        /* At most argc of each repeatable option: size the arrays once. */
        extra_env = calloc((size_t) argc + 1, sizeof(char *));
        drop = calloc((size_t) argc + 1, sizeof(char *));
        env = calloc((size_t) argc + ELEMENTSOF(inherited) + 1, sizeof(char *));
        if (!extra_env || !drop || !env) {
                fprintf(stderr, "launchctl: out of memory\n");
                return LC_EXIT_FAILURE;
        }

        optind = 0;
        while ((o = lzy_spawn_getopt(argc, argv, opts, &so)) >= 0) {
                switch (o) {
                case O_DROP_CAP:
                        drop[n_drop++] = optarg;
                        break;
                case LZY_OPT_ENV:
                        if (!lzy_env_arg_ok(optarg))
                                return lc_usage_error("run", "--env wants KEY=VALUE, not '%s'", optarg);
                        extra_env[n_extra++] = optarg;
                        break;
                case O_ENV_CLEAR:
                        env_clear = true;
                        break;
                case LZY_OPT_HOLD:
                        so.hold = true;
                        break;
                case O_TERMINAL:
                        so.terminal = true;
                        break;
                case O_DETACH:
                        detach = true;
                        break;
                case O_JSON:
                        json = true;
                        break;
                case O_RECORD_FD:
                        record_fd = record_fd_arg(optarg);
                        if (record_fd < 0)
                                return lc_usage_error("run", "--record-fd wants an open fd above 2");
                        so.record = true;
                        break;
                case LZY_OPT_SOCKET:
                        socket_path = optarg;
                        break;
                case LZY_OPT_HELP:
                        run_help();
                        return 0;
                default:
                        if (optopt >= LZY_OPT_PROFILE)
                                return lc_usage_error("run", "option '%s' needs an argument", argv[optind - 1]);
                        return lc_usage_error("run", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return lc_usage_error("run", "missing command");
        if (so.record && (detach || so.hold))
                return lc_usage_error("run", "--record-fd runs in the foreground (no --detach or --hold)");
        so.argv = (const char *const *) argv + optind;
        so.drop_caps = n_drop > 0 ? drop : NULL;

        if (!env_clear && inherit_env(inherited, ELEMENTSOF(inherited), inherited_kv, env, &n_env) < 0) {
                fprintf(stderr, "launchctl: out of memory\n");
                return LC_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n_extra; i++)
                env_set(env, &n_env, extra_env[i]);
        so.env = (const char *const *) env;

        if (!so.cwd) {
                cwd = getcwd(NULL, 0);
                if (!cwd) {
                        fprintf(stderr, "launchctl: cannot get the current directory: %m (use --cwd)\n");
                        return LC_EXIT_FAILURE;
                }
                so.cwd = cwd;
        }

        so.fds = fds;
        so.n_fds = lzy_stdio_map(fds, NULL);

        if (!detach) {
                sfd = lzy_signalfd_block(forwarded, ELEMENTSOF(forwarded));
                if (sfd < 0) {
                        fprintf(stderr, "launchctl: cannot block signals in a signalfd: %s\n", strerror(-sfd));
                        return LC_EXIT_FAILURE;
                }
        }

        if (lc_connect(socket_path, &c, NULL) < 0)
                return LC_EXIT_FAILURE;
        /* In the foreground the exit comes as the call's last reply (see the top of this file). */
        so.outlive = detach && !so.hold;
        r = detach ? zy_spawn(c, &so, &sr) : zy_spawn_more(c, &so, &sr);
        if (r < 0) {
                r = spawn_failed(c, so.argv[0], r, record_fd);
                zy_conn_free(c);
                return r;
        }

        if (detach) {
                if (json) {
                        json_object *o2 = json_object_new_object();
                        json_object_object_add(o2, "id", json_object_new_string(sr->id));
                        json_object_object_add(o2, "pid", json_object_new_int(sr->pid));
                        json_object_object_add(o2, "tier", json_object_new_string(sr->tier));
                        lc_print_json(o2);
                        json_object_put(o2);
                } else
                        printf("%s\n", sr->id);
                r = fflush(stdout) == 0 ? 0 : LC_EXIT_FAILURE;
        } else {
                if (so.hold)
                        fprintf(stderr, "launchctl: task %s is held; start it with 'launchctl start %s'\n", sr->id,
                                sr->id);
                r = wait_forwarding(c, socket_path, sr, sfd, json, record_fd);
        }
        zy_spawn_result_free(sr);
        zy_conn_free(c);
        return r;
}
