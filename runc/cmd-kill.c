/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc kill, delete, pause and resume: signals to the container's processes (by pidfd),
 * its removal (process.c's destroy) and the cgroup freezer.
 */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "util.h"
#include "verbs.h"

int zrc_cmd_kill(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "all", 'a', false } };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        const char *id, *signame;
        struct zct_state st;
        int sig, fd, r, ret = 1;

        if (k < 0)
                return 1;
        id = argv[k];
        signame = k + 1 < argc ? argv[k + 1] : NULL;
        /* 0: no signal, only whether the process is there, as kill(2) takes it */
        sig = signame && streq(signame, "0") ? 0 : zct_parse_signal(signame);
        if (sig < 0)
                return zct_error(c, "unknown signal \"%s\"", signame);
        if (zct_runc_load_state(c, id, &st) < 0)
                return 1;
        if (o[0].value) { /* --all */
                _cleanup_free_ int *fds = NULL;
                size_t n = 0;
                r = zct_cgroup_pidfds(&st.cgroup, &fds, &n);

                if (r < 0)
                        zct_error(c, "kill --all: %s", zct_errstr(-r));
                else {
                        for (size_t i = 0; i < n; i++) {
                                (void) pidfd_kill(fds[i], sig);
                                close(fds[i]);
                        }
                        if (sig == SIGKILL)
                                (void) zct_cgroup_freeze(&st.cgroup, false);
                        ret = 0;
                }
                goto out;
        }
        fd = zct_state_pidfd(&st);
        if (fd < 0) {
                zct_error(c, "container not running");
                goto out;
        }
        r = pidfd_kill(fd, sig);
        if (r < 0)
                zct_error(c, "kill: %s", zct_errstr(-r));
        else
                ret = 0;
        if (sig == SIGKILL && zct_cgroup_is_frozen(&st.cgroup) > 0)
                (void) zct_cgroup_freeze(&st.cgroup, false);
        close(fd);
out:
        zct_state_done(&st);
        return ret;
}

static int delete_one(const struct zct_ctx *c, const char *id, bool force) {
        struct zct_state st;
        enum zct_status s;
        int r;

        r = zct_state_load(c->root, id, &st);
        if (r == -ENOENT) {
                _cleanup_free_ char *dir = NULL;
                /* a create that died half-way may have left the directory without state */
                if (zct_state_dir(c->root, id, &dir) >= 0)
                        (void) zct_rm_rf(dir);
                return force ? 0 : zct_error(c, "container does not exist: %s", id);
        }
        if (r < 0)
                return zct_error(c, "container %s: state: %s", id, zct_errstr(-r));
        s = zct_state_status(&st);
        if ((s == ZCT_STATUS_RUNNING || s == ZCT_STATUS_PAUSED) && !force) {
                zct_error(c, "cannot delete container %s that is not stopped: %s", id, zct_status_to_string(s));
                zct_state_done(&st);
                return 1;
        }
        zct_destroy(&st);
        zct_hooks_poststop(c, &st);
        zct_state_done(&st);
        return 0;
}

/* crun's delete --regex PATTERN: every container of this --root whose id the extended regular
 * expression matches (anywhere in it, as crun matches), each under its own lock. */
static int delete_matching(const struct zct_ctx *c, const char *pattern, bool force) {
        struct dirent **de = NULL;
        regex_t re;
        int n, ret = 0;

        if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
                return zct_error(c, "delete: --regex: invalid regular expression \"%s\"", pattern);
        n = scandir(c->root, &de, NULL, alphasort);
        for (int i = 0; i < n; i++) {
                const char *id = de[i]->d_name;

                if (id[0] != '.' && regexec(&re, id, 0, NULL, 0) == 0) {
                        int lock = zct_state_lock(c->root, id);
                        if (lock >= 0 || lock == -ENOENT)
                                ret |= delete_one(c, id, force);
                        else
                                ret |= zct_error(c, "delete: the lock of container %s: %s", id, zct_errstr(-lock));
                        if (lock >= 0)
                                close(lock);
                }
                free(de[i]);
        }
        free(de);
        regfree(&re);
        return ret ? 1 : 0;
}

int zrc_cmd_delete(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "force", 'f', false }, { "regex", 'r', false } };
        int k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), NULL);
        int lock, r;

        if (k < 0)
                return 1;
        if (o[1].value)
                return delete_matching(c, argv[k], o[0].value != NULL);
        /* the verb takes no lock of its own (a pattern is no id): held until the end here */
        lock = zct_state_lock(c->root, argv[k]);
        if (lock < 0 && lock != -ENOENT && lock != -EINVAL)
                return zct_error(c, "delete: the lock of container %s: %s", argv[k], zct_errstr(-lock));
        r = delete_one(c, argv[k], o[0].value != NULL);
        if (lock >= 0)
                close(lock);
        return r;
}

static int freeze(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv, bool frozen) {
        struct zct_state st;
        enum zct_status s;
        int r, ret = 1;

        if (zrc_verb_parse(c, v, argc, argv, NULL, 0, &st) < 0)
                return 1;
        s = zct_state_status(&st);
        if (frozen && s != ZCT_STATUS_RUNNING && s != ZCT_STATUS_CREATED)
                zct_error(c, "container not running");
        else if (!frozen && s != ZCT_STATUS_PAUSED)
                zct_error(c, "container not paused");
        else if ((r = zct_cgroup_freeze(&st.cgroup, frozen)) < 0)
                zct_error(c, "freezer: %s", zct_errstr(-r));
        else
                ret = 0;
        zct_state_done(&st);
        return ret;
}

int zrc_cmd_pause(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return freeze(c, v, argc, argv, true);
}

int zrc_cmd_resume(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        return freeze(c, v, argc, argv, false);
}
