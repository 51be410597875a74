/* SPDX-License-Identifier: MIT */
/*
 * launchctl: the command-line client of zygoted, on libzygote. This file: the verb table,
 * argument parsing and the readable/JSON output of every verb but run (launchctl-run.c); the
 * helpers both use (connecting, error messages, signal names) are in launchctl-util.c.
 *
 * Exit codes: 0 success; 1 the daemon refused or cannot be reached; 2 usage error; run and
 * wait exit with the task's status (its code, or 128 + N for signal N), and run with 125/126/127
 * when the sandbox could not be set up / the program is not executable / not found.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launchctl-record.h"
#include "launchctl-run.h"
#include "launchctl-util.h"
#include "signal-util.h"
#include "zygote-private.h"
#include "util.h"

struct verb_args {
        const char *socket;
        bool json;
        bool all;
        int signal;        /* kill: 0 for the daemon's default */
        char *socket_used; /* the socket connected to, and why that one (status) */
        int n_pos;
        char **pos;
};

struct verb {
        const char *name;
        const char *args; /* positional arguments, for the usage line */
        int min_pos, max_pos;
        const char *summary;
        const char *help;   /* extra lines */
        const char *method; /* for --json: the method whose reply is printed raw */
        int (*run)(zy_conn *c, const struct verb_args *a);
};

static const char *time_str(double t, char buf[static 32]) {
        time_t s = (time_t) t;
        struct tm tm;

        if (t <= 0 || !localtime_r(&s, &tm) || strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                return "-";
        return buf;
}

static void print_status_word(const struct zy_task_info *t, char *buf, size_t size) {
        if (t->state != ZY_TASK_STOPPED)
                snprintf(buf, size, "-");
        else if (t->signal > 0)
                snprintf(buf, size, "SIG%s", sigabbrev_np(t->signal) ? sigabbrev_np(t->signal) : "?");
        else
                snprintf(buf, size, "%d", t->exit_code);
}

/* " a b c" and a newline: a command line, a list of profiles. */
static void print_strv(const char *prefix, char **l) {
        fputs(prefix, stdout);
        for (char **p = l; *p; p++)
                printf(" %s", *p);
        putchar('\n');
}

/* Each verb returns its exit code, or a negative errno that run_verb reports as the verb's
 * failure. */
/* A task as this caller names it: its own by id, another owner's (root's list) as OWNER:ID. */
static const char *shown_name(const struct zy_task_info *t) {
        char own[16];
        int n = snprintf(own, sizeof(own), "%u:", (unsigned) getuid());

        return t->name && strncmp(t->name, own, (size_t) n) != 0 ? t->name : t->id;
}

static int verb_ps(zy_conn *c, const struct verb_args *a) {
        struct zy_task_list *l = NULL;
        int w = 2, r;

        r = zy_list(c, &l);
        for (size_t i = 0; r >= 0 && i < l->n_tasks; i++)
                if ((int) strlen(shown_name(l->tasks[i])) > w)
                        w = (int) strlen(shown_name(l->tasks[i]));
        if (r >= 0)
                printf("%-*s %8s %-8s %-7s %-12s %-8s %s\n", w, "ID", "PID", "STATE", "STATUS", "PROFILE", "TIER",
                       "COMMAND");
        for (size_t i = 0; r >= 0 && i < l->n_tasks; i++) {
                const struct zy_task_info *t = l->tasks[i];
                char st[32];

                print_status_word(t, st, sizeof(st));
                printf("%-*s %8d %-8s %-7s %-12s %-8s", w, shown_name(t), (int) t->pid, t->state_name, st, t->profile,
                       t->tier);
                print_strv("", t->argv);
        }
        zy_task_list_free(l);
        return r < 0 ? r : 0;
}

static void print_task(const struct zy_task_info *t) {
        char b[32], st[32];

        print_status_word(t, st, sizeof(st));
        printf("id:       %s\n", t->id);
        printf("state:    %s\n", t->state_name);
        printf("pid:      %d\n", (int) t->pid);
        printf("uid:      %u\n", (unsigned) t->uid);
        printf("profile:  %s\n", t->profile);
        printf("tier:     %s\n", t->tier);
        printf("status:   %s\n", st);
        print_strv("command:", t->argv);
        printf("created:  %s\n", time_str(t->created_at, b));
        printf("started:  %s\n", time_str(t->started_at, b));
        printf("exited:   %s\n", time_str(t->exited_at, b));
}

static int verb_state(zy_conn *c, const struct verb_args *a) {
        struct zy_task_info *t = NULL;
        int r = zy_state(c, a->pos[0], &t);

        if (r >= 0)
                print_task(t);
        zy_task_info_free(t);
        return r < 0 ? r : 0;
}

static int verb_kill(zy_conn *c, const struct verb_args *a) {
        return zy_kill(c, a->pos[0], a->signal, a->all);
}

static int verb_start(zy_conn *c, const struct verb_args *a) {
        return zy_start(c, a->pos[0]);
}

static int verb_wait(zy_conn *c, const struct verb_args *a) {
        struct zy_task_info *t = NULL;
        int r = zy_wait(c, a->pos[0], &t);

        if (r < 0)
                return r;
        if (t->signal > 0)
                printf("%s: killed by signal %d (SIG%s)\n", t->id, t->signal,
                       sigabbrev_np(t->signal) ? sigabbrev_np(t->signal) : "?");
        else
                printf("%s: exited with code %d\n", t->id, t->exit_code);
        r = lc_task_exit_status(t);
        zy_task_info_free(t);
        return r;
}

static int verb_delete(zy_conn *c, const struct verb_args *a) {
        return zy_delete(c, a->pos[0], NULL);
}

/* create: the container held before its process's execve, with our stdio; start, wait, delete
 * are the task verbs. */
static int container_create(zy_conn *c, const struct verb_args *a, bool print) {
        struct zy_container_opts o = {
                .id = a->pos[0], .bundle = a->pos[1], .stdio = { 0, 1, 2 }, .console_socket = -1
        };
        struct zy_spawn_result *sr = NULL;
        int r = zy_container_create(c, &o, &sr);

        if (r < 0)
                return r;
        if (print)
                printf("%s\t%d\n", sr->id, (int) sr->pid);
        zy_spawn_result_free(sr);
        return 0;
}

static int verb_create(zy_conn *c, const struct verb_args *a) {
        return container_create(c, a, true);
}

static volatile sig_atomic_t container_signal;

static void on_container_signal(int sig) {
        container_signal = sig;
}

/* Waits for the container's exit on c, passing SIGINT, SIGTERM, SIGHUP and SIGQUIT on to it
 * (through a second connection: c carries the Wait). */
static int container_wait(zy_conn *c, const struct verb_args *a, struct zy_task_info **ret) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
        struct sigaction sa = { .sa_handler = on_container_signal };
        int r = zy_wait_send(c, a->pos[0]);

        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                (void) sigaction(sigs[i], &sa, NULL);
        while (r >= 0 && !zy_conn_has_input(c)) {
                struct pollfd p = { .fd = zy_conn_get_fd(c), .events = POLLIN };
                if (poll(&p, 1, -1) > 0)
                        break;
                int sig = container_signal;
                container_signal = 0;
                if (sig > 0) {
                        zy_conn *k = NULL;
                        if (lc_connect(a->socket, &k, NULL) >= 0)
                                (void) zy_kill(k, a->pos[0], sig, false);
                        zy_conn_free(k);
                }
        }
        return r < 0 ? r : zy_wait_read(c, ret);
}

/* container: create, start, wait and delete, as `runc run` does; exits with the container's
 * status. */
static int verb_container(zy_conn *c, const struct verb_args *a) {
        struct zy_task_info *t = NULL;
        int r = container_create(c, a, false);

        if (r < 0)
                return r;
        r = zy_start(c, a->pos[0]);
        if (r >= 0)
                r = container_wait(c, a, &t);
        (void) zy_delete(c, a->pos[0], NULL);
        if (r < 0)
                return r;
        r = lc_task_exit_status(t);
        zy_task_info_free(t);
        return r;
}

static void print_profiles(const struct zy_profile_list *l) {
        int w = 7;

        for (size_t i = 0; i < l->n_profiles; i++)
                if ((int) strlen(l->profiles[i]->name) > w)
                        w = (int) strlen(l->profiles[i]->name);
        printf("%-*s %-8s %6s %7s %4s %8s %s\n", w, "PROFILE", "TIER", "BPF", "LONGEST", "NNP", "REF", "TIER REASON");
        for (size_t i = 0; i < l->n_profiles; i++) {
                const struct zy_profile_info *p = l->profiles[i];
                char ref[16] = "-";

                if (p->reference_pid > 0)
                        snprintf(ref, sizeof(ref), "%d", (int) p->reference_pid);
                printf("%-*s %-8s %6u %7u %4s %8s %s\n", w, p->name, p->tier, p->bpf_instructions, p->longest_path,
                       p->no_new_privileges ? "yes" : "no", ref, p->tier_reason);
        }
}

/* The profile files zygoted refused: a file that does not parse names no profile, so the table
 * alone would not show it. */
static void print_failed_files(char **failed) {
        for (char **f = failed; f && *f; f++)
                printf("failed to load: %s\n", *f);
}

static int verb_profiles(zy_conn *c, const struct verb_args *a) {
        struct zy_profile_list *l = NULL;
        int r = zy_list_profiles(c, &l);

        if (r >= 0) {
                print_profiles(l);
                print_failed_files(l->failed_files);
        }
        zy_profile_list_free(l);
        return r < 0 ? r : 0;
}

static int verb_status(zy_conn *c, const struct verb_args *a) {
        struct zy_daemon_status *s = NULL;
        int r = zy_get_status(c, &s);

        if (r < 0)
                return r;
        printf("socket: %s\n", a->socket_used ? a->socket_used : "-");
        printf("zygoted %s: %u task%s, %u connection%s\n", s->version, s->tasks, s->tasks == 1 ? "" : "s",
               s->connections, s->connections == 1 ? "" : "s");
        printf("kernel: SECCOMP_CLONE_FILTER %s, PR_CAPBSET_DROP_MASK %s\n", s->clone_filter ? "yes" : "no",
               s->capbset_drop_mask ? "yes" : "no");
        if (s->own_filter)
                printf("warning: zygoted runs under a seccomp filter of its own: every task inherits it "
                       "(see zygoted's log)\n");
        print_profiles(s->profiles);
        print_failed_files(s->failed_files);
        zy_daemon_status_free(s);
        return 0;
}

static int verb_reload(zy_conn *c, const struct verb_args *a) {
        struct zy_reload_result *res = NULL;
        int r = zy_reload_profiles(c, &res);

        if (r < 0)
                return r;
        print_strv("loaded:", res->loaded);
        /* one line each: a failure is "PATH: why", and the whys have spaces and colons */
        for (char **f = res->failed; *f; f++)
                printf("failed: %s\n", *f);
        r = res->failed[0] ? LC_EXIT_FAILURE : 0;
        zy_reload_result_free(res);
        return r;
}

static const struct verb verbs[] = {
        { "ps", "", 0, 0, "list the tasks (root: everyone's)", NULL, ZY_METHOD_LIST, verb_ps },
        { "kill", "ID [SIGNAL]", 1, 2, "send a signal to a task (default TERM)",
          "SIGNAL is a name (TERM, SIGKILL, RTMIN+1) or a number.\n"
          "  --all           signal every process in the task's session\n",
          ZY_METHOD_KILL, verb_kill },
        { "wait", "ID", 1, 1, "wait for a task to exit; exit with its status",
          "Exits with the task's exit code, or 128+N when signal N killed it.\n", ZY_METHOD_WAIT, verb_wait },
        { "start", "ID", 1, 1, "let a held task (run --hold) exec", NULL, ZY_METHOD_START, verb_start },
        { "state", "ID", 1, 1, "show a task", NULL, ZY_METHOD_STATE, verb_state },
        { "delete", "ID", 1, 1, "forget a stopped task (kill and forget a held one)", NULL, ZY_METHOD_DELETE,
          verb_delete },
        { "create", "ID BUNDLE", 2, 2, "create an OCI bundle's container from zygoted, held until start",
          "Root with CAP_SYS_ADMIN. The container's stdio is launchctl's; start, wait, kill --all,\n"
          "state and delete work on it by its ID. Prints the ID and the init's pid.\n",
          NULL, verb_create },
        { "container", "ID BUNDLE", 2, 2, "run an OCI bundle's container from zygoted (create, start, wait, delete)",
          "Exits with the container's status; SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to it.\n", NULL,
          verb_container },
        { "profiles", "", 0, 0, "list the profiles and their tiers", NULL, ZY_METHOD_LIST_PROFILES, verb_profiles },
        { "status", "", 0, 0, "show the socket, daemon, kernel features, profiles",
          "With --json, the daemon's GetStatus reply with every key in snake_case\n"
          "(bpfInstructions becomes bpf_instructions, referencePid reference_pid, ...):\n"
          "  {\"version\", \"features\": {\"clone_filter\", \"capbset_drop_mask\"},\n"
          "   \"profiles\": [{\"name\", \"tier\", \"bpf_instructions\", \"reference_pid\", ...}],\n"
          "   \"tasks\", \"connections\", \"own_filter\"}\n",
          ZY_METHOD_GET_STATUS, verb_status },
        { "reload", "", 0, 0, "reload the profile files (root only)",
          "Exits 1 when a profile failed to load (it keeps its old version).\n", ZY_METHOD_RELOAD_PROFILES,
          verb_reload },
};

static void main_help(void) {
        printf("Usage: %s [--socket PATH] VERB [OPTIONS] [ARGS]\n"
               "Start and manage sandboxed processes through zygoted.\n\n"
               "Verbs:\n"
               "  run [OPTIONS] [--] CMD [ARGS...]  run CMD in a sandbox and exit with its status\n"
               "  profile check FILE [OPTIONS] -- CMD  run CMD deciding its calls by profile FILE\n",
               LC_PROGRAM);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                char left[64];
                snprintf(left, sizeof(left), "%s %s", verbs[i].name, verbs[i].args);
                printf("  %-32s %s\n", left, verbs[i].summary);
        }
        printf("\nOptions:\n"
               "  --socket PATH   zygoted's socket (default: $ZYGOTE_SOCKET, else %s\n"
               "                  for root; for other users $XDG_RUNTIME_DIR/zygote/zygoted.sock\n"
               "                  when a daemon listens there, else the system one; 'status'\n"
               "                  says which)\n"
               "  --help          show this help ('%s VERB --help' for a verb's)\n"
               "  --version       show the version\n\n"
               "Every verb takes --json: the daemon's reply as JSON instead of a table.\n"
               "Exit codes: 0 done; 1 the daemon refused or cannot be reached; 2 usage error;\n"
               "run and wait: the task's status (its code, or 128+N for signal N); run: 125 the\n"
               "sandbox could not be set up, 126 CMD is not executable, 127 CMD not found.\n",
               ZY_SOCKET_SYSTEM, LC_PROGRAM);
}

static void verb_help(const struct verb *v) {
        printf("Usage: %s %s [OPTIONS] %s\n%c%s.\n\n", LC_PROGRAM, v->name, v->args,
               toupper((unsigned char) v->summary[0]), v->summary + 1);
        if (v->help)
                printf("%s", v->help);
        if (v->method)
                printf("  --json          print the daemon's reply as JSON\n");
        printf("  --socket PATH   zygoted's socket\n"
               "  --help          show this help\n");
}

/* Renames every key of every object in o from camelCase to snake_case, in place. */
static int snake_case_keys(json_object *o) {
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        if (snake_case_keys(json_object_array_get_idx(o, i)) < 0)
                                return -ENOMEM;
                return 0;
        }
        if (!json_object_is_type(o, json_type_object))
                return 0;

        /* Rebuild in order: renaming in place would disturb the iteration. */
        _cleanup_(lzy_json_putp) json_object *copy = json_object_new_object();
        if (!copy)
                return -ENOMEM;
        json_object_object_foreach(o, key, val) {
                char snake[256];
                size_t k = 0;

                for (const char *p = key; *p && k + 2 < sizeof(snake); p++) {
                        if (isupper((unsigned char) *p)) {
                                if (k > 0)
                                        snake[k++] = '_';
                                snake[k++] = (char) tolower((unsigned char) *p);
                        } else
                                snake[k++] = *p;
                }
                snake[k] = 0;
                if (snake_case_keys(val) < 0)
                        return -ENOMEM;
                if (json_object_object_add(copy, snake, json_object_get(val)) < 0)
                        return -ENOMEM;
        }
        /* Swap the contents: keys of o go, the renamed ones come. */
        while (json_object_object_length(o) > 0) {
                struct json_object_iterator it = json_object_iter_begin(o);
                json_object_object_del(o, json_object_iter_peek_name(&it));
        }
        json_object_object_foreach(copy, k2,
                                   v2) if (json_object_object_add(o, k2, json_object_get(v2)) < 0) return -ENOMEM;
        return 0;
}

/* ps --json: List answers a page at a time; the pages that follow "next" join the first's
 * "tasks", so that the JSON printed is every task, as one reply. */
static int list_rest(zy_conn *c, json_object *first) {
        json_object *tasks = json_object_object_get(first, "tasks"), *next;
        int r;

        if (!json_object_is_type(tasks, json_type_array))
                return -EBADMSG;
        while ((next = json_object_object_get(first, "next")) && json_object_is_type(next, json_type_string)) {
                _cleanup_(lzy_json_putp) json_object *p = json_object_new_object();
                struct zy_reply *page = NULL;
                json_object *more;

                if (!p || json_object_object_add(p, "after", json_object_get(next)) < 0)
                        return -ENOMEM;
                r = zy_call(c, ZY_METHOD_LIST, p, NULL, 0, 0, &page);
                if (r < 0)
                        return r;
                more = json_object_object_get(page->parameters, "tasks");
                if (!json_object_is_type(more, json_type_array) || json_object_array_length(more) == 0) {
                        zy_reply_free(page);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < json_object_array_length(more); i++)
                        if (json_object_array_add(tasks, json_object_get(json_object_array_get_idx(more, i))) < 0) {
                                zy_reply_free(page);
                                return -ENOMEM;
                        }
                /* the next page's cursor, or none: this one's goes */
                json_object *n = json_object_object_get(page->parameters, "next");
                if (n && json_object_is_type(n, json_type_string)) {
                        if (strcmp(json_object_get_string(n), json_object_get_string(next)) <= 0) {
                                zy_reply_free(page);
                                return -EBADMSG;
                        }
                        json_object_object_add(first, "next", json_object_get(n));
                } else
                        json_object_object_del(first, "next");
                zy_reply_free(page);
        }
        json_object_object_del(first, "next");
        return 0;
}

static int verb_json(zy_conn *c, const struct verb *v, const struct verb_args *a) {
        _cleanup_(lzy_json_putp) json_object *p = NULL;
        struct zy_reply *reply = NULL;
        int r;

        if (a->n_pos > 0) {
                p = json_object_new_object();
                if (!p || json_object_object_add(p, "id", json_object_new_string(a->pos[0])) < 0)
                        return lc_fail(NULL, v->name, -ENOMEM);
        }
        if (streq_ptr(v->name, "kill")) {
                if ((a->signal > 0 && json_object_object_add(p, "signal", json_object_new_int(a->signal)) < 0) ||
                    (a->all && json_object_object_add(p, "all", json_object_new_boolean(1)) < 0))
                        return lc_fail(NULL, v->name, -ENOMEM);
        }
        r = zy_call(c, v->method, p, NULL, 0, 0, &reply);
        if (r < 0)
                return lc_fail(c, v->name, r);
        if (streq_ptr(v->name, "ps")) {
                r = list_rest(c, reply->parameters);
                if (r < 0) {
                        zy_reply_free(reply);
                        return lc_fail(c, v->name, r);
                }
        }
        if (streq_ptr(v->name, "status") && snake_case_keys(reply->parameters) < 0) {
                zy_reply_free(reply);
                return lc_fail(NULL, v->name, -ENOMEM);
        }
        lc_print_json(reply->parameters);
        r = 0;
        if (streq_ptr(v->name, "wait")) {
                struct zy_task_info *t = NULL;

                /* wait --json still exits with the task's status. */
                if (zy_task_info_from_json(json_object_object_get(reply->parameters, "task"), &t) < 0)
                        r = LC_EXIT_FAILURE;
                else
                        r = lc_task_exit_status(t);
                zy_task_info_free(t);
        }
        zy_reply_free(reply);
        return r;
}

static int run_verb(const struct verb *v, const char *socket_path, int argc, char **argv) {
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },
                { "all", no_argument, NULL, 'a' },
                { "socket", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct verb_args a = { .socket = socket_path };
        zy_conn *c = NULL;
        int o, r;

        optind = 0; /* glibc: start over, for this verb's arguments */
        opterr = 0;
        /* Options may follow the positional arguments here ("kill ID TERM --all"). */
        while ((o = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (o) {
                case 'j':
                        if (!v->method)
                                return lc_usage_error(v->name, "unknown option '--json'");
                        a.json = true;
                        break;
                case 'a':
                        if (!streq_ptr(v->name, "kill"))
                                return lc_usage_error(v->name, "unknown option '--all'");
                        a.all = true;
                        break;
                case 's':
                        a.socket = optarg;
                        break;
                case 'h':
                        verb_help(v);
                        return 0;
                default:
                        if (optopt == 's')
                                return lc_usage_error(v->name, "option '--socket' needs a path");
                        return lc_usage_error(v->name, "unknown option '%s'", argv[optind - 1]);
                }
        a.n_pos = argc - optind;
        a.pos = argv + optind;
        if (a.n_pos < v->min_pos)
                return lc_usage_error(v->name, "missing argument: %s", v->args);
        if (a.n_pos > v->max_pos)
                return lc_usage_error(v->name, "unexpected argument '%s'", a.pos[v->max_pos]);

        /* Every usage error before connecting: a bad command line never depends on the daemon. */
        if (streq(v->name, "kill") && a.n_pos > 1) {
                a.signal = zc_signal_from_string(a.pos[1]);
                if (a.signal < 0)
                        return lc_usage_error(v->name, "unknown signal '%s'", a.pos[1]);
        }

        r = lc_connect(a.socket, &c, &a.socket_used);
        if (r == -ENOMEM)
                return lc_fail(NULL, v->name, r);
        if (r < 0 && streq(v->name, "status") && !a.json)
                /* the status of a daemon that does not answer: that, and how it is started */
                printf("zygoted: not running\n"
                       "start it: systemctl enable --now zygoted.socket (the system daemon, as root)%s\n",
                       geteuid() == 0 ? "" : ",\n  or systemctl --user enable --now zygoted.socket (your own)");
        if (r < 0)
                return LC_EXIT_FAILURE;
        r = a.json ? verb_json(c, v, &a) : v->run(c, &a);
        if (r < 0)
                r = lc_fail(c, v->name, r);
        zy_conn_free(c);
        free(a.socket_used);
        return r;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "socket", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *socket_path = NULL;
        const char *verb;
        int o;

        opterr = 0;
        /* "+": stop at the verb; the verb's own options are parsed by the verb. */
        while ((o = getopt_long(argc, argv, "+", opts, NULL)) >= 0)
                switch (o) {
                case 's':
                        socket_path = optarg;
                        break;
                case 'h':
                        main_help();
                        return 0;
                case 'V':
                        printf("launchctl (zygote) %s\n", ZYGOTE_VERSION);
                        return 0;
                default:
                        if (optopt == 's')
                                return lc_usage_error(NULL, "option '--socket' needs a path");
                        return lc_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
                }
        if (optind >= argc)
                return lc_usage_error(NULL, "missing verb");
        verb = argv[optind];
        argc -= optind;
        argv += optind;

        if (streq(verb, "run"))
                return lc_run_wants_record(argc, argv) ? lc_run_record(socket_path, argc, argv)
                                                       : lc_verb_run(socket_path, argc, argv);
        if (streq(verb, "profile"))
                return lc_verb_profile(socket_path, argc, argv);
        if (streq(verb, "help")) {
                main_help();
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verb, verbs[i].name))
                        return run_verb(&verbs[i], socket_path, argc, argv);
        return lc_usage_error(NULL, "unknown verb '%s'", verb);
}
