/* SPDX-License-Identifier: MIT */
/* The container's cgroup through the container library's manager (container/cgroup-of.c). */
#include "cgroup.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "libcontainer.h"
#include "util.h"

bool zs_cgroup_v2(void) {
        return zct_cgroup_is_v2_only();
}

int zs_cgroup_dir(pid_t pid, const char *controller, char **ret) {
        _cleanup_(zct_cgroup_done) struct zct_cgroup cg = {};
        const char *dir;
        int r;

        r = zct_cgroup_of_pid(pid, &cg);
        if (r >= 0)
                r = zct_cgroup_dir(&cg, controller, &dir);
        if (r < 0)
                return r;
        *ret = strdup(dir);
        return *ret ? 0 : -ENOMEM;
}

int zs_cgroup_freeze(pid_t init, bool frozen) {
        _cleanup_(zct_cgroup_done) struct zct_cgroup cg = {};
        int r;

        r = zct_cgroup_of_pid(init, &cg);
        return r < 0 ? r : zct_cgroup_freeze(&cg, frozen);
}

int zs_cgroup_update(pid_t init, const char *bundle, const char *json, size_t length, char **ret_error) {
        _cleanup_(zct_cgroup_done) struct zct_cgroup cg = {};
        json_tokener *tok;
        json_object *res;
        int r;

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        res = json_tokener_parse_ex(tok, json, (int) length);
        json_tokener_free(tok);
        if (!res) {
                *ret_error = strdup("linux.resources: not JSON");
                return -EINVAL;
        }
        r = zct_cgroup_of_pid(init, &cg);
        if (r >= 0)
                r = zct_cgroup_update(&cg, NULL, bundle, res, ret_error);
        json_object_put(res);
        return r;
}

int zs_cgroup_oom_eventfd(const char *dir, int *ret_fd) {
        return zct_cgroup_oom_eventfd(dir, ret_fd);
}
