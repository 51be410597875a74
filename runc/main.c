/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc: an OCI runtime with runc's command line, for podman (conmon) and containerd (the
 * runc v2 shim). See docs/CONTAINERS.md.
 *
 * `create` forks the container's first process itself, so that it stays in the caller's process
 * tree (conmon and the shim are child subreapers and learn its exit by reaping it): the init sets
 * up its sandbox (engine/sandbox.c), checks that its command can be executed, reports "ready" and
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "profile.h"
#include "runtime.h"
#include "util.h"


/* ---- option parsing: runc's flags come before the positional arguments ---- */

struct opt {
        const char *name;  /* long name without "--" */
        char short_name;
        bool has_arg;
        const char *value; /* NULL when not given; "" for a given flag without argument */
        const char **list; /* for repeatable options (-e) */
        size_t n_list;
};

/* Fills opts from argv[0..]; returns the index of the first positional argument (after which
 * everything is positional, as exec's command needs), or -1 after printing an error. */
static int parse_opts(const struct ctx *c, const char *cmd, int argc, char **argv, struct opt *opts, size_t n_opts) {
        int i;

        for (i = 0; i < argc; i++) {
                const char *a = argv[i], *val = NULL, *eq;
                struct opt *o = NULL;
                size_t len;

                if (a[0] != '-' || streq(a, "-"))
                        break;
                if (streq(a, "--")) {
                        i++;
                        break;
                }
                if (a[1] == '-') {
                        eq = strchr(a + 2, '=');
                        len = eq ? (size_t) (eq - a - 2) : strlen(a + 2);
                        for (size_t k = 0; k < n_opts; k++)
                                if (strlen(opts[k].name) == len && strncmp(opts[k].name, a + 2, len) == 0)
                                        o = &opts[k];
                        if (eq)
                                val = eq + 1;
                } else if (a[2] == '\0') {
                        for (size_t k = 0; k < n_opts; k++)
                                if (opts[k].short_name == a[1])
                                        o = &opts[k];
                }
                if (!o) {
                        /* single-dash long flags (-bundle) are accepted by urfave/cli too */
                        for (size_t k = 0; k < n_opts && a[1] != '-'; k++)
                                if (streq(opts[k].name, a + 1))
                                        o = &opts[k];
                        if (!o) {
                                error(c, "%s: unknown option %s", cmd, a);
                                return -1;
                        }
                }
                if (o->has_arg && !val) {
                        if (i + 1 >= argc) {
                                error(c, "%s: option %s needs an argument", cmd, a);
                                return -1;
                        }
                        val = argv[++i];
                }
                if (!o->has_arg)
                        val = "";
                o->value = val;
                if (o->list) {
                        o->list[o->n_list++] = val;
                }
        }
        return i;
}

static const char *opt_get(const struct opt *opts, size_t n, const char *name) {
        for (size_t k = 0; k < n; k++)
                if (streq(opts[k].name, name))
                        return opts[k].value;
        return NULL;
}

/* The options create, run and exec share, from their parsed opts. */
static void proc_args_get(struct proc_args *p, const char *id, const struct opt *o, size_t n) {
        const char *fds = opt_get(o, n, "preserve-fds");

        p->id = id;
        p->pid_file = opt_get(o, n, "pid-file");
        p->console_socket = opt_get(o, n, "console-socket");
        p->detach = opt_get(o, n, "detach") != NULL;
        p->preserve_fds = fds ? atoi(fds) : 0;
}


/* ---- the other commands ---- */


static int cmd_start(const struct ctx *c, const char *id) {
        _cleanup_free_ char *fifo = NULL;
        struct zrc_state st;
        int fd, ret = 1;

        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        switch (zrc_state_status(&st)) {
        case ZRC_STATUS_CREATED:
                break;
        case ZRC_STATUS_STOPPED:
                error(c, "cannot start a container that has stopped");
                goto out;
        default:
                error(c, "cannot start an already running container");
                goto out;
        }
        if (asprintf(&fifo, "%s/exec.fifo", st.dir) < 0)
                goto out;
        fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                error(c, "cannot start container %s: %s", id, errno == ENXIO ? "its init is gone" : errstr(errno));
                goto out;
        }
        if (write(fd, "s", 1) != 1)
                error(c, "cannot start container %s: %s", id, errstr(errno));
        else
                ret = 0;
        close(fd);
        (void) unlink(fifo);
out:
        zrc_state_done(&st);
        return ret;
}

static int cmd_state(const struct ctx *c, const char *id) {
        struct zrc_state st;
        json_object *o;

        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        o = zrc_state_to_json(&st);
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        zrc_state_done(&st);
        return 0;
}

static int cmd_list(const struct ctx *c, bool quiet, bool json) {
        DIR *d = opendir(c->root);
        json_object *arr = json_object_new_array();
        struct dirent *de;

        if (!json && !quiet)
                printf("%-20s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
        while (d && (de = readdir(d))) {
                struct zrc_state st;
                json_object *o;

                if (de->d_name[0] == '.' || zrc_state_load(c->root, de->d_name, &st) < 0)
                        continue;
                o = zrc_state_to_json(&st);
                if (quiet)
                        printf("%s\n", st.id);
                else if (!json)
                        printf("%-20s %-8d %-10s %-40s %-32s %u\n", st.id,
                               json_object_get_int(json_object_object_get(o, "pid")),
                               json_object_get_string(json_object_object_get(o, "status")), st.bundle, st.created,
                               (unsigned) st.owner);
                json_object_array_add(arr, o);
                zrc_state_done(&st);
        }
        if (d)
                closedir(d);
        if (json)
                printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(arr);
        return 0;
}

static int cmd_kill(const struct ctx *c, const char *id, const char *signame, bool all) {
        struct zrc_state st;
        int sig = parse_signal(signame), fd, r, ret = 1;

        if (sig < 0)
                return error(c, "unknown signal \"%s\"", signame);
        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        if (all) {
                _cleanup_free_ int *fds = NULL;
                size_t n = 0;
                r = zrc_cgroup_pidfds(&st.cgroup, &fds, &n);

                if (r < 0)
                        error(c, "kill --all: %s", errstr(-r));
                else {
                        for (size_t i = 0; i < n; i++) {
                                (void) pidfd_kill(fds[i], sig);
                                close(fds[i]);
                        }
                        if (sig == SIGKILL)
                                (void) zrc_cgroup_freeze(&st.cgroup, false);
                        ret = 0;
                }
                goto out;
        }
        fd = zrc_state_pidfd(&st);
        if (fd < 0) {
                error(c, "container not running");
                goto out;
        }
        r = pidfd_kill(fd, sig);
        if (r < 0)
                error(c, "kill: %s", errstr(-r));
        else
                ret = 0;
        if (sig == SIGKILL && zrc_cgroup_is_frozen(&st.cgroup) > 0)
                (void) zrc_cgroup_freeze(&st.cgroup, false);
        close(fd);
out:
        zrc_state_done(&st);
        return ret;
}

static int cmd_delete(const struct ctx *c, const char *id, bool force) {
        struct zrc_state st;
        enum zrc_status s;
        int r = zrc_state_load(c->root, id, &st);

        if (r == -ENOENT) {
                _cleanup_free_ char *dir = NULL;
                /* a create that died half-way may have left the directory without state */
                if (zrc_state_dir(c->root, id, &dir) >= 0)
                        (void) zrc_rm_rf(dir);
                return force ? 0 : error(c, "container does not exist: %s", id);
        }
        if (r < 0)
                return error(c, "container %s: state: %s", id, errstr(-r));
        s = zrc_state_status(&st);
        if ((s == ZRC_STATUS_RUNNING || s == ZRC_STATUS_PAUSED) && !force) {
                error(c, "cannot delete container %s that is not stopped: %s", id, zrc_status_to_string(s));
                zrc_state_done(&st);
                return 1;
        }
        destroy(&st);
        zrc_state_done(&st);
        return 0;
}

static int cmd_ps(const struct ctx *c, const char *id, bool json) {
        _cleanup_free_ pid_t *pids = NULL;
        struct zrc_state st;
        size_t n = 0;
        int r;

        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        r = zrc_cgroup_pids(&st.cgroup, &pids, &n);
        zrc_state_done(&st);
        if (r < 0)
                return error(c, "ps: %s", errstr(-r));
        if (json) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
                return 0;
        }
        printf("%-8s %s\n", "PID", "CMD");
        for (size_t i = 0; i < n; i++) {
                char path[64], comm[256] = "?";
                FILE *f;

                snprintf(path, sizeof(path), "/proc/%d/comm", (int) pids[i]);
                f = fopen(path, "re");
                if (f) {
                        if (fgets(comm, sizeof(comm), f))
                                comm[strcspn(comm, "\n")] = '\0';
                        fclose(f);
                }
                printf("%-8d %s\n", (int) pids[i], comm);
        }
        return 0;
}

static int cmd_pause(const struct ctx *c, const char *id, bool frozen) {
        struct zrc_state st;
        enum zrc_status s;
        int r, ret = 1;

        if (zrc_runc_load_state(c, id, &st) < 0)
                return 1;
        s = zrc_state_status(&st);
        if (frozen && s != ZRC_STATUS_RUNNING && s != ZRC_STATUS_CREATED)
                error(c, "container not running");
        else if (!frozen && s != ZRC_STATUS_PAUSED)
                error(c, "container not paused");
        else if ((r = zrc_cgroup_freeze(&st.cgroup, frozen)) < 0)
                error(c, "freezer: %s", errstr(-r));
        else
                ret = 0;
        zrc_state_done(&st);
        return ret;
}

static int cmd_spec(const struct ctx *c, const char *bundle, bool rootless) {
        _cleanup_free_ char *path = NULL;
        json_object *spec = zrc_oci_default_spec(rootless);
        int r;

        if (!spec || asprintf(&path, "%s/config.json", bundle ? bundle : ".") < 0)
                return error(c, "out of memory");
        if (access(path, F_OK) == 0) {
                json_object_put(spec);
                return error(c, "File %s exists. Remove it first", path);
        }
        r = json_object_to_file_ext(path, spec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        json_object_put(spec);
        return r < 0 ? error(c, "writing %s: %s", path, errstr(errno)) : 0;
}

static int cmd_features(void) {
        printf("{\n"
               "  \"ociVersionMin\": \"1.0.0\",\n"
               "  \"ociVersionMax\": \"" ZRC_RUNC_OCI_VERSION "\",\n"
               "  \"hooks\": [],\n"
               "  \"mountOptions\": [\"ro\",\"rw\",\"nosuid\",\"suid\",\"nodev\",\"dev\",\"noexec\",\"exec\","
               "\"bind\",\"rbind\",\"private\",\"rprivate\",\"shared\",\"rshared\",\"slave\",\"rslave\","
               "\"unbindable\",\"runbindable\",\"relatime\",\"norelatime\",\"strictatime\",\"noatime\"],\n"
               "  \"linux\": {\n"
               "    \"namespaces\": [\"cgroup\",\"ipc\",\"mount\",\"network\",\"pid\",\"user\",\"uts\"],\n"
               "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false, \"systemdUser\": false},\n"
               "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\",\"SCMP_ACT_ERRNO\","
               "\"SCMP_ACT_KILL\",\"SCMP_ACT_KILL_PROCESS\",\"SCMP_ACT_KILL_THREAD\",\"SCMP_ACT_LOG\","
               "\"SCMP_ACT_TRACE\",\"SCMP_ACT_TRAP\"]},\n"
               "    \"apparmor\": {\"enabled\": false},\n"
               "    \"selinux\": {\"enabled\": false}\n"
               "  },\n"
               "  \"annotations\": {\"io.zygote.runtime\": \"zygote-runc " ZYGOTE_VERSION "\"}\n"
               "}\n");
        return 0;
}


/* ---- main ---- */

static const char usage[] =
        "usage: zygote-runc [global options] COMMAND [options] ARGS\n"
        "\n"
        "An OCI runtime with runc's command line.\n"
        "\n"
        "Commands:\n"
        "  create --bundle DIR [--pid-file F] [--console-socket S] [--preserve-fds N] ID\n"
        "  start ID                  run the created container's process\n"
        "  run [--bundle DIR] [--detach] [--pid-file F] ID   create, start and wait\n"
        "  state ID                  print runc's state JSON\n"
        "  list [-q] [--format table|json]\n"
        "  kill [--all] ID [SIGNAL]  SIGNAL by name or number, default TERM\n"
        "  delete [--force] ID\n"
        "  ps [--format table|json] ID\n"
        "  pause ID / resume ID      cgroup freezer\n"
        "  exec [--process F | ARGS] [--detach] [--pid-file F] [--tty] [--console-socket S]\n"
        "       [--cwd D] [--env K=V] [--user UID[:GID]] ID [COMMAND ARGS...]\n"
        "  spec [--bundle DIR] [--rootless]   write a default config.json\n"
        "  features                  print what this runtime supports\n"
        "\n"
        "Global options:\n"
        "  --root DIR          state directory (default " ZRC_RUNC_DEFAULT_ROOT ")\n"
        "  --log FILE          also log to FILE\n"
        "  --log-format text|json\n"
        "  --debug\n"
        "  --zygote-socket PATH  zygoted to ask for compiled seccomp filters (default $ZYGOTE_SOCKET,\n"
        "                      else libzygote's default socket)\n"
        "  --no-zygote         compile seccomp filters here (also ZYGOTE_RUNC_FILTER=local)\n"
        "  --systemd-cgroup    accepted; the systemd cgroup driver is not supported\n"
        "  --version, --help\n";

static int need_id(const struct ctx *c, const char *cmd, int argc, char **argv, int i) {
        if (i >= argc)
                return error(c, "%s: a container id is required", cmd), -1;
        return 0;
}

int main(int argc, char **argv) {
        struct ctx c = { .root = ZRC_RUNC_DEFAULT_ROOT };
        const char *cmd;
        int i, r;

        /* first of all: neither this process nor anything it forks into a container may have the
         * host's file as /proc/PID/exe (sealed-copy.c) */
        r = zrc_runc_run_sealed(argv);
        if (r < 0)
                return error(&c, "re-executing from a sealed copy of this program: %s", errstr(-r));
        /* Nothing this program forks is dumpable until its execve (the dumpable flag is inherited
         * at fork): the init held until `start` and an exec'd process during its setup sit in the
         * container's pid namespace, and a dumpable one opens its /proc/PID/{exe,mem,environ} and,
         * by pidfd_getfd, its fds to the container's processes. execve makes the container's own
         * program dumpable again. */
        if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0)
                return error(&c, "prctl(PR_SET_DUMPABLE): %s", errstr(errno));

        for (i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *v = NULL;
                bool takes = false;

                if (a[0] != '-')
                        break;
                if (streq(a, "--version") || streq(a, "-v")) {
                        printf("zygote-runc version %s\nspec: %s\n", ZYGOTE_VERSION, ZRC_RUNC_OCI_VERSION);
                        return 0;
                }
                if (streq(a, "--help") || streq(a, "-h")) {
                        fputs(usage, stdout);
                        return 0;
                }
                for (const char *const *n = (const char *const[]){ "root", "log", "log-format", "rootless", "criu",
                                                                     "zygote-socket", NULL };
                     *n; n++) {
                        size_t l = strlen(*n);
                        const char *s = a[1] == '-' ? a + 2 : a + 1;
                        if (strncmp(s, *n, l) == 0 && (s[l] == '\0' || s[l] == '=')) {
                                takes = true;
                                if (s[l] == '=')
                                        v = s + l + 1;
                                else if (i + 1 < argc)
                                        v = argv[++i];
                                else
                                        return error(&c, "option %s needs an argument", a);
                                if (streq(*n, "root"))
                                        c.root = v;
                                else if (streq(*n, "log"))
                                        c.log_path = v;
                                else if (streq(*n, "log-format"))
                                        c.log_json = streq(v, "json");
                                else if (streq(*n, "zygote-socket"))
                                        c.zygote_socket = v;
                                break;
                        }
                }
                if (takes)
                        continue;
                if (streq(a, "--debug") || streq(a, "-debug"))
                        c.debug = true;
                else if (streq(a, "--no-zygote"))
                        c.no_zygote = true;
                else if (streq(a, "--systemd-cgroup") || streq(a, "-systemd-cgroup"))
                        fprintf(stderr, "zygote-runc: warning: --systemd-cgroup is not supported; using cgroupfs\n");
                else
                        return error(&c, "unknown global option %s", a);
        }
        zrc_runc_filter_setup(&c, c.zygote_socket, c.no_zygote);
        if (i >= argc) {
                fputs(usage, stderr);
                return 1;
        }
        cmd = argv[i++];
        argc -= i;
        argv += i;
        if (argc > 0 && (streq(argv[0], "--help") || streq(argv[0], "-h"))) {
                fputs(usage, stdout);
                return 0;
        }

        if (streq(cmd, "create") || streq(cmd, "run")) {
                struct opt o[] = { { "bundle", 'b', true }, { "pid-file", 0, true }, { "console-socket", 0, true },
                                   { "preserve-fds", 0, true }, { "detach", 'd', false }, { "no-pivot", 0, false },
                                   { "no-new-keyring", 0, false }, { "keep", 0, false }, { "no-subreaper", 0, false } };
                struct create_args a = { .run = streq(cmd, "run") };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));

                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
                a.bundle = opt_get(o, ELEMENTSOF(o), "bundle");
                if (!a.bundle)
                        a.bundle = ".";
                return cmd_create_or_run(&c, &a);
        }
        if (streq(cmd, "exec")) {
                const char *env[256];
                struct opt o[] = { { "process", 'p', true }, { "pid-file", 0, true }, { "console-socket", 0, true },
                                   { "detach", 'd', false }, { "tty", 't', false }, { "cwd", 0, true },
                                   { "env", 'e', true, .list = env }, { "user", 'u', true }, { "preserve-fds", 0, true },
                                   { "no-new-privs", 0, false }, { "ignore-paused", 0, false }, { "cap", 'c', true },
                                   { "process-label", 0, true }, { "apparmor", 0, true } };
                struct exec_args a = {};
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));

                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                proc_args_get(&a.p, argv[k], o, ELEMENTSOF(o));
                a.args = argv + k + 1;
                a.n_args = argc - k - 1;
                a.process = opt_get(o, ELEMENTSOF(o), "process");
                a.tty = opt_get(o, ELEMENTSOF(o), "tty") != NULL;
                a.cwd = opt_get(o, ELEMENTSOF(o), "cwd");
                a.user = opt_get(o, ELEMENTSOF(o), "user");
                a.env = env;
                a.n_env = o[6].n_list;
                return cmd_exec(&c, &a);
        }
        if (streq(cmd, "kill")) {
                struct opt o[] = { { "all", 'a', false } };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));
                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                return cmd_kill(&c, argv[k], k + 1 < argc ? argv[k + 1] : NULL, o[0].value != NULL);
        }
        if (streq(cmd, "delete")) {
                struct opt o[] = { { "force", 'f', false } };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));
                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                return cmd_delete(&c, argv[k], o[0].value != NULL);
        }
        if (streq(cmd, "ps")) {
                struct opt o[] = { { "format", 'f', true } };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));
                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                return cmd_ps(&c, argv[k], o[0].value && streq(o[0].value, "json"));
        }
        if (streq(cmd, "list")) {
                struct opt o[] = { { "format", 'f', true }, { "quiet", 'q', false } };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));
                if (k < 0)
                        return 1;
                return cmd_list(&c, o[1].value != NULL, o[0].value && streq(o[0].value, "json"));
        }
        if (streq(cmd, "spec")) {
                struct opt o[] = { { "bundle", 'b', true }, { "rootless", 0, false } };
                int k = parse_opts(&c, cmd, argc, argv, o, ELEMENTSOF(o));
                if (k < 0)
                        return 1;
                return cmd_spec(&c, o[0].value, o[1].value != NULL);
        }
        if (streq(cmd, "features"))
                return cmd_features();
        if (streq(cmd, "start") || streq(cmd, "state") || streq(cmd, "pause") || streq(cmd, "resume")) {
                int k = parse_opts(&c, cmd, argc, argv, NULL, 0);
                if (k < 0 || need_id(&c, cmd, argc, argv, k) < 0)
                        return 1;
                if (streq(cmd, "start"))
                        return cmd_start(&c, argv[k]);
                if (streq(cmd, "state"))
                        return cmd_state(&c, argv[k]);
                return cmd_pause(&c, argv[k], streq(cmd, "pause"));
        }
        return error(&c, "unknown command \"%s\" (see --help)", cmd);
}
