/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc events: the container's resource usage in runc's JSON ("type": "stats"), read from
 * its cgroup files: once with --stats, else every --interval (default 5s) until the container's
 * init exits, waited for on its pidfd (poll with the interval as the timeout: no sleep). cpu,
 * memory and pids are filled as runc fills them; blkio, hugetlb and intel_rdt stay empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "verbs.h"

/* The first of the container's cgroup directories that has file, read whole into buf. */
static bool read_cg(const struct zrc_cgroup *cg, const char *file, char *buf, size_t len) {
        for (size_t i = 0; i < cg->n_paths; i++) {
                _cleanup_free_ char *p = NULL;
                FILE *f;
                size_t n;

                if (asprintf(&p, "%s/%s", cg->paths[i], file) < 0)
                        return false;
                f = fopen(p, "re");
                if (!f)
                        continue;
                n = fread(buf, 1, len - 1, f);
                buf[n] = 0;
                fclose(f);
                return true;
        }
        return false;
}

static json_object *u64(const struct zrc_cgroup *cg, const char *file) {
        char buf[64];

        if (!read_cg(cg, file, buf, sizeof(buf)))
                return NULL;
        /* "max" (v2) is runc's largest value */
        return json_object_new_uint64(strncmp(buf, "max", 3) == 0 ? UINT64_MAX : strtoull(buf, NULL, 10));
}

static void add(json_object *o, const char *key, json_object *v) {
        if (v)
                json_object_object_add(o, key, v);
}

/* "key value" lines (memory.stat, cpu.stat) as an object of numbers. */
static json_object *key_values(const struct zrc_cgroup *cg, const char *file) {
        _cleanup_free_ char *buf = malloc(16384);
        json_object *o;
        char *save = NULL;

        if (!buf || !read_cg(cg, file, buf, 16384))
                return NULL;
        o = json_object_new_object();
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char key[128];
                unsigned long long v;

                if (sscanf(line, "%127s %llu", key, &v) == 2)
                        json_object_object_add(o, key, json_object_new_uint64(v));
        }
        return o;
}

static json_object *cpu_stats(const struct zrc_cgroup *cg) {
        json_object *cpu = json_object_new_object(), *usage = json_object_new_object(), *stat, *v;
        char buf[4096], *save = NULL;

        if ((v = u64(cg, "cpuacct.usage"))) { /* v1 */
                json_object_object_add(usage, "total", v);
                if (read_cg(cg, "cpuacct.usage_percpu", buf, sizeof(buf))) {
                        json_object *per = json_object_new_array();
                        for (char *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
                                json_object_array_add(per, json_object_new_uint64(strtoull(w, NULL, 10)));
                        json_object_object_add(usage, "percpu", per);
                }
                /* cpuacct.stat is in USER_HZ ticks; runc gives nanoseconds */
                if ((stat = key_values(cg, "cpuacct.stat"))) {
                        long hz = sysconf(_SC_CLK_TCK);
                        uint64_t ns = hz > 0 ? UINT64_C(1000000000) / (uint64_t) hz : 10000000;
                        json_object_object_add(
                                usage, "kernel",
                                json_object_new_uint64(json_object_get_uint64(json_object_object_get(stat, "system")) *
                                                       ns));
                        json_object_object_add(
                                usage, "user",
                                json_object_new_uint64(json_object_get_uint64(json_object_object_get(stat, "user")) *
                                                       ns));
                        json_object_put(stat);
                }
        } else if ((stat = key_values(cg, "cpu.stat")) && json_object_object_get(stat, "usage_usec")) { /* v2 */
                static const char *const from[] = { "usage_usec", "system_usec", "user_usec" };
                static const char *const to[] = { "total", "kernel", "user" };
                for (size_t i = 0; i < ELEMENTSOF(from); i++)
                        json_object_object_add(
                                usage, to[i],
                                json_object_new_uint64(json_object_get_uint64(json_object_object_get(stat, from[i])) *
                                                       1000));
                json_object_put(stat);
        } else if (stat)
                json_object_put(stat);
        json_object_object_add(cpu, "usage", usage);
        json_object_object_add(cpu, "throttling", json_object_new_object());
        return cpu;
}

static json_object *memory_stats(const struct zrc_cgroup *cg) {
        json_object *mem = json_object_new_object(), *usage = json_object_new_object(), *raw;

        /* v1's files, else v2's */
        add(usage, "limit", u64(cg, "memory.limit_in_bytes") ?: u64(cg, "memory.max"));
        add(usage, "usage", u64(cg, "memory.usage_in_bytes") ?: u64(cg, "memory.current"));
        add(usage, "max", u64(cg, "memory.max_usage_in_bytes"));
        add(usage, "failcnt", u64(cg, "memory.failcnt"));
        raw = key_values(cg, "memory.stat");
        if (raw) {
                json_object *cache = json_object_object_get(raw, "cache") ?: json_object_object_get(raw, "file");
                if (cache)
                        json_object_object_add(mem, "cache", json_object_new_uint64(json_object_get_uint64(cache)));
        }
        json_object_object_add(mem, "usage", usage);
        add(mem, "raw", raw);
        return mem;
}

static json_object *stats(const struct zrc_state *st) {
        json_object *o = json_object_new_object(), *data = json_object_new_object(), *pids = json_object_new_object();
        json_object *limit = u64(&st->cgroup, "pids.max");

        json_object_object_add(data, "cpu", cpu_stats(&st->cgroup));
        json_object_object_add(data, "memory", memory_stats(&st->cgroup));
        add(pids, "current", u64(&st->cgroup, "pids.current"));
        /* runc leaves out an unlimited one */
        if (limit && json_object_get_uint64(limit) != UINT64_MAX)
                json_object_object_add(pids, "limit", limit);
        else
                json_object_put(limit);
        json_object_object_add(data, "pids", pids);
        json_object_object_add(data, "blkio", json_object_new_object());
        json_object_object_add(data, "hugetlb", json_object_new_object());
        json_object_object_add(data, "intel_rdt", json_object_new_object());
        json_object_object_add(data, "network_interfaces", NULL);
        json_object_object_add(o, "type", json_object_new_string("stats"));
        json_object_object_add(o, "id", json_object_new_string(st->id));
        json_object_object_add(o, "data", data);
        return o;
}

/* A Go duration as runc's --interval takes it ("5s", "500ms", "1m", "1h"): milliseconds, or -1. */
static int interval_ms(const char *s) {
        static const struct {
                const char *unit;
                double ms;
        } units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
        char *end;
        double v = strtod(s, &end);

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].unit) && v > 0 && v * units[i].ms < 86400000.0)
                        return (int) (v * units[i].ms) ?: 1;
        return -1;
}

int zrc_cmd_events(const struct zrc_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "stats", 0, false }, { "interval", 0, true } };
        _cleanup_close_ int pidfd = -EBADF;
        struct zrc_state st;
        int ms, r = 0;

        if (zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), &st) < 0)
                return 1;
        ms = o[1].value ? interval_ms(o[1].value) : 5000;
        if (ms < 0) {
                zrc_state_done(&st);
                return zrc_error(c, "events: invalid --interval \"%s\" (a duration such as 5s or 500ms)", o[1].value);
        }
        if (zrc_state_status(&st) == ZRC_STATUS_STOPPED) {
                r = zrc_error(c, "container with id %s is not running", st.id);
                zrc_state_done(&st);
                return r;
        }
        pidfd = zrc_state_pidfd(&st);
        for (;;) {
                json_object *s = stats(&st);
                struct pollfd p = { .fd = pidfd, .events = POLLIN };

                printf("%s\n",
                       json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                fflush(stdout);
                json_object_put(s);
                if (o[0].value || pidfd < 0)
                        break;
                /* the init's exit ends the stream; the interval passes otherwise */
                if (poll(&p, 1, ms) != 0)
                        break;
        }
        zrc_state_done(&st);
        return 0;
}
