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

/* crun's --config FILE (relative: to the bundle), as crun's suite passes it. Only the bundle's own
 * config.json: exec and the hooks' state read the config from the bundle again, so another file
 * would give them another container than the one created. */
static int check_config(const struct zct_ctx *c, const char *bundle, const char *config) {
        _cleanup_free_ char *path = NULL, *ours = NULL;
        struct stat a, b;

        if (!config)
                return 0;
        if (asprintf(&path, "%s/%s", config[0] == '/' ? "" : bundle, config) < 0 ||
            asprintf(&ours, "%s/config.json", bundle) < 0)
                return zct_error(c, "%s", zct_errstr(ENOMEM));
        if (stat(path, &a) < 0)
                return zct_error(c, "--config %s: %s", config, zct_errstr(errno));
        if (stat(ours, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                return zct_error(c, "--config %s: only the bundle's config.json is supported", config);
        return 0;
}

static int create_or_run(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv, bool run) {
        struct zrc_opt o[] = { { "bundle", 'b', true },        { "pid-file", 0, true },  { "console-socket", 0, true },
                               { "preserve-fds", 0, true },    { "detach", 'd', false }, { "no-pivot", 0, false },
                               { "no-new-keyring", 0, false }, { "keep", 0, false },     { "no-subreaper", 0, false },
                               { "config", 'f', true } };
        struct zct_create_args a = { .run = run };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);

        if (k < 0)
                return 1;
        zrc_proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
        a.bundle = zrc_opt_get(o, ELEMENTSOF(o), "bundle");
        a.keep = zrc_opt_get(o, ELEMENTSOF(o), "keep") != NULL;
        if (!a.bundle)
                a.bundle = ".";
        if (check_config(c, a.bundle, zrc_opt_get(o, ELEMENTSOF(o), "config")) != 0)
                return 1;
        return zct_container_create(c, &a);
}

int zrc_cmd_create(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, false);
}

int zrc_cmd_run(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return create_or_run(c, v, argc, argv, true);
}

int zrc_cmd_start(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        _cleanup_free_ char *fifo = NULL;
        struct zct_state st;
        const char *id;
        _cleanup_close_ int report = -EBADF;
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
        if (asprintf(&fifo, "%s/exec.fifo", st.dir) < 0)
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
out:
        zct_state_done(&st);
        return ret;
}
