/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's containers: logging, create/run and exec, the parent's side of the sandbox
 * (engine/sandbox.c is the child's).
 *
 * `create` forks the container's first process itself, so that it stays in the caller's process
 * tree (conmon and the shim are child subreapers and learn its exit by reaping it): the init sets
 * up its sandbox (engine/sandbox.c), checks that its command can be executed, reports "ready" and
 * then blocks on ROOT/ID/exec.fifo until `start` writes a byte there; `create` writes the pid file
 * and exits, and the init is reparented to the caller's subreaper.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-devices.h"
#include "pidfd-util.h"
#include "profile.h"
#include "runtime.h"
#include "util.h"

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                bool end = *s == '\0';
                if (*s != '/' && !end)
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (end)
                        return 0;
                *s = '/';
        }
}

static int write_proc(pid_t pid, const char *file, const char *text) {
        char dir[32];

        snprintf(dir, sizeof(dir), "/proc/%d", (int) pid);
        return zrc_write_at(dir, file, text);
}

static void now_rfc3339(char *buf, size_t len) {
        struct timespec now;
        struct tm tm;
        char ts[64];

        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, len, "%s.%09ldZ", ts, now.tv_nsec);
}

/* The namespace a sysctl belongs to (as runc decides it), or 0 for one that is not namespaced,
 * which a container may not set: it would change the host. */
static int sysctl_namespace(const char *key) {
        static const char *const ipc[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                                           "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
                                           "kernel.shm_rmid_forced" };

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
 * NS_FD: /proc/sys answers for the namespaces of the process that opens it, so the host's /proc
 * serves and nothing of the container (mounts, filter) is touched. Returns 0 or -errno. */
static int write_sysctl_in(int ns_fd, int nstype, const char *key, const char *value) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "/proc/sys/%s", key), status;
        pid_t pid;

        if (n < 0 || (size_t) n >= sizeof(path))
                return -ENAMETOOLONG;
        for (char *p = path + strlen("/proc/sys/"); *p; p++)
                if (*p == '.')
                        *p = '/';
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                size_t len = strlen(value);
                int fd;

                if (setns(ns_fd, nstype) < 0)
                        _exit(errno);
                fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        _exit(errno);
                if (write(fd, value, len) != (ssize_t) len)
                        _exit(errno ? errno : EIO);
                _exit(close(fd) < 0 ? errno : 0);
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
static int apply_sysctls(const struct zrc_ctx *c, const struct zrc_oci *o, pid_t pid) {
        static const struct { int flag; const char *name; } kinds[] = {
                { CLONE_NEWNET, "net" }, { CLONE_NEWIPC, "ipc" }, { CLONE_NEWUTS, "uts" } };

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
                        return zrc_error(c, "sysctl %s: not namespaced, a container may not set it: %s", key,
                                     zrc_errstr(EPERM)), -EPERM;
                for (size_t i = 0; i < o->n_ns_paths; i++)
                        if (o->ns_paths[i].flag == ns)
                                path = o->ns_paths[i].path;
                if (!path && (o->clone_flags & ns)) {
                        (void) snprintf(proc, sizeof(proc), "/proc/%d/ns/%s", (int) pid, kind);
                        path = proc;
                }
                if (!path)
                        return zrc_error(c, "sysctl %s: the container shares the host's %s namespace: %s", key, kind,
                                     zrc_errstr(EPERM)), -EPERM;
                fd = open(path, O_RDONLY | O_CLOEXEC);
                r = fd < 0 ? -errno : write_sysctl_in(fd, ns, key, json_object_get_string(val));
                if (r < 0)
                        return zrc_error(c, "sysctl %s: %s", key, zrc_errstr(-r)), r;
        }
        return 0;
}

static json_object *get_devices(const struct zrc_oci *o) {
        json_object *l = NULL, *res = NULL, *d = NULL;

        if (!json_object_object_get_ex(o->root, "linux", &l) || !json_object_object_get_ex(l, "resources", &res) ||
            !json_object_object_get_ex(res, "devices", &d))
                return NULL;
        return d;
}

/* Whether fd is a namespace of the kind flag (CLONE_NEW*): 0, -EINVAL with *ret_type the kind it
 * is, -ENOTTY for a file that is no namespace, or another -errno. */
static int check_ns_type(int fd, int flag, int *ret_type) {
        int type = ioctl(fd, NS_GET_NSTYPE);

        if (type < 0)
                return -errno;
        *ret_type = type;
        return type == flag ? 0 : -EINVAL;
}

int zrc_container_create(const struct zrc_ctx *c, const struct zrc_create_args *a) {
        _cleanup_free_ char *dir = NULL, *fifo = NULL, *err = NULL, *path_buf = NULL, *dev_err = NULL;
        _cleanup_free_ struct zrc_dev_rule *dev_rules = NULL;
        size_t n_dev_rules = 0;
        _cleanup_close_ int start_fd = -EBADF, console_fd = -EBADF, pidfd = -EBADF, cg_fd = -EBADF;
        _cleanup_close_pair_ int sync[2] = { -EBADF, -EBADF };
        struct zrc_oci *o = NULL;
        struct zrc_state st = {};
        struct ze_sandbox sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1 };
        struct ze_status status;
        struct clone_args ca = {};
        char created[96];
        bool made_dir = false, ready = false, born_in_cgroup = false;
        pid_t pid;
        int r, ret = 1;

        r = zrc_state_dir(c->root, a->p.id, &dir);
        if (r < 0)
                return zrc_error(c, "invalid container id \"%s\"", a->p.id);
        r = mkdir_p(c->root, 0700);
        if (r < 0)
                return zrc_error(c, "state root %s: %s", c->root, zrc_errstr(-r));
        if (mkdir(dir, 0711) < 0)
                return zrc_error(c, errno == EEXIST ? "container with id exists: %s" : "state dir %s: %s", a->p.id,
                             zrc_errstr(errno));
        made_dir = true;
        st.dir = strdup(dir);
        st.id = strdup(a->p.id);

        r = zrc_oci_load(a->bundle, NULL, zrc_cgroup_is_v2_only(), &o, &err);
        if (r < 0) {
                zrc_error(c, "%s", err ? err : zrc_errstr(-r));
                goto out;
        }
        if (o->terminal && !a->p.console_socket) {
                zrc_error(c, "cannot allocate tty if zygote-runc will detach without setting console socket");
                goto out;
        }
        if (!o->terminal && a->p.console_socket) {
                zrc_error(c, "cannot use console socket if zygote-runc will not detach or allocate tty");
                goto out;
        }
        if (json_object_object_get_ex(o->root, "hooks", NULL))
                zrc_debug(c, "hooks are not supported and were ignored");

        r = zrc_cgroup_create(o->cgroups_path, a->p.id, o->pids_limit, o->memory_limit, &st.cgroup, &err);
        if (r < 0 && getuid() != 0 && (r == -EACCES || r == -EPERM || r == -EROFS) && o->pids_limit < 0 &&
            o->memory_limit < 0) {
                /* rootless without a delegated cgroup: no cgroup of its own (no limits asked) */
                zrc_debug(c, "no cgroup for the container: %s", err ? err : zrc_errstr(-r));
                r = 0;
        }
        if (r < 0) {
                zrc_error(c, "%s", err ? err : zrc_errstr(-r));
                goto out;
        }
        /* the device rules, before any process is in the cgroup: the init is born into (or
         * joined to) a cgroup that already refuses the host's devices */
        r = zrc_dev_rules_from_json(get_devices(o), &dev_rules, &n_dev_rules, &dev_err);
        if (r >= 0)
                r = zrc_cgroup_set_devices(&st.cgroup, dev_rules, n_dev_rules, &dev_err);
        if (r < 0 && getuid() != 0 && (r == -EPERM || r == -EACCES || r == -EOPNOTSUPP)) {
                /* rootless: no cgroup, or no bpf(2) and no v1 controller of our own; the user
                 * namespace refuses mknod of a device and the host's nodes keep their own
                 * permissions */
                zrc_debug(c, "no device cgroup for the container: %s", dev_err ? dev_err : zrc_errstr(-r));
                r = 0;
        }
        if (r < 0) {
                zrc_error(c, "%s", dev_err ? dev_err : zrc_errstr(-r));
                goto out;
        }
        if (!st.cgroup.v2_only) {
                struct zrc_cgroup_view *views = NULL;
                size_t n_views = 0;

                r = zrc_cgroup_views(&st.cgroup, &views, &n_views);
                if (r >= 0)
                        r = zrc_oci_cgroup_view(o, views, n_views);
                zrc_cgroup_views_free(views, n_views);
                if (r < 0) {
                        zrc_error(c, "the container's view of its cgroups: %s", zrc_errstr(-r));
                        goto out;
                }
        }

        if (!a->run) {
                if (asprintf(&fifo, "%s/exec.fifo", dir) < 0 || mkfifo(fifo, 0600) < 0) {
                        zrc_error(c, "exec fifo: %s", zrc_errstr(errno));
                        goto out;
                }
                /* O_RDWR: the init is then its own writer and blocks reading until `start`
                 * writes; `start` finds a reader (no ENXIO) exactly while the init waits */
                start_fd = open(fifo, O_RDWR | O_CLOEXEC);
                if (start_fd < 0) {
                        zrc_error(c, "exec fifo: %s", zrc_errstr(errno));
                        goto out;
                }
        }
        if (zrc_runc_sandbox_prepare(c, o, a->p.console_socket, a->p.preserve_fds, &sb, &path_buf, &console_fd) < 0)
                goto out;
        sb.start_fd = start_fd;
        /* run: the init waits for a byte on the sync socket once ready, sent when the state is
         * saved, so that nothing of the container runs (and no one asks for its state) before */
        sb.start_on_sync = a->run;
        for (size_t i = 0; i < o->n_ns_paths; i++) {
                int fd = open(o->ns_paths[i].path, O_RDONLY | O_CLOEXEC), type = 0;

                if (fd < 0) {
                        zrc_error(c, "namespace %s: %s", o->ns_paths[i].path, zrc_errstr(errno));
                        goto out;
                }
                /* Said here, in words, before anything is made; the child's setns() is given the
                 * type too, so that the kernel refuses a mismatch whatever happens in between. */
                r = check_ns_type(fd, o->ns_paths[i].flag, &type);
                if (r < 0) {
                        if (r == -ENOTTY)
                                zrc_error(c, "%s namespace path %s: not a namespace file", zrc_oci_ns_name(o->ns_paths[i].flag),
                                      o->ns_paths[i].path);
                        else if (r == -EINVAL)
                                zrc_error(c, "%s namespace path %s: is a %s namespace, not a %s one",
                                      zrc_oci_ns_name(o->ns_paths[i].flag), o->ns_paths[i].path, zrc_oci_ns_name(type),
                                      zrc_oci_ns_name(o->ns_paths[i].flag));
                        else
                                zrc_error(c, "%s namespace path %s: %s", zrc_oci_ns_name(o->ns_paths[i].flag),
                                      o->ns_paths[i].path, zrc_errstr(-r));
                        close(fd);
                        goto out;
                }
                if (o->ns_paths[i].flag == CLONE_NEWPID) {
                        /* a pid namespace applies to children: joined here, before the clone */
                        r = setns(fd, CLONE_NEWPID);
                        close(fd);
                        if (r < 0) {
                                zrc_error(c, "joining pid namespace %s: %s", o->ns_paths[i].path, zrc_errstr(errno));
                                goto out;
                        }
                        continue;
                }
                sb.ns_types[sb.n_ns_fds] = o->ns_paths[i].flag;
                sb.ns_fds[sb.n_ns_fds++] = fd; /* closed at exit (CLOEXEC for the container) */
        }

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0) {
                zrc_error(c, "socketpair: %s", zrc_errstr(errno));
                goto out;
        }
        ca.flags = (uint64_t) o->clone_flags | CLONE_PIDFD;
        ca.pidfd = (uint64_t) (uintptr_t) &pidfd;
        ca.exit_signal = SIGCHLD;
        cg_fd = zrc_cgroup_open_v2(&st.cgroup);
        if (cg_fd >= 0) {
                /* born in its cgroup: it never runs a cycle outside its limits */
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t) cg_fd;
        }
        if (cg_fd < 0 && (ca.flags & CLONE_NEWCGROUP)) {
                /* v1/hybrid: a cgroup namespace is rooted where its creator is when it is made,
                 * and the init could only be moved in after the clone (its cgroups would then
                 * read "/../ID"). So the runtime steps into the container's cgroups for the
                 * clone, the init is born there, and the runtime steps back. */
                r = zrc_cgroup_join(&st.cgroup, getpid());
                if (r < 0) {
                        zrc_error(c, "joining the container's cgroups: %s", zrc_errstr(-r));
                        (void) zrc_cgroup_return(&st.cgroup);
                        goto out;
                }
                born_in_cgroup = true;
        }
        /* Unprivileged, the runtime can write the maps (and open the namespaces for sysctls) of
         * a dumpable child only: the init is born dumpable then and turns non-dumpable at "go",
         * while it is still alone in its namespaces. */
        sb.dumpable_until_go = o->uid_map && getuid() != 0;
        if (sb.dumpable_until_go && prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL) < 0) {
                zrc_error(c, "prctl(PR_SET_DUMPABLE): %s", zrc_errstr(errno));
                goto out;
        }
        pid = zrc_runc_clone_sandbox(&ca, &sb, sync[1], sync[0]);
        if (pid < 0)
                zrc_error(c, "clone3: %s", zrc_errstr(-pid));
        if (born_in_cgroup) {
                r = zrc_cgroup_return(&st.cgroup);
                if (r < 0) {
                        /* the runtime would stay counted in the container's cgroups */
                        zrc_error(c, "leaving the container's cgroups: %s", zrc_errstr(-r));
                        if (pid > 0)
                                goto fail_child_early;
                }
        }
        if (sb.dumpable_until_go && prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0) {
                zrc_error(c, "prctl(PR_SET_DUMPABLE): %s", zrc_errstr(errno));
                if (pid > 0)
                        goto fail_child_early;
        }
        if (pid < 0)
                goto out;
        sync[1] = safe_close(sync[1]);
        st.pid = pid;

        /* the parent's part: id maps, cgroups (v1/hybrid), then "go" */
        if (o->uid_map) {
                if (getuid() != 0)
                        (void) write_proc(pid, "setgroups", "deny");
                r = write_proc(pid, "uid_map", o->uid_map);
                if (r >= 0)
                        r = write_proc(pid, "gid_map", o->gid_map ? o->gid_map : "");
                if (r < 0) {
                        zrc_error(c, "writing the user namespace's id mappings: %s", zrc_errstr(-r));
                        goto fail_child;
                }
        }
        if (cg_fd < 0 && !born_in_cgroup) {
                r = zrc_cgroup_join(&st.cgroup, pid);
                if (r < 0) {
                        zrc_error(c, "joining the container's cgroups: %s", zrc_errstr(-r));
                        goto fail_child;
                }
        }
        if (o->oom_score_adj != INT_MIN) {
                char v[16];

                snprintf(v, sizeof(v), "%d", o->oom_score_adj);
                r = write_proc(pid, "oom_score_adj", v); /* inherited by what the init execs */
                if (r < 0) {
                        zrc_error(c, "oom_score_adj: %s", zrc_errstr(-r));
                        goto fail_child;
                }
        }
        if (apply_sysctls(c, o, pid) < 0)
                goto fail_child;
        if (write(sync[0], "g", 1) != 1) {
                zrc_error(c, "container init: %s", zrc_errstr(errno));
                goto fail_child;
        }
        r = zrc_runc_read_status(sync[0], &status);
        if (r <= 0 || status.step != ZE_STEP_HELD) {
                if (r > 0)
                        zrc_runc_report_failure(c, o, &status);
                else
                        zrc_error(c, "container init exited during setup");
                goto fail_child;
        }
        ready = true;
        r = zrc_proc_starttime(pid, &st.starttime, NULL);
        now_rfc3339(created, sizeof(created));
        st.created = strdup(created);
        st.bundle = strdup(o->bundle);
        st.rootfs = strdup(o->rootfs);
        st.owner = getuid();
        if (json_object_object_get_ex(o->root, "annotations", &st.annotations))
                json_object_get(st.annotations);
        r = zrc_state_save(&st);
        if (r >= 0)
                r = zrc_runc_write_pid_file(a->p.pid_file, pid);
        if (r < 0) {
                zrc_error(c, "saving state: %s", zrc_errstr(-r));
                goto fail_child;
        }
        if (o->seccomp)
                zrc_debug(c, "container %s created, init pid %d; seccomp filter of %zu instructions %s", a->p.id,
                      (int) pid, o->seccomp->bpf_len, zrc_runc_filter_source());
        else
                zrc_debug(c, "container %s created, init pid %d, no seccomp filter", a->p.id, (int) pid);

        if (!a->run) {
                ret = 0;
                made_dir = false;
                goto out;
        }

        /* run: the state is saved, so the init may exec; EOF on the sync socket says it did (a
         * failed write: it is gone, and the status read says how) */
        if (write(sync[0], "s", 1) != 1)
                zrc_debug(c, "container init gone before its start: %s", zrc_errstr(errno));
        r = zrc_runc_read_status(sync[0], &status);
        if (r > 0) {
                zrc_runc_report_failure(c, o, &status);
                ret = zrc_runc_wait_exit_status(pidfd);
                zrc_destroy(&st);
                made_dir = false;
                goto out;
        }
        made_dir = false;
        if (a->p.detach) {
                ret = 0;
                goto out;
        }
        zrc_runc_forward_signals(pid);
        ret = zrc_runc_wait_exit_status(pidfd);
        zrc_destroy(&st);
        goto out;

fail_child_early:
        sync[1] = safe_close(sync[1]);
        st.pid = pid;
fail_child:
        /* closing sync makes an init still waiting for "go" exit; then it is reaped here, so
         * that a failed create leaves no process, no cgroup and no state behind */
        sync[0] = safe_close(sync[0]);
        /* before "ready" it exits by itself (it reported, or reads EOF on sync); after it, it
         * would wait on the fifo: only then is it killed, so that run keeps its 126/127 */
        if (ready)
                (void) pidfd_kill(pidfd, SIGKILL);
        r = zrc_runc_wait_exit_status(pidfd);
        /* run exits with the init's own code (126/127 for a command that cannot run) */
        ret = a->run && r >= ZE_EXIT_ABANDONED && r <= ZE_EXIT_NOT_FOUND ? r : 1;
out:
        if (made_dir) {
                (void) zrc_cgroup_remove(&st.cgroup);
                (void) zrc_rm_rf(dir);
        }
        for (size_t i = 0; i < sb.n_ns_fds; i++)
                safe_close(sb.ns_fds[i]);
        zrc_state_done(&st);
        zrc_oci_free(o);
        return ret;
}


