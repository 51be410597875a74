/* SPDX-License-Identifier: MIT */
/*
 * runc 1.1's -ENOSYS stub in a container's filter (profile/seccomp-enosys.c,
 * zp_profile_options.enosys_newer): on each listed architecture a number above the highest the
 * object names answers ENOSYS, one below it the default action; x32 against its own numbers; the
 * defaults runc leaves alone are left alone; and the real kernel answers so on this machine.
 *
 * Usage: test-profile-enosys PROFILES_DIR
 */
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "profile-fixtures.h"
#include "util.h"

#define ENOSYS_ACT (SECCOMP_RET_ERRNO | ENOSYS)
#define EPERM_ACT (SECCOMP_RET_ERRNO | EPERM)
#define NAMES "'read','getpid','exit_group','clone'"

static struct zp_profile *load_with(const char *json, bool enosys_newer) {
        const struct zp_profile_options opts = { .listener = true, .enosys_newer = enosys_newer };
        struct zp_profile *p = NULL;
        char *err = NULL, *j = J(json);
        int r = zp_profile_load_buffer_with(BUF_PATH, j, strlen(j), &opts, &p, &err);

        if (r < 0)
                fail_msg("unexpected failure %d: %s\n  for %s", r, err, j);
        free(j);
        return p;
}

/* The highest number among NAMES on arch (with x32's bit on x32). */
static uint32_t last_of(uint32_t arch) {
        static const char *const names[] = { "read", "getpid", "exit_group", "clone" };
        uint32_t last = 0;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                int nr = seccomp_syscall_resolve_name_arch(arch, names[i]);
                if (nr > 0 && (uint32_t) nr > last)
                        last = (uint32_t) nr;
        }
        return last;
}

/* On arch (decided as audit, nr as given): the highest allowed, one above ENOSYS, one below it
 * (not named) the default, far above ENOSYS too. */
static void check_arch(const struct zp_profile *p, uint32_t arch, uint32_t audit, uint32_t def) {
        uint32_t last = last_of(arch);

        assert_true(last > 1);
        assert_int_equal(decide_arch(p, audit, (int) last, 0, 0), SECCOMP_RET_ALLOW);
        assert_int_equal(decide_arch(p, audit, (int) (last + 1), 0, 0), ENOSYS_ACT);
        assert_int_equal(decide_arch(p, audit, (int) (last + 900), 0, 0), ENOSYS_ACT);
        assert_int_equal(decide_arch(p, audit, (int) (last - 1), 0, 0), def);
}

static void test_newer_calls_answer_enosys_per_architecture(void **state) {
        struct zp_profile *p = load_with("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64',"
                                         "'SCMP_ARCH_X86','SCMP_ARCH_X32','SCMP_ARCH_AARCH64'],"
                                         "'syscalls':[{'names':[" NAMES "],'action':'SCMP_ACT_ALLOW'}]}",
                                         true);
        struct zp_profile *plain = load_with("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64',"
                                             "'SCMP_ARCH_X86','SCMP_ARCH_X32','SCMP_ARCH_AARCH64'],"
                                             "'syscalls':[{'names':[" NAMES "],'action':'SCMP_ACT_ALLOW'}]}",
                                             false);

        check_arch(p, SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, EPERM_ACT);
        check_arch(p, SCMP_ARCH_X86, AUDIT_ARCH_I386, EPERM_ACT);
        check_arch(p, SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64, EPERM_ACT);
        /* x32: its numbers carry bit 30 and come with x86_64's arch; compared with x32's own */
        check_arch(p, SCMP_ARCH_X32, AUDIT_ARCH_X86_64, EPERM_ACT);
        /* an x86_64 number above x86_64's last but below x32's (bit clear) is still ENOSYS */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 1000, 0, 0), ENOSYS_ACT);
        /* (s390's block, its multiplexer number 0 answered ENOSYS, is built only on a big-endian
         * host: libseccomp refuses to mix byte orders in one filter) */
        /* an architecture not listed: libseccomp's program decides, as without the stub */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_ARM, 1000, 0, 0), decide_arch(plain, AUDIT_ARCH_ARM, 1000, 0, 0));
        /* without the option (a task's profile): the default action, as before */
        assert_int_equal(decide_arch(plain, AUDIT_ARCH_X86_64, (int) (last_of(SCMP_ARCH_X86_64) + 1), 0, 0), EPERM_ACT);
        assert_int_equal(decide_arch(plain, AUDIT_ARCH_I386, (int) (last_of(SCMP_ARCH_X86) + 1), 0, 0), EPERM_ACT);
        zp_profile_free(p);
        zp_profile_free(plain);
}

static void test_only_x86_64_or_only_x32(void **state) {
        const char *json = "{'defaultAction':'SCMP_ACT_KILL_PROCESS','architectures':['SCMP_ARCH_X86_64'],"
                           "'syscalls':[{'names':[" NAMES "],'action':'SCMP_ACT_ALLOW'}]}";
        struct zp_profile *p = load_with(json, true), *plain = load_with(json, false);
        uint32_t x32_last = last_of(SCMP_ARCH_X32);

        /* a refusal that kills is still a refusal: newer calls get ENOSYS, older ones the kill */
        check_arch(p, SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, SECCOMP_RET_KILL_PROCESS);
        /* x32 not listed: its calls are libseccomp's to refuse, as without the stub */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, (int) (x32_last + 1), 0, 0),
                         decide_arch(plain, AUDIT_ARCH_X86_64, (int) (x32_last + 1), 0, 0));
        assert_int_not_equal(decide_arch(p, AUDIT_ARCH_X86_64, (int) (x32_last + 1), 0, 0), ENOSYS_ACT);
        zp_profile_free(p);
        zp_profile_free(plain);

        p = load_with("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X32'],"
                      "'syscalls':[{'names':[" NAMES "],'action':'SCMP_ACT_ALLOW'}]}",
                      true);
        /* the native x86_64 is not listed (runc counts only what the object lists) */
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, 1000, 0, 0), EPERM_ACT);
        check_arch(p, SCMP_ARCH_X32, AUDIT_ARCH_X86_64, EPERM_ACT);
        zp_profile_free(p);
}

/* What runc leaves without a stub: the program is the one compiled without the option. */
static void same_program(const char *json) {
        struct zp_profile *a = load_with(json, true), *b = load_with(json, false);

        assert_int_equal(a->bpf_len, b->bpf_len);
        assert_memory_equal(a->bpf, b->bpf, a->bpf_len * sizeof(*a->bpf));
        zp_profile_free(a);
        zp_profile_free(b);
}

static void test_left_alone(void **state) {
        /* defaults that let calls through, log or trace them */
        same_program("{'defaultAction':'SCMP_ACT_ALLOW','architectures':['SCMP_ARCH_X86_64'],'syscalls':[{'names':["
                     "'mkdir'],'action':'SCMP_ACT_ERRNO'}]}");
        same_program("{'defaultAction':'SCMP_ACT_LOG','architectures':['SCMP_ARCH_X86_64'],'syscalls':[{'names':["
                     "'mkdir'],'action':'SCMP_ACT_ERRNO'}]}");
        same_program("{'defaultAction':'SCMP_ACT_TRACE','architectures':['SCMP_ARCH_X86_64'],'syscalls':[{'names':["
                     "'mkdir'],'action':'SCMP_ACT_ALLOW'}]}");
        /* a default that answers ENOSYS already */
        same_program("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':38,'architectures':['SCMP_ARCH_X86_64'],"
                     "'syscalls':[{'names':['read'],'action':'SCMP_ACT_ALLOW'}]}");
        /* no architecture listed: runc's stub has none to check */
        same_program("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],'action':'SCMP_ACT_ALLOW'}]}");
}

static void test_counts_active_rules_of_any_action(void **state) {
        /* a rule left out by includes/excludes names nothing; one with another action counts */
        struct zp_profile *p = load_with(
                "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
                "{'names':['read','getpid'],'action':'SCMP_ACT_ALLOW'},"
                "{'names':['clone3'],'action':'SCMP_ACT_ALLOW','excludes':{'arches':['amd64','arm64','x86','arm',"
                "'ppc64le','s390x','riscv64']}},{'names':['clone'],'action':'SCMP_ACT_ERRNO','errnoRet':1}]}",
                true);
        int clone = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "clone"),
            clone3 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "clone3");

        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, clone, 0, 0), EPERM_ACT);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, clone + 1, 0, 0), ENOSYS_ACT);
        assert_int_equal(decide_arch(p, AUDIT_ARCH_X86_64, clone3, 0, 0), ENOSYS_ACT);
        zp_profile_free(p);

        /* archMap: Docker's entry of the native architecture lists it */
        p = load_with("{'defaultAction':'SCMP_ACT_ERRNO','archMap':[{'architecture':'SCMP_ARCH_X86_64',"
                      "'subArchitectures':['SCMP_ARCH_X86']}],'syscalls':[{'names':[" NAMES
                      "],'action':'SCMP_ACT_ALLOW'}]}",
                      true);
        if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
                check_arch(p, SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, EPERM_ACT);
                check_arch(p, SCMP_ARCH_X86, AUDIT_ARCH_I386, EPERM_ACT);
        }
        zp_profile_free(p);
}

/* What the child below calls under the program, and what an ASan build's runtime calls there
 * (its signal stack and shadow mappings): each below the last of NAMES on x86_64, and counted in
 * the last on any architecture. */
#define KERNEL_NAMES NAMES ",'write','exit','mmap','munmap','sigaltstack','rt_sigprocmask','rt_sigaction','madvise'"

/* The kernel's answers to the program, in a child: ENOSYS above the last, EPERM below it. */
static void test_kernel_answers(void **state) {
        static const char *const extra[] = { "write",       "exit",           "mmap",         "munmap",
                                             "sigaltstack", "rt_sigprocmask", "rt_sigaction", "madvise" };
        struct zp_profile *p = load_with("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_NATIVE'],"
                                         "'syscalls':[{'names':[" KERNEL_NAMES "],'action':'SCMP_ACT_ALLOW'}]}",
                                         true);
        uint32_t last = last_of(seccomp_arch_native());

        for (size_t i = 0; i < ELEMENTSOF(extra); i++) {
                int nr = seccomp_syscall_resolve_name(extra[i]);
                if (nr > 0 && (uint32_t) nr > last)
                        last = (uint32_t) nr;
        }
        int nw = seccomp_syscall_resolve_name("write"), ne = seccomp_syscall_resolve_name("exit");
        struct sock_fprog prog = { .len = (unsigned short) p->bpf_len, .filter = p->bpf };
        int status;
        pid_t pid;

        if (last < (uint32_t) nw || last < (uint32_t) ne || last - 1 == (uint32_t) nw || last - 1 == (uint32_t) ne) {
                zp_profile_free(p);
                skip(); /* the names' numbers on this architecture do not leave a gap below the last */
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                long above, below;
                int e_above, e_below;

                if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        _exit(2);
                above = syscall((long) last + 1, 0, 0, 0);
                e_above = errno;
                below = syscall((long) last - 1, -1L, 0, 0);
                e_below = errno;
                _exit(above == -1 && e_above == ENOSYS && below == -1 && e_below == EPERM ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        zp_profile_free(p);
}

static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newer_calls_answer_enosys_per_architecture),
        cmocka_unit_test(test_only_x86_64_or_only_x32),
        cmocka_unit_test(test_left_alone),
        cmocka_unit_test(test_counts_active_rules_of_any_action),
        cmocka_unit_test(test_kernel_answers),
};

PROFILE_TESTS_MAIN(tests)
