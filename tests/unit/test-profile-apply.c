/* SPDX-License-Identifier: MIT */
/*
 * The bundled profiles in the real kernel: each test forks a child that sets no_new_privs, loads
 * the profile's compiled program with seccomp(SECCOMP_SET_MODE_FILTER) (the load tier) and checks
 * what the kernel then does:
 *   default: unshare, mount, keyctl, kexec_load, bpf, perf_event_open fail with EPERM; getpid and
 *            personality(0) work; arguments are filtered (personality, socket, clone, clone3)
 *   nonet:   socket(AF_INET) fails (EAFNOSUPPORT), AF_UNIX works
 *   strict:  /bin/sh -c 'ls / | wc -l' and /usr/bin/python3 -c pass exit 0
 *   all:     the syscalls zygote's worker makes after inheriting the filter are not refused, as
 *            zp_profile->worker_setup_ok claims
 * Children report failures on stderr and through their exit status; the parent waits for them.
 *
 * Usage: test-profile-apply PROFILES_DIR
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "profile.h"
#include "testutil.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

extern char **environ;

static const char *profiles_dir;

static struct zp_profile *load_bundled(const char *name) {
        struct zp_profile *p = NULL;
        char *path, *err = NULL;

        assert_true(asprintf(&path, "%s/%s.json", profiles_dir, name) > 0);
        if (zp_profile_load_file(path, &p, &err) < 0)
                fail_msg("%s", err);
        free(path);
        return p;
}

static int apply(const struct zp_profile *p) {
        struct sock_fprog prog = { .len = (unsigned short) p->bpf_len, .filter = p->bpf };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, p->filter_flags, &prog) < 0)
                return -errno;
        return 0;
}

/* In the child: count mismatches and name them. */
static int failures;

static void expect(const char *what, long r, int want_errno) {
        int e = r < 0 ? errno : 0;

        if (want_errno == 0 && r < 0) {
                fprintf(stderr, "  %s: failed with %s, expected success\n", what, strerror(e));
                failures++;
        } else if (want_errno != 0 && (r >= 0 || e != want_errno)) {
                fprintf(stderr, "  %s: %s, expected %s\n", what, r >= 0 ? "succeeded" : strerror(e),
                        strerror(want_errno));
                failures++;
        }
}

/* The filter must not be the reason a call fails: success, or an errno other than EPERM. */
static void expect_not_refused(const char *what, long r) {
        if (r < 0 && errno == EPERM) {
                fprintf(stderr, "  %s: refused with EPERM\n", what);
                failures++;
        }
}

#define EXPECT(call, e) (errno = 0, expect(#call, (long) (call), (e)))
#define NOT_REFUSED(call) (errno = 0, expect_not_refused(#call, (long) (call)))

/* Runs fn in a child, with the profile's filter when p is not NULL; returns the child's status. */
static int in_child(const struct zp_profile *p, void (*fn)(void)) {
        pid_t pid;
        int status, r;

        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (p) {
                        r = apply(p);
                        if (r < 0) {
                                fprintf(stderr, "  loading the filter: %s\n", strerror(-r));
                                _exit(100);
                        }
                }
                failures = 0;
                fn();
                _exit(failures > 99 ? 99 : failures);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return status;
}

static void assert_child_ok(int status) {
        if (WIFSIGNALED(status))
                fail_msg("child killed by signal %d", WTERMSIG(status));
        if (WEXITSTATUS(status) != 0)
                fail_msg("child reported %d failure(s), see above", WEXITSTATUS(status));
}

/* --- what the default profile blocks and allows -------------------------------------------- */

static void default_checks(void) {
        int fd;

        EXPECT(unshare(CLONE_NEWUTS), EPERM);
        EXPECT(unshare(CLONE_NEWUSER), EPERM);
        EXPECT(syscall(SYS_mount, "none", "/nonexistent-zygote", "tmpfs", 0, NULL), EPERM);
        EXPECT(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), EPERM);
        EXPECT(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
        EXPECT(syscall(SYS_bpf, -1, NULL, 0), EPERM);
        EXPECT(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);

        EXPECT(getpid(), 0);
        EXPECT(syscall(SYS_getpid), 0);
        EXPECT(personality(0xffffffff), 0); /* query */
        EXPECT(personality(0), 0);
        EXPECT(personality(READ_IMPLIES_EXEC), EPERM); /* argument filtered */
        EXPECT(syscall(SYS_clone3, NULL, 0), ENOSYS);  /* libc falls back to clone */
        EXPECT(syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0), EPERM);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT(fd, 0);
        if (fd >= 0)
                close(fd);
        /* clone with a namespace flag is refused; a plain fork works */
        EXPECT(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, NULL, NULL, NULL, 0), EPERM);
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
        EXPECT(pid, 0);
        if (pid > 0)
                EXPECT(waitpid(pid, NULL, 0), 0);
}

/* Without a filter the same calls do not fail with EPERM (we run as root): so EPERM above comes
 * from the filter. Where this machine refuses them anyway, the control says so. */
static void default_control(void) {
        NOT_REFUSED(syscall(SYS_mount, "none", "/nonexistent-zygote", "tmpfs", 0, NULL));
        NOT_REFUSED(syscall(SYS_bpf, -1, NULL, 0));
        NOT_REFUSED(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
        NOT_REFUSED(personality(READ_IMPLIES_EXEC));
        NOT_REFUSED(syscall(SYS_clone3, NULL, 0));
}

static void test_default(void **state) {
        struct zp_profile *p = load_bundled("default");

        if (geteuid() != 0) {
                zp_profile_free(p);
                skip(); /* the control needs root to tell the filter's EPERM from the kernel's */
        }
        assert_child_ok(in_child(NULL, default_control));
        assert_child_ok(in_child(p, default_checks));
        zp_profile_free(p);
}

/* --- nonet ------------------------------------------------------------------------------------ */

static void nonet_checks(void) {
        int fd, sv[2];

        EXPECT(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), EAFNOSUPPORT);
        EXPECT(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), EAFNOSUPPORT);
        EXPECT(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0), EAFNOSUPPORT);
        EXPECT(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), EAFNOSUPPORT);
        EXPECT(socketpair(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), EAFNOSUPPORT);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT(fd, 0);
        if (fd >= 0)
                close(fd);
        EXPECT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        /* the rest is the default profile */
        EXPECT(unshare(CLONE_NEWNET), EPERM);
        EXPECT(getpid(), 0);
}

static void nonet_control(void) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT(fd, 0);
}

static void test_nonet(void **state) {
        struct zp_profile *p = load_bundled("nonet");

        assert_child_ok(in_child(NULL, nonet_control));
        assert_child_ok(in_child(p, nonet_checks));
        zp_profile_free(p);
}

/* --- strict: real programs ---------------------------------------------------------------- */

/* Runs argv under the profile with stdout into a pipe; returns the exit status and the output. */
static int run_under(const struct zp_profile *p, char *const argv[], char *out, size_t out_size) {
        int pipefd[2], status, r;
        size_t n = 0;
        pid_t pid;

        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(101);
                r = apply(p);
                if (r < 0) {
                        fprintf(stderr, "loading the filter: %s\n", strerror(-r));
                        _exit(100);
                }
                execve(argv[0], argv, environ);
                fprintf(stderr, "execve %s: %m\n", argv[0]);
                _exit(102);
        }
        close(pipefd[1]);
        for (;;) { /* until EOF: every writer has exited */
                ssize_t k = read(pipefd[0], out + n, out_size - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                assert_true(k >= 0);
                if (k == 0 || n + (size_t) k >= out_size - 1) {
                        n += (size_t) (k > 0 ? k : 0);
                        break;
                }
                n += (size_t) k;
        }
        out[n] = '\0';
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return status;
}

static void assert_exit0(const char *what, int status, const char *out) {
        if (WIFSIGNALED(status))
                fail_msg("%s: killed by signal %d", what, WTERMSIG(status));
        if (WEXITSTATUS(status) != 0)
                fail_msg("%s: exit status %d (output: %s)", what, WEXITSTATUS(status), out);
}

static void strict_checks(void) {
        EXPECT(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
        EXPECT(syscall(SYS_kill, getppid(), 0), EPERM);
        EXPECT(syscall(SYS_mount, "none", "/nonexistent-zygote", "tmpfs", 0, NULL), EPERM);
        EXPECT(syscall(SYS_ioctl, 0, TIOCSTI, "x"), EPERM);
        EXPECT(syscall(SYS_clone3, NULL, 0), ENOSYS);
        EXPECT(getpid(), 0);
}

static void test_strict(void **state) {
        struct zp_profile *p = load_bundled("strict");
        char *sh[] = { "/bin/sh", "-c", "ls / | wc -l", NULL };
        char *py[] = { "/usr/bin/python3", "-c", "pass", NULL };
        char *py_sub[] = { "/usr/bin/python3", "-c",
                           "import os, subprocess, sys; print(len(os.listdir('/')));"
                           "sys.exit(subprocess.run(['/bin/true']).returncode)",
                           NULL };
        char out[4096];
        int status;

        status = run_under(p, sh, out, sizeof(out));
        assert_exit0("sh -c 'ls / | wc -l'", status, out);
        printf("# strict: sh -c 'ls / | wc -l' printed %s", out);
        assert_true(atoi(out) > 0); /* ls really listed / and wc really counted */

        if (access(py[0], X_OK) < 0) {
                zp_profile_free(p);
                fprintf(stderr, "skip: %s not installed\n", py[0]);
                skip();
        }
        status = run_under(p, py, out, sizeof(out));
        assert_exit0("python3 -c pass", status, out);
        status = run_under(p, py_sub, out, sizeof(out));
        assert_exit0("python3 with os.listdir and subprocess", status, out);
        assert_true(atoi(out) > 0);

        assert_child_ok(in_child(p, strict_checks));
        zp_profile_free(p);
}

/* --- the worker's setup under each filter ------------------------------------------------ */

/* The calls zygote's worker and reference make after the filter is inherited (ze_worker_syscalls,
 * without TIOCSCTTY and PR_SET_KEEPCAPS, which depend on the request and the profile), with
 * arguments that either succeed harmlessly in this throwaway child or fail in the kernel after the
 * filter let them through (EBADF, EINVAL): EPERM would mean the filter refused them. */
static void worker_checks(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];
        struct rlimit rl;

        NOT_REFUSED(syscall(SYS_clone, CLONE_PARENT | CLONE_PIDFD | CLONE_THREAD, NULL, NULL, NULL, 0)); /* EINVAL */
        NOT_REFUSED(syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 8));
        NOT_REFUSED(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, NULL, 8));
        NOT_REFUSED(syscall(SYS_close_range, 1000, 1001, 0));
        NOT_REFUSED(syscall(SYS_dup3, 0, 1000, O_CLOEXEC));
        NOT_REFUSED(fcntl(0, F_DUPFD_CLOEXEC, 1001));
        NOT_REFUSED(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY));
        NOT_REFUSED(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl));
        NOT_REFUSED(syscall(SYS_close, 1000));
        NOT_REFUSED(setsid());
        NOT_REFUSED(prctl(PR_CAPBSET_READ, CAP_CHOWN, 0, 0, 0));
        NOT_REFUSED(prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0));
        NOT_REFUSED(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
        NOT_REFUSED(syscall(SYS_setgroups, 0, NULL));
        NOT_REFUSED(syscall(SYS_setresgid, -1, -1, -1));
        NOT_REFUSED(syscall(SYS_setresuid, -1, -1, -1));
        NOT_REFUSED(syscall(SYS_capget, &hdr, data));
        NOT_REFUSED(syscall(SYS_capset, &hdr, data));
        NOT_REFUSED(chdir("/"));
        NOT_REFUSED(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
        NOT_REFUSED(syscall(SYS_read, -1, NULL, 0));
        NOT_REFUSED(syscall(SYS_write, -1, NULL, 0));
        NOT_REFUSED(syscall(SYS_recvmsg, -1, NULL, 0));
        NOT_REFUSED(syscall(SYS_sendmsg, -1, NULL, 0));
        NOT_REFUSED(syscall(SYS_execve, "/nonexistent-zygote", NULL, NULL));
}

static void test_worker_setup(void **state) {
        static const char *const names[] = { "default", "nonet", "strict" };

        for (size_t i = 0; i < 3; i++) {
                struct zp_profile *p = load_bundled(names[i]);
                assert_true(p->worker_setup_ok);
                assert_child_ok(in_child(p, worker_checks));
                zp_profile_free(p);
        }
}

static const struct CMUnitTest tests[] = {
        tu_test(test_default),
        tu_test(test_nonet),
        tu_test(test_strict),
        tu_test(test_worker_setup),
};

int main(int argc, char **argv) {
        profiles_dir = tu_profiles_dir_arg(argc, argv, "the syscall checks are written for x86_64");
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
                fprintf(stderr, "skip: the kernel has no seccomp (PR_GET_SECCOMP: %m)\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
