/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the container process's AppArmor step (engine/sandbox-lsm.c): the thread's exec
 * attribute file is opened through a procfs instance of its own, so that a file bound over it in
 * the runtime's /proc, or a /proc that is no procfs (the image's, a volume's: the CVE-2019-16884
 * and CVE-2025-52881 classes), never takes the label; where fsopen is refused (forced here with a
 * seccomp filter, as rootless), /proc is used only if it is procfs and the file is reached
 * without crossing a mount. Each case runs in a child of its own (mount namespace, filter) and
 * reports what it saw through a pipe. The write itself is checked to reach the kernel: "exec
 * PROFILE" for a profile nobody loaded fails there (EINVAL without AppArmor, ENOENT with it);
 * with a profile loaded (the kernel lane's guest) the process's execve runs under it.
 *
 *   test-sandbox-lsm      needs root for the mounts; exits 77 without it
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox.h"
#include "testutil.h"

enum {
        BAIT = 1 << 0,      /* a regular file bound over the thread's attr/exec in the runtime's /proc */
        NO_FSOPEN = 1 << 1, /* fsopen fails EPERM: the fallback to /proc */
        FAKE_PROC = 1 << 2, /* a tmpfs on /proc */
};

struct outcome {
        int tid;
        int open_r;  /* ze_sb_lsm_open's */
        int write_r; /* ze_sb_lsm_write's, when open succeeded */
        char link[128];
        char bait[64]; /* what the bait file holds afterwards */
};

static char bait_path[] = "/tmp/zytest-lsm-bait-XXXXXX";

static int child_case(int mode, struct outcome *o) {
        struct sock_filter insns[] = TU_FILTER_BLOCKING(__NR_fsopen, SECCOMP_RET_ERRNO | EPERM);
        struct sock_fprog prog = { .len = TU_FILTER_BLOCKING_LEN, .filter = insns };
        char path[64], task_path[64];
        int fd;

        o->tid = (int) syscall(SYS_gettid);
        if (mode & (BAIT | FAKE_PROC)) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        return 10;
        }
        /* both names of the thread's file: its process's and its task's, which thread-self names */
        snprintf(path, sizeof(path), "/proc/%d/attr/exec", o->tid);
        snprintf(task_path, sizeof(task_path), "/proc/%d/task/%d/attr/exec", o->tid, o->tid);
        if ((mode & BAIT) &&
            (mount(bait_path, path, NULL, MS_BIND, NULL) < 0 || mount(bait_path, task_path, NULL, MS_BIND, NULL) < 0))
                return 11;
        if ((mode & FAKE_PROC) && mount("tmpfs", "/proc", "tmpfs", 0, NULL) < 0)
                return 12;
        if (mode & NO_FSOPEN) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        return 13;
        }
        fd = ze_sb_lsm_open("exec");
        o->open_r = fd < 0 ? fd : 0;
        if (fd >= 0) {
                char self[64];
                ssize_t n;

                snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
                /* with FAKE_PROC, /proc/self is the tmpfs: no link to read there */
                n = (mode & FAKE_PROC) ? 0 : readlink(self, o->link, sizeof(o->link) - 1);
                o->link[n > 0 ? n : 0] = '\0';
                o->write_r = ze_sb_lsm_write(fd, "exec zytest-never-loaded");
        }
        return 0;
}

static void run_case(int mode, struct outcome *o) {
        int p[2], status, fd;
        pid_t pid;

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        fd = mkstemp(bait_path);
        assert_true(fd >= 0);
        close(fd);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct outcome mine = { .open_r = 1, .write_r = 1 };
                int code = child_case(mode, &mine);

                if (write(p[1], &mine, sizeof(mine)) != (ssize_t) sizeof(mine))
                        code = 14;
                _exit(code);
        }
        close(p[1]);
        memset(o, 0, sizeof(*o));
        assert_true(tu_read_record(p[0], o, sizeof(*o)));
        close(p[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        fd = open(bait_path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        o->bait[read(fd, o->bait, sizeof(o->bait) - 1) > 0 ? strlen(o->bait) : 0] = '\0';
        close(fd);
        unlink(bait_path);
        strcpy(bait_path, "/tmp/zytest-lsm-bait-XXXXXX");
}

/* the kernel took the write and refused the profile: no LSM that takes "exec", or no such profile */
static void assert_reached_the_kernel(const struct outcome *o) {
        assert_true(o->write_r == -EINVAL || o->write_r == -ENOENT);
}

static void test_own_procfs_instance(void **state) {
        struct outcome o;
        char want[64];

        (void) state;
        run_case(0, &o);
        assert_int_equal(o.open_r, 0);
        /* a detached mount: the path is the instance's own, not under /proc */
        snprintf(want, sizeof(want), "/%d/task/%d/attr/exec", o.tid, o.tid);
        assert_string_equal(o.link, want);
        assert_reached_the_kernel(&o);
}

static void test_bait_over_the_file_takes_nothing(void **state) {
        struct outcome o;

        (void) state;
        run_case(BAIT, &o);
        assert_int_equal(o.open_r, 0);
        assert_reached_the_kernel(&o);
        assert_string_equal(o.bait, "");
}

static void test_fallback_uses_proc(void **state) {
        struct outcome o;
        char want[64];

        (void) state;
        run_case(NO_FSOPEN, &o);
        assert_int_equal(o.open_r, 0);
        snprintf(want, sizeof(want), "/proc/%d/task/%d/attr/exec", o.tid, o.tid);
        assert_string_equal(o.link, want);
        assert_reached_the_kernel(&o);
}

static void test_fallback_refuses_a_mount_over_the_file(void **state) {
        struct outcome o;

        (void) state;
        run_case(NO_FSOPEN | BAIT, &o);
        assert_int_equal(o.open_r, -EXDEV);
        assert_string_equal(o.bait, "");
}

static void test_fallback_refuses_a_proc_that_is_no_procfs(void **state) {
        struct outcome o;

        (void) state;
        run_case(NO_FSOPEN | FAKE_PROC, &o);
        assert_int_equal(o.open_r, -EXDEV);
}

static void test_fake_proc_does_not_matter_to_the_own_instance(void **state) {
        struct outcome o;

        (void) state;
        run_case(FAKE_PROC, &o);
        assert_int_equal(o.open_r, 0);
        assert_reached_the_kernel(&o);
}

/* On a kernel with AppArmor (the kernel lane's guest, with the profile loaded by its init):
 * ZYTEST_APPARMOR_PROFILE names a loaded profile that lets cat read /proc, and a process that
 * went through both steps runs its execve under it. Skipped without. */
static void test_profile_applied(void **state) {
        const char *profile = getenv("ZYTEST_APPARMOR_PROFILE");
        const char *attr = access("/proc/self/attr/apparmor", F_OK) == 0 ? "apparmor/exec" : "exec";
        char text[300], got[300], want[300];
        int p[2], status;
        pid_t pid;

        (void) state;
        if (!profile) {
                printf("skip: ZYTEST_APPARMOR_PROFILE names no loaded profile (the kernel lane loads one)\n");
                skip();
        }
        snprintf(text, sizeof(text), "exec %s", profile);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = ze_sb_lsm_open(attr);

                if (fd < 0 || ze_sb_lsm_write(fd, text) < 0 || dup2(p[1], 1) < 0)
                        _exit(20);
                execl("/bin/cat", "cat", "/proc/self/attr/current", (char *) NULL);
                _exit(21);
        }
        close(p[1]);
        got[tu_read_all(p[0], got, sizeof(got))] = '\0';
        close(p[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        snprintf(want, sizeof(want), "%s (enforce)\n", profile);
        assert_string_equal(got, want);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                tu_test(test_own_procfs_instance),
                tu_test(test_bait_over_the_file_takes_nothing),
                tu_test(test_fallback_uses_proc),
                tu_test(test_fallback_refuses_a_mount_over_the_file),
                tu_test(test_fallback_refuses_a_proc_that_is_no_procfs),
                tu_test(test_fake_proc_does_not_matter_to_the_own_instance),
                tu_test(test_profile_applied),
        };

        if (geteuid() != 0) {
                printf("skip: the cases mount (a bind, a tmpfs on /proc) and make procfs instances: root only\n");
                return 77;
        }
        return cmocka_run_group_tests_name("sandbox-lsm", tests, NULL, NULL);
}
