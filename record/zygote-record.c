/* SPDX-License-Identifier: MIT */
/*
 * zygote-record: what `launchctl run --record` and `launchctl profile check` run (launchctl execs
 * it, so that launchctl itself links neither libseccomp nor the profile compiler).
 *
 *   zygote-record record --launchctl PATH --out FILE [--via auto|bpf|notify] [RUN-OPTIONS] -- CMD...
 *   zygote-record check  --launchctl PATH --profile-file FILE [RUN-OPTIONS] -- CMD [ARGS...]
 *   zygote-record exec SOCKET -- CMD [ARGS...]          (the task's side; see record-exec.c)
 *   zygote-record agent --out FILE --socket PATH [--in FILE]   (a container's: the runtime's agent)
 *   zygote-record oci-profile --socket PATH FILE         (the seccomp object to record it with)
 *
 * record and check are the listener: they make a socket in a private directory, run
 * `launchctl run RUN-OPTIONS -- zygote-record exec SOCKET -- CMD` (an ordinary Spawn by the
 * caller, with every confinement of one), take the recording filter's listener from the task,
 * answer its notifications until the task and every process it started have exited, then write
 * FILE (the union with what FILE held) or name the calls FILE's profile refused.
 *
 * record's fast path (--via bpf, and auto's first choice): `launchctl run --record-fd N
 * RUN-OPTIONS -- CMD`, zygoted's eBPF tracer recording the task, whose record launchctl writes
 * to fd N once the task has exited. Where zygoted has no tracer, launchctl writes why there and
 * nothing ran: auto then records through user notification, bpf fails with that reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "pidfd-util.h"
#include "profile.h"
#include "record-agent.h"
#include "record-bpf-read.h"
#include "record-json.h"
#include "record-notify.h"
#include "util.h"

/* Exit codes of our own (else the command's status). */
#define REC_EXIT_FAILURE 1
#define REC_EXIT_USAGE 2
#define REC_EXIT_REFUSED 3 /* check: the profile refused a call */
#define REC_EXIT_SKIP 77   /* the kernel lacks user notification or FLAG_CONTINUE */

struct rec_run {
        const char *launchctl, *out, *profile_file;
        const char *via; /* record: "auto", "bpf" or "notify" */
        char **run_opts; /* launchctl run's options, passed as they are */
        size_t n_run_opts;
        char **cmd;
        char dir[64], sock_path[96];
};

static int usage(const char *what, const char *mode) {
        fprintf(stderr, "zygote-record: %s: %s\n", mode, what);
        return REC_EXIT_USAGE;
}

/* Our options come first, up to the first one that is not ours; everything before "--" then
 * goes to launchctl run. */
static int parse(int argc, char **argv, bool check, struct rec_run *rr) {
        int i = 2;

        for (; i + 1 < argc; i += 2) {
                if (streq(argv[i], "--launchctl"))
                        rr->launchctl = argv[i + 1];
                else if (streq(argv[i], "--out") && !check)
                        rr->out = argv[i + 1];
                else if (streq(argv[i], "--profile-file") && check)
                        rr->profile_file = argv[i + 1];
                else if (streq(argv[i], "--via") && !check)
                        rr->via = argv[i + 1];
                else
                        break;
        }
        rr->run_opts = argv + i;
        for (; i < argc && !streq(argv[i], "--"); i++)
                rr->n_run_opts++;
        if (i + 1 >= argc)
                return usage("missing command (after --)", argv[1]);
        rr->cmd = argv + i + 1;
        if (!rr->launchctl || (!check && !rr->out) || (check && !rr->profile_file))
                return usage("missing --launchctl, --out or --profile-file", argv[1]);
        if (!rr->via)
                rr->via = "auto";
        if (!streq(rr->via, "auto") && !streq(rr->via, "bpf") && !streq(rr->via, "notify"))
                return usage("--via wants auto, bpf or notify", argv[1]);
        return 0;
}

/* A socket only we (our uid) can reach: in a directory of mode 0700. */
static int listen_socket(struct rec_run *rr) {
        const char *base = getenv("XDG_RUNTIME_DIR");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;

        snprintf(rr->dir, sizeof(rr->dir), "%s/zygote-record-XXXXXX",
                 base && *base && strlen(base) < 32 ? base : "/tmp");
        if (!mkdtemp(rr->dir))
                return -errno;
        snprintf(rr->sock_path, sizeof(rr->sock_path), "%s/s", rr->dir);
        strcpy(sa.sun_path, rr->sock_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 1) < 0)
                return -errno;
        return TAKE_FD(fd);
}

static void remove_socket(struct rec_run *rr) {
        if (rr->sock_path[0])
                (void) unlink(rr->sock_path);
        if (rr->dir[0])
                (void) rmdir(rr->dir);
        rr->sock_path[0] = rr->dir[0] = 0;
}

/* launchctl run RUN-OPTIONS -- SELF exec SOCKET -- CMD, as our child; with record_fd (not
 * -EBADF), launchctl run --record-fd RECORD_FD RUN-OPTIONS -- CMD (the eBPF path). */
static int start_launchctl(const struct rec_run *rr, const char *self, int record_fd, int *ret_pidfd) {
        size_t n_cmd = 0, k = 0;
        _cleanup_free_ char **argv = NULL;
        char fd_arg[16];
        pid_t pid;

        while (rr->cmd[n_cmd])
                n_cmd++;
        argv = calloc(rr->n_run_opts + n_cmd + 8, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        argv[k++] = (char *) rr->launchctl;
        argv[k++] = (char *) "run";
        if (record_fd >= 0) {
                snprintf(fd_arg, sizeof(fd_arg), "%d", record_fd);
                argv[k++] = (char *) "--record-fd";
                argv[k++] = fd_arg;
        }
        for (size_t i = 0; i < rr->n_run_opts; i++)
                argv[k++] = rr->run_opts[i];
        argv[k++] = (char *) "--";
        if (record_fd < 0) {
                argv[k++] = (char *) self;
                argv[k++] = (char *) "exec";
                argv[k++] = (char *) rr->sock_path;
                argv[k++] = (char *) "--";
        }
        for (size_t i = 0; i < n_cmd; i++)
                argv[k++] = rr->cmd[i];
        pid = clone_with_pidfd(0, ret_pidfd);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                /* launchctl's to write; CMD never has it (zygoted forks CMD, with launchctl's stdio) */
                if (record_fd >= 0 && fcntl(record_fd, F_SETFD, 0) < 0)
                        _exit(REC_EXIT_FAILURE);
                execv(rr->launchctl, argv);
                fprintf(stderr, "zygote-record: cannot run %s: %m\n", rr->launchctl);
                _exit(REC_EXIT_FAILURE);
        }
        return 0;
}

/* The listener from the task's connection: one fd of SCM_RIGHTS from a process of our uid. */
static int take_listener(int lfd) {
        _cleanup_close_ int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        struct ucred cred;
        socklen_t len = sizeof(cred);
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *cm;
        int fd;

        if (c < 0)
                return -errno;
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        if (cred.uid != getuid())
                return -EPERM;
        if (recvmsg(c, &msg, MSG_CMSG_CLOEXEC) != 1)
                return -EPROTO;
        cm = CMSG_FIRSTHDR(&msg);
        if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
            cm->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC))
                return -EPROTO;
        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        return fd;
}

/* Waits for the task's connection, or for launchctl to end first (the spawn failed). */
static int wait_listener(int lfd, int pidfd, const struct rec_forward *fw) {
        for (;;) {
                struct pollfd p[3] = { { .fd = lfd, .events = POLLIN },
                                       { .fd = pidfd, .events = POLLIN },
                                       { .fd = fw->signal_fd, .events = POLLIN } };

                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[2].revents & POLLIN)
                        rec_forward_signals(fw);
                if (p[0].revents & POLLIN) {
                        int fd = take_listener(lfd);
                        if (fd != -EAGAIN && fd != -EPERM)
                                return fd;
                }
                if (p[1].revents & POLLIN)
                        return -ECHILD;
        }
}

static int exit_status(int pidfd) {
        siginfo_t si = {};

        if (pidfd_reap(pidfd, &si) < 0)
                return REC_EXIT_FAILURE;
        return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

static void print_refused(const char *file, const struct rec_check *ck) {
        fprintf(stderr, "zygote-record: %s refused %zu system call%s (%u time%s):", file, ck->refused.n_calls,
                ck->refused.n_calls == 1 ? "" : "s", ck->n_refused, ck->n_refused == 1 ? "" : "s");
        for (size_t i = 0; i < ck->refused.n_calls; i++) {
                _cleanup_free_ char *n = rec_syscall_name(ck->refused.calls[i].arch, ck->refused.calls[i].nr);
                if (n)
                        fprintf(stderr, " %s", n);
                else
                        fprintf(stderr, " #%u", ck->refused.calls[i].nr);
        }
        fprintf(stderr, "\n");
}

/* The eBPF path's run: launchctl's status in *ret_status once it has exited, the record read
 * into set. 0: recorded; 1: zygoted cannot record with eBPF (*ret_reason, malloc'd; nothing ran);
 * 2: nothing was recorded (launchctl said why); or a negative errno. */
static int record_bpf(struct rec_run *rr, struct rec_set *set, const struct rec_forward *fw, int *ret_status,
                      char **ret_reason) {
        _cleanup_close_ int mfd = memfd_create("zygote-record", MFD_CLOEXEC), pidfd = -EBADF;
        struct rec_forward f = *fw;
        _cleanup_free_ char *text = NULL;
        const char *incomplete = NULL;
        json_object *o, *why;
        struct stat st;
        int r;

        if (mfd < 0)
                return -errno;
        r = start_launchctl(rr, NULL, mfd, &pidfd);
        if (r < 0)
                return r;
        f.forward_pidfd = pidfd;
        for (;;) {
                struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = f.signal_fd, .events = POLLIN } };
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return -errno;
                if (p[1].revents & POLLIN)
                        rec_forward_signals(&f);
                if (p[0].revents & POLLIN)
                        break;
        }
        *ret_status = exit_status(pidfd);
        if (fstat(mfd, &st) < 0)
                return -errno;
        if (st.st_size == 0)
                return 2;
        if (st.st_size > 16 * 1024 * 1024)
                return -E2BIG;
        text = calloc(1, (size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        if (pread(mfd, text, (size_t) st.st_size, 0) != st.st_size)
                return -EIO;
        o = json_tokener_parse(text);
        if (!o)
                return -EBADMSG;
        why = json_object_object_get(o, "unavailable");
        if (why) {
                *ret_reason = strdup(json_object_get_string(why) ?: "");
                json_object_put(o);
                return *ret_reason ? 1 : -ENOMEM;
        }
        if (json_object_object_length(o) == 0) {
                json_object_put(o); /* the task ran, and no record came with its exit */
                return -ENODATA;
        }
        r = rec_bpf_parse(o, set, &incomplete);
        if (r >= 0 && incomplete)
                fprintf(stderr, "zygote-record: the recording is incomplete: %s\n", incomplete);
        json_object_put(o);
        return r < 0 ? r : 0;
}

/* record's eBPF path, unless --via notify: -1 when the caller should record through user
 * notification instead, else zygote-record's exit code (FILE written when it recorded). */
static int try_bpf(struct rec_run *rr, struct rec_set *set, bool found, const struct rec_forward *fw) {
        _cleanup_free_ char *reason = NULL;
        unsigned unnamed = 0;
        int status = REC_EXIT_FAILURE, r;

        if (streq(rr->via, "notify"))
                return -1;
        r = record_bpf(rr, set, fw, &status, &reason);
        if (r == 1 && streq(rr->via, "auto"))
                return -1;
        if (r == 1) {
                fprintf(stderr, "zygote-record: zygoted cannot record with eBPF: %s\n", reason);
                return REC_EXIT_SKIP;
        }
        if (r == 2)
                return status;
        if (r < 0) {
                fprintf(stderr, "zygote-record: no record from zygoted: %s\n", strerror(-r));
                return REC_EXIT_FAILURE;
        }
        r = rec_json_write_file(rr->out, set, &unnamed);
        if (r < 0) {
                fprintf(stderr, "zygote-record: cannot write %s: %s\n", rr->out, strerror(-r));
                return REC_EXIT_FAILURE;
        }
        fprintf(stderr, "zygote-record: %zu system calls %s %s (eBPF)", set->n_calls,
                found ? "merged into" : "recorded in", rr->out);
        if (unnamed > 0)
                fprintf(stderr, " (%u without a name in libseccomp, left out)", unnamed);
        fprintf(stderr, "\n");
        return status;
}

static int run_listener(int argc, char **argv, bool check, int sfd) {
        struct rec_forward fw = { .signal_fd = sfd, .forward_pidfd = -EBADF };
        struct rec_run rr = {};
        struct rec_set set;
        struct rec_check ck = {};
        struct zp_profile *prof = NULL;
        _cleanup_free_ char *err = NULL, *self = NULL;
        _cleanup_close_ int lfd = -EBADF, pidfd = -EBADF, listener = -EBADF;
        struct seccomp_notif_sizes sizes;
        bool found = false;
        int r, status;

        r = parse(argc, argv, check, &rr);
        if (r != 0)
                return r;
        rec_set_init(&set);
        rec_set_init(&ck.refused);
        if (check) {
                /* zygote's own loader: what zygoted would make of the file */
                r = zp_profile_load_file(rr.profile_file, &prof, &err);
                if (r < 0) {
                        fprintf(stderr, "zygote-record: %s\n", err ?: strerror(-r));
                        return REC_EXIT_FAILURE;
                }
                ck.prog = prof->bpf;
                ck.len = prof->bpf_len;
        } else {
                /* an earlier recording that cannot be merged fails now, not after the run */
                r = rec_json_read_file(rr.out, &set, &found, &err);
                if (r < 0) {
                        fprintf(stderr, "zygote-record: cannot merge into %s\n", err ?: strerror(-r));
                        return REC_EXIT_FAILURE;
                }
                r = try_bpf(&rr, &set, found, &fw);
                if (r >= 0) {
                        rec_set_done(&set);
                        return r;
                }
        }
        /* user notification at all (Linux 5.0), before anything runs */
        if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
                fprintf(stderr, "zygote-record: the kernel lacks seccomp user notification "
                                "(SECCOMP_GET_NOTIF_SIZES: %m; Linux 5.0, with FLAG_CONTINUE 5.5)\n");
                return REC_EXIT_SKIP;
        }
        self = realpath("/proc/self/exe", NULL);
        if (!self) {
                fprintf(stderr, "zygote-record: cannot find itself: %m\n");
                return REC_EXIT_FAILURE;
        }

        lfd = listen_socket(&rr);
        if (lfd < 0) {
                fprintf(stderr, "zygote-record: cannot make the hand-over socket: %s\n", strerror(-lfd));
                remove_socket(&rr);
                return REC_EXIT_FAILURE;
        }
        r = start_launchctl(&rr, self, -EBADF, &pidfd);
        fw.forward_pidfd = pidfd;
        if (r >= 0)
                r = listener = wait_listener(lfd, pidfd, &fw);
        remove_socket(&rr);
        /* launchctl ended first, or the task hung up without a listener: both said why */
        if (r == -ECHILD || r == -EPROTO)
                return exit_status(pidfd);
        if (r < 0) {
                fprintf(stderr, "zygote-record: no listener from the task: %s\n", strerror(-r));
                return REC_EXIT_FAILURE;
        }

        r = rec_listen(listener, &set, check ? &ck : NULL, &fw, -EBADF);
        status = exit_status(pidfd);
        if (r == -EOPNOTSUPP) {
                fprintf(stderr, "zygote-record: the kernel lacks SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5)\n");
                return REC_EXIT_SKIP;
        }
        if (r < 0) {
                fprintf(stderr, "zygote-record: listening: %s\n", strerror(-r));
                return REC_EXIT_FAILURE;
        }
        if (check) {
                zp_profile_free(prof);
                if (ck.n_refused == 0) {
                        fprintf(stderr, "zygote-record: %s refused no call\n", rr.profile_file);
                        return status;
                }
                print_refused(rr.profile_file, &ck);
                rec_set_done(&ck.refused);
                return REC_EXIT_REFUSED;
        }
        unsigned unnamed = 0;
        r = rec_json_write_file(rr.out, &set, &unnamed);
        if (r < 0) {
                fprintf(stderr, "zygote-record: cannot write %s: %s\n", rr.out, strerror(-r));
                return REC_EXIT_FAILURE;
        }
        fprintf(stderr, "zygote-record: %zu system calls %s %s (user notification)", set.n_calls,
                found ? "merged into" : "recorded in", rr.out);
        if (unnamed > 0)
                fprintf(stderr, " (%u without a name in libseccomp, left out)", unnamed);
        fprintf(stderr, "\n");
        rec_set_done(&set);
        return status;
}

/* agent: the seccomp agent of one container (record-agent.h); says "ready SOCKET" on stdout once
 * it listens (an empty path: a socket in a fresh directory of its own), writes FILE once no
 * process of the container uses the filter any more: the union with IN when given, else with what
 * FILE held. */
static int run_agent(const char *out, const char *in, const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int lfd = -EBADF, listener = -EBADF;
        _cleanup_free_ char *err = NULL;
        char dir[] = "/tmp/zygote-record-XXXXXX";
        struct rec_set set;
        uint64_t no_args[6] = {};
        bool found = false;
        int r, nr;

        rec_set_init(&set);
        r = rec_json_read_file(in ?: out, &set, &found, &err);
        if (r >= 0 && in && !found)
                r = -ENOENT;
        if (r < 0) {
                fprintf(stderr, "zygote-record: cannot merge %s\n", err ?: strerror(-r));
                return REC_EXIT_FAILURE;
        }
        if (!*path) {
                if (!mkdtemp(dir))
                        return REC_EXIT_FAILURE;
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
        } else if (strlen(path) < sizeof(sa.sun_path))
                strcpy(sa.sun_path, path);
        else
                return usage("socket path too long", "agent");
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
                fprintf(stderr, "zygote-record: agent socket %s: %m\n", sa.sun_path);
                return REC_EXIT_FAILURE;
        }
        printf("ready %s\n", sa.sun_path);
        fflush(stdout);
        listener = rec_agent_take(lfd);
        if (listener < 0) {
                (void) unlink(sa.sun_path);
                if (!*path)
                        (void) rmdir(dir);
                fprintf(stderr, "zygote-record: no listener from the runtime: %s\n", strerror(-listener));
                return REC_EXIT_FAILURE;
        }
        /* the socket stays while the container lives: its exec'd processes bring theirs (polled:
         * an accept never waits) */
        r = fcntl(lfd, F_SETFL, O_NONBLOCK) < 0 ? -errno : rec_listen(listener, &set, NULL, NULL, lfd);
        (void) unlink(sa.sun_path);
        if (!*path)
                (void) rmdir(dir);
        if (r < 0) {
                fprintf(stderr, "zygote-record: listening: %s\n", strerror(-r));
                return r == -EOPNOTSUPP ? REC_EXIT_SKIP : REC_EXIT_FAILURE;
        }
        /* the runtime's hand-over, which the recording object let through unseen */
        for (size_t i = 0; rec_agent_unseen_name(i); i++) {
                nr = seccomp_syscall_resolve_name_arch(seccomp_arch_native(), rec_agent_unseen_name(i));
                if (nr >= 0 && rec_set_add(&set, seccomp_arch_native(), (uint32_t) nr, no_args) < 0)
                        return REC_EXIT_FAILURE;
        }
        r = rec_json_write_file(out, &set, NULL);
        if (r < 0) {
                fprintf(stderr, "zygote-record: cannot write %s: %s\n", out, strerror(-r));
                return REC_EXIT_FAILURE;
        }
        fprintf(stderr, "zygote-record: %zu system calls %s %s\n", set.n_calls, found ? "merged into" : "recorded in",
                out);
        rec_set_done(&set);
        return 0;
}

/* oci-profile: FILE's seccomp object (a plain one, or a zygote profile's) made to record. */
static int print_oci_recording(const char *path, const char *file) {
        json_object *o = json_object_from_file(file), *seccomp, *rec = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (!o) {
                fprintf(stderr, "zygote-record: %s: %s\n", file, json_util_get_last_err() ?: "not JSON");
                return REC_EXIT_FAILURE;
        }
        seccomp = json_object_object_get(o, "seccomp") ?: o;
        r = rec_oci_recording(seccomp, path, &rec, &err);
        json_object_put(o);
        if (r < 0) {
                fprintf(stderr, "zygote-record: %s: %s\n", file, err ?: strerror(-r));
                return REC_EXIT_FAILURE;
        }
        printf("%s\n", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(rec);
        return fflush(stdout) == 0 ? 0 : REC_EXIT_FAILURE;
}

int main(int argc, char **argv) {
        static const int blocked[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
        sigset_t mask;
        const char *step = NULL;
        int r, sfd;

        if (argc >= 5 && streq(argv[1], "exec") && streq(argv[3], "--")) {
                r = rec_exec(argv[2], argv + 4, &step);
                fprintf(stderr, "zygote-record: %s: %s\n", step, strerror(-r));
                return r == -ENOENT && streq(step, "exec") ? 127 : streq(step, "exec") ? 126 : 125;
        }
        if ((argc == 6 || (argc == 8 && streq(argv[6], "--in"))) && streq(argv[1], "agent") &&
            streq(argv[2], "--out") && streq(argv[4], "--socket"))
                return run_agent(argv[3], argc == 8 ? argv[7] : NULL, argv[5]);
        if (argc == 5 && streq(argv[1], "oci-profile") && streq(argv[2], "--socket"))
                return print_oci_recording(argv[3], argv[4]);
        if (argc < 2 || !(streq(argv[1], "record") || streq(argv[1], "check")))
                return usage("record|check ... (run through launchctl)", "usage");
        /* The terminal's signals go to launchctl, which forwards them to the task; the listener
         * outlives them until the last task has exited (they stay blocked in launchctl too). */
        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(blocked); i++)
                sigaddset(&mask, blocked[i]);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        /* one sent to us by a process (kill, timeout(1)) is passed on to launchctl, which
         * forwards it to the task */
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                fprintf(stderr, "zygote-record: signalfd: %m\n");
                return REC_EXIT_FAILURE;
        }
        return run_listener(argc, argv, streq(argv[1], "check"), sfd);
}
