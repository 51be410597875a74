/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc's create and run: the parent's side of a container start, as one ordered table of
 * steps (engine/sandbox.c is the init's side); exec is exec.c's.
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
#include <unistd.h>

#include "cgroup-devices.h"
#include "pidfd-util.h"
#include "profile.h"
#include "libcontainer.h"
#include "tty.h"
#include "util.h"

static json_object *get_devices(const struct zct_oci *o) {
        json_object *l = NULL, *res = NULL, *d = NULL;

        if (!json_object_object_get_ex(o->root, "linux", &l) || !json_object_object_get_ex(l, "resources", &res) ||
            !json_object_object_get_ex(res, "devices", &d))
                return NULL;
        return d;
}

/* One container start: what its steps share, and what a failure undoes. */
struct create {
        const struct zct_ctx *c;
        const struct zct_create_args *a;
        char *dir;     /* ROOT/ID */
        bool made_dir; /* a failure removes the state directory and the cgroups */
        int lock_fd;   /* the container's lock (zct_state_lock), held until the state is saved */
        struct zct_oci *o;
        struct zct_state st;
        struct ze_sandbox sb; /* what the init applies (engine/sandbox.c) */
        char *path_buf;
        int start_fd, console_fd, cg_fd;
        int hook_report_fd; /* ROOT/ID/start-hooks.fifo, the init's end (startContainer hooks) */
        int agent_fd;       /* connected to linux.seccomp.listenerPath (a notifying filter), or -EBADF */
        int notify_fd;      /* NOTIFY_SOCKET: the container's socket (sd-activation.c), or -EBADF */
        int sync[2];        /* [0] ours, [1] the init's */
        struct clone_args ca;
        bool born_in_cgroup; /* the runtime stepped into the container's cgroups for the clone */
        pid_t pid;           /* the init, once cloned */
        int pidfd;
        bool ready;         /* the init reported "ready" and would now wait on the fifo */
        bool hooks_ran;     /* prestart/createRuntime hooks ran: a failed create runs poststop */
        struct zct_tty tty; /* run in the foreground with a terminal and no console socket */
};

static int make_state_dir(struct create *k) {
        int r;

        r = zct_state_make_dir(k->c, k->a->p.id, &k->dir);
        if (r < 0)
                return r;
        k->made_dir = true;
        /* delete, update, ... of this id wait until the container is made (or its directory gone) */
        k->lock_fd = zct_state_lock(k->c->root, k->a->p.id);
        if (k->lock_fd < 0)
                return zct_error(k->c, "state dir %s: %s", k->dir, zct_errstr(-k->lock_fd)), k->lock_fd;
        k->st.dir = strdup(k->dir);
        k->st.id = strdup(k->a->p.id);
        return 0;
}

static int load_config(struct create *k) {
        const struct zct_ctx *c = k->c;
        _cleanup_free_ char *err = NULL, *config = NULL;
        int r;

        /* --config: a copy in the state directory, the one exec reads too */
        r = k->a->config ? zct_state_keep_config(k->dir, k->a->config, &config) : 0;
        if (r < 0)
                return zct_error(c, "--config %s: %s", k->a->config, zct_errstr(-r)), r;
        r = zct_oci_load(c, k->a->bundle, config, NULL, zct_cgroup_is_v2_only(), &k->o, &err);
        if (r < 0)
                return zct_error(c, "%s", err ? err : zct_errstr(-r)), r;
        /* io.containers.trace-syscall: zygote-runc's own create, and zygoted's without its eBPF tracer
         * (record-annotation.c) */
        r = k->a->handoff && !k->a->handoff->record_agent ? 0 : zct_record_annotation(c, k->o, k->dir);
        if (r < 0)
                return r;
        /* zygoted's worker holds the daemon's groups, not its caller's */
        if (k->a->handoff && k->o->keep_groups)
                return zct_error(c, "run.oci.keep_original_groups: not for zygoted's containers"), -EPERM;
        if (zct_oci_add_home(k->o, &k->o->envp) < 0)
                return zct_error(c, "out of memory"), -ENOMEM;
        bool console = k->a->p.console_socket || (k->a->handoff && k->a->handoff->console_fd >= 0);
        if (k->o->terminal && !console && (!k->a->run || k->a->p.detach))
                return zct_error(c, "cannot allocate tty if zygote-runc will detach without setting console socket"),
                       -EINVAL;
        if (!k->o->terminal && console)
                return zct_error(c, "cannot use console socket if zygote-runc will not detach or allocate tty"),
                       -EINVAL;
        r = zct_hooks_check(k->o->root, &err);
        if (r < 0)
                return zct_error(c, "config.json: %s", err ? err : zct_errstr(-r)), r;
        r = k->a->handoff ? zct_hooks_check_handoff(k->o->root, &err) : 0;
        if (r < 0)
                return zct_error(c, "config.json: %s", err ? err : zct_errstr(-r)), r;
        if (json_object_object_get_ex(k->o->root, "hooks", &k->st.hooks))
                json_object_get(k->st.hooks);
        /* what the state says from now on, the hooks' included */
        k->st.bundle = strdup(k->o->bundle);
        k->st.rootfs = strdup(k->o->rootfs);
        if (json_object_object_get_ex(k->o->root, "annotations", &k->st.annotations))
                json_object_get(k->st.annotations);
        if (k->o->resources)
                k->st.resources = json_object_get(k->o->resources);
        return 0;
}

/* The end of a cgroup step that failed with r (and message err, or NULL): printed, or, when
 * rootless may go without the step (rootless_ok), one debug line saying what the container goes
 * without and returns 0. */
static int cgroup_step_result(const struct zct_ctx *c, int r, const char *err, bool rootless_ok, const char *without) {
        if (r >= 0)
                return 0;
        if (rootless_ok && c->rootless) {
                zct_debug(c, "%s: %s", without, err ? err : zct_errstr(-r));
                return 0;
        }
        return zct_error(c, "%s", err ? err : zct_errstr(-r)), r;
}

static int make_cgroup(struct create *k) {
        const struct zct_oci *o = k->o;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n_pids = 0;
        int r;

        r = zct_cgroup_create(o->cgroups_path, k->a->p.id, o->resources, k->c->rootless, &k->st.cgroup, &err);
        if (r < 0 && k->c->rootless && err)
                /* a limit asked for is never dropped: it needs a cgroup the user may write */
                return zct_error(k->c,
                                 "%s (rootless: no cgroup of its own where the user may not create one; run "
                                 "it from a cgroup delegated to the user, e.g. systemd-run --user --scope)",
                                 err),
                       r;
        if (r < 0)
                return zct_error(k->c, "%s", err ? err : zct_errstr(-r)), r;
        if (k->c->rootless)
                zct_debug(k->c, "rootless: the container has %zu cgroup directories of its own", k->st.cgroup.n_paths);
        /* a cgroup that exists already frozen would hold the init before "ready", for ever; it
         * is someone else's: left as it is */
        if (zct_cgroup_is_frozen(&k->st.cgroup) > 0) {
                zct_cgroup_done(&k->st.cgroup);
                k->st.cgroup = (struct zct_cgroup){};
                return zct_error(k->c, "container's cgroup unexpectedly frozen"), -EBUSY;
        }
        /* processes in it already (a cgroupsPath shared): they share its limits, as under runc */
        if (zct_cgroup_pids(&k->st.cgroup, &pids, &n_pids) >= 0 && n_pids > 0)
                zct_warn(k->c, "container's cgroup is not empty: %zu process(es) found", n_pids);
        return 0;
}

/* The device rules, before any process is in the cgroup: the init is born into (or joined to) a
 * cgroup that already refuses the host's devices. */
static int set_device_rules(struct create *k) {
        _cleanup_free_ struct zct_dev_rule *rules = NULL;
        _cleanup_free_ char *err = NULL;
        size_t n = 0;
        int r;

        r = zct_dev_rules_from_json(get_devices(k->o), &rules, &n, &err);
        if (r >= 0)
                r = zct_cgroup_set_devices(&k->st.cgroup, rules, n, &err);
        /* rootless: no cgroup, or no bpf(2) and no v1 controller of our own; the user namespace
         * refuses mknod of a device and the host's nodes keep their own permissions */
        return cgroup_step_result(k->c, r, err, r == -EPERM || r == -EACCES || r == -EOPNOTSUPP,
                                  "no device cgroup for the container");
}

/* v1/hybrid: the container's "cgroup" mount shows its own directories only. */
static int make_cgroup_view(struct create *k) {
        struct zct_cgroup_view *views = NULL;
        size_t n_views = 0;
        int r;

        if (k->st.cgroup.v2_only)
                return 0;
        r = zct_cgroup_views(&k->st.cgroup, &views, &n_views);
        if (r >= 0)
                r = zct_oci_cgroup_view(k->o, views, n_views);
        zct_cgroup_views_free(views, n_views);
        if (r < 0)
                return zct_error(k->c, "the container's view of its cgroups: %s", zct_errstr(-r)), r;
        return 0;
}

/* create (not run): the fifo the init waits on until `start`. */
static int make_exec_fifo(struct create *k) {
        _cleanup_free_ char *fifo = NULL;
        int r;

        /* run has the sync socket, and zygoted's Start the status socket, to hear of a failed
         * startContainer hook; `start` needs a fifo of its own */
        r = k->a->run || k->a->handoff ? 0 : zct_hooks_report_fifo(k->dir, k->st.hooks, &k->hook_report_fd);
        if (r < 0)
                return zct_error(k->c, "startContainer hooks' fifo: %s", zct_errstr(-r)), r;
        if (k->a->run)
                return 0;
        if (k->a->handoff) {
                /* zygoted's hold pipe: its Start writes the byte */
                k->start_fd = TAKE_FD(k->a->handoff->start_fd);
                return 0;
        }
        if (asprintf(&fifo, "%s/exec.fifo", k->dir) < 0 || mkfifo(fifo, 0600) < 0)
                return zct_error_errno(k->c, "exec fifo");
        /* O_RDWR: the init is then its own writer and blocks reading until `start`
         * writes; `start` finds a reader (no ENXIO) exactly while the init waits */
        k->start_fd = open(fifo, O_RDWR | O_CLOEXEC);
        if (k->start_fd < 0)
                return zct_error_errno(k->c, "exec fifo");
        return 0;
}

/* What the runtime makes for the init before the sandbox takes o's mounts, devices and
 * environment: LISTEN_FDS and NOTIFY_SOCKET, as the caller's environment had them; a user
 * namespace's device nodes. */
static int prepare_premade(struct create *k) {
        int r = zct_listen_fds_env(k->o, k->a->listen_fds);

        if (r >= 0 && k->a->notify_socket)
                r = zct_notify_prepare(k->o, k->dir, k->a->notify_socket, &k->notify_fd);
        if (r < 0)
                return zct_error(k->c, "NOTIFY_SOCKET, LISTEN_FDS: %s", zct_errstr(-r)), r;
        r = zct_devices_premake(k->o, k->dir);
        if (r < 0)
                return zct_error(k->c, "the user namespace's device nodes: %s", zct_errstr(-r)), r;
        return 0;
}

static int prepare_sandbox(struct create *k) {
        int r;

        if (k->a->handoff)
                k->console_fd = TAKE_FD(k->a->handoff->console_fd);
        r = zct_tty_open(k->c, &k->tty, k->o, k->a->p.console_socket, &k->console_fd);
        if (r >= 0)
                r = zct_runc_sandbox_prepare(k->c, k->o, k->a->p.console_socket, k->a->p.preserve_fds, &k->sb,
                                             &k->path_buf, &k->console_fd);
        if (r < 0)
                return r;
        k->sb.start_fd = k->start_fd;
        k->sb.hook_report_fd = k->hook_report_fd;
        /* the hooks the init runs itself, with their state ("creating", "created"); its pid is
         * the init's, which it learns with "go" */
        r = zct_hooks_for_init(k->st.hooks, "createContainer", &k->st, "creating", k->o->envp, &k->sb.create_hooks);
        if (r >= 0)
                r = zct_hooks_for_init(k->st.hooks, "startContainer", &k->st, "created", k->o->envp,
                                       &k->sb.start_hooks);
        if (r < 0)
                return zct_error(k->c, "hooks: %s", zct_errstr(-r)), r;
        /* zygoted's: the createContainer hooks hold what its caller does, no more (runc's would be
         * its caller's grandchildren); the startContainer ones run as the container's process */
        if (k->a->handoff && k->a->handoff->hook_creds)
                k->sb.create_hooks.creds = *k->a->handoff->hook_creds;
        /* run: the init waits for a byte on the sync socket once ready, sent when the state is
         * saved, so that nothing of the container runs (and no one asks for its state) before */
        k->sb.start_on_sync = k->a->run;
        /* the agent, while no process of the container exists (its copy in the init is closed
         * with the runtime's other fds) */
        return zct_seccomp_listener_connect(k->c, k->o, k->a->handoff != NULL, &k->agent_fd);
}

/* zygoted's namespaces made ahead (struct zct_handoff): joined by the init like namespaces by
 * path, instead of the new ones of the same kinds its clone would make. Only where nothing
 * between the clone and "go" looks into the init's namespaces (sysctls and hooks do, by
 * /proc/PID/ns, before the init has joined), and not in a user namespace (the namespaces must
 * belong to it). */
static void use_premade(struct create *k) {
        static const int kinds[3] = { CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS };
        struct zct_handoff *h = k->a->handoff;

        if (!h || k->o->sysctl || k->st.hooks || (k->o->clone_flags & CLONE_NEWUSER))
                return;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                if (h->premade[i] < 0 || !(k->o->clone_flags & kinds[i]) || k->sb.n_ns_fds >= ZE_SB_MAX_NS)
                        continue;
                k->o->clone_flags &= ~kinds[i];
                k->sb.ns_types[k->sb.n_ns_fds] = kinds[i];
                k->sb.ns_fds[k->sb.n_ns_fds++] = TAKE_FD(h->premade[i]);
                h->premade_used = true;
        }
}

/* The namespaces to join: a pid namespace here (it applies to children), the others by the
 * init (their fds in sb, closed at exit and CLOEXEC for the container). */
static int open_namespaces(struct create *k) {
        use_premade(k);
        for (size_t i = 0; i < k->o->n_ns_paths; i++) {
                const struct zct_ns_path *ns = &k->o->ns_paths[i];
                int fd = zct_open_join(k->c, ns, k->a->handoff != NULL), r;

                if (fd < 0)
                        return fd;
                if (ns->flag == CLONE_NEWPID) {
                        r = setns(fd, CLONE_NEWPID);
                        safe_close(fd); /* keeps errno */
                        if (r < 0)
                                return zct_error_errno(k->c, "joining pid namespace %s", ns->path);
                        continue;
                }
                k->sb.ns_types[k->sb.n_ns_fds] = ns->flag;
                k->sb.ns_fds[k->sb.n_ns_fds++] = fd;
        }
        return 0;
}

/* The clone's arguments, and where the init is born: in its cgroup, so that it never runs a cycle
 * outside its limits. */
static int prepare_clone(struct create *k) {
        int r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, k->sync) < 0)
                return zct_error_errno(k->c, "socketpair");
        k->ca.flags = (uint64_t) k->o->clone_flags | CLONE_PIDFD;
        /* zygoted's worker: the init is the daemon's child, its task, reaped by it */
        if (k->a->handoff) {
                k->ca.flags |= CLONE_PARENT; /* exit_signal 0, as the kernel wants: it is ours */
        }
        k->ca.pidfd = (uint64_t) (uintptr_t) &k->pidfd;
        k->ca.exit_signal = k->a->handoff ? 0 : SIGCHLD;
        k->cg_fd = zct_cgroup_open_v2(&k->st.cgroup);
        if (k->cg_fd >= 0) {
                k->ca.flags |= CLONE_INTO_CGROUP;
                k->ca.cgroup = (uint64_t) k->cg_fd;
        }
        if (k->cg_fd < 0 && (k->ca.flags & CLONE_NEWCGROUP)) {
                /* v1/hybrid: a cgroup namespace is rooted where its creator is when it is made,
                 * and the init could only be moved in after the clone (its cgroups would then
                 * read "/../ID"). So the runtime steps into the container's cgroups for the
                 * clone, the init is born there, and the runtime steps back. */
                r = zct_cgroup_join(&k->st.cgroup, getpid());
                if (r < 0) {
                        zct_error(k->c, "joining the container's cgroups: %s", zct_errstr(-r));
                        (void) zct_cgroup_return(&k->st.cgroup);
                        return r;
                }
                k->born_in_cgroup = true;
        }
        /* Unprivileged, the runtime can write the maps (and open the namespaces for sysctls) of
         * a dumpable child only: the init is born dumpable then and turns non-dumpable at "go",
         * while it is still alone in its namespaces. */
        k->sb.dumpable_until_go = k->o->uid_map && getuid() != 0;
        if (k->sb.dumpable_until_go && prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL) < 0)
                return zct_error_errno(k->c, "prctl(PR_SET_DUMPABLE)");
        return 0;
}

/* The init, cloned into its sandbox; then the runtime steps back out of the container's cgroups
 * and is non-dumpable again. A failure once the init exists leaves k->pid set: the caller reaps it. */
static int clone_init(struct create *k) {
        int r, time_fd;
        pid_t pid;

        /* the init is born in the time namespace made for it; the runtime stays in its own */
        pid = zct_timens_enter(k->c, k->o, &time_fd);
        if (pid >= 0) {
                pid = zct_runc_clone_sandbox(&k->ca, &k->sb, k->sync[1], k->sync[0]);
                if (pid < 0)
                        zct_error(k->c, "clone3: %s", zct_errstr(-pid));
                else {
                        k->sync[1] = safe_close(k->sync[1]);
                        k->pid = k->st.pid = pid;
                        /* runc's words at its step (nsexec's start), which its tests look for */
                        zct_debug(k->c, "nsexec[%d]: => nsexec container setup", (int) pid);
                }
                r = zct_timens_leave(k->c, time_fd);
                if (r < 0 && pid > 0)
                        return r; /* the init, born, is reaped by create_failed */
        }
        if (k->born_in_cgroup) {
                r = zct_cgroup_return(&k->st.cgroup);
                if (r < 0) {
                        /* the runtime would stay counted in the container's cgroups */
                        zct_error(k->c, "leaving the container's cgroups: %s", zct_errstr(-r));
                        if (pid > 0)
                                return r;
                }
        }
        if (k->sb.dumpable_until_go && prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0) {
                r = -errno;
                zct_error(k->c, "prctl(PR_SET_DUMPABLE): %s", zct_errstr(errno));
                if (pid > 0)
                        return r;
        }
        return pid < 0 ? pid : 0;
}

static int write_id_maps(struct create *k) {
        int r;

        if (!k->o->uid_map)
                return 0;
        if (getuid() != 0)
                (void) zct_procfs_write_pid(k->pid, "setgroups", "deny");
        r = zct_procfs_write_pid(k->pid, "uid_map", k->o->uid_map);
        if (r >= 0)
                r = zct_procfs_write_pid(k->pid, "gid_map", k->o->gid_map ? k->o->gid_map : "");
        if (r < 0)
                return zct_error(k->c, "writing the user namespace's id mappings: %s", zct_errstr(-r)), r;
        return 0;
}

/* v1/hybrid without a cgroup namespace: the init joins its cgroups now, before "go". */
static int join_cgroup(struct create *k) {
        int r;

        if (k->cg_fd >= 0 || k->born_in_cgroup)
                return 0;
        r = zct_cgroup_join(&k->st.cgroup, k->pid);
        if (r < 0)
                return zct_error(k->c, "joining the container's cgroups: %s", zct_errstr(-r)), r;
        return 0;
}

static int set_process_attrs(struct create *k) {
        return zct_process_attrs_apply(k->c, k->o, k->pid);
}

static int set_oom_score_adj(struct create *k) {
        char v[16];
        int r;

        if (k->o->oom_score_adj == INT_MIN)
                return 0;
        if (k->a->handoff && k->o->oom_score_adj < k->a->handoff->oom_floor)
                return zct_error(k->c, "process.oomScoreAdj %d: below the caller's %d (CAP_SYS_RESOURCE needed)",
                                 k->o->oom_score_adj, k->a->handoff->oom_floor),
                       -EPERM;
        snprintf(v, sizeof(v), "%d", k->o->oom_score_adj);
        r = zct_procfs_write_pid(k->pid, "oom_score_adj", v); /* inherited by what the init execs */
        if (r < 0)
                return zct_error(k->c, "oom_score_adj: %s", zct_errstr(-r)), r;
        return 0;
}

/* prestart (deprecated, the same point) and createRuntime: in the runtime's namespaces, once the
 * container's namespaces exist and before the init is let go (so before its pivot_root). A failure
 * ends create. */
static int run_create_hooks(struct create *k) {
        const struct ze_hook_creds *creds = k->a->handoff ? k->a->handoff->hook_creds : NULL;
        json_object *state;
        int r;

        if (!k->st.hooks)
                return 0;
        k->hooks_ran = true;
        state = zct_hooks_state(&k->st, "creating", k->pid);
        r = zct_hooks_run(k->c, k->st.hooks, "prestart", state, creds);
        if (r >= 0)
                r = zct_hooks_run(k->c, k->st.hooks, "createRuntime", state, creds);
        json_object_put(state);
        return r;
}

/* "go", with the init's pid as we see it (its hooks' state): the init sets up its sandbox, runs
 * the createContainer hooks and reports "ready" (held before its execve); a notifying filter's
 * listener, on the way, goes to the agent (seccomp-listener.c). */
static int go_until_ready(struct create *k) {
        const struct zct_listener_for f = {
                .o = k->o, .st = &k->st, .status = "creating", .pid = k->pid, .agent_fd = &k->agent_fd
        };
        char go[1 + sizeof(int32_t)] = "g";
        int32_t pid = (int32_t) k->pid;
        struct ze_status status;
        int r;

        memcpy(go + 1, &pid, sizeof(pid));
        if (write(k->sync[0], go, sizeof(go)) != (ssize_t) sizeof(go))
                return zct_error_errno(k->c, "container init");
        /* the init sets its container up from here: runc's init() of the child */
        zct_debug(k->c, "child process in init()");
        r = zct_runc_read_status_passing(k->c, &f, k->sync[0], &status);
        if (r < 0)
                /* alive past its filter (a hand-over that failed): it would wait on the fifo */
                (void) pidfd_kill(k->pidfd, SIGKILL);
        if (r <= 0 || status.step != ZE_STEP_HELD) {
                if (r > 0)
                        zct_runc_report_failure(k->c, k->o, &status);
                else if (r == 0)
                        zct_error(k->c, "container init exited during setup");
                return r < 0 ? r : -ECHILD;
        }
        k->ready = true;
        /* held before its execve, as runc's init is when it closes its pipe */
        zct_debug(k->c, "init: closing the pipe to signal completion");
        return k->tty.sock >= 0 ? zct_tty_take_master(k->c, &k->tty) : 0;
}

static int save_state(struct create *k) {
        const struct zct_oci *o = k->o;
        char created[96];
        int r;

        (void) zct_proc_starttime(k->pid, &k->st.starttime, NULL);
        zct_state_now(created, sizeof(created));
        k->st.created = strdup(created);
        k->st.owner = getuid();
        r = zct_state_save(&k->st);
        if (r >= 0)
                r = zct_runc_write_pid_file(k->a->p.pid_file, k->pid);
        if (r < 0)
                return zct_error(k->c, "saving state: %s", zct_errstr(-r)), r;
        if (o->seccomp)
                zct_debug(k->c, "container %s created, init pid %d; seccomp filter of %zu instructions %s", k->a->p.id,
                          (int) k->pid, o->seccomp->bpf_len, o->seccomp_source);
        else
                zct_debug(k->c, "container %s created, init pid %d, no seccomp filter", k->a->p.id, (int) k->pid);
        return 0;
}

/* run: the state is saved, so the init may exec; EOF on the sync socket says it did (a failed
 * write: it is gone, and the status read says how). Returns run's exit status. */
static int start_and_wait(struct create *k) {
        struct ze_status status;
        bool failed = false;
        int r;

        if (write(k->sync[0], "s", 1) != 1)
                zct_debug(k->c, "container init gone before its start: %s", zct_errstr(errno));
        r = zct_runc_read_status(k->sync[0], &status);
        if (r > 0)
                zct_runc_report_failure(k->c, k->o, &status);
        else if ((failed = zct_hooks_poststart(k->c, &k->st) < 0)) /* it ends the container, as runc's */
                (void) pidfd_kill(k->pidfd, SIGKILL);
        else {
                if (!k->a->p.detach)
                        zct_runc_forward_signals(k->pid);
                /* runc's: run returns (or waits on) once the container said READY=1 */
                r = k->notify_fd >= 0 && k->tty.master < 0
                            ? zct_notify_relay(k->notify_fd, k->a->notify_socket, k->pidfd, k->pid)
                            : 0;
                if (r < 0)
                        zct_error(k->c, "NOTIFY_SOCKET %s: %s", k->a->notify_socket, zct_errstr(-r));
                if (k->a->p.detach)
                        return 0;
        }
        r = k->tty.master >= 0 ? zct_tty_relay(&k->tty, k->pidfd) : zct_runc_wait_exit_status(k->pidfd);
        if (!k->a->keep) { /* --keep (runc's): the stopped container waits for delete */
                zct_destroy(&k->st);
                zct_hooks_poststop(k->c, &k->st);
        }
        return failed ? 1 : r;
}

/* A failed create: the exit status, once an init that was cloned is reaped. */
static int create_failed(struct create *k) {
        int r;

        if (k->pid <= 0)
                return 1;
        /* closing sync makes an init still waiting for "go" exit; then it is reaped here, so
         * that a failed create leaves no process, no cgroup and no state behind */
        k->sync[0] = safe_close(k->sync[0]);
        /* before "ready" it exits by itself (it reported, or reads EOF on sync); after it, it
         * would wait on the fifo: only then is it killed, so that run keeps its 126/127 */
        if (k->ready || k->a->handoff)
                (void) pidfd_kill(k->pidfd, SIGKILL);
        if (k->a->handoff) {
                /* the daemon's child: it reaps it; here only wait until it is gone, so that its
                 * cgroup can be removed */
                zct_runc_wait_gone(k->pidfd);
                k->a->handoff->pid = k->pid;
                k->a->handoff->pidfd = TAKE_FD(k->pidfd);
                r = 1;
        } else
                r = zct_runc_wait_exit_status(k->pidfd);
        /* the container is destroyed; what the create hooks set up, poststop may undo */
        if (k->hooks_ran) {
                (void) zct_cgroup_remove(&k->st.cgroup);
                (void) zct_rm_rf(k->dir);
                zct_hooks_poststop(k->c, &k->st);
        }
        /* run exits with the init's own code (126/127 for a command that cannot run) */
        return k->a->run && r >= ZE_EXIT_ABANDONED && r <= ZE_EXIT_NOT_FOUND ? r : 1;
}

static void create_done(struct create *k) {
        if (k->made_dir) {
                (void) zct_cgroup_remove(&k->st.cgroup);
                (void) zct_rm_rf(k->dir);
        }
        safe_close(k->lock_fd);
        for (size_t i = 0; i < k->sb.n_ns_fds; i++)
                safe_close(k->sb.ns_fds[i]);
        safe_close(k->start_fd);
        safe_close(k->hook_report_fd);
        zct_hooks_for_init_free(&k->sb.create_hooks);
        zct_hooks_for_init_free(&k->sb.start_hooks);
        safe_close(k->console_fd);
        zct_tty_done(&k->tty);
        safe_close(k->cg_fd);
        safe_close(k->agent_fd);
        safe_close(k->notify_fd);
        safe_close(k->pidfd);
        close_pairp(&k->sync);
        free(k->path_buf);
        free(k->dir);
        zct_state_done(&k->st);
        zct_oci_free(k->o);
}

static int set_sysctls(struct create *k) {
        return zct_sysctls_apply(k->c, k->o, k->pid);
}

/* only the runtime may give a mount its id mapping (idmap-userns.c) */
static int make_idmapped_mounts(struct create *k) {
        return zct_idmap_mounts_make(k->c, k->o);
}

/* The order of a container start; the first step that fails ends it (create_failed). */
static int (*const create_steps[])(struct create *k) = {
        /* before any process: the state directory, the config, the cgroups and their device
         * rules, what the init will apply */
        make_state_dir,
        load_config,
        make_cgroup,
        set_device_rules,
        make_cgroup_view,
        make_idmapped_mounts,
        make_exec_fifo,
        prepare_premade,
        prepare_sandbox,
        open_namespaces,
        prepare_clone,
        /* the init, born waiting for "go" */
        clone_init,
        /* the parent's part while the init waits; "go"; the state, once the init is ready */
        write_id_maps,
        join_cgroup,
        set_oom_score_adj,
        set_process_attrs,
        set_sysctls,
        run_create_hooks,
        go_until_ready,
        save_state,
};

int zct_container_create(const struct zct_ctx *c, const struct zct_create_args *a) {
        struct create k = {
                .c = c,
                .a = a,
                .sb = { .sync_fd = -1, .start_fd = -1, .console_fd = -1, .ref_pidfd = -1, .hook_report_fd = -1 },
                .start_fd = -EBADF,
                .hook_report_fd = -EBADF,
                .console_fd = -EBADF,
                .cg_fd = -EBADF,
                .agent_fd = -EBADF,
                .notify_fd = -EBADF,
                .sync = { -EBADF, -EBADF },
                .pidfd = -EBADF,
                .lock_fd = -EBADF,
                .tty = ZCT_TTY_NONE,
        };
        int ret;

        for (size_t i = 0; i < ELEMENTSOF(create_steps); i++)
                if (create_steps[i](&k) < 0) {
                        ret = create_failed(&k);
                        goto out;
                }
        /* created: from here on the state is the container's, and delete (or run's end) removes it;
         * other commands may change it now (run's own lifetime holds no lock) */
        k.made_dir = false;
        k.lock_fd = safe_close(k.lock_fd);
        if (a->handoff) {
                a->handoff->pid = k.pid;
                a->handoff->pidfd = TAKE_FD(k.pidfd);
                a->handoff->sync_fd = TAKE_FD(k.sync[0]);
        }
        ret = a->run ? start_and_wait(&k) : 0;
out:
        create_done(&k);
        return ret;
}
