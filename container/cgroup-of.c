/* SPDX-License-Identifier: MIT */
/*
 * The cgroup manager's side for a container its caller did not create: the containerd shim
 * serves containers zygoted made, and finds their cgroups through the init's /proc/PID/cgroup.
 * Pause, Resume and Update then go through the same functions as zygote-runc's pause, resume
 * and update (cgroup.c, cgroup-limits.c), with the same refusals: the shim writes no cgroup file
 * of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <unistd.h>

#include "cgroup-resources.h"
#include "config-util.h"
#include "libcontainer.h"
#include "util.h"

/* The path of the hierarchy named controllers ("" for cgroup2) in /proc/PID/cgroup (pid 0: ours),
 * malloc'd; -ENOENT when the process is in none of it. */
static int path_in(pid_t pid, const char *controllers, char **ret) {
        _cleanup_free_ char *file = NULL, *line = NULL;
        size_t cap = 0;
        FILE *f;
        int r = -ENOENT;

        if (asprintf(&file, "/proc/%d/cgroup", (int) (pid > 0 ? pid : getpid())) < 0)
                return -ENOMEM;
        f = fopen(file, "re");
        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

                if (!c2)
                        continue;
                *c2 = '\0';
                if (!streq(c1 + 1, controllers))
                        continue;
                c2[1 + strcspn(c2 + 1, "\n")] = '\0';
                *ret = strdup(c2 + 1);
                r = *ret ? 0 : -ENOMEM;
                break;
        }
        fclose(f);
        return r;
}

/* One line of the init's /proc/PID/cgroup into cg: the directory below its hierarchy's mount. */
static int add_hierarchy(struct zct_cgroup *cg, const char *controllers, const char *path) {
        _cleanup_free_ char *mnt = NULL, *root = NULL, *own = NULL, *dir = NULL;
        bool v2 = controllers[0] == '\0';
        int r;

        if (zct_cgroup_find_mount(controllers, &mnt, &root) < 0)
                return 0; /* not mounted here: nothing of it to change */
        r = path_in(0, controllers, &own);
        if (r < 0)
                return r;
        /* The root, or the caller's own: writing there would limit or freeze more than the
         * container (the shim itself, or the whole host). */
        if (streq(path, "/") || streq(path, own))
                return -EPERM;
        if (!streq(root, "/") && strncmp(path, root, strlen(root)) == 0)
                path += strlen(root);
        if (asprintf(&dir, "%s%s", mnt, path) < 0 || cg->n_paths >= ELEMENTSOF(cg->paths))
                return -ENOMEM;
        if (zct_cgroup_has_controllers(controllers, "freezer") || (v2 && cg->v2_only)) {
                free(cg->freezer), cg->freezer = strdup(dir);
                cg->freezer_v1 = !v2;
        }
        if (v2)
                free(cg->unified), cg->unified = strdup(dir);
        if (zct_cgroup_has_controllers(controllers, "pids") || (v2 && cg->v2_only) || (!cg->procs && !v2))
                free(cg->procs), cg->procs = strdup(dir);
        cg->paths[cg->n_paths++] = TAKE_PTR(dir);
        return 0;
}

int zct_cgroup_of_pid(pid_t pid, struct zct_cgroup *ret) {
        struct zct_cgroup cg = { .v2_only = zct_cgroup_is_v2_only() };
        _cleanup_free_ char *file = NULL, *line = NULL;
        size_t cap = 0;
        FILE *f;
        int r = 0;

        if (pid <= 0)
                return -ESRCH;
        if (asprintf(&file, "/proc/%d/cgroup", (int) pid) < 0)
                return -ENOMEM;
        f = fopen(file, "re");
        if (!f)
                return errno == ENOENT ? -ESRCH : -errno;
        while (r >= 0 && getline(&line, &cap, f) > 0) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

                if (!c2)
                        continue;
                *c2 = '\0';
                c2[1 + strcspn(c2 + 1, "\n")] = '\0';
                r = add_hierarchy(&cg, c1 + 1, c2 + 1);
        }
        fclose(f);
        if (r >= 0 && cg.n_paths == 0)
                r = -EPERM;
        if (r < 0) {
                zct_cgroup_done(&cg);
                return r;
        }
        *ret = cg;
        return 0;
}

int zct_cgroup_dir(const struct zct_cgroup *cg, const char *controller, const char **ret) {
        _cleanup_free_ char *mnt = NULL, *root = NULL;
        size_t n;

        if (zct_cgroup_find_mount(controller && !cg->v2_only ? controller : "", &mnt, &root) < 0)
                return -ENOENT;
        n = strlen(mnt);
        for (size_t i = 0; i < cg->n_paths; i++)
                if (strncmp(cg->paths[i], mnt, n) == 0 && cg->paths[i][n] == '/') {
                        *ret = cg->paths[i];
                        return 0;
                }
        return -ENOENT;
}

/* A list of device rules, NULL for none (absent, null, or empty: the same rules). */
static json_object *rules(json_object *v) {
        return v && json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0 ? NULL : v;
}

/* Device rules cannot change: the container's own list passes (applied's, else config.json's),
 * another is refused. */
static int check_devices(json_object *applied, const char *bundle, json_object *res, char **ret_error) {
        _cleanup_free_ char *path = NULL, *err = NULL;
        json_object *devices = NULL, *config = NULL;
        bool same;

        /* an empty list is no list (Go's omitempty: containerd and runc never send one) */
        if (!json_object_object_get_ex(res, "devices", &devices) || !rules(devices))
                return 0;
        if (applied)
                same = json_object_equal(rules(devices), rules(zct_get(applied, "devices")));
        else {
                if (bundle && asprintf(&path, "%s/config.json", bundle) < 0)
                        return -ENOMEM;
                if (!path || zct_read_json(path, &config, &err) < 0)
                        config = NULL;
                same = json_object_equal(rules(devices),
                                         rules(zct_get(zct_get(zct_get(config, "linux"), "resources"), "devices")));
                json_object_put(config);
        }
        if (!same)
                return zct_errorf(ret_error, -EOPNOTSUPP,
                                  "linux.resources.devices: changing the device rules of a container is not "
                                  "supported by zygote-runc");
        return 0;
}

int zct_cgroup_update(const struct zct_cgroup *cg, json_object *applied, const char *bundle, json_object *res,
                      char **ret_error) {
        _cleanup_(zct_res_plan_done) struct zct_res_plan plan = {};
        unsigned v1, v2;
        int r;

        if (!json_object_is_type(res, json_type_object))
                return zct_errorf(ret_error, -EINVAL, "linux.resources: not a JSON object");
        r = check_devices(applied, bundle, res, ret_error);
        if (r >= 0)
                r = zct_res_host(&v1, &v2);
        if (r >= 0)
                r = zct_res_plan(res, v1, v2, &plan, ret_error);
        if (r >= 0)
                r = zct_res_apply(cg, &plan, ret_error);
        return r;
}

int zct_cgroup_oom_eventfd(const char *dir, int *ret_fd) {
        _cleanup_close_ int efd = -EBADF, ocfd = -EBADF;
        _cleanup_free_ char *line = NULL;
        int dfd, n, r;

        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        efd = eventfd(0, EFD_CLOEXEC);
        ocfd = openat(dfd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
        (void) close(dfd);
        if (efd < 0 || ocfd < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        n = asprintf(&line, "%d %d", efd, ocfd);
        if (n < 0)
                return -ENOMEM;
        r = zct_write_at(dir, "cgroup.event_control", line);
        if (r < 0)
                return r == -ENOENT ? -EOPNOTSUPP : r;
        *ret_fd = TAKE_FD(efd);
        return 0;
}

/* Whether path has no ".." component: below where it is joined to. */
static bool goes_down(const char *path) {
        for (const char *s = path + strspn(path, "/"); *s; s += strspn(s, "/")) {
                size_t n = strcspn(s, "/");

                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return false;
                s += n;
        }
        return true;
}

/* sub_of[k] = path for each of cg's directories in a hierarchy of the comma list controllers. */
static int name_sub(const struct zct_cgroup *cg, const char *controllers, size_t len, const char *path,
                    const char **sub_of, char **ret_error) {
        _cleanup_free_ char *list = strndup(controllers, len);
        char *save = NULL;

        if (!list)
                return -ENOMEM;
        for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
                _cleanup_free_ char *mnt = NULL, *root = NULL;
                size_t n;

                if (zct_cgroup_find_mount(c, &mnt, &root) < 0)
                        return zct_errorf(ret_error, -EINVAL, "unknown controller \"%s\"", c);
                n = strlen(mnt);
                for (size_t k = 0; k < cg->n_paths; k++)
                        if (strncmp(cg->paths[k], mnt, n) == 0 && cg->paths[k][n] == '/')
                                sub_of[k] = path;
        }
        return 0;
}

int zct_cgroup_join_sub(const struct zct_cgroup *cg, pid_t pid, const char *const *subs, size_t n, char **ret_error) {
        const char *sub_of[ELEMENTSOF(cg->paths)] = {};
        char v[24];
        int r;

        /* the forms without controllers first: a controller's own sub wins whatever the order */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        const char *colon = cg->v2_only ? NULL : strchr(subs[i], ':');
                        const char *path = cg->v2_only && strchr(subs[i], ':') ? strchr(subs[i], ':') + 1
                                           : colon                             ? colon + 1
                                                                               : subs[i];

                        if (!goes_down(path))
                                return zct_errorf(ret_error, -EINVAL, "%s is not a sub cgroup path", path);
                        if (pass == 0 && !colon)
                                for (size_t k = 0; k < cg->n_paths; k++)
                                        sub_of[k] = path;
                        if (pass == 1 && colon &&
                            (r = name_sub(cg, subs[i], (size_t) (colon - subs[i]), path, sub_of, ret_error)) < 0)
                                return r;
                }
        snprintf(v, sizeof(v), "%d", (int) pid);
        for (size_t k = 0; k < cg->n_paths; k++) {
                _cleanup_free_ char *dir = sub_of[k] ? zct_join_path(cg->paths[k], sub_of[k]) : strdup(cg->paths[k]);

                if (!dir)
                        return -ENOMEM;
                r = zct_write_at(dir, "cgroup.procs", v);
                if (r < 0)
                        return zct_errorf(ret_error, r, "adding pid %d to cgroups: %s/cgroup.procs: %s", (int) pid, dir,
                                          zct_errstr(-r));
        }
        return 0;
}
