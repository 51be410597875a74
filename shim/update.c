/* SPDX-License-Identifier: MIT */
/* Update: OCI LinuxResources written to the container's cgroup. */
#include "update.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

/* What the object asks for; has_* for the fields it has. */
struct resources {
        bool has_limit, has_reservation, has_swap, has_shares, has_quota, has_period, has_pids;
        int64_t limit, reservation, swap, quota, pids;
        uint64_t shares, period;
        const char *cpus, *mems;
};

static int write_file(const char *dir, const char *file, const char *value) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = strlen(value);

        if (asprintf(&path, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        if (write(fd, value, n) != (ssize_t) n)
                return negative_errno();
        return 0;
}

static int write_i64(const char *dir, const char *file, int64_t v, bool max_when_negative) {
        char buf[32];

        if (max_when_negative && v < 0)
                return write_file(dir, file, "max");
        snprintf(buf, sizeof(buf), "%" PRId64, v);
        return write_file(dir, file, buf);
}

static bool get_int(json_object *o, const char *key, int64_t *ret) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

static bool is_empty(json_object *v) {
        return !v || (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0) ||
               (json_object_is_type(v, json_type_object) && json_object_object_length(v) == 0);
}

static int parse(json_object *root, struct resources *r, const char **ret_what) {
        json_object *mem = NULL, *cpu = NULL, *pids = NULL, *v;
        int64_t i;

        if (!json_object_is_type(root, json_type_object))
                return *ret_what = "resources", -EINVAL;
        /* devices are not updated (nor are they by runc update); anything else that asks for
         * something is refused rather than left unapplied */
        json_object_object_foreach(root, key, val) {
                if (streq(key, "memory") || streq(key, "cpu") || streq(key, "pids") || streq(key, "devices") ||
                    is_empty(val))
                        continue;
                return *ret_what = "resources: only memory, cpu and pids can be updated", -EINVAL;
        }
        json_object_object_get_ex(root, "memory", &mem);
        json_object_object_get_ex(root, "cpu", &cpu);
        json_object_object_get_ex(root, "pids", &pids);
        r->has_limit = get_int(mem, "limit", &r->limit);
        r->has_reservation = get_int(mem, "reservation", &r->reservation);
        r->has_swap = get_int(mem, "swap", &r->swap);
        r->has_quota = get_int(cpu, "quota", &r->quota);
        r->has_pids = get_int(pids, "limit", &r->pids);
        if ((r->has_shares = get_int(cpu, "shares", &i)))
                r->shares = (uint64_t) (i < 0 ? 0 : i);
        if ((r->has_period = get_int(cpu, "period", &i)))
                r->period = (uint64_t) (i < 0 ? 0 : i);
        if (cpu && json_object_object_get_ex(cpu, "cpus", &v))
                r->cpus = json_object_get_string(v);
        if (cpu && json_object_object_get_ex(cpu, "mems", &v))
                r->mems = json_object_get_string(v);
        return 0;
}

/* Skips what this kernel does not have (a controller not enabled: -EOPNOTSUPP). */
static int step(int r) {
        return r == -EOPNOTSUPP ? 0 : r;
}

static int apply_v2(pid_t init, const struct resources *r) {
        _cleanup_free_ char *dir = NULL;
        char buf[64];
        int e;

        e = zs_cgroup_dir(init, NULL, &dir);
        if (e < 0)
                return e;
        if (r->has_limit && (e = step(write_i64(dir, "memory.max", r->limit, true))) < 0)
                return e;
        if (r->has_reservation && (e = step(write_i64(dir, "memory.low", r->reservation, true))) < 0)
                return e;
        /* OCI's swap is memory and swap together; v2's swap.max is the swap alone */
        if (r->has_swap && r->has_limit && r->swap > 0 && r->limit > 0 &&
            (e = step(write_i64(dir, "memory.swap.max", r->swap - r->limit, false))) < 0)
                return e;
        if (r->has_shares && r->shares >= 2) {
                snprintf(buf, sizeof(buf), "%" PRIu64, 1 + ((r->shares - 2) * 9999) / 262142);
                if ((e = step(write_file(dir, "cpu.weight", buf))) < 0)
                        return e;
        }
        if (r->has_quota || r->has_period) {
                uint64_t period = r->has_period && r->period > 0 ? r->period : 100000;

                if (r->has_quota && r->quota > 0)
                        snprintf(buf, sizeof(buf), "%" PRId64 " %" PRIu64, r->quota, period);
                else
                        snprintf(buf, sizeof(buf), "max %" PRIu64, period);
                if ((e = step(write_file(dir, "cpu.max", buf))) < 0)
                        return e;
        }
        if (r->has_pids && (e = step(write_i64(dir, "pids.max", r->pids, true))) < 0)
                return e;
        if (r->cpus && *r->cpus && (e = step(write_file(dir, "cpuset.cpus", r->cpus))) < 0)
                return e;
        if (r->mems && *r->mems && (e = step(write_file(dir, "cpuset.mems", r->mems))) < 0)
                return e;
        return 0;
}

static int apply_v1_memory(pid_t init, const struct resources *r) {
        _cleanup_free_ char *dir = NULL;
        int e;

        if (!r->has_limit && !r->has_reservation && !r->has_swap)
                return 0;
        e = zs_cgroup_dir(init, "memory", &dir);
        if (e < 0)
                return e;
        if (r->has_limit) {
                e = write_i64(dir, "memory.limit_in_bytes", r->limit, false);
                /* above the memory+swap limit: that one first */
                if (e == -EINVAL && r->has_swap) {
                        if ((e = step(write_i64(dir, "memory.memsw.limit_in_bytes", r->swap, false))) < 0)
                                return e;
                        e = write_i64(dir, "memory.limit_in_bytes", r->limit, false);
                }
                if (step(e) < 0)
                        return e;
        }
        if (r->has_swap && (e = step(write_i64(dir, "memory.memsw.limit_in_bytes", r->swap, false))) < 0)
                return e;
        if (r->has_reservation && (e = step(write_i64(dir, "memory.soft_limit_in_bytes", r->reservation, false))) < 0)
                return e;
        return 0;
}

static int apply_v1(pid_t init, const struct resources *r) {
        _cleanup_free_ char *cpu = NULL, *pids = NULL, *cpuset = NULL;
        int e;

        e = apply_v1_memory(init, r);
        if (e < 0)
                return e;
        if (r->has_shares || r->has_quota || r->has_period) {
                if ((e = zs_cgroup_dir(init, "cpu", &cpu)) < 0)
                        return e;
                if (r->has_shares && (e = step(write_i64(cpu, "cpu.shares", (int64_t) r->shares, false))) < 0)
                        return e;
                if (r->has_period && r->period > 0 &&
                    (e = step(write_i64(cpu, "cpu.cfs_period_us", (int64_t) r->period, false))) < 0)
                        return e;
                if (r->has_quota &&
                    (e = step(write_i64(cpu, "cpu.cfs_quota_us", r->quota > 0 ? r->quota : -1, false))) < 0)
                        return e;
        }
        if (r->has_pids) {
                if ((e = zs_cgroup_dir(init, "pids", &pids)) < 0)
                        return e;
                if ((e = step(write_i64(pids, "pids.max", r->pids > 0 ? r->pids : -1, true))) < 0)
                        return e;
        }
        if ((r->cpus && *r->cpus) || (r->mems && *r->mems)) {
                if ((e = zs_cgroup_dir(init, "cpuset", &cpuset)) < 0)
                        return e;
                if (r->cpus && *r->cpus && (e = step(write_file(cpuset, "cpuset.cpus", r->cpus))) < 0)
                        return e;
                if (r->mems && *r->mems && (e = step(write_file(cpuset, "cpuset.mems", r->mems))) < 0)
                        return e;
        }
        return 0;
}

int zs_update(pid_t init, const char *json, size_t length, const char **ret_what) {
        struct resources r = {};
        json_tokener *tok;
        json_object *root;
        int e;

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, json, (int) length);
        json_tokener_free(tok);
        if (!root)
                return *ret_what = "resources: not JSON", -EINVAL;
        e = parse(root, &r, ret_what);
        /* the strings stay in root until the end */
        if (e >= 0)
                e = zs_cgroup_v2() ? apply_v2(init, &r) : apply_v1(init, &r);
        json_object_put(root);
        return e;
}
