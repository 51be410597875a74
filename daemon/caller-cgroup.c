/* SPDX-License-Identifier: MIT */
/*
 * The cgroups of the caller (caller.c's facet; caller-proc.h): in each hierarchy where its
 * cgroup differs from zygoted's, that cgroup's directory, found under a mount of the hierarchy
 * here, for the task to start in.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller-proc.h"
#include "util.h"

/* Whether every controller of a /proc/PID/cgroup line ("pids", "cpu,cpuacct", "name=systemd")
 * is among a cgroup v1 mount's super options. */
static bool has_controllers(const char *opts, const char *ctl, size_t ctl_len) {
        while (ctl_len > 0) {
                size_t n = strcspn(ctl, ",");
                bool found = false;

                if (n > ctl_len)
                        n = ctl_len;
                for (const char *o = opts; *o && !found; o += strcspn(o, ","), o += *o ? 1 : 0)
                        found = strncmp(o, ctl, n) == 0 && (o[n] == ',' || o[n] == 0);
                if (!found)
                        return false;
                ctl += n;
                ctl_len -= n;
                if (ctl_len > 0) {
                        ctl++;
                        ctl_len--;
                }
        }
        return true;
}

/* The directory of cgroup path (plen bytes) in the hierarchy a /proc/PID/cgroup line names
 * (controllers empty for the unified one), into buf: under a mount of that hierarchy whose root
 * (a container's mounts show only their own subtree) holds the path. -EXDEV when none does. */
static int find_cgroup_dir(const char *mountinfo, const char *ctl, size_t ctl_len, const char *path, size_t plen,
                           char *buf, size_t size) {
        for (const char *l = mountinfo; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                char root[PATH_MAX], point[PATH_MAX], type[32], opts[512];
                const char *sep = strstr(l, " - ");
                const char *eol = strchrnul(l, '\n');

                if (!sep || sep > eol)
                        continue;
                /* id parent major:minor root mount-point ... - type source super-options */
                if (sscanf(l, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
                    sscanf(sep + 3, "%31s %*s %511s", type, opts) != 2)
                        continue;
                if (ctl_len == 0 ? strcmp(type, "cgroup2") != 0
                                 : strcmp(type, "cgroup") != 0 || !has_controllers(opts, ctl, ctl_len))
                        continue;
                /* root "/" holds every path; "/a" holds "/a" and "/a/..." */
                size_t rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
                if (rlen > plen || strncmp(path, root, rlen) != 0 || (rlen < plen && rlen > 0 && path[rlen] != '/'))
                        continue;
                if ((size_t) snprintf(buf, size, "%s%.*s", point, (int) (plen - rlen), path + rlen) >= size)
                        return -ENAMETOOLONG;
                return 0;
        }
        return -EXDEV;
}

/* The line of the same hierarchy ("ID:") in a /proc/PID/cgroup text, or NULL. */
static const char *same_hierarchy(const char *text, const char *line) {
        size_t k = strcspn(line, ":") + 1;

        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (strncmp(l, line, k) == 0)
                        return l;
        return NULL;
}

/* zygoted's own cgroup and mountinfo files, open from start-up when it keeps them
 * (zd_caller_keep_own()); -EBADF: opened and closed at each call. The mount table's text is kept
 * with it while poll() on that file shows no change (POLLPRI at each change of the namespace's
 * mounts): the expensive read of a call whose caller is in another cgroup. */
static int own_cgroup_fd = -EBADF, own_mounts_fd = -EBADF;
static char *own_mounts;

int zd_caller_keep_own_cgroups(void) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = zd_caller_read_kept(&own_cgroup_fd, AT_FDCWD, "/proc/self/cgroup", &text);
        if (r == -ENOENT)
                return 0; /* a kernel without cgroups */
        if (r < 0)
                return r;
        return zd_caller_read_kept(&own_mounts_fd, AT_FDCWD, "/proc/self/mountinfo", &own_mounts);
}

static int own_mountinfo(const char **ret) {
        _cleanup_close_ int fd = -EBADF;
        struct pollfd p = { .fd = own_mounts_fd, .events = POLLPRI };
        int r;

        if (own_mounts_fd >= 0 && own_mounts && poll(&p, 1, 0) == 0) {
                *ret = own_mounts;
                return 0;
        }
        free(own_mounts);
        own_mounts = NULL;
        /* polled first: a change after it shows at the next poll */
        r = zd_caller_read_kept(own_mounts_fd >= 0 ? &own_mounts_fd : &fd, AT_FDCWD, "/proc/self/mountinfo",
                                &own_mounts);
        if (r < 0)
                return r;
        *ret = own_mounts;
        return 0;
}

/* zygoted's own cgroups, read at each call: an administrator may move it. */
static int own_cgroups(char *buf, size_t size, char **ret_long) {
        _cleanup_close_ int fd = -EBADF;

        return zd_caller_pread(own_cgroup_fd >= 0 ? &own_cgroup_fd : &fd, AT_FDCWD, "/proc/self/cgroup", buf, size,
                               ret_long);
}

/* Whether every line of a /proc/PID/cgroup text names its hierarchy's root: what a thread shows
 * while the kernel is still creating it (it is listed before it joins its creator's cgroups). */
static bool all_roots(const char *text) {
        for (const char *l = text, *eol; *l; l = *eol ? eol + 1 : eol) {
                const char *path = strchr(l, ':');

                eol = strchrnul(l, '\n');
                path = path && path < eol ? strchr(path + 1, ':') : NULL;
                if (!path || path > eol || eol - path != 2 || path[1] != '/')
                        return false;
        }
        return true;
}

/* Cgroups of v1 hierarchies (and of a v2 threaded subtree) belong to threads: one thread may be
 * moved alone, and zygoted cannot tell which thread made the call. Every other thread's cgroups
 * must be the first one's (the text of /proc/PID/cgroup), or the caller is refused (-EREMCHG), as
 * for namespaces (caller-ns.c). A thread in every root is passed over: one being created shows
 * that, and the task then starts in the first thread's cgroups, within the roots. */
int zd_caller_thread_same_cgroups(int *fd, int dir_fd, const struct zd_caller_first *first) {
        _cleanup_free_ char *text = NULL;
        char buf[4096];
        int r;

        r = zd_caller_pread(fd, dir_fd, "cgroup", buf, sizeof(buf), &text);
        if (r < 0)
                return r;
        return streq(text ? text : buf, first->cgroup) || all_roots(text ? text : buf) ? 0 : -EREMCHG;
}

int zd_caller_read_cgroups(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c, struct zd_caller_first *first) {
        _cleanup_free_ char *mine_long = NULL;
        const char *mountinfo = NULL, *theirs, *mine;
        char mine_buf[4096];
        int r;

        /* A kernel without cgroups (CONFIG_CGROUPS off, as in the kernel lane's guest) has no
         * /proc/PID/cgroup: nothing to carry. Read ours first, so that a caller's missing file
         * still means a caller that is gone. */
        first->cgroup = NULL;
        r = own_cgroups(mine_buf, sizeof(mine_buf), &mine_long);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        mine = mine_long ? mine_long : mine_buf;
        r = zd_caller_pread(&k->cgroup_fd, proc_fd, "cgroup", first->cgroup_buf, sizeof(first->cgroup_buf),
                            &first->cgroup_long);
        if (r < 0)
                return r;
        theirs = first->cgroup = first->cgroup_long ? first->cgroup_long : first->cgroup_buf;
        /* lines "ID:CONTROLLERS:PATH" */
        for (const char *l = theirs, *eol; *l; l = *eol ? eol + 1 : eol) {
                const char *ctl = strchr(l, ':'), *path, *m, *mp;
                char dir[PATH_MAX];
                size_t plen;

                eol = strchrnul(l, '\n');
                if (!ctl || ctl > eol || !(path = strchr(ctl + 1, ':')) || path > eol)
                        return -EBADMSG;
                ctl++;
                path++;
                plen = (size_t) (eol - path);
                if (plen < sizeof(c->unit_cgroup) && ((path - ctl == 13 && strncmp(ctl, "name=systemd", 12) == 0) ||
                                                      (path - ctl == 1 && !c->unit_cgroup[0]))) {
                        memcpy(c->unit_cgroup, path, plen);
                        c->unit_cgroup[plen] = 0;
                }
                if (plen < sizeof(c->unified_cgroup) && path - ctl == 1) {
                        memcpy(c->unified_cgroup, path, plen);
                        c->unified_cgroup[plen] = 0;
                }
                m = same_hierarchy(mine, l);
                mp = m ? strchr(m, ':') : NULL;
                mp = mp ? strchr(mp + 1, ':') : NULL;
                if (mp && (size_t) (strchrnul(mp + 1, '\n') - (mp + 1)) == plen && strncmp(mp + 1, path, plen) == 0)
                        continue; /* the task starts there anyway */
                if (c->n_cgroups >= ZE_MAX_CGROUPS)
                        return -E2BIG;
                if (!mountinfo) {
                        r = own_mountinfo(&mountinfo);
                        if (r < 0)
                                return r;
                }
                r = find_cgroup_dir(mountinfo, ctl, (size_t) (path - 1 - ctl), path, plen, dir, sizeof(dir));
                if (r < 0)
                        return r;
                /* opened by path at each call: the path is the caller's cgroup now */
                r = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (r < 0)
                        return negative_errno();
                c->cgroup_fds[c->n_cgroups++] = r;
        }
        return 0;
}
