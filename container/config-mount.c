/* SPDX-License-Identifier: MIT */
/*
 * config.json's filesystem: mounts (options split into flags, bind attributes, propagation and
 * filesystem data), the v1/hybrid cgroup view, devices and the default /dev symlinks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config-util.h"
#include "util.h"

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

/* A bind's filesystem data: the kernel ignores it, and runc passes it on, so it is accepted and
 * noted (the log says it was ignored). What runc 1.1+ would apply and this runtime does not (a
 * recursive clear, "rrw" and the like; "nosymfollow") is refused: ignoring it would give
 * the container a mount other than the one asked for. */
static int bind_data(struct zct_oci *o, char *data, const char *dest, size_t idx, char **ret_error) {
        static const char *const applied[] = { "symfollow", "nosymfollow" };
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;

        if (!data[0])
                return 0;
        copy = strdup(data);
        if (!copy)
                return -ENOMEM;
        for (char *opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
                bool refused = false;

                for (size_t i = 0; i < ELEMENTSOF(applied); i++)
                        refused = refused || streq(opt, applied[i]);
                for (size_t i = 0; opt[0] == 'r' && i < ELEMENTSOF(mount_opts); i++)
                        refused = refused || (streq(opt + 1, mount_opts[i].name) && !mount_opts[i].propagation);
                if (refused)
                        return zct_errorf(ret_error, -EOPNOTSUPP,
                                          "config.json: mounts[%zu].options: \"%s\" is not supported on a bind mount "
                                          "by zygote-runc",
                                          idx, opt);
        }
        if (zct_oci_note(o, "mounts[%zu] (%s): bind mount options \"%s\" ignored (the kernel ignores a bind's data)",
                         idx, dest, data) < 0)
                return -ENOMEM;
        data[0] = '\0';
        return 0;
}

static int parse_mount(struct zct_oci *o, json_object *m, size_t idx, bool v2_only, char **ret_error) {
        struct ze_sb_mount *sm = &o->mounts[o->n_mounts];
        const char *dest = zct_get_str(m, "destination"), *type = zct_get_str(m, "type"),
                   *src = zct_get_str(m, "source");
        json_object *opts = zct_get(m, "options");
        size_t data_len = 0;
        char *data;
        bool bind = type && streq(type, "bind"), rw = false;
        int r;

        if (!dest || dest[0] != '/')
                return zct_errorf(ret_error, -EINVAL, "config.json: mounts[%zu].destination must be an absolute path",
                                  idx);
        data = calloc(1, 4096);
        if (!data)
                return -ENOMEM;
        *sm = (struct ze_sb_mount){ .fstype = type, .source = src, .dest = dest };
        for (size_t i = 0; i < zct_array_len(opts); i++) {
                const char *opt = json_object_get_string(json_object_array_get_idx(opts, i));
                bool known = false;

                if (!opt)
                        continue;
                if (streq(opt, "rw") || streq(opt, "ro"))
                        rw = opt[1] == 'w';
                if (streq(opt, "tmpcopyup") || streq(opt, "notmpcopyup"))
                        sm->copyup = opt[0] == 't';
                /* idmap-mount.c reads them */
                if (streq(opt, "idmap") || streq(opt, "ridmap"))
                        continue;
                if (streq(opt, "bind") || streq(opt, "rbind")) {
                        bind = true;
                        sm->recursive = opt[0] == 'r';
                        continue;
                }
                /* "rro", "rnosuid", ...: the attribute on every mount of the bind (runc 1.1's) */
                for (size_t k = 0; opt[0] == 'r' && k < ELEMENTSOF(mount_opts) && !known; k++)
                        if (mount_opts[k].attr && streq(opt + 1, mount_opts[k].name)) {
                                sm->attr_set_rec |= mount_opts[k].attr;
                                known = true;
                        }
                if (known)
                        continue;
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
                                return zct_errorf(ret_error, -E2BIG, "config.json: mounts[%zu]: options too long", idx);
                        }
                        if (data_len)
                                data[data_len++] = ',';
                        memcpy(data + data_len, opt, n + 1);
                        data_len += n;
                }
        }
        sm->data = data;
        sm->target = zct_join_path(o->rootfs, dest);
        if (!sm->target)
                return -ENOMEM;
        o->n_mounts++; /* from here on zct_oci_free owns data and target */

        if (type && streq(type, "cgroup")) {
                sm->kind = ZE_SB_MOUNT_CGROUP;
                sm->fstype = v2_only ? "cgroup2" : NULL;
                sm->source = "/sys/fs/cgroup";
                /* read-only unless the config asks for rw itself */
                if (!rw) {
                        sm->flags |= MS_RDONLY;
                        sm->attr_set |= MOUNT_ATTR_RDONLY;
                }
        } else if (bind) {
                struct stat st;
                char *abs;

                sm->kind = ZE_SB_MOUNT_BIND;
                if (!src)
                        return zct_errorf(ret_error, -EINVAL, "config.json: mounts[%zu]: a bind mount needs a source",
                                          idx);
                /* a relative source is relative to the bundle, as runc reads it */
                abs = src[0] == '/' ? strdup(src) : zct_join_path(o->bundle, src);
                if (!abs)
                        return -ENOMEM;
                /* kept alive by the JSON tree: it owns the string from here */
                json_object_object_add(m, "source", json_object_new_string(abs));
                sm->source = zct_get_str(m, "source");
                free(abs);
                if (stat(sm->source, &st) < 0)
                        return zct_errorf(ret_error, -errno, "mounts[%zu]: bind source %s: %s", idx, sm->source,
                                          strerror(errno));
                sm->source_is_dir = S_ISDIR(st.st_mode);
                sm->flags = 0;
                r = bind_data(o, data, dest, idx, ret_error);
                if (r < 0)
                        return r;
        } else if (sm->attr_set_rec) {
                return zct_errorf(ret_error, -EOPNOTSUPP,
                                  "config.json: mounts[%zu]: a recursive attribute (\"rro\", ...) needs a bind mount",
                                  idx);
        } else {
                sm->kind = ZE_SB_MOUNT_FS;
                if (!type)
                        return zct_errorf(ret_error, -EINVAL, "config.json: mounts[%zu] (%s) has no type", idx, dest);
                if (!sm->source)
                        sm->source = type;
                if (streq(dest, "/dev/console"))
                        sm->source_is_dir = false;
        }
        r = zct_oci_parse_mount_idmap(o, m, idx, sm, ret_error);
        if (r < 0)
                return r;
        /* podman's option: runc copies into a tmpfs alone, and podman refuses it on other mounts */
        if (sm->copyup && (sm->kind != ZE_SB_MOUNT_FS || !streq(type, "tmpfs")))
                return zct_errorf(ret_error, -EINVAL,
                                  "config.json: mounts[%zu].options: tmpcopyup is for a tmpfs, not %s", idx,
                                  sm->kind == ZE_SB_MOUNT_BIND ? "a bind mount" : type);
        if (!sm->data[0])
                sm->data = NULL, free(data);
        return 0;
}

static char *own(struct zct_oci *o, char *s) {
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

/* The cgroup mount at index k becomes a tmpfs with a bind of each view's directory in it. */
static int cgroup_view_at(struct zct_oci *o, size_t k, const struct zct_cgroup_view *v, size_t n) {
        struct ze_sb_mount *grown, *m;
        uint64_t ro;

        grown = reallocarray(o->mounts, o->n_mounts + n, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        o->mounts = grown;
        memmove(&o->mounts[k + 1 + n], &o->mounts[k + 1], (o->n_mounts - k - 1) * sizeof(*grown));
        m = &o->mounts[k];
        ro = m->flags & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0;
        /* the engine makes the binds' mount points in the tmpfs before it is attached read-only */
        m->kind = ZE_SB_MOUNT_VIEW;
        m->fstype = m->source = "tmpfs";
        m->flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
        m->attr_set = ro | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        free((char *) m->data);
        m->data = NULL;
        for (size_t i = 0; i < n; i++)
                o->mounts[k + 1 + i] = (struct ze_sb_mount){
                        .kind = ZE_SB_MOUNT_BIND,
                        .attr_set = ro | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                        .source_is_dir = true,
                };
        o->n_mounts += n; /* from here on zct_oci_free owns each entry's data and target */
        for (size_t i = 0; i < n; i++) {
                struct ze_sb_mount *b = &o->mounts[k + 1 + i];
                char *dest;

                if (asprintf(&dest, "%s/%s", m->dest, v[i].name) < 0)
                        return -ENOMEM;
                b->dest = own(o, dest);
                b->source = own(o, strdup(v[i].dir));
                b->target = b->dest ? zct_join_path(o->rootfs, b->dest) : NULL;
                if (!b->dest || !b->source || !b->target)
                        return -ENOMEM;
        }
        return 0;
}

int zct_oci_cgroup_view(struct zct_oci *o, const struct zct_cgroup_view *v, size_t n) {
        /* every cgroup mount: one left as it is would bind the host's whole /sys/fs/cgroup */
        for (size_t k = 0; k < o->n_mounts; k++) {
                int r;

                if (o->mounts[k].kind != ZE_SB_MOUNT_CGROUP)
                        continue;
                r = cgroup_view_at(o, k, v, n);
                if (r < 0)
                        return r;
                k += n;
        }
        return 0;
}

static int add_device(struct zct_oci *o, const char *path, mode_t type, unsigned maj, unsigned min, mode_t perm,
                      uid_t uid, gid_t gid) {
        /* "/dev/foo/" names the node /dev/foo, as runc and crun read it */
        _cleanup_free_ char *clean = strdup(path);
        struct ze_sb_device *d;
        size_t n = clean ? strlen(clean) : 0;

        if (!clean)
                return -ENOMEM;
        while (n > 1 && clean[n - 1] == '/')
                clean[--n] = '\0';
        for (size_t i = 0; i < o->n_devices; i++)
                if (streq(o->devices[i].host ? o->devices[i].host : "", clean))
                        return 0;
        d = reallocarray(o->devices, o->n_devices + 1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        o->devices = d;
        d = &o->devices[o->n_devices];
        *d = (struct ze_sb_device){ .mode = type | perm, .dev = makedev(maj, min), .uid = uid, .gid = gid };
        d->target = zct_join_path(o->rootfs, clean);
        d->host = TAKE_PTR(clean);
        if (!d->target || !d->host) {
                free((char *) d->target);
                free((char *) d->host);
                return -ENOMEM;
        }
        o->n_devices++;
        return 0;
}

static const char *const default_symlinks[] = {
        "/proc/self/fd", "dev/fd",          "/proc/self/fd/0", "dev/stdin", "/proc/self/fd/1",
        "dev/stdout",    "/proc/self/fd/2", "dev/stderr",      "pts/ptmx",  "dev/ptmx",
};

/* The mount point of the mount that path (resolved) is on, from /proc/self/mountinfo: the
 * longest mount point that is path or a directory above it. The container's mount namespace is
 * a copy of ours, so the init finds the same one there. */
static int mount_point_of(const char *path, char **ret) {
        _cleanup_free_ char *line = NULL;
        char *best = NULL;
        size_t best_len = 0, n = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return -errno;
        while (getline(&line, &n, f) > 0) {
                char point[4096], *w = point;
                size_t len;

                /* field 5, with the kernel's octal escapes (\040 for a space) undone */
                if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
                        continue;
                for (const char *p = point; *p; p++)
                        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
                                *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
                                p += 3;
                        } else
                                *w++ = *p;
                *w = 0;
                len = strlen(point);
                if (len >= best_len && strncmp(path, point, len) == 0 &&
                    (len == 1 || path[len] == '/' || path[len] == 0)) {
                        free(best);
                        best = strdup(point);
                        best_len = len;
                        if (!best)
                                break;
                }
        }
        fclose(f);
        if (!best)
                return -ENOMEM;
        *ret = best;
        return 0;
}

int zct_oci_parse_mounts(struct zct_oci *o, json_object *linux_, bool v2_only, char **ret_error) {
        json_object *v;
        const char *s;
        int r;

        v = zct_get(o->root, "mounts");
        o->mounts = calloc(zct_array_len(v) + 1, sizeof(*o->mounts));
        if (!o->mounts)
                return -ENOMEM;
        for (size_t i = 0; i < zct_array_len(v); i++) {
                r = parse_mount(o, json_object_array_get_idx(v, i), i, v2_only, ret_error);
                if (r < 0)
                        return r;
        }
        /* as runc takes it: "shared" is the root alone, "rshared" every mount below it too */
        s = zct_get_str(linux_, "rootfsPropagation");
        o->rootfs_propagation = MS_SLAVE | MS_REC;
        if (s && *s) {
                size_t k;
                for (k = 0; k < ELEMENTSOF(mount_opts); k++)
                        if (streq(s, mount_opts[k].name) && mount_opts[k].propagation)
                                break;
                if (k == ELEMENTSOF(mount_opts))
                        return zct_errorf(ret_error, -EINVAL,
                                          "config.json: linux.rootfsPropagation: \"%s\" is not a propagation "
                                          "(shared, slave, private, unbindable, or r* of one)",
                                          s);
                o->rootfs_propagation = mount_opts[k].propagation;
        }
        return mount_point_of(o->rootfs, &o->rootfs_parent);
}

int zct_oci_parse_devices(struct zct_oci *o, json_object *linux_, char **ret_error) {
        static const struct {
                const char *path;
                unsigned maj, min;
        } defaults[] = { { "/dev/null", 1, 3 },   { "/dev/zero", 1, 5 },    { "/dev/full", 1, 7 },
                         { "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 } };
        json_object *v;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                r = add_device(o, defaults[i].path, S_IFCHR, defaults[i].maj, defaults[i].min, 0666, 0, 0);
                if (r < 0)
                        return r;
        }
        v = zct_get(linux_, "devices");
        for (size_t i = 0; i < zct_array_len(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *path = zct_get_str(e, "path"), *type = zct_get_str(e, "type");
                mode_t t = type && streq(type, "b") ? S_IFBLK : type && streq(type, "p") ? S_IFIFO : S_IFCHR;
                json_object *fm = zct_get(e, "fileMode");

                if (!path || path[0] != '/')
                        return zct_errorf(ret_error, -EINVAL, "config.json: linux.devices[%zu].path must be absolute",
                                          i);
                r = add_device(o, path, t, (unsigned) json_object_get_int64(zct_get(e, "major")),
                               (unsigned) json_object_get_int64(zct_get(e, "minor")),
                               fm ? (mode_t) json_object_get_int(fm) & 07777 : 0666,
                               (uid_t) json_object_get_int64(zct_get(e, "uid")),
                               (gid_t) json_object_get_int64(zct_get(e, "gid")));
                if (r < 0)
                        return r;
        }
        o->symlinks = calloc(ELEMENTSOF(default_symlinks) + 1, sizeof(char *));
        if (!o->symlinks)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(default_symlinks); i += 2) {
                o->symlinks[i] = strdup(default_symlinks[i]);
                o->symlinks[i + 1] = strdup(default_symlinks[i + 1]);
                if (!o->symlinks[i] || !o->symlinks[i + 1])
                        return -ENOMEM;
        }
        o->dev_console = strdup("/dev/console");
        return o->dev_console ? 0 : -ENOMEM;
}
