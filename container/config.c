/* SPDX-License-Identifier: MIT */
/*
 * config.json -> struct zct_oci: every path resolved, every option parsed, the seccomp object
 * compiled by the profile module (profile/profile.c), so that the container's first process only
 * applies the result (engine/sandbox.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config-util.h"
#include "profile.h"
#include "libcontainer.h"
#include "util.h"

static const struct {
        const char *name;
        int flag;
} ns_names[] = {
        { "pid", CLONE_NEWPID }, { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },      { "ipc", CLONE_NEWIPC },
        { "uts", CLONE_NEWUTS }, { "user", CLONE_NEWUSER },   { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

const char *zct_oci_ns_name(int flag) {
        for (size_t k = 0; k < ELEMENTSOF(ns_names); k++)
                if (ns_names[k].flag == flag)
                        return ns_names[k].name;
        return "unknown";
}

static int parse_idmap(json_object *a, const char *what, char **ret, char **ret_error) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < zct_array_len(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                json_object *c = zct_get(e, "containerID"), *h = zct_get(e, "hostID"), *s = zct_get(e, "size");
                if (!c || !h || !s) {
                        fclose(f);
                        free(text);
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.%s[%zu] needs containerID, hostID and size", what, i);
                }
                fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", json_object_get_int64(c), json_object_get_int64(h),
                        json_object_get_int64(s));
        }
        fclose(f);
        *ret = text;
        return 0;
}

/* BUNDLE/config.json (or config_path) into o->root (with process_path's process in place of its
 * own); *ret_config its path. */
static int read_config(struct zct_oci *o, const char *bundle, const char *config_path, const char *process_path,
                       char **ret_config, char **ret_error) {
        json_object *proc_json = NULL;
        int r;

        o->bundle = realpath(bundle, NULL);
        if (!o->bundle)
                return zct_errorf(ret_error, -errno, "bundle %s: %s", bundle, strerror(errno));
        if (config_path ? !(*ret_config = strdup(config_path))
                        : asprintf(ret_config, "%s/config.json", o->bundle) < 0) {
                *ret_config = NULL;
                return -ENOMEM;
        }
        r = zct_read_json(*ret_config, &o->root, ret_error);
        if (r < 0)
                return r;
        if (process_path) {
                r = zct_read_json(process_path, &proc_json, ret_error);
                if (r < 0)
                        return r;
                /* the tree keeps it alive: strings of the process point into it */
                json_object_object_add(o->root, "process", proc_json);
        }
        return 0;
}

/* root.path, resolved; root.readonly; hostname. */
static int parse_root(struct zct_oci *o, char **ret_error) {
        _cleanup_free_ char *root_path = NULL;
        json_object *v;
        const char *s;

        s = zct_get_str(zct_get(o->root, "root"), "path");
        if (!s)
                return zct_errorf(ret_error, -EINVAL, "config.json: root.path is missing");
        root_path = s[0] == '/' ? strdup(s) : zct_join_path(o->bundle, s);
        if (!root_path)
                return -ENOMEM;
        o->rootfs = realpath(root_path, NULL);
        if (!o->rootfs)
                return zct_errorf(ret_error, -errno, "rootfs (%s): %s", root_path,
                                  errno == ENOENT ? "no such file or directory" : strerror(errno));
        /* resolved once, here: the child binds this path refusing any symlink on it, so what it
         * names is what was checked. A root.path leading to the host's "/" (a symlink to it, `..`
         * past it, /proc/self/root) would hand the host to the container. */
        if (strcmp(o->rootfs, "/") == 0)
                return zct_errorf(ret_error, -EINVAL, "rootfs (%s): resolves to the host's /", root_path);
        o->readonly_root = (v = zct_get(zct_get(o->root, "root"), "readonly")) && json_object_get_boolean(v);
        o->hostname = zct_get_str(o->root, "hostname");
        return 0;
}

/* The joins in runc's order: the user namespace first (it decides what joining the others is
 * allowed), then ipc, uts, net, pid, mount, cgroup (and time, which runc 1.1 lacks). */
static void order_joins(struct zct_oci *o) {
        static const int rank[] = { CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWUTS,    CLONE_NEWNET,
                                    CLONE_NEWPID,  CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWTIME };
        struct zct_ns_path sorted[ELEMENTSOF(o->ns_paths)];
        size_t n = 0;

        for (size_t k = 0; k < ELEMENTSOF(rank); k++)
                for (size_t i = 0; i < o->n_ns_paths; i++)
                        if (o->ns_paths[i].flag == rank[k])
                                sorted[n++] = o->ns_paths[i];
        memcpy(o->ns_paths, sorted, n * sizeof(sorted[0]));
}

/* A mount namespace, new or joined by path, exactly once. None at all would set the container up
 * in the runtime's own, the host's: the rootfs bind, every mount of the config and pivot_root
 * (or runc's chroot) done in the host's mount table, which the container could then reach or
 * leave behind. Refused (docs/CONTAINERS.md, deliberate differences). */
static int check_mount_ns(const struct zct_oci *o, char **ret_error) {
        size_t joined = 0;

        for (size_t i = 0; i < o->n_ns_paths; i++)
                joined += o->ns_paths[i].flag == CLONE_NEWNS;
        if (joined + ((o->clone_flags & CLONE_NEWNS) != 0) > 1)
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.namespaces: \"mount\" given more than once");
        /* run by the init after the mounts, before pivot_root: in a joined namespace their paths
         * would name binaries of that namespace's tree (another container's), run with the
         * init's privileges, where the runtime spec resolves them in the runtime's */
        if (joined && zct_array_len(zct_get(zct_get(o->root, "hooks"), "createContainer")) > 0)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: hooks.createContainer with a mount namespace joined by path: "
                                  "their paths would resolve in the joined namespace, not the runtime's");
        if (joined == 0 && !(o->clone_flags & CLONE_NEWNS))
                return zct_errorf(
                        ret_error, -EINVAL,
                        "config.json: linux.namespaces has no \"mount\": zygote-runc never sets a container "
                        "up in its own (the host's) mount namespace; add {\"type\": \"mount\"} for a new one, "
                        "or one with a \"path\" to join");
        return 0;
}

/* linux.namespaces: the ones to create and the ones to join by path; the id maps of a new user
 * namespace. */
static int parse_namespaces(struct zct_oci *o, json_object *linux_, char **ret_error) {
        json_object *v = zct_get(linux_, "namespaces");
        int r;

        for (size_t i = 0; i < zct_array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *type = zct_get_str(e, "type"), *path = zct_get_str(e, "path");
                size_t k;

                for (k = 0; k < ELEMENTSOF(ns_names); k++)
                        if (type && streq(type, ns_names[k].name))
                                break;
                if (k == ELEMENTSOF(ns_names))
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.namespaces[%zu]: unknown namespace type \"%s\"", i,
                                          type ? type : "");
                if (path && *path) {
                        if (o->n_ns_paths >= ELEMENTSOF(o->ns_paths))
                                return -E2BIG;
                        o->ns_paths[o->n_ns_paths].flag = ns_names[k].flag;
                        o->ns_paths[o->n_ns_paths++].path = strdup(path);
                } else if (ns_names[k].flag == CLONE_NEWTIME)
                        /* its offsets are written before its first process: the runtime makes
                         * it for its next child (process-attrs.c), not the clone */
                        o->new_time_ns = true;
                else
                        o->clone_flags |= ns_names[k].flag;
        }
        r = check_mount_ns(o, ret_error);
        if (r < 0)
                return r;
        order_joins(o);
        if (o->clone_flags & CLONE_NEWUSER) {
                r = parse_idmap(zct_get(linux_, "uidMappings"), "uidMappings", &o->uid_map, ret_error);
                if (r >= 0)
                        r = parse_idmap(zct_get(linux_, "gidMappings"), "gidMappings", &o->gid_map, ret_error);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < o->n_ns_paths; i++)
                if (o->ns_paths[i].flag == CLONE_NEWUTS)
                        o->uts_ns = true;
        o->uts_ns = o->uts_ns || (o->clone_flags & CLONE_NEWUTS);
        /* runc refuses too: it would rename the host. One joined by path is renamed, as runc
         * does (a pod's containers join its uts namespace and are given its hostname). */
        if (o->hostname && !o->uts_ns)
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: hostname needs a uts namespace (linux.namespaces \"uts\")");
        return 0;
}

static int parse_masked_readonly(struct zct_oci *o, json_object *linux_, char **ret_error) {
        int r;

        r = zct_str_array(zct_get(linux_, "maskedPaths"), "linux.maskedPaths", (char ***) &o->masked, ret_error);
        if (r >= 0)
                r = zct_str_array(zct_get(linux_, "readonlyPaths"), "linux.readonlyPaths", (char ***) &o->readonly,
                                  ret_error);
        return r;
}

/* cgroupsPath, linux.resources (read by cgroup-resources.c), linux.sysctl. */
static int parse_cgroup(struct zct_oci *o, json_object *linux_, char **ret_error) {
        o->cgroups_path = zct_get_str(linux_, "cgroupsPath");
        o->resources = zct_get(linux_, "resources");
        if (o->resources && !json_object_is_type(o->resources, json_type_object))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.resources is not an object");
        if (o->resources) {
                json_object_object_foreach(o->resources, rkey, rval) {
                        if (rval && !streq(rkey, "devices"))
                                o->has_limits = true;
                }
                /* gone from the kernel (5.16: no limit applies); runc ignores it too */
                json_object *kmem = zct_get(zct_get(o->resources, "memory"), "kernel");
                if (kmem && json_object_get_int64(kmem) != 0 &&
                    zct_oci_note(o, "linux.resources.memory.kernel: ignored (kernel memory limits are gone "
                                    "from the kernel)") < 0)
                        return -ENOMEM;
        }

        /* sysctls: written by the parent in the container's namespaces (container.c); here only
         * checked, so that a bad key fails before anything is made. A key is a dotted name: a '/'
         * or an empty component could lead the write elsewhere below /proc/sys. */
        o->sysctl = zct_get(linux_, "sysctl");
        if (!o->sysctl)
                return 0;
        if (!json_object_is_type(o->sysctl, json_type_object))
                return zct_errorf(ret_error, -EINVAL, "config.json: linux.sysctl is not an object");
        json_object_object_foreach(o->sysctl, key, val) {
                if (!key[0] || strchr(key, '/') || strstr(key, "..") || key[0] == '.' || key[strlen(key) - 1] == '.' ||
                    !json_object_is_type(val, json_type_string))
                        return zct_errorf(ret_error, -EINVAL, "config.json: linux.sysctl: bad entry \"%s\"", key);
        }
        /* the container's name is "hostname"'s to say: runc 1.1 and crun 1.8 refuse the key */
        if (zct_get(o->sysctl, "kernel.hostname"))
                return zct_errorf(
                        ret_error, -EINVAL,
                        "config.json: linux.sysctl: \"kernel.hostname\" conflicts with the \"hostname\" field");
        return 0;
}

/* seccomp: one compiler for the daemon's profiles and for containers */
static int load_seccomp(const struct zct_ctx *c, struct zct_oci *o, json_object *linux_, const char *config,
                        char **ret_error) {
        _cleanup_free_ char *err = NULL;
        json_object *v = zct_get(linux_, "seccomp");
        int r;

        if (!v)
                return 0;
        r = zct_runc_filter_load(c, config, v, &o->seccomp, o->seccomp_source, sizeof(o->seccomp_source),
                                 &err); /* filter-remote.c */
        if (r < 0)
                return zct_errorf(ret_error, r, "linux.seccomp: %s", err ? err : strerror(-r));
        /* the profile module checked both (strings; metadata only with a path) */
        o->listener_path = zct_get_str(v, "listenerPath");
        o->listener_metadata = zct_get_str(v, "listenerMetadata");
        if (o->listener_path && !*o->listener_path)
                o->listener_path = NULL;
        if (o->listener_metadata && !*o->listener_metadata)
                o->listener_metadata = NULL;
        return 0;
}

int zct_oci_load(const struct zct_ctx *c, const char *bundle, const char *config_path, const char *process_path,
                 bool v2_only, struct zct_oci **ret, char **ret_error) {
        _cleanup_free_ char *config = NULL;
        struct zct_oci *o;
        json_object *linux_;
        int r;

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        r = read_config(o, bundle, config_path, process_path, &config, ret_error);
        if (r < 0)
                goto fail;
        linux_ = zct_get(o->root, "linux");
        if ((r = zct_oci_parse_process(o, zct_get(o->root, "process"), ret_error)) < 0 ||
            (r = parse_root(o, ret_error)) < 0 || (r = parse_namespaces(o, linux_, ret_error)) < 0 ||
            (r = zct_oci_parse_mounts(o, linux_, v2_only, ret_error)) < 0 ||
            (r = zct_oci_parse_devices(o, linux_, ret_error)) < 0 ||
            (r = parse_masked_readonly(o, linux_, ret_error)) < 0 || (r = parse_cgroup(o, linux_, ret_error)) < 0 ||
            (r = zct_oci_parse_process_extra(o, zct_get(o->root, "process"), ret_error)) < 0 ||
            (r = zct_oci_parse_linux_extra(o, linux_, o->new_time_ns, ret_error)) < 0 ||
            (r = zct_oci_parse_mempolicy(o, linux_, ret_error)) < 0 ||
            (r = load_seccomp(c, o, linux_, config, ret_error)) < 0)
                goto fail;
        *ret = o;
        return 0;
fail:
        zct_oci_free(o);
        return r;
}

void zct_oci_free(struct zct_oci *o) {
        if (!o)
                return;
        zct_oci_idmaps_free(o);
        for (size_t i = 0; i < o->n_mounts; i++) {
                free((char *) o->mounts[i].target);
                free((char *) o->mounts[i].data);
        }
        for (size_t i = 0; i < o->n_devices; i++) {
                free((char *) o->devices[i].target);
                free((char *) o->devices[i].host);
                if (o->devices[i].premade)
                        safe_close(o->devices[i].tree_fd);
        }
        for (size_t i = 0; o->symlinks && o->symlinks[i]; i++)
                free(o->symlinks[i]);
        for (size_t i = 0; i < o->n_ns_paths; i++)
                free(o->ns_paths[i].path);
        for (size_t i = 0; i < o->n_owned; i++)
                free(o->owned[i]);
        free(o->owned);
        free(o->notes);
        free(o->symlinks);
        free(o->mounts);
        free(o->devices);
        free(o->argv);
        free(o->envp);
        free(o->groups);
        free(o->rlimits);
        free(o->masked);
        free(o->readonly);
        free(o->dev_console);
        free(o->uid_map);
        free(o->time_offsets);
        free(o->apparmor_exec);
        free(o->rootfs_parent);
        free(o->gid_map);
        free(o->bundle);
        free(o->rootfs);
        zp_profile_free(o->seccomp);
        if (o->root)
                json_object_put(o->root);
        free(o);
}

/* The members of struct zct_oci that struct ze_sandbox has under the same name and type. A list
 * the formatter would re-pack on every run: kept as written. */
// clang-format off
#define ZCT_OCI_SANDBOX_SAME(X)                                                                     \
        X(rootfs) X(rootfs_propagation) X(mounts) X(n_mounts) X(devices) X(n_devices) X(masked)   \
        X(readonly) X(dev_console) X(hostname) X(rlimits) X(n_rlimits) X(uid) X(gid) X(groups)    \
        X(n_groups) X(keep_groups) X(no_new_privs) X(umask) X(cwd) X(argv) X(envp) X(search_path) X(domainname)     \
        X(console_rows) X(console_cols) X(personality) X(rootfs_parent) X(mempolicy)
// clang-format on

void zct_oci_to_sandbox(const struct zct_oci *o, struct ze_sandbox *sb) {
        static struct sock_fprog prog; /* one container per zygote-runc process */

        sb->new_mount_ns = true;
        sb->hook_report_fd = -1; /* create's, when there are startContainer hooks */
        sb->userns_root = (o->clone_flags & CLONE_NEWUSER) != 0;
        sb->loopback_up = (o->clone_flags & CLONE_NEWNET) != 0;
        sb->rootfs_readonly = o->readonly_root;
        sb->symlinks = (const char *const *) o->symlinks;
        sb->set_ids = true;
        sb->cap_last = (unsigned) zct_oci_cap_last();
        sb->cap_bounding = o->caps[0];
        sb->cap_effective = o->caps[1];
        sb->cap_permitted = o->caps[2];
        sb->cap_inheritable = o->caps[3];
        sb->cap_ambient = o->caps[4];
        sb->set_caps = true;
        sb->ref_pidfd = -1;
        if (o->seccomp) {
                prog = (struct sock_fprog){ .len = (unsigned short) o->seccomp->bpf_len, .filter = o->seccomp->bpf };
                sb->prog = &prog;
                sb->filter_flags = o->seccomp->filter_flags;
        }
#define SAME(field) sb->field = o->field;
        ZCT_OCI_SANDBOX_SAME(SAME)
#undef SAME
}

/* runc's `spec`: a terminal, which a foreground `run` makes itself (tty.c). */
static const char default_spec[] =
        "{\"ociVersion\":\"" ZCT_RUNC_OCI_VERSION "\","
        "\"process\":{\"terminal\":true,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
        "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"TERM=xterm\"],"
        "\"cwd\":\"/\",\"capabilities\":{"
        "\"bounding\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
        "\"effective\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
        "\"permitted\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
        "\"ambient\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]},"
        "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
        "\"noNewPrivileges\":true},"
        "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
        "\"hostname\":\"zygote\","
        "\"mounts\":["
        "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
        "{\"destination\":\"/"
        "dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size="
        "65536k\"]},"
        "{\"destination\":\"/dev/"
        "pts\",\"type\":\"devpts\",\"source\":\"devpts\",\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode="
        "0666\",\"mode=0620\",\"gid=5\"]},"
        "{\"destination\":\"/dev/"
        "shm\",\"type\":\"tmpfs\",\"source\":\"shm\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size="
        "65536k\"]},"
        "{\"destination\":\"/dev/"
        "mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\",\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
        "{\"destination\":\"/"
        "sys\",\"type\":\"sysfs\",\"source\":\"sysfs\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},"
        "{\"destination\":\"/sys/fs/"
        "cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"relatime\","
        "\"ro\"]}],"
        "\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},"
        "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":"
        "\"mount\"}],"
        "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\",\"/proc/latency_stats\","
        "\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\",\"/sys/firmware\",\"/proc/scsi\"],"
        "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\",\"/proc/sysrq-trigger\"]}}";

json_object *zct_oci_default_spec(bool rootless) {
        json_object *spec = json_tokener_parse(default_spec), *linux_, *ns, *mounts, *map;

        if (!spec || !rootless)
                return spec;
        /* runc's --rootless: a user namespace mapping the caller to root, no network namespace
         * of its own (sysfs then falls back to a bind of the host's), no devpts gid, no cgroup
         * limits */
        linux_ = zct_get(spec, "linux");
        json_object_object_del(linux_, "resources");
        ns = zct_get(linux_, "namespaces");
        json_object_array_del_idx(ns, 1, 1);
        json_object *user = json_object_new_object();
        json_object_object_add(user, "type", json_object_new_string("user"));
        json_object_array_add(ns, user);
        for (int k = 0; k < 2; k++) {
                map = json_object_new_array();
                json_object *e = json_object_new_object();
                json_object_object_add(e, "containerID", json_object_new_int(0));
                json_object_object_add(e, "hostID",
                                       json_object_new_int64(k == 0 ? (int64_t) getuid() : (int64_t) getgid()));
                json_object_object_add(e, "size", json_object_new_int(1));
                json_object_array_add(map, e);
                json_object_object_add(linux_, k == 0 ? "uidMappings" : "gidMappings", map);
        }
        mounts = zct_get(spec, "mounts");
        json_object_array_del_idx(mounts, 6, 1);                                                   /* cgroup */
        json_object_array_del_idx(zct_get(json_object_array_get_idx(mounts, 2), "options"), 5, 1); /* gid=5 */
        return spec;
}
