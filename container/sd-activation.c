/* SPDX-License-Identifier: MIT */
/*
 * systemd's two protocols through the runtime, as runc and crun carry them: socket activation
 * (LISTEN_FDS: the caller's fds from 3 passed on, the process told it is their listener) and
 * readiness (NOTIFY_SOCKET: a socket of the runtime's bound into the container, and READY=1
 * relayed to the caller's socket).
 *
 * The notify socket is ROOT/ID/notify/notify; the directory is bound read-only into the
 * container at the path the caller's NOTIFY_SOCKET names (crun's layout; /run/notify for an
 * abstract one), and the container's NOTIFY_SOCKET names the socket in it. The runtime makes the
 * mount itself (open_tree's detached copy), so that the init need not reach ROOT/ID, which the
 * ids of a user namespace may not. What the container sends is its own: only READY=1 goes on,
 * then MAINPID with the init's pid as the host sees it (runc's order). A STATUS=, MAINPID= or
 * FDSTORE= of the container's would speak for the caller's service.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"

#define NOTIFY_DIR "notify"
#define NOTIFY_NAME "notify"

static int env_putf(struct zct_oci *o, const char *name, const char *value) {
        char *entry;

        if (asprintf(&entry, "%s=%s", name, value) < 0)
                return -ENOMEM;
        return zct_env_put(o, &o->envp, entry);
}

int zct_listen_fds_env(struct zct_oci *o, int listen_fds) {
        char n[16];
        int r;

        if (listen_fds <= 0)
                return 0;
        snprintf(n, sizeof(n), "%d", listen_fds);
        r = env_putf(o, "LISTEN_FDS", n);
        return r < 0 ? r : env_putf(o, "LISTEN_PID", "1");
}

static int sockaddr_of(const char *path, struct sockaddr_un *ret, socklen_t *ret_len) {
        size_t n = strlen(path);

        *ret = (struct sockaddr_un){ .sun_family = AF_UNIX };
        if (n == 0 || n >= sizeof(ret->sun_path))
                return -EINVAL;
        memcpy(ret->sun_path, path, n);
        if (path[0] == '@')
                ret->sun_path[0] = '\0'; /* abstract, as sd_notify(3) reads it */
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
        return 0;
}

/* A datagram socket bound at DIR/notify/notify (a stale one removed), writable by anyone who
 * reaches it: the container's processes run as any id, and only the container sees the
 * directory (the state directory is the runtime's caller's alone). */
static int bind_notify(const char *dir, int *ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        if (asprintf(&path, "%s/" NOTIFY_DIR "/" NOTIFY_NAME, dir) < 0)
                return -ENOMEM;
        r = sockaddr_of(path, &sa, &len);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if ((unlink(path) < 0 && errno != ENOENT) || bind(fd, (struct sockaddr *) &sa, len) < 0 ||
            chmod(path, 0777) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

/* DIR/notify as a detached read-only mount (nosuid, nodev, noexec), for the init to attach. */
static int notify_tree(const char *dir, int *ret) {
        struct mount_attr a = { .attr_set =
                                        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int tree = -EBADF;

        if (asprintf(&path, "%s/" NOTIFY_DIR, dir) < 0)
                return -ENOMEM;
        tree = (int) syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return -errno;
        if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                return -errno;
        *ret = TAKE_FD(tree);
        return 0;
}

/* The mount of the notify directory at dest in the container (o's last), a premade bind: made
 * after the id-mapped mounts (create's order), whose step takes every premade mount for one of
 * its own. */
static int add_mount(struct zct_oci *o, const char *dest, int tree) {
        struct ze_sb_mount *grown;
        char *d = strdup(dest), *t = strdup(dest), **owned;

        owned = d && t ? reallocarray(o->owned, o->n_owned + 1, sizeof(char *)) : NULL;
        if (!owned) {
                free(d);
                free(t);
                return -ENOMEM;
        }
        o->owned = owned;
        o->owned[o->n_owned++] = d;
        grown = reallocarray(o->mounts, o->n_mounts + 1, sizeof(*grown));
        if (!grown) {
                free(t);
                return -ENOMEM;
        }
        o->mounts = grown;
        o->mounts[o->n_mounts++] = (struct ze_sb_mount){
                .kind = ZE_SB_MOUNT_BIND,
                .premade = true, /* zct_oci_free closes it */
                .source = d,
                .dest = d,
                .target = t, /* zct_oci_free's */
                .source_is_dir = true,
                .tree_fd = tree,
        };
        return 0;
}

int zct_notify_prepare(struct zct_oci *o, const char *dir, const char *host_socket, int *ret_sock) {
        _cleanup_free_ char *path = NULL, *inside = NULL;
        _cleanup_close_ int sock = -EBADF, tree = -EBADF;
        const char *dest = host_socket[0] == '/' ? host_socket : "/run/notify";
        size_t premade = 0;
        int r;

        for (size_t i = 0; i < o->n_mounts; i++)
                premade += o->mounts[i].premade;
        if (premade >= ZE_SB_MAX_PREMADE)
                return -E2BIG; /* the init keeps no more such fds */
        if (asprintf(&path, "%s/" NOTIFY_DIR, dir) < 0 || asprintf(&inside, "%s/" NOTIFY_NAME, dest) < 0)
                return -ENOMEM;
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        r = bind_notify(dir, &sock);
        if (r >= 0)
                r = notify_tree(dir, &tree);
        if (r >= 0)
                r = add_mount(o, dest, tree);
        if (r < 0)
                return r;
        tree = -EBADF; /* o's mount's now */
        r = env_putf(o, "NOTIFY_SOCKET", inside);
        if (r < 0)
                return r;
        *ret_sock = TAKE_FD(sock);
        return 0;
}

int zct_notify_rebind(const char *dir, int *ret_sock) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        if (asprintf(&path, "%s/" NOTIFY_DIR, dir) < 0)
                return -ENOMEM;
        if (lstat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        return bind_notify(dir, ret_sock);
}

static int send_to(const char *host_socket, const char *msg) {
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa;
        socklen_t len;
        int r = sockaddr_of(host_socket, &sa, &len);

        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *) &sa, len) < 0)
                return -errno;
        return 0;
}

/* Whether a datagram has the line READY=1. */
static bool says_ready(const char *buf) {
        for (const char *l = buf;; l++) {
                if (strncmp(l, "READY=1", 7) == 0 && (l[7] == '\n' || l[7] == '\0'))
                        return true;
                l = strchr(l, '\n');
                if (!l)
                        return false;
        }
}

int zct_notify_relay(int sock, const char *host_socket, int pidfd, pid_t pid) {
        char buf[4096], mainpid[32];
        int r;

        for (;;) {
                struct pollfd p[2] = { { .fd = sock, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
                ssize_t n;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[0].revents & POLLIN) {
                        n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                        if (n < 0 && errno != EAGAIN && errno != EINTR)
                                return -errno;
                        if (n >= 0) {
                                buf[n] = '\0';
                                if (says_ready(buf)) {
                                        snprintf(mainpid, sizeof(mainpid), "MAINPID=%d", (int) pid);
                                        r = send_to(host_socket, "READY=1");
                                        if (r >= 0)
                                                r = send_to(host_socket, mainpid);
                                        return r < 0 ? r : 1;
                                }
                        }
                        continue; /* the datagrams before the init's end, first */
                }
                if (p[1].revents)
                        return 0; /* gone without saying it is ready */
        }
}
