/* SPDX-License-Identifier: MIT */
/*
 * filter-bench: times the filter step of a worker in the two tiers that differ only there.
 *
 *   load   seccomp(SECCOMP_SET_MODE_FILTER, 0, prog)           (the `load` tier)
 *   clone  seccomp(SECCOMP_CLONE_FILTER, 0, reference pidfd)    (the `clone` tier)
 *
 * Usage: filter-bench [--label NAME] BPF_FILE [ROUNDS]
 *        filter-bench [--label NAME] --pid PID [ROUNDS]
 *
 * BPF_FILE holds a raw array of struct sock_filter (what libseccomp's seccomp_export_bpf()
 * writes); a reference process of ours loads it once. With --pid, the reference is an existing
 * process with exactly one filter (a zygote-ref): its program is read back with
 * PTRACE_SECCOMP_GET_FILTER (needs CAP_SYS_ADMIN and CONFIG_CHECKPOINT_RESTORE) for the load
 * tier, and the process itself is the clone tier's source. Then ROUNDS times per tier,
 * alternating, a fresh child sets no_new_privs, takes its filter and reports how long the one
 * system call took, and whether the filter works (swapoff(NULL) must fail with EPERM, which a
 * docker-like program returns for swapoff while an unfiltered root gets EFAULT or ENOSYS).
 * Check names are NAME.load and NAME.clone (NAME defaults to filter-bench).
 *
 * Prints one `ok NAME` / `FAIL NAME: why` / `skip NAME: why` line per check, then the medians and
 * their ratio. Statically linked for the kernel lane's initramfs: no libseccomp, no stdio tricks.
 * Speed is reported, never asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_CLONE_FILTER
#define SECCOMP_CLONE_FILTER 4
#endif

enum tier { TIER_LOAD, TIER_CLONE, _TIER_MAX };
static const char *const tier_name[_TIER_MAX] = { "load", "clone" };

struct sample {
        int64_t ns;    /* duration of the filter system call */
        int32_t err;   /* errno of the filter call, 0 on success */
        int32_t works; /* 1 if swapoff(NULL) then failed with EPERM */
};

static int streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int read_bpf(const char *path, struct sock_fprog *ret) {
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
            st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
                close(fd);
                return -EINVAL;
        }
        struct sock_filter *insns = malloc(st.st_size);
        if (!insns) {
                close(fd);
                return -ENOMEM;
        }
        ssize_t n = read(fd, insns, st.st_size);
        close(fd);
        if (n != st.st_size) {
                free(insns);
                return -EIO;
        }
        ret->filter = insns;
        ret->len = (unsigned short) (st.st_size / sizeof(struct sock_filter));
        return 0;
}

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

/* Reads the only filter of a running process, stopping it briefly as its tracer. */
static int read_bpf_of_pid(pid_t pid, struct sock_fprog *ret) {
        struct sock_filter *insns = NULL;
        long n = -1;
        int status, r = 0;

        /* SEIZE + INTERRUPT: a ptrace-stop without sending SIGSTOP to the process. */
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0)
                return -errno;
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0 || waitpid(pid, &status, __WALL) != pid) {
                r = -errno;
                goto out;
        }
        /* Index 0 is the oldest filter; a process with two would not be a plain reference. */
        if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *) 1, NULL) >= 0) {
                r = -E2BIG;
                goto out;
        }
        n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *) 0, NULL);
        if (n <= 0 || n > BPF_MAXINSNS) {
                r = n < 0 ? -errno : -EINVAL;
                goto out;
        }
        insns = calloc(n, sizeof(*insns));
        if (!insns) {
                r = -ENOMEM;
                goto out;
        }
        if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *) 0, insns) != n) {
                r = -errno;
                free(insns);
                goto out;
        }
        ret->filter = insns;
        ret->len = (unsigned short) n;
out:
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
        return r;
}

/* The reference: loads the program, says so on ready_fd, lives until release_fd reaches EOF. */
static int start_reference(const struct sock_fprog *prog, pid_t *ret_pid, int *ret_release) {
        int ready[2], release[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(release, O_CLOEXEC) < 0) {
                int r = -errno;
                close(ready[0]);
                close(ready[1]);
                return r;
        }
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char c = 0;
                close(ready[0]);
                close(release[1]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
                        c = (char) errno;
                if (write(ready[1], &c, 1) != 1)
                        _exit(1);
                while (read(release[0], &c, 1) > 0)
                        ;
                _exit(0);
        }
        close(ready[1]);
        close(release[0]);
        char c = 1;
        ssize_t n = read(ready[0], &c, 1);
        close(ready[0]);
        if (n != 1 || c != 0) {
                close(release[1]);
                waitpid(pid, NULL, 0);
                return n == 1 ? -c : -EIO;
        }
        *ret_pid = pid;
        *ret_release = release[1];
        return 0;
}

/* One worker: fork, take the filter the tier's way, report. */
static int run_one(enum tier t, const struct sock_fprog *prog, int ref_pidfd, struct sample *ret) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                struct sample s = {};
                long r;
                close(p[0]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(1);
                int64_t t0 = now_ns();
                if (t == TIER_LOAD)
                        r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
                else
                        r = syscall(__NR_seccomp, SECCOMP_CLONE_FILTER, 0, (void *) (intptr_t) ref_pidfd);
                int64_t t1 = now_ns();
                s.ns = t1 - t0;
                s.err = r < 0 ? errno : 0;
                s.works = syscall(__NR_swapoff, NULL) < 0 && errno == EPERM;
                _exit(write(p[1], &s, sizeof(s)) == sizeof(s) ? 0 : 1);
        }
        close(p[1]);
        ssize_t n = read(p[0], ret, sizeof(*ret));
        close(p[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid)
                return -errno;
        return n == sizeof(*ret) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv) {
        const char *label = "filter-bench", *bpf_path = NULL;
        struct sock_fprog prog;
        pid_t ref_pid = -1;
        int release_fd = -1, r, a = 1;

        if (argc > a + 1 && streq(argv[a], "--label")) {
                label = argv[a + 1];
                a += 2;
        }
        if (argc > a + 1 && streq(argv[a], "--pid")) {
                ref_pid = (pid_t) strtol(argv[a + 1], NULL, 10);
                a += 2;
        } else if (argc > a)
                bpf_path = argv[a++];
        if ((ref_pid <= 0 && !bpf_path) || argc > a + 1) {
                fprintf(stderr, "usage: %s [--label NAME] (BPF_FILE | --pid PID) [ROUNDS]\n", argv[0]);
                return 2;
        }
        long rounds = argc > a ? strtol(argv[a], NULL, 10) : 1000;
        if (rounds < 1 || rounds > 1000000) {
                fprintf(stderr, "%s: bad ROUNDS\n", argv[0]);
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (bpf_path) {
                r = read_bpf(bpf_path, &prog);
                if (r < 0) {
                        printf("FAIL %s.read-bpf: %s: %s\n", label, bpf_path, strerror(-r));
                        return 1;
                }
                r = start_reference(&prog, &ref_pid, &release_fd);
                if (r < 0) {
                        printf("FAIL %s.reference: loading %u instructions: %s\n", label, prog.len, strerror(-r));
                        return 1;
                }
        } else {
                r = read_bpf_of_pid(ref_pid, &prog);
                if (r < 0) {
                        printf("FAIL %s.reference: reading the filter of pid %d: %s\n", label, (int) ref_pid,
                               strerror(-r));
                        return 1;
                }
        }
        int ref_pidfd = (int) syscall(__NR_pidfd_open, ref_pid, 0);
        if (ref_pidfd < 0) {
                printf("FAIL %s.reference: pidfd_open: %s\n", label, strerror(errno));
                return 1;
        }

        int64_t *ns[_TIER_MAX];
        long n_ok[_TIER_MAX] = {}, n_broken[_TIER_MAX] = {};
        int first_err[_TIER_MAX] = {};
        for (int t = 0; t < _TIER_MAX; t++) {
                ns[t] = calloc(rounds, sizeof(int64_t));
                if (!ns[t]) {
                        printf("FAIL %s.alloc: %s\n", label, strerror(ENOMEM));
                        return 1;
                }
        }

        /* Alternate the tiers so that drift (caches, the host under emulation) hits both alike. */
        for (long i = 0; i < rounds; i++)
                for (int t = 0; t < _TIER_MAX; t++) {
                        struct sample s;
                        r = run_one((enum tier) t, &prog, ref_pidfd, &s);
                        if (r < 0) {
                                printf("FAIL %s.%s: worker: %s\n", label, tier_name[t], strerror(-r));
                                return 1;
                        }
                        if (s.err) {
                                if (!first_err[t])
                                        first_err[t] = s.err;
                                continue;
                        }
                        if (!s.works)
                                n_broken[t]++;
                        ns[t][n_ok[t]++] = s.ns;
                }

        if (release_fd >= 0) {
                close(release_fd);
                waitpid(ref_pid, NULL, 0);
        }

        int failed = 0;
        for (int t = 0; t < _TIER_MAX; t++) {
                if (t == TIER_CLONE && n_ok[t] == 0 && first_err[t] == EINVAL)
                        printf("skip %s.%s: seccomp op 4 answers EINVAL (kernel lacks SECCOMP_CLONE_FILTER)\n", label,
                               tier_name[t]);
                else if (n_ok[t] != rounds) {
                        printf("FAIL %s.%s: %ld of %ld workers failed, first: %s\n", label, tier_name[t],
                               rounds - n_ok[t], rounds, strerror(first_err[t]));
                        failed = 1;
                } else if (n_broken[t]) {
                        printf("FAIL %s.%s: in %ld of %ld workers swapoff(NULL) was not refused with EPERM\n", label,
                               tier_name[t], n_broken[t], rounds);
                        failed = 1;
                } else
                        printf("ok %s.%s\n", label, tier_name[t]);
        }

        int64_t median[_TIER_MAX] = {};
        for (int t = 0; t < _TIER_MAX; t++)
                if (n_ok[t] > 0) {
                        qsort(ns[t], n_ok[t], sizeof(int64_t), cmp_i64);
                        median[t] = ns[t][n_ok[t] / 2];
                }
        printf("filter step (%s), %u BPF instructions, median over %ld forks: load %lld ns, clone %lld ns", label,
               prog.len, rounds, (long long) median[TIER_LOAD], (long long) median[TIER_CLONE]);
        if (median[TIER_LOAD] > 0 && median[TIER_CLONE] > 0)
                printf(", clone/load %.2f%%", 100.0 * (double) median[TIER_CLONE] / (double) median[TIER_LOAD]);
        printf("\n");
        return failed;
}
