/* SPDX-License-Identifier: MIT */
/*
 * Id-mapped bind mounts (runtime-spec 1.1: mounts[].uidMappings/gidMappings, the "idmap" and
 * "ridmap" options), as runc 1.2 and crun make them.
 *
 * The kernel lets only a caller with CAP_SYS_ADMIN over the source's filesystem (the initial
 * user namespace for a disk or the host's tmpfs) give a mount an id mapping, and only while the
 * mount is detached. The container's init may already be in a user namespace of its own, so the
 * runtime makes each such mount before the clone: a detached copy of the source (open_tree),
 * its attributes (ro, nosuid, ...) set, then MOUNT_ATTR_IDMAP with a user namespace holding the
 * mount's mappings (a short-lived child made in a new user namespace, its maps written, its
 * namespace kept by an fd). The init attaches the copy as it is on its destination's fd
 * (engine/sandbox-mount.c: premade) and closes it.
 *
 * Meaning of a mapping, as the kernel takes it and runc writes it: a file owned on disk by
 * containerID + i is seen through the mount as owned by hostID + i (and what the container
 * creates there as hostID + i is written as containerID + i); in a container with a user
 * namespace, that id is then seen as the container's user namespace maps it. "idmap" without
 * mappings takes the container's own user namespace (files appear inside with the ids they have
 * on disk). "idmap" maps the mount itself, "ridmap" every mount below it too (with rbind).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config-util.h"
#include "fd-util.h"
#include "util.h"

#define MAX_MAP_LINES 340 /* the kernel's limit on a uid_map */

/* mounts[idx].uidMappings (or gid) as /proc/PID/uid_map takes it: *ret NULL when absent. */
static int parse_map(json_object *a, const char *what, size_t idx, char **ret, char **ret_error) {
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        *ret = NULL;
        if (!a)
                return 0;
        if (!json_object_is_type(a, json_type_array) || zct_array_len(a) == 0 || zct_array_len(a) > MAX_MAP_LINES)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: mounts[%zu].%s: an array of 1 to %d mappings is wanted", idx, what,
                                  MAX_MAP_LINES);
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < zct_array_len(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *keys[3] = { "containerID", "hostID", "size" };
                int64_t v[3];

                for (size_t k = 0; k < 3; k++) {
                        json_object *n = zct_get(e, keys[k]);
                        v[k] = n && json_object_is_type(n, json_type_int) ? json_object_get_int64(n) : -1;
                }
                /* ids are 32 bits, (uid_t) -1 excluded; a range may not wrap */
                if (v[0] < 0 || v[1] < 0 || v[2] <= 0 || v[0] + v[2] > UINT32_MAX || v[1] + v[2] > UINT32_MAX) {
                        fclose(f);
                        free(text);
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: mounts[%zu].%s[%zu]: containerID, hostID and size must be "
                                          "ids (0 to 4294967294) and a size of at least 1 that stays below 4294967295",
                                          idx, what, i);
                }
                fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", v[0], v[1], v[2]);
        }
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

static bool has_option(json_object *opts, const char *name) {
        for (size_t i = 0; i < zct_array_len(opts); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(opts, i));
                if (s && streq(s, name))
                        return true;
        }
        return false;
}

int zct_oci_parse_mount_idmap(struct zct_oci *o, json_object *m, size_t idx, struct ze_sb_mount *sm, char **ret_error) {
        json_object *opts = zct_get(m, "options"), *um = zct_get(m, "uidMappings"), *gm = zct_get(m, "gidMappings");
        bool idmap = has_option(opts, "idmap"), ridmap = has_option(opts, "ridmap");
        _cleanup_free_ char *uid_map = NULL, *gid_map = NULL;
        struct zct_mount_idmap *grown, *e;
        size_t premade = 0;
        int r;

        if (!idmap && !ridmap && !um && !gm)
                return 0;
        if (sm->kind != ZE_SB_MOUNT_BIND)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: mounts[%zu]: id-mapped mounts are bind mounts only (as runc has them)",
                                  idx);
        if (idmap && ridmap)
                return zct_errorf(ret_error, -EINVAL, "config.json: mounts[%zu].options: idmap or ridmap, not both",
                                  idx);
        r = parse_map(um, "uidMappings", idx, &uid_map, ret_error);
        if (r >= 0)
                r = parse_map(gm, "gidMappings", idx, &gid_map, ret_error);
        if (r < 0)
                return r;
        if (!uid_map != !gid_map)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: mounts[%zu]: an id-mapped mount needs both uidMappings and "
                                  "gidMappings (or neither, for the container's own)",
                                  idx);
        /* no mappings: the container's user namespace, made or joined */
        if (!uid_map && !(o->clone_flags & CLONE_NEWUSER)) {
                bool joined = false;
                for (size_t i = 0; i < o->n_ns_paths; i++)
                        joined = joined || o->ns_paths[i].flag == CLONE_NEWUSER;
                if (!joined)
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: mounts[%zu].options: %s without uidMappings and gidMappings "
                                          "takes the container's user namespace, and it has none (linux.namespaces "
                                          "\"user\")",
                                          idx, ridmap ? "ridmap" : "idmap");
        }
        for (size_t i = 0; i < o->n_mounts; i++)
                premade += o->mounts[i].premade;
        if (premade >= ZE_SB_MAX_PREMADE)
                return zct_errorf(ret_error, -E2BIG, "config.json: mounts[%zu]: more than %d id-mapped mounts", idx,
                                  ZE_SB_MAX_PREMADE);
        grown = reallocarray(o->idmaps, o->n_idmaps + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        o->idmaps = grown;
        e = &o->idmaps[o->n_idmaps++];
        *e = (struct zct_mount_idmap){ .dest = sm->dest,
                                       .index = idx,
                                       .recursive = ridmap,
                                       .uid_map = TAKE_PTR(uid_map),
                                       .gid_map = TAKE_PTR(gid_map) };
        sm->premade = true;
        sm->tree_fd = -1;
        return 0;
}

void zct_oci_idmaps_free(struct zct_oci *o) {
        for (size_t i = 0; i < o->n_mounts; i++)
                if (o->mounts[i].premade && o->mounts[i].tree_fd >= 0) {
                        close(o->mounts[i].tree_fd);
                        o->mounts[i].tree_fd = -1;
                }
        for (size_t i = 0; i < o->n_idmaps; i++) {
                free(o->idmaps[i].uid_map);
                free(o->idmaps[i].gid_map);
        }
        free(o->idmaps);
        o->idmaps = NULL;
        o->n_idmaps = 0;
}
