/* SPDX-License-Identifier: MIT */
/*
 * The process that connected, found and kept by its connection (caller.c's facet;
 * caller-proc.h): its pidfd from SO_PEERPIDFD (or pidfd_open() on SO_PEERCRED's pid, whose real
 * uid must then be the connection's), its /proc/PID, and the files of it that every call reads
 * again from offset 0, where procfs makes their text afresh. Kept from one call to the next in
 * struct zd_caller_conn, or for one call only (ZYGOTE_DISABLE_FEATURES=caller_cache).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caller-proc.h"
#include "pidfd-util.h"
#include "util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* PIDFD_GET_INFO (Linux 6.13): the pid of a pidfd in one ioctl; its first version's layout. */
struct zd_pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        uint32_t spare0[1];
};
#define ZD_PIDFD_GET_INFO _IOWR(0xFF, 11, struct zd_pidfd_info)
#define ZD_PIDFD_INFO_PID (1ULL << 0)

#define PROC_FILE_MAX (1024 * 1024) /* /proc/PID/status with 65536 groups is under 500 KiB */

int zd_caller_read_kept(int *fd, int dir_fd, const char *name, char **ret) {
        size_t size = 4096, len = 0;
        char *buf = NULL;

        if (*fd < 0) {
                *fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (*fd < 0)
                        return negative_errno();
        }
        for (;;) {
                char *nb;
                ssize_t n;

                if (len + 1 >= size) {
                        if (size >= PROC_FILE_MAX) {
                                free(buf);
                                return -EFBIG;
                        }
                        size *= 2;
                }
                nb = realloc(buf, size);
                if (!nb) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = nb;
                /* from the start each time: a /proc file makes its text afresh at offset 0 */
                n = pread(*fd, buf + len, size - len - 1, (off_t) len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = negative_errno();
                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        *ret = buf;
        return 0;
}

int zd_caller_pread(int *fd, int dir_fd, const char *name, char *buf, size_t size, char **ret_long) {
        ssize_t n;

        if (*fd < 0) {
                *fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (*fd < 0)
                        return negative_errno();
        }
        do
                n = pread(*fd, buf, size - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if ((size_t) n < size - 1) {
                buf[n] = 0;
                return 0;
        }
        return zd_caller_read_kept(fd, dir_fd, name, ret_long);
}

int zd_caller_read_proc(int dir_fd, const char *name, char **ret) {
        _cleanup_close_ int fd = -EBADF;

        return zd_caller_read_kept(&fd, dir_fd, name, ret);
}

/* The fds of other threads that all connections keep open together, at most: a caller may open
 * as many connections as its limits allow, each with ZD_CALLER_MAX_THREADS threads; past this, or
 * past a quarter of zygoted's RLIMIT_NOFILE (the fds it serves everyone with), a connection's
 * threads are read as without ZD_CALLER_KEEP_THREADS (listed and opened at each call), which is
 * slower, never less complete. */
#define KEPT_THREAD_FDS_MAX 4096
#define THREAD_FDS 3 /* struct zd_caller_thread's */
static size_t kept_threads;

void zd_caller_thread_close(struct zd_caller_thread *t) {
        t->dir_fd = safe_close(t->dir_fd);
        t->status_fd = safe_close(t->status_fd);
        t->cgroup_fd = safe_close(t->cgroup_fd);
}

void zd_caller_threads_keep(struct zd_caller_conn *k, struct zd_caller_thread *t) {
        struct rlimit rl;

        if (k->threads.n >= ELEMENTSOF(k->threads.t) || (kept_threads + 1) * THREAD_FDS > KEPT_THREAD_FDS_MAX ||
            getrlimit(RLIMIT_NOFILE, &rl) < 0 || (kept_threads + 1) * THREAD_FDS > rl.rlim_cur / 4)
                return;
        k->threads.t[k->threads.n++] = *t;
        *t = (struct zd_caller_thread) ZD_CALLER_THREAD_INIT;
        kept_threads++;
}

void zd_caller_threads_clear(struct zd_caller_conn *k) {
        for (size_t i = 0; i < k->threads.n; i++)
                zd_caller_thread_close(&k->threads.t[i]);
        kept_threads -= k->threads.n;
        k->threads.n = 0;
}

void zd_caller_conn_clear(struct zd_caller_conn *k) {
        zd_caller_threads_clear(k);
        safe_close(k->pidfd);
        safe_close(k->proc_fd);
        safe_close(k->ns_fd);
        safe_close(k->status_fd);
        safe_close(k->limits_fd);
        safe_close(k->oom_fd);
        safe_close(k->cgroup_fd);
        safe_close(k->mounts.fd);
        safe_close(k->bpf_link_fd);
        bool keep_threads = k->keep_threads, proc_only = k->proc_only;
        *k = (struct zd_caller_conn) ZD_CALLER_CONN_INIT;
        k->keep_threads = keep_threads;
        k->proc_only = proc_only;
}

int zd_caller_conn_new(struct zd_caller_conn **ret) {
        struct zd_caller_conn *k = malloc(sizeof(*k));

        if (!k)
                return -ENOMEM;
        *k = (struct zd_caller_conn) ZD_CALLER_CONN_INIT;
        *ret = k;
        return 0;
}

struct zd_caller_conn *zd_caller_conn_get(struct zd_caller_conn **slot, unsigned keep) {
        if (!(keep & ZD_CALLER_KEEP))
                return NULL;
        if (!*slot && zd_caller_conn_new(slot) >= 0) {
                (*slot)->keep_threads = keep & ZD_CALLER_KEEP_THREADS;
                (*slot)->proc_only = keep & ZD_CALLER_READ_PROC;
        }
        return *slot;
}

struct zd_caller_conn *zd_caller_conn_free(struct zd_caller_conn *k) {
        if (k) {
                zd_caller_conn_clear(k);
                free(k);
        }
        return NULL;
}

/* The value of "Key:\t..." in a /proc status-like text, or NULL. */
static const char *field(const char *text, const char *key) {
        size_t k = strlen(key);

        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (strncmp(l, key, k) == 0 && l[k] == ':')
                        return l + k + 1 + strspn(l + k + 1, " \t");
        return NULL;
}

/* The process that connected, named by SO_PEERPIDFD: its pidfd and pid number. -ENOPROTOOPT
 * when the kernel cannot tell. */
static int peer_pidfd(int conn_fd, int *ret_pidfd, pid_t *ret_pid) {
        _cleanup_free_ char *info = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        socklen_t l = sizeof(int);
        char name[64];
        const char *v;
        int r;

        if (getsockopt(conn_fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) < 0) {
                if (errno == ENOPROTOOPT || errno == EINVAL || errno == ENODATA)
                        return -ENOPROTOOPT;
                return negative_errno();
        }
        struct zd_pidfd_info pi = { .mask = ZD_PIDFD_INFO_PID };
        if (ioctl(pidfd, ZD_PIDFD_GET_INFO, &pi) == 0 && pi.pid > 0) {
                *ret_pid = (pid_t) pi.pid;
                *ret_pidfd = TAKE_FD(pidfd);
                return 0;
        }
        if (errno == ESRCH)
                return -ESRCH;
        /* Before Linux 6.13: the pid as fdinfo shows it. */
        snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", pidfd);
        r = zd_caller_read_proc(AT_FDCWD, name, &info);
        if (r < 0)
                return r;
        /* "Pid:" is -1 once the process has exited, 0 outside our pid namespace. */
        v = field(info, "Pid");
        if (!v || atoi(v) <= 0)
                return -ESRCH;
        *ret_pid = (pid_t) atoi(v);
        *ret_pidfd = TAKE_FD(pidfd);
        return 0;
}

/* The process that connected: its pidfd and pid number. conn_fd < 0 takes the path of a kernel
 * without SO_PEERPIDFD (tests). */
static int open_peer(int conn_fd, const struct ucred *cr, int *ret_pidfd, pid_t *ret_pid, bool *ret_check_uid) {
        int pidfd, r;

        r = conn_fd >= 0 ? peer_pidfd(conn_fd, ret_pidfd, ret_pid) : -ENOPROTOOPT;
        if (r != -ENOPROTOOPT) {
                *ret_check_uid = false;
                return r;
        }
        /* No SO_PEERPIDFD: the pid of SO_PEERCRED may have been reused since connect(); the
         * caller checks that the process it names runs as the connection's uid. */
        if (cr->pid <= 0)
                return -ESRCH;
        pidfd = pidfd_open_pid(cr->pid);
        if (pidfd < 0)
                return pidfd;
        *ret_pidfd = pidfd;
        *ret_pid = cr->pid;
        *ret_check_uid = true;
        return 0;
}

int zd_caller_find(int conn_fd, const struct ucred *cr, struct zd_caller_conn *k) {
        char path[32];
        int r;

        if (k->proc_fd >= 0)
                return 0;
        if (k->pidfd < 0) {
                r = open_peer(conn_fd, cr, &k->pidfd, &k->pid, &k->check_uid);
                if (r < 0)
                        return r;
        }
        snprintf(path, sizeof(path), "/proc/%d", (int) k->pid);
        k->proc_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (k->proc_fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        /* Opened by number: alive now, the process kept its number throughout, and the
         * directory is its own. */
        if (pidfd_kill(k->pidfd, 0) == -ESRCH) {
                k->proc_fd = safe_close(k->proc_fd);
                return -ESRCH;
        }
        return 0;
}
