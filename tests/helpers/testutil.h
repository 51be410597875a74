/* SPDX-License-Identifier: MIT */
/*
 * Small helpers the cmocka unit tests share: bounded waits on fds and pidfds, reading a pipe to
 * its end, counting open fds. They fail the running test (cmocka) instead of returning errors.
 */
#pragma once

#include <linux/audit.h>
#include <stdbool.h>
#include <stddef.h>

/* The AUDIT_ARCH_* that the tests' own seccomp filters check. */
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH_*"
#endif

/* The instructions of a filter that allows every system call of TEST_AUDIT_ARCH but sysnr, which
 * gets ret (SECCOMP_RET_ERRNO | errno, SECCOMP_RET_KILL_PROCESS): TU_BPF_ONLY inside an
 * initializer of its own, TU_BPF_FAIL_ONLY(nr, errno) for an errno, TU_FILTER_BLOCKING as a whole
 * initializer of TU_FILTER_BLOCKING_LEN struct sock_filter. Needs <linux/filter.h>,
 * <linux/seccomp.h> and <stddef.h>. */
#define TU_BPF_ONLY(sysnr, ret) \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0), \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), \
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (sysnr), 0, 1), BPF_STMT(BPF_RET | BPF_K, (ret)), \
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define TU_BPF_FAIL_ONLY(sysnr, err_no) TU_BPF_ONLY(sysnr, SECCOMP_RET_ERRNO | (err_no))
#define TU_FILTER_BLOCKING_LEN 7
#define TU_FILTER_BLOCKING(sysnr, ret) \
        { TU_BPF_ONLY(sysnr, ret) }

/* A bound on every wait, so that a child that keeps a pipe open (the bug many tests look for)
 * fails the test instead of hanging it. Never a synchronisation delay. */
#define TU_TIMEOUT_MS 20000

/* Waits until fd is readable (data or EOF); fails the test after TU_TIMEOUT_MS. */
void tu_wait_input(int fd);

/* Reads fd to EOF into buf (NUL-terminated; the test fails if it does not fit). Returns the
 * length. */
size_t tu_read_all(int fd, char *buf, size_t size);

/* Reads one fixed-size record (such as a child's {step, errno}) from a pipe: true with *rec
 * filled, false at EOF; a short record fails the test. */
bool tu_read_record(int fd, void *rec, size_t size);

/* Reaps the process of pidfd: its exit code, or 128 + the signal that killed it. */
int tu_wait_code(int pidfd);

/* Fails the test unless every child of this process has been reaped (none left, exited or not). */
void tu_assert_no_children(void);

/* Per-test bounds for cmocka groups (cmocka_unit_test_setup_teardown(test, tu_setup_bounded,
 * tu_teardown_no_leftovers)): the setup arms an alarm of TU_TEST_BOUND_S seconds, after which the
 * binary exits 1 saying so (cmocka has printed the test's name); the teardown disarms it, gives
 * this process's children TU_LEFTOVER_GRACE_MS to end, and fails the test when any is still
 * running (they are listed and killed), so that no test leaves a process for the next. */
#define TU_TEST_BOUND_S 30
#define TU_LEFTOVER_GRACE_MS 5000
int tu_setup_bounded(void **state);
int tu_teardown_no_leftovers(void **state);
/* A cmocka test with both. */
#define tu_test(f) cmocka_unit_test_setup_teardown(f, tu_setup_bounded, tu_teardown_no_leftovers)
/* The same test function run once per case, under its own name, with the case as its *state:
 * tu_test_case with the bounds of tu_test, tu_unit_test_case without. */
#define tu_test_case(name, f, c) \
        { name, f, tu_setup_bounded, tu_teardown_no_leftovers, (void *) (c) }
#define tu_unit_test_case(name, f, c) \
        { name, f, NULL, NULL, (void *) (c) }

/* main() of a unit test executable: the arguments (tu_test() entries and the like) are its tests,
 * run as one cmocka group; TU_MAIN_GROUP names the group and gives it a setup (or NULL). */
#define TU_MAIN_GROUP(name, setup, ...) \
        int main(void) { \
                const struct CMUnitTest tests[] = { __VA_ARGS__ }; \
                return cmocka_run_group_tests_name(name, tests, setup, NULL); \
        }
#define TU_MAIN(...) TU_MAIN_GROUP("tests", NULL, __VA_ARGS__)

/* A cgroup hierarchy a root test may make cgroups in (v1 pids, or the v2 one), or NULL. */
const char *tu_cgroup_base(void);

/* The one fd a peer sends over sock (with a byte of data), asserted. */
int tu_recv_fd(int sock);

/* How many fds this process has open (below 1024). */
int tu_count_open_fds(void);

/* The command line of a test of the bundled profiles: the one argument, PROFILES_DIR, which it
 * returns. A bad command line exits 2; a machine that is not x86_64 exits 77 (a skip) saying
 * why_x86_64, since such tests spell syscalls by their x86_64 numbers. */
const char *tu_profiles_dir_arg(int argc, char **argv, const char *why_x86_64);
