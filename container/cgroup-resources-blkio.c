/* SPDX-License-Identifier: MIT */
/*
 * linux.resources.blockIO -> the blkio (v1) or io (cgroup2) controller's writes. The weights are
 * BFQ's where the kernel has it (its files take OCI's scale) and the plain weight files otherwise
 * (cgroup2's io.weight converted as runc converts it).
 */
#include <errno.h>
#include <stdio.h>

#include "cgroup-resources-plan.h"
#include "util.h"

/* A device entry's "major:minor" and its integer value (key), each checked. */
static int device_entry(struct planner *p, json_object *e, const char *what, const char *key, int64_t *ret_major,
                        int64_t *ret_minor, int64_t *ret_value) {
        int r;

        if (!json_object_is_type(e, json_type_object))
                return zct_plan_fail(p, -EINVAL, "%s: not an object", what);
        if ((r = zct_plan_get_int(p, e, what, "major", ret_major)) < 0)
                return r;
        if (r == 0)
                return zct_plan_fail(p, -EINVAL, "%s.major: missing", what);
        if ((r = zct_plan_get_int(p, e, what, "minor", ret_minor)) < 0)
                return r;
        if (r == 0)
                return zct_plan_fail(p, -EINVAL, "%s.minor: missing", what);
        if (*ret_major < 0 || *ret_minor < 0)
                return zct_plan_fail(p, -EINVAL, "%s: negative device number", what);
        if (!key)
                return 0;
        if ((r = zct_plan_get_int(p, e, what, key, ret_value)) < 0)
                return r;
        if (r == 0 || *ret_value < 0)
                return zct_plan_fail(p, -EINVAL, "%s.%s: missing or negative", what, key);
        return 0;
}

static int plan_throttle(struct planner *p, json_object *o, const char *key, const char *v1_file, const char *v2_key) {
        json_object *a = NULL;
        char what[128];
        int r;

        if (!json_object_object_get_ex(o, key, &a) || !a)
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return zct_plan_fail(p, -EINVAL, "linux.resources.blockIO.%s: not an array", key);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                int64_t major, minor, rate;
                bool v2 = false;

                snprintf(what, sizeof(what), "linux.resources.blockIO.%s[%zu]", key, i);
                if ((r = device_entry(p, json_object_array_get_idx(a, i), what, "rate", &major, &minor, &rate)) < 0 ||
                    (r = zct_plan_where(p, ZCT_RES_IO, what, &v2)) < 0)
                        return r;
                r = v2 ? zct_plan_add(p, ZCT_RES_IO, v2, what, "io.max", "%lld:%lld %s=%lld", (long long) major,
                                      (long long) minor, v2_key, (long long) rate)
                       : zct_plan_add(p, ZCT_RES_IO, v2, what, v1_file, "%lld:%lld %lld", (long long) major,
                                      (long long) minor, (long long) rate);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int plan_weight_devices(struct planner *p, json_object *o) {
        json_object *a = NULL;
        char what[128];
        int r;

        if (!json_object_object_get_ex(o, "weightDevice", &a) || !a)
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return zct_plan_fail(p, -EINVAL, "linux.resources.blockIO.weightDevice: not an array");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                int64_t major, minor, weight, leaf;
                bool v2 = false;

                snprintf(what, sizeof(what), "linux.resources.blockIO.weightDevice[%zu]", i);
                if ((r = device_entry(p, e, what, NULL, &major, &minor, NULL)) < 0 ||
                    (r = zct_plan_get_int(p, e, what, "weight", &weight)) < 0 ||
                    (r = zct_plan_get_int(p, e, what, "leafWeight", &leaf)) < 0 ||
                    (r = zct_plan_where(p, ZCT_RES_IO, what, &v2)) < 0)
                        return r;
                if (leaf && v2)
                        return zct_plan_fail(p, -EOPNOTSUPP, "%s.leafWeight: cgroup v2 has no leaf weight", what);
                if (weight < 0 || leaf < 0)
                        return zct_plan_fail(p, -EINVAL, "%s: negative weight", what);
                /* BFQ's file takes the v1 scale; without BFQ, io.weight takes its own */
                if (weight && v2 &&
                    ((r = zct_plan_add(p, ZCT_RES_IO, v2, what, "io.bfq.weight", "%lld:%lld %lld", (long long) major,
                                       (long long) minor, (long long) weight)) < 0 ||
                     (r = zct_plan_add_alt(p, "io.weight", "%lld:%lld %llu", (long long) major, (long long) minor,
                                           (unsigned long long) zct_res_blkio_to_io_weight((uint64_t) weight))) < 0))
                        return r;
                if (weight && !v2 &&
                    ((r = zct_plan_add(p, ZCT_RES_IO, v2, what, "blkio.bfq.weight_device", "%lld:%lld %lld",
                                       (long long) major, (long long) minor, (long long) weight)) < 0 ||
                     (r = zct_plan_add_alt(p, "blkio.weight_device", "%lld:%lld %lld", (long long) major,
                                           (long long) minor, (long long) weight)) < 0))
                        return r;
                if (leaf && (r = zct_plan_add(p, ZCT_RES_IO, v2, what, "blkio.leaf_weight_device", "%lld:%lld %lld",
                                              (long long) major, (long long) minor, (long long) leaf)) < 0)
                        return r;
        }
        return 0;
}

int zct_plan_blkio(struct planner *p, json_object *o) {
        static const char *const known[] = { "weight",
                                             "leafWeight",
                                             "weightDevice",
                                             "throttleReadBpsDevice",
                                             "throttleWriteBpsDevice",
                                             "throttleReadIOPSDevice",
                                             "throttleWriteIOPSDevice",
                                             NULL };
        const char *what = "linux.resources.blockIO";
        int64_t weight, leaf;
        bool v2 = false;
        int r;

        if ((r = zct_plan_check_keys(p, o, what, known)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "weight", &weight)) < 0 ||
            (r = zct_plan_get_int(p, o, what, "leafWeight", &leaf)) < 0)
                return r;
        if ((weight || leaf) && (r = zct_plan_where(p, ZCT_RES_IO, what, &v2)) < 0)
                return r;
        if (weight < 0 || leaf < 0)
                return zct_plan_fail(p, -EINVAL, "%s: negative weight", what);
        if (leaf && v2)
                return zct_plan_fail(p, -EOPNOTSUPP, "%s.leafWeight: cgroup v2 has no leaf weight", what);
        if (weight && v2 &&
            ((r = zct_plan_add(p, ZCT_RES_IO, v2, "linux.resources.blockIO.weight", "io.bfq.weight", "%lld",
                               (long long) weight)) < 0 ||
             (r = zct_plan_add_alt(p, "io.weight", "%llu",
                                   (unsigned long long) zct_res_blkio_to_io_weight((uint64_t) weight))) < 0))
                return r;
        if (weight && !v2 &&
            ((r = zct_plan_add(p, ZCT_RES_IO, v2, "linux.resources.blockIO.weight", "blkio.bfq.weight", "%lld",
                               (long long) weight)) < 0 ||
             (r = zct_plan_add_alt(p, "blkio.weight", "%lld", (long long) weight)) < 0))
                return r;
        if (leaf && (r = zct_plan_add(p, ZCT_RES_IO, v2, "linux.resources.blockIO.leafWeight", "blkio.leaf_weight",
                                      "%lld", (long long) leaf)) < 0)
                return r;
        if ((r = plan_weight_devices(p, o)) < 0 ||
            (r = plan_throttle(p, o, "throttleReadBpsDevice", "blkio.throttle.read_bps_device", "rbps")) < 0 ||
            (r = plan_throttle(p, o, "throttleWriteBpsDevice", "blkio.throttle.write_bps_device", "wbps")) < 0 ||
            (r = plan_throttle(p, o, "throttleReadIOPSDevice", "blkio.throttle.read_iops_device", "riops")) < 0 ||
            (r = plan_throttle(p, o, "throttleWriteIOPSDevice", "blkio.throttle.write_iops_device", "wiops")) < 0)
                return r;
        return 0;
}

uint64_t zct_res_blkio_to_io_weight(uint64_t weight) {
        /* [10, 1000] onto [1, 10000], linearly */
        return weight == 0 ? 0 : 1 + ((weight - 10) * 9999) / 990;
}
