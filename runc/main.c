/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc: an OCI runtime with runc's command line, for podman (conmon) and containerd (the
 * runc v2 shim). See docs/CONTAINERS.md.
 *
 * main() runs the program from a sealed copy of itself, parses the global options once into the
 * command's context, and hands the rest of the command line to the verb's handler (verbs.h: one
 * file per command family).
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"
#include "verbs.h"

/* checkpoint and restore: named in --help, as runc names them, and refused with the reason. */
static int unsupported(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        (void) argc;
        (void) argv;
        return zct_error(c, "%s: checkpoint/restore is not supported by zygote-runc", v->name);
}

/* Every verb, in the order of --help. kill, delete and exec load the state themselves: kill checks
 * its signal first, delete with --force takes a missing container for deleted (and takes the lock
 * itself: a --regex pattern is no id), and exec.c's zct_exec_process() takes the id. */
static const struct zrc_verb verbs[] = {
        { "create", zrc_cmd_create, ZRC_VERB_ID,
          "create --bundle DIR [--pid-file F] [--console-socket S] [--preserve-fds N] ID" },
        { "start", zrc_cmd_start, ZRC_VERB_ID | ZRC_VERB_STATE | ZCT_VERB_LOCK,
          "start ID                  run the created container's process" },
        { "run", zrc_cmd_run, ZRC_VERB_ID, "run [--bundle DIR] [--detach] [--pid-file F] ID   create, start and wait" },
        { "state", zrc_cmd_state, ZRC_VERB_ID | ZRC_VERB_STATE, "state ID                  print runc's state JSON" },
        { "list", zrc_cmd_list, 0, "list [-q] [--format table|json]" },
        { "kill", zrc_cmd_kill, ZRC_VERB_ID, "kill [--all] ID [SIGNAL]  SIGNAL by name or number, default TERM" },
        { "delete", zrc_cmd_delete, ZRC_VERB_ID, "delete [--force] ID | delete [--force] --regex PATTERN" },
        { "ps", zrc_cmd_ps, ZRC_VERB_ID | ZRC_VERB_STATE | ZRC_VERB_FLAGS_FIRST,
          "ps [--format table|json] ID [-- PS-OPTIONS]   ps(1) -ef" },
        { "events", zrc_cmd_events, ZRC_VERB_ID | ZRC_VERB_STATE,
          "events [--stats] [--interval DURATION] ID   resource usage as JSON, every 5s or once" },
        { "pause", zrc_cmd_pause, ZRC_VERB_ID | ZRC_VERB_STATE | ZCT_VERB_LOCK,
          "pause ID / resume ID      cgroup freezer" },
        { "resume", zrc_cmd_resume, ZRC_VERB_ID | ZRC_VERB_STATE | ZCT_VERB_LOCK, NULL },
        { "update", zrc_cmd_update, ZRC_VERB_ID | ZRC_VERB_STATE | ZCT_VERB_LOCK,
          "update [--resources FILE|-] [--cpu-quota N] [--cpu-period N] [--cpu-share N] [--memory BYTES]\n"
          "       [--memory-reservation BYTES] [--memory-swap BYTES] [--pids-limit N] [--cpuset-cpus L]\n"
          "       [--cpuset-mems L] [--blkio-weight N] ID   new linux.resources for a container" },
        { "exec", zrc_cmd_exec, ZRC_VERB_ID | ZRC_VERB_FLAGS_FIRST,
          "exec [--process F | ARGS] [--detach] [--pid-file F] [--tty] [--console-socket S]\n"
          "       [--cwd D] [--env K=V] [--user UID[:GID]] [--additional-gids G] [--cap CAP]\n"
          "       [--no-new-privs] [--ignore-paused] [--preserve-fds N] [--cgroup [CONTROLLER,...:]PATH]\n"
          "       [--apparmor PROFILE] ID [COMMAND ARGS...]\n"
          "       (--process-label is refused: no SELinux label is applied)" },
        { "spec", zrc_cmd_spec, 0, "spec [--bundle DIR] [--rootless]   write a default config.json" },
        { "features", zrc_cmd_features, 0, "features                  print what this runtime supports" },
        { "checkpoint", unsupported, 0, "checkpoint ID / restore ID   not supported (no CRIU): refused" },
        { "restore", unsupported, 0, NULL },
};

static const char usage_global[] =
        "  --root DIR          state directory (default " ZCT_RUNC_DEFAULT_ROOT ", or $XDG_RUNTIME_DIR/zygote-runc\n"
        "                      for a user)\n"
        "  --rootless true|false|auto  go without the cgroups it may not create (default auto: not root,\n"
        "                      or root of a user namespace)\n"
        "  --log FILE          also log to FILE\n"
        "  --log-format text|json\n"
        "  --debug\n"
        "  --zygote-socket PATH  zygoted to ask for compiled seccomp filters (default $ZYGOTE_SOCKET,\n"
        "                      else libzygote's default socket)\n"
        "  --no-zygote         compile seccomp filters here (also ZYGOTE_RUNC_FILTER=local)\n"
        "  --systemd-cgroup    accepted; the systemd cgroup driver is not supported\n"
        "  --cgroup-manager cgroupfs|systemd  crun's spelling of the same choice (systemd: as above)\n"
        "  --version, --help\n";

/* --help in runc's sections (urfave/cli's): NAME, USAGE, VERSION, COMMANDS, GLOBAL OPTIONS. */
static void usage(FILE *f) {
        fputs("NAME:\n"
              "   zygote-runc - Open Container Initiative runtime, with runc's command line\n"
              "\n"
              "USAGE:\n"
              "   zygote-runc [global options] command [command options] [arguments...]\n"
              "\n"
              "VERSION:\n"
              "   " ZYGOTE_VERSION "\n"
              "spec: " ZCT_RUNC_OCI_VERSION "\n"
              "\n"
              "COMMANDS:\n",
              f);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (verbs[i].help)
                        fprintf(f, "     %s\n", verbs[i].help);
        fputs("\nGLOBAL OPTIONS:\n", f);
        fputs(usage_global, f);
}

/* COMMAND --help: runc's NAME and USAGE of the one command. */
static void usage_verb(const struct zrc_verb *v) {
        const struct zrc_verb *line = v;

        /* resume shares pause's line */
        for (size_t i = 0; !line->help && i < ELEMENTSOF(verbs); i++)
                if (verbs[i].help && strstr(verbs[i].help, v->name))
                        line = &verbs[i];
        printf("NAME:\n   zygote-runc %s\n\nUSAGE:\n   zygote-runc %s\n", v->name, line->help ? line->help : v->name);
}

/* The global options that take a value; those zygote-runc does not use are accepted and ignored. */
static const char *const global_with_value[] = { "root", "log",           "log-format",    "rootless",
                                                 "criu", "zygote-socket", "cgroup-manager" };

/* Sets global option argv[*i] (with its value, which may be the next word: *i moves past it). */
static int parse_global(struct zct_ctx *c, int argc, char **argv, int *i, bool *ret_no_zygote) {
        const char *a = argv[*i];
        const char *s = a[1] == '-' ? a + 2 : a + 1;

        for (size_t k = 0; k < ELEMENTSOF(global_with_value); k++) {
                const char *n = global_with_value[k], *v;
                size_t l = strlen(n);

                if (strncmp(s, n, l) != 0 || (s[l] != '\0' && s[l] != '='))
                        continue;
                if (s[l] == '=')
                        v = s + l + 1;
                else if (*i + 1 < argc)
                        v = argv[++*i];
                else
                        return zct_error(c, "option %s needs an argument", a);
                if (streq(n, "root"))
                        c->root = v;
                else if (streq(n, "rootless")) {
                        /* runc's: true, false or auto (the default: zct_rootless()) */
                        if (!streq(v, "true") && !streq(v, "false") && !streq(v, "auto"))
                                return zct_error(c, "--rootless: \"%s\" is not true, false or auto", v);
                        c->rootless = streq(v, "auto") ? zct_rootless() : streq(v, "true");
                } else if (streq(n, "log"))
                        c->log_path = v;
                else if (streq(n, "log-format") && (streq(v, "json") || streq(v, "text")))
                        c->log_json = streq(v, "json");
                else if (streq(n, "log-format"))
                        return zct_error(c, "invalid log-format \"%s\" (text or json)", v);
                else if (streq(n, "zygote-socket"))
                        c->filter.socket = v;
                else if (streq(n, "cgroup-manager") && streq(v, "systemd"))
                        fprintf(stderr,
                                "zygote-runc: warning: the systemd cgroup manager is not supported; using cgroupfs\n");
                else if (streq(n, "cgroup-manager") && !streq(v, "cgroupfs"))
                        /* crun's "disabled" would run the container in the runtime's own cgroup,
                         * out of reach of linux.resources and of `kill --all`: refused */
                        return zct_error(c, "--cgroup-manager: \"%s\" is not cgroupfs or systemd", v);
                return 0;
        }
        if (streq(a, "--debug") || streq(a, "-debug"))
                c->debug = true;
        else if (streq(a, "--no-zygote"))
                *ret_no_zygote = true;
        else if (streq(a, "--systemd-cgroup") || streq(a, "-systemd-cgroup"))
                fprintf(stderr, "zygote-runc: warning: --systemd-cgroup is not supported; using cgroupfs\n");
        else
                return zct_error(c, "unknown global option %s", a);
        return 0;
}

/* Where this command's seccomp programs come from (filter-remote.c): the command line, then
 * ZYGOTE_RUNC_FILTER, the user's setting of this program ("local", or "zygoted": a failure to
 * get the program from zygoted is an error, for benchmarks and tests). */
static void filter_from(struct zct_ctx *c, bool no_zygote) {
        const char *mode = secure_getenv("ZYGOTE_RUNC_FILTER");

        if (mode && *mode && !streq(mode, "local") && !streq(mode, "zygoted"))
                zct_info(c, "ZYGOTE_RUNC_FILTER=%s is neither \"local\" nor \"zygoted\": ignored", mode);
        if (no_zygote || (mode && streq(mode, "local")))
                c->filter.from = ZCT_FILTER_LOCAL;
        else if (mode && streq(mode, "zygoted"))
                c->filter.from = ZCT_FILTER_ZYGOTED;
        else
                c->filter.from = ZCT_FILTER_ZYGOTED_OR_LOCAL;
}

int main(int argc, char **argv) {
        struct zct_ctx c = { .rootless = zct_rootless() };
        _cleanup_free_ char *default_root = NULL;
        bool no_zygote = false;
        const char *cmd;
        int i, r;

        /* first of all: neither this process nor anything it forks into a container may have the
         * host's file as /proc/PID/exe (sealed-copy.c) */
        r = zct_runc_run_sealed(argv);
        if (r < 0)
                return zct_error(&c, "re-executing from a sealed copy of this program: %s", zct_errstr(-r));
        /* Nothing this program forks is dumpable until its execve (the dumpable flag is inherited
         * at fork): the init held until `start` and an exec'd process during its setup sit in the
         * container's pid namespace, and a dumpable one opens its /proc/PID/{exe,mem,environ} and,
         * by pidfd_getfd, its fds to the container's processes. execve makes the container's own
         * program dumpable again. */
        if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0)
                return zct_error(&c, "prctl(PR_SET_DUMPABLE): %s", zct_errstr(errno));

        for (i = 1; i < argc && argv[i][0] == '-'; i++) {
                if (streq(argv[i], "--version") || streq(argv[i], "-v")) {
                        const struct scmp_version *sv = seccomp_version();
                        /* runc's lines, but go's: there is no Go; then crun's line of features, those
                         * that are true (systemd's notify protocol, not its cgroup driver) */
                        printf("zygote-runc version %s\ncommit: %s\nspec: %s\nlibseccomp: %u.%u.%u\n"
                               "+SECCOMP +CAP +SYSTEMD-NOTIFY +LISTEN-FDS\n",
                               ZYGOTE_VERSION, ZYGOTE_VERSION, ZCT_RUNC_OCI_VERSION, sv->major, sv->minor, sv->micro);
                        return 0;
                }
                if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        usage(stdout);
                        return 0;
                }
                if (parse_global(&c, argc, argv, &i, &no_zygote) != 0)
                        return 1;
        }
        if (!c.root) {
                r = zct_state_default_root(getenv("XDG_RUNTIME_DIR"), getenv("USER"), zct_rootless(), &default_root,
                                           &c.root_xdg);
                if (r < 0)
                        return zct_error(&c, "state root: %s", zct_errstr(-r));
                c.root = default_root;
        }
        /* a log file that cannot be written is an error now, as runc's, not silence later */
        if (c.log_path) {
                int fd = open(c.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd < 0) {
                        const char *path = c.log_path;
                        c.log_path = NULL;
                        return zct_error(&c, "failed to open log file %s: %s", path, zct_errstr(errno));
                }
                close(fd);
        }
        filter_from(&c, no_zygote);
        if (i >= argc) {
                usage(stderr);
                return 1;
        }
        cmd = argv[i++];
        argc -= i;
        argv += i;
        for (size_t k = 0; k < ELEMENTSOF(verbs); k++)
                if (streq(cmd, verbs[k].name)) {
                        if (argc > 0 && (streq(argv[0], "--help") || streq(argv[0], "-h"))) {
                                usage_verb(&verbs[k]);
                                return 0;
                        }
                        return verbs[k].run(&c, &verbs[k], argc, argv);
                }
        /* urfave/cli's words, which runc's scripts match */
        if (argc > 0 && (streq(argv[0], "--help") || streq(argv[0], "-h")))
                return zct_error(&c, "No help topic for '%s'", cmd);
        return zct_error(&c, "unknown command \"%s\" (see --help)", cmd);
}
