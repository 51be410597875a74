/* SPDX-License-Identifier: MIT */
/*
 * What the runtime sets on a container's process from outside, before it runs anything of its
 * own (create's init and exec's process alike): process.scheduler (sched_setattr) and
 * process.ioPriority (ioprio_set), both inherited across execve; the time namespace with
 * linux.timeOffsets, made by the runtime for its next child, since the kernel takes offsets only
 * before a first process is in it; HOME from the image's /etc/passwd when the environment lacks
 * it, as runc sets it; linux.sysctl, written in the container's namespaces.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "libcontainer.h"
#include "util.h"

#define IOPRIO_WHO_PROCESS 1

struct sched_attr_v1 {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
};

int zct_process_attrs_apply(const struct zct_ctx *c, const struct zct_oci *o, pid_t pid) {
        if (o->has_sched) {
                struct sched_attr_v1 a = {
                        .size = sizeof(a),
                        .sched_policy = o->sched.policy,
                        .sched_flags = o->sched.flags,
                        .sched_nice = o->sched.nice,
                        .sched_priority = o->sched.priority,
                        .sched_runtime = o->sched.runtime,
                        .sched_deadline = o->sched.deadline,
                        .sched_period = o->sched.period,
                };
                if (syscall(SYS_sched_setattr, pid, &a, 0U) < 0)
                        return zct_error_errno(c, "process.scheduler: sched_setattr");
        }
        if (o->ioprio >= 0 && syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, pid, o->ioprio) < 0)
                return zct_error_errno(c, "process.ioPriority: ioprio_set");
        return 0;
}

int zct_timens_enter(const struct zct_ctx *c, const struct zct_oci *o, int *ret_restore_fd) {
        _cleanup_close_ int own = -EBADF, offsets = -EBADF;
        size_t len;

        if (!o->new_time_ns) {
                *ret_restore_fd = -EBADF;
                return 0;
        }
        own = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        if (own < 0)
                return zct_error_errno(c, "linux.namespaces \"time\": this kernel has no time namespaces");
        if (unshare(CLONE_NEWTIME) < 0)
                return zct_error_errno(c, "linux.namespaces \"time\": unshare");
        if (o->time_offsets) {
                offsets = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
                len = strlen(o->time_offsets);
                if (offsets < 0 || write(offsets, o->time_offsets, len) != (ssize_t) len) {
                        int r = zct_error_errno(c, "linux.timeOffsets");
                        (void) setns(own, CLONE_NEWTIME);
                        return r;
                }
        }
        *ret_restore_fd = TAKE_FD(own);
        return 0;
}

int zct_timens_leave(const struct zct_ctx *c, int restore_fd) {
        int r = 0;

        if (restore_fd < 0)
                return 0;
        if (setns(restore_fd, CLONE_NEWTIME) < 0)
                r = zct_error_errno(c, "leaving the container's time namespace");
        close(restore_fd);
        return r;
}

/* uid's home in the image's /etc/passwd (resolved inside the rootfs: a symlink there cannot name
 * the host's), "/" without one, as runc's user lookup gives it. */
static char *home_of(const char *rootfs, uid_t uid) {
        struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int root = -EBADF, fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        char *home = NULL;
        size_t n = 0;
        FILE *f;

        root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root >= 0)
                fd = (int) syscall(SYS_openat2, root, "etc/passwd", &how, sizeof(how));
        f = fd >= 0 ? fdopen(fd, "re") : NULL;
        if (f) {
                fd = -EBADF; /* the stream's now */
                while (!home && getline(&line, &n, f) > 0) {
                        char *field[7] = { 0 }, *p = line, *end;
                        int k = 0;
                        unsigned long u;

                        line[strcspn(line, "\n")] = 0;
                        for (; k < 7 && p; k++) {
                                field[k] = p;
                                p = strchr(p, ':');
                                if (p)
                                        *p++ = 0;
                        }
                        if (k < 6 || !field[2][0])
                                continue;
                        u = strtoul(field[2], &end, 10);
                        if (*end == 0 && u == (unsigned long) uid)
                                home = strdup(field[5][0] ? field[5] : "/");
                }
                fclose(f);
        }
        return home ? home : strdup("/");
}

/* A variable set twice is set once, as runc's setenv of each in turn leaves it: the last value,
 * at the place of the first. */
static size_t env_set_once(char **envp) {
        size_t n = 0;

        for (size_t i = 0; envp[i]; i++) {
                size_t key = strcspn(envp[i], "="), j;

                for (j = 0; j < n; j++)
                        if (strcspn(envp[j], "=") == key && strncmp(envp[j], envp[i], key) == 0)
                                break;
                envp[j] = envp[i];
                if (j == n)
                        n++;
        }
        envp[n] = NULL;
        return n;
}

int zct_env_put(struct zct_oci *o, char ***envp, char *entry) {
        size_t len = strcspn(entry, "=") + 1, n = 0;
        char **grown, **owned;

        owned = reallocarray(o->owned, o->n_owned + 1, sizeof(char *));
        if (!owned) {
                free(entry);
                return -ENOMEM;
        }
        o->owned = owned;
        o->owned[o->n_owned++] = entry;
        for (; (*envp)[n]; n++)
                if (strncmp((*envp)[n], entry, len) == 0) {
                        (*envp)[n] = entry;
                        return 0;
                }
        grown = reallocarray(*envp, n + 2, sizeof(char *));
        if (!grown)
                return -ENOMEM;
        grown[n] = entry;
        grown[n + 1] = NULL;
        *envp = grown;
        return 0;
}

int zct_oci_add_home(struct zct_oci *o, char ***envp) {
        _cleanup_free_ char *home = NULL;
        char *entry;
        size_t n = env_set_once(*envp);

        for (size_t i = 0; i < n; i++) {
                if (strncmp((*envp)[i], "PATH=", 5) == 0)
                        o->search_path = (*envp)[i] + 5;
                /* an empty HOME is replaced where it stands (the one HOME left), as runc does */
                if (strncmp((*envp)[i], "HOME=", 5) == 0 && (*envp)[i][5])
                        return 0;
        }
        home = home_of(o->rootfs, o->uid);
        if (!home || asprintf(&entry, "HOME=%s", home) < 0)
                return -ENOMEM;
        return zct_env_put(o, envp, entry);
}

/* The namespace a sysctl belongs to (as runc decides it), or 0 for one that is not namespaced,
 * which a container may not set: it would change the host. */
static int sysctl_namespace(const char *key) {
        static const char *const ipc[] = {
                "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"
        };

        if (strncmp(key, "net.", strlen("net.")) == 0)
                return CLONE_NEWNET;
        if (strncmp(key, "fs.mqueue.", strlen("fs.mqueue.")) == 0)
                return CLONE_NEWIPC;
        for (size_t i = 0; i < ELEMENTSOF(ipc); i++)
                if (streq(key, ipc[i]))
                        return CLONE_NEWIPC;
        if (streq(key, "kernel.hostname") || streq(key, "kernel.domainname"))
                return CLONE_NEWUTS;
        return 0;
}

/* Writes one sysctl from a short-lived child of ours that joined the container's namespace
 * NS_FD: /proc/sys answers for the namespaces of the process that opens it, so a procfs of our
 * own serves (procfs.c: no mount over /proc/sys redirects the write) and nothing of the container
 * (mounts, filter) is touched. Returns 0 or -errno. */
static int write_sysctl_in(int ns_fd, int nstype, const char *key, const char *value) {
        _cleanup_close_ int proc = -EBADF;
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "sys/%s", key), status;
        pid_t pid;

        if (n < 0 || (size_t) n >= sizeof(path))
                return -ENAMETOOLONG;
        for (char *p = path + strlen("sys/"); *p; p++)
                if (*p == '.')
                        *p = '/';
        proc = zct_procfs_open();
        if (proc < 0)
                return proc;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (setns(ns_fd, nstype) < 0)
                        _exit(errno);
                _exit(-zct_procfs_write(proc, path, value));
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status))
                return -EINTR;
        return -WEXITSTATUS(status);
}

/* linux.sysctl, each in the container's own namespace of its kind (created by the clone or
 * joined by path); a sysctl of a namespace the container shares with the host is refused. */
int zct_sysctls_apply(const struct zct_ctx *c, const struct zct_oci *o, pid_t pid) {
        static const struct {
                int flag;
                const char *name;
        } kinds[] = { { CLONE_NEWNET, "net" }, { CLONE_NEWIPC, "ipc" }, { CLONE_NEWUTS, "uts" } };

        if (!o->sysctl)
                return 0;
        json_object_object_foreach(o->sysctl, key, val) {
                _cleanup_close_ int fd = -EBADF;
                const char *kind = NULL, *path = NULL;
                char proc[64];
                int ns = sysctl_namespace(key), r;

                for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                        if (kinds[i].flag == ns)
                                kind = kinds[i].name;
                if (!kind)
                        return zct_error(c, "sysctl %s: not namespaced, a container may not set it: %s", key,
                                         zct_errstr(EPERM)),
                               -EPERM;
                for (size_t i = 0; i < o->n_ns_paths; i++)
                        if (o->ns_paths[i].flag == ns)
                                path = o->ns_paths[i].path;
                if (!path && (o->clone_flags & ns)) {
                        (void) snprintf(proc, sizeof(proc), "/proc/%d/ns/%s", (int) pid, kind);
                        path = proc;
                }
                if (!path)
                        return zct_error(c, "sysctl %s: the container shares the host's %s namespace: %s", key, kind,
                                         zct_errstr(EPERM)),
                               -EPERM;
                fd = open(path, O_RDONLY | O_CLOEXEC);
                r = fd < 0 ? -errno : write_sysctl_in(fd, ns, key, json_object_get_string(val));
                if (r < 0)
                        return zct_error(c, "sysctl %s: %s", key, zct_errstr(-r)), r;
        }
        return 0;
}
