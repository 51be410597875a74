/* SPDX-License-Identifier: MIT */
/*
 * containerd-shim-zygote-v2: containerd's runtime io.containerd.zygote.v2. containerd runs it as
 *
 *   containerd-shim-zygote-v2 -namespace NS -address ADDR -publish-binary BIN -id ID [-debug] start
 *   containerd-shim-zygote-v2 -namespace NS -address ADDR -publish-binary BIN -id ID -bundle DIR delete
 *
 * in the bundle directory. "start" leaves a shim serving the Task service on a socket of its own
 * and prints that socket's address; "delete" cleans up after a shim that died, and prints what the
 * container's end was (a DeleteResponse).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zygote.h>

#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "fd-util.h"
#include "log.h"
#include "process.h"
#include "publish.h"
#include "reply.h"
#include "rootfs.h"
#include "service.h"
#include "sha256.h"
#include "ttrpc.h"
#include "util.h"

struct options {
        const char *ns, *address, *publish_binary, *id, *bundle;
        const char *action;
        bool version;
};

/* Go's flag syntax, as containerd writes it: -name value, --name value, -name=value; -debug and
 * -v alone. */
static int parse_options(int argc, char **argv, struct options *o) {
        static const char *const bools[] = { "debug", "v", "version" };

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *value;
                const char **slot = NULL;
                size_t n;

                if (a[0] != '-') {
                        if (o->action)
                                return -EINVAL;
                        o->action = a;
                        continue;
                }
                a += a[1] == '-' ? 2 : 1;
                n = strcspn(a, "=");
                for (size_t k = 0; k < ELEMENTSOF(bools); k++)
                        if (strlen(bools[k]) == n && strncmp(a, bools[k], n) == 0) {
                                o->version = o->version || k > 0;
                                goto next;
                        }
#define FLAG(name, field) \
        if (strlen(name) == n && strncmp(a, name, n) == 0) \
                slot = &o->field;
                FLAG("namespace", ns)
                FLAG("address", address)
                FLAG("publish-binary", publish_binary)
                FLAG("id", id)
                FLAG("bundle", bundle)
#undef FLAG
                if (!slot)
                        continue; /* a flag of a newer containerd: ignored, as is its value */
                if (a[n] == '=')
                        value = a + n + 1;
                else if (i + 1 < argc)
                        value = argv[++i];
                else
                        return -EINVAL;
                *slot = value;
        next:;
        }
        return 0;
}

/* /run/containerd/s/HASH (root) or $XDG_RUNTIME_DIR/containerd-zygote/HASH: one socket per
 * containerd, namespace and container, as containerd's own shims name theirs. */
static int socket_path(const struct options *o, char **ret) {
        _cleanup_free_ char *key = NULL, *dir = NULL;
        char hex[2 * ZC_SHA256_DIGEST_SIZE + 1];
        const char *xdg = getenv("XDG_RUNTIME_DIR");

        if (asprintf(&key, "%s/%s/%s", o->address, o->ns, o->id) < 0)
                return -ENOMEM;
        zc_sha256_hex(key, strlen(key), hex);
        if (geteuid() == 0)
                dir = strdup("/run/containerd/s");
        else if (xdg && *xdg && asprintf(&dir, "%s/containerd-zygote", xdg) < 0)
                dir = NULL;
        if (!dir)
                return geteuid() == 0 || (xdg && *xdg) ? -ENOMEM : -ENOENT;
        /* containerd makes /run/containerd when it starts; a shim started before it ever ran (a
         * test, a fresh machine) makes it itself, as containerd would */
        if (geteuid() == 0 && mkdir("/run/containerd", 0711) < 0 && errno != EEXIST)
                return -errno;
        if (mkdir(dir, 0711) < 0 && errno != EEXIST)
                return -errno;
        if (asprintf(ret, "%s/%s", dir, hex) < 0)
                return -ENOMEM;
        return 0;
}

static int unix_socket(const char *path, bool listening) {
        struct sockaddr_un sa;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!listening)
                return zc_unix_connect(path);
        r = zc_sockaddr_un(path, &sa);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        /* containerd alone (the shim's uid) may call: the Task service starts and kills
         * containers with the shim's authority */
        if (chmod(path, 0600) < 0 || listen(fd, 64) < 0) {
                r = -errno;
                unlink(path);
                return r;
        }
        return TAKE_FD(fd);
}

static int write_file(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        size_t n = strlen(text);

        if (fd < 0)
                return -errno;
        if (write(fd, text, n) != (ssize_t) n)
                return negative_errno();
        return 0;
}

/* The serving shim's stdio: nothing on stdin and stdout (containerd reads the start command's
 * output until every copy of it is closed), stderr on the bundle's log fifo that containerd reads. */
static void detach_stdio(void) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int log = open("log", O_WRONLY | O_NONBLOCK | O_CLOEXEC);

        if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
                dup2(log >= 0 ? log : null, 2);
        }
        if (log >= 0) {
                fcntl(2, F_SETFL, fcntl(2, F_GETFL) & ~O_NONBLOCK);
                safe_close(log);
        }
        safe_close(null);
}

static int serve(int fd, const char *path, const struct options *o) {
        int r;

        signal(SIGPIPE, SIG_IGN);
        zs_publish_init(getenv("TTRPC_ADDRESS"), o->publish_binary, o->address, o->ns);
        r = zs_ttrpc_serve(fd, zs_service_handle);
        if (r < 0)
                zs_log("serving %s: %s", path, strerror(-r));
        unlink(path);
        return r < 0 ? 1 : 0;
}

static int cmd_start(const struct options *o) {
        _cleanup_free_ char *path = NULL, *address = NULL;
        _cleanup_close_ int fd = -EBADF;
        pid_t pid;
        int r;

        r = socket_path(o, &path);
        if (r < 0 || asprintf(&address, "unix://%s", path) < 0) {
                fprintf(stderr, "no socket path: %s\n", strerror(r < 0 ? -r : ENOMEM));
                return 1;
        }
        fd = unix_socket(path, false);
        if (fd >= 0) {
                /* a shim serves this container already: containerd talks to it */
                printf("%s\n", address);
                return 0;
        }
        unlink(path);
        fd = unix_socket(path, true);
        if (fd < 0) {
                fprintf(stderr, "listening on %s: %s\n", path, strerror(-fd));
                return 1;
        }
        r = write_file("address", address);
        if (r < 0) {
                fprintf(stderr, "writing the bundle's address file: %s\n", strerror(-r));
                unlink(path);
                return 1;
        }
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "fork: %m\n");
                unlink(path);
                return 1;
        }
        if (pid == 0) {
                setsid();
                detach_stdio();
                _exit(serve(fd, path, o));
        }
        printf("%s\n", address);
        return 0;
}

static void kill_and_delete(zy_conn *c, const char *t) {
        struct zy_task_info *ti = NULL;

        (void) zy_kill(c, t, SIGKILL, false);
        if (zy_wait(c, t, &ti) >= 0)
                (void) zy_delete(c, t, NULL);
        zy_task_info_free(ti);
}

/* Whether zygoted's task t is an exec'd process of a container (ExecContainer, which only root
 * may call: its profile "container", run as uid 0), and so one this shim may have made. */
static bool container_exec(zy_conn *c, const char *t) {
        struct zy_task_info *ti = NULL;
        bool ok = zy_state(c, t, &ti) >= 0 && ti->uid == 0 && streq_ptr(ti->profile, "container");

        zy_task_info_free(ti);
        return ok;
}

/* A dead shim's exec'd processes that zygoted still knows: those the bundle's ZS_EXEC_IDS_FILE
 * lists as this container's (each line's task id made of the container's id and an exec id) and
 * that zygoted has as a container's exec'd process. Whatever else the file says, or a task named
 * ID.SOMETHING (another container's id may be that), is left alone. */
static void cleanup_execs(zy_conn *c, const char *id, const char *bundle) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        FILE *f;

        if (!bundle || asprintf(&path, "%s/%s", bundle, ZS_EXEC_IDS_FILE) < 0)
                return;
        f = fopen(path, "re");
        if (!f)
                return;
        while (getline(&line, &size, f) > 0) {
                _cleanup_free_ char *t = NULL;

                if (zs_exec_ids_parse(id, line, &t) >= 0 && container_exec(c, t))
                        kill_and_delete(c, t);
        }
        fclose(f);
}

/* The exit a dead shim's container had, as zygoted kept it (137 and now when it kept none). */
static int cleanup_task(const char *id, const char *bundle, Containerd__Task__V2__DeleteResponse *resp,
                        Google__Protobuf__Timestamp *ts) {
        struct zy_task_info *ti = NULL;
        zy_conn *c = NULL;
        int r;

        *ts = zs_timestamp(zs_now());
        resp->exit_status = 128 + SIGKILL;
        resp->exited_at = ts;
        r = zy_connect(NULL, &c);
        if (r < 0)
                return r;
        cleanup_execs(c, id, bundle);
        r = zy_state(c, id, &ti);
        if (r >= 0 && ti->state != ZY_TASK_STOPPED) {
                zy_task_info_free(ti);
                ti = NULL;
                (void) zy_kill(c, id, SIGKILL, true);
                r = zy_wait(c, id, &ti);
        }
        if (r >= 0) {
                resp->pid = (uint32_t) ti->pid;
                resp->exit_status = (uint32_t) zy_task_info_status(ti);
                if (ti->exited_at > 0)
                        *ts = zs_timestamp(zs_timespec(ti->exited_at));
                r = zy_delete(c, id, NULL);
        }
        zy_task_info_free(ti);
        zy_conn_free(c);
        return r == -ESRCH ? 0 : r;
}

static int cmd_delete(const struct options *o) {
        Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
        Google__Protobuf__Timestamp ts;
        _cleanup_free_ char *cwd = NULL, *path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        const char *bundle = o->bundle;
        size_t n;
        int r;

        if (!bundle) {
                cwd = getcwd(NULL, 0);
                bundle = cwd;
        }
        r = cleanup_task(o->id, bundle, &resp, &ts);
        if (r < 0)
                fprintf(stderr, "cleaning up task %s: %s\n", o->id, strerror(-r));
        if (bundle) {
                r = zs_rootfs_unmount(bundle);
                if (r < 0)
                        fprintf(stderr, "unmounting %s/rootfs: %s\n", bundle, strerror(-r));
        }
        if (socket_path(o, &path) >= 0)
                unlink(path);
        n = containerd__task__v2__delete_response__get_packed_size(&resp);
        buf = malloc(n + 1);
        if (!buf)
                return 1;
        n = containerd__task__v2__delete_response__pack(&resp, buf);
        return fwrite(buf, 1, n, stdout) == n && fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
        struct options o = {};
        int r;

        r = parse_options(argc, argv, &o);
        if (r >= 0 && o.version) {
                printf("containerd-shim-zygote-v2 (zygote %s)\n", ZYGOTE_VERSION);
                return 0;
        }
        if (r < 0 || !o.action) {
                fprintf(stderr, "usage: %s -namespace NS -address ADDR -publish-binary BIN -id ID start|delete\n",
                        argv[0]);
                return 2;
        }
        if (!o.ns || !o.id || !o.address) {
                fprintf(stderr, "%s: -namespace, -id and -address are required\n", o.action);
                return 2;
        }
        if (streq(o.action, "start"))
                return cmd_start(&o);
        if (streq(o.action, "delete"))
                return cmd_delete(&o);
        fprintf(stderr, "unknown action %s\n", o.action);
        return 2;
}
