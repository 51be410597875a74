/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's side of a container process that create/run (container.c) and exec (exec.c)
 * share: preparing the sandbox, reading its status records and reporting a failed step in
 * runc's words, waiting for and signalling the process, the pid file, destroying a container.
 */
#include <errno.h>
#include <linux/nsfs.h>
#include <linux/seccomp.h>
#include <linux/sched.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "probe.h"
#include "profile.h"
#include "signal-util.h"
#include "fd-util.h"
#include "libcontainer.h"
#include "util.h"

int zct_runc_write_pid_file(const char *path, pid_t pid) {
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

int zct_parse_signal(const char *s) {
        return s ? zc_signal_from_string(s) : SIGTERM;
}

/* The message of one failure record of the container's process, runc's words where podman and
 * containerd look for them. */
void zct_runc_report_failure(const struct zct_ctx *c, const struct zct_oci *o, const struct ze_status *s) {
        const char *name = o->argv[0];

        switch (s->step) {
        case ZE_STEP_CREATE_HOOK:
        case ZE_STEP_START_HOOK:
                zct_hooks_report_failure(c, json_object_object_get(o->root, "hooks"), s);
                return;
        case ZE_STEP_EXEC:
                if (s->err == ENOENT && s->index == 0)
                        zct_error(c,
                                  "unable to start container process: exec: \"%s\": executable file not found in $PATH",
                                  name);
                else if (s->err == ENOENT)
                        zct_error(c,
                                  "unable to start container process: exec: \"%s\": stat %s: no such file or directory",
                                  name, name);
                else
                        zct_error(c, "unable to start container process: exec: \"%s\": %s", name, zct_errstr(s->err));
                return;
        case ZE_STEP_MOUNT:
                if (s->index >= 0 && (size_t) s->index < o->n_mounts) {
                        const struct ze_sb_mount *m = &o->mounts[s->index];
                        zct_error(c, "unable to start container process: mount %s (%s) on %s: %s",
                                  m->source ? m->source : "none", m->fstype ? m->fstype : "bind", m->target,
                                  zct_errstr(s->err));
                        return;
                }
                break;
        case ZE_STEP_COPYUP:
                if (s->index >= 0 && (size_t) s->index < o->n_mounts) {
                        const struct ze_sb_mount *m = &o->mounts[s->index];
                        /* ENAMETOOLONG is the engine's depth bound: see sandbox.h */
                        /* by destination: the index counts the mounts the runtime adds (cgroup views) */
                        if (s->err == ENAMETOOLONG)
                                zct_error(c,
                                          "unable to start container process: tmpcopyup of %s: the directory is more "
                                          "than %d levels deep",
                                          m->dest, ZE_SB_COPYUP_MAX_DEPTH);
                        else
                                zct_error(c, "unable to start container process: tmpcopyup of %s: %s", m->dest,
                                          zct_errstr(s->err));
                        return;
                }
                break;
        case ZE_STEP_LSM:
                /* the kernel's ENOENT: no profile of that name is loaded */
                zct_error(c, "unable to apply apparmor profile \"%s\": %s", o->apparmor_exec + strlen("exec "),
                          s->err == ENOENT  ? "no such profile is loaded (apparmor_parser loads one)"
                          : s->err == EXDEV ? "the thread's attr/exec file is not on procfs"
                                            : zct_errstr(s->err));
                return;
        case ZE_STEP_MASK:
        case ZE_STEP_READONLY: {
                const char *const *paths = s->step == ZE_STEP_MASK ? o->masked : o->readonly;
                const char *path = NULL;

                for (int i = 0; paths && s->index >= 0 && paths[i]; i++)
                        if (i == s->index) {
                                path = paths[i];
                                break;
                        }
                if (!path)
                        break;
                /* ENODEV is the mask's source, not the path: see sandbox-mount.c */
                zct_error(c, "unable to start container process: %s %s: %s", ze_step_to_string(s->step), path,
                          s->step == ZE_STEP_MASK && s->err == ENODEV ? "the container's /dev/null is missing or not "
                                                                        "the null device (a symlink, another node)"
                                                                      : zct_errstr(s->err));
                return;
        }
        default:
                break;
        }
        zct_error(c, "unable to start container process: %s%s: %s", ze_step_to_string(s->step),
                  s->index >= 0 ? " (entry)" : "", zct_errstr(s->err));
}

int zct_runc_read_status(int fd, struct ze_status *ret) {
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

int zct_runc_wait_exit_status(int pidfd) {
        siginfo_t si = {};

        while (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return 255;
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}

/* Waits for a process that is not necessarily our child to be gone: pidfds poll readable then. */
void zct_runc_wait_gone(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        (void) poll(&p, 1, 10000);
}

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SIGKILL to every process of the container and wait until they are gone, so that the cgroups
 * can go (a v1-frozen cgroup is thawed first: SIGKILL does not reach frozen tasks). At most 10 s
 * in all, as runc gives up: a process someone else froze in a cgroup of theirs (v1 lets root move
 * it there) dies only when they thaw it, and delete must not wait for that. */
static void kill_all_and_wait(const struct zct_state *st) {
        int64_t deadline = now_ms() + 10000;

        for (int round = 0; round < 100 && now_ms() < deadline; round++) {
                _cleanup_free_ int *fds = NULL;
                size_t n = 0;

                if (zct_cgroup_pidfds(&st->cgroup, &fds, &n) < 0 || n == 0) {
                        int fd = zct_state_pidfd(st);
                        if (fd >= 0) {
                                (void) pidfd_kill(fd, SIGKILL);
                                zct_runc_wait_gone(fd);
                                close(fd);
                        }
                        return;
                }
                for (size_t i = 0; i < n; i++)
                        (void) pidfd_kill(fds[i], SIGKILL);
                (void) zct_cgroup_freeze(&st->cgroup, false);
                for (size_t i = 0; i < n; i++) {
                        struct pollfd p = { .fd = fds[i], .events = POLLIN };
                        int64_t left = deadline - now_ms();

                        (void) poll(&p, 1, left > 0 ? (int) left : 0);
                        close(fds[i]);
                }
        }
}

void zct_destroy(const struct zct_state *st) {
        kill_all_and_wait(st);
        (void) zct_cgroup_remove(&st->cgroup);
        (void) zct_rm_rf(st->dir);
}

static volatile pid_t forward_pid;

static void forward_signal(int sig) {
        if (forward_pid > 0)
                (void) kill(forward_pid, sig);
}

void zct_runc_forward_signals(pid_t pid) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
        struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };

        forward_pid = pid;
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                (void) sigaction(sigs[i], &sa, NULL);
}

bool zct_apparmor_enabled(void) {
        return !ze_feature_disabled("apparmor") && ze_apparmor_enabled();
}

/* The parts of the sandbox struct that create/run and exec share: o's settings, the console
 * socket (connected here), the scratch buffer of the PATH search. */
int zct_runc_sandbox_prepare(const struct zct_ctx *c, const struct zct_oci *o, const char *console_socket,
                             int preserve_fds, struct ze_sandbox *sb, char **ret_path_buf, int *ret_console_fd) {
        if (console_socket) {
                int fd = zc_unix_connect(console_socket);
                if (fd < 0)
                        return zct_error(c, "console socket %s: %s", console_socket, zct_errstr(-fd)), fd;
                *ret_console_fd = fd;
        }
        /* what the config asks for and is accepted and ignored, as runc would: once, in the log */
        for (const char *n = o->notes, *end; n && *n; n = *end ? end + 1 : end) {
                end = strchrnul(n, '\n');
                zct_info(c, "%.*s", (int) (end - n), n);
        }
        zct_oci_to_sandbox(o, sb);
        /* the clone tier (zygoted's worker): the filter of a process holding this very program */
        if (o->seccomp && c->filter.reference && !(o->seccomp->filter_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)) {
                int ref = c->filter.reference(c->filter.userdata, o->seccomp);
                if (ref >= 0) {
                        sb->ref_pidfd = ref;
                        sb->prog = NULL;
                }
        }
        if (o->apparmor_exec) {
                /* refused rather than run unconfined; runc fails the same way, at the write */
                if (!zct_apparmor_enabled())
                        return zct_error(c,
                                         "apparmor profile \"%s\" asked for, but AppArmor is not enabled on this host",
                                         o->apparmor_exec + strlen("exec ")),
                               -EOPNOTSUPP;
                sb->lsm_attr = access("/proc/self/attr/apparmor", F_OK) == 0 ? "apparmor/exec" : "exec";
                sb->lsm_exec = o->apparmor_exec;
        }
        sb->console_fd = *ret_console_fd;
        sb->preserve_fds = preserve_fds;
        *ret_path_buf = malloc(PATH_MAX + 1);
        if (!*ret_path_buf)
                return zct_error(c, "out of memory"), -ENOMEM;
        sb->path_buf = *ret_path_buf;
        sb->path_buf_len = PATH_MAX + 1;
        return 0;
}

int zct_runc_load_state(const struct zct_ctx *c, const char *id, struct zct_state *st) {
        int r = zct_state_load(c->root, id, st);

        if (r == -ENOENT)
                return zct_error(c, "container does not exist: %s", id), -ENOENT;
        if (r < 0)
                return zct_error(c, "container %s: state: %s", id, zct_errstr(-r)), r;
        return 0;
}

pid_t zct_runc_clone_sandbox(struct clone_args *ca, struct ze_sandbox *sb, int sync_fd, int close_fd) {
        pid_t pid;

        fflush(stdout);
        fflush(stderr);
        pid = (pid_t) syscall(SYS_clone3, ca, sizeof(*ca));
        if (pid == 0) {
                safe_close(close_fd);
                sb->sync_fd = sync_fd;
                ze_sandbox_run(sb);
        }
        return pid < 0 ? -errno : pid;
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

/* A namespace the config names by path, opened and checked: its fd, or a negative errno after
 * printing why. */
int zct_open_namespace(const struct zct_ctx *c, const struct zct_ns_path *ns) {
        const char *kind = zct_oci_ns_name(ns->flag);
        int fd = open(ns->path, O_RDONLY | O_CLOEXEC), type = 0, r;

        if (fd < 0)
                return zct_error_errno(c, "namespace %s", ns->path);
        /* Said here, in words, before anything is made; the child's setns() is given the
         * type too, so that the kernel refuses a mismatch whatever happens in between. */
        r = check_ns_type(fd, ns->flag, &type);
        if (r < 0) {
                if (r == -ENOTTY)
                        zct_error(c, "%s namespace path %s: not a namespace file", kind, ns->path);
                else if (r == -EINVAL)
                        zct_error(c, "%s namespace path %s: is a %s namespace, not a %s one", kind, ns->path,
                                  zct_oci_ns_name(type), kind);
                else
                        zct_error(c, "%s namespace path %s: %s", kind, ns->path, zct_errstr(-r));
                close(fd);
                return r;
        }
        return fd;
}

/* Whether fd is the same namespace as the file at path. */
static bool same_ns(int fd, const char *path) {
        struct stat a, b;

        return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A mount namespace joined by path gets the container's rootfs bind, its mounts and pivot_root,
 * which moves the root of every process of that namespace whose root was its "/" (as runc). Never
 * the runtime's own or its pid 1's (the host's under another name: /proc/PID/ns/mnt of any host
 * process), which is sharing the host's, refused like a config without a mount namespace; never
 * for zygoted (daemon), whose worker would do that on the request's word in a namespace of the
 * host's choosing (a CRI pod shares net, ipc and uts, never mounts). */
static int check_mount_join(const struct zct_ctx *c, const struct zct_ns_path *ns, int fd, bool daemon) {
        if (daemon)
                return zct_error(c,
                                 "mount namespace path %s: zygoted's containers get a new mount namespace; joining "
                                 "one by path is zygote-runc's alone",
                                 ns->path),
                       -EOPNOTSUPP;
        if (same_ns(fd, "/proc/self/ns/mnt") || same_ns(fd, "/proc/1/ns/mnt"))
                return zct_error(c,
                                 "mount namespace path %s: is the runtime's own (the host's) mount namespace; "
                                 "zygote-runc never sets a container up there: give a new one ({\"type\": "
                                 "\"mount\"}) or another's",
                                 ns->path),
                       -EPERM;
        return 0;
}

int zct_open_join(const struct zct_ctx *c, const struct zct_ns_path *ns, bool daemon) {
        int fd = zct_open_namespace(c, ns), r;

        if (fd < 0 || ns->flag != CLONE_NEWNS)
                return fd;
        r = check_mount_join(c, ns, fd, daemon);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}
