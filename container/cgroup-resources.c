/* SPDX-License-Identifier: MIT */
/*
 * linux.resources -> the cgroup file writes that apply it (cgroup-resources.h). Pure: no file is
 * read or written here. OCI's values are cgroup v1's; on cgroup2 they are converted as runc
 * converts them, so that a config gives the same limits under either runtime.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-resources-plan.h"
#include "util.h"

uint64_t zct_res_shares_to_weight(uint64_t shares) {
        /* [2, 262144] onto [1, 10000], linearly; 0 stays "unset" */
        return shares == 0 ? 0 : 1 + ((shares - 2) * 9999) / 262142;
}

int zct_res_swap_v2(int64_t swap, int64_t limit, int64_t *ret, char **ret_error) {
        struct planner p = { .err = ret_error };

        /* cgroup v1 sets memory+swap; cgroup2 sets swap alone. An unlimited memory with swap
         * unset means both unlimited, as on v1. */
        if (limit == -1 && swap == 0)
                return *ret = -1, 0;
        if (swap == -1 || swap == 0)
                return *ret = swap, 0;
        if (limit == 0 || limit == -1)
                return zct_plan_fail(&p, -EINVAL,
                                     "linux.resources.memory.swap: a swap limit needs a memory limit on cgroup v2");
        if (limit < 0)
                return zct_plan_fail(&p, -EINVAL, "linux.resources.memory.limit: invalid value %lld",
                                     (long long) limit);
        if (swap < limit)
                return zct_plan_fail(&p, -EINVAL,
                                     "linux.resources.memory.swap: memory+swap (%lld) is below the memory limit (%lld)",
                                     (long long) swap, (long long) limit);
        return *ret = swap - limit, 0;
}

static int get_bool(struct planner *p, json_object *o, const char *what, const char *key, bool *ret) {
        json_object *v = NULL;

        *ret = false;
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return zct_plan_fail(p, -EINVAL, "%s.%s: not a boolean", what, key);
        *ret = json_object_get_boolean(v);
        return 1;
}

/* A cpuset list ("0-3,5"): digits, commas and ranges only; it goes into a file as it is. */
static int get_list(struct planner *p, json_object *o, const char *what, const char *key, const char **ret) {
        json_object *v = NULL;
        const char *s;

        *ret = NULL;
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return zct_plan_fail(p, -EINVAL, "%s.%s: not a string", what, key);
        s = json_object_get_string(v);
        if (s[strspn(s, "0123456789,- ")] != '\0')
                return zct_plan_fail(p, -EINVAL, "%s.%s: \"%s\" is not a list of numbers and ranges", what, key, s);
        *ret = s;
        return s[0] != '\0';
}

static int plan_cpu(struct planner *p, json_object *o) {
        static const char *const known[] = { "shares", "quota", "period", "realtimeRuntime", "realtimePeriod",
                                             "cpus",   "mems",  "idle",   "burst",           NULL };
        const char *what = "linux.resources.cpu", *cpus, *mems;
        int64_t shares, quota, period, rt_runtime, rt_period, burst, idle;
        bool v2 = false;
        int r, has_idle;

        if ((r = zct_plan_check_keys(p, o, what, known)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "shares", &shares)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "quota", &quota)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "period", &period)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "realtimeRuntime", &rt_runtime)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "realtimePeriod", &rt_period)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "burst", &burst)) < 0 || (r = get_list(p, o, what, "cpus", &cpus)) < 0 ||
            (r = get_list(p, o, what, "mems", &mems)) < 0 ||
            (has_idle = r = zct_plan_get_int(p, o, what, "idle", &idle)) < 0)
                return r;
        if ((shares || quota || period || rt_runtime || rt_period || burst || has_idle) &&
            (r = zct_plan_where(p, ZCT_RES_CPU, what, &v2)) < 0)
                return r;
        if (shares < 0 || period < 0 || rt_period < 0 || burst < 0)
                return zct_plan_fail(p, -EINVAL, "%s: shares, period, realtimePeriod and burst cannot be negative",
                                     what);
        /* the kernel would clamp a share count out of its range without a word */
        if (shares && (shares < 2 || shares > 262144))
                return zct_plan_fail(p, -EINVAL, "%s.shares: %lld is outside the kernel's range 2-262144", what,
                                     (long long) shares);
        if (v2 && (rt_runtime || rt_period))
                return zct_plan_fail(p, -EOPNOTSUPP, "%s.%s: cgroup v2 has no realtime budget", what,
                                     rt_runtime ? "realtimeRuntime" : "realtimePeriod");
        if (shares && (r = v2 ? zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.shares", "cpu.weight", "%llu",
                                             (unsigned long long) zct_res_shares_to_weight((uint64_t) shares))
                              : zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.shares", "cpu.shares", "%lld",
                                             (long long) shares)) < 0)
                return r;
        if (v2 && (quota || period)) {
                char q[32] = "max";

                if (quota > 0)
                        snprintf(q, sizeof(q), "%lld", (long long) quota);
                r = period ? zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.quota", "cpu.max", "%s %lld", q,
                                          (long long) period)
                           : zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.quota", "cpu.max", "%s", q);
                if (r < 0)
                        return r;
        }
        if (!v2 && period &&
            (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.period", "cpu.cfs_period_us", "%lld",
                              (long long) period)) < 0)
                return r;
        /* a shorter period under the old quota can exceed a parent's limit (EINVAL) where the new
         * pair does not: the quota goes first then (cgroup-limits.c) */
        if (!v2 && period && quota)
                p->w[p->n - 1].swap_partner = true;
        if (!v2 && quota &&
            (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.quota", "cpu.cfs_quota_us", "%lld",
                              quota < 0 ? -1LL : (long long) quota)) < 0)
                return r;
        if (burst && (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.burst",
                                       v2 ? "cpu.max.burst" : "cpu.cfs_burst_us", "%lld", (long long) burst)) < 0)
                return r;
        if (rt_period && (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.realtimePeriod", "cpu.rt_period_us",
                                           "%lld", (long long) rt_period)) < 0)
                return r;
        if (rt_runtime && (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.realtimeRuntime",
                                            "cpu.rt_runtime_us", "%lld", (long long) rt_runtime)) < 0)
                return r;
        if (has_idle && (r = zct_plan_add(p, ZCT_RES_CPU, v2, "linux.resources.cpu.idle", "cpu.idle", "%lld",
                                          (long long) idle)) < 0)
                return r;
        if ((cpus || mems) && (r = zct_plan_where(p, ZCT_RES_CPUSET, "linux.resources.cpu.cpus", &v2)) < 0)
                return r;
        if (cpus &&
            (r = zct_plan_add(p, ZCT_RES_CPUSET, v2, "linux.resources.cpu.cpus", "cpuset.cpus", "%s", cpus)) < 0)
                return r;
        if (mems &&
            (r = zct_plan_add(p, ZCT_RES_CPUSET, v2, "linux.resources.cpu.mems", "cpuset.mems", "%s", mems)) < 0)
                return r;
        return 0;
}

static int plan_memory(struct planner *p, json_object *o) {
        static const char *const known[] = { "limit",
                                             "reservation",
                                             "swap",
                                             "kernel",
                                             "kernelTCP",
                                             "swappiness",
                                             "useHierarchy",
                                             "disableOOMKiller",
                                             "checkBeforeUpdate",
                                             NULL };
        const char *what = "linux.resources.memory";
        int64_t limit, reservation, swap, kernel, kernel_tcp, swappiness;
        bool no_oom_kill, hierarchy, check;
        int has_swappiness, has_hierarchy, has_swap;
        bool v2 = false;
        char b[32];
        int r;

        if ((r = zct_plan_check_keys(p, o, what, known)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "limit", &limit)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "reservation", &reservation)) < 0 ||
            (has_swap = r = zct_plan_get_int(p, o, what, "swap", &swap)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "kernel", &kernel)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "kernelTCP", &kernel_tcp)) < 0 ||
            (has_swappiness = r = zct_plan_get_int(p, o, what, "swappiness", &swappiness)) < 0 ||
            (has_hierarchy = r = get_bool(p, o, what, "useHierarchy", &hierarchy)) < 0 ||
            (r = get_bool(p, o, what, "disableOOMKiller", &no_oom_kill)) < 0 ||
            (r = get_bool(p, o, what, "checkBeforeUpdate", &check)) < 0)
                return r;
        /* the kernel dropped kernel memory limits: ignored, as runc ignores them (config.c notes it) */
        (void) kernel;
        /* a cgroup is always hierarchical on the kernels this runs on */
        if (has_hierarchy && !hierarchy)
                return zct_plan_fail(p, -EOPNOTSUPP, "%s.useHierarchy: false is not supported (always hierarchical)",
                                     what);
        if (check)
                return zct_plan_fail(p, -EOPNOTSUPP, "%s.checkBeforeUpdate: not supported by zygote-runc", what);
        /* -1 (or its unsigned spelling: OCI's type is uint64) is the tools' "system default" */
        if (has_swappiness &&
            (swappiness == -1 || json_object_get_uint64(json_object_object_get(o, "swappiness")) == UINT64_MAX))
                has_swappiness = 0;
        if (!(limit || reservation || swap || kernel_tcp || has_swappiness || no_oom_kill))
                return 0;
        if ((r = zct_plan_where(p, ZCT_RES_MEMORY, what, &v2)) < 0)
                return r;
        if (v2) {
                int64_t s;

                if (kernel_tcp)
                        return zct_plan_fail(p, -EOPNOTSUPP, "%s.kernelTCP: cgroup v2 has no separate TCP memory limit",
                                             what);
                if (has_swappiness)
                        return zct_plan_fail(p, -EOPNOTSUPP, "%s.swappiness: cgroup v2 has no per-cgroup swappiness",
                                             what);
                if (no_oom_kill)
                        return zct_plan_fail(p, -EOPNOTSUPP,
                                             "%s.disableOOMKiller: cgroup v2 cannot disable the OOM killer", what);
                if ((r = zct_res_swap_v2(swap, limit, &s, p->err)) < 0)
                        return r;
                /* swap first, as runc writes them */
                if (s && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.swap", "memory.swap.max",
                                           "%s", zct_plan_v2_value(s, b, sizeof(b)))) < 0)
                        return r;
                if (limit && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.limit", "memory.max",
                                               "%s", zct_plan_v2_value(limit, b, sizeof(b)))) < 0)
                        return r;
                if (reservation &&
                    (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.reservation", "memory.low", "%s",
                                      zct_plan_v2_value(reservation, b, sizeof(b)))) < 0)
                        return r;
                return 0;
        }
        /* v1: memory+swap, never below the memory limit: unlimited memory without a swap value
         * makes both unlimited; the apply step orders the pair so that neither write is refused */
        if (limit == -1 && !has_swap)
                swap = -1;
        if (limit && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.limit", "memory.limit_in_bytes",
                                       "%lld", (long long) limit)) < 0)
                return r;
        if (limit && swap)
                p->w[p->n - 1].swap_partner = true;
        if (swap && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.swap",
                                      "memory.memsw.limit_in_bytes", "%lld", (long long) swap)) < 0)
                return r;
        if (reservation && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.reservation",
                                             "memory.soft_limit_in_bytes", "%lld", (long long) reservation)) < 0)
                return r;
        if (kernel_tcp && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.kernelTCP",
                                            "memory.kmem.tcp.limit_in_bytes", "%lld", (long long) kernel_tcp)) < 0)
                return r;
        if (has_swappiness && (swappiness < 0 || swappiness > 100))
                return zct_plan_fail(p, -EINVAL, "%s.swappiness: %lld is outside 0-100", what, (long long) swappiness);
        if (has_swappiness && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.swappiness",
                                                "memory.swappiness", "%lld", (long long) swappiness)) < 0)
                return r;
        if (no_oom_kill && (r = zct_plan_add(p, ZCT_RES_MEMORY, v2, "linux.resources.memory.disableOOMKiller",
                                             "memory.oom_control", "1")) < 0)
                return r;
        return 0;
}

static int plan_pids(struct planner *p, json_object *o) {
        static const char *const known[] = { "limit", NULL };
        int64_t limit;
        bool v2 = false;
        int r;

        if ((r = zct_plan_check_keys(p, o, "linux.resources.pids", known)) < 0 ||
            (r = zct_plan_get_int(p, o, "linux.resources.pids", "limit", &limit)) < 0)
                return r;
        /* 0 is runc's "unset"; below 0, no limit */
        if (!limit)
                return 0;
        if ((r = zct_plan_where(p, ZCT_RES_PIDS, "linux.resources.pids.limit", &v2)) < 0)
                return r;
        if (limit < 0)
                return zct_plan_add(p, ZCT_RES_PIDS, v2, "linux.resources.pids.limit", "pids.max", "max");
        return zct_plan_add(p, ZCT_RES_PIDS, v2, "linux.resources.pids.limit", "pids.max", "%lld", (long long) limit);
}

static int plan_hugetlb(struct planner *p, json_object *a) {
        char what[128];
        int r;

        if (!json_object_is_type(a, json_type_array))
                return zct_plan_fail(p, -EINVAL, "linux.resources.hugepageLimits: not an array");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *size = NULL;
                int64_t limit;
                size_t digits;
                bool v2 = false;

                snprintf(what, sizeof(what), "linux.resources.hugepageLimits[%zu]", i);
                if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "pageSize", NULL))
                        size = json_object_get_string(json_object_object_get(e, "pageSize"));
                /* "2MB", "1GB": it names a file, so nothing else gets through */
                digits = size ? strspn(size, "0123456789") : 0;
                if (!size || digits == 0 || !strchr("KMGT", size[digits]) || size[digits] == '\0' ||
                    !streq(size + digits + 1, "B"))
                        return zct_plan_fail(p, -EINVAL, "%s.pageSize: \"%s\" is not a page size such as \"2MB\"", what,
                                             size ? size : "");
                if ((r = zct_plan_get_int(p, e, what, "limit", &limit)) < 0)
                        return r;
                if (r == 0)
                        return zct_plan_fail(p, -EINVAL, "%s.limit: missing", what);
                if ((r = zct_plan_where(p, ZCT_RES_HUGETLB, what, &v2)) < 0)
                        return r;
                if (v2) {
                        _cleanup_free_ char *file = NULL;
                        char b[32];

                        if (asprintf(&file, "hugetlb.%s.max", size) < 0)
                                return -ENOMEM;
                        r = zct_plan_add(p, ZCT_RES_HUGETLB, v2, what, file, "%s",
                                         zct_plan_v2_value(limit, b, sizeof(b)));
                } else {
                        _cleanup_free_ char *file = NULL;

                        if (asprintf(&file, "hugetlb.%s.limit_in_bytes", size) < 0)
                                return -ENOMEM;
                        r = zct_plan_add(p, ZCT_RES_HUGETLB, v2, what, file, "%lld", (long long) limit);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int plan_network(struct planner *p, json_object *o) {
        static const char *const known[] = { "classID", "priorities", NULL };
        const char *what = "linux.resources.network";
        json_object *a = NULL;
        char field[128];
        int64_t classid;
        bool v2 = false;
        int r;

        if ((r = zct_plan_check_keys(p, o, what, known)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "classID", &classid)) < 0)
                return r;
        if (r > 0 && ((r = zct_plan_where(p, ZCT_RES_NET_CLS, "linux.resources.network.classID", &v2)) < 0 ||
                      (r = zct_plan_add(p, ZCT_RES_NET_CLS, v2, "linux.resources.network.classID", "net_cls.classid",
                                        "%lld", (long long) classid)) < 0))
                return r;
        if (!json_object_object_get_ex(o, "priorities", &a) || !a)
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return zct_plan_fail(p, -EINVAL, "%s.priorities: not an array", what);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *name = json_object_get_string(json_object_object_get(e, "name"));
                int64_t prio;

                snprintf(field, sizeof(field), "%s.priorities[%zu]", what, i);
                if (!json_object_is_type(e, json_type_object) || !name || !name[0] || strpbrk(name, " \n/"))
                        return zct_plan_fail(p, -EINVAL, "%s.name: not an interface name", field);
                if ((r = zct_plan_get_int(p, e, field, "priority", &prio)) < 0 ||
                    (r = zct_plan_where(p, ZCT_RES_NET_PRIO, field, &v2)) < 0 ||
                    (r = zct_plan_add(p, ZCT_RES_NET_PRIO, v2, field, "net_prio.ifpriomap", "%s %lld", name,
                                      (long long) prio)) < 0)
                        return r;
        }
        return 0;
}

static int plan_rdma(struct planner *p, json_object *o) {
        char field[160];
        int r;

        if (!json_object_is_type(o, json_type_object))
                return zct_plan_fail(p, -EINVAL, "linux.resources.rdma: not an object");
        json_object_object_foreach(o, dev, e) {
                static const char *const known[] = { "hcaHandles", "hcaObjects", NULL };
                int64_t handles, objects;
                int has_h, has_o;
                char h[48] = "", ob[48] = "";
                bool v2 = false;

                snprintf(field, sizeof(field), "linux.resources.rdma.%s", dev);
                if (!dev[0] || strpbrk(dev, " \n/"))
                        return zct_plan_fail(p, -EINVAL, "%s: not a device name", field);
                if ((r = zct_plan_check_keys(p, e, field, known)) < 0 ||
                    (has_h = r = zct_plan_get_int(p, e, field, "hcaHandles", &handles)) < 0 ||
                    (has_o = r = zct_plan_get_int(p, e, field, "hcaObjects", &objects)) < 0)
                        return r;
                if (!has_h && !has_o)
                        continue;
                if (has_h)
                        snprintf(h, sizeof(h), " hca_handle=%lld", (long long) handles);
                if (has_o)
                        snprintf(ob, sizeof(ob), " hca_object=%lld", (long long) objects);
                if ((r = zct_plan_where(p, ZCT_RES_RDMA, field, &v2)) < 0 ||
                    (r = zct_plan_add(p, ZCT_RES_RDMA, v2, field, "rdma.max", "%s%s%s", dev, h, ob)) < 0)
                        return r;
        }
        return 0;
}

/* unified: each key is a file of the container's cgroup2 directory, written as given. The key
 * names a file beside the others: no path, and "CONTROLLER.PARAMETER" so that its controller can
 * be enabled first. */
static int plan_unified(struct planner *p, json_object *o) {
        char field[160];
        int r;

        if (!json_object_is_type(o, json_type_object))
                return zct_plan_fail(p, -EINVAL, "linux.resources.unified: not an object");
        json_object_object_foreach(o, key, val) {
                const char *dot = strchr(key, '.');
                bool v2 = false;

                snprintf(field, sizeof(field), "linux.resources.unified.%s", key);
                if (!dot || dot == key || dot[1] == '\0' || strchr(key, '/') || strstr(key, "..") ||
                    key[strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")] != '\0')
                        return zct_plan_fail(p, -EINVAL, "%s: a key is a file name, CONTROLLER.PARAMETER", field);
                if (!json_object_is_type(val, json_type_string))
                        return zct_plan_fail(p, -EINVAL, "%s: not a string", field);
                if ((r = zct_plan_where(p, ZCT_RES_UNIFIED, field, &v2)) < 0 ||
                    (r = zct_plan_add(p, ZCT_RES_UNIFIED, true, field, key, "%s", json_object_get_string(val))) < 0)
                        return r;
                /* a controller this host keeps on a v1 hierarchy has no files in cgroup2 */
                for (int c = 0; c < ZCT_RES_UNIFIED; c++)
                        if (strlen(zct_res_controller_name(c, true)) == (size_t) (dot - key) &&
                            strncmp(key, zct_res_controller_name(c, true), (size_t) (dot - key)) == 0 &&
                            !(p->v2 & ZCT_RES_BIT(c)))
                                return zct_plan_fail(
                                        p, -EOPNOTSUPP,
                                        "%s: invalid configuration: this host has no %s controller on cgroup2%s", field,
                                        zct_res_controller_name(c, true),
                                        p->v1 & ZCT_RES_BIT(c) ? " (it is on a v1 hierarchy)" : "");
                if (strncmp(key, "cgroup.", strlen("cgroup.")) != 0) {
                        struct zct_res_write *w = &p->w[p->n - 1];

                        w->enable = strndup(key, (size_t) (dot - key));
                        if (!w->enable)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* o[key], NULL when absent or null */
static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

void zct_res_plan_done(struct zct_res_plan *pl) {
        for (size_t i = 0; pl && i < pl->n; i++) {
                free(pl->w[i].file);
                free(pl->w[i].value);
                free(pl->w[i].alt_file);
                free(pl->w[i].alt_value);
                free(pl->w[i].enable);
                free(pl->w[i].field);
        }
        if (pl) {
                free(pl->w);
                *pl = (struct zct_res_plan){};
        }
}

int zct_res_plan(json_object *res, unsigned v1_mask, unsigned v2_mask, struct zct_res_plan *ret, char **ret_error) {
        static const char *const known[] = { "devices",        "cpu",     "memory", "pids",    "blockIO",
                                             "hugepageLimits", "network", "rdma",   "unified", NULL };
        struct planner p = { .v1 = v1_mask, .v2 = v2_mask, .err = ret_error };
        struct zct_res_plan pl;
        json_object *v;
        int r = 0;

        if (res && (r = zct_plan_check_keys(&p, res, "linux.resources", known)) < 0)
                return r;
        if (res && (v = member(res, "cpu")) && (r = plan_cpu(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "memory")) && (r = plan_memory(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "pids")) && (r = plan_pids(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "blockIO")) && (r = zct_plan_blkio(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "hugepageLimits")) && (r = plan_hugetlb(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "network")) && (r = plan_network(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "rdma")) && (r = plan_rdma(&p, v)) < 0)
                goto fail;
        if (res && (v = member(res, "unified")) && (r = plan_unified(&p, v)) < 0)
                goto fail;
        *ret = (struct zct_res_plan){ .w = p.w, .n = p.n };
        return 0;
fail:
        pl = (struct zct_res_plan){ .w = p.w, .n = p.n };
        zct_res_plan_done(&pl);
        if (r == -ENOMEM && ret_error)
                zct_plan_fail(&p, r, "linux.resources: out of memory");
        return r;
}
