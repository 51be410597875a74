/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc update: new linux.resources for a created, running or paused container, from
 * --resources FILE (or "-": stdin, as containerd's shim sends them) and runc's flags, which win
 * over the file. The cgroup manager's update (cgroup-of.c: the same generator as create,
 * cgroup-resources.c) turns them into writes, so that a field is applied the same way or refused
 * by name by create, update and containerd's Update. What is applied is recorded in
 * the state (its "resources": config.json's, each update's fields over them).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-resources.h"
#include "config-util.h"
#include "util.h"
#include "verbs.h"

/* A flag, where it goes in linux.resources, and how its value reads. */
enum kind { INT, BYTES, STRING };
static const struct flag {
        const char *name, *section, *key;
        enum kind kind;
} flags[] = {
        { "blkio-weight", "blockIO", "weight", INT },
        { "cpu-period", "cpu", "period", INT },
        { "cpu-quota", "cpu", "quota", INT },
        { "cpu-share", "cpu", "shares", INT },
        { "cpu-shares", "cpu", "shares", INT },
        { "cpu-rt-period", "cpu", "realtimePeriod", INT },
        { "cpu-rt-runtime", "cpu", "realtimeRuntime", INT },
        { "cpuset-cpus", "cpu", "cpus", STRING },
        { "cpuset-mems", "cpu", "mems", STRING },
        { "kernel-memory", "memory", "kernel", BYTES },
        { "kernel-memory-tcp", "memory", "kernelTCP", BYTES },
        { "memory", "memory", "limit", BYTES },
        { "memory-reservation", "memory", "reservation", BYTES },
        { "memory-swap", "memory", "swap", BYTES },
        { "pids-limit", "pids", "limit", INT },
};

/* "-1", "1024", "256m", "1GiB" (runc's units: powers of 1024) */
static int parse_value(const char *s, enum kind kind, int64_t *ret) {
        static const char units[] = "kmgtp";
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        if (kind == BYTES && *end) {
                const char *u = strchr(units, tolower((unsigned char) *end));

                if (!u || v < 0)
                        return -EINVAL;
                for (long i = 0; i <= u - units; i++) {
                        if (v > INT64_MAX / 1024)
                                return -ERANGE;
                        v *= 1024;
                }
                end++;
                if (*end == 'i' || *end == 'I')
                        end++;
                if (*end == 'b' || *end == 'B')
                        end++;
        }
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* res[section][key] = the flag's value */
static int set_flag(const struct zct_ctx *c, json_object *res, const struct flag *f, const char *value) {
        json_object *sec = NULL, *v;
        int64_t n;

        if (f->kind == STRING)
                v = json_object_new_string(value);
        else if (parse_value(value, f->kind, &n) < 0)
                return zct_error(c, "update: --%s: invalid value \"%s\"", f->name, value), -EINVAL;
        else
                v = json_object_new_int64(n);
        if (!json_object_object_get_ex(res, f->section, &sec) || !json_object_is_type(sec, json_type_object)) {
                sec = json_object_new_object();
                json_object_object_add(res, f->section, sec);
        }
        json_object_object_add(sec, f->key, v);
        return 0;
}

/* The resources --resources names: a file, or stdin for "-". */
static int read_resources(const struct zct_ctx *c, const char *path, json_object **ret) {
        _cleanup_free_ char *err = NULL;
        json_object *j;
        int r;

        if (!streq(path, "-")) {
                r = zct_read_json(path, ret, &err);
                return r < 0 ? zct_error(c, "update: %s", err ? err : zct_errstr(-r)), r : 0;
        }
        j = json_object_from_fd(STDIN_FILENO);
        if (!j || !json_object_is_type(j, json_type_object)) {
                json_object_put(j);
                return zct_error(c, "update: stdin: not a JSON object"), -EINVAL;
        }
        *ret = j;
        return 0;
}

/* into[key] = from[key] for each member of from, an object into an object member by member: the
 * update's fields over the ones applied before, which it leaves as they are (so does the cgroup);
 * an array (device rules, throttles, hugepage limits) or a value replaces the old one. */
static int merge_into(json_object *into, json_object *from) {
        json_object_object_foreach(from, key, val) {
                json_object *cur = NULL, *copy = NULL;
                int r;

                if (json_object_is_type(val, json_type_object) && json_object_object_get_ex(into, key, &cur) &&
                    json_object_is_type(cur, json_type_object)) {
                        r = merge_into(cur, val);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (json_object_deep_copy(val, &copy, NULL) < 0)
                        return -ENOMEM;
                json_object_object_add(into, key, copy);
        }
        return 0;
}

/* The state records what is applied now, for the next update and whatever reads the state. */
static int record(struct zct_state *st, json_object *res) {
        json_object *all = NULL;
        int r;

        if (st->resources ? json_object_deep_copy(st->resources, &all, NULL) < 0 : !(all = json_object_new_object()))
                return -ENOMEM;
        r = merge_into(all, res);
        if (r < 0) {
                json_object_put(all);
                return r;
        }
        if (st->resources)
                json_object_put(st->resources);
        st->resources = all;
        return zct_state_save(st);
}

int zrc_cmd_update(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[ELEMENTSOF(flags) + 3] = { { "resources", 'r', true },
                                                    { "l3-cache-schema", 0, true },
                                                    { "mem-bw-schema", 0, true } };
        _cleanup_free_ char *err = NULL;
        json_object *res = NULL;
        struct zct_state st;
        int k, r, ret = 1;

        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                o[i + 3] = (struct zrc_opt){ .name = flags[i].name, .has_arg = true };
        k = zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), &st);
        if (k < 0)
                return 1;
        if (o[1].value || o[2].value) {
                zct_error(c, "update: --%s: Intel RDT is not supported by zygote-runc",
                          o[1].value ? "l3-cache-schema" : "mem-bw-schema");
                goto out;
        }
        if (zct_state_status(&st) == ZCT_STATUS_STOPPED) {
                zct_error(c, "container not running");
                goto out;
        }
        if (o[0].value ? read_resources(c, o[0].value, &res) < 0 : !(res = json_object_new_object()))
                goto out;
        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                if (o[i + 3].value && set_flag(c, res, &flags[i], o[i + 3].value) < 0)
                        goto out;
        /* the cgroup manager's one update, containerd's Update's too (cgroup-of.c) */
        r = zct_cgroup_update(&st.cgroup, st.resources, st.bundle, res, &err);
        if (r < 0) {
                zct_error(c, "update: %s", err ? err : zct_errstr(-r));
                goto out;
        }
        r = record(&st, res);
        if (r < 0)
                zct_error(c, "update: the container's state: %s", zct_errstr(-r));
        else
                ret = 0;
out:
        json_object_put(res);
        zct_state_done(&st);
        return ret;
}
