/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc kill, delete, pause and resume: signals to the container's processes (by pidfd),
 * its removal (process.c's destroy) and the cgroup freezer.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"
#include "verbs.h"

int zrc_cmd_kill(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "all", 'a', false } };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        const char *id, *signame;
        struct zrc_state st;
        int sig, fd, r, ret = 1;

        if (k < 0)
                return 1;
        id = argv[k];
        signame = k + 1 < argc ? argv[k + 1] : NULL;
        /* 0: no signal, only whether the process is there, as kill(2) takes it */
        sig = signame && streq(signame, "0") ? 0 : zrc_parse_signal(signame);
        if (sig < 0)
                return zrc_error(c, "unknown signal \"%s\"", signame);
        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        if (o[0].value) { /* --all */
                _cleanup_free_ int *fds = NULL;
                size_t n = 0;
                r = zrc_cgroup_pidfds(&st.cgroup, &fds, &n);

                if (r < 0)
                        zrc_error(c, "kill --all: %s", zrc_errstr(-r));
                else {
                        for (size_t i = 0; i < n; i++) {
                                (void) pidfd_kill(fds[i], sig);
                                close(fds[i]);
                        }
                        if (sig == SIGKILL)
                                (void) zrc_cgroup_freeze(&st.cgroup, false);
                        ret = 0;
                }
                goto out;
        }
        fd = zrc_state_pidfd(&st);
        if (fd < 0) {
                zrc_error(c, "container not running");
                goto out;
        }
        r = pidfd_kill(fd, sig);
        if (r < 0)
                zrc_error(c, "kill: %s", zrc_errstr(-r));
        else
                ret = 0;
        if (sig == SIGKILL && zrc_cgroup_is_frozen(&st.cgroup) > 0)
                (void) zrc_cgroup_freeze(&st.cgroup, false);
        close(fd);
out:
        zrc_state_done(&st);
        return ret;
}

int zrc_cmd_delete(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "force", 'f', false } };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        const char *id;
        struct zrc_state st;
        enum zrc_status s;
        bool force;
        int r;

        if (k < 0)
                return 1;
        id = argv[k];
        force = o[0].value != NULL;
        r = zrc_state_load(c->root, id, &st);
        if (r == -ENOENT) {
                _cleanup_free_ char *dir = NULL;
                /* a create that died half-way may have left the directory without state */
                if (zrc_state_dir(c->root, id, &dir) >= 0)
                        (void) zrc_rm_rf(dir);
                return force ? 0 : zrc_error(c, "container does not exist: %s", id);
        }
        if (r < 0)
                return zrc_error(c, "container %s: state: %s", id, zrc_errstr(-r));
        s = zrc_state_status(&st);
        if ((s == ZRC_STATUS_RUNNING || s == ZRC_STATUS_PAUSED) && !force) {
                zrc_error(c, "cannot delete container %s that is not stopped: %s", id, zrc_status_to_string(s));
                zrc_state_done(&st);
                return 1;
        }
        zrc_destroy(&st);
        zrc_hooks_poststop(c, &st);
        zrc_state_done(&st);
        return 0;
}

static int freeze(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv, bool frozen) {
        struct zrc_state st;
        enum zrc_status s;
        int r, ret = 1;

        if (zrc_verb_parse(c, v, argc, argv, NULL, 0, &st) < 0)
                return 1;
        s = zrc_state_status(&st);
        if (frozen && s != ZRC_STATUS_RUNNING && s != ZRC_STATUS_CREATED)
                zrc_error(c, "container not running");
        else if (!frozen && s != ZRC_STATUS_PAUSED)
                zrc_error(c, "container not paused");
        else if ((r = zrc_cgroup_freeze(&st.cgroup, frozen)) < 0)
                zrc_error(c, "freezer: %s", zrc_errstr(-r));
        else
                ret = 0;
        zrc_state_done(&st);
        return ret;
}

int zrc_cmd_pause(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return freeze(c, v, argc, argv, true);
}

int zrc_cmd_resume(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return freeze(c, v, argc, argv, false);
}
