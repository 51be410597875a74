/* SPDX-License-Identifier: MIT */
/*
 * Delete of a container started by zygoted (container.c's facet): a child of zygoted's kills
 * what is left in the container's cgroups and removes them and its state (zygote-runc's own
 * destroy, which may wait out the kernel's removal of a v1 cgroup), while the loop serves on;
 * the Delete's reply goes out once that child has exited, as runc's delete returns only when
 * the container is gone. A caller that leaves meanwhile gets nothing; the child finishes alone.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "container.h"
#include "daemon.h"
#include "fork-gate.h"
#include "log.h"
#include "pidfd-util.h"
#include "pidref.h"
#include "libcontainer.h"
#include "server.h"
#include "signal-util.h"
#include "util.h"

struct zd_container_delete {
        struct zd_container_delete *next;
        struct zd_daemon *d;
        struct zd_conn *conn; /* NULL once the caller left */
        json_object *reply;
        struct zc_pidref child;
        ev_io watch;
};

static void delete_free(struct zd_container_delete *x) {
        struct zd_daemon *d = x->d;

        for (struct zd_container_delete **p = &d->container_deletes; *p; p = &(*p)->next)
                if (*p == x) {
                        *p = x->next;
                        break;
                }
        ev_io_stop(d->loop, &x->watch);
        zc_pidref_done(&x->child);
        json_object_put(x->reply);
        free(x);
}

static void on_child_exit(struct ev_loop *loop, ev_io *w, int revents) {
        struct zd_container_delete *x = w->data;

        (void) pidfd_reap(x->child.fd, NULL);
        if (x->conn)
                zd_reply(x->conn, TAKE_PTR(x->reply), false, -EBADF);
        delete_free(x);
}

int zd_container_destroy(struct zd_daemon *d, const char *id, struct zd_conn *c, json_object *reply) {
        struct zd_container_delete *x = NULL;
        struct zct_state st = {};
        int pidfd = -EBADF;
        pid_t pid;

        if (zct_state_load(d->container_root, id, &st) < 0)
                goto now; /* no state: nothing to remove */
        x = calloc(1, sizeof(*x));
        zd_fork_gate();
        pid = x ? fork() : -1;
        int err = x ? errno : ENOMEM; /* fork's, before anything else may change errno */
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                zc_signals_reset(NULL);
                zct_destroy(&st);
                _exit(0);
        }
        zct_state_done(&st);
        if (pid > 0)
                pidfd = pidfd_open_pid(pid);
        if (pid < 0 || pidfd < 0) {
                zd_log(LOG_WARNING, "container %s: its cgroup and state stay: %s", id,
                       strerror(pid < 0 ? err : -pidfd));
                if (pid > 0) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                }
                free(x);
                goto now;
        }
        *x = (struct zd_container_delete){ .d = d, .conn = c, .reply = reply, .child = zc_pidref_make(pid, pidfd) };
        ev_io_init(&x->watch, on_child_exit, pidfd, EV_READ);
        x->watch.data = x;
        ev_io_start(d->loop, &x->watch);
        /* the connection's data is the task module's: the disconnect reaches us through
         * zd_container_drop_conn() instead */
        x->next = d->container_deletes;
        d->container_deletes = x;
        return 0;
now:
        if (c)
                zd_reply(c, reply, false, -EBADF);
        else
                json_object_put(reply);
        return 0;
}

void zd_container_deletes_drop_conn(struct zd_daemon *d, struct zd_conn *c) {
        for (struct zd_container_delete *x = d->container_deletes; x; x = x->next)
                if (x->conn == c)
                        x->conn = NULL;
}

void zd_container_deletes_free(struct zd_daemon *d) {
        while (d->container_deletes)
                delete_free(d->container_deletes);
}
