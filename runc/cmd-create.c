/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc create, run and start. create forks the container's init (container.c), which
 * waits on ROOT/ID/exec.fifo; start writes a byte there; run does both and waits for the init.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"
#include "verbs.h"

/* crun's --config FILE: "config.json" is the bundle's, another name relative to the working
 * directory (as crun reads it). Create keeps a copy in the state directory, which exec reads too:
 * both see the same container whatever becomes of the file. *ret: absolute, or NULL for the
 * bundle's. */
static int config_path(const struct zct_ctx *c, const char *config, char **ret) {
        *ret = NULL;
        if (!config || strcmp(config, "config.json") == 0)
                return 0;
        *ret = realpath(config, NULL);
        if (!*ret)
                return zct_error(c, "--config %s: %s", config, zct_errstr(errno));
        return 0;
}

/* systemd's socket activation and readiness in the runtime's environment (runc and crun read
 * both there): LISTEN_FDS's fds from 3 passed on as preserved fds; NOTIFY_SOCKET relayed. */
static int activation_from_env(const struct zct_ctx *c, struct zct_create_args *a) {
        const char *fds = getenv("LISTEN_FDS"), *notify = getenv("NOTIFY_SOCKET");
        char *end;
        long n;

        if (fds) {
                errno = 0;
                n = strtol(fds, &end, 10);
                if (errno || end == fds || *end || n < 0 || n > 65536)
                        return zct_error(c, "LISTEN_FDS=%s: not a number of fds", fds);
                a->listen_fds = (int) n;
                a->p.preserve_fds += (int) n;
        }
        a->notify_socket = notify && *notify ? notify : NULL;
        return 0;
}

static int create_or_run(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv, bool run) {
        struct zrc_opt o[] = { { "bundle", 'b', true },        { "pid-file", 0, true },  { "console-socket", 0, true },
                               { "preserve-fds", 0, true },    { "detach", 'd', false }, { "no-pivot", 0, false },
                               { "no-new-keyring", 0, false }, { "keep", 0, false },     { "no-subreaper", 0, false },
                               { "config", 'f', true } };
        struct zct_create_args a = { .run = run };
        _cleanup_free_ char *config = NULL;
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);

        if (k < 0)
                return 1;
        zrc_proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
        a.bundle = zrc_opt_get(o, ELEMENTSOF(o), "bundle");
        a.keep = zrc_opt_get(o, ELEMENTSOF(o), "keep") != NULL;
        if (!a.bundle)
                a.bundle = ".";
        if (config_path(c, zrc_opt_get(o, ELEMENTSOF(o), "config"), &config) != 0 || activation_from_env(c, &a) != 0)
                return 1;
        a.config = config;
        return zct_container_create(c, &a);
}

int zrc_cmd_create(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, false);
}

int zrc_cmd_run(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, true);
}

/* NOTIFY_SOCKET: the container's socket bound again before the start (create's went with it),
 * *ret_fd; -EBADF when there is none to relay (no NOTIFY_SOCKET, or none at create). */
static int notify_rebind(const struct zct_ctx *c, const struct zct_state *st, const char *host, int *ret_fd) {
        int r;

        *ret_fd = -EBADF;
        if (!host || !*host)
                return 0;
        r = zct_notify_rebind(st->dir, ret_fd);
        if (r < 0 && r != -ENOENT)
                return zct_error(c, "NOTIFY_SOCKET: the container's socket: %s", zct_errstr(-r)), r;
        return 0;
}

/* runc's: start returns once the container said READY=1 (or is gone). */
static int notify_wait(const struct zct_ctx *c, const struct zct_state *st, const char *host, int notify) {
        _cleanup_close_ int init = -EBADF;
        int r;

        if (notify < 0)
                return 0;
        init = zct_state_pidfd(st);
        if (init < 0)
                return 0; /* gone already: nothing will say it is ready */
        r = zct_notify_relay(notify, host, init, st->pid);
        if (r < 0)
                return zct_error(c, "NOTIFY_SOCKET %s: %s", host, zct_errstr(-r)), r;
        return 0;
}

int zrc_cmd_start(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        const char *host_notify = getenv("NOTIFY_SOCKET");
        _cleanup_free_ char *fifo = NULL;
        struct zct_state st;
        const char *id;
        _cleanup_close_ int report = -EBADF, notify = -EBADF;
        int k, fd, ret = 1;

        k = zrc_verb_parse(c, v, argc, argv, NULL, 0, &st);
        if (k < 0)
                return 1;
        id = argv[k];
        switch (zct_state_status(&st)) {
        case ZCT_STATUS_CREATED:
                break;
        case ZCT_STATUS_STOPPED:
                zct_error(c, "cannot start a container that has stopped");
                goto out;
        default:
                zct_error(c, "cannot start an already running container");
                goto out;
        }
        if (asprintf(&fifo, "%s/exec.fifo", st.dir) < 0 || notify_rebind(c, &st, host_notify, &notify) < 0)
                goto out;
        /* before the byte: the init may have run its startContainer hooks and exec'd by the time
         * we would open it after */
        report = zct_hooks_open_report(&st);
        fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                zct_error(c, "cannot start container %s: %s", id,
                          errno == ENXIO ? "its init is gone" : zct_errstr(errno));
                goto out;
        }
        if (write(fd, "s", 1) != 1)
                zct_error(c, "cannot start container %s: %s", id, zct_errstr(errno));
        else
                ret = report >= 0 && zct_hooks_wait_start(c, &st, report) < 0 ? 1 : 0;
        close(fd);
        (void) unlink(fifo);
        /* a failing poststart hook fails start and ends the container, as runc's does */
        if (ret == 0 && zct_hooks_poststart(c, &st) < 0) {
                _cleanup_close_ int init = zct_state_pidfd(&st);
                if (init >= 0)
                        (void) pidfd_kill(init, SIGKILL);
                ret = 1;
        }
        /* started: delete or kill may come while it waits for READY=1 */
        if (ret == 0 && notify >= 0)
                zrc_verb_unlock();
        if (ret == 0 && notify_wait(c, &st, host_notify, notify) < 0)
                ret = 1;
out:
        zct_state_done(&st);
        return ret;
}
