/* SPDX-License-Identifier: MIT */
/*
 * config.json's linux.memoryPolicy (runtime-spec 1.3): the NUMA memory policy of the container's
 * process, as set_mempolicy(2) takes it. Checked here as runc 1.3 checks it, so that a bad one
 * fails create with its field's name before any process exists; the init applies it
 * (engine/sandbox-numa.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-util.h"
#include "util.h"

/* <linux/mempolicy.h>'s values, which glibc's headers lack */
enum {
        MPOL_DEFAULT_ = 0,
        MPOL_PREFERRED_ = 1,
        MPOL_BIND_ = 2,
        MPOL_INTERLEAVE_ = 3,
        MPOL_LOCAL_ = 4,
        MPOL_PREFERRED_MANY_ = 5,
        MPOL_WEIGHTED_INTERLEAVE_ = 6,
};
#define MPOL_F_NUMA_BALANCING_ (1U << 13)
#define MPOL_F_RELATIVE_NODES_ (1U << 14)
#define MPOL_F_STATIC_NODES_ (1U << 15)

/* How many nodes a mode takes: none, at least one, or either. */
enum nodes_rule { NODES_NONE, NODES_SOME, NODES_ANY };

static const struct {
        const char *name;
        int mode;
        enum nodes_rule nodes;
} modes[] = {
        { "MPOL_DEFAULT", MPOL_DEFAULT_, NODES_NONE },
        { "MPOL_BIND", MPOL_BIND_, NODES_SOME },
        { "MPOL_INTERLEAVE", MPOL_INTERLEAVE_, NODES_SOME },
        { "MPOL_WEIGHTED_INTERLEAVE", MPOL_WEIGHTED_INTERLEAVE_, NODES_SOME },
        { "MPOL_PREFERRED", MPOL_PREFERRED_, NODES_ANY }, /* no node: local allocation */
        { "MPOL_PREFERRED_MANY", MPOL_PREFERRED_MANY_, NODES_SOME },
        { "MPOL_LOCAL", MPOL_LOCAL_, NODES_NONE },
};

static const struct {
        const char *name;
        unsigned flag;
} flags[] = {
        { "MPOL_F_NUMA_BALANCING", MPOL_F_NUMA_BALANCING_ },
        { "MPOL_F_RELATIVE_NODES", MPOL_F_RELATIVE_NODES_ },
        { "MPOL_F_STATIC_NODES", MPOL_F_STATIC_NODES_ },
};

const char *const zct_mempolicy_mode_names[] = { "MPOL_DEFAULT",    "MPOL_BIND",
                                                 "MPOL_INTERLEAVE", "MPOL_WEIGHTED_INTERLEAVE",
                                                 "MPOL_PREFERRED",  "MPOL_PREFERRED_MANY",
                                                 "MPOL_LOCAL",      NULL };
const char *const zct_mempolicy_flag_names[] = { "MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                                 "MPOL_F_STATIC_NODES", NULL };

/* One number of a node list: digits only (no sign, no space), below the mask's size. */
static int node_number(const char **p, unsigned *ret) {
        unsigned long n = 0;
        const char *s = *p;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                n = n * 10 + (unsigned long) (*s - '0');
                if (n >= ZE_SB_NUMA_WORDS * 64)
                        return -ERANGE;
        }
        *p = s;
        *ret = (unsigned) n;
        return 0;
}

int zct_mempolicy_parse_nodes(const char *list, uint64_t mask[static ZE_SB_NUMA_WORDS], unsigned long *ret_maxnode) {
        unsigned long maxnode = 0;
        const char *p = list;

        memset(mask, 0, ZE_SB_NUMA_WORDS * sizeof(uint64_t));
        while (*p) {
                unsigned a, b;
                int r = node_number(&p, &a);

                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        r = node_number(&p, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                if (*p == ',' && !p[1])
                        return -EINVAL;
                if (*p && *p++ != ',')
                        return -EINVAL;
                for (unsigned n = a; n <= b; n++)
                        mask[n / 64] |= UINT64_C(1) << (n % 64);
                /* the kernel reads maxnode - 1 bits */
                if (b + 2UL > maxnode)
                        maxnode = b + 2UL;
        }
        *ret_maxnode = maxnode;
        return 0;
}

/* Each node of mask online on this host (/sys/devices/system/node/online), unless the policy's
 * nodes are static (the kernel takes those whatever is online): the kernel's EINVAL, said with
 * the node's number before any process exists. Without the file (no NUMA in the kernel), the
 * kernel decides. */
static int check_online(const uint64_t *mask, char **ret_error) {
        _cleanup_free_ char *line = NULL;
        uint64_t online[ZE_SB_NUMA_WORDS];
        unsigned long max;
        size_t n = 0;
        FILE *f = fopen("/sys/devices/system/node/online", "re");
        ssize_t len;

        if (!f)
                return 0;
        len = getline(&line, &n, f);
        fclose(f);
        if (len <= 0)
                return 0;
        line[strcspn(line, "\n")] = '\0';
        if (zct_mempolicy_parse_nodes(line, online, &max) < 0)
                return 0;
        for (unsigned i = 0; i < ZE_SB_NUMA_WORDS * 64; i++)
                if ((mask[i / 64] >> (i % 64)) & 1 && !((online[i / 64] >> (i % 64)) & 1))
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.memoryPolicy.nodes: node %u is not online on this host "
                                          "(online: %s)",
                                          i, line);
        return 0;
}

int zct_oci_parse_mempolicy(struct zct_oci *o, json_object *linux_, char **ret_error) {
        json_object *mp = zct_get(linux_, "memoryPolicy"), *fl;
        struct ze_sb_mempolicy *p = &o->mempolicy;
        const char *mode, *nodes;
        size_t k;
        int r;

        *p = (struct ze_sb_mempolicy){ 0 };
        if (!mp || json_object_is_type(mp, json_type_null))
                return 0;
        if (!json_object_is_type(mp, json_type_object))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy is not an object");
        json_object_object_foreach(mp, key, val) {
                (void) val;
                if (!streq(key, "mode") && !streq(key, "nodes") && !streq(key, "flags"))
                        return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy.%s: unknown field", key);
        }
        mode = zct_get_str(mp, "mode");
        for (k = 0; mode && k < ELEMENTSOF(modes); k++)
                if (streq(mode, modes[k].name))
                        break;
        if (!mode || k == ELEMENTSOF(modes))
                return zct_errorf(
                        ret_error, -EINVAL,
                        "config.json: linux.memoryPolicy.mode: \"%s\" is not a memory policy mode "
                        "(MPOL_DEFAULT, MPOL_BIND, MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE, MPOL_PREFERRED, "
                        "MPOL_PREFERRED_MANY, MPOL_LOCAL)",
                        mode ? mode : "");
        p->mode = modes[k].mode;

        if (zct_get(mp, "nodes") && !(nodes = zct_get_str(mp, "nodes")))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy.nodes is not a string");
        nodes = zct_get_str(mp, "nodes");
        r = zct_mempolicy_parse_nodes(nodes ? nodes : "", p->nodes, &p->maxnode);
        if (r < 0)
                return zct_errorf(ret_error, r,
                                  r == -ERANGE ? "config.json: linux.memoryPolicy.nodes: \"%s\": a node past %d"
                                               : "config.json: linux.memoryPolicy.nodes: \"%s\" is not a list of nodes "
                                                 "(\"0-3,7\")",
                                  nodes, ZE_SB_NUMA_WORDS * 64 - 1);
        if (modes[k].nodes == NODES_NONE && p->maxnode)
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy: %s takes no nodes (\"%s\")",
                                  mode, nodes);
        if (modes[k].nodes == NODES_SOME && !p->maxnode)
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy: %s needs nodes", mode);

        fl = zct_get(mp, "flags");
        if (fl && !json_object_is_type(fl, json_type_array))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.memoryPolicy.flags is not an array");
        for (size_t i = 0; i < zct_array_len(fl); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(fl, i));
                size_t f;

                for (f = 0; name && f < ELEMENTSOF(flags); f++)
                        if (streq(name, flags[f].name))
                                break;
                if (!name || f == ELEMENTSOF(flags))
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.memoryPolicy.flags[%zu]: \"%s\" is not a memory policy "
                                          "flag (MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES)",
                                          i, name ? name : "");
                p->flags |= flags[f].flag;
        }
        /* the kernel's own rules (EINVAL), said by name */
        if ((p->flags & MPOL_F_STATIC_NODES_) && (p->flags & MPOL_F_RELATIVE_NODES_))
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
                                  "MPOL_F_RELATIVE_NODES exclude each other");
        if ((p->flags & MPOL_F_NUMA_BALANCING_) && p->mode != MPOL_BIND_)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: linux.memoryPolicy.flags: MPOL_F_NUMA_BALANCING is for MPOL_BIND only");
        if ((p->flags & (MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_)) && !p->maxnode)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
                                  "MPOL_F_RELATIVE_NODES need nodes");
        if (!(p->flags & (MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_))) {
                r = check_online(p->nodes, ret_error);
                if (r < 0)
                        return r;
        }
        p->set = true;
        return 0;
}
