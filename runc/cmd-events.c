/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc events: the container's resource usage in runc's JSON ("type": "stats"), read from
 * its cgroup files: once with --stats, else every --interval (default 5s) until the container's
 * init exits, waited for on its pidfd (poll with the interval as the timeout: no sleep). cpu,
 * cpuset, memory, pids and blkio (its throttle counters) are filled as runc fills them; hugetlb
 * and intel_rdt stay empty. Between the stats lines, each time the container's memory cgroup
 * hits its limit, a line {"type": "oom", "id": ID}, as runc writes it, at once: v1 tells through
 * an eventfd registered on memory.oom_control, v2 through inotify on memory.events ("oom").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "verbs.h"

/* The first of the container's cgroup directories that has file, read whole into buf. */
static bool read_cg(const struct zct_cgroup *cg, const char *file, char *buf, size_t len) {
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

static json_object *u64(const struct zct_cgroup *cg, const char *file) {
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
static json_object *key_values(const struct zct_cgroup *cg, const char *file) {
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

/* Column col (1: user, 2: system) of v1's cpuacct.usage_all ("cpu user system" lines). */
static json_object *per_cpu_modes(const struct zct_cgroup *cg, int col) {
        char buf[8192], *save = NULL;
        json_object *a;

        if (!read_cg(cg, "cpuacct.usage_all", buf, sizeof(buf)))
                return NULL;
        a = json_object_new_array();
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                unsigned long long f[3];

                if (sscanf(line, "%llu %llu %llu", &f[0], &f[1], &f[2]) == 3)
                        json_object_array_add(a, json_object_new_uint64(f[col]));
        }
        return a;
}

static json_object *cpu_stats(const struct zct_cgroup *cg) {
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
                if ((v = per_cpu_modes(cg, 2)))
                        json_object_object_add(usage, "percpu_kernel", v);
                if ((v = per_cpu_modes(cg, 1)))
                        json_object_object_add(usage, "percpu_user", v);
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

/* One of runc's memory entries from v1's PREFIX.{limit_in_bytes,usage_in_bytes,max_usage_in_bytes,
 * failcnt}, zero usage and max left out as runc leaves them; NULL without the files. */
static json_object *memory_entry(const struct zct_cgroup *cg, const char *prefix) {
        static const char *const files[] = { "limit_in_bytes", "usage_in_bytes", "max_usage_in_bytes", "failcnt" };
        static const char *const keys[] = { "limit", "usage", "max", "failcnt" };
        json_object *e = NULL;

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *file = NULL;
                json_object *v;

                if (asprintf(&file, "%s.%s", prefix, files[i]) < 0 || !(v = u64(cg, file)))
                        continue;
                if ((i == 1 || i == 2) && json_object_get_uint64(v) == 0) {
                        json_object_put(v);
                        continue;
                }
                if (!e)
                        e = json_object_new_object();
                json_object_object_add(e, keys[i], v);
        }
        return e;
}

static json_object *memory_stats(const struct zct_cgroup *cg) {
        json_object *mem = json_object_new_object(), *usage, *raw;

        usage = memory_entry(cg, "memory");
        if (!usage) { /* v2 */
                usage = json_object_new_object();
                add(usage, "limit", u64(cg, "memory.max"));
                add(usage, "usage", u64(cg, "memory.current"));
                add(mem, "swap", memory_entry(cg, "memory.swap"));
        }
        raw = key_values(cg, "memory.stat");
        if (raw) {
                json_object *cache = json_object_object_get(raw, "cache") ?: json_object_object_get(raw, "file");
                /* runc leaves out a zero */
                if (cache && json_object_get_uint64(cache))
                        json_object_object_add(mem, "cache", json_object_new_uint64(json_object_get_uint64(cache)));
        }
        json_object_object_add(mem, "usage", usage);
        add(mem, "swap", memory_entry(cg, "memory.memsw"));
        add(mem, "kernel", memory_entry(cg, "memory.kmem"));
        add(mem, "kernelTCP", memory_entry(cg, "memory.kmem.tcp"));
        add(mem, "raw", raw);
        return mem;
}

/* A cpuset list ("0-2,5") as runc's array of numbers. */
static json_object *cpu_list(const struct zct_cgroup *cg, const char *file) {
        char buf[1024], *save = NULL;
        json_object *a;

        if (!read_cg(cg, file, buf, sizeof(buf)))
                return NULL;
        a = json_object_new_array();
        for (char *r = strtok_r(buf, ",\n", &save); r; r = strtok_r(NULL, ",\n", &save)) {
                unsigned long lo = strtoul(r, NULL, 10),
                              hi = strchr(r, '-') ? strtoul(strchr(r, '-') + 1, NULL, 10) : lo;
                for (unsigned long n = lo; n <= hi && n < lo + 65536; n++)
                        json_object_array_add(a, json_object_new_uint64(n));
        }
        return a;
}

static json_object *cpuset_stats(const struct zct_cgroup *cg) {
        static const char *const flags[] = { "cpu_exclusive",   "mem_hardwall",       "mem_exclusive",
                                             "memory_migrate",  "memory_spread_page", "memory_spread_slab",
                                             "memory_pressure", "sched_load_balance", "sched_relax_domain_level" };
        json_object *c = json_object_new_object();

        add(c, "cpus", cpu_list(cg, "cpuset.cpus"));
        add(c, "mems", cpu_list(cg, "cpuset.mems"));
        for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
                _cleanup_free_ char *file = NULL;
                char buf[32];

                if (asprintf(&file, "cpuset.%s", flags[i]) >= 0 && read_cg(cg, file, buf, sizeof(buf)))
                        json_object_object_add(c, flags[i], json_object_new_int64(strtoll(buf, NULL, 10)));
        }
        return c;
}

/* v1's blkio.throttle.FILE_recursive lines "MAJ:MIN Op N" as runc's entries (zero minor and value
 * left out, as runc leaves them; the device-less Total line skipped). */
static json_object *blkio_entries(const struct zct_cgroup *cg, const char *file) {
        _cleanup_free_ char *buf = malloc(65536);
        char *save = NULL;
        json_object *a;

        if (!buf || !read_cg(cg, file, buf, 65536))
                return NULL;
        a = json_object_new_array();
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                unsigned maj, min;
                unsigned long long v;
                char op[32];
                json_object *e;

                if (sscanf(line, "%u:%u %31s %llu", &maj, &min, op, &v) != 4)
                        continue;
                e = json_object_new_object();
                json_object_object_add(e, "major", json_object_new_uint64(maj));
                if (min)
                        json_object_object_add(e, "minor", json_object_new_uint64(min));
                json_object_object_add(e, "op", json_object_new_string(op));
                if (v)
                        json_object_object_add(e, "value", json_object_new_uint64(v));
                json_object_array_add(a, e);
        }
        /* runc leaves out an empty list */
        if (json_object_array_length(a) == 0) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

static json_object *blkio_stats(const struct zct_cgroup *cg) {
        json_object *b = json_object_new_object();

        add(b, "ioServiceBytesRecursive", blkio_entries(cg, "blkio.throttle.io_service_bytes_recursive"));
        add(b, "ioServicedRecursive", blkio_entries(cg, "blkio.throttle.io_serviced_recursive"));
        return b;
}

static json_object *stats(const struct zct_state *st) {
        json_object *o = json_object_new_object(), *data = json_object_new_object(), *pids = json_object_new_object();
        json_object *limit = u64(&st->cgroup, "pids.max");

        json_object_object_add(data, "cpu", cpu_stats(&st->cgroup));
        if (!st->cgroup.v2_only)
                json_object_object_add(data, "cpuset", cpuset_stats(&st->cgroup));
        json_object_object_add(data, "memory", memory_stats(&st->cgroup));
        add(pids, "current", u64(&st->cgroup, "pids.current"));
        /* runc leaves out an unlimited one */
        if (limit && json_object_get_uint64(limit) != UINT64_MAX)
                json_object_object_add(pids, "limit", limit);
        else
                json_object_put(limit);
        json_object_object_add(data, "pids", pids);
        json_object_object_add(data, "blkio", blkio_stats(&st->cgroup));
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

/* The memory cgroup's OOM notification: v1 an eventfd registered through cgroup.event_control,
 * v2 an inotify watch on memory.events. -1 when the container has neither (no memory controller,
 * or it refuses). *v2_dir is set for the v2 kind (its count is re-read at each change). */
static int oom_notifier(const struct zct_cgroup *cg, const char **v2_dir) {
        *v2_dir = NULL;
        for (size_t i = 0; i < cg->n_paths; i++) {
                _cleanup_free_ char *ctl = NULL, *events = NULL;
                _cleanup_close_ int ofd = -EBADF;
                int fd;

                if (asprintf(&ctl, "%s/memory.oom_control", cg->paths[i]) < 0 ||
                    asprintf(&events, "%s/memory.events", cg->paths[i]) < 0)
                        return -1;
                ofd = open(ctl, O_RDONLY | O_CLOEXEC);
                if (ofd >= 0) {
                        char reg[64];
                        fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                        snprintf(reg, sizeof(reg), "%d %d", fd, ofd);
                        if (fd >= 0 && zct_write_at(cg->paths[i], "cgroup.event_control", reg) == 0)
                                return fd;
                        safe_close(fd);
                        return -1;
                }
                if (access(events, F_OK) == 0) {
                        fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
                        if (fd >= 0 && inotify_add_watch(fd, events, IN_MODIFY) >= 0) {
                                *v2_dir = cg->paths[i];
                                return fd;
                        }
                        safe_close(fd);
                        return -1;
                }
        }
        return -1;
}

/* v2's count of OOM events in memory.events, 0 when unreadable. */
static uint64_t v2_ooms(const char *dir) {
        struct zct_cgroup one = { .n_paths = 1, .paths = { (char *) dir } };
        json_object *kv = key_values(&one, "memory.events"), *n = NULL;
        uint64_t v = kv && json_object_object_get_ex(kv, "oom", &n) ? json_object_get_uint64(n) : 0;

        json_object_put(kv);
        return v;
}

/* Drains the notifier: whether the container hit OOM since the last call. */
static bool oom_happened(int fd, const char *v2_dir, uint64_t *seen) {
        char buf[4096];

        if (!v2_dir) {
                uint64_t n;
                return read(fd, &n, sizeof(n)) == sizeof(n) && n > 0;
        }
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        uint64_t now = v2_ooms(v2_dir);
        bool more = now > *seen;
        *seen = now;
        return more;
}

static int64_t now_ms(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void print_line(json_object *o) {
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        fflush(stdout);
        json_object_put(o);
}

int zrc_cmd_events(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        struct zrc_opt o[] = { { "stats", 0, false }, { "interval", 0, true } };
        _cleanup_close_ int pidfd = -EBADF, oomfd = -EBADF;
        const char *v2_dir = NULL;
        uint64_t ooms = 0;
        struct zct_state st;
        int ms, r = 0;

        if (zrc_verb_parse(c, v, argc, argv, o, ELEMENTSOF(o), &st) < 0)
                return 1;
        ms = o[1].value ? interval_ms(o[1].value) : 5000;
        if (ms < 0) {
                zct_state_done(&st);
                return zct_error(c, "events: invalid --interval \"%s\" (a duration such as 5s or 500ms)", o[1].value);
        }
        if (zct_state_status(&st) == ZCT_STATUS_STOPPED) {
                r = zct_error(c, "container with id %s is not running", st.id);
                zct_state_done(&st);
                return r;
        }
        pidfd = zct_state_pidfd(&st);
        if (!o[0].value)
                oomfd = oom_notifier(&st.cgroup, &v2_dir);
        if (v2_dir)
                ooms = v2_ooms(v2_dir);
        /* as runc: the first stats line after one interval; --stats (or no pidfd) at once */
        while (!o[0].value && pidfd >= 0) {
                /* the init's exit ends the stream; an OOM is said at once; the interval passes */
                int64_t until = now_ms() + ms, left;
                while ((left = until - now_ms()) > 0) {
                        struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = oomfd, .events = POLLIN } };
                        if (poll(p, oomfd >= 0 ? 2 : 1, (int) left) < 0 && errno != EINTR)
                                goto done;
                        if (p[1].revents && oom_happened(oomfd, v2_dir, &ooms)) {
                                json_object *e = json_object_new_object();
                                json_object_object_add(e, "type", json_object_new_string("oom"));
                                json_object_object_add(e, "id", json_object_new_string(st.id));
                                print_line(e);
                        }
                        if (p[0].revents)
                                goto done;
                }
                print_line(stats(&st));
        }
        if (o[0].value || pidfd < 0)
                print_line(stats(&st));
done:
        zct_state_done(&st);
        return 0;
}
