/* SPDX-License-Identifier: MIT */
/*
 * The id-mapped mounts of a container made by the runtime before the init is cloned (see
 * idmap-mount.c for why and what a mapping means): for each, a user namespace holding its
 * mappings, a detached copy of its source with its attributes and MOUNT_ATTR_IDMAP set, kept in
 * o->mounts[i].tree_fd for the init to attach.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "libcontainer.h"
#include "util.h"

/* A user namespace with these maps: a child cloned into a new one waits (a read on a pipe) while
 * the maps are written and its namespace opened, then is let go and reaped. The fd, or -errno. */
static int userns_with_maps(const char *uid_map, const char *gid_map) {
        _cleanup_close_ int proc = -EBADF, pidfd = -EBADF;
        int pipefd[2], ns = -EBADF, r = 0;
        struct clone_args ca = { .flags = CLONE_NEWUSER | CLONE_PIDFD,
                                 .pidfd = (uint64_t) (uintptr_t) &pidfd,
                                 .exit_signal = SIGCHLD };
        char path[64];
        siginfo_t si;
        pid_t pid;

        proc = zct_procfs_open();
        if (proc < 0)
                return proc;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = (pid_t) syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0) {
                /* a copy of the runtime: only raw calls until it exits */
                char b;
                close(pipefd[1]);
                (void) read(pipefd[0], &b, 1);
                _exit(0);
        }
        close(pipefd[0]);
        if (pid < 0) {
                r = -errno;
                close(pipefd[1]);
                return r;
        }
        snprintf(path, sizeof(path), "%d/uid_map", (int) pid);
        r = zct_procfs_write(proc, path, uid_map);
        if (r >= 0) {
                snprintf(path, sizeof(path), "%d/gid_map", (int) pid);
                r = zct_procfs_write(proc, path, gid_map);
        }
        if (r >= 0) {
                /* a magic link, on our own procfs: the namespace of the process the pid names */
                snprintf(path, sizeof(path), "%d/ns/user", (int) pid);
                ns = openat(proc, path, O_RDONLY | O_CLOEXEC);
                if (ns < 0)
                        r = -errno;
                else if (ioctl(ns, NS_GET_NSTYPE) != CLONE_NEWUSER)
                        r = -EINVAL;
        }
        close(pipefd[1]); /* the child reads EOF and exits */
        if (waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0 && r >= 0)
                r = -errno;
        if (r < 0) {
                safe_close(ns);
                return r;
        }
        return ns;
}

/* The user namespace an id-mapped mount of e takes: its own mappings, or the container's. */
static int userns_for(const struct zct_ctx *c, const struct zct_oci *o, const struct zct_mount_idmap *e) {
        if (e->uid_map)
                return userns_with_maps(e->uid_map, e->gid_map);
        if (o->uid_map)
                return userns_with_maps(o->uid_map, o->gid_map ? o->gid_map : "");
        for (size_t i = 0; i < o->n_ns_paths; i++)
                if (o->ns_paths[i].flag == CLONE_NEWUSER)
                        return zct_open_namespace(c, &o->ns_paths[i]);
        return -EINVAL; /* the parser refused it */
}

static int setattr(int fd, uint64_t set, int userns, bool recursive) {
        struct mount_attr a = { .attr_set = set, .userns_fd = userns >= 0 ? (uint64_t) userns : 0 };

        if (set == 0)
                return 0;
        if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0)
                return -errno;
        return 0;
}

/* One mount: the copy of its source (with what is below it for rbind), its attributes (for
 * rbind on every mount of it, as a bind's), the id mapping (with ridmap on every mount of it). */
static int make_one(const struct zct_ctx *c, const struct zct_oci *o, const struct zct_mount_idmap *e,
                    struct ze_sb_mount *m) {
        _cleanup_close_ int userns = -EBADF, tree = -EBADF;
        const char *why = "";
        int r;

        userns = userns_for(c, o, e);
        if (userns < 0)
                return zct_error(c, "mounts[%zu] (%s): the user namespace of its id mapping: %s", e->index, m->dest,
                                 zct_errstr(-userns)),
                       userns;
        tree = (int) syscall(SYS_open_tree, AT_FDCWD, m->source,
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->recursive ? AT_RECURSIVE : 0));
        if (tree < 0)
                return zct_error_errno(c, "mounts[%zu] (%s): bind source %s", e->index, m->dest, m->source);
        /* "ro" and the like on the bind's own mount, "rro" and the like on every mount of it */
        r = setattr(tree, m->attr_set_rec, -EBADF, m->recursive);
        if (r >= 0)
                r = setattr(tree, m->attr_set, -EBADF, false);
        if (r >= 0)
                r = setattr(tree, MOUNT_ATTR_IDMAP, userns, e->recursive && m->recursive);
        if (r == -EINVAL)
                why = " (a filesystem without id-mapped mounts, of the source or, with ridmap, of a mount below it)";
        else if (r == -EPERM)
                why = " (needs CAP_SYS_ADMIN over the source's filesystem, or the source is id-mapped already)";
        if (r < 0)
                return zct_error(c, "mounts[%zu] (%s): id-mapped mount of %s: %s%s", e->index, m->dest, m->source,
                                 zct_errstr(-r), why),
                       r;
        m->tree_fd = TAKE_FD(tree);
        return 0;
}

int zct_idmap_mounts_make(const struct zct_ctx *c, struct zct_oci *o) {
        if (o->n_idmaps == 0)
                return 0;
        /* as runc: the kernel wants CAP_SYS_ADMIN over the source's filesystem, which root of a
         * user namespace does not hold for the host's disks */
        if (zct_rootless())
                return zct_error(c,
                                 "id-mapped mounts (mounts[%zu]) are not supported for a rootless container: "
                                 "they need root outside any user namespace",
                                 o->idmaps[0].index),
                       -EPERM;
        for (size_t i = 0; i < o->n_mounts; i++) {
                struct ze_sb_mount *m = &o->mounts[i];
                const struct zct_mount_idmap *e = NULL;
                int r;

                if (!m->premade)
                        continue;
                /* by destination: the runtime's cgroup views move the mounts after the config's */
                for (size_t k = 0; k < o->n_idmaps && !e; k++)
                        if (o->idmaps[k].dest == m->dest)
                                e = &o->idmaps[k];
                if (!e)
                        return -EINVAL;
                r = make_one(c, o, e, m);
                if (r < 0)
                        return r;
        }
        return 0;
}
