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
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"
#include "verbs.h"

static int create_or_run(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv, bool run) {
        struct zrc_opt o[] = { { "bundle", 'b', true },        { "pid-file", 0, true },  { "console-socket", 0, true },
                               { "preserve-fds", 0, true },    { "detach", 'd', false }, { "no-pivot", 0, false },
                               { "no-new-keyring", 0, false }, { "keep", 0, false },     { "no-subreaper", 0, false } };
        struct zrc_create_args a = { .run = run };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);

        if (k < 0)
                return 1;
        zrc_proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
        a.bundle = zrc_opt_get(o, ELEMENTSOF(o), "bundle");
        a.keep = zrc_opt_get(o, ELEMENTSOF(o), "keep") != NULL;
        if (!a.bundle)
                a.bundle = ".";
        return zrc_container_create(c, &a);
}

int zrc_cmd_create(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, false);
}

int zrc_cmd_run(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, true);
}

int zrc_cmd_start(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        _cleanup_free_ char *fifo = NULL;
        struct zrc_state st;
        const char *id;
        _cleanup_close_ int report = -EBADF;
        int k, fd, ret = 1;

        k = zrc_verb_parse(c, v, argc, argv, NULL, 0, &st);
        if (k < 0)
                return 1;
        id = argv[k];
        switch (zrc_state_status(&st)) {
        case ZRC_STATUS_CREATED:
                break;
        case ZRC_STATUS_STOPPED:
                zrc_error(c, "cannot start a container that has stopped");
                goto out;
        default:
                zrc_error(c, "cannot start an already running container");
                goto out;
        }
        if (asprintf(&fifo, "%s/exec.fifo", st.dir) < 0)
                goto out;
        /* before the byte: the init may have run its startContainer hooks and exec'd by the time
         * we would open it after */
        report = zrc_hooks_open_report(&st);
        fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                zrc_error(c, "cannot start container %s: %s", id,
                          errno == ENXIO ? "its init is gone" : zrc_errstr(errno));
                goto out;
        }
        if (write(fd, "s", 1) != 1)
                zrc_error(c, "cannot start container %s: %s", id, zrc_errstr(errno));
        else
                ret = report >= 0 && zrc_hooks_wait_start(c, &st, report) < 0 ? 1 : 0;
        close(fd);
        (void) unlink(fifo);
        /* a failing poststart hook fails start and ends the container, as runc's does */
        if (ret == 0 && zrc_hooks_poststart(c, &st) < 0) {
                _cleanup_close_ int init = zrc_state_pidfd(&st);
                if (init >= 0)
                        (void) pidfd_kill(init, SIGKILL);
                ret = 1;
        }
out:
        zrc_state_done(&st);
        return ret;
}
