/* SPDX-License-Identifier: MIT */
/*
 * container/config-mempolicy.c alone (with config-util.c's JSON access): linux.memoryPolicy as
 * set_mempolicy(2) takes it (mode, flags in the mode argument, the node mask and its maxnode,
 * worked out by hand from the kernel's ABI), and each bad input refused naming its field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config-util.h"

/* Parses {"linux":{"memoryPolicy": POLICY}}: 0 or the error; *err (malloc'd) the message. */
static int parse(const char *policy, struct zct_oci *o, char **err) {
        char text[1024];
        int r;

        snprintf(text, sizeof(text), "{\"linux\":{\"memoryPolicy\":%s}}", policy);
        memset(o, 0, sizeof(*o));
        o->root = json_tokener_parse(text);
        assert_non_null(o->root);
        *err = NULL;
        r = zct_oci_parse_mempolicy(o, zct_get(o->root, "linux"), err);
        json_object_put(o->root);
        o->root = NULL;
        return r;
}

static void accepted(const char *policy, int mode, unsigned flags, unsigned long maxnode, uint64_t word0) {
        struct zct_oci o;
        char *err;

        if (parse(policy, &o, &err) < 0)
                fail_msg("%s refused: %s", policy, err);
        assert_true(o.mempolicy.set);
        assert_int_equal(o.mempolicy.mode, mode);
        assert_int_equal(o.mempolicy.flags, flags);
        assert_int_equal(o.mempolicy.maxnode, maxnode);
        assert_true(o.mempolicy.nodes[0] == word0);
        free(err);
}

/* Refused, with a message naming what. */
static void refused(const char *policy, const char *what) {
        struct zct_oci o;
        char *err;

        assert_true(parse(policy, &o, &err) < 0);
        assert_non_null(err);
        if (!strstr(err, what))
                fail_msg("\"%s\" does not name %s", err, what);
        assert_false(o.mempolicy.set);
        free(err);
}

static void test_none(void **state) {
        struct zct_oci o;
        char *err;

        (void) state;
        assert_int_equal(parse("null", &o, &err), 0);
        assert_false(o.mempolicy.set);
        memset(&o, 0, sizeof(o));
        o.root = json_tokener_parse("{\"linux\":{}}");
        assert_int_equal(zct_oci_parse_mempolicy(&o, zct_get(o.root, "linux"), &err), 0);
        assert_false(o.mempolicy.set);
        json_object_put(o.root);
}

/* <linux/mempolicy.h>: DEFAULT 0, PREFERRED 1, BIND 2, INTERLEAVE 3, LOCAL 4, PREFERRED_MANY 5,
 * WEIGHTED_INTERLEAVE 6; NUMA_BALANCING 1 << 13, RELATIVE_NODES 1 << 14, STATIC_NODES 1 << 15.
 * The kernel reads maxnode - 1 bits: node 0 alone is maxnode 2. */
static void test_modes_and_flags(void **state) {
        (void) state;
        accepted("{\"mode\":\"MPOL_DEFAULT\"}", 0, 0, 0, 0);
        accepted("{\"mode\":\"MPOL_LOCAL\",\"nodes\":\"\"}", 4, 0, 0, 0);
        accepted("{\"mode\":\"MPOL_PREFERRED\"}", 1, 0, 0, 0);
        accepted("{\"mode\":\"MPOL_PREFERRED\",\"nodes\":\"0\"}", 1, 0, 2, 1);
        accepted("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\"}", 2, 0, 2, 1);
        accepted("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"flags\":[\"MPOL_F_NUMA_BALANCING\"]}", 2, 1U << 13, 2, 1);
        accepted("{\"mode\":\"MPOL_INTERLEAVE\",\"nodes\":\"0\"}", 3, 0, 2, 1);
        accepted("{\"mode\":\"MPOL_WEIGHTED_INTERLEAVE\",\"nodes\":\"0\"}", 6, 0, 2, 1);
        accepted("{\"mode\":\"MPOL_PREFERRED_MANY\",\"nodes\":\"0\"}", 5, 0, 2, 1);
        /* static and relative nodes need not be online now: the kernel takes them as given */
        accepted("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0-3,7\",\"flags\":[\"MPOL_F_STATIC_NODES\"]}", 2, 1U << 15, 9,
                 0x8f);
        accepted("{\"mode\":\"MPOL_INTERLEAVE\",\"nodes\":\"1,3\",\"flags\":[\"MPOL_F_RELATIVE_NODES\"]}", 3, 1U << 14,
                 5, 0xa);
}

static void test_node_lists(void **state) {
        uint64_t mask[ZE_SB_NUMA_WORDS];
        unsigned long maxnode;

        (void) state;
        assert_int_equal(zct_mempolicy_parse_nodes("0-3,7", mask, &maxnode), 0);
        assert_true(mask[0] == 0x8f);
        assert_int_equal(maxnode, 9);
        assert_int_equal(zct_mempolicy_parse_nodes("", mask, &maxnode), 0);
        assert_int_equal(maxnode, 0);
        assert_true(mask[0] == 0);
        assert_int_equal(zct_mempolicy_parse_nodes("64,1023", mask, &maxnode), 0);
        assert_true(mask[1] == 1 && mask[15] == UINT64_C(1) << 63 && mask[0] == 0);
        assert_int_equal(maxnode, 1025);
        assert_int_equal(zct_mempolicy_parse_nodes("5-5", mask, &maxnode), 0);
        assert_true(mask[0] == 0x20);
        assert_int_equal(zct_mempolicy_parse_nodes("1024", mask, &maxnode), -ERANGE);
        assert_int_equal(zct_mempolicy_parse_nodes("99999999999999999999", mask, &maxnode), -ERANGE);
        static const char *const bad[] = {
                "a", "1-", "-1", "3-1", "1,,2", "1,", ",1", " 1", "1 ", "0x1", "1-2-3", "+1"
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (zct_mempolicy_parse_nodes(bad[i], mask, &maxnode) != -EINVAL)
                        fail_msg("\"%s\" taken as a node list", bad[i]);
}

static void test_refusals(void **state) {
        (void) state;
        refused("\"MPOL_BIND\"", "linux.memoryPolicy");
        refused("{}", "linux.memoryPolicy.mode");
        refused("{\"mode\":\"MPOL_MAGIC\",\"nodes\":\"0\"}", "linux.memoryPolicy.mode");
        refused("{\"mode\":\"bind\",\"nodes\":\"0\"}", "linux.memoryPolicy.mode");
        refused("{\"mode\":2,\"nodes\":\"0\"}", "linux.memoryPolicy.mode");
        refused("{\"mode\":\"MPOL_BIND\"}", "MPOL_BIND needs nodes");
        refused("{\"mode\":\"MPOL_INTERLEAVE\",\"nodes\":\"\"}", "MPOL_INTERLEAVE needs nodes");
        refused("{\"mode\":\"MPOL_DEFAULT\",\"nodes\":\"0\"}", "MPOL_DEFAULT takes no nodes");
        refused("{\"mode\":\"MPOL_LOCAL\",\"nodes\":\"0\"}", "MPOL_LOCAL takes no nodes");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0-\"}", "linux.memoryPolicy.nodes");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"4096\"}", "linux.memoryPolicy.nodes");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":0}", "linux.memoryPolicy.nodes");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"flags\":[\"MPOL_F_NODE\"]}", "linux.memoryPolicy.flags[0]");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"flags\":\"MPOL_F_STATIC_NODES\"}",
                "linux.memoryPolicy.flags");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"flags\":[\"MPOL_F_STATIC_NODES\",\"MPOL_F_RELATIVE_NODES\"]"
                "}",
                "exclude each other");
        refused("{\"mode\":\"MPOL_INTERLEAVE\",\"nodes\":\"0\",\"flags\":[\"MPOL_F_NUMA_BALANCING\"]}",
                "MPOL_F_NUMA_BALANCING is for MPOL_BIND");
        refused("{\"mode\":\"MPOL_PREFERRED\",\"flags\":[\"MPOL_F_STATIC_NODES\"]}", "need nodes");
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"node\":\"1\"}", "linux.memoryPolicy.node");
}

/* A node this host does not have online is refused by number, unless static or relative. */
static void test_offline_node(void **state) {
        (void) state;
        if (access("/sys/devices/system/node/online", R_OK) < 0)
                skip(); /* a kernel without NUMA: the kernel itself decides */
        refused("{\"mode\":\"MPOL_BIND\",\"nodes\":\"0,1000\"}", "node 1000 is not online");
        accepted("{\"mode\":\"MPOL_BIND\",\"nodes\":\"1000\",\"flags\":[\"MPOL_F_STATIC_NODES\"]}", 2, 1U << 15, 1002,
                 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_none),         cmocka_unit_test(test_modes_and_flags),
                cmocka_unit_test(test_node_lists),   cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_offline_node),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
