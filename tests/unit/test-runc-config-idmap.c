/* SPDX-License-Identifier: MIT */
/*
 * container/idmap-mount.c alone (with config-util.c's JSON access): a mount's uidMappings,
 * gidMappings, idmap and ridmap as the runtime keeps them (the maps as /proc/PID/uid_map takes
 * them, written out by hand; the mount marked premade), and each bad one refused naming its field.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config-util.h"

struct fixture {
        struct zct_oci o;
        struct ze_sb_mount mounts[ZE_SB_MAX_PREMADE + 2];
        json_object *m;
        char *err;
};

/* mounts[0] of kind (a bind unless fs) parsed from text, in a container with clone_flags. */
static int parse(struct fixture *f, const char *text, int clone_flags, bool fs) {
        memset(f, 0, sizeof(*f));
        f->o.mounts = f->mounts;
        f->o.n_mounts = 1;
        f->o.clone_flags = clone_flags;
        f->mounts[0] = (struct ze_sb_mount){ .kind = fs ? ZE_SB_MOUNT_FS : ZE_SB_MOUNT_BIND, .dest = "/mnt" };
        f->m = json_tokener_parse(text);
        assert_non_null(f->m);
        return zct_oci_parse_mount_idmap(&f->o, f->m, 0, &f->mounts[0], &f->err);
}

static void done(struct fixture *f) {
        f->o.mounts[0].premade = false; /* no tree was made */
        zct_oci_idmaps_free(&f->o);
        json_object_put(f->m);
        free(f->err);
}

#define MAPS \
        "\"uidMappings\":[{\"containerID\":1000,\"hostID\":2000,\"size\":10}]," \
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}," \
        "{\"containerID\":70000,\"hostID\":5,\"size\":1}]"

static void test_not_id_mapped(void **state) {
        struct fixture f;

        (void) state;
        assert_int_equal(parse(&f, "{\"options\":[\"rbind\",\"ro\"]}", 0, false), 0);
        assert_false(f.mounts[0].premade);
        assert_int_equal(f.o.n_idmaps, 0);
        done(&f);
}

static void test_mappings(void **state) {
        struct fixture f;

        (void) state;
        /* mappings alone are an idmap (runc 1.2), not recursive */
        assert_int_equal(parse(&f, "{\"options\":[\"rbind\"]," MAPS "}", 0, false), 0);
        assert_true(f.mounts[0].premade);
        assert_int_equal(f.mounts[0].tree_fd, -1);
        assert_int_equal(f.o.n_idmaps, 1);
        assert_ptr_equal(f.o.idmaps[0].dest, f.mounts[0].dest);
        assert_false(f.o.idmaps[0].recursive);
        assert_string_equal(f.o.idmaps[0].uid_map, "1000 2000 10\n");
        assert_string_equal(f.o.idmaps[0].gid_map, "0 100000 65536\n70000 5 1\n");
        done(&f);
        assert_int_equal(parse(&f, "{\"options\":[\"rbind\",\"ridmap\"]," MAPS "}", 0, false), 0);
        assert_true(f.o.idmaps[0].recursive);
        done(&f);
        assert_int_equal(parse(&f, "{\"options\":[\"bind\",\"idmap\"]," MAPS "}", 0, false), 0);
        assert_false(f.o.idmaps[0].recursive);
        done(&f);
}

/* idmap without mappings: the container's user namespace, new or joined by path */
static void test_containers_user_namespace(void **state) {
        struct fixture f;

        (void) state;
        assert_int_equal(parse(&f, "{\"options\":[\"bind\",\"idmap\"]}", CLONE_NEWUSER | CLONE_NEWNS, false), 0);
        assert_true(f.mounts[0].premade);
        assert_null(f.o.idmaps[0].uid_map);
        assert_null(f.o.idmaps[0].gid_map);
        done(&f);
        {
                struct fixture g;
                int r;

                memset(&g, 0, sizeof(g));
                g.o.mounts = g.mounts;
                g.o.n_mounts = 1;
                g.o.ns_paths[0] = (struct zct_ns_path){ .flag = CLONE_NEWUSER, .path = (char *) "/proc/1/ns/user" };
                g.o.n_ns_paths = 1;
                g.mounts[0] = (struct ze_sb_mount){ .kind = ZE_SB_MOUNT_BIND, .dest = "/mnt" };
                g.m = json_tokener_parse("{\"options\":[\"rbind\",\"ridmap\"]}");
                r = zct_oci_parse_mount_idmap(&g.o, g.m, 0, &g.mounts[0], &g.err);
                assert_int_equal(r, 0);
                assert_true(g.o.idmaps[0].recursive);
                done(&g);
        }
}

static void refused(const char *text, int clone_flags, bool fs, const char *what) {
        struct fixture f;

        assert_true(parse(&f, text, clone_flags, fs) < 0);
        assert_non_null(f.err);
        if (!strstr(f.err, what))
                fail_msg("\"%s\" does not name %s", f.err, what);
        assert_false(f.mounts[0].premade);
        assert_int_equal(f.o.n_idmaps, 0);
        done(&f);
}

static void test_refusals(void **state) {
        (void) state;
        refused("{\"options\":[\"idmap\"]," MAPS "}", 0, true, "mounts[0]: id-mapped mounts are bind mounts only");
        refused("{\"options\":[\"bind\",\"idmap\"]}", 0, false, "idmap without uidMappings and gidMappings");
        refused("{\"options\":[\"rbind\",\"ridmap\"]}", 0, false, "ridmap without");
        refused("{\"options\":[\"bind\",\"idmap\",\"ridmap\"]," MAPS "}", 0, false, "idmap or ridmap, not both");
        refused("{\"uidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}]}", 0, false,
                "both uidMappings and gidMappings");
        refused("{\"gidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}]}", 0, false,
                "both uidMappings and gidMappings");
        refused("{\"uidMappings\":[],\"gidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}]}", 0, false,
                "mounts[0].uidMappings");
        refused("{\"uidMappings\":{},\"gidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}]}", 0, false,
                "mounts[0].uidMappings");
        static const char *const bad[] = {
                "{\"containerID\":0,\"hostID\":0}",
                "{\"containerID\":-1,\"hostID\":0,\"size\":1}",
                "{\"containerID\":0,\"hostID\":-5,\"size\":1}",
                "{\"containerID\":0,\"hostID\":0,\"size\":0}",
                "{\"containerID\":\"0\",\"hostID\":0,\"size\":1}",
                "{\"containerID\":0,\"hostID\":4294967295,\"size\":1}",
                "{\"containerID\":4294967000,\"hostID\":0,\"size\":1000}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char text[512];

                snprintf(text, sizeof(text),
                         "{\"uidMappings\":[{\"containerID\":0,\"hostID\":0,\"size\":1}],\"gidMappings\":[%s]}",
                         bad[i]);
                refused(text, 0, false, "mounts[0].gidMappings[0]");
        }
}

static void test_at_most_premade_mounts(void **state) {
        struct fixture f;

        (void) state;
        memset(&f, 0, sizeof(f));
        f.o.mounts = f.mounts;
        for (size_t i = 0; i < ZE_SB_MAX_PREMADE; i++)
                f.mounts[i] = (struct ze_sb_mount){ .kind = ZE_SB_MOUNT_BIND, .premade = true, .tree_fd = -1 };
        f.mounts[ZE_SB_MAX_PREMADE] = (struct ze_sb_mount){ .kind = ZE_SB_MOUNT_BIND, .dest = "/mnt" };
        f.o.n_mounts = ZE_SB_MAX_PREMADE + 1;
        f.m = json_tokener_parse("{\"options\":[\"bind\"]," MAPS "}");
        assert_int_equal(zct_oci_parse_mount_idmap(&f.o, f.m, 40, &f.mounts[ZE_SB_MAX_PREMADE], &f.err), -E2BIG);
        assert_non_null(strstr(f.err, "mounts[40]: more than 32 id-mapped mounts"));
        zct_oci_idmaps_free(&f.o);
        json_object_put(f.m);
        free(f.err);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_not_id_mapped),
                cmocka_unit_test(test_mappings),
                cmocka_unit_test(test_containers_user_namespace),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_at_most_premade_mounts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
