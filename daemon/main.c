/* SPDX-License-Identifier: MIT */
/*
 * zygoted: options, start-up, the event loop, shutdown. Runs in the foreground; never starts
 * threads; never daemonizes (systemd or the caller supervises it).
 *
 * Start-up order: probe the kernel (each probe in a throwaway child), compile the profiles, start
 * one reference process per profile and choose its tier, then listen. Tasks are not ours to end:
 * on SIGTERM the daemon stops listening and exits, and running tasks go on.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>

#include "adopt.h"
#include "caller.h"
#include "container.h"
#include "daemon.h"
#include "log.h"
#include "nspool.h"
#include "own-filter.h"
#include "reference.h"
#include "libcontainer.h"
#include "methods.h"
#include "getfilter.h"
#include "registry.h"
#include "sd.h"
#include "server.h"
#include "task.h"
#include "tier.h"
#include "util.h"
#include "zygote-protocol.h"

/* The test seam of the idle timeout: ZYGOTE_IDLE_TIMEOUT_SEC (1 to ZD_IDLE_TIMEOUT) shortens it,
 * so that a test can show an idle connection closed without waiting the full time. */
static ev_tstamp idle_timeout(void) {
        const char *e = secure_getenv("ZYGOTE_IDLE_TIMEOUT_SEC");
        double v = e ? strtod(e, NULL) : 0;

        return v >= 0.1 && v < ZD_IDLE_TIMEOUT ? v : ZD_IDLE_TIMEOUT;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: zygoted [OPTIONS]\n"
                   "       zygoted --check-profile FILE [--dump-bpf OUT]\n"
                   "\n"
                   "Serves sandboxed process launches over a Unix socket (varlink protocol\n"
                   "io.zygote.Launcher), from one pre-loaded reference process per seccomp profile.\n"
                   "\n"
                   "Options:\n"
                   "  --socket PATH         listen here (default: $ZYGOTE_SOCKET, else\n"
                   "                        /run/zygote/zygoted.sock as root,\n"
                   "                        $XDG_RUNTIME_DIR/zygote/zygoted.sock otherwise, or\n"
                   "                        /run/user/UID/zygote/zygoted.sock without it)\n"
                   "  --profiles DIR        load *.json profiles from DIR; repeatable, a later DIR\n"
                   "                        overrides a profile of the same name (default: the bundled\n"
                   "                        profiles, then /etc/zygote/profiles if it exists)\n"
                   "  --container-root DIR  the state of the containers it starts (default: containers\n"
                   "                        beside the socket, /run/zygote/containers as root)\n"
                   "  --tier TIER           auto (default), clone, inherit or load: force how workers\n"
                   "                        get their filter (for tests and benchmarks); a profile that\n"
                   "                        cannot use a forced tier is left out, --tier clone on a\n"
                   "                        kernel without SECCOMP_CLONE_FILTER fails at start-up\n"
                   "  --pool-max N          pre-forked workers per profile of the inherit tier, at\n"
                   "                        most (default 0: none, every spawn asks the reference)\n"
                   "  --fork-workers        references fork every worker (a copy of their memory)\n"
                   "                        rather than make it sharing their memory until its exec\n"
                   "  --check-profile FILE  compile one profile file, print what it gives, and exit\n"
                   "                        0 (good) or 1 (bad), like nginx -t\n"
                   "  --dump-bpf OUT        with --check-profile: also write the compiled program to\n"
                   "                        OUT, a raw array of struct sock_filter\n"
                   "  --version             print the version\n"
                   "  -h, --help            this text\n"
                   "\n"
                   "Environment: ZYGOTE_SOCKET, ZYGOTE_LOG_LEVEL (debug, info, notice, warning, err),\n"
                   "ZYGOTE_DISABLE_FEATURES=clone_filter,capbset_drop_mask,pid_namespace,caller_cache,caller_threads,"
                   "caller_filters,\nnamespace_pool,scopes,nocopy_worker,"
                   "caller_bpf,"
                   "pool (force the fallbacks),\n"
                   "ZYGOTE_REF_HELPER (path of zygote-ref).\n");
}

static int default_socket(char **ret) {
        char buf[sizeof(((struct sockaddr_un *) NULL)->sun_path) + 1];
        int r = zy_protocol_socket_path(buf, sizeof(buf));
        if (r < 0)
                return r;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

static bool is_dir(const char *p) {
        struct stat st;
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int add_dir(struct zd_daemon *d, const char *dir) {
        char **n = realloc(d->profile_dirs, (d->n_profile_dirs + 1) * sizeof(char *));
        if (!n)
                return -ENOMEM;
        d->profile_dirs = n;
        n[d->n_profile_dirs] = strdup(dir);
        if (!n[d->n_profile_dirs])
                return -ENOMEM;
        d->n_profile_dirs++;
        return 0;
}

/* systemd's STATUS= line: profiles by tier, tasks, spawns so far. */
static void status_line(struct zd_daemon *d, char *buf, size_t size) {
        unsigned clone = 0, inherit = 0, load = 0;
        for (size_t i = 0; i < d->n_entries; i++) {
                enum zd_tier t = d->entries[i]->tier;
                clone += t == ZD_TIER_CLONE;
                inherit += t == ZD_TIER_INHERIT;
                load += t == ZD_TIER_LOAD;
        }
        snprintf(buf, size, "%zu profiles (clone %u, inherit %u, load %u), %u tasks, %lu spawned", d->n_entries, clone,
                 inherit, load, d->n_tasks, d->spawned);
}

static void notify_status(struct zd_daemon *d) {
        char status[256];
        if (!zd_sd_enabled())
                return;
        status_line(d, status, sizeof(status));
        zd_sd_notifyf("STATUS=%s", status);
}

static void on_stop(struct ev_loop *loop, ev_signal *w, int revents) {
        struct zd_daemon *d = w->data;
        zd_log(LOG_INFO, "signal %d: stopping; %u tasks keep running, %u out of the table are exiting", w->signum,
               d->n_tasks, zd_tasks_dying(d));
        zd_sd_stopping(loop, &d->watchdog);
        d->stopping = true;
        ev_break(loop, EVBREAK_ALL);
}

static void on_hup(struct ev_loop *loop, ev_signal *w, int revents) {
        struct zd_daemon *d = w->data;
        json_object *loaded, *failed;
        zd_sd_reloading();
        int r = zd_registry_reload(d, &loaded, &failed);
        zd_sd_notifyf("READY=1");
        notify_status(d);
        if (r < 0) {
                zd_log(LOG_ERR, "reload failed: %s; the profiles loaded before stay in service", strerror(-r));
                return;
        }
        zd_log(LOG_INFO, "reloaded: %zu profiles loaded, %zu failed", json_object_array_length(loaded),
               json_object_array_length(failed));
        json_object_put(loaded);
        json_object_put(failed);
}

static void on_status_timer(struct ev_loop *loop, ev_timer *w, int revents) {
        notify_status(w->data);
}

/* --check-profile: what the profile module made of one file, for a person to read. */
static void print_profile(const struct zp_profile *p, FILE *out) {
        unsigned major, minor, micro;

        fprintf(out, "profile:       %s (%s)\n", p->name, p->path);
        fprintf(out, "capabilities: ");
        if (p->caps_keep == 0)
                fprintf(out, " (none)");
        for (unsigned c = 0; c < 64; c++) {
                _cleanup_free_ char *name = NULL;
                if (!(p->caps_keep & (UINT64_C(1) << c)))
                        continue;
                if (zp_cap_to_name(c, &name) < 0)
                        fprintf(out, " %u", c);
                else
                        fprintf(out, " %s", name);
        }
        fprintf(out, "\nno_new_privs:  %s\n", p->no_new_privs ? "yes" : "no");
        if (p->access_all)
                fprintf(out, "access:        everyone who can reach the socket\n");
        else {
                fprintf(out, "access:        root");
                for (size_t i = 0; i < p->n_access_uids; i++)
                        fprintf(out, ", uid %u", (unsigned) p->access_uids[i]);
                for (size_t i = 0; i < p->n_access_gids; i++)
                        fprintf(out, ", gid %u", (unsigned) p->access_gids[i]);
                fprintf(out, "\n");
        }
        fprintf(out, "architectures:");
        for (size_t i = 0; i < p->n_arches; i++) {
                const char *a = zp_profile_arch_name(p->arches[i]);
                if (a)
                        fprintf(out, " %s", a);
                else
                        fprintf(out, " 0x%08x", p->arches[i]);
        }
        zp_profile_libseccomp_version(&major, &minor, &micro);
        fprintf(out, "\ninstructions:  %zu\n", p->bpf_len);
        fprintf(out, "longest path:  %u instructions\n", p->longest_path);
        fprintf(out, "rules:         %u (%u syscall names unknown to libseccomp %u.%u.%u, skipped)\n", p->n_rules,
                p->skipped_syscalls, major, minor, micro);
        fprintf(out, "flags:         0x%x\n", p->filter_flags);
        fprintf(out, "worker setup:  %s%s%s\n", p->worker_setup_ok ? "allowed (inherit tier possible)" : "blocked at ",
                p->worker_setup_ok ? "" : p->worker_setup_blocked, p->worker_setup_ok ? "" : " (load tier)");
        fprintf(out, "compile time:  %.3f ms\n", (double) p->compile_nsec / 1e6);
        fprintf(out, "sha256:        %s\n", p->hash);
}

/* The compiled program as a raw array of struct sock_filter, what seccomp_export_bpf() writes:
 * the kernel lane (tests/kernel/) times the filter step on the default profile's own program. */
static int dump_bpf(const struct zp_profile *p, const char *out) {
        const char *q = (const char *) p->bpf;
        size_t left = p->bpf_len * sizeof(p->bpf[0]);
        _cleanup_close_ int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0)
                return -errno;
        while (left > 0) {
                ssize_t n = write(fd, q, left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                q += n;
                left -= (size_t) n;
        }
        return close(TAKE_FD(fd)) < 0 ? -errno : 0;
}

static int check_profile(const char *path, const char *dump) {
        _cleanup_free_ char *error = NULL;
        struct zp_profile *p = NULL;
        int r = zp_profile_load_file(path, &p, &error);
        if (r < 0) {
                fprintf(stderr, "zygoted: %s\n", error ? error : strerror(-r));
                return 1;
        }
        print_profile(p, stdout);
        r = dump ? dump_bpf(p, dump) : 0;
        if (r < 0)
                fprintf(stderr, "zygoted: --dump-bpf %s: %s\n", dump, strerror(-r));
        zp_profile_free(p);
        return r < 0 ? 1 : 0;
}

/* The command line. Returns -1 to go on serving, else the exit code (--help, --version,
 * --check-profile, a bad option). */
static int parse_options(int argc, char **argv, struct zd_daemon *d, char **socket_path) {
        enum {
                OPT_SOCKET = 0x100,
                OPT_PROFILES,
                OPT_TIER,
                OPT_CHECK,
                OPT_DUMP_BPF,
                OPT_VERSION,
                OPT_CONTAINER_ROOT,
                OPT_POOL_MAX,
                OPT_FORK_WORKERS
        };
        static const struct option options[] = {
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "profiles", required_argument, NULL, OPT_PROFILES },
                { "tier", required_argument, NULL, OPT_TIER },
                { "container-root", required_argument, NULL, OPT_CONTAINER_ROOT },
                { "pool-max", required_argument, NULL, OPT_POOL_MAX },
                { "fork-workers", no_argument, NULL, OPT_FORK_WORKERS },
                { "check-profile", required_argument, NULL, OPT_CHECK },
                { "dump-bpf", required_argument, NULL, OPT_DUMP_BPF },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *check = NULL, *dump = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case OPT_SOCKET:
                        free(*socket_path);
                        *socket_path = strdup(optarg);
                        break;
                case OPT_PROFILES:
                        if (!is_dir(optarg)) {
                                fprintf(stderr, "zygoted: --profiles %s: not a directory\n", optarg);
                                return 2;
                        }
                        if (add_dir(d, optarg) < 0)
                                return 1;
                        break;
                case OPT_TIER:
                        if (zd_tier_from_string(optarg, &d->forced_tier) < 0) {
                                fprintf(stderr, "zygoted: --tier: '%s' is not one of auto, clone, inherit, load\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case OPT_CONTAINER_ROOT:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "zygoted: --container-root %s: not an absolute path\n", optarg);
                                return 2;
                        }
                        d->container_root = optarg;
                        break;
                case OPT_POOL_MAX: {
                        char *end;
                        unsigned long n = strtoul(optarg, &end, 10);

                        if (!*optarg || *end || n > ZD_POOL_MAX_LIMIT) {
                                fprintf(stderr, "zygoted: --pool-max: '%s' is not a number from 0 to %d\n", optarg,
                                        ZD_POOL_MAX_LIMIT);
                                return 2;
                        }
                        d->pool_max = (unsigned) n;
                        break;
                }
                case OPT_FORK_WORKERS:
                        d->fork_workers = true;
                        break;
                case OPT_CHECK:
                        check = optarg;
                        break;
                case OPT_DUMP_BPF:
                        dump = optarg;
                        break;
                case OPT_VERSION:
                        printf("zygoted %s\n", ZYGOTE_VERSION);
                        return 0;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "zygoted: unexpected argument '%s' (see --help)\n", argv[optind]);
                return 2;
        }
        if (dump && !check) {
                fprintf(stderr, "zygoted: --dump-bpf goes with --check-profile (see --help)\n");
                return 2;
        }
        if (check)
                return check_profile(check, dump);
        return -1;
}

/* First of all: zygoted runs from a sealed memfd copy of itself (container/sealed-copy.c, the
 * CVE-2019-5736 class): a container's init and an exec'd process are copies of zygoted until
 * their execve, and /proc/PID/exe of them must name no file anyone could write. The reference
 * helper beside the program is found before the program is a memfd. */
static int run_sealed(char **argv) {
        char helper[PATH_MAX];
        int r;

        if (!secure_getenv("ZYGOTE_REF_HELPER") && zr_helper_path(helper, sizeof(helper)) >= 0 &&
            setenv("ZYGOTE_REF_HELPER", helper, 1) < 0)
                return -errno;
        /* the file it ran from, for the journal (log.h): before the re-exec only, where
         * /proc/self/exe is still that file */
        ssize_t n = readlink("/proc/self/exe", helper, sizeof(helper) - 1);
        if (n > 0 && (helper[n] = '\0', strncmp(helper, "/memfd:", 7) != 0) &&
            setenv("ZYGOTE_SEALED_FROM", helper, 1) < 0)
                return -errno;
        r = zct_runc_run_sealed(argv);
        if (r < 0)
                fprintf(stderr, "zygoted: re-executing from a sealed copy of this program: %s\n", strerror(-r));
        return r;
}

/* The containers' state beside the socket: /run/zygote/zygoted.sock's is /run/zygote/containers,
 * so that two daemons never share it. */
static int container_root_default(const char *socket_path, char **ret) {
        const char *slash = strrchr(socket_path, '/');
        int n = slash ? (int) (slash - socket_path) : 1;

        if (asprintf(ret, "%.*s/containers", n, slash ? socket_path : ".") < 0)
                return -ENOMEM;
        return 0;
}

/* The process itself, before anything is started: socket path, profile directories, who it runs
 * as, not dumpable, SIGPIPE ignored, room for many fds. */
static int setup_process(struct zd_daemon *d, char **socket_path) {
        struct rlimit rl;
        int r;

        if (!*socket_path && (r = default_socket(socket_path)) < 0) {
                fprintf(stderr, "zygoted: the default socket path is too long: %s; use --socket PATH\n", strerror(-r));
                return r;
        }
        d->server.socket_path = *socket_path;
        if (!d->container_root && container_root_default(*socket_path, &d->container_root_buf) < 0) {
                fprintf(stderr, "zygoted: no default for --container-root beside %s\n", *socket_path);
                return -ENOMEM;
        }
        if (!d->container_root)
                d->container_root = d->container_root_buf;
        if (d->n_profile_dirs == 0) {
                add_dir(d, is_dir(ZYGOTE_PROFILES_DIR) ? ZYGOTE_PROFILES_DIR : ZYGOTE_SOURCE_PROFILES_DIR);
                if (is_dir("/etc/zygote/profiles"))
                        add_dir(d, "/etc/zygote/profiles");
        }
        d->uid = geteuid();
        d->gid = getegid();
        d->privileged = d->uid == 0;
#if !defined(__SANITIZE_ADDRESS__)
        /* Not dumpable: an unprivileged zygoted's tasks run as its own user, and could otherwise
         * ptrace it or read its memory (other callers' requests). Not under ASan, whose leak
         * check attaches to the process with ptrace. */
        (void) prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
#endif
        /* Writes to a held worker's pipe or a gone client must not kill the daemon; the worker
         * resets every signal disposition before exec. */
        signal(SIGPIPE, SIG_IGN);
        /* Each connection, task and reference holds fds: allow many. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                d->nofile_soft = rl.rlim_cur; /* what tasks get back */
                rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        return 0;
}

/* The reference helper opened once, and what the kernel offers, logged. */
static int probe_kernel(struct zd_daemon *d) {
        int r = zr_helper_path(d->helper, sizeof(d->helper));

        if (r >= 0)
                r = d->helper_fd = zr_helper_open(d->helper);
        if (r < 0) {
                zd_log(LOG_ERR, "cannot find the reference helper zygote-ref: %s", strerror(-r));
                return r;
        }
        r = ze_probe_features(&d->features);
        if (r < 0) {
                zd_log(LOG_ERR, "probing the kernel failed: %s", strerror(-r));
                return r;
        }
        zd_log(LOG_INFO, "kernel: SECCOMP_CLONE_FILTER %s (%s), PR_CAPBSET_DROP_MASK %s (%s), cap_last_cap %u",
               d->features.clone_filter ? "yes" : "no", d->features.clone_filter_reason,
               d->features.capbset_drop_mask ? "yes" : "no", d->features.capbset_drop_mask_reason,
               d->features.cap_last);
        d->own_filter = zd_own_filter_check();
        d->shared_filters = d->own_filter ? zd_own_filter_shared() : 0;
        if (d->features.pid_namespace)
                zd_log(LOG_INFO, "tasks: one pid namespace per profile (%s)", d->features.pid_namespace_reason);
        else
                zd_log(LOG_WARNING,
                       "tasks share zygoted's pid namespace: a task can signal, and without Yama "
                       "ptrace, its caller's other processes (no pid namespace: %s)",
                       d->features.pid_namespace_reason);
        if (d->pool_max > 0 && ze_feature_disabled("pool"))
                d->pool_max = 0;
        zd_log(LOG_INFO, "inherit tier: %s", d->pool_max > 0 ? "a pool of pre-forked workers per profile" : "no pool");
        if (ze_feature_disabled("nocopy_worker"))
                d->fork_workers = true;
        zd_log(LOG_INFO, "inherit tier: workers %s", d->fork_workers ? "forked" : "sharing the reference's memory");
        if (d->forced_tier == ZD_TIER_CLONE && !d->features.clone_filter) {
                zd_log(LOG_ERR, "--tier clone: this kernel lacks SECCOMP_CLONE_FILTER (%s)",
                       d->features.clone_filter_reason);
                return -ENOSYS;
        }
        return 0;
}

/* How the other threads of a multi-threaded caller are read at each call, said once: in one read()
 * of the BPF task iterator, or through each thread's /proc files, and why. */
static void caller_threads_reader(void) {
        int r;

        if (ze_feature_disabled("caller_bpf")) {
                zd_log(LOG_INFO, "callers' threads: read through /proc (BPF task iterator disabled by "
                                 "ZYGOTE_DISABLE_FEATURES)");
                return;
        }
        r = zd_caller_bpf_load();
        if (r >= 0)
                zd_log(LOG_INFO, "callers' threads: read by a BPF task iterator, every thread in one read()");
        else
                zd_log(LOG_INFO,
                       "callers' threads: read through /proc (no BPF task iterator: %s; it needs CAP_BPF and "
                       "CAP_PERFMON, the kernel's BTF and Linux 6.1)",
                       strerror(-r));
}

/* The loop, the task table, the profiles and their references, the listening socket, and the
 * tasks of an earlier zygoted adopted. */
static int start_serving(struct zd_daemon *d, int n_passed) {
        int r;

        /* Not the default loop: libev's default loop reaps children itself on SIGCHLD, which
         * would steal our waitid(P_PIDFD). */
        d->loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
        if (!d->loop) {
                zd_log(LOG_ERR, "cannot create the event loop");
                return -ENOMEM;
        }
        r = zd_tasks_init(d);
        if (r < 0)
                return r;
        r = zd_registry_load(d);
        if (r < 0) {
                zd_log(LOG_ERR, "no profile could be loaded from %s%s: nothing to serve", d->profile_dirs[0],
                       d->n_profile_dirs > 1 ? " and the other --profiles directories" : "");
                zd_registry_free(d); /* the failures it kept, for a leak check at exit */
                return r;
        }
        d->server.loop = d->loop;
        d->server.on_call = zd_methods_call;
        d->server.on_disconnect = zd_methods_disconnect;
        d->server.userdata = d;
        d->server.closer.disabled = ze_feature_disabled("fd_closer");
        /* the owner of a caller by /proc/PID/ns/user, as on kernels before PIDFD_GET_USER_NAMESPACE */
        d->server.owner_by_proc = ze_feature_disabled("pidfd_userns");
        d->server.idle_timeout = idle_timeout();
        d->caller_filters = d->privileged && !ze_feature_disabled("caller_filters");
        d->caller_cache = ze_feature_disabled("caller_cache")     ? 0
                          : ze_feature_disabled("caller_threads") ? ZD_CALLER_KEEP
                                                                  : ZD_CALLER_KEEP | ZD_CALLER_KEEP_THREADS;
        if (d->caller_cache) {
                r = zd_caller_keep_own();
                if (r < 0) {
                        zd_log(LOG_ERR, "cannot read zygoted's own /proc files: %s", strerror(-r));
                        return r;
                }
        }
        caller_threads_reader();
        zd_nspool_init(d);
        zd_recorder_init(&d->recorder, d->privileged, d->loop, zd_task_record_done);
        zd_log(LOG_INFO, "recording with eBPF: %s", d->recorder.reason);
        r = zd_server_listen(&d->server);
        if (r < 0) {
                zd_log(LOG_ERR, "cannot listen on %s: %s", d->server.socket_path, strerror(-r));
                zd_registry_free(d);
                return r;
        }
        if (!d->server.closer.helpers)
                zd_log(LOG_WARNING,
                       "no fd closer (%s): callers' fds are closed here, and a FUSE file's "
                       "FLUSH can hold up the daemon",
                       d->server.closer.disabled ? "disabled" : strerror(-d->server.closer.error));
        zd_log(LOG_INFO, "listening on %s%s with %zu profiles",
               d->server.socket_activated ? "a socket from systemd, " : "", d->server.socket_path, d->n_entries);
        if (n_passed > 0)
                zd_adopt(d, &d->activation);
        else if (!getenv("NOTIFY_SOCKET"))
                zd_log(LOG_INFO, "not under systemd: no fd store, so tasks started by an earlier zygoted "
                                 "are not adopted (they keep running, unknown to this one)");
        zd_sd_activation_free(&d->activation);
        return 0;
}

/* Signals, READY=1 and the status timer; then the loop until SIGTERM or SIGINT. */
static void run_loop(struct zd_daemon *d) {
        char status[256];

        ev_signal_init(&d->sig_term, on_stop, SIGTERM);
        ev_signal_init(&d->sig_int, on_stop, SIGINT);
        ev_signal_init(&d->sig_hup, on_hup, SIGHUP);
        d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
        ev_signal_start(d->loop, &d->sig_term);
        ev_signal_start(d->loop, &d->sig_int);
        ev_signal_start(d->loop, &d->sig_hup);

        status_line(d, status, sizeof(status));
        zd_sd_ready(d->loop, &d->watchdog, status);
        ev_timer_init(&d->status_timer, on_status_timer, 5., 5.);
        d->status_timer.data = d;
        if (getenv("NOTIFY_SOCKET"))
                ev_timer_start(d->loop, &d->status_timer);

        ev_run(d->loop, 0);
}

int main(int argc, char **argv) {
        struct zd_daemon d = { .server.listen_fd = -EBADF, .helper_fd = -EBADF, .pool_max = ZD_POOL_MAX_DEFAULT };
        _cleanup_free_ char *socket_path = NULL;
        int r, n_passed;

        r = run_sealed(argv);
        if (r < 0)
                return 1;
        r = parse_options(argc, argv, &d, &socket_path);
        if (r >= 0)
                return r;
        zd_log_open(secure_getenv("ZYGOTE_SEALED_FROM"));
        (void) unsetenv("ZYGOTE_SEALED_FROM"); /* nothing zygoted starts needs it */
        if (setup_process(&d, &socket_path) < 0)
                return 1;
        /* Before any process is started: fds passed by systemd are not CLOEXEC until this marks
         * them, and LISTEN_* must not reach the probes or the reference processes. */
        n_passed = zd_sd_listen(&d.activation, &d.server.listen_fd);
        d.server.socket_activated = d.server.listen_fd >= 0;
        if (n_passed < 0)
                zd_log(LOG_WARNING, "ignoring LISTEN_FDS: %s", strerror(-n_passed));
        if (probe_kernel(&d) < 0 || start_serving(&d, n_passed) < 0)
                return 1;

        run_loop(&d);

        zd_server_stop(&d.server);
        zd_filters_free(&d);
        zd_registry_free(&d);
        zd_container_starts_free(&d);
        zd_container_deletes_free(&d);
        zd_nspool_free(&d);
        zd_recorder_free(&d.recorder);
        zd_tasks_free(&d);
        zd_scopes_free(&d);
        free(d.container_root_buf);
        ev_loop_destroy(d.loop);
        for (size_t i = 0; i < d.n_profile_dirs; i++)
                free(d.profile_dirs[i]);
        free(d.profile_dirs);
        return 0;
}
