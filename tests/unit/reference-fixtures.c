/* SPDX-License-Identifier: MIT */
/* The reference tests' helpers: small filters, a plan, a worker spawned through a reference, /proc fields. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "pidfd-util.h"
#include "testutil.h"
#include "plan.h"
#include "reference.h"
#include "util.h"

#include "reference-fixtures.h"

struct sock_filter block_personality[TU_FILTER_BLOCKING_LEN] =
        TU_FILTER_BLOCKING(__NR_personality, SECCOMP_RET_ERRNO | BLOCKED_ERRNO);
struct sock_filter block_setresuid[TU_FILTER_BLOCKING_LEN] =
        TU_FILTER_BLOCKING(__NR_setresuid, SECCOMP_RET_ERRNO | EPERM);

char helper[PATH_MAX];
/* zr_helper_open(helper) */
int helper_fd = -EBADF;
char try_syscall[PATH_MAX];
char path_buf[PATH_MAX];
char *const test_env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };

void plan_init(struct ze_plan *p, char *const *argv) {
        ze_plan_init(p, argv, test_env, path_buf, sizeof(path_buf));
        p->filter_mode = ZE_FILTER_LOAD; /* ignored by the reference */
}

/* Whether the reference's fd is its closer helper's /proc/self/syscall, which the helper opens
 * as it starts (where it may: common/fd-closer.h), at a moment of its own. */
bool is_helper_syscall_file(pid_t pid, int fd) {
        char path[64], link[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
        n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
                return false;
        link[n] = 0;
        return strncmp(link, "/proc/", 6) == 0 && n > 8 && strcmp(link + n - 8, "/syscall") == 0;
}

/* The reference keeps fds 0 to 3 and its fd closer's (common/fd-closer.h, made at its start:
 * two pipes and the helper's pidfd, and maybe its /proc/self/syscall) only: nothing a request
 * brought stays behind. */
void assert_ref_fds_clean(const struct zr_reference *r) {
        char path[64], link[64];
        int pipes = 0, pidfds = 0;

        for (int fd = 4; fd < 64; fd++) {
                ssize_t n;

                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) r->pidref.pid, fd);
                n = readlink(path, link, sizeof(link) - 1);
                if (n < 0)
                        continue;
                link[n] = 0;
                if (strcmp(link, "anon_inode:[pidfd]") == 0)
                        pidfds++;
                else if (!is_helper_syscall_file(r->pidref.pid, fd)) {
                        assert_true(strncmp(link, "pipe:", 5) == 0);
                        pipes++;
                }
        }
        assert_int_equal(pipes, 4);
        assert_int_equal(pidfds, 1);
}

const char *field(const char *text, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);

        for (const char *l = text; *l; l = strchrnul(l, '\n'), l += *l ? 1 : 0)
                if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
                        const char *v = l + klen + 1, *e;

                        v += strspn(v, " \t");
                        e = strchrnul(v, '\n');
                        assert_true((size_t) (e - v) < size);
                        memcpy(buf, v, (size_t) (e - v));
                        buf[e - v] = 0;
                        return buf;
                }
        return NULL;
}

void file_field(pid_t pid, const char *key, char *buf, size_t size) {
        char path[64], text[8192];
        _cleanup_close_ int fd = -EBADF;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        tu_read_all(fd, text, sizeof(text));
        if (!field(text, key, buf, size))
                fail_msg("no %s in %s", key, path);
}

/* Spawns argv through the reference with stdout on a pipe; collects output, records, exit. */
int spawn_through(struct zr_reference *r, char *const *argv, const char *cwd, struct worker *w) {
        _cleanup_close_pair_ int status[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        _cleanup_(zc_pidref_done) struct zc_pidref worker = ZC_PIDREF_NULL;
        struct ze_fdmap map[1];
        struct ze_plan p;
        siginfo_t si = { 0 };
        int k;

        memset(w, 0, sizeof(*w));
        assert_return_code(pipe2(status, O_CLOEXEC), errno);
        assert_return_code(pipe2(out, O_CLOEXEC), errno);
        map[0] = (struct ze_fdmap){ .src = out[1], .target = 1 };
        plan_init(&p, argv);
        p.cwd = cwd;
        p.fds = map;
        p.n_fds = 1;
        p.status_fd = status[1];
        p.no_new_privs = true;
        k = zr_reference_spawn(r, &p, &worker);
        if (k < 0)
                return k;
        assert_true(worker.pid > 0);
        assert_int_equal(fcntl(worker.fd, F_GETFD), FD_CLOEXEC);
        out[1] = safe_close(out[1]);
        status[1] = safe_close(status[1]);
        tu_read_all(out[0], w->out, sizeof(w->out));
        while (tu_read_record(status[0], &w->rec, sizeof(w->rec)))
                w->n_recs++;
        /* works only because the worker is our child (CLONE_PARENT) */
        assert_int_equal(zc_pidref_wait(&worker, WEXITED, &si), 0);
        assert_int_equal(si.si_pid, worker.pid);
        w->code = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        return 0;
}
