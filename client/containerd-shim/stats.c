/* SPDX-License-Identifier: MIT */
/* Stats: cgroup counters as containerd's metrics messages. */
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "github.com/containerd/cgroups/stats/v1/metrics.pb-c.h"
#include "github.com/containerd/cgroups/v2/stats/metrics.pb-c.h"
#include "util.h"

/* The number in DIR/FILE; "max" (no limit) is unlimited, which is what containerd's own metrics
 * report for it (UINT64_MAX with v2, 0 for v1's pids.max). A missing file leaves *ret as it was:
 * a counter the kernel does not have is 0. */
static int read_limit(const char *dir, const char *file, uint64_t unlimited, uint64_t *ret) {
        _cleanup_free_ char *path = NULL;
        char buf[64] = "";
        FILE *f;
        bool ok;

        if (asprintf(&path, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        ok = fgets(buf, sizeof(buf), f) != NULL;
        fclose(f);
        if (!ok)
                return -EIO;
        if (strncmp(buf, "max", 3) == 0)
                *ret = unlimited;
        else if (sscanf(buf, "%" SCNu64, ret) != 1)
                return -EBADMSG;
        return 0;
}

/* The value of key in a "key value" file (cpu.stat, memory.stat, cpuacct.stat). */
static int read_u64(const char *dir, const char *file, uint64_t *ret) {
        return read_limit(dir, file, UINT64_MAX, ret);
}

static int read_key(const char *dir, const char *file, const char *key, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0, n = strlen(key);
        FILE *f;

        if (asprintf(&path, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &size, f) > 0)
                if (strncmp(line, key, n) == 0 && line[n] == ' ' && sscanf(line + n + 1, "%" SCNu64, ret) == 1)
                        break;
        fclose(f);
        return 0;
}

static int pack(const ProtobufCMessage *m, uint8_t **ret_data, size_t *ret_length) {
        uint8_t *buf = malloc(protobuf_c_message_get_packed_size(m) + 1);

        if (!buf)
                return -ENOMEM;
        *ret_length = protobuf_c_message_pack(m, buf);
        *ret_data = buf;
        return 0;
}

static int stats_v2(pid_t init, uint8_t **ret_data, size_t *ret_length) {
        Io__Containerd__Cgroups__V2__Metrics m = IO__CONTAINERD__CGROUPS__V2__METRICS__INIT;
        Io__Containerd__Cgroups__V2__PidsStat pids = IO__CONTAINERD__CGROUPS__V2__PIDS_STAT__INIT;
        Io__Containerd__Cgroups__V2__CPUStat cpu = IO__CONTAINERD__CGROUPS__V2__CPUSTAT__INIT;
        Io__Containerd__Cgroups__V2__MemoryStat mem = IO__CONTAINERD__CGROUPS__V2__MEMORY_STAT__INIT;
        _cleanup_free_ char *dir = NULL;
        int r;

        r = zs_cgroup_dir(init, NULL, &dir);
        if (r < 0)
                return r;
        if ((r = read_u64(dir, "pids.current", &pids.current)) < 0 ||
            (r = read_u64(dir, "pids.max", &pids.limit)) < 0 ||
            (r = read_key(dir, "cpu.stat", "usage_usec", &cpu.usage_usec)) < 0 ||
            (r = read_key(dir, "cpu.stat", "user_usec", &cpu.user_usec)) < 0 ||
            (r = read_key(dir, "cpu.stat", "system_usec", &cpu.system_usec)) < 0 ||
            (r = read_key(dir, "cpu.stat", "nr_periods", &cpu.nr_periods)) < 0 ||
            (r = read_key(dir, "cpu.stat", "nr_throttled", &cpu.nr_throttled)) < 0 ||
            (r = read_key(dir, "cpu.stat", "throttled_usec", &cpu.throttled_usec)) < 0 ||
            (r = read_u64(dir, "memory.current", &mem.usage)) < 0 ||
            (r = read_u64(dir, "memory.max", &mem.usage_limit)) < 0 ||
            (r = read_u64(dir, "memory.swap.current", &mem.swap_usage)) < 0 ||
            (r = read_u64(dir, "memory.swap.max", &mem.swap_limit)) < 0 ||
            (r = read_key(dir, "memory.stat", "anon", &mem.anon)) < 0 ||
            (r = read_key(dir, "memory.stat", "file", &mem.file)) < 0)
                return r;
        m.pids = &pids;
        m.cpu = &cpu;
        m.memory = &mem;
        return pack(&m.base, ret_data, ret_length);
}

/* DIR/cpuacct.usage_percpu, the nanoseconds of each possible CPU, as runc reports them (PerCPU);
 * a kernel without the file leaves the list empty. */
static int read_percpu(const char *dir, uint64_t **ret, size_t *ret_n) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_free_ uint64_t *v = NULL;
        size_t size = 0, n = 0;
        ssize_t len;
        FILE *f;

        if (asprintf(&path, "%s/cpuacct.usage_percpu", dir) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        len = getline(&line, &size, f);
        fclose(f);
        if (len < 0)
                return -EIO;
        /* at most one number per two characters ("0 0 0") */
        v = calloc((size_t) len / 2 + 1, sizeof(uint64_t));
        if (!v)
                return -ENOMEM;
        for (char *p = line, *end;; p = end) {
                uint64_t x = strtoull(p, &end, 10);
                if (end == p)
                        break;
                v[n++] = x;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* cpuacct.stat counts in clock ticks; containerd's v1 metrics are in nanoseconds. */
static uint64_t ticks_to_ns(uint64_t ticks) {
        long hz = sysconf(_SC_CLK_TCK);

        return hz > 0 ? ticks * (1000000000ULL / (uint64_t) hz) : 0;
}

static int stats_v1(pid_t init, uint8_t **ret_data, size_t *ret_length) {
        Io__Containerd__Cgroups__V1__Metrics m = IO__CONTAINERD__CGROUPS__V1__METRICS__INIT;
        Io__Containerd__Cgroups__V1__PidsStat pids = IO__CONTAINERD__CGROUPS__V1__PIDS_STAT__INIT;
        Io__Containerd__Cgroups__V1__CPUStat cpu = IO__CONTAINERD__CGROUPS__V1__CPUSTAT__INIT;
        Io__Containerd__Cgroups__V1__CPUUsage usage = IO__CONTAINERD__CGROUPS__V1__CPUUSAGE__INIT;
        Io__Containerd__Cgroups__V1__MemoryStat mem = IO__CONTAINERD__CGROUPS__V1__MEMORY_STAT__INIT;
        Io__Containerd__Cgroups__V1__MemoryEntry mem_usage = IO__CONTAINERD__CGROUPS__V1__MEMORY_ENTRY__INIT;
        _cleanup_free_ char *pdir = NULL, *cdir = NULL, *mdir = NULL;
        _cleanup_free_ uint64_t *percpu = NULL;
        uint64_t user = 0, system = 0;
        int r;

        /* a controller the host does not mount is left out; ctr reads Usage whenever Memory
         * or CPU is there, so both come with theirs */
        if (zs_cgroup_dir(init, "pids", &pdir) >= 0) {
                if ((r = read_u64(pdir, "pids.current", &pids.current)) < 0 ||
                    (r = read_limit(pdir, "pids.max", 0, &pids.limit)) < 0)
                        return r;
                m.pids = &pids;
        }
        if (zs_cgroup_dir(init, "cpuacct", &cdir) >= 0) {
                if ((r = read_u64(cdir, "cpuacct.usage", &usage.total)) < 0 ||
                    (r = read_key(cdir, "cpuacct.stat", "user", &user)) < 0 ||
                    (r = read_key(cdir, "cpuacct.stat", "system", &system)) < 0 ||
                    (r = read_percpu(cdir, &percpu, &usage.n_per_cpu)) < 0)
                        return r;
                usage.per_cpu = percpu;
                usage.user = ticks_to_ns(user);
                usage.kernel = ticks_to_ns(system);
                cpu.usage = &usage;
                m.cpu = &cpu;
        }
        if (zs_cgroup_dir(init, "memory", &mdir) >= 0) {
                if ((r = read_u64(mdir, "memory.usage_in_bytes", &mem_usage.usage)) < 0 ||
                    (r = read_u64(mdir, "memory.limit_in_bytes", &mem_usage.limit)) < 0 ||
                    (r = read_u64(mdir, "memory.max_usage_in_bytes", &mem_usage.max)) < 0 ||
                    (r = read_u64(mdir, "memory.failcnt", &mem_usage.failcnt)) < 0 ||
                    (r = read_key(mdir, "memory.stat", "cache", &mem.cache)) < 0 ||
                    (r = read_key(mdir, "memory.stat", "rss", &mem.rss)) < 0 ||
                    (r = read_key(mdir, "memory.stat", "total_cache", &mem.total_cache)) < 0 ||
                    (r = read_key(mdir, "memory.stat", "total_rss", &mem.total_rss)) < 0)
                        return r;
                mem.usage = &mem_usage;
                m.memory = &mem;
        }
        if (!m.pids && !m.cpu && !m.memory)
                return -EPERM;
        return pack(&m.base, ret_data, ret_length);
}

int zs_stats(pid_t init, const char **ret_type_url, uint8_t **ret_data, size_t *ret_length) {
        bool v2 = zs_cgroup_v2();
        int r;

        r = v2 ? stats_v2(init, ret_data, ret_length) : stats_v1(init, ret_data, ret_length);
        if (r < 0)
                return r;
        *ret_type_url = v2 ? io__containerd__cgroups__v2__metrics__descriptor.name
                           : io__containerd__cgroups__v1__metrics__descriptor.name;
        return 0;
}
