/* SPDX-License-Identifier: MIT */
/*
 * The caller's LSM label, where the kernel lets it be read (AppArmor, SELinux), and what the
 * worker writes to its own exec attribute so that its task runs under that label rather than
 * zygoted's (child.h, step 0d). Landlock is not here: a domain cannot be read from outside the
 * process, so a caller that may hold one is refused instead (spawn-identity.c). BPF-LSM
 * programs attached to cgroups follow the caller's cgroups (caller-cgroup.c).
 *
 * zd_lsm_label() and zd_lsm_exec_text() are pure, for the unit test; the rest reads /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller-proc.h"
#include "probe.h"
#include "util.h"

int zd_lsm_label(enum zd_lsm lsm, const char *text, char *ret, size_t size) {
        size_t n = strlen(text);

        /* SELinux ends its context with a NUL (read as the end here) or a newline; AppArmor
         * ends its label with a newline, after the mode: "name (enforce)" */
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
                n--;
        if (lsm == ZD_LSM_APPARMOR && n > 0 && text[n - 1] == ')') {
                const char *mode = NULL;

                for (const char *q = text; q + 1 < text + n; q++)
                        if (q[0] == ' ' && q[1] == '(')
                                mode = q;
                if (mode)
                        n = (size_t) (mode - text);
        }
        if (lsm == ZD_LSM_NONE || n == 0)
                return -EINVAL;
        /* a label is one word: nothing the exec attribute would read as more than one */
        for (size_t i = 0; i < n; i++)
                if (text[i] == '\n' || text[i] == '\0' || (lsm == ZD_LSM_SELINUX && text[i] == ' '))
                        return -EINVAL;
        if (n + 1 > size)
                return -ENAMETOOLONG;
        memcpy(ret, text, n);
        ret[n] = '\0';
        return 0;
}

int zd_lsm_exec_text(enum zd_lsm lsm, const char *caller_label, const char *own_label, char *ret, size_t size) {
        int n;

        ret[0] = '\0';
        if (lsm == ZD_LSM_NONE || streq(caller_label, own_label))
                return 0;
        /* An unconfined caller's task under zygoted's own profile is no less confined than its
         * caller, and an exec transition to "unconfined" is one a confined zygoted may not
         * make: nothing to write. SELinux has no such label: every context is a domain. */
        if (lsm == ZD_LSM_APPARMOR && streq(caller_label, "unconfined"))
                return 0;
        n = lsm == ZD_LSM_APPARMOR ? snprintf(ret, size, "exec %s", caller_label)
                                   : snprintf(ret, size, "%s", caller_label);
        if (n < 0 || (size_t) n >= size) {
                ret[0] = '\0';
                return -ENAMETOOLONG;
        }
        return 1;
}

/* Which LSM labels processes on this kernel, and zygoted's own label, read once: neither
 * changes while zygoted runs (a profile replaced in place keeps its name). */
static enum zd_lsm own_lsm;
static char own_label[ZD_LSM_LABEL_MAX];
static bool own_known;

/* AppArmor's own file (Linux 5.8+, where LSMs may stack), else the shared one */
static const char *apparmor_current(int dir_fd, char **ret) {
        int r = zd_caller_read_proc(dir_fd, "attr/apparmor/current", ret);

        if (r == -ENOENT && zd_caller_read_proc(dir_fd, "attr/current", ret) >= 0)
                return "/proc/thread-self/attr/exec";
        return r >= 0 ? "/proc/thread-self/attr/apparmor/exec" : NULL;
}

static int read_own(void) {
        _cleanup_close_ int self = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        if (own_known)
                return 0;
        self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (self < 0)
                return negative_errno();
        /* securityfs (/sys/kernel/security/lsm) is not mounted everywhere: each LSM's own sign.
         * An LSM that is on but whose label zygoted cannot read fails every Spawn (fail closed)
         * rather than let tasks run without their callers' labels. */
        own_lsm = ZD_LSM_NONE;
        if (ze_apparmor_enabled()) {
                own_lsm = ZD_LSM_APPARMOR;
                if (!apparmor_current(self, &text))
                        return -ENODATA;
        } else if (access("/sys/fs/selinux/enforce", F_OK) == 0) {
                own_lsm = ZD_LSM_SELINUX;
                r = zd_caller_read_proc(self, "attr/current", &text);
                if (r < 0)
                        return r;
        }
        if (own_lsm != ZD_LSM_NONE) {
                r = zd_lsm_label(own_lsm, text, own_label, sizeof(own_label));
                if (r < 0)
                        return r;
        }
        own_known = true;
        return 0;
}

/* The label of the process or thread whose /proc directory is dir_fd, and the exec attribute
 * file its worker would write. */
static int read_label(int dir_fd, char label[static ZD_LSM_LABEL_MAX], const char **ret_attr) {
        _cleanup_free_ char *text = NULL;
        int r;

        *ret_attr = "/proc/thread-self/attr/exec";
        if (own_lsm == ZD_LSM_APPARMOR) {
                *ret_attr = apparmor_current(dir_fd, &text);
                if (!*ret_attr)
                        return -ENODATA; /* readable here, not there: not one we can carry */
        } else {
                r = zd_caller_read_proc(dir_fd, "attr/current", &text);
                if (r < 0)
                        return r;
        }
        return zd_lsm_label(own_lsm, text, label, ZD_LSM_LABEL_MAX);
}

/* Labels are per thread, like credentials, and zygoted cannot tell which thread made the call:
 * threads under different labels are refused rather than guessed at (-EILSEQ). */
int zd_caller_thread_same_label(int dir_fd, const struct zd_caller_first *first) {
        char other[ZD_LSM_LABEL_MAX];
        const char *attr;
        int r;

        if (!first->has_label)
                return 0;
        r = read_label(dir_fd, other, &attr);
        return r < 0 ? r : streq(other, first->label) ? 0 : -EILSEQ;
}

int zd_caller_read_lsm(int proc_fd, struct zd_caller *c, struct zd_caller_first *first) {
        const char *attr;
        int r;

        c->lsm_attr = NULL;
        first->has_label = false;
        r = read_own();
        if (r < 0 || own_lsm == ZD_LSM_NONE)
                return r;
        r = read_label(proc_fd, first->label, &attr);
        if (r < 0)
                return r;
        first->has_label = true;
        r = zd_lsm_exec_text(own_lsm, first->label, own_label, c->lsm_exec, sizeof(c->lsm_exec));
        if (r < 0)
                return r;
        c->lsm_attr = r > 0 ? attr : NULL;
        return 0;
}
