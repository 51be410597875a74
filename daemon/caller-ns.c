/* SPDX-License-Identifier: MIT */
/*
 * The namespaces and root of the caller (caller.c's facet; caller-proc.h): which namespaces it
 * differs from zygoted in, which of those its task joins and which make it refused, and its root
 * directory with the procfs mounts it sees elsewhere than /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "caller-proc.h"
#include "mountinfo.h"
#include "util.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* per_thread: one thread may be in another of that kind than its process's first thread. Not
 * so for a user or pid namespace, by the kernel's own rules: clone() refuses CLONE_THREAD with
 * CLONE_NEWUSER or CLONE_NEWPID (and while pid_for_children differs from the creator's own),
 * setns() and unshare() of a user namespace refuse a process of more than one thread, and a
 * task's pid namespace is fixed at its creation; every thread is in its first thread's. */
static const struct {
        const char *name;
        unsigned flag;
        bool joinable; /* setns in the worker keeps the caller's view; see zd_caller_read() */
        bool per_thread;
} namespaces[] = {
        { "net", CLONE_NEWNET, true, true },       { "ipc", CLONE_NEWIPC, true, true },
        { "uts", CLONE_NEWUTS, true, true },       { "mnt", CLONE_NEWNS, true, true },
        { "cgroup", CLONE_NEWCGROUP, true, true }, { "pid", CLONE_NEWPID, false, false },
        { "user", CLONE_NEWUSER, false, false },
};

const char *zd_caller_ns_name(unsigned flag) {
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (namespaces[i].flag == flag)
                        return namespaces[i].name;
        return "unknown";
}

static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The inode number of the namespace behind link ("ns/net") under dir_fd, from the link's text
 * ("net:[4026531840]"), 0 when the kernel lacks that kind of namespace. readlink asks the kernel
 * only for the number, under the same ptrace read check as opening the link (-EACCES), where a
 * stat would make nsfs find or build a dentry for the namespace. Every namespace lives on the one
 * nsfs device: the number alone names it. */
static int ns_inum_at(int dir_fd, const char *link, bool missing_ok, uint64_t *ret) {
        unsigned long long v;
        char text[64], *end;
        const char *b;
        ssize_t n;

        n = readlinkat(dir_fd, link, text, sizeof(text) - 1);
        if (n < 0) {
                if (errno != ENOENT || !missing_ok)
                        return negative_errno();
                *ret = 0;
                return 0;
        }
        text[n] = 0;
        b = strchr(text, '[');
        if (!b || !b[1])
                return -EBADMSG;
        errno = 0;
        v = strtoull(b + 1, &end, 10);
        if (errno || *end != ']' || v == 0)
                return -EBADMSG;
        *ret = v;
        return 0;
}

static int ns_inum(int dir_fd, const char *link, uint64_t *ret) {
        return ns_inum_at(dir_fd, link, true, ret);
}

_Static_assert(ELEMENTSOF(namespaces) <= ZD_CALLER_NS_MAX, "struct zd_caller_first holds every namespace");

/* Namespaces belong to threads: one thread may unshare or setns its network, IPC, UTS or cgroup
 * namespace alone, and zygoted cannot tell which thread made the call. Every other thread's must
 * be the first one's (by namespaces[]), or the caller is refused (-EREMCHG) rather than served
 * with the namespaces of a thread that may not be the one that asked. Read through the thread's
 * directory (dir_fd), which names the thread: a readlink asks the kernel for the number only,
 * where a stat of the link would make nsfs build a dentry and an inode for it each time. */
int zd_caller_thread_same_ns(int dir_fd, const struct zd_caller_first *first) {
        char link[16];
        uint64_t ns;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                if (!namespaces[i].per_thread)
                        continue; /* the first thread's, read already */
                snprintf(link, sizeof(link), "ns/%s", namespaces[i].name);
                r = ns_inum_at(dir_fd, link, first->ns[i] == 0, &ns);
                /* a thread reaped since its directory was looked up reads as EACCES: gone when
                 * its directory has nothing under it any more */
                if (r == -EACCES && faccessat(dir_fd, "ns", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
                        return -ENOENT;
                if (r < 0)
                        return r;
                if (ns != first->ns[i])
                        return -EREMCHG;
        }
        return 0;
}

/* zygoted's own namespaces and root, read once: it never changes them (no setns, unshare nor
 * chroot in the daemon). An entry the kernel lacks stays zero, and so never equals a caller's. */
static uint64_t own_ns[ELEMENTSOF(namespaces)];
static struct stat own_root;

/* The device and inode of a directory, from its inode as it is (AT_STATX_DONT_SYNC): a caller
 * whose root is on FUSE must not make zygoted wait for its file system's server. */
static int dir_id(int dir_fd, const char *path, struct stat *ret) {
        struct statx stx;

        if (statx(dir_fd, path, AT_STATX_DONT_SYNC, STATX_INO, &stx) < 0)
                return negative_errno();
        *ret = (struct stat){ .st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), .st_ino = stx.stx_ino };
        return 0;
}
static bool own_read;

static int read_own(void) {
        char path[32];
        int r;

        if (own_read)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                snprintf(path, sizeof(path), "/proc/self/ns/%s", namespaces[i].name);
                r = ns_inum(AT_FDCWD, path, &own_ns[i]);
                if (r < 0)
                        return r;
        }
        r = dir_id(AT_FDCWD, "/", &own_root);
        if (r < 0)
                return r;
        own_read = true;
        return 0;
}

/* The first procfs mount point the caller sees (mountinfo lists those under its root, relative
 * to it) other than on /proc and beneath it, which the task's own /proc covers. */
static int note_procfs(const char *mount_point, void *userdata) {
        struct zd_caller *c = userdata;
        /* cut to fit: it only names the mount in the error */
        size_t n = strnlen(mount_point, sizeof(c->procfs_elsewhere) - 1);

        memcpy(c->procfs_elsewhere, mount_point, n);
        c->procfs_elsewhere[n] = 0;
        return 1;
}

/* The caller's root as the kept mount table must match it: its mount's id (mountinfo's first
 * field; 0 when the kernel does not say) and its inode. */
struct root_id {
        uint64_t mnt;
        struct stat st;
};

static int read_root_id(int proc_fd, struct root_id *ret) {
        struct statx stx;

        if (statx(proc_fd, "root", AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &stx) < 0)
                return negative_errno();
        *ret = (struct root_id){
                .mnt = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0,
                .st = { .st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor), .st_ino = stx.stx_ino },
        };
        return 0;
}

/* Whether a mountinfo text lists mount mnt on "/": the reader's root is that mount's root. */
static bool lists_root(const char *text, uint64_t mnt) {
        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                unsigned long long id;
                int point = -1;

                /* id parent major:minor root mount-point ... */
                if (sscanf(l, "%llu %*s %*s %*s %n", &id, &point) == 1 && point > 0 && id == mnt && l[point] == '/' &&
                    l[point + 1] == ' ')
                        return true;
        }
        return false;
}

static bool mounts_unchanged(const struct zd_caller_mounts *m, uint64_t mntns, const struct root_id *root) {
        struct pollfd p = { .fd = m->fd, .events = POLLPRI };

        /* POLLPRI (with POLLERR) once for each change of the namespace's mounts since the last
         * poll, or since the open */
        return m->fd >= 0 && root->mnt != 0 && m->mntns == mntns && m->root_mnt == root->mnt &&
               m->root_dev == root->st.st_dev && m->root_ino == root->st.st_ino && poll(&p, 1, 0) == 0;
}

/* The procfs mounts the caller sees elsewhere than /proc, from its mount table: the one m keeps
 * while nothing says it changed, else read again. A table is kept only when it lists the root's
 * mount on "/": a mount belongs to one namespace, so the kept table is that mount's namespace's,
 * even when the caller switched namespaces while the file was opened. The open file holds that
 * namespace (its number is no other's while kept), and the mount cannot leave it, nor its id go
 * to another mount, without the POLLPRI that drops the table. */
static int read_procfs_elsewhere(int proc_fd, struct zd_caller_mounts *m, uint64_t mntns, const struct root_id *root,
                                 struct zd_caller *c) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        if (mounts_unchanged(m, mntns, root)) {
                memcpy(c->procfs_elsewhere, m->procfs_elsewhere, sizeof(c->procfs_elsewhere));
                return 0;
        }
        m->fd = safe_close(m->fd);
        r = zd_caller_read_kept(&fd, proc_fd, "mountinfo", &text);
        if (r < 0)
                return r;
        r = zc_mountinfo_procfs_elsewhere_text(text, note_procfs, c);
        if (r < 0)
                return r;
        if (root->mnt != 0 && lists_root(text, root->mnt)) {
                m->fd = TAKE_FD(fd);
                m->mntns = mntns;
                m->root_mnt = root->mnt;
                m->root_dev = root->st.st_dev;
                m->root_ino = root->st.st_ino;
                memcpy(m->procfs_elsewhere, c->procfs_elsewhere, sizeof(m->procfs_elsewhere));
        }
        return 0;
}

void zd_caller_ns_from_record(const struct zd_caller_bpf_thread *t, uint32_t pid_ns, uint64_t ret[ZD_CALLER_NS_MAX]) {
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                switch (namespaces[i].flag) {
                case CLONE_NEWNET:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_NET];
                        break;
                case CLONE_NEWIPC:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_IPC];
                        break;
                case CLONE_NEWUTS:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_UTS];
                        break;
                case CLONE_NEWNS:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_MNT];
                        break;
                case CLONE_NEWCGROUP:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_CGROUP];
                        break;
                case CLONE_NEWPID:
                        ret[i] = pid_ns;
                        break;
                default:
                        ret[i] = t->ns[ZD_CALLER_BPF_NS_USER];
                        break;
                }
}

int zd_caller_read_namespaces(int proc_fd, struct zd_caller_conn *k, struct zd_caller *c, struct zd_caller_first *first,
                              bool from_record) {
        struct root_id theirs;
        uint64_t ns, mntns = 0;
        int r;

        r = read_own();
        if (r < 0)
                return r;
        if (!from_record && k->ns_fd < 0) {
                k->ns_fd = openat(proc_fd, "ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (k->ns_fd < 0)
                        return negative_errno();
        }
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                if (!from_record) {
                        r = ns_inum(k->ns_fd, namespaces[i].name, &first->ns[i]);
                        if (r < 0)
                                return r;
                }
                ns = first->ns[i];
                if (namespaces[i].flag == CLONE_NEWNS)
                        mntns = ns;
                if (ns == 0 || ns == own_ns[i])
                        continue; /* a kernel without this kind of namespace, or ours */
                if (namespaces[i].joinable)
                        c->ns_join |= namespaces[i].flag;
                else if (!c->ns_other)
                        c->ns_other = namespaces[i].name;
        }

        /* The caller's root: a chroot of its own, or the root of its mount namespace. */
        r = read_root_id(proc_fd, &theirs);
        if (r < 0)
                return r;
        if ((c->ns_join & CLONE_NEWNS) || !same_file(&own_root, &theirs.st)) {
                c->root_fd = openat(proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (c->root_fd < 0)
                        return negative_errno();
                return read_procfs_elsewhere(proc_fd, &k->mounts, mntns, &theirs, c);
        }
        return 0;
}
