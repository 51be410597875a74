/* SPDX-License-Identifier: MIT */
/*
 * Cgroups of a container on v1, hybrid (v1 controllers plus cgroup2 at /sys/fs/cgroup/unified)
 * and pure v2 hosts. The hierarchies come from /proc/self/mountinfo and the caller's place in
 * each from /proc/self/cgroup; a relative cgroupsPath (or none: the container's id) goes below
 * the caller's own cgroup, an absolute one below each hierarchy's root, as runc's cgroupfs
 * driver does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup-devices.h"
#include "cgroup-freezer.h"
#include "cgroup-resources.h"
#include "pidfd-util.h"
#include "libcontainer.h"
#include "util.h"

bool zct_cgroup_is_v2_only(void) {
        struct statfs fs;
        return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

static int read_file(const char *dir, const char *file, char *buf, size_t len) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        if (asprintf(&p, "%s/%s", dir, file) < 0)
                return -ENOMEM;
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, len - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

/* Whether every controller of the comma list "a,b" is in the mount's super options. */
bool zct_cgroup_has_controllers(const char *options, const char *list) {
        _cleanup_free_ char *copy = strdup(list);
        char *save = NULL;

        if (!copy)
                return false;
        for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
                size_t n = strlen(c);
                const char *p = options;
                bool found = false;

                while ((p = strstr(p, c))) {
                        if ((p == options || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) {
                                found = true;
                                break;
                        }
                        p += n;
                }
                if (!found)
                        return false;
        }
        return true;
}

int zct_cgroup_find_mount(const char *controllers, char **ret_mnt, char **ret_root) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                char root[4096], mnt[4096], fstype[64], source[256], super[1024];
                char *sep = strstr(line, " - ");

                if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
                    sscanf(sep + 3, "%63s %255s %1023s", fstype, source, super) != 3)
                        continue;
                if (controllers[0] == '\0'
                            ? !streq(fstype, "cgroup2")
                            : !streq(fstype, "cgroup") || !zct_cgroup_has_controllers(super, controllers))
                        continue;
                fclose(f);
                *ret_mnt = strdup(mnt);
                *ret_root = strdup(root);
                return *ret_mnt && *ret_root ? 0 : -ENOMEM;
        }
        fclose(f);
        return -ENOENT;
}

/* cpuset v1: a new directory starts with empty cpuset.cpus and cpuset.mems, and takes no process
 * until both are set; each one from the mount's root down gets its parent's where empty. */
static int fill_cpuset(const char *mnt, const char *dir) {
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
        _cleanup_free_ char *copy = strdup(dir);
        char *p, value[4096];
        int r;

        if (!copy)
                return -ENOMEM;
        /* p: the slash before the component being filled; what is left of it, its parent */
        p = copy + strlen(mnt);
        if (*p != '/')
                return 0;
        for (;;) {
                char *next = strchr(p + 1, '/');

                if (next)
                        *next = '\0';
                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        r = read_file(copy, files[i], value, sizeof(value));
                        if (r < 0)
                                return r;
                        if (strspn(value, " \n") != strlen(value))
                                continue;
                        *p = '\0';
                        r = read_file(copy, files[i], value, sizeof(value));
                        *p = '/';
                        if (r >= 0)
                                r = zct_write_at(copy, files[i], value);
                        if (r < 0)
                                return r;
                }
                if (!next)
                        return 0;
                *next = '/';
                p = next;
        }
}

/* "slice:prefix:name" (systemd driver syntax) -> "slice/prefix-name.scope" */
static char *systemd_style(const char *path) {
        const char *a = strchr(path, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        char *s;

        if (!b)
                return NULL;
        if (asprintf(&s, "/%.*s/%.*s-%s.scope", (int) (a - path), path, (int) (b - a - 1), a + 1, b + 1) < 0)
                return NULL;
        return s;
}

int zct_cgroup_create(const char *cgroups_path, const char *id, json_object *resources, bool rootless,
                      struct zct_cgroup *ret, char **ret_error) {
        struct zct_cgroup cg = { .v2_only = zct_cgroup_is_v2_only() };
        _cleanup_free_ char *line = NULL, *converted = NULL;
        _cleanup_(zct_res_plan_done) struct zct_res_plan plan = {};
        unsigned v1_mask, v2_mask;
        size_t cap = 0;
        FILE *f;
        int r = 0;
        /* rootless, the cgroups it may not make are gone without, hierarchy by hierarchy, as runc's
         * rootless managers do: what writes to them, a limit, then fails naming its field
         * (zct_res_apply), and a delegated hierarchy (systemd's Delegate=, the caller's own cgroup
         * its user's) is used. A cgroupfs path the config names is not given up (runc fails too);
         * a systemd-style one is, as this runtime has no systemd driver to ask for it. */
        bool go_without =
                rootless && (!cgroups_path || !*cgroups_path || (cgroups_path[0] != '/' && strchr(cgroups_path, ':')));

        /* every limit is understood and has its controller here before anything is made */
        r = zct_res_host(&v1_mask, &v2_mask);
        if (r >= 0)
                r = zct_res_plan(resources, v1_mask, v2_mask, &plan, ret_error);
        if (r < 0)
                return r;

        if (cgroups_path && cgroups_path[0] != '/' && strchr(cgroups_path, ':')) {
                converted = systemd_style(cgroups_path);
                if (!converted)
                        return -ENOMEM;
                cgroups_path = converted;
        }
        f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return -errno;
        while (r >= 0 && getline(&line, &cap, f) > 0) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                _cleanup_free_ char *mnt = NULL, *root = NULL, *dir = NULL;
                const char *own, *rel;
                bool v2;

                if (!c2 || cg.n_paths >= ELEMENTSOF(cg.paths))
                        continue;
                *c2 = '\0';
                own = c2 + 1;
                own = strndupa(own, strcspn(own, "\n"));
                v2 = c1[1] == '\0';
                /* a cgroup of its own in every hierarchy, as runc makes: the container's view of
                 * a hierarchy (zct_cgroup_views) is its own directory and nothing above it */
                if (zct_cgroup_find_mount(v2 ? "" : c1 + 1, &mnt, &root) < 0)
                        continue;
                /* the caller's cgroup as seen below this mount */
                if (!streq(root, "/") && strncmp(own, root, strlen(root)) == 0)
                        own += strlen(root);
                rel = cgroups_path && *cgroups_path ? cgroups_path : id;
                if (rel[0] == '/')
                        r = asprintf(&dir, "%s%s", mnt, rel);
                else
                        r = asprintf(&dir, "%s%s/%s", mnt, streq(own, "/") ? "" : own, rel);
                if (r < 0) {
                        r = -ENOMEM;
                        break;
                }
                r = zct_mkdir_p(dir, 0755);
                if (r >= 0 && !v2 && zct_cgroup_has_controllers(c1 + 1, "cpuset")) {
                        r = fill_cpuset(mnt, dir);
                        if (r < 0)
                                (void) rmdir(dir);
                }
                if (go_without && (r == -EACCES || r == -EPERM || r == -EROFS)) {
                        r = 0;
                        continue;
                }
                if (r < 0) {
                        if (ret_error && asprintf(ret_error, "cgroup %s: %s", dir, strerror(-r)) < 0)
                                *ret_error = NULL;
                        break;
                }
                if (zct_cgroup_has_controllers(c1 + 1, "freezer") || (v2 && cg.v2_only)) {
                        cg.freezer = strdup(dir);
                        cg.freezer_v1 = !v2;
                }
                if (!v2 && zct_cgroup_has_controllers(c1 + 1, "devices"))
                        free(cg.devices), cg.devices = strdup(dir);
                if (v2)
                        free(cg.unified), cg.unified = strdup(dir);
                if (zct_cgroup_has_controllers(c1 + 1, "pids") || (v2 && cg.v2_only) || (!cg.procs && !v2))
                        free(cg.procs), cg.procs = strdup(dir);
                if (asprintf(&cg.origins[cg.n_paths], "%s%s", mnt, streq(own, "/") ? "" : own) < 0) {
                        cg.origins[cg.n_paths] = NULL;
                        r = -ENOMEM;
                }
                cg.paths[cg.n_paths++] = TAKE_PTR(dir);
        }
        fclose(f);
        if (r >= 0)
                r = zct_res_apply(&cg, &plan, ret_error);
        if (r < 0) {
                (void) zct_cgroup_remove(&cg);
                zct_cgroup_done(&cg);
                return r;
        }
        *ret = cg;
        return 0;
}

static bool has_release_agent(const char *dir) {
        _cleanup_free_ char *p = NULL;

        /* unknown counts as present: the view leaves such a hierarchy out */
        if (asprintf(&p, "%s/release_agent", dir) < 0)
                return true;
        return faccessat(AT_FDCWD, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

void zct_cgroup_views_free(struct zct_cgroup_view *v, size_t n) {
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].name);
                free(v[i].dir);
        }
        free(v);
}

int zct_cgroup_views(const struct zct_cgroup *cg, struct zct_cgroup_view **ret, size_t *ret_n) {
        _cleanup_free_ char *line = NULL;
        struct zct_cgroup_view *v = NULL;
        size_t cap = 0, n = 0;
        FILE *f = fopen("/proc/self/cgroup", "re");
        int r = 0;

        if (!f)
                return -errno;
        while (r >= 0 && getline(&line, &cap, f) > 0) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                _cleanup_free_ char *mnt = NULL, *root = NULL;
                const char *name, *dir = NULL;
                struct zct_cgroup_view *grown;
                size_t mlen;
                bool seen = false;

                if (!c2)
                        continue;
                *c2 = '\0';
                if (zct_cgroup_find_mount(c1[1] == '\0' ? "" : c1 + 1, &mnt, &root) < 0)
                        continue;
                /* only the hierarchies of the host's /sys/fs/cgroup, each under its own name */
                name = strrchr(mnt, '/');
                if (!name || (size_t) (name - mnt) != strlen("/sys/fs/cgroup") ||
                    strncmp(mnt, "/sys/fs/cgroup", strlen("/sys/fs/cgroup")) != 0)
                        continue;
                name++;
                for (size_t i = 0; i < n; i++)
                        seen = seen || streq(v[i].name, name);
                if (seen)
                        continue;
                mlen = strlen(mnt);
                for (size_t i = 0; i < cg->n_paths && !dir; i++)
                        if (strncmp(cg->paths[i], mnt, mlen) == 0 && cg->paths[i][mlen] == '/')
                                dir = cg->paths[i];
                /* Only a directory of the container's own, and never one holding release_agent
                 * (the root of a v1 hierarchy: a program the host's kernel runs as root, the
                 * CVE-2022-0492 escape), even with a cgroupsPath of "/". A hierarchy it has no
                 * cgroup of its own in (rootless) is left out of its view. */
                if (!dir || dir[mlen + strspn(dir + mlen, "/")] == '\0' || has_release_agent(dir))
                        continue;
                grown = reallocarray(v, n + 1, sizeof(*v));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                v = grown;
                v[n].name = strdup(name);
                v[n].dir = strdup(dir);
                n++;
                if (!v[n - 1].name || !v[n - 1].dir)
                        r = -ENOMEM;
        }
        fclose(f);
        if (r < 0) {
                zct_cgroup_views_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int zct_cgroup_set_devices(const struct zct_cgroup *cg, const struct zct_dev_rule *rules, size_t n, char **ret_error) {
        _cleanup_free_ struct bpf_insn *prog = NULL;
        _cleanup_free_ char *log = NULL;
        _cleanup_close_ int fd = -EBADF;
        int len, r;

        if (cg->devices) {
                /* v1 (and hybrid, where the controller is v1): the kernel's own lists, in order;
                 * "a" first empties whatever the new directory inherited from its parent */
                r = zct_dev_rules_check_v1(rules, n, ret_error);
                if (r < 0)
                        return r;
                r = zct_write_at(cg->devices, "devices.deny", "a");
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        char line[64];

                        zct_dev_rule_v1_line(&rules[i], line, sizeof(line));
                        r = zct_write_at(cg->devices, rules[i].allow ? "devices.allow" : "devices.deny", line);
                        if (r < 0 && ret_error &&
                            asprintf(ret_error, "cgroup %s: devices.%s \"%s\": %s", cg->devices,
                                     rules[i].allow ? "allow" : "deny", line, strerror(-r)) < 0)
                                *ret_error = NULL;
                }
                if (r < 0 && ret_error && !*ret_error &&
                    asprintf(ret_error, "cgroup %s: devices.deny: %s", cg->devices, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        /* cgroup2 has no devices file: an eBPF program on the directory decides (on a hybrid
         * host without the v1 controller too: cgroup2's programs run on every host) */
        if (!cg->unified) {
                /* neither: the container would open every device of the host; the caller decides
                 * (only a rootless one goes on) */
                if (ret_error && asprintf(ret_error, "no devices cgroup controller and no cgroup2 hierarchy: the "
                                                     "container's devices cannot be restricted") < 0)
                        *ret_error = NULL;
                return -EOPNOTSUPP;
        }
        prog = calloc(zct_dev_program_max(n), sizeof(*prog));
        if (!prog)
                return -ENOMEM;
        len = zct_dev_program(rules, n, prog, zct_dev_program_max(n));
        if (len < 0)
                return len;
        /* not O_PATH: bpf(2) takes the cgroup from a file it can read */
        fd = open(cg->unified, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = zct_dev_program_attach(fd, prog, (size_t) len, &log);
        if (r < 0 && ret_error &&
            asprintf(ret_error, "cgroup %s: device program (bpf): %s%s%s", cg->unified, strerror(-r),
                     log && *log ? ": " : "", log ? log : "") < 0)
                *ret_error = NULL;
        return r;
}

int zct_cgroup_open_v2(const struct zct_cgroup *cg) {
        int fd;

        if (!cg->v2_only || cg->n_paths == 0)
                return -EOPNOTSUPP;
        fd = open(cg->paths[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int zct_cgroup_join(const struct zct_cgroup *cg, pid_t pid) {
        char v[32];

        snprintf(v, sizeof(v), "%d", (int) pid);
        for (size_t i = 0; i < cg->n_paths; i++) {
                int r = zct_write_at(cg->paths[i], "cgroup.procs", v);
                if (r < 0)
                        return r;
        }
        return 0;
}

int zct_cgroup_return(const struct zct_cgroup *cg) {
        char v[32];

        snprintf(v, sizeof(v), "%d", (int) getpid());
        for (size_t i = 0; i < cg->n_paths; i++) {
                int r = cg->origins[i] ? zct_write_at(cg->origins[i], "cgroup.procs", v) : -ENOENT;
                if (r < 0)
                        return r;
        }
        return 0;
}

int zct_cgroup_is_frozen(const struct zct_cgroup *cg) {
        char buf[256];
        int r;

        if (!cg->freezer)
                return -EOPNOTSUPP;
        if (cg->freezer_v1) {
                r = read_file(cg->freezer, "freezer.state", buf, sizeof(buf));
                return r < 0 ? r : strncmp(buf, "FROZEN", 6) == 0;
        }
        r = read_file(cg->freezer, "cgroup.events", buf, sizeof(buf));
        return r < 0 ? r : strstr(buf, "frozen 1") != NULL;
}

/* The v1 freezer's freezer.state, for cgroup-freezer.c's loop. */
static int v1_write(void *userdata, bool frozen) {
        return zct_write_at(userdata, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

static int v1_read(void *userdata) {
        char buf[64];
        int r = read_file(userdata, "freezer.state", buf, sizeof(buf));

        if (r < 0)
                return r;
        return strncmp(buf, "FROZEN", 6) == 0     ? ZCT_FREEZER_FROZEN
               : strncmp(buf, "FREEZING", 8) == 0 ? ZCT_FREEZER_FREEZING
                                                  : ZCT_FREEZER_THAWED;
}

static void v1_pause(void *userdata, unsigned usec) {
        struct timespec ts = { .tv_sec = usec / 1000000, .tv_nsec = (long) (usec % 1000000) * 1000 };

        (void) userdata;
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

int zct_cgroup_freeze(const struct zct_cgroup *cg, bool frozen) {
        _cleanup_free_ char *events = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!cg->freezer)
                return -EOPNOTSUPP;
        if (cg->freezer_v1 && frozen)
                return zct_freezer_v1_freeze(&(const struct zct_freezer_io){
                        .write = v1_write, .read = v1_read, .pause = v1_pause, .userdata = cg->freezer });
        if (cg->freezer_v1) {
                /* THAWED takes at once */
                r = zct_write_at(cg->freezer, "freezer.state", "THAWED");
                if (r < 0)
                        return r;
                r = zct_cgroup_is_frozen(cg);
                return r < 0 ? r : r ? -EBUSY : 0;
        }
        if (asprintf(&events, "%s/cgroup.events", cg->freezer) < 0)
                return -ENOMEM;
        fd = open(events, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = zct_write_at(cg->freezer, "cgroup.freeze", frozen ? "1" : "0");
        if (r < 0)
                return r;
        /* cgroup.events signals POLLPRI on change: wait for "frozen" to match */
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLPRI };
                r = zct_cgroup_is_frozen(cg);
                if (r < 0 || r == frozen)
                        return r < 0 ? r : 0;
                if (poll(&p, 1, 10000) <= 0)
                        return -ETIMEDOUT;
        }
}

int zct_cgroup_pids(const struct zct_cgroup *cg, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *p = NULL;
        pid_t *pids = NULL;
        size_t n = 0;
        FILE *f;
        int pid;

        if (!cg->procs)
                return -EOPNOTSUPP;
        if (asprintf(&p, "%s/cgroup.procs", cg->procs) < 0)
                return -ENOMEM;
        f = fopen(p, "re");
        if (!f)
                return -errno;
        while (fscanf(f, "%d", &pid) == 1) {
                pid_t *np = reallocarray(pids, n + 1, sizeof(pid_t));
                if (!np) {
                        free(pids);
                        fclose(f);
                        return -ENOMEM;
                }
                pids = np;
                pids[n++] = pid;
        }
        fclose(f);
        *ret = pids;
        *ret_n = n;
        return 0;
}

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

int zct_cgroup_pidfds(const struct zct_cgroup *cg, int **ret, size_t *ret_n) {
        _cleanup_free_ pid_t *pids = NULL, *again = NULL;
        size_t n = 0, m = 0, k = 0;
        int *fds;
        int r;

        r = zct_cgroup_pids(cg, &pids, &n);
        if (r < 0)
                return r;
        fds = calloc(n ? n : 1, sizeof(int));
        if (!fds)
                return -ENOMEM;
        /* a pidfd pins its pid: the number is not reused while it is open */
        for (size_t i = 0; i < n; i++)
                fds[i] = pidfd_open_pid(pids[i]);
        r = zct_cgroup_pids(cg, &again, &m);
        for (size_t i = 0; i < n; i++) {
                if (fds[i] < 0)
                        continue; /* gone already */
                if (r >= 0 && pid_listed(again, m, pids[i]))
                        fds[k++] = fds[i];
                else
                        close(fds[i]); /* exited meanwhile: that number may be anyone's now */
        }
        if (r < 0) {
                free(fds);
                return r;
        }
        *ret = fds;
        *ret_n = k;
        return 0;
}

int zct_cgroup_remove(const struct zct_cgroup *cg) {
        int r = 0;

        for (size_t i = 0; i < cg->n_paths; i++)
                if (rmdir(cg->paths[i]) < 0 && errno != ENOENT)
                        r = -errno;
        return r;
}

void zct_cgroup_done(struct zct_cgroup *cg) {
        for (size_t i = 0; i < cg->n_paths; i++) {
                free(cg->paths[i]);
                free(cg->origins[i]);
        }
        free(cg->freezer);
        free(cg->procs);
        free(cg->devices);
        free(cg->unified);
        *cg = (struct zct_cgroup){};
}

json_object *zct_cgroup_to_json(const struct zct_cgroup *cg) {
        json_object *o = json_object_new_object(), *a = json_object_new_array();

        for (size_t i = 0; i < cg->n_paths; i++)
                json_object_array_add(a, json_object_new_string(cg->paths[i]));
        json_object_object_add(o, "paths", a);
        json_object_object_add(o, "v2_only", json_object_new_boolean(cg->v2_only));
        if (cg->freezer)
                json_object_object_add(o, "freezer", json_object_new_string(cg->freezer));
        json_object_object_add(o, "freezer_v1", json_object_new_boolean(cg->freezer_v1));
        if (cg->procs)
                json_object_object_add(o, "procs", json_object_new_string(cg->procs));
        return o;
}

int zct_cgroup_from_json(json_object *o, struct zct_cgroup *ret) {
        struct zct_cgroup cg = {};
        json_object *v;

        if (json_object_object_get_ex(o, "paths", &v))
                for (size_t i = 0; i < json_object_array_length(v) && i < ELEMENTSOF(cg.paths); i++)
                        cg.paths[cg.n_paths++] = strdup(json_object_get_string(json_object_array_get_idx(v, i)));
        if (json_object_object_get_ex(o, "v2_only", &v))
                cg.v2_only = json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "freezer", &v))
                cg.freezer = strdup(json_object_get_string(v));
        if (json_object_object_get_ex(o, "freezer_v1", &v))
                cg.freezer_v1 = json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "procs", &v))
                cg.procs = strdup(json_object_get_string(v));
        *ret = cg;
        return 0;
}
