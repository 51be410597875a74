/* SPDX-License-Identifier: MIT */
/*
 * container/cgroup-resources.c alone: linux.resources -> cgroup file writes, on a v1 host, a pure
 * cgroup v2 host and a hybrid one, with runc's conversions worked out by hand here; every field
 * that cannot be applied, and every unknown one, refused with its name. The host's own cgroups
 * are never touched: the masks say which controllers are where.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup-resources.h"
#include "testutil.h"

#define ALL_V1 \
        (ZCT_RES_BIT(ZCT_RES_CPU) | ZCT_RES_BIT(ZCT_RES_CPUSET) | ZCT_RES_BIT(ZCT_RES_MEMORY) | \
         ZCT_RES_BIT(ZCT_RES_PIDS) | ZCT_RES_BIT(ZCT_RES_IO) | ZCT_RES_BIT(ZCT_RES_HUGETLB) | \
         ZCT_RES_BIT(ZCT_RES_NET_CLS) | ZCT_RES_BIT(ZCT_RES_NET_PRIO))
#define ALL_V2 \
        (ZCT_RES_BIT(ZCT_RES_CPU) | ZCT_RES_BIT(ZCT_RES_CPUSET) | ZCT_RES_BIT(ZCT_RES_MEMORY) | \
         ZCT_RES_BIT(ZCT_RES_PIDS) | ZCT_RES_BIT(ZCT_RES_IO) | ZCT_RES_BIT(ZCT_RES_HUGETLB) | \
         ZCT_RES_BIT(ZCT_RES_RDMA) | ZCT_RES_BIT(ZCT_RES_UNIFIED))
/* this machine's kind of hybrid: every controller on v1 but hugetlb, cgroup2 beside them */
#define HYBRID_V1 (ALL_V1 & ~ZCT_RES_BIT(ZCT_RES_HUGETLB))
#define HYBRID_V2 (ZCT_RES_BIT(ZCT_RES_HUGETLB) | ZCT_RES_BIT(ZCT_RES_UNIFIED))

/* The plan of json as text, a line a write: "v1 FILE=VALUE", with " (or ALT=VALUE)", " [+CTL]"
 * for a controller enabled first; or "error: MESSAGE". */
static char *plan_text(const char *json, unsigned v1, unsigned v2) {
        json_object *res = json ? json_tokener_parse(json) : NULL;
        struct zct_res_plan plan = {};
        char *err = NULL, *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r;

        assert_true(!json || res);
        assert_non_null(f);
        r = zct_res_plan(res, v1, v2, &plan, &err);
        if (r < 0) {
                assert_non_null(err);
                fprintf(f, "error: %s\n", err);
        }
        for (size_t i = 0; r >= 0 && i < plan.n; i++) {
                const struct zct_res_write *w = &plan.w[i];

                fprintf(f, "%s %s=%s", w->v2 ? "v2" : "v1", w->file, w->value);
                if (w->alt_file)
                        fprintf(f, " (or %s=%s)", w->alt_file, w->alt_value);
                if (w->enable)
                        fprintf(f, " [+%s]", w->enable);
                fprintf(f, "\n");
        }
        fclose(f);
        zct_res_plan_done(&plan);
        free(err);
        json_object_put(res);
        return text;
}

static void expect_plan(const char *json, unsigned v1, unsigned v2, const char *want) {
        char *got = plan_text(json, v1, v2);

        if (strcmp(got, want) != 0)
                fail_msg("%s\n--- got:\n%s--- want:\n%s", json, got, want);
        free(got);
}

/* The plan of json on a machine with every controller on v1 (want_v1), and on one with every
 * controller on v2 (want_v2). */
static void expect_v1_v2(const char *json, const char *want_v1, const char *want_v2) {
        expect_plan(json, ALL_V1, 0, want_v1);
        expect_plan(json, 0, ALL_V2, want_v2);
}

/* Refused, with a message that starts with the field's name. */
static void expect_refused(const char *json, unsigned v1, unsigned v2, const char *field) {
        char *got = plan_text(json, v1, v2);
        char *want = NULL;

        assert_true(asprintf(&want, "error: %s", field) > 0);
        if (strncmp(got, want, strlen(want)) != 0)
                fail_msg("%s\n--- got:\n%s--- want a refusal naming %s", json, got, field);
        free(want);
        free(got);
}

static void test_conversions(void **state) {
        int64_t s = 0;

        (void) state;
        /* cpu.weight = 1 + (shares - 2) * 9999 / 262142 */
        assert_int_equal(zct_res_shares_to_weight(0), 0);
        assert_int_equal(zct_res_shares_to_weight(2), 1);
        assert_int_equal(zct_res_shares_to_weight(1024), 39);
        assert_int_equal(zct_res_shares_to_weight(262144), 10000);
        /* io.weight = 1 + (weight - 10) * 9999 / 990 */
        assert_int_equal(zct_res_blkio_to_io_weight(0), 0);
        assert_int_equal(zct_res_blkio_to_io_weight(10), 1);
        assert_int_equal(zct_res_blkio_to_io_weight(500), 4950);
        assert_int_equal(zct_res_blkio_to_io_weight(1000), 10000);
        /* memory.swap.max = swap - limit; -1 and unset pass; unlimited memory means unlimited swap */
        assert_int_equal(zct_res_swap_v2(512, 256, &s, NULL), 0);
        assert_int_equal(s, 256);
        assert_int_equal(zct_res_swap_v2(0, -1, &s, NULL), 0);
        assert_int_equal(s, -1);
        assert_int_equal(zct_res_swap_v2(-1, 256, &s, NULL), 0);
        assert_int_equal(s, -1);
        assert_int_equal(zct_res_swap_v2(0, 256, &s, NULL), 0);
        assert_int_equal(s, 0);
        assert_int_equal(zct_res_swap_v2(128, 256, &s, NULL), -EINVAL);
        assert_int_equal(zct_res_swap_v2(512, 0, &s, NULL), -EINVAL);
        assert_int_equal(zct_res_swap_v2(512, -1, &s, NULL), -EINVAL);
}

static void test_nothing_asked(void **state) {
        (void) state;
        expect_plan(NULL, ALL_V1, 0, "");
        expect_plan("{}", ALL_V1, 0, "");
        expect_plan("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],\"cpu\":null}", 0, 0, "");
        expect_plan("{\"pids\":{\"limit\":0},\"memory\":{\"useHierarchy\":true}}", 0, 0, "");
}

static void test_cpu(void **state) {
        const char *cpu =
                "{\"cpu\":{\"shares\":512,\"quota\":50000,\"period\":100000,\"cpus\":\"0-1\",\"mems\":\"0\"}}";

        (void) state;
        expect_v1_v2(cpu,
                     "v1 cpu.shares=512\nv1 cpu.cfs_period_us=100000\nv1 cpu.cfs_quota_us=50000\n"
                     "v1 cpuset.cpus=0-1\nv1 cpuset.mems=0\n",
                     "v2 cpu.weight=20 [+cpu]\nv2 cpu.max=50000 100000 [+cpu]\nv2 cpuset.cpus=0-1 [+cpuset]\n"
                     "v2 cpuset.mems=0 [+cpuset]\n");
        expect_plan("{\"cpu\":{\"quota\":-1}}", 0, ALL_V2, "v2 cpu.max=max [+cpu]\n");
        expect_plan("{\"cpu\":{\"quota\":-1}}", ALL_V1, 0, "v1 cpu.cfs_quota_us=-1\n");
        expect_plan("{\"cpu\":{\"period\":250000}}", 0, ALL_V2, "v2 cpu.max=max 250000 [+cpu]\n");
        expect_plan("{\"cpu\":{\"realtimeRuntime\":950000,\"realtimePeriod\":1000000,\"idle\":1,\"burst\":1000}}",
                    ALL_V1, 0,
                    "v1 cpu.cfs_burst_us=1000\nv1 cpu.rt_period_us=1000000\nv1 cpu.rt_runtime_us=950000\n"
                    "v1 cpu.idle=1\n");
        expect_refused("{\"cpu\":{\"realtimeRuntime\":950000}}", 0, ALL_V2, "linux.resources.cpu.realtimeRuntime");
        expect_refused("{\"cpu\":{\"shares\":1}}", ALL_V1, 0, "linux.resources.cpu.shares");
        expect_refused("{\"cpu\":{\"cpus\":\"0; rm\"}}", ALL_V1, 0, "linux.resources.cpu.cpus");
        expect_refused("{\"cpu\":{\"shares\":\"512\"}}", ALL_V1, 0, "linux.resources.cpu.shares");
        expect_refused("{\"cpu\":{\"shares\":512}}", 0, 0, "linux.resources.cpu");
}

static void test_memory(void **state) {
        const char *mem = "{\"memory\":{\"limit\":268435456,\"reservation\":134217728,\"swap\":536870912}}";

        (void) state;
        expect_v1_v2(mem,
                     "v1 memory.limit_in_bytes=268435456\nv1 memory.memsw.limit_in_bytes=536870912\n"
                     "v1 memory.soft_limit_in_bytes=134217728\n",
                     "v2 memory.swap.max=268435456 [+memory]\nv2 memory.max=268435456 [+memory]\n"
                     "v2 memory.low=134217728 [+memory]\n");
        expect_plan("{\"memory\":{\"limit\":-1}}", 0, ALL_V2,
                    "v2 memory.swap.max=max [+memory]\nv2 memory.max=max [+memory]\n");
        expect_plan("{\"memory\":{\"limit\":-1}}", ALL_V1, 0,
                    "v1 memory.limit_in_bytes=-1\nv1 memory.memsw.limit_in_bytes=-1\n");
        expect_plan("{\"memory\":{\"swappiness\":10,\"disableOOMKiller\":true,\"kernelTCP\":1048576}}", ALL_V1, 0,
                    "v1 memory.kmem.tcp.limit_in_bytes=1048576\nv1 memory.swappiness=10\nv1 memory.oom_control=1\n");
        expect_refused("{\"memory\":{\"swappiness\":10}}", 0, ALL_V2, "linux.resources.memory.swappiness");
        /* -1, however spelt, is the system's default: nothing to write, on v2 too */
        expect_plan("{\"memory\":{\"swappiness\":-1}}", 0, ALL_V2, "");
        expect_plan("{\"memory\":{\"swappiness\":18446744073709551615}}", ALL_V1, 0, "");
        expect_refused("{\"memory\":{\"swappiness\":101}}", ALL_V1, 0, "linux.resources.memory.swappiness");
        expect_refused("{\"memory\":{\"disableOOMKiller\":true}}", 0, ALL_V2,
                       "linux.resources.memory.disableOOMKiller");
        expect_refused("{\"memory\":{\"kernelTCP\":1}}", 0, ALL_V2, "linux.resources.memory.kernelTCP");
        /* kernel memory limits are gone from the kernel: nothing to write, as runc writes nothing
         * (config.c notes it for the log) */
        expect_plan("{\"memory\":{\"kernel\":1}}", ALL_V1, 0, "");
        expect_plan("{\"memory\":{\"kernel\":1,\"limit\":-1}}", 0, ALL_V2,
                    "v2 memory.swap.max=max [+memory]\nv2 memory.max=max [+memory]\n");
        expect_refused("{\"memory\":{\"swap\":536870912}}", 0, ALL_V2, "linux.resources.memory.swap");
        expect_refused("{\"memory\":{\"limit\":2,\"swap\":1}}", 0, ALL_V2, "linux.resources.memory.swap");
        expect_refused("{\"memory\":{\"useHierarchy\":false}}", ALL_V1, 0, "linux.resources.memory.useHierarchy");
        expect_refused("{\"memory\":{\"limit\":1,\"max\":2}}", ALL_V1, 0, "linux.resources.memory.max");
}

static void test_pids_and_io(void **state) {
        (void) state;
        expect_plan("{\"pids\":{\"limit\":42}}", ALL_V1, 0, "v1 pids.max=42\n");
        expect_plan("{\"pids\":{\"limit\":-1}}", 0, ALL_V2, "v2 pids.max=max [+pids]\n");
        expect_v1_v2("{\"blockIO\":{\"weight\":500}}", "v1 blkio.bfq.weight=500 (or blkio.weight=500)\n",
                     "v2 io.bfq.weight=500 (or io.weight=4950) [+io]\n");
        expect_plan("{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":1000}],"
                    "\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":1048576}],"
                    "\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,\"rate\":100}]}}",
                    0, ALL_V2,
                    "v2 io.bfq.weight=8:0 1000 (or io.weight=8:0 10000) [+io]\nv2 io.max=8:0 rbps=1048576 [+io]\n"
                    "v2 io.max=8:16 wiops=100 [+io]\n");
        expect_plan("{\"blockIO\":{\"throttleWriteBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":5}],"
                    "\"throttleReadIOPSDevice\":[{\"major\":8,\"minor\":0,\"rate\":7}]}}",
                    ALL_V1, 0, "v1 blkio.throttle.write_bps_device=8:0 5\nv1 blkio.throttle.read_iops_device=8:0 7\n");
        expect_refused("{\"blockIO\":{\"leafWeight\":100}}", 0, ALL_V2, "linux.resources.blockIO.leafWeight");
        expect_refused("{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"rate\":1}]}}", ALL_V1, 0,
                       "linux.resources.blockIO.throttleReadBpsDevice[0].minor");
}

static void test_hugetlb_network_rdma(void **state) {
        const char *huge = "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}]}";

        (void) state;
        expect_plan(huge, ALL_V1, 0, "v1 hugetlb.2MB.limit_in_bytes=4194304\n");
        expect_plan(huge, HYBRID_V1, HYBRID_V2, "v2 hugetlb.2MB.max=4194304 [+hugetlb]\n");
        expect_refused("{\"hugepageLimits\":[{\"pageSize\":\"../2MB\",\"limit\":1}]}", ALL_V1, 0,
                       "linux.resources.hugepageLimits[0].pageSize");
        expect_refused("{\"hugepageLimits\":[{\"pageSize\":\"2XB\",\"limit\":1}]}", ALL_V1, 0,
                       "linux.resources.hugepageLimits[0].pageSize");
        expect_plan("{\"network\":{\"classID\":1048577,\"priorities\":[{\"name\":\"eth0\",\"priority\":5}]}}", ALL_V1,
                    0, "v1 net_cls.classid=1048577\nv1 net_prio.ifpriomap=eth0 5\n");
        expect_refused("{\"network\":{\"classID\":1}}", 0, ALL_V2, "linux.resources.network.classID");
        expect_plan("{\"rdma\":{\"mlx5_0\":{\"hcaHandles\":3,\"hcaObjects\":1000}}}", 0, ALL_V2,
                    "v2 rdma.max=mlx5_0 hca_handle=3 hca_object=1000 [+rdma]\n");
        expect_refused("{\"rdma\":{\"mlx5_0\":{\"hcaHandles\":3}}}", ALL_V1, 0, "linux.resources.rdma.mlx5_0");
}

static void test_unified(void **state) {
        (void) state;
        expect_plan("{\"unified\":{\"cgroup.max.descendants\":\"5\",\"memory.high\":\"300M\"}}", 0, ALL_V2,
                    "v2 cgroup.max.descendants=5\nv2 memory.high=300M [+memory]\n");
        expect_plan("{\"unified\":{\"misc.max\":\"res_a 1\"}}", 0, ALL_V2, "v2 misc.max=res_a 1 [+misc]\n");
        expect_plan("{\"unified\":{\"cgroup.max.depth\":\"2\"}}", HYBRID_V1, HYBRID_V2, "v2 cgroup.max.depth=2\n");
        /* page sizes are spelt in capitals */
        expect_plan("{\"unified\":{\"hugetlb.2MB.max\":\"4194304\"}}", HYBRID_V1, HYBRID_V2,
                    "v2 hugetlb.2MB.max=4194304 [+hugetlb]\n");
        expect_refused("{\"unified\":{\"pids.max\\n\":\"1\"}}", 0, ALL_V2, "linux.resources.unified.pids.max");
        expect_refused("{\"unified\":{\"pids max\":\"1\"}}", 0, ALL_V2, "linux.resources.unified.pids max");
        /* the controller is on a v1 hierarchy: cgroup2 has no such file for the container */
        expect_refused("{\"unified\":{\"cpu.max\":\"max\"}}", HYBRID_V1, HYBRID_V2, "linux.resources.unified.cpu.max");
        expect_refused("{\"unified\":{\"cpu.max\":\"max\"}}", ALL_V1, 0, "linux.resources.unified.cpu.max");
        expect_refused("{\"unified\":{\"../cgroup.procs\":\"1\"}}", 0, ALL_V2,
                       "linux.resources.unified.../cgroup.procs");
        expect_refused("{\"unified\":{\"a/b.c\":\"1\"}}", 0, ALL_V2, "linux.resources.unified.a/b.c");
        expect_refused("{\"unified\":{\"nodot\":\"1\"}}", 0, ALL_V2, "linux.resources.unified.nodot");
        expect_refused("{\"unified\":{\".max\":\"1\"}}", 0, ALL_V2, "linux.resources.unified..max");
        expect_refused("{\"unified\":{\"pids.max\":5}}", 0, ALL_V2, "linux.resources.unified.pids.max");
}

static void test_unknown_fields(void **state) {
        (void) state;
        expect_refused("{\"intelRdt\":{}}", ALL_V1, 0, "linux.resources.intelRdt");
        expect_refused("{\"cpu\":{\"shares\":512,\"weight\":100}}", ALL_V1, 0, "linux.resources.cpu.weight");
        expect_refused("{\"pids\":{\"max\":1}}", ALL_V1, 0, "linux.resources.pids.max");
        expect_refused("{\"blockIO\":{\"weigth\":1}}", ALL_V1, 0, "linux.resources.blockIO.weigth");
        expect_refused("{\"rdma\":{\"x\":{\"handles\":1}}}", 0, ALL_V2, "linux.resources.rdma.x.handles");
        expect_refused("{\"network\":{\"classIdentifier\":1}}", ALL_V1, 0, "linux.resources.network.classIdentifier");
        expect_refused("{\"Cpu\":{\"sharez\":2}}", ALL_V1, 0, "linux.resources.cpu.sharez");
}

/* Go's decoder (runc's) matches a member to a field in any case: "CPU" is "cpu", "Cpus" "cpus". */
static void test_keys_in_any_case(void **state) {
        (void) state;
        expect_plan("{\"CPU\":{\"Cpus\":\"0\",\"MEMS\":\"0\"}}", ALL_V1, 0, "v1 cpuset.cpus=0\nv1 cpuset.mems=0\n");
        expect_plan("{\"network\":{\"classId\":1}}", ALL_V1, 0, "v1 net_cls.classid=1\n");
        expect_plan("{\"Pids\":{\"Limit\":3}}", 0, ALL_V2, "v2 pids.max=3 [+pids]\n");
        /* beside the field's own spelling: the later fills the earlier (update.bats' "cpu" and "CPU") */
        expect_plan("{\"cpu\":{\"shares\":100,\"cpus\":\"1\"},\"CPU\":{\"Cpus\":\"0\"}}", ALL_V1, 0,
                    "v1 cpu.shares=100\nv1 cpuset.cpus=0\n");
        expect_plan("{\"CPU\":{\"cpus\":\"0\"},\"cpu\":{\"shares\":100,\"cpus\":\"1\"}}", ALL_V1, 0,
                    "v1 cpu.shares=100\nv1 cpuset.cpus=1\n");
        expect_plan("{\"pids\":{\"limit\":3,\"LIMIT\":4}}", ALL_V1, 0, "v1 pids.max=4\n");
        expect_plan("{\"pids\":{\"LIMIT\":4,\"limit\":3}}", ALL_V1, 0, "v1 pids.max=3\n");
}

TU_MAIN(cmocka_unit_test(test_conversions), cmocka_unit_test(test_nothing_asked), cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_memory), cmocka_unit_test(test_pids_and_io), cmocka_unit_test(test_hugetlb_network_rdma),
        cmocka_unit_test(test_unified), cmocka_unit_test(test_unknown_fields), cmocka_unit_test(test_keys_in_any_case))
