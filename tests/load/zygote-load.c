/* SPDX-License-Identifier: MIT */
/*
 * zygote-load: many spawns from concurrent clients, each accounted for.
 *
 *   zygote-load --socket PATH [--clients 16] [--spawns 100000] [--profile default] [-- ARGV...]
 *
 * Every client is a thread with its own connection that runs Spawn with "more" in a loop: the
 * first reply says the worker exec'd (and carries its pidfd, closed at once), the final reply
 * carries the task's exit status, after which the daemon forgets the task. A spawn counts as
 * done only when its final reply arrived; its exit status is tallied. One JSON line on stdout
 * says what happened:
 *
 *   {"spawns":N,"done":N,"exit0":N,"other_exit":N,"signaled":N,"errors":N,"first_error":"...",
 *    "seconds":S,"rate":R}
 *
 * Exit status: 0 when every spawn ended with exit code 0, 1 otherwise, 2 on a usage error.
 * Used by tests/integration/test_load.py; the daemon's side (fds, RSS, zombies) is checked there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zygote.h>

#include "../bench/bench-opts.h"

#define SPAWN_METHOD "io.zygote.Launcher.Spawn"
#define MAX_CLIENTS 256

struct client {
        pthread_t thread;
        const char *socket;
        json_object *params; /* this client's own: json-c's reference counts are not atomic */
        unsigned long spawns;
        unsigned long done, exit0, other_exit, signaled, errors;
        char first_error[160];
};

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void note_error(struct client *cl, const char *what, int r, zy_conn *c) {
        cl->errors++;
        if (cl->first_error[0])
                return;
        const char *name = c ? zy_conn_error_name(c) : NULL;
        snprintf(cl->first_error, sizeof(cl->first_error), "%s: %s%s%s", what, strerror(-r), name ? " " : "",
                 name ? name : "");
}

/* One spawn to its exit. Returns 0 when the final reply came (whatever the exit status), < 0
 * when the call failed; the connection is then reopened by the caller. */
static int spawn_once(struct client *cl, zy_conn *c) {
        struct zy_reply *first = NULL, *last = NULL;
        json_object *task, *v;
        int r;

        r = zy_call_send(c, SPAWN_METHOD, cl->params, NULL, 0, ZY_CALL_MORE);
        if (r < 0) {
                note_error(cl, "send", r, c);
                return r;
        }
        r = zy_reply_read(c, 1, &first);
        if (r < 0) {
                note_error(cl, "first reply", r, c);
                return r;
        }
        bool more = first->continues;
        zy_reply_free(first); /* closes the worker's pidfd */
        if (!more) {
                note_error(cl, "first reply without continues", -EPROTO, NULL);
                return -EPROTO;
        }
        r = zy_reply_read(c, 0, &last);
        if (r < 0) {
                note_error(cl, "final reply", r, c);
                return r;
        }
        cl->done++;
        if (!json_object_object_get_ex(last->parameters, "task", &task))
                note_error(cl, "final reply without task", -EBADMSG, NULL);
        else if (json_object_object_get_ex(task, "signal", &v))
                cl->signaled++;
        else if (json_object_object_get_ex(task, "exitCode", &v) && json_object_get_int(v) == 0)
                cl->exit0++;
        else
                cl->other_exit++;
        zy_reply_free(last);
        return 0;
}

static void *client_main(void *arg) {
        struct client *cl = arg;
        zy_conn *c = NULL;

        for (unsigned long i = 0; i < cl->spawns; i++) {
                if (!c) {
                        int r = zy_connect(cl->socket, &c);
                        if (r < 0) {
                                note_error(cl, "connect", r, NULL);
                                continue;
                        }
                }
                if (spawn_once(cl, c) < 0)
                        c = zy_conn_free(c); /* out of step: start again on a new connection */
        }
        zy_conn_free(c);
        return NULL;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: zygote-load --socket PATH [--clients N] [--spawns N] [--profile NAME] [-- ARGV...]\n");
}

int main(int argc, char **argv) {
        const char *socket = NULL, *profile = "default";
        unsigned long n_clients = 16, n_spawns = 100000;
        bool help = false;
        const struct bench_opt opts[] = {
                { "socket", BENCH_OPT_STRING, &socket, NULL },  { "clients", BENCH_OPT_ULONG, &n_clients, NULL },
                { "spawns", BENCH_OPT_ULONG, &n_spawns, NULL }, { "profile", BENCH_OPT_STRING, &profile, NULL },
                { "help", BENCH_OPT_FLAG, &help, NULL },        {},
        };
        int first_arg = bench_parse_opts(argc, argv, "zygote-load", opts);

        if (help) {
                usage(stdout);
                return 0;
        }
        if (first_arg < 0) {
                usage(stderr);
                return 2;
        }
        if (!socket || n_clients == 0 || n_clients > MAX_CLIENTS || n_spawns == 0) {
                usage(stderr);
                return 2;
        }

        struct client *clients = calloc(n_clients, sizeof(*clients));
        if (!clients)
                return 1;
        double t0 = now();
        for (unsigned long i = 0; i < n_clients; i++) {
                json_object *params = json_object_new_object(), *jargv = json_object_new_array();
                if (first_arg < argc)
                        for (int k = first_arg; k < argc; k++)
                                json_object_array_add(jargv, json_object_new_string(argv[k]));
                else
                        json_object_array_add(jargv, json_object_new_string("/bin/true"));
                json_object_object_add(params, "argv", jargv);
                json_object_object_add(params, "profile", json_object_new_string(profile));
                clients[i] = (struct client){
                        .socket = socket,
                        .params = params,
                        .spawns = n_spawns / n_clients + (i < n_spawns % n_clients),
                };
                if (pthread_create(&clients[i].thread, NULL, client_main, &clients[i]) != 0) {
                        fprintf(stderr, "zygote-load: pthread_create failed\n");
                        return 1;
                }
        }
        struct client sum = {};
        for (unsigned long i = 0; i < n_clients; i++) {
                pthread_join(clients[i].thread, NULL);
                json_object_put(clients[i].params);
                sum.done += clients[i].done;
                sum.exit0 += clients[i].exit0;
                sum.other_exit += clients[i].other_exit;
                sum.signaled += clients[i].signaled;
                sum.errors += clients[i].errors;
                if (!sum.first_error[0] && clients[i].first_error[0])
                        memcpy(sum.first_error, clients[i].first_error, sizeof(sum.first_error));
        }
        double secs = now() - t0;

        json_object *out = json_object_new_object();
        json_object_object_add(out, "spawns", json_object_new_int64((int64_t) n_spawns));
        json_object_object_add(out, "clients", json_object_new_int64((int64_t) n_clients));
        json_object_object_add(out, "done", json_object_new_int64((int64_t) sum.done));
        json_object_object_add(out, "exit0", json_object_new_int64((int64_t) sum.exit0));
        json_object_object_add(out, "other_exit", json_object_new_int64((int64_t) sum.other_exit));
        json_object_object_add(out, "signaled", json_object_new_int64((int64_t) sum.signaled));
        json_object_object_add(out, "errors", json_object_new_int64((int64_t) sum.errors));
        json_object_object_add(out, "first_error", json_object_new_string(sum.first_error));
        json_object_object_add(out, "seconds", json_object_new_double(secs));
        json_object_object_add(out, "rate", json_object_new_double(secs > 0 ? (double) sum.done / secs : 0));
        printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
        json_object_put(out);
        free(clients);
        return sum.exit0 == n_spawns && sum.errors == 0 ? 0 : 1;
}
