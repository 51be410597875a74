/* SPDX-License-Identifier: MIT */
/*
 * config.json -> struct zy_oci: every path resolved, every option parsed, the seccomp object
 * compiled by the profile module (daemon/profile.c), so that the container's first process only
 * applies the result (daemon/sandbox.c).
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

#include "profile.h"
#include "runtime.h"
#include "util.h"

__attribute__((format(printf, 3, 4)))
static int errorf(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                free(*ret_error);
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_is_type(o, json_type_object))
                return NULL;
        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v = get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static size_t array_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* A NULL-terminated string array of a JSON array of strings, pointing into the JSON. */
static int str_array(json_object *a, const char *what, char ***ret, char **ret_error) {
        size_t n = array_len(a);
        char **v = calloc(n + 1, sizeof(char *));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string)) {
                        free(v);
                        return errorf(ret_error, -EINVAL, "config.json: %s[%zu] is not a string", what, i);
                }
                v[i] = (char *) json_object_get_string(e);
        }
        *ret = v;
        return 0;
}

int zy_oci_cap_last(void) {
        static int last = -1;
        FILE *f;

        if (last >= 0)
                return last;
        f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        if (!f || fscanf(f, "%d", &last) != 1)
                last = 40;
        if (f)
                fclose(f);
        return last;
}

static int parse_caps(json_object *a, const char *what, uint64_t *ret, char **ret_error) {
        uint64_t m = 0;

        for (size_t i = 0; i < array_len(a); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(a, i));
                _cleanup_free_ char *full = NULL;
                unsigned c;

                if (!name)
                        continue;
                if (strncasecmp(name, "CAP_", 4) != 0 && asprintf(&full, "CAP_%s", name) >= 0)
                        name = full;
                if (zy_cap_from_name(name, &c) < 0 || c >= 64)
                        return errorf(ret_error, -EINVAL, "config.json: process.capabilities.%s: unknown capability \"%s\"",
                                      what, name);
                /* a capability the running kernel lacks is ignored, as runc does */
                if ((int) c <= zy_oci_cap_last())
                        m |= UINT64_C(1) << c;
        }
        *ret = m;
        return 0;
}

static const struct {
        const char *name;
        int resource;
} rlimit_names[] = {
        { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
        { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

/* Mount options: flags of the mount call, attributes for binds, propagation; anything else is
 * filesystem data. */
static const struct {
        const char *name;
        unsigned long set, clear;
        uint64_t attr;
        unsigned long propagation;
} mount_opts[] = {
        { "ro", MS_RDONLY, 0, MOUNT_ATTR_RDONLY, 0 },
        { "rw", 0, MS_RDONLY, 0, 0 },
        { "nosuid", MS_NOSUID, 0, MOUNT_ATTR_NOSUID, 0 },
        { "suid", 0, MS_NOSUID, 0, 0 },
        { "nodev", MS_NODEV, 0, MOUNT_ATTR_NODEV, 0 },
        { "dev", 0, MS_NODEV, 0, 0 },
        { "noexec", MS_NOEXEC, 0, MOUNT_ATTR_NOEXEC, 0 },
        { "exec", 0, MS_NOEXEC, 0, 0 },
        { "sync", MS_SYNCHRONOUS, 0, 0, 0 },
        { "async", 0, MS_SYNCHRONOUS, 0, 0 },
        { "dirsync", MS_DIRSYNC, 0, 0, 0 },
        { "remount", MS_REMOUNT, 0, 0, 0 },
        { "mand", 0, 0, 0, 0 },
        { "nomand", 0, 0, 0, 0 },
        { "atime", 0, MS_NOATIME, 0, 0 },
        { "noatime", MS_NOATIME, 0, MOUNT_ATTR_NOATIME, 0 },
        { "diratime", 0, MS_NODIRATIME, 0, 0 },
        { "nodiratime", MS_NODIRATIME, 0, MOUNT_ATTR_NODIRATIME, 0 },
        { "relatime", MS_RELATIME, 0, 0, 0 },
        { "norelatime", 0, MS_RELATIME, 0, 0 },
        { "strictatime", MS_STRICTATIME, 0, 0, 0 },
        { "nostrictatime", 0, MS_STRICTATIME, 0, 0 },
        { "private", 0, 0, 0, MS_PRIVATE },
        { "rprivate", 0, 0, 0, MS_PRIVATE | MS_REC },
        { "shared", 0, 0, 0, MS_SHARED },
        { "rshared", 0, 0, 0, MS_SHARED | MS_REC },
        { "slave", 0, 0, 0, MS_SLAVE },
        { "rslave", 0, 0, 0, MS_SLAVE | MS_REC },
        { "unbindable", 0, 0, 0, MS_UNBINDABLE },
        { "runbindable", 0, 0, 0, MS_UNBINDABLE | MS_REC },
        /* podman's and containerd's own options, not the kernel's */
        { "tmpcopyup", 0, 0, 0, 0 },
        { "notmpcopyup", 0, 0, 0, 0 },
        { "copy", 0, 0, 0, 0 },
        { "nocopy", 0, 0, 0, 0 },
        { "z", 0, 0, 0, 0 },
        { "Z", 0, 0, 0, 0 },
};

static char *join_path(const char *a, const char *b) {
        char *s;

        while (*b == '/')
                b++;
        if (asprintf(&s, "%s/%s", a, b) < 0)
                return NULL;
        return s;
}

static int parse_mount(struct zy_oci *o, json_object *m, size_t idx, bool v2_only, char **ret_error) {
        struct zy_sb_mount *sm = &o->mounts[o->n_mounts];
        const char *dest = get_str(m, "destination"), *type = get_str(m, "type"), *src = get_str(m, "source");
        json_object *opts = get(m, "options");
        size_t data_len = 0;
        char *data;
        bool bind = type && streq(type, "bind");

        if (!dest || dest[0] != '/')
                return errorf(ret_error, -EINVAL, "config.json: mounts[%zu].destination must be an absolute path", idx);
        data = calloc(1, 4096);
        if (!data)
                return -ENOMEM;
        *sm = (struct zy_sb_mount){ .fstype = type, .source = src, .dest = dest };
        for (size_t i = 0; i < array_len(opts); i++) {
                const char *opt = json_object_get_string(json_object_array_get_idx(opts, i));
                bool known = false;

                if (!opt)
                        continue;
                if (streq(opt, "bind") || streq(opt, "rbind")) {
                        bind = true;
                        sm->recursive = opt[0] == 'r';
                        continue;
                }
                for (size_t k = 0; k < ELEMENTSOF(mount_opts); k++)
                        if (streq(opt, mount_opts[k].name)) {
                                sm->flags = (sm->flags | mount_opts[k].set) & ~mount_opts[k].clear;
                                if (mount_opts[k].set)
                                        sm->attr_set |= mount_opts[k].attr;
                                else if (streq(opt, "rw"))
                                        sm->attr_set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
                                if (mount_opts[k].propagation)
                                        sm->propagation = mount_opts[k].propagation;
                                known = true;
                                break;
                        }
                if (!known) {
                        size_t n = strlen(opt);
                        if (data_len + n + 2 > 4096) {
                                free(data);
                                return errorf(ret_error, -E2BIG, "config.json: mounts[%zu]: options too long", idx);
                        }
                        if (data_len)
                                data[data_len++] = ',';
                        memcpy(data + data_len, opt, n + 1);
                        data_len += n;
                }
        }
        sm->data = data;
        sm->target = join_path(o->rootfs, dest);
        if (!sm->target)
                return -ENOMEM;
        o->n_mounts++; /* from here on zy_oci_free owns data and target */

        if (type && streq(type, "cgroup")) {
                sm->kind = ZY_SB_MOUNT_CGROUP;
                sm->fstype = v2_only ? "cgroup2" : NULL;
                sm->source = "/sys/fs/cgroup";
        } else if (bind) {
                struct stat st;
                char *abs;

                sm->kind = ZY_SB_MOUNT_BIND;
                if (!src)
                        return errorf(ret_error, -EINVAL, "config.json: mounts[%zu]: a bind mount needs a source", idx);
                /* a relative source is relative to the bundle, as runc reads it */
                abs = src[0] == '/' ? strdup(src) : join_path(o->bundle, src);
                if (!abs)
                        return -ENOMEM;
                /* kept alive by the JSON tree: it owns the string from here */
                json_object_object_add(m, "source", json_object_new_string(abs));
                sm->source = get_str(m, "source");
                free(abs);
                if (stat(sm->source, &st) < 0)
                        return errorf(ret_error, -errno, "mounts[%zu]: bind source %s: %s", idx, sm->source,
                                      strerror(errno));
                sm->source_is_dir = S_ISDIR(st.st_mode);
                sm->flags = 0;
        } else {
                sm->kind = ZY_SB_MOUNT_FS;
                if (!type)
                        return errorf(ret_error, -EINVAL, "config.json: mounts[%zu] (%s) has no type", idx, dest);
                if (!sm->source)
                        sm->source = type;
                if (streq(dest, "/dev/console"))
                        sm->source_is_dir = false;
        }
        if (!sm->data[0])
                sm->data = NULL, free(data);
        return 0;
}

static char *own(struct zy_oci *o, char *s) {
        char **grown;

        if (!s)
                return NULL;
        grown = reallocarray(o->owned, o->n_owned + 1, sizeof(char *));
        if (!grown) {
                free(s);
                return NULL;
        }
        o->owned = grown;
        return o->owned[o->n_owned++] = s;
}

int zy_oci_cgroup_view(struct zy_oci *o, const struct zy_cgroup_view *v, size_t n) {
        struct zy_sb_mount *grown, *m;
        size_t k = 0;

        while (k < o->n_mounts && o->mounts[k].kind != ZY_SB_MOUNT_CGROUP)
                k++;
        if (k == o->n_mounts)
                return 0;
        grown = reallocarray(o->mounts, o->n_mounts + n, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        o->mounts = grown;
        memmove(&o->mounts[k + 1 + n], &o->mounts[k + 1], (o->n_mounts - k - 1) * sizeof(*grown));
        m = &o->mounts[k];
        /* the tmpfs stays writable: the binds below need their mount points made in it */
        m->kind = ZY_SB_MOUNT_FS;
        m->fstype = m->source = "tmpfs";
        m->flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
        m->attr_set = 0;
        free((char *) m->data);
        m->data = strdup("mode=755");
        for (size_t i = 0; i < n; i++)
                o->mounts[k + 1 + i] = (struct zy_sb_mount){
                        .kind = ZY_SB_MOUNT_BIND,
                        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                        .source_is_dir = true,
                };
        o->n_mounts += n; /* from here on zy_oci_free owns each entry's data and target */
        if (!m->data)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct zy_sb_mount *b = &o->mounts[k + 1 + i];
                char *dest;

                if (asprintf(&dest, "%s/%s", m->dest, v[i].name) < 0)
                        return -ENOMEM;
                b->dest = own(o, dest);
                b->source = own(o, strdup(v[i].dir));
                b->target = b->dest ? join_path(o->rootfs, b->dest) : NULL;
                if (!b->dest || !b->source || !b->target)
                        return -ENOMEM;
        }
        return 0;
}

static const struct {
        const char *name;
        int flag;
} ns_names[] = {
        { "pid", CLONE_NEWPID },     { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },
        { "ipc", CLONE_NEWIPC },     { "uts", CLONE_NEWUTS },     { "user", CLONE_NEWUSER },
        { "cgroup", CLONE_NEWCGROUP },
};

static int parse_idmap(json_object *a, const char *what, char **ret, char **ret_error) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < array_len(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                json_object *c = get(e, "containerID"), *h = get(e, "hostID"), *s = get(e, "size");
                if (!c || !h || !s) {
                        fclose(f);
                        free(text);
                        return errorf(ret_error, -EINVAL, "config.json: linux.%s[%zu] needs containerID, hostID and size",
                                      what, i);
                }
                fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", json_object_get_int64(c),
                        json_object_get_int64(h), json_object_get_int64(s));
        }
        fclose(f);
        *ret = text;
        return 0;
}

static int add_device(struct zy_oci *o, const char *path, mode_t type, unsigned maj,
                      unsigned min, mode_t perm, uid_t uid, gid_t gid) {
        struct zy_sb_device *d;

        for (size_t i = 0; i < o->n_devices; i++)
                if (streq(o->devices[i].host ? o->devices[i].host : "", path))
                        return 0;
        d = reallocarray(o->devices, o->n_devices + 1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        o->devices = d;
        d = &o->devices[o->n_devices];
        *d = (struct zy_sb_device){ .mode = type | perm, .dev = makedev(maj, min), .uid = uid, .gid = gid };
        d->target = join_path(o->rootfs, path);
        d->host = strdup(path);
        if (!d->target || !d->host) {
                free((char *) d->target);
                free((char *) d->host);
                return -ENOMEM;
        }
        o->n_devices++;
        return 0;
}

static int parse_process(struct zy_oci *o, json_object *p, char **ret_error) {
        json_object *user = get(p, "user"), *caps = get(p, "capabilities"), *v;
        static const char *const cap_sets[5] = { "bounding", "effective", "permitted", "inheritable", "ambient" };
        int r;

        if (!p)
                return errorf(ret_error, -EINVAL, "config.json: no process");
        r = str_array(get(p, "args"), "process.args", &o->argv, ret_error);
        if (r < 0)
                return r;
        if (!o->argv[0])
                return errorf(ret_error, -EINVAL, "config.json: process.args must not be empty");
        r = str_array(get(p, "env"), "process.env", &o->envp, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; o->envp[i]; i++)
                if (strncmp(o->envp[i], "PATH=", 5) == 0)
                        o->search_path = o->envp[i] + 5;
        o->cwd = get_str(p, "cwd");
        if (!o->cwd)
                o->cwd = "/";
        if (o->cwd[0] != '/')
                return errorf(ret_error, -EINVAL, "config.json: process.cwd must be an absolute path");
        o->terminal = (v = get(p, "terminal")) && json_object_get_boolean(v);
        o->uid = (uid_t) json_object_get_int64(get(user, "uid"));
        o->gid = (gid_t) json_object_get_int64(get(user, "gid"));
        o->umask = (v = get(user, "umask")) ? (mode_t) json_object_get_int(v) : (mode_t) 022;
        v = get(user, "additionalGids");
        o->n_groups = array_len(v);
        o->groups = calloc(o->n_groups + 1, sizeof(gid_t));
        if (!o->groups)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_groups; i++)
                o->groups[i] = (gid_t) json_object_get_int64(json_object_array_get_idx(v, i));
        for (size_t i = 0; i < 5; i++) {
                r = parse_caps(get(caps, cap_sets[i]), cap_sets[i], &o->caps[i], ret_error);
                if (r < 0)
                        return r;
        }
        o->no_new_privs = (v = get(p, "noNewPrivileges")) && json_object_get_boolean(v);
        o->oom_score_adj = INT_MIN;
        if ((v = get(p, "oomScoreAdj"))) {
                int64_t adj = json_object_get_int64(v);
                if (!json_object_is_type(v, json_type_int) || adj < -1000 || adj > 1000)
                        return errorf(ret_error, -EINVAL, "config.json: process.oomScoreAdj must be -1000 to 1000");
                o->oom_score_adj = (int) adj;
        }

        v = get(p, "rlimits");
        o->n_rlimits = 0;
        free(o->rlimits);
        o->rlimits = calloc(array_len(v) + 1, sizeof(*o->rlimits));
        if (!o->rlimits)
                return -ENOMEM;
        for (size_t i = 0; i < array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *type = get_str(e, "type");
                size_t k;

                for (k = 0; k < ELEMENTSOF(rlimit_names); k++)
                        if (type && streq(type, rlimit_names[k].name))
                                break;
                if (k == ELEMENTSOF(rlimit_names))
                        return errorf(ret_error, -EINVAL, "config.json: process.rlimits[%zu]: unknown type \"%s\"", i,
                                      type ? type : "");
                o->rlimits[o->n_rlimits++] = (struct zy_sb_rlimit){
                        .resource = rlimit_names[k].resource,
                        .limit = { .rlim_cur = (rlim_t) json_object_get_uint64(get(e, "soft")),
                                   .rlim_max = (rlim_t) json_object_get_uint64(get(e, "hard")) },
                };
        }
        return 0;
}

static int read_json(const char *path, json_object **ret, char **ret_error) {
        json_object *j = json_object_from_file(path);

        if (!j) {
                if (access(path, R_OK) < 0)
                        return errorf(ret_error, -errno, "open %s: %s", path, strerror(errno));
                return errorf(ret_error, -EINVAL, "%s: not valid JSON: %s", path, json_util_get_last_err());
        }
        if (!json_object_is_type(j, json_type_object)) {
                json_object_put(j);
                return errorf(ret_error, -EINVAL, "%s: not a JSON object", path);
        }
        *ret = j;
        return 0;
}

static const char *const default_symlinks[] = {
        "/proc/self/fd", "dev/fd", "/proc/self/fd/0", "dev/stdin", "/proc/self/fd/1", "dev/stdout",
        "/proc/self/fd/2", "dev/stderr", "pts/ptmx", "dev/ptmx",
};

int zy_oci_load(const char *bundle, const char *process_path, bool v2_only, struct zy_oci **ret,
                char **ret_error) {
        _cleanup_free_ char *config = NULL, *root_path = NULL;
        struct zy_oci *o;
        json_object *linux_, *v, *proc_json = NULL;
        const char *s;
        int r;

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->bundle = realpath(bundle, NULL);
        if (!o->bundle) {
                r = errorf(ret_error, -errno, "bundle %s: %s", bundle, strerror(errno));
                goto fail;
        }
        if (asprintf(&config, "%s/config.json", o->bundle) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = read_json(config, &o->root, ret_error);
        if (r < 0)
                goto fail;
        if (process_path) {
                r = read_json(process_path, &proc_json, ret_error);
                if (r < 0)
                        goto fail;
                /* the tree keeps it alive: strings of the process point into it */
                json_object_object_add(o->root, "process", proc_json);
        }
        r = parse_process(o, get(o->root, "process"), ret_error);
        if (r < 0)
                goto fail;

        s = get_str(get(o->root, "root"), "path");
        if (!s) {
                r = errorf(ret_error, -EINVAL, "config.json: root.path is missing");
                goto fail;
        }
        root_path = s[0] == '/' ? strdup(s) : join_path(o->bundle, s);
        if (!root_path) {
                r = -ENOMEM;
                goto fail;
        }
        o->rootfs = realpath(root_path, NULL);
        if (!o->rootfs) {
                r = errorf(ret_error, -errno, "rootfs (%s): %s", root_path,
                           errno == ENOENT ? "no such file or directory" : strerror(errno));
                goto fail;
        }
        o->readonly_root = (v = get(get(o->root, "root"), "readonly")) && json_object_get_boolean(v);
        o->hostname = get_str(o->root, "hostname");

        linux_ = get(o->root, "linux");
        /* namespaces */
        v = get(linux_, "namespaces");
        for (size_t i = 0; i < array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *type = get_str(e, "type"), *path = get_str(e, "path");
                size_t k;

                for (k = 0; k < ELEMENTSOF(ns_names); k++)
                        if (type && streq(type, ns_names[k].name))
                                break;
                if (k == ELEMENTSOF(ns_names)) {
                        r = errorf(ret_error, -EINVAL, "config.json: linux.namespaces[%zu]: unknown namespace type \"%s\"", i,
                                   type ? type : "");
                        goto fail;
                }
                if (path && *path) {
                        if (o->n_ns_paths >= ELEMENTSOF(o->ns_paths)) {
                                r = -E2BIG;
                                goto fail;
                        }
                        o->ns_paths[o->n_ns_paths].flag = ns_names[k].flag;
                        o->ns_paths[o->n_ns_paths++].path = strdup(path);
                } else
                        o->clone_flags |= ns_names[k].flag;
        }
        if (!(o->clone_flags & CLONE_NEWNS)) {
                r = errorf(ret_error, -EINVAL, "config.json: zygote-runc needs a new mount namespace (linux.namespaces \"mount\")");
                goto fail;
        }
        if (o->clone_flags & CLONE_NEWUSER) {
                r = parse_idmap(get(linux_, "uidMappings"), "uidMappings", &o->uid_map, ret_error);
                if (r >= 0)
                        r = parse_idmap(get(linux_, "gidMappings"), "gidMappings", &o->gid_map, ret_error);
                if (r < 0)
                        goto fail;
        }
        if (o->hostname && !(o->clone_flags & CLONE_NEWUTS)) {
                /* runc refuses too: it would rename the host */
                r = errorf(ret_error, -EINVAL, "config.json: hostname needs a new uts namespace");
                goto fail;
        }

        /* mounts */
        v = get(o->root, "mounts");
        o->mounts = calloc(array_len(v) + 1, sizeof(*o->mounts));
        if (!o->mounts) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t i = 0; i < array_len(v); i++) {
                r = parse_mount(o, json_object_array_get_idx(v, i), i, v2_only, ret_error);
                if (r < 0)
                        goto fail;
        }
        s = get_str(linux_, "rootfsPropagation");
        o->rootfs_propagation = MS_SLAVE | MS_REC;
        if (s)
                for (size_t k = 0; k < ELEMENTSOF(mount_opts); k++)
                        if (streq(s, mount_opts[k].name) && mount_opts[k].propagation)
                                o->rootfs_propagation = mount_opts[k].propagation | MS_REC;

        /* devices: the defaults, then the config's */
        static const struct {
                const char *path;
                unsigned maj, min;
        } defaults[] = { { "/dev/null", 1, 3 }, { "/dev/zero", 1, 5 }, { "/dev/full", 1, 7 },
                         { "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 } };
        for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                r = add_device(o, defaults[i].path, S_IFCHR, defaults[i].maj, defaults[i].min, 0666, 0, 0);
                if (r < 0)
                        goto fail;
        }
        v = get(linux_, "devices");
        for (size_t i = 0; i < array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *path = get_str(e, "path"), *type = get_str(e, "type");
                mode_t t = type && streq(type, "b") ? S_IFBLK : type && streq(type, "p") ? S_IFIFO : S_IFCHR;
                json_object *fm = get(e, "fileMode");

                if (!path || path[0] != '/') {
                        r = errorf(ret_error, -EINVAL, "config.json: linux.devices[%zu].path must be absolute", i);
                        goto fail;
                }
                r = add_device(o, path, t, (unsigned) json_object_get_int64(get(e, "major")),
                               (unsigned) json_object_get_int64(get(e, "minor")), fm ? (mode_t) json_object_get_int(fm) & 07777 : 0666,
                               (uid_t) json_object_get_int64(get(e, "uid")), (gid_t) json_object_get_int64(get(e, "gid")));
                if (r < 0)
                        goto fail;
        }
        o->symlinks = calloc(ELEMENTSOF(default_symlinks) + 1, sizeof(char *));
        if (!o->symlinks) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t i = 0; i < ELEMENTSOF(default_symlinks); i += 2) {
                o->symlinks[i] = strdup(default_symlinks[i]);
                o->symlinks[i + 1] = strdup(default_symlinks[i + 1]);
                if (!o->symlinks[i] || !o->symlinks[i + 1]) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        o->dev_console = strdup("/dev/console");

        r = str_array(get(linux_, "maskedPaths"), "linux.maskedPaths", (char ***) &o->masked, ret_error);
        if (r >= 0)
                r = str_array(get(linux_, "readonlyPaths"), "linux.readonlyPaths", (char ***) &o->readonly, ret_error);
        if (r < 0)
                goto fail;

        /* cgroups */
        o->cgroups_path = get_str(linux_, "cgroupsPath");
        o->pids_limit = o->memory_limit = -1;
        v = get(get(get(linux_, "resources"), "pids"), "limit");
        if (v && json_object_get_int64(v) > 0)
                o->pids_limit = json_object_get_int64(v);
        v = get(get(get(linux_, "resources"), "memory"), "limit");
        if (v && json_object_get_int64(v) > 0)
                o->memory_limit = json_object_get_int64(v);

        /* sysctls: written by the parent in the container's namespaces (container.c); here only
         * checked, so that a bad key fails before anything is made. A key is a dotted name: a '/'
         * or an empty component could lead the write elsewhere below /proc/sys. */
        o->sysctl = get(linux_, "sysctl");
        if (o->sysctl) {
                if (!json_object_is_type(o->sysctl, json_type_object)) {
                        r = errorf(ret_error, -EINVAL, "config.json: linux.sysctl is not an object");
                        goto fail;
                }
                json_object_object_foreach(o->sysctl, key, val) {
                        if (!key[0] || strchr(key, '/') || strstr(key, "..") || key[0] == '.' ||
                            key[strlen(key) - 1] == '.' || !json_object_is_type(val, json_type_string)) {
                                r = errorf(ret_error, -EINVAL, "config.json: linux.sysctl: bad entry \"%s\"", key);
                                goto fail;
                        }
                }
        }

        /* seccomp: one compiler for the daemon's profiles and for containers */
        v = get(linux_, "seccomp");
        if (v) {
                const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
                _cleanup_free_ char *err = NULL;

                r = zy_profile_load_buffer_with(config, text, strlen(text), NULL, &o->seccomp, &err);
                if (r < 0) {
                        r = errorf(ret_error, r, "linux.seccomp: %s", err ? err : strerror(-r));
                        goto fail;
                }
        }
        *ret = o;
        return 0;
fail:
        zy_oci_free(o);
        return r;
}

void zy_oci_free(struct zy_oci *o) {
        if (!o)
                return;
        for (size_t i = 0; i < o->n_mounts; i++) {
                free((char *) o->mounts[i].target);
                free((char *) o->mounts[i].data);
        }
        for (size_t i = 0; i < o->n_devices; i++) {
                free((char *) o->devices[i].target);
                free((char *) o->devices[i].host);
        }
        for (size_t i = 0; o->symlinks && o->symlinks[i]; i++)
                free(o->symlinks[i]);
        for (size_t i = 0; i < o->n_ns_paths; i++)
                free(o->ns_paths[i].path);
        for (size_t i = 0; i < o->n_owned; i++)
                free(o->owned[i]);
        free(o->owned);
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
        free(o->gid_map);
        free(o->bundle);
        free(o->rootfs);
        zy_profile_free(o->seccomp);
        if (o->root)
                json_object_put(o->root);
        free(o);
}

void zy_oci_to_sandbox(const struct zy_oci *o, struct zy_sandbox *sb) {
        static struct sock_fprog prog; /* one container per zygote-runc process */

        sb->new_mount_ns = true;
        sb->userns_root = (o->clone_flags & CLONE_NEWUSER) != 0;
        sb->rootfs = o->rootfs;
        sb->rootfs_propagation = o->rootfs_propagation;
        sb->rootfs_readonly = o->readonly_root;
        sb->mounts = o->mounts;
        sb->n_mounts = o->n_mounts;
        sb->devices = o->devices;
        sb->n_devices = o->n_devices;
        sb->symlinks = (const char *const *) o->symlinks;
        sb->masked = o->masked;
        sb->readonly = o->readonly;
        sb->dev_console = o->dev_console;
        sb->hostname = o->hostname;
        sb->rlimits = o->rlimits;
        sb->n_rlimits = o->n_rlimits;
        sb->set_ids = true;
        sb->uid = o->uid;
        sb->gid = o->gid;
        sb->groups = o->groups;
        sb->n_groups = o->n_groups;
        sb->cap_last = (unsigned) zy_oci_cap_last();
        sb->cap_bounding = o->caps[0];
        sb->cap_effective = o->caps[1];
        sb->cap_permitted = o->caps[2];
        sb->cap_inheritable = o->caps[3];
        sb->cap_ambient = o->caps[4];
        sb->set_caps = true;
        sb->no_new_privs = o->no_new_privs;
        sb->umask = o->umask;
        sb->cwd = o->cwd;
        sb->ref_pidfd = -1;
        if (o->seccomp) {
                prog = (struct sock_fprog){ .len = (unsigned short) o->seccomp->bpf_len, .filter = o->seccomp->bpf };
                sb->prog = &prog;
                sb->filter_flags = o->seccomp->filter_flags;
        }
        sb->argv = o->argv;
        sb->envp = o->envp;
        sb->search_path = o->search_path;
}

/* runc's `spec`, with terminal off: a bundle made from it runs without a console socket. */
static const char default_spec[] =
        "{\"ociVersion\":\"" ZY_RUNC_OCI_VERSION "\","
        "\"process\":{\"terminal\":false,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
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
        "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
        "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\",\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\",\"gid=5\"]},"
        "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
        "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\",\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
        "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},"
        "{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"relatime\",\"ro\"]}],"
        "\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},"
        "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}],"
        "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\",\"/proc/latency_stats\","
        "\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\",\"/sys/firmware\",\"/proc/scsi\"],"
        "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\",\"/proc/sysrq-trigger\"]}}";

json_object *zy_oci_default_spec(bool rootless) {
        json_object *spec = json_tokener_parse(default_spec), *linux_, *ns, *mounts, *map;

        if (!spec || !rootless)
                return spec;
        /* runc's --rootless: a user namespace mapping the caller to root, no network namespace
         * of its own (sysfs then falls back to a bind of the host's), no devpts gid, no cgroup
         * limits */
        linux_ = get(spec, "linux");
        json_object_object_del(linux_, "resources");
        ns = get(linux_, "namespaces");
        json_object_array_del_idx(ns, 1, 1);
        json_object *user = json_object_new_object();
        json_object_object_add(user, "type", json_object_new_string("user"));
        json_object_array_add(ns, user);
        for (int k = 0; k < 2; k++) {
                map = json_object_new_array();
                json_object *e = json_object_new_object();
                json_object_object_add(e, "containerID", json_object_new_int(0));
                json_object_object_add(e, "hostID", json_object_new_int64(k == 0 ? (int64_t) getuid() : (int64_t) getgid()));
                json_object_object_add(e, "size", json_object_new_int(1));
                json_object_array_add(map, e);
                json_object_object_add(linux_, k == 0 ? "uidMappings" : "gidMappings", map);
        }
        mounts = get(spec, "mounts");
        json_object_array_del_idx(mounts, 6, 1); /* cgroup */
        json_object_array_del_idx(get(json_object_array_get_idx(mounts, 2), "options"), 5, 1); /* gid=5 */
        return spec;
}
