/* SPDX-License-Identifier: MIT */
/*
 * Kernel feature probes (see probe.h). Every probe that changes process state does it in a
 * throwaway child: the daemon itself never gets a filter, never loses a capability.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "probe.h"
#include "steps.h"
#include "util.h"

#define PROBE_ERRNO 77 /* what the source's filter answers to getppid */

/* fork() with a pidfd. A raw clone: no atfork handlers run, and the child only makes syscalls. */
static pid_t fork_pidfd(int *ret_pidfd) {
        int pidfd = -1;
        long pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, NULL, &pidfd, NULL, 0);

        if (pid < 0)
                return -errno;
        if (pid > 0)
                *ret_pidfd = pidfd;
        return (pid_t) pid;
}

static int wait_pidfd(int pidfd) {
        siginfo_t si = { 0 };

        while (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

static int read_full(int fd, void *buf, size_t size) {
        size_t done = 0;

        while (done < size) {
                ssize_t n = read(fd, (char *) buf + done, size - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EPIPE; /* the child died before answering */
                done += (size_t) n;
        }
        return 0;
}

static void write_full(int fd, const void *buf, size_t size) {
        ssize_t n;

        do
                n = write(fd, buf, size);
        while (n < 0 && errno == EINTR);
}

/* A probe child's end: its one result record to fd, then exit. */
_Noreturn static void report_and_exit(int fd, const void *buf, size_t size) {
        write_full(fd, buf, size);
        _exit(0);
}

/* The parent's side of a probe child: closes the write end of result, reads the child's record
 * and reaps it. 1 with *buf filled; 0 with reason set when the child died without a word. */
static int read_result(int result[2], int pidfd, void *buf, size_t size, char *reason, size_t reason_size) {
        int r;

        result[1] = safe_close(result[1]);
        r = read_full(result[0], buf, size);
        (void) wait_pidfd(pidfd);
        if (r < 0) {
                snprintf(reason, reason_size, "probe child died: %s", strerror(-r));
                return 0;
        }
        return 1;
}

int ze_cap_last(unsigned *ret) {
        _cleanup_close_ int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
        char buf[16];
        ssize_t n;

        if (fd >= 0) {
                n = read(fd, buf, sizeof(buf) - 1);
                if (n > 0) {
                        char *end;
                        unsigned long v;

                        buf[n] = 0;
                        errno = 0;
                        v = strtoul(buf, &end, 10);
                        if (errno == 0 && end != buf && (*end == '\n' || *end == 0) && v < 64) {
                                *ret = (unsigned) v;
                                return 0;
                        }
                }
        }
        /* No /proc: the highest capability PR_CAPBSET_READ knows. */
        for (int c = 63; c >= 0; c--)
                if (prctl(PR_CAPBSET_READ, (unsigned long) c, 0UL, 0UL, 0UL) >= 0) {
                        *ret = (unsigned) c;
                        return 0;
                }
        return -EIO;
}

bool ze_apparmor_enabled(void) {
        char c = 0;
        int fd = open("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return false;
        if (read(fd, &c, 1) != 1)
                c = 0;
        close(fd);
        return c == 'Y' || c == '1';
}

bool ze_feature_disabled(const char *name) {
        const char *list = secure_getenv("ZYGOTE_DISABLE_FEATURES");
        size_t len = strlen(name);

        if (!list)
                return false;
        for (const char *s = list; *s;) {
                size_t n;

                s += strspn(s, ", \t");
                n = strcspn(s, ", \t");
                if ((n == len && strncmp(s, name, n) == 0) || (n == 3 && strncmp(s, "all", 3) == 0))
                        return true;
                s += n;
        }
        return false;
}

/* ---- SECCOMP_CLONE_FILTER --------------------------------------------------------------- */

/* getppid -> ERRNO(PROBE_ERRNO), everything else allowed. No architecture check: only this
 * probe's own child runs under it, and it makes native syscalls only. */
static struct sock_filter source_filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | PROBE_ERRNO),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

struct clone_result {
        int32_t r, err; /* seccomp op 4 */
        int32_t getppid_r, getppid_err;
};

static int probe_clone_filter(unsigned cap_last, char *reason, size_t size) {
        _cleanup_close_pair_ int ready[2] = { -EBADF, -EBADF }, release[2] = { -EBADF, -EBADF },
                                 result[2] = { -EBADF, -EBADF };
        _cleanup_close_ int source_pidfd = -EBADF, probe_pidfd = -EBADF;
        struct clone_result res;
        int32_t source_err;
        pid_t pid;
        int r;

        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(release, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0)
                return -errno;

        /* The source: loads the known filter, says so, stays alive until release closes. */
        pid = fork_pidfd(&source_pidfd);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                static const struct sock_fprog prog = { .len = ELEMENTSOF(source_filter), .filter = source_filter };
                int32_t e = 0;
                char b;

                close(release[1]);
                e = ze_step_nnp();
                if (e == 0)
                        e = ze_step_filter_load(&prog, 0);
                e = -e;
                write_full(ready[1], &e, sizeof(e));
                while (read(release[0], &b, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        release[0] = safe_close(release[0]);
        ready[1] = safe_close(ready[1]);
        r = read_full(ready[0], &source_err, sizeof(source_err));
        if (r < 0 || source_err != 0) {
                snprintf(reason, size, "probe source could not load its filter: %s", strerror(r < 0 ? -r : source_err));
                r = 0;
                goto finish;
        }

        /* The probe: clones the source's filter and checks its effect. */
        pid = fork_pidfd(&probe_pidfd);
        if (pid < 0) {
                r = pid;
                goto finish;
        }
        if (pid == 0) {
                struct clone_result c = { 0 };

                /* RFC: the caller needs no_new_privs or CAP_SYS_ADMIN */
                (void) ze_step_nnp();
                c.err = -ze_step_filter_clone(source_pidfd);
                c.r = c.err ? -1 : 0;
                if (c.r == 0) {
                        /* the raw syscall: glibc's getppid() has no error path to set errno */
                        errno = 0;
                        c.getppid_r = (int32_t) syscall(SYS_getppid);
                        c.getppid_err = errno;
                }
                report_and_exit(result[1], &c, sizeof(c));
        }
        r = 0;
        if (!read_result(result, probe_pidfd, &res, sizeof(res), reason, size))
                goto finish;
        if (res.r != 0)
                snprintf(reason, size, "seccomp op 4: %s", strerror(res.err));
        else if (res.getppid_r != -1 || res.getppid_err != PROBE_ERRNO)
                snprintf(reason, size,
                         "seccomp op 4 returned 0 but the cloned filter had no effect "
                         "(getppid: %d, errno %d)",
                         res.getppid_r, res.getppid_err);
        else {
                snprintf(reason, size, "seccomp op 4 cloned a reference's filter");
                r = 1;
        }

finish:
        release[1] = safe_close(release[1]); /* lets the source exit */
        (void) wait_pidfd(source_pidfd);
        return r;
}

/* ---- PR_CAPBSET_DROP_MASK ---------------------------------------------------------------- */

struct mask_result {
        int32_t r, err;
        int32_t cap, cap_after;     /* the capability dropped: 1 before, must be 0 after */
        int32_t other, other_after; /* one that stays: must still be 1 (-1: none to check) */
};

static int probe_capbset_drop_mask(unsigned cap_last, char *reason, size_t size) {
        _cleanup_close_pair_ int result[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF;
        struct mask_result res;
        pid_t pid;

        if (pipe2(result, O_CLOEXEC) < 0)
                return -errno;
        pid = fork_pidfd(&pidfd);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                struct mask_result m = { .cap = -1, .other = -1, .other_after = -1 };
                uint64_t mask;

                /* CAP_MKNOD if we have it, else the first capability we have (not CAP_SETPCAP,
                 * which the drop itself needs); another one to check it stays. */
                if (prctl(PR_CAPBSET_READ, (unsigned long) CAP_MKNOD, 0UL, 0UL, 0UL) == 1)
                        m.cap = CAP_MKNOD;
                for (int c = 0; c <= (int) cap_last; c++) {
                        if (c == CAP_SETPCAP || prctl(PR_CAPBSET_READ, (unsigned long) c, 0UL, 0UL, 0UL) != 1)
                                continue;
                        if (m.cap < 0)
                                m.cap = c;
                        else if (c != m.cap && m.other < 0)
                                m.other = c;
                }
                if (m.cap < 0) {
                        m.r = -1;
                        m.err = ENODATA;
                        report_and_exit(result[1], &m, sizeof(m));
                }
                mask = UINT64_C(1) << m.cap;
                m.r = prctl(ZC_PR_CAPBSET_DROP_MASK, (unsigned long) (uint32_t) mask,
                            (unsigned long) (uint32_t) (mask >> 32), 0UL, 0UL);
                m.err = m.r < 0 ? errno : 0;
                m.cap_after = prctl(PR_CAPBSET_READ, (unsigned long) m.cap, 0UL, 0UL, 0UL);
                if (m.other >= 0)
                        m.other_after = prctl(PR_CAPBSET_READ, (unsigned long) m.other, 0UL, 0UL, 0UL);
                report_and_exit(result[1], &m, sizeof(m));
        }
        if (!read_result(result, pidfd, &res, sizeof(res), reason, size))
                return 0;
        if (res.cap < 0)
                snprintf(reason, size, "no capability in the bounding set to test prctl 82 with");
        else if (res.r != 0)
                snprintf(reason, size, "prctl 82: %s", strerror(res.err));
        else if (res.cap_after != 0 || (res.other >= 0 && res.other_after != 1))
                snprintf(reason, size, "prctl 82 returned 0 but did not drop exactly capability %d", res.cap);
        else {
                snprintf(reason, size, "prctl 82 dropped capability %d from the bounding set", res.cap);
                return 1;
        }
        return 0;
}

/* ---- pid namespaces ---------------------------------------------------------------------- */

/* What a profile's pid namespace needs (pidns.h): a clone with CLONE_NEWPID | CLONE_NEWNS whose
 * child is pid 1. EINVAL without CONFIG_PID_NS, EPERM without CAP_SYS_ADMIN. */
static int probe_pid_namespace(unsigned cap_last, char *reason, size_t size) {
        _cleanup_close_ int pidfd = -1;
        siginfo_t si = { 0 };
        long pid = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_PIDFD | SIGCHLD, NULL, &pidfd, NULL, 0);

        if (pid < 0) {
                snprintf(reason, size, "clone(CLONE_NEWPID | CLONE_NEWNS): %s", strerror(errno));
                return 0;
        }
        if (pid == 0) {
                /* Workers join the namespace's mounts with setns(CLONE_NEWNS), which puts them at
                 * the mount namespace's root: in a zygoted that runs chrooted, outside its root.
                 * Joining our own mount namespace shows where that lands. */
                struct stat before, after;
                int mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

                if (syscall(SYS_getpid) != 1)
                        _exit(1);
                if (mnt < 0 || stat("/", &before) < 0 || syscall(SYS_setns, mnt, CLONE_NEWNS) < 0 ||
                    stat("/", &after) < 0)
                        _exit(3);
                _exit(before.st_dev == after.st_dev && before.st_ino == after.st_ino ? 0 : 2);
        }
        while (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return -errno;
        if (si.si_code != CLD_EXITED || si.si_status != 0) {
                snprintf(reason, size, "%s",
                         si.si_code == CLD_EXITED && si.si_status == 2
                                 ? "zygoted runs chrooted: joining the namespace's mounts would take tasks out of its "
                                   "root"
                         : si.si_code == CLD_EXITED && si.si_status == 3
                                 ? "a child could not join its own mount namespace (setns)"
                                 : "a child cloned with CLONE_NEWPID was not pid 1");
                return 0;
        }
        snprintf(reason, size, "a child cloned with CLONE_NEWPID is pid 1");
        return 1;
}

/* One feature: off with the reason when ZYGOTE_DISABLE_FEATURES names it, else what its probe
 * finds (> 0: there; < 0: the probe itself failed). */
static int feature(const char *name, int (*probe)(unsigned cap_last, char *reason, size_t size), unsigned cap_last,
                   bool *ret, char *reason, size_t size) {
        int r;

        if (ze_feature_disabled(name)) {
                snprintf(reason, size, "disabled by ZYGOTE_DISABLE_FEATURES");
                return 0;
        }
        r = probe(cap_last, reason, size);
        if (r >= 0)
                *ret = r > 0;
        return r;
}

int ze_probe_features(struct ze_features *ret) {
        struct ze_features f = { 0 };
        int r;

        r = ze_cap_last(&f.cap_last);
        if (r >= 0)
                r = feature("clone_filter", probe_clone_filter, f.cap_last, &f.clone_filter, f.clone_filter_reason,
                            sizeof(f.clone_filter_reason));
        if (r >= 0)
                r = feature("capbset_drop_mask", probe_capbset_drop_mask, f.cap_last, &f.capbset_drop_mask,
                            f.capbset_drop_mask_reason, sizeof(f.capbset_drop_mask_reason));
        if (r >= 0)
                r = feature("pid_namespace", probe_pid_namespace, f.cap_last, &f.pid_namespace, f.pid_namespace_reason,
                            sizeof(f.pid_namespace_reason));
        if (r < 0)
                return r;
        *ret = f;
        return 0;
}
