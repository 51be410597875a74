/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's containers: logging, create/run and exec, the parent's side of the sandbox
 * (daemon/sandbox.c is the child's).
 *
 * `create` forks the container's first process itself, so that it stays in the caller's process
 * tree (conmon and the shim are child subreapers and learn its exit by reaping it): the init sets
 * up its sandbox (daemon/sandbox.c), checks that its command can be executed, reports "ready" and
 * then blocks on ROOT/ID/exec.fifo until `start` writes a byte there; `create` writes the pid file
 * and exits, and the init is reparented to the caller's subreaper.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "signal-util.h"
#include "profile.h"
#include "runtime.h"
#include "util.h"


/* ---- logging: stderr for podman (it maps the text to 126/127), the log file for containerd (it
 * reports the last {"level":"error"} line) ---- */

static void log_line(const struct ctx *c, const char *level, const char *msg) {
        FILE *f;
        char ts[64];
        struct timespec now;
        struct tm tm;

        if (!c->log_path)
                return;
        f = fopen(c->log_path, "ae");
        if (!f)
                return;
        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        if (c->log_json) {
                json_object *o = json_object_new_object();
                char t[96];

                snprintf(t, sizeof(t), "%s.%09ldZ", ts, now.tv_nsec);
                json_object_object_add(o, "level", json_object_new_string(level));
                json_object_object_add(o, "msg", json_object_new_string(msg));
                json_object_object_add(o, "time", json_object_new_string(t));
                fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
                json_object_put(o);
        } else
                fprintf(f, "time=\"%sZ\" level=%s msg=\"%s\"\n", ts, level, msg);
        fclose(f);
}

int error(const struct ctx *c, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        fprintf(stderr, "zygote-runc: %s\n", msg ? msg : fmt);
        log_line(c, "error", msg ? msg : fmt);
        return 1;
}

void debug(const struct ctx *c, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        if (!c->debug && !c->log_path)
                return;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                return;
        va_end(ap);
        if (c->debug) {
                fprintf(stderr, "zygote-runc: debug: %s\n", msg);
                log_line(c, "debug", msg);
        }
}

/* strerror in Go's lower case, which podman matches ("no such file or directory") */
const char *errstr(int err) {
        static char buf[128];

        snprintf(buf, sizeof(buf), "%s", strerror(err));
        if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
                buf[0] = (char) (buf[0] - 'A' + 'a');
        return buf;
}


/* ---- helpers ---- */

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

static int write_pid_file(const char *path, pid_t pid) {
        _cleanup_free_ char *tmp = NULL;
        FILE *f;

        if (!path)
                return 0;
        if (asprintf(&tmp, "%s.tmp%d", path, (int) getpid()) < 0)
                return -ENOMEM;
        f = fopen(tmp, "we");
        if (!f)
                return -errno;
        fprintf(f, "%d", (int) pid);
        if (fclose(f) != 0 || rename(tmp, path) < 0) {
                int r = negative_errno();
                unlink(tmp);
                return r;
        }
        return 0;
}

static int write_proc(pid_t pid, const char *file, const char *text) {
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        size_t n = strlen(text);

        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, text, n) != (ssize_t) n)
                return negative_errno();
        return 0;
}

static int connect_console(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int parse_signal(const char *s) {
        return s ? zy_signal_from_string(s) : SIGTERM;
}

/* The message of one failure record of the container's process, runc's words where podman and
 * containerd look for them. */
static void report_failure(const struct ctx *c, const struct zy_oci *o, const struct zy_sb_status *s) {
        const char *name = o->argv[0];

        switch (s->step) {
        case ZY_SB_STEP_RESOLVE:
        case ZY_SB_STEP_EXEC:
                if (s->err == ENOENT && s->index == 0)
                        error(c, "unable to start container process: exec: \"%s\": executable file not found in $PATH",
                              name);
                else if (s->err == ENOENT)
                        error(c, "unable to start container process: exec: \"%s\": stat %s: no such file or directory",
                              name, name);
                else
                        error(c, "unable to start container process: exec: \"%s\": %s", name, errstr(s->err));
                return;
        case ZY_SB_STEP_MOUNT:
                if (s->index >= 0 && (size_t) s->index < o->n_mounts) {
                        const struct zy_sb_mount *m = &o->mounts[s->index];
                        error(c, "unable to start container process: mount %s (%s) on %s: %s",
                              m->source ? m->source : "none", m->fstype ? m->fstype : "bind", m->target,
                              errstr(s->err));
                        return;
                }
                break;
        default:
                break;
        }
        error(c, "unable to start container process: %s%s: %s", zy_sb_step_to_string(s->step),
              s->index >= 0 ? " (entry)" : "", errstr(s->err));
}

static int read_status(int fd, struct zy_sb_status *ret) {
        ssize_t n;

        do
                n = recv(fd, ret, sizeof(*ret), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0; /* EOF: execve happened (or the process died without a word) */
        return n == (ssize_t) sizeof(*ret) ? 1 : -EIO;
}

static int wait_exit_status(int pidfd) {
        siginfo_t si = {};

        while (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return 255;
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}

/* Waits for a process that is not necessarily our child to be gone: pidfds poll readable then. */
static void wait_gone(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        (void) poll(&p, 1, 10000);
}

/* SIGKILL to every process of the container and wait until they are gone, so that the cgroups
 * can go (a v1-frozen cgroup is thawed first: SIGKILL does not reach frozen tasks). */
static void kill_all_and_wait(const struct zy_state *st) {
        for (int round = 0; round < 100; round++) {
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;

                if (zy_cgroup_pids(&st->cgroup, &pids, &n) < 0 || n == 0) {
                        int fd = zy_state_pidfd(st);
                        if (fd >= 0) {
                                (void) pidfd_kill(fd, SIGKILL);
                                wait_gone(fd);
                                close(fd);
                        }
                        return;
                }
                for (size_t i = 0; i < n; i++)
                        (void) kill(pids[i], SIGKILL);
                (void) zy_cgroup_freeze(&st->cgroup, false);
                for (size_t i = 0; i < n; i++) {
                        int fd = (int) syscall(SYS_pidfd_open, pids[i], 0);
                        if (fd >= 0) {
                                wait_gone(fd);
                                close(fd);
                        }
                }
        }
}

void destroy(const struct zy_state *st) {
        kill_all_and_wait(st);
        (void) zy_cgroup_remove(&st->cgroup);
        (void) zy_rm_rf(st->dir);
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

static volatile pid_t forward_pid;

static void forward_signal(int sig) {
        if (forward_pid > 0)
                (void) kill(forward_pid, sig);
}

static void forward_signals(pid_t pid) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
        struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };

        forward_pid = pid;
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                (void) sigaction(sigs[i], &sa, NULL);
}

/* The parts of the sandbox struct that create/run and exec share: o's settings, the console
 * socket (connected here), the scratch buffer of the PATH search. */
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
static int apply_sysctls(const struct ctx *c, const struct zy_oci *o, pid_t pid) {
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
                        return error(c, "sysctl %s: not namespaced, a container may not set it: %s", key,
                                     errstr(EPERM)), -EPERM;
                for (size_t i = 0; i < o->n_ns_paths; i++)
                        if (o->ns_paths[i].flag == ns)
                                path = o->ns_paths[i].path;
                if (!path && (o->clone_flags & ns)) {
                        (void) snprintf(proc, sizeof(proc), "/proc/%d/ns/%s", (int) pid, kind);
                        path = proc;
                }
                if (!path)
                        return error(c, "sysctl %s: the container shares the host's %s namespace: %s", key, kind,
                                     errstr(EPERM)), -EPERM;
                fd = open(path, O_RDONLY | O_CLOEXEC);
                r = fd < 0 ? -errno : write_sysctl_in(fd, ns, key, json_object_get_string(val));
                if (r < 0)
                        return error(c, "sysctl %s: %s", key, errstr(-r)), r;
        }
        return 0;
}

static int sandbox_prepare(const struct ctx *c, const struct zy_oci *o, const char *console_socket,
                           int preserve_fds, struct zy_sandbox *sb, char **ret_path_buf, int *ret_console_fd) {
        if (console_socket) {
                int fd = connect_console(console_socket);
                if (fd < 0)
                        return error(c, "console socket %s: %s", console_socket, errstr(-fd)), fd;
                *ret_console_fd = fd;
        }
        zy_oci_to_sandbox(o, sb);
        sb->console_fd = *ret_console_fd;
        sb->preserve_fds = preserve_fds;
        *ret_path_buf = malloc(PATH_MAX + 1);
        if (!*ret_path_buf)
                return error(c, "out of memory"), -ENOMEM;
        sb->path_buf = *ret_path_buf;
        sb->path_buf_len = PATH_MAX + 1;
        return 0;
}




int cmd_create_or_run(const struct ctx *c, const struct create_args *a) {
        _cleanup_free_ char *dir = NULL, *fifo = NULL, *err = NULL, *path_buf = NULL;
        _cleanup_close_ int start_fd = -EBADF, console_fd = -EBADF, pidfd = -EBADF, cg_fd = -EBADF;
        _cleanup_close_pair_ int sync[2] = { -EBADF, -EBADF };
        struct zy_oci *o = NULL;
        struct zy_state st = {};
        struct zy_sandbox sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1 };
        struct zy_sb_status status;
        struct clone_args ca = {};
        char created[96];
        bool made_dir = false, ready = false, born_in_cgroup = false;
        pid_t pid;
        int r, ret = 1;

        r = zy_state_dir(c->root, a->id, &dir);
        if (r < 0)
                return error(c, "invalid container id \"%s\"", a->id);
        r = mkdir_p(c->root, 0700);
        if (r < 0)
                return error(c, "state root %s: %s", c->root, errstr(-r));
        if (mkdir(dir, 0711) < 0)
                return error(c, errno == EEXIST ? "container with id exists: %s" : "state dir %s: %s", a->id,
                             errstr(errno));
        made_dir = true;
        st.dir = strdup(dir);
        st.id = strdup(a->id);

        r = zy_oci_load(a->bundle, NULL, zy_cgroup_is_v2_only(), &o, &err);
        if (r < 0) {
                error(c, "%s", err ? err : errstr(-r));
                goto out;
        }
        if (o->terminal && !a->console_socket) {
                error(c, "cannot allocate tty if zygote-runc will detach without setting console socket");
                goto out;
        }
        if (!o->terminal && a->console_socket) {
                error(c, "cannot use console socket if zygote-runc will not detach or allocate tty");
                goto out;
        }
        if (json_object_object_get_ex(o->root, "hooks", NULL))
                debug(c, "hooks are not supported and were ignored");

        r = zy_cgroup_create(o->cgroups_path, a->id, o->pids_limit, o->memory_limit, &st.cgroup, &err);
        if (r < 0 && getuid() != 0 && (r == -EACCES || r == -EPERM || r == -EROFS) && o->pids_limit < 0 &&
            o->memory_limit < 0) {
                /* rootless without a delegated cgroup: no cgroup of its own (no limits asked) */
                debug(c, "no cgroup for the container: %s", err ? err : errstr(-r));
                r = 0;
        }
        if (r < 0) {
                error(c, "%s", err ? err : errstr(-r));
                goto out;
        }
        if (!st.cgroup.v2_only) {
                struct zy_cgroup_view *views = NULL;
                size_t n_views = 0;

                r = zy_cgroup_views(&st.cgroup, &views, &n_views);
                if (r >= 0)
                        r = zy_oci_cgroup_view(o, views, n_views);
                zy_cgroup_views_free(views, n_views);
                if (r < 0) {
                        error(c, "the container's view of its cgroups: %s", errstr(-r));
                        goto out;
                }
        }

        if (!a->run) {
                if (asprintf(&fifo, "%s/exec.fifo", dir) < 0 || mkfifo(fifo, 0600) < 0) {
                        error(c, "exec fifo: %s", errstr(errno));
                        goto out;
                }
                /* O_RDWR: the init is then its own writer and blocks reading until `start`
                 * writes; `start` finds a reader (no ENXIO) exactly while the init waits */
                start_fd = open(fifo, O_RDWR | O_CLOEXEC);
                if (start_fd < 0) {
                        error(c, "exec fifo: %s", errstr(errno));
                        goto out;
                }
        }
        if (sandbox_prepare(c, o, a->console_socket, a->preserve_fds, &sb, &path_buf, &console_fd) < 0)
                goto out;
        sb.start_fd = start_fd;
        for (size_t i = 0; i < o->n_ns_paths; i++) {
                int fd = open(o->ns_paths[i].path, O_RDONLY | O_CLOEXEC);

                if (fd < 0) {
                        error(c, "namespace %s: %s", o->ns_paths[i].path, errstr(errno));
                        goto out;
                }
                if (o->ns_paths[i].flag == CLONE_NEWPID) {
                        /* a pid namespace applies to children: joined here, before the clone */
                        r = setns(fd, CLONE_NEWPID);
                        close(fd);
                        if (r < 0) {
                                error(c, "joining pid namespace %s: %s", o->ns_paths[i].path, errstr(errno));
                                goto out;
                        }
                        continue;
                }
                sb.ns_fds[sb.n_ns_fds++] = fd; /* closed at exit (CLOEXEC for the container) */
        }

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0) {
                error(c, "socketpair: %s", errstr(errno));
                goto out;
        }
        ca.flags = (uint64_t) o->clone_flags | CLONE_PIDFD;
        ca.pidfd = (uint64_t) (uintptr_t) &pidfd;
        ca.exit_signal = SIGCHLD;
        cg_fd = zy_cgroup_open_v2(&st.cgroup);
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
                r = zy_cgroup_join(&st.cgroup, getpid());
                if (r < 0) {
                        error(c, "joining the container's cgroups: %s", errstr(-r));
                        (void) zy_cgroup_return(&st.cgroup);
                        goto out;
                }
                born_in_cgroup = true;
        }
        fflush(stdout);
        fflush(stderr);
        pid = (pid_t) syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0) {
                close(sync[0]);
                sb.sync_fd = sync[1];
                zy_sandbox_run(&sb);
        }
        if (pid < 0)
                error(c, "clone3: %s", errstr(errno));
        if (born_in_cgroup) {
                r = zy_cgroup_return(&st.cgroup);
                if (r < 0) {
                        /* the runtime would stay counted in the container's cgroups */
                        error(c, "leaving the container's cgroups: %s", errstr(-r));
                        if (pid > 0)
                                goto fail_child_early;
                }
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
                        error(c, "writing the user namespace's id mappings: %s", errstr(-r));
                        goto fail_child;
                }
        }
        if (cg_fd < 0 && !born_in_cgroup) {
                r = zy_cgroup_join(&st.cgroup, pid);
                if (r < 0) {
                        error(c, "joining the container's cgroups: %s", errstr(-r));
                        goto fail_child;
                }
        }
        if (o->oom_score_adj != INT_MIN) {
                char v[16];

                snprintf(v, sizeof(v), "%d", o->oom_score_adj);
                r = write_proc(pid, "oom_score_adj", v); /* inherited by what the init execs */
                if (r < 0) {
                        error(c, "oom_score_adj: %s", errstr(-r));
                        goto fail_child;
                }
        }
        if (apply_sysctls(c, o, pid) < 0)
                goto fail_child;
        if (write(sync[0], "g", 1) != 1) {
                error(c, "container init: %s", errstr(errno));
                goto fail_child;
        }
        r = read_status(sync[0], &status);
        if (r <= 0 || status.step != ZY_SB_STEP_READY) {
                if (r > 0)
                        report_failure(c, o, &status);
                else
                        error(c, "container init exited during setup");
                goto fail_child;
        }
        ready = true;
        r = zy_proc_starttime(pid, &st.starttime, NULL);
        now_rfc3339(created, sizeof(created));
        st.created = strdup(created);
        st.bundle = strdup(o->bundle);
        st.rootfs = strdup(o->rootfs);
        st.owner = getuid();
        if (json_object_object_get_ex(o->root, "annotations", &st.annotations))
                json_object_get(st.annotations);
        r = zy_state_save(&st);
        if (r >= 0)
                r = write_pid_file(a->pid_file, pid);
        if (r < 0) {
                error(c, "saving state: %s", errstr(-r));
                goto fail_child;
        }
        if (o->seccomp)
                debug(c, "container %s created, init pid %d; seccomp filter compiled here (no zygoted): "
                      "%zu instructions in %.2f ms", a->id, (int) pid, o->seccomp->bpf_len,
                      (double) o->seccomp->compile_nsec / 1e6);
        else
                debug(c, "container %s created, init pid %d, no seccomp filter", a->id, (int) pid);

        if (!a->run) {
                ret = 0;
                made_dir = false;
                goto out;
        }

        /* run: the init execs at once; EOF on the sync socket says it did */
        r = read_status(sync[0], &status);
        if (r > 0) {
                report_failure(c, o, &status);
                ret = wait_exit_status(pidfd);
                destroy(&st);
                made_dir = false;
                goto out;
        }
        made_dir = false;
        if (a->detach) {
                ret = 0;
                goto out;
        }
        forward_signals(pid);
        ret = wait_exit_status(pidfd);
        destroy(&st);
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
        r = wait_exit_status(pidfd);
        /* run exits with the init's own code (126/127 for a command that cannot run) */
        ret = a->run && r >= ZY_SB_EXIT_ABANDONED && r <= ZY_SB_EXIT_NOT_FOUND ? r : 1;
out:
        if (made_dir) {
                (void) zy_cgroup_remove(&st.cgroup);
                (void) zy_rm_rf(dir);
        }
        for (size_t i = 0; i < sb.n_ns_fds; i++)
                safe_close(sb.ns_fds[i]);
        zy_state_done(&st);
        zy_oci_free(o);
        return ret;
}


/* ---- state of one container, loaded for a command ---- */

int zy_runc_load_state(const struct ctx *c, const char *id, struct zy_state *st) {
        int r = zy_state_load(c->root, id, st);

        if (r == -ENOENT)
                return error(c, "container does not exist: %s", id), -ENOENT;
        if (r < 0)
                return error(c, "container %s: state: %s", id, errstr(-r)), r;
        return 0;
}

/* ---- exec ---- */

static int ns_flags_to_join(pid_t pid) {
        static const struct {
                const char *name;
                int flag;
        } ns[] = { { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },  { "pid", CLONE_NEWPID },
                   { "net", CLONE_NEWNET },   { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
                   { "cgroup", CLONE_NEWCGROUP } };
        int flags = 0;

        for (size_t i = 0; i < ELEMENTSOF(ns); i++) {
                char a[64], b[64];
                struct stat sa, sb;

                snprintf(a, sizeof(a), "/proc/self/ns/%s", ns[i].name);
                snprintf(b, sizeof(b), "/proc/%d/ns/%s", (int) pid, ns[i].name);
                if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && (sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev))
                        flags |= ns[i].flag;
        }
        return flags;
}


int cmd_exec(const struct ctx *c, const struct exec_args *a) {
        _cleanup_free_ char *err = NULL, *path_buf = NULL;
        _cleanup_free_ char **envp = NULL;
        _cleanup_close_ int init_fd = -EBADF, console_fd = -EBADF, pidfd = -EBADF, root_fd = -EBADF;
        _cleanup_close_pair_ int sync[2] = { -EBADF, -EBADF }, pp[2] = { -EBADF, -EBADF };
        struct zy_sandbox sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1 };
        struct zy_oci *o = NULL;
        struct zy_state st;
        struct zy_sb_status status;
        enum zy_status s;
        pid_t helper, pid = 0;
        int r, flags, ret = 1;

        if (zy_runc_load_state(c, a->id, &st) < 0)
                return 1;
        s = zy_state_status(&st);
        if (s != ZY_STATUS_RUNNING && s != ZY_STATUS_CREATED) {
                error(c, s == ZY_STATUS_PAUSED ? "cannot exec in a paused container" : "cannot exec in a stopped container");
                goto out;
        }
        init_fd = zy_state_pidfd(&st);
        if (init_fd < 0) {
                error(c, "cannot exec in a stopped container");
                goto out;
        }
        if (!a->process && a->n_args == 0) {
                error(c, "exec: no command given (args or --process)");
                goto out;
        }
        r = zy_oci_load(st.bundle, a->process, st.cgroup.v2_only, &o, &err);
        if (r < 0) {
                error(c, "%s", err ? err : errstr(-r));
                goto out;
        }
        if (!a->process) {
                size_t n = 0;

                o->argv = reallocarray(o->argv, (size_t) a->n_args + 1, sizeof(char *));
                if (!o->argv)
                        goto out;
                for (int i = 0; i < a->n_args; i++)
                        o->argv[i] = a->args[i];
                o->argv[a->n_args] = NULL;
                while (o->envp[n])
                        n++;
                envp = calloc(n + a->n_env + 1, sizeof(char *));
                if (!envp)
                        goto out;
                memcpy(envp, o->envp, n * sizeof(char *));
                for (size_t i = 0; i < a->n_env; i++)
                        envp[n + i] = (char *) a->env[i];
                if (a->cwd)
                        o->cwd = a->cwd;
                o->terminal = a->tty;
                if (a->user) {
                        unsigned u, g;
                        int k = sscanf(a->user, "%u:%u", &u, &g);
                        if (k >= 1)
                                o->uid = u;
                        if (k == 2)
                                o->gid = g;
                }
        }
        if (o->terminal && !a->console_socket) {
                error(c, "cannot allocate tty without a console socket (--console-socket)");
                goto out;
        }
        if (sandbox_prepare(c, o, a->console_socket, a->preserve_fds, &sb, &path_buf, &console_fd) < 0)
                goto out;
        if (envp)
                sb.envp = envp;
        /* the container's filesystem and hostname are there already, and its user namespace
         * (joined by setns) has its ids */
        sb.new_mount_ns = false;
        sb.userns_root = false;
        sb.hostname = NULL;
        sb.dev_console = NULL;

        flags = ns_flags_to_join(st.pid);
        /* Joining a mount namespace puts the joiner at that namespace's root, which is not the
         * container's when the runtime itself runs in a chroot (pivot_root then replaced only the
         * chroot's mount). The init's own root is the container's: taken here, while the pidfd
         * proves that pid is still the init, and entered after setns. */
        if (flags & CLONE_NEWNS) {
                char p[64];

                snprintf(p, sizeof(p), "/proc/%d/root", (int) st.pid);
                root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0 || pidfd_kill(init_fd, 0) < 0) {
                        error(c, "exec: the container's init is gone");
                        goto out;
                }
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0 || pipe2(pp, O_CLOEXEC) < 0) {
                error(c, "exec: %s", errstr(errno));
                goto out;
        }
        fflush(stdout);
        fflush(stderr);
        /* A helper joins the namespaces (a pid namespace only applies to children) and clones the
         * process with CLONE_PARENT: it becomes our child, in the container's pid namespace. */
        helper = fork();
        if (helper < 0) {
                error(c, "fork: %s", errstr(errno));
                goto out;
        }
        if (helper == 0) {
                struct clone_args ca = { .flags = CLONE_PARENT };
                pid_t child;

                close(sync[0]);
                close(pp[0]);
                if (flags && setns(init_fd, flags) < 0) {
                        struct zy_sb_status f = { .step = ZY_SB_STEP_SETNS, .err = errno, .index = -1 };
                        (void) !write(sync[1], &f, sizeof(f));
                        _exit(ZY_SB_EXIT_SETUP_FAILED);
                }
                if (root_fd >= 0 && (fchdir(root_fd) < 0 || chroot(".") < 0)) {
                        struct zy_sb_status f = { .step = ZY_SB_STEP_PIVOT, .err = errno, .index = -1 };
                        (void) !write(sync[1], &f, sizeof(f));
                        _exit(ZY_SB_EXIT_SETUP_FAILED);
                }
                child = (pid_t) syscall(SYS_clone3, &ca, sizeof(ca));
                if (child == 0) {
                        close(pp[1]);
                        sb.sync_fd = sync[1];
                        zy_sandbox_run(&sb);
                }
                if (child < 0) {
                        struct zy_sb_status f = { .step = ZY_SB_STEP_SETNS, .err = errno, .index = -1 };
                        (void) !write(sync[1], &f, sizeof(f));
                        _exit(ZY_SB_EXIT_SETUP_FAILED);
                }
                (void) !write(pp[1], &child, sizeof(child));
                _exit(0);
        }
        sync[1] = safe_close(sync[1]);
        pp[1] = safe_close(pp[1]);
        if (read(pp[0], &pid, sizeof(pid)) != sizeof(pid))
                pid = 0;
        (void) waitpid(helper, NULL, 0);
        if (pid <= 0) {
                r = read_status(sync[0], &status);
                if (r > 0)
                        report_failure(c, o, &status);
                else
                        error(c, "exec: the helper died");
                goto out;
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        r = zy_cgroup_join(&st.cgroup, pid);
        if (r < 0)
                debug(c, "exec: joining the container's cgroups: %s", errstr(-r));
        if (write(sync[0], "g", 1) != 1 || (r = read_status(sync[0], &status)) <= 0 ||
            status.step != ZY_SB_STEP_READY) {
                if (r > 0)
                        report_failure(c, o, &status);
                else
                        error(c, "exec: the process died during setup");
                /* its own code: 126/127 for a command that cannot run, as runc exec gives */
                if (pidfd >= 0)
                        ret = wait_exit_status(pidfd);
                goto out;
        }
        r = read_status(sync[0], &status);
        if (r > 0) {
                report_failure(c, o, &status);
                ret = pidfd >= 0 ? wait_exit_status(pidfd) : 1;
                goto out;
        }
        r = write_pid_file(a->pid_file, pid);
        if (r < 0)
                error(c, "pid file: %s", errstr(-r));
        if (a->detach) {
                ret = r < 0 ? 1 : 0;
                goto out;
        }
        forward_signals(pid);
        ret = pidfd >= 0 ? wait_exit_status(pidfd) : 255;
out:
        zy_oci_free(o);
        zy_state_done(&st);
        return ret;
}

