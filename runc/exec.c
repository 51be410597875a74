/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc exec: a new process in a running (or created) container. A helper joins the
 * init's namespaces and root and clones the process with CLONE_PARENT, so that it is our child
 * inside the container's pid namespace; it then sets up like the init (engine/sandbox.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "runtime.h"
#include "util.h"

/* The CLONE_NEW* kinds in which pid's namespaces differ from ours, or -errno. */
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
                if (stat(a, &sa) < 0) {
                        if (errno == ENOENT)
                                continue; /* a kind this kernel does not have */
                        return -errno;
                }
                /* not to be skipped: the process would stay in the host's namespace of that kind
                 * (the init is not dumpable before its execve, and an unprivileged runtime may
                 * not look at it then) */
                if (stat(b, &sb) < 0)
                        return -errno;
                if (sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev)
                        flags |= ns[i].flag;
        }
        return flags;
}


/* The helper's failure record, as the sandbox writes its own; the process was never made. */
_Noreturn static void helper_fail(int sync_fd, enum ze_step step, int err) {
        ze_fail(&(const struct ze_reporter){ .fd = sync_fd, .socket = true }, step, err, -1, ZE_EXIT_SETUP_FAILED);
}

int zrc_exec_process(const struct zrc_ctx *c, const struct zrc_exec_args *a) {
        _cleanup_free_ char *err = NULL, *path_buf = NULL;
        _cleanup_free_ char **envp = NULL;
        _cleanup_close_ int init_fd = -EBADF, console_fd = -EBADF, pidfd = -EBADF, root_fd = -EBADF;
        _cleanup_close_pair_ int sync[2] = { -EBADF, -EBADF }, pp[2] = { -EBADF, -EBADF };
        struct ze_sandbox sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1 };
        struct zrc_oci *o = NULL;
        struct zrc_state st;
        struct ze_status status;
        enum zrc_status s;
        pid_t helper, pid = 0;
        int r, flags, ret = 1;

        if (zrc_runc_load_state(c, a->p.id, &st) < 0)
                return 1;
        s = zrc_state_status(&st);
        if (s != ZRC_STATUS_RUNNING && s != ZRC_STATUS_CREATED) {
                zrc_error(c, s == ZRC_STATUS_PAUSED ? "cannot exec in a paused container" : "cannot exec in a stopped container");
                goto out;
        }
        init_fd = zrc_state_pidfd(&st);
        if (init_fd < 0) {
                zrc_error(c, "cannot exec in a stopped container");
                goto out;
        }
        if (!a->process && a->n_args == 0) {
                zrc_error(c, "exec: no command given (args or --process)");
                goto out;
        }
        r = zrc_oci_load(st.bundle, a->process, st.cgroup.v2_only, &o, &err);
        if (r < 0) {
                zrc_error(c, "%s", err ? err : zrc_errstr(-r));
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
        if (o->terminal && !a->p.console_socket) {
                zrc_error(c, "cannot allocate tty without a console socket (--console-socket)");
                goto out;
        }
        if (zrc_runc_sandbox_prepare(c, o, a->p.console_socket, a->p.preserve_fds, &sb, &path_buf, &console_fd) < 0)
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
        if (flags < 0) {
                zrc_error(c, "exec: the container's namespaces: %s", zrc_errstr(-flags));
                goto out;
        }
        /* Joining a mount namespace puts the joiner at that namespace's root, which is not the
         * container's when the runtime itself runs in a chroot (pivot_root then replaced only the
         * chroot's mount). The init's own root is the container's: taken here, while the pidfd
         * proves that pid is still the init, and entered after setns. */
        if (flags & CLONE_NEWNS) {
                char p[64];

                snprintf(p, sizeof(p), "/proc/%d/root", (int) st.pid);
                root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0 || pidfd_kill(init_fd, 0) < 0) {
                        zrc_error(c, "exec: the container's init is gone");
                        goto out;
                }
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0 || pipe2(pp, O_CLOEXEC) < 0) {
                zrc_error(c, "exec: %s", zrc_errstr(errno));
                goto out;
        }
        fflush(stdout);
        fflush(stderr);
        /* A helper joins the namespaces (a pid namespace only applies to children) and clones the
         * process with CLONE_PARENT: it becomes our child, in the container's pid namespace. */
        helper = fork();
        if (helper < 0) {
                zrc_error(c, "fork: %s", zrc_errstr(errno));
                goto out;
        }
        if (helper == 0) {
                struct clone_args ca = { .flags = CLONE_PARENT };
                pid_t child;

                close(sync[0]);
                close(pp[0]);
                if (flags && setns(init_fd, flags) < 0)
                        helper_fail(sync[1], ZE_STEP_SETNS, errno);
                if (root_fd >= 0 && (fchdir(root_fd) < 0 || chroot(".") < 0))
                        helper_fail(sync[1], ZE_STEP_PIVOT, errno);
                child = zrc_runc_clone_sandbox(&ca, &sb, sync[1], pp[1]);
                if (child < 0)
                        helper_fail(sync[1], ZE_STEP_SETNS, -child);
                (void) !write(pp[1], &child, sizeof(child));
                _exit(0);
        }
        sync[1] = safe_close(sync[1]);
        pp[1] = safe_close(pp[1]);
        if (read(pp[0], &pid, sizeof(pid)) != sizeof(pid))
                pid = 0;
        (void) waitpid(helper, NULL, 0);
        if (pid <= 0) {
                r = zrc_runc_read_status(sync[0], &status);
                if (r > 0)
                        zrc_runc_report_failure(c, o, &status);
                else
                        zrc_error(c, "exec: the helper died");
                goto out;
        }
        pidfd = pidfd_open_pid(pid);
        r = zrc_cgroup_join(&st.cgroup, pid);
        if (r < 0 && getuid() == 0) {
                /* outside them the process would escape the container's limits and its device
                 * rules: it is still waiting for "go", and EOF on sync makes it exit */
                zrc_error(c, "exec: joining the container's cgroups: %s", zrc_errstr(-r));
                sync[0] = safe_close(sync[0]);
                if (pidfd >= 0)
                        (void) zrc_runc_wait_exit_status(pidfd);
                goto out;
        }
        if (r < 0)
                zrc_debug(c, "exec: joining the container's cgroups: %s", zrc_errstr(-r));
        if (write(sync[0], "g", 1) != 1 || (r = zrc_runc_read_status(sync[0], &status)) <= 0 ||
            status.step != ZE_STEP_HELD) {
                if (r > 0)
                        zrc_runc_report_failure(c, o, &status);
                else
                        zrc_error(c, "exec: the process died during setup");
                /* its own code: 126/127 for a command that cannot run, as runc exec gives */
                if (pidfd >= 0)
                        ret = zrc_runc_wait_exit_status(pidfd);
                goto out;
        }
        r = zrc_runc_read_status(sync[0], &status);
        if (r > 0) {
                zrc_runc_report_failure(c, o, &status);
                ret = pidfd >= 0 ? zrc_runc_wait_exit_status(pidfd) : 1;
                goto out;
        }
        r = zrc_runc_write_pid_file(a->p.pid_file, pid);
        if (r < 0)
                zrc_error(c, "pid file: %s", zrc_errstr(-r));
        if (a->p.detach) {
                ret = r < 0 ? 1 : 0;
                goto out;
        }
        zrc_runc_forward_signals(pid);
        ret = pidfd >= 0 ? zrc_runc_wait_exit_status(pidfd) : 255;
out:
        zrc_oci_free(o);
        zrc_state_done(&st);
        return ret;
}

