/* SPDX-License-Identifier: MIT */
/*
 * The host side of linux.resources: which controllers this host has where (a v1 hierarchy or
 * cgroup2), and the plan's writes (cgroup-resources.c) into the container's directories, for
 * create and for update.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-resources.h"
#include "libcontainer.h"
#include "util.h"

/* The mount points of each controller's v1 hierarchy and of cgroup2 (the first of each). */
struct host {
        char *v1[_ZCT_RES_MAX];
        char *v2;
        unsigned v1_mask, v2_mask;
};

static void host_done(struct host *h) {
        for (size_t i = 0; i < _ZCT_RES_MAX; i++)
                free(h->v1[i]);
        free(h->v2);
}

/* Whether the comma list has the word. */
static bool has_word(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
                        return true;
        return false;
}

/* cgroup2 lists what a directory's children may enable in its cgroup.controllers. */
static unsigned v2_controllers(const char *mnt) {
        _cleanup_free_ char *p = NULL;
        char buf[512] = "";
        unsigned mask = ZCT_RES_BIT(ZCT_RES_UNIFIED);
        FILE *f;

        if (asprintf(&p, "%s/cgroup.controllers", mnt) < 0)
                return mask;
        f = fopen(p, "re");
        if (!f)
                return mask;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
                for (int c = 0; c < ZCT_RES_UNIFIED; c++)
                        if (streq(w, zct_res_controller_name(c, true)))
                                mask |= ZCT_RES_BIT(c);
        return mask;
}

static int host_probe(struct host *ret) {
        _cleanup_free_ char *line = NULL;
        struct host h = {};
        size_t cap = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                char mnt[4096], fstype[64], super[1024];
                char *sep = strstr(line, " - ");

                if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
                    sscanf(sep + 3, "%63s %*s %1023s", fstype, super) != 2)
                        continue;
                if (streq(fstype, "cgroup2") && !h.v2) {
                        h.v2 = strdup(mnt);
                        h.v2_mask = v2_controllers(mnt);
                }
                if (!streq(fstype, "cgroup"))
                        continue;
                for (int c = 0; c < ZCT_RES_UNIFIED; c++)
                        if (!h.v1[c] && has_word(super, zct_res_controller_name(c, false))) {
                                h.v1[c] = strdup(mnt);
                                h.v1_mask |= ZCT_RES_BIT(c);
                        }
        }
        fclose(f);
        /* a controller bound to a v1 hierarchy is not cgroup2's */
        h.v2_mask &= ~h.v1_mask;
        *ret = h;
        return 0;
}

int zct_res_host(unsigned *ret_v1, unsigned *ret_v2) {
        struct host h;
        int r = host_probe(&h);

        if (r < 0)
                return r;
        *ret_v1 = h.v1_mask;
        *ret_v2 = h.v2_mask;
        host_done(&h);
        return 0;
}

/* The container's directory below mnt, or NULL. */
static const char *dir_below(const struct zct_cgroup *cg, const char *mnt) {
        size_t n = mnt ? strlen(mnt) : 0;

        for (size_t i = 0; mnt && i < cg->n_paths; i++)
                if (strncmp(cg->paths[i], mnt, n) == 0 && cg->paths[i][n] == '/')
                        return cg->paths[i];
        return NULL;
}

static int write_one(const struct host *h, const struct zct_cgroup *cg, const struct zct_res_write *w,
                     char **ret_error) {
        const char *mnt = w->v2 ? h->v2 : h->v1[w->controller];
        const char *dir = dir_below(cg, mnt), *file = w->file, *value = w->value;
        int r;

        if (!dir) {
                if (ret_error && asprintf(ret_error, "%s: the container has no cgroup in the %s hierarchy", w->field,
                                          w->v2 ? "cgroup2" : zct_res_controller_name(w->controller, false)) < 0)
                        *ret_error = NULL;
                return -ENOENT;
        }
        if (w->enable) {
                r = zct_cgroup_enable_v2(mnt, dir, w->enable);
                if (r < 0) {
                        if (ret_error && asprintf(ret_error, "%s: enabling the %s controller of cgroup2 above %s: %s",
                                                  w->field, w->enable, dir, strerror(-r)) < 0)
                                *ret_error = NULL;
                        return r;
                }
        }
        r = zct_write_at(dir, file, value);
        if (r == -ENOENT && w->alt_file) {
                file = w->alt_file;
                value = w->alt_value;
                r = zct_write_at(dir, file, value);
        }
        if (r == -ENOENT) {
                /* the controller is there but not this file: the kernel does not offer the setting
                 * (no BFQ for a weight, a page size it does not have, no swap accounting) */
                if (ret_error &&
                    asprintf(ret_error, "%s: this kernel has no %s%s%s in the container's cgroup %s", w->field, w->file,
                             w->alt_file ? " or " : "", w->alt_file ? w->alt_file : "", dir) < 0)
                        *ret_error = NULL;
                return -EOPNOTSUPP;
        }
        if (r < 0 && ret_error &&
            asprintf(ret_error, "%s: cgroup %s: %s \"%s\": %s", w->field, dir, file, value, strerror(-r)) < 0)
                *ret_error = NULL;
        return r;
}

int zct_res_apply(const struct zct_cgroup *cg, const struct zct_res_plan *plan, char **ret_error) {
        struct host h;
        int r;

        if (plan->n == 0)
                return 0;
        r = host_probe(&h);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < plan->n; i++) {
                _cleanup_free_ char *err = NULL;

                r = write_one(&h, cg, &plan->w[i], &err);
                /* v1 keeps memory <= memory+swap at every step: raising both needs memsw first */
                if (r == -EINVAL && plan->w[i].swap_partner && i + 1 < plan->n) {
                        r = write_one(&h, cg, &plan->w[i + 1], ret_error);
                        if (r >= 0)
                                r = write_one(&h, cg, &plan->w[i], ret_error);
                        i++;
                } else if (r < 0 && ret_error) {
                        free(*ret_error);
                        *ret_error = TAKE_PTR(err);
                }
        }
        host_done(&h);
        return r;
}

/* cgroup2: a controller is usable in dir only when every ancestor below the mount enables it
 * for its children ("+pids" in cgroup.subtree_control), from the mount's root down. */
int zct_cgroup_enable_v2(const char *mnt, const char *dir, const char *controller) {
        _cleanup_free_ char *copy = strdup(dir);
        char value[64];
        char *p;
        int r;

        if (!copy)
                return -ENOMEM;
        snprintf(value, sizeof(value), "+%s", controller);
        p = copy + strlen(mnt);
        for (;;) {
                char saved = *p;

                *p = '\0';
                r = zct_write_at(copy, "cgroup.subtree_control", value);
                *p = saved;
                if (r < 0)
                        return r;
                p = strchr(p + 1, '/');
                if (!p)
                        return 0;
        }
}
