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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "pidfd-util.h"
#include "profile.h"
#include "libcontainer.h"
#include "tty.h"
#include "util.h"

/* The CLONE_NEW* kinds in which pid's namespaces differ from ours, or -errno. */
static int ns_flags_to_join(pid_t pid) {
        static const struct {
                const char *name;
                int flag;
        } ns[] = { { "user", CLONE_NEWUSER },     { "mnt", CLONE_NEWNS },   { "pid", CLONE_NEWPID },
                   { "net", CLONE_NEWNET },       { "ipc", CLONE_NEWIPC },  { "uts", CLONE_NEWUTS },
                   { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME } };
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

/* One exec: what its steps share, and what the exit closes. */
struct exec {
        const struct zct_ctx *c;
        const struct zct_exec_args *a;
        struct zct_state st;
        int init_fd; /* pins the container's init while its namespaces are looked at */
        struct zct_oci *o;
        char **envp;          /* the config's environment and -e's, or NULL */
        struct ze_sandbox sb; /* what the process applies (engine/sandbox.c) */
        char *path_buf;
        int console_fd;
        int ns_flags;       /* CLONE_NEW* the helper joins */
        int root_fd;        /* the init's root, or -EBADF */
        int agent_fd;       /* connected to linux.seccomp.listenerPath (a notifying filter), or -EBADF */
        int sync[2], pp[2]; /* status records; the process's pid from the helper */
        pid_t pid;
        int pidfd;
        int procs_fds[16]; /* handoff: the container's cgroup.procs files, opened before setns */
        size_t n_procs_fds;
        struct zct_tty tty; /* -t in the foreground without a console socket */
};

static int check_running(struct exec *k) {
        enum zct_status s = zct_state_status(&k->st);

        if (s != ZCT_STATUS_RUNNING && s != ZCT_STATUS_CREATED && !(s == ZCT_STATUS_PAUSED && k->a->ignore_paused))
                return zct_error(k->c, s == ZCT_STATUS_PAUSED
                                               ? "cannot exec in a paused container (use --ignore-paused to override)"
                                               : "cannot exec in a stopped container"),
                       -EINVAL;
        k->init_fd = zct_state_pidfd(&k->st);
        if (k->init_fd < 0)
                return zct_error(k->c, "cannot exec in a stopped container"), k->init_fd;
        return 0;
}

/* --cap (each added to the bounding, effective and permitted sets, and to the inheritable and
 * ambient ones only when the process has inheritable capabilities already, as runc 1.1 adds it)
 * and --additional-gids. */
static int add_caps_and_groups(struct exec *k) {
        const struct zct_exec_args *a = k->a;
        struct zct_oci *o = k->o;
        gid_t *groups;

        for (size_t i = 0; i < a->n_caps; i++) {
                _cleanup_free_ char *full = NULL;
                const char *name = a->caps[i];
                unsigned cap;

                if (strncasecmp(name, "CAP_", 4) != 0 && asprintf(&full, "CAP_%s", name) >= 0)
                        name = full;
                /* unknown, or beyond the running kernel's: ignored, as runc 1.1 and crun ignore it */
                if (zp_cap_from_name(name, &cap) < 0 || (int) cap > zct_oci_cap_last()) {
                        zct_info(k->c, "exec: --cap: unknown capability \"%s\" ignored", a->caps[i]);
                        continue;
                }
                for (size_t s = 0; s < ELEMENTSOF(o->caps); s++)
                        if (s < 3 || o->caps[3])
                                o->caps[s] |= UINT64_C(1) << cap;
        }
        if (a->n_gids == 0)
                return 0;
        groups = reallocarray(o->groups, o->n_groups + a->n_gids + 1, sizeof(gid_t));
        if (!groups)
                return -ENOMEM;
        o->groups = groups;
        for (size_t i = 0; i < a->n_gids; i++) {
                char *end;
                unsigned long g = strtoul(a->gids[i], &end, 10);

                if (!*a->gids[i] || *end || g > UINT32_MAX - 1)
                        return zct_error(k->c, "exec: --additional-gids: bad group \"%s\"", a->gids[i]), -EINVAL;
                o->groups[o->n_groups++] = (gid_t) g;
        }
        return 0;
}

/* Without --process: the command, -e's environment, --cwd, --tty, --user and --apparmor of the
 * command line over the config's process. */
static int apply_command_line(struct exec *k) {
        const struct zct_exec_args *a = k->a;
        struct zct_oci *o = k->o;
        size_t n = 0;

        o->argv = reallocarray(o->argv, (size_t) a->n_args + 1, sizeof(char *));
        if (!o->argv)
                return -ENOMEM;
        for (int i = 0; i < a->n_args; i++)
                o->argv[i] = a->args[i];
        o->argv[a->n_args] = NULL;
        while (o->envp[n])
                n++;
        k->envp = calloc(n + a->n_env + 1, sizeof(char *));
        if (!k->envp)
                return -ENOMEM;
        memcpy(k->envp, o->envp, n * sizeof(char *));
        for (size_t i = 0; i < a->n_env; i++)
                k->envp[n + i] = (char *) a->env[i];
        if (a->cwd)
                o->cwd = a->cwd;
        o->terminal = a->tty;
        if (a->user) {
                unsigned u, g;
                int m = sscanf(a->user, "%u:%u", &u, &g);
                if (m >= 1)
                        o->uid = u;
                if (m == 2)
                        o->gid = g;
        }
        if (a->no_new_privs)
                o->no_new_privs = true;
        if (a->apparmor) {
                _cleanup_free_ char *err = NULL;
                int r = zct_oci_set_apparmor(o, a->apparmor, "exec: --apparmor", &err);
                if (r < 0)
                        return zct_error(k->c, "%s", err ? err : zct_errstr(-r)), r;
        }
        return add_caps_and_groups(k);
}

/* The process to run: the config's (or --process's), with the command line's options. */
static int load_process(struct exec *k) {
        _cleanup_free_ char *err = NULL, *config = NULL;
        int r;

        if (!k->a->process && k->a->n_args == 0)
                return zct_error(k->c, "exec: no command given (args or --process)"), -EINVAL;
        /* create's --config, kept in the state directory, else the bundle's */
        r = zct_state_config(k->st.dir, &config);
        if (r >= 0)
                r = zct_oci_load(k->c, k->st.bundle, config, k->a->process, k->st.cgroup.v2_only, &k->o, &err);
        if (r < 0)
                return zct_error(k->c, "%s", err ? err : zct_errstr(-r)), r;
        /* zygoted's worker holds the daemon's groups, not its caller's */
        if (k->a->handoff && k->o->keep_groups)
                return zct_error(k->c, "run.oci.keep_original_groups: not for zygoted's containers"), -EPERM;
        /* create said in the log what of the config is ignored */
        free(k->o->notes);
        k->o->notes = NULL;
        if (!k->a->process)
                r = apply_command_line(k);
        /* a container recorded by an agent records its exec'd processes too */
        if (r >= 0)
                r = zct_record_join(k->c, k->o, k->st.dir);
        /* HOME for the user the process runs as (exec's --user included) */
        if (r >= 0)
                r = zct_oci_add_home(k->o, k->envp ? &k->envp : &k->o->envp);
        return r;
}

static int prepare_sandbox(struct exec *k) {
        int r;

        if (k->a->handoff)
                k->console_fd = TAKE_FD(k->a->handoff->console_fd);
        /* runc's refusal: a detached process has no runtime to copy its terminal */
        if (k->o->terminal && !k->a->p.console_socket && k->console_fd < 0 && (k->a->p.detach || k->a->handoff))
                return zct_error(k->c, "cannot allocate tty if zygote-runc will detach without setting console socket"),
                       -EINVAL;
        r = zct_tty_open(k->c, &k->tty, k->o, k->a->p.console_socket, &k->console_fd);
        if (r < 0)
                return r;
        r = zct_runc_sandbox_prepare(k->c, k->o, k->a->p.console_socket, k->a->p.preserve_fds, &k->sb, &k->path_buf,
                                     &k->console_fd);
        if (r < 0)
                return r;
        /* with the foreground terminal, the process waits after "ready" until the master is ours */
        k->sb.start_on_sync = k->tty.sock >= 0;
        if (k->envp)
                k->sb.envp = k->envp;
        /* the container's filesystem and hostname are there already, and its user namespace
         * (joined by setns) has its ids */
        k->sb.new_mount_ns = false;
        k->sb.loopback_up = false;
        k->sb.userns_root = false;
        k->sb.hostname = NULL;
        k->sb.domainname = NULL;
        k->sb.dev_console = NULL;
        if (k->a->handoff)
                k->sb.start_fd = k->a->handoff->start_fd; /* held until zygoted's Start */
        /* the agent, from our own namespaces and root: zygoted's worker joins the container's
         * before it clones the process, where the path could name a socket of the container's */
        return zct_seccomp_listener_connect(k->c, k->o, k->a->handoff != NULL, &k->agent_fd);
}

/* The init's namespaces that differ from ours, and its root. */
static int find_namespaces(struct exec *k) {
        char p[64];

        k->ns_flags = ns_flags_to_join(k->st.pid);
        if (k->ns_flags < 0)
                return zct_error(k->c, "exec: the container's namespaces: %s", zct_errstr(-k->ns_flags)), k->ns_flags;
        /* Joining a mount namespace puts the joiner at that namespace's root, which is not the
         * container's when the runtime itself runs in a chroot (pivot_root then replaced only the
         * chroot's mount). The init's own root is the container's: taken here, while the pidfd
         * proves that pid is still the init, and entered after setns. */
        if (!(k->ns_flags & CLONE_NEWNS))
                return 0;
        snprintf(p, sizeof(p), "/proc/%d/root", (int) k->st.pid);
        k->root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (k->root_fd < 0 || pidfd_kill(k->init_fd, 0) < 0)
                return zct_error(k->c, "exec: the container's init is gone"), -ESRCH;
        return 0;
}

/* The helper, from its fork to its _exit: joins the namespaces (a pid namespace only applies to
 * children) and the root, clones the process with CLONE_PARENT (so that it becomes our child, in
 * the container's pid namespace) and sends us its pid. System calls only, no allocation. */
_Noreturn static void run_helper(struct exec *k) {
        struct clone_args ca = { .flags = CLONE_PARENT };
        pid_t child;

        close(k->sync[0]);
        close(k->pp[0]);
        if (k->ns_flags && setns(k->init_fd, k->ns_flags) < 0)
                helper_fail(k->sync[1], ZE_STEP_SETNS, errno);
        if (k->root_fd >= 0 && (fchdir(k->root_fd) < 0 || chroot(".") < 0))
                helper_fail(k->sync[1], ZE_STEP_PIVOT, errno);
        child = zct_runc_clone_sandbox(&ca, &k->sb, k->sync[1], k->pp[1]);
        if (child < 0)
                helper_fail(k->sync[1], ZE_STEP_SETNS, -child);
        (void) !write(k->pp[1], &child, sizeof(child));
        _exit(0);
}

/* zygoted's container worker is its own helper (it is gone once the process is handed over):
 * the cgroups' procs files opened while their paths are ours, the namespaces and root joined, and
 * the process cloned with CLONE_PARENT: zygoted's child, in the container's pid namespace. */
static int spawn_handoff(struct exec *k) {
        struct clone_args ca = { .flags = CLONE_PARENT | CLONE_PIDFD, .pidfd = (uint64_t) (uintptr_t) &k->pidfd };

        for (size_t i = 0; i < k->st.cgroup.n_paths && i < ELEMENTSOF(k->procs_fds); i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/cgroup.procs", k->st.cgroup.paths[i]) < 0)
                        return -ENOMEM;
                k->procs_fds[k->n_procs_fds] = open(p, O_WRONLY | O_CLOEXEC);
                if (k->procs_fds[k->n_procs_fds] < 0)
                        return zct_error_errno(k->c, "exec: %s", p);
                k->n_procs_fds++;
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, k->sync) < 0)
                return zct_error_errno(k->c, "exec");
        if (k->ns_flags && setns(k->init_fd, k->ns_flags) < 0)
                return zct_error_errno(k->c, "exec: joining the container's namespaces");
        if (k->root_fd >= 0 && (fchdir(k->root_fd) < 0 || chroot(".") < 0))
                return zct_error_errno(k->c, "exec: entering the container's root");
        k->pid = zct_runc_clone_sandbox(&ca, &k->sb, k->sync[1], k->sync[0]);
        if (k->pid < 0) {
                int r = k->pid;
                k->pid = 0;
                return zct_error(k->c, "exec: clone3: %s", zct_errstr(-r)), r;
        }
        k->sync[1] = safe_close(k->sync[1]);
        return 0;
}

/* handoff: the process joins the container's cgroups through the files opened before setns. */
static int join_cgroup_handoff(struct exec *k) {
        char v[24];
        int n = snprintf(v, sizeof(v), "%d", (int) k->pid);

        for (size_t i = 0; i < k->n_procs_fds; i++)
                if (write(k->procs_fds[i], v, (size_t) n) != n) {
                        int r = zct_error_errno(k->c, "exec: joining the container's cgroups");
                        (void) pidfd_kill(k->pidfd, SIGKILL);
                        return r;
                }
        return 0;
}

/* The process, made by the helper and waiting for "go"; k->pid and k->pidfd. */
static int spawn_process(struct exec *k) {
        struct ze_status status;
        pid_t helper;
        int r;

        if (k->a->handoff)
                return spawn_handoff(k);

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, k->sync) < 0 || pipe2(k->pp, O_CLOEXEC) < 0)
                return zct_error_errno(k->c, "exec");
        fflush(stdout);
        fflush(stderr);
        helper = fork();
        if (helper < 0)
                return zct_error_errno(k->c, "fork");
        if (helper == 0)
                run_helper(k);
        k->sync[1] = safe_close(k->sync[1]);
        k->pp[1] = safe_close(k->pp[1]);
        if (read(k->pp[0], &k->pid, sizeof(k->pid)) != sizeof(k->pid))
                k->pid = 0;
        (void) waitpid(helper, NULL, 0);
        if (k->pid <= 0) {
                r = zct_runc_read_status(k->sync[0], &status);
                if (r > 0)
                        zct_runc_report_failure(k->c, k->o, &status);
                else
                        zct_error(k->c, "exec: the helper died");
                return -ECHILD;
        }
        k->pidfd = pidfd_open_pid(k->pid);
        /* runc's words at its step (nsexec's start), which its tests look for */
        zct_debug(k->c, "nsexec[%d]: => nsexec container setup", (int) k->pid);
        return 0;
}

static int join_cgroup(struct exec *k) {
        _cleanup_free_ char *err = NULL;

        if (k->a->handoff)
                return join_cgroup_handoff(k);
        int r = k->a->n_cgroups ? zct_cgroup_join_sub(&k->st.cgroup, k->pid, k->a->cgroups, k->a->n_cgroups, &err)
                                : zct_cgroup_join(&k->st.cgroup, k->pid);

        if (r < 0 && k->a->n_cgroups) {
                /* the sub-cgroups asked for, by root or not: never the process elsewhere */
                zct_error(k->c, "exec: %s", err ? err : zct_errstr(-r));
                k->sync[0] = safe_close(k->sync[0]);
                if (k->pidfd >= 0)
                        (void) zct_runc_wait_exit_status(k->pidfd);
                return r;
        }

        if (r < 0 && getuid() == 0) {
                /* outside them the process would escape the container's limits and its device
                 * rules: it is still waiting for "go", and EOF on sync makes it exit */
                zct_error(k->c, "exec: joining the container's cgroups: %s", zct_errstr(-r));
                k->sync[0] = safe_close(k->sync[0]);
                if (k->pidfd >= 0)
                        (void) zct_runc_wait_exit_status(k->pidfd);
                return r;
        }
        if (r < 0)
                zct_debug(k->c, "exec: joining the container's cgroups: %s", zct_errstr(-r));
        return 0;
}

/* "go": the process sets up, reports "ready", and execs (EOF on sync). A failure is reported;
 * a notifying filter's listener, on the way, goes to the agent (as runc 1.1 does for exec). */
static int go_until_exec(struct exec *k) {
        const struct zct_listener_for f = {
                .o = k->o, .st = &k->st, .status = "running", .pid = k->pid, .agent_fd = &k->agent_fd
        };
        struct ze_status status;
        bool sent;
        int r = 0;

        sent = write(k->sync[0], "g", 1) == 1;
        if (sent)
                zct_debug(k->c, "child process in init()"); /* it sets itself up from here */
        if (!sent || (r = zct_runc_read_status_passing(k->c, &f, k->sync[0], &status)) <= 0 ||
            status.step != ZE_STEP_HELD) {
                if (r > 0)
                        zct_runc_report_failure(k->c, k->o, &status);
                else if (r == 0)
                        zct_error(k->c, "exec: the process died during setup");
                /* alive past its filter when the hand-over failed: it must not run */
                if (r < 0 && k->pidfd >= 0)
                        (void) pidfd_kill(k->pidfd, SIGKILL);
                return -ECHILD;
        }
        if (k->a->handoff)
                return 0;                             /* held: zygoted's task from here on */
        zct_debug(k->c, "setns_init: about to exec"); /* joined and set up: execve is its next step */
        /* the foreground terminal's master (its size set by the process already), raw mode;
         * then the process may go on */
        if (k->sb.start_on_sync && (zct_tty_take_master(k->c, &k->tty) < 0 || write(k->sync[0], "s", 1) != 1)) {
                (void) pidfd_kill(k->pidfd, SIGKILL);
                return -ECHILD;
        }
        r = zct_runc_read_status(k->sync[0], &status);
        if (r > 0) {
                zct_runc_report_failure(k->c, k->o, &status);
                return -ECHILD;
        }
        return 0;
}

/* The process runs: the pid file, then (without --detach) its exit status. A pid file that cannot
 * be written ends the process and the exec, with runc exec's 255: whoever asked for the file
 * would otherwise lose track of a process it believes failed. */
static int wait_process(struct exec *k) {
        int r = zct_runc_write_pid_file(k->a->p.pid_file, k->pid);

        if (r < 0) {
                zct_error(k->c, "pid file %s: %s", k->a->p.pid_file, zct_errstr(-r));
                if (k->pidfd >= 0) {
                        (void) pidfd_kill(k->pidfd, SIGKILL);
                        zct_runc_wait_gone(k->pidfd);
                }
                return 255;
        }
        if (k->a->p.detach)
                return 0;
        zct_runc_forward_signals(k->pid);
        if (k->pidfd >= 0 && k->tty.master >= 0)
                return zct_tty_relay(&k->tty, k->pidfd);
        return k->pidfd >= 0 ? zct_runc_wait_exit_status(k->pidfd) : 255;
}

static void exec_done(struct exec *k) {
        safe_close(k->init_fd);
        safe_close(k->console_fd);
        zct_tty_done(&k->tty);
        safe_close(k->root_fd);
        safe_close(k->agent_fd);
        safe_close(k->pidfd);
        close_pairp(&k->sync);
        close_pairp(&k->pp);
        close_many(k->procs_fds, k->n_procs_fds);
        free(k->path_buf);
        free(k->envp);
        zct_oci_free(k->o);
        zct_state_done(&k->st);
}

int zct_exec_process(const struct zct_ctx *c, const struct zct_exec_args *a) {
        struct exec k = {
                .c = c,
                .a = a,
                .init_fd = -EBADF,
                .sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1, .hook_report_fd = -1 },
                .console_fd = -EBADF,
                .root_fd = -EBADF,
                .agent_fd = -EBADF,
                .sync = { -EBADF, -EBADF },
                .pp = { -EBADF, -EBADF },
                .pidfd = -EBADF,
                .tty = ZCT_TTY_NONE,
        };
        int ret = 1;

        if (zct_runc_load_state(c, a->p.id, &k.st) < 0)
                return 1;
        /* a paused or stopped container: runc's exec failure, 255 */
        if (check_running(&k) < 0) {
                ret = 255;
                goto out;
        }
        if (load_process(&k) < 0 || prepare_sandbox(&k) < 0 || find_namespaces(&k) < 0 || spawn_process(&k) < 0 ||
            join_cgroup(&k) < 0 || zct_process_attrs_apply(c, k.o, k.pid) < 0)
                goto out;
        if (a->handoff) {
                ret = go_until_exec(&k) < 0 ? 1 : 0;
                a->handoff->pid = k.pid;
                if (ret != 0 && k.pidfd >= 0) {
                        (void) pidfd_kill(k.pidfd, SIGKILL);
                        zct_runc_wait_gone(k.pidfd);
                }
                a->handoff->pidfd = TAKE_FD(k.pidfd);
                if (ret == 0)
                        a->handoff->sync_fd = TAKE_FD(k.sync[0]);
        } else if (go_until_exec(&k) < 0)
                /* its own code: 126/127 for a command that cannot run, as runc exec gives */
                ret = k.pidfd >= 0 ? zct_runc_wait_exit_status(k.pidfd) : 1;
        else
                ret = wait_process(&k);
out:
        if (a->handoff && k.pid > 0 && a->handoff->pid == 0) {
                /* failed after the clone: the daemon reaps it */
                (void) pidfd_kill(k.pidfd, SIGKILL);
                a->handoff->pid = k.pid;
                a->handoff->pidfd = TAKE_FD(k.pidfd);
        }
        exec_done(&k);
        return ret;
}
