/* SPDX-License-Identifier: MIT */
/*
 * The state directory of one container, ROOT/ID: state.json (what `state` prints plus what the
 * other commands need: the init's start time, the cgroups, the hooks, linux.resources as applied)
 * and exec.fifo (present from create
 * until start: its presence is what "created" means).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "libcontainer.h"
#include "util.h"

static bool id_valid(const char *id) {
        if (!id || !*id || strlen(id) > 1024 || streq(id, ".") || streq(id, ".."))
                return false;
        for (const char *p = id; *p; p++)
                if (*p == '/' || (unsigned char) *p < 0x20)
                        return false;
        return true;
}

int zct_state_dir(const char *root, const char *id, char **ret) {
        if (!id_valid(id))
                return -EINVAL;
        return asprintf(ret, "%s/%s", root, id) < 0 ? -ENOMEM : 0;
}

bool zct_rootless(void) {
        char buf[64] = "";
        unsigned long inner, outer, count;
        FILE *f;

        if (geteuid() != 0)
                return true;
        /* root of the initial user namespace maps all of 0..2^32-2 onto itself; anything else is a
         * user namespace, whose root may not make cgroups on the host (podman's rootless runtime) */
        f = fopen("/proc/self/uid_map", "re");
        if (!f)
                return false;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        return sscanf(buf, "%lu %lu %lu", &inner, &outer, &count) != 3 || inner != 0 || outer != 0 ||
               count != 4294967295UL;
}

int zct_state_default_root(const char *xdg_runtime_dir, const char *user, bool rootless, char **ret, bool *ret_xdg) {
        char *s;
        /* runc's rule for its own root ($XDG_RUNTIME_DIR/runc): a user other than root, or root of
         * a user namespace that is not called root; the real root keeps /run (logind gives it
         * /run/user/0, which runc ignores) */
        bool xdg = xdg_runtime_dir && xdg_runtime_dir[0] == '/' &&
                   (geteuid() != 0 || (rootless && (!user || !streq(user, "root"))));

        if (xdg ? asprintf(&s, "%s/zygote-runc", xdg_runtime_dir) < 0 : !(s = strdup(ZCT_RUNC_DEFAULT_ROOT)))
                return -ENOMEM;
        *ret = s;
        *ret_xdg = xdg;
        return 0;
}

/* A state root (or a directory in it) this user may not write: the message says where and what
 * to do about it. */
static int state_root_error(const struct zct_ctx *c, const char *path, int r) {
        if (c->rootless && (r == -EACCES || r == -EPERM || r == -EROFS))
                return zct_error(c, "state root %s: %s; as a user pass --root DIR or set XDG_RUNTIME_DIR", c->root,
                                 zct_errstr(-r)),
                       r;
        return zct_error(c, "state %s %s: %s", path == c->root ? "root" : "dir", path, zct_errstr(-r)), r;
}

int zct_state_make_dir(const struct zct_ctx *c, const char *id, char **ret_dir) {
        _cleanup_free_ char *dir = NULL;
        int r;

        r = zct_state_dir(c->root, id, &dir);
        if (r < 0)
                return zct_error(c, "invalid container id \"%s\"", id), r;
        r = zct_mkdir_p(c->root, 0700);
        if (r < 0)
                return state_root_error(c, c->root, r);
        /* XDG_RUNTIME_DIR's files without the sticky bit may be pruned (the XDG base directory
         * specification), as runc marks its own */
        if (c->root_xdg && chmod(c->root, 01700) < 0)
                return state_root_error(c, c->root, -errno);
        if (mkdir(dir, 0711) < 0) {
                r = -errno;
                if (r == -EEXIST)
                        return zct_error(c, "container with id exists: %s", id), r;
                return state_root_error(c, dir, r);
        }
        *ret_dir = TAKE_PTR(dir);
        return 0;
}

int zct_state_lock(const char *root, const char *id) {
        _cleanup_free_ char *dir = NULL;
        int fd, r;

        r = zct_state_dir(root, id, &dir);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        do
                r = flock(fd, LOCK_EX);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int zct_proc_starttime(pid_t pid, uint64_t *ret, char *ret_state) {
        char path[64], buf[1024], *p;
        unsigned long long start = 0;
        char state;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -ESRCH;
        buf[n] = '\0';
        /* comm may hold spaces and parentheses: the fields start after the last ')' */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &state, &start) != 2)
                return -EIO;
        *ret = start;
        if (ret_state)
                *ret_state = state;
        return 0;
}

int zct_state_load(const char *root, const char *id, struct zct_state *ret) {
        _cleanup_free_ char *dir = NULL, *file = NULL;
        struct zct_state st = {};
        json_object *j, *v;
        int r;

        r = zct_state_dir(root, id, &dir);
        if (r < 0)
                return r;
        if (asprintf(&file, "%s/state.json", dir) < 0)
                return -ENOMEM;
        if (access(file, F_OK) < 0)
                return -ENOENT;
        j = json_object_from_file(file);
        if (!j)
                return -EINVAL;
        st.id = strdup(id);
        st.dir = TAKE_PTR(dir);
        if (json_object_object_get_ex(j, "pid", &v))
                st.pid = json_object_get_int(v);
        if (json_object_object_get_ex(j, "starttime", &v))
                st.starttime = json_object_get_uint64(v);
        if (json_object_object_get_ex(j, "bundle", &v))
                st.bundle = strdup(json_object_get_string(v));
        if (json_object_object_get_ex(j, "rootfs", &v))
                st.rootfs = strdup(json_object_get_string(v));
        if (json_object_object_get_ex(j, "created", &v))
                st.created = strdup(json_object_get_string(v));
        if (json_object_object_get_ex(j, "owner", &v))
                st.owner = (uid_t) json_object_get_int64(v);
        if (json_object_object_get_ex(j, "cgroup", &v))
                (void) zct_cgroup_from_json(v, &st.cgroup);
        if (json_object_object_get_ex(j, "annotations", &v))
                st.annotations = json_object_get(v);
        if (json_object_object_get_ex(j, "hooks", &v))
                st.hooks = json_object_get(v);
        if (json_object_object_get_ex(j, "resources", &v))
                st.resources = json_object_get(v);
        json_object_put(j);
        *ret = st;
        return 0;
}

json_object *zct_state_to_json(const struct zct_state *st) {
        json_object *o = json_object_new_object();
        enum zct_status s = zct_state_status(st);

        json_object_object_add(o, "ociVersion", json_object_new_string(ZCT_RUNC_OCI_VERSION));
        json_object_object_add(o, "id", json_object_new_string(st->id));
        json_object_object_add(o, "pid", json_object_new_int(s == ZCT_STATUS_STOPPED ? 0 : st->pid));
        json_object_object_add(o, "status", json_object_new_string(zct_status_to_string(s)));
        json_object_object_add(o, "bundle", json_object_new_string(st->bundle ? st->bundle : ""));
        json_object_object_add(o, "rootfs", json_object_new_string(st->rootfs ? st->rootfs : ""));
        json_object_object_add(o, "created", json_object_new_string(st->created ? st->created : ""));
        json_object_object_add(o, "owner", json_object_new_string(""));
        if (st->annotations)
                json_object_object_add(o, "annotations", json_object_get(st->annotations));
        return o;
}

int zct_state_save(const struct zct_state *st) {
        _cleanup_free_ char *file = NULL, *tmp = NULL;
        json_object *o = zct_state_to_json(st);
        int r = 0;

        /* the private fields; "status" is recomputed on every read */
        json_object_object_add(o, "pid", json_object_new_int(st->pid));
        json_object_object_add(o, "starttime", json_object_new_uint64(st->starttime));
        json_object_object_add(o, "owner", json_object_new_int64(st->owner));
        json_object_object_add(o, "cgroup", zct_cgroup_to_json(&st->cgroup));
        if (st->hooks)
                json_object_object_add(o, "hooks", json_object_get(st->hooks));
        if (st->resources)
                json_object_object_add(o, "resources", json_object_get(st->resources));
        json_object_object_del(o, "status");
        if (asprintf(&file, "%s/state.json", st->dir) < 0 || asprintf(&tmp, "%s/.state.json.tmp", st->dir) < 0)
                r = -ENOMEM;
        else if (json_object_to_file_ext(tmp, o, JSON_C_TO_STRING_PLAIN) < 0 || rename(tmp, file) < 0)
                r = negative_errno();
        json_object_put(o);
        return r;
}

void zct_state_done(struct zct_state *st) {
        free(st->id);
        free(st->dir);
        free(st->bundle);
        free(st->rootfs);
        free(st->created);
        zct_cgroup_done(&st->cgroup);
        if (st->annotations)
                json_object_put(st->annotations);
        if (st->hooks)
                json_object_put(st->hooks);
        if (st->resources)
                json_object_put(st->resources);
        *st = (struct zct_state){};
}

int zct_state_pidfd(const struct zct_state *st) {
        uint64_t start;
        char state;
        int fd, r;

        if (st->pid <= 0)
                return -ESRCH;
        fd = pidfd_open_pid(st->pid);
        if (fd < 0)
                return fd;
        /* after the pidfd: a pid reused later cannot be mistaken for this one */
        r = zct_proc_starttime(st->pid, &start, &state);
        if (r < 0 || start != st->starttime || state == 'Z' || state == 'X') {
                close(fd);
                return -ESRCH;
        }
        return fd;
}

enum zct_status zct_state_status(const struct zct_state *st) {
        _cleanup_free_ char *fifo = NULL;
        int fd = zct_state_pidfd(st);

        if (fd < 0)
                return ZCT_STATUS_STOPPED;
        close(fd);
        if (asprintf(&fifo, "%s/exec.fifo", st->dir) >= 0 && access(fifo, F_OK) == 0)
                return ZCT_STATUS_CREATED;
        if (zct_cgroup_is_frozen(&st->cgroup) > 0)
                return ZCT_STATUS_PAUSED;
        return ZCT_STATUS_RUNNING;
}

const char *zct_status_to_string(enum zct_status s) {
        static const char *const names[] = { "created", "running", "paused", "stopped" };
        return (unsigned) s < ELEMENTSOF(names) ? names[s] : "unknown";
}

int zct_rm_rf(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;

        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (asprintf(&p, "%s/%s", path, de->d_name) < 0)
                        break;
                if (de->d_type == DT_DIR)
                        (void) zct_rm_rf(p);
                else
                        (void) unlink(p);
        }
        closedir(d);
        return rmdir(path) < 0 && errno != ENOENT ? -errno : 0;
}

void zct_state_now(char *buf, size_t len) {
        struct timespec now;
        struct tm tm;
        char ts[64];

        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, len, "%s.%09ldZ", ts, now.tv_nsec);
}

int zct_state_keep_config(const char *dir, const char *config, char **ret_path) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (asprintf(&path, "%s/config.json", dir) < 0)
                return -ENOMEM;
        r = zct_copy_file(config, path, 0600);
        if (r < 0)
                return r;
        *ret_path = TAKE_PTR(path);
        return 0;
}

int zct_state_config(const char *dir, char **ret_path) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/config.json", dir) < 0)
                return -ENOMEM;
        if (access(path, F_OK) < 0) {
                if (errno != ENOENT)
                        return -errno;
                free(path);
                path = NULL;
        }
        *ret_path = TAKE_PTR(path);
        return 0;
}
