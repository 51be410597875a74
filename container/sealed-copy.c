/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc runs from a sealed memfd copy of itself (the CVE-2019-5736 class).
 *
 * Every process the runtime makes in a container (the init held until `start`, an exec'd process
 * during its setup) is a copy of this program until its execve, in the container's pid namespace.
 * Were this program the host's file, /proc/PID/exe of such a process would be a door to it: a
 * container process could open it (O_PATH), wait until no one executes it any more and reopen it
 * for writing, and the next `zygote-runc` the host runs would be the container's code. So before
 * anything else, main() re-executes this program from an anonymous memfd copy sealed against
 * every change: /proc/PID/exe then names that copy, which no one can write, and the host's file
 * is never reachable from a container. (Non-dumpable processes, sandbox.c, keep the container
 * from opening /proc/PID/exe at all; this holds even for a container with CAP_SYS_PTRACE.)
 *
 * zygoted does the same at its start (daemon/main.c): the container inits and exec'd processes its
 * container workers make are copies of zygoted until their execve.
 *
 * The loop guard is the seals themselves: a process whose /proc/self/exe already carries them
 * runs on. An environment variable marks the re-exec only to fail closed instead of looping,
 * should the copy somehow not read as sealed, and is removed before anything else runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libcontainer.h"
#include "util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define ZCT_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define ZCT_SEALED_ENV "_ZYGOTE_RUNC_SEALED"

/* 1 when the running program is a copy carrying every seal, 0 when it is not, or -errno. A
 * plain file answers EINVAL to F_GET_SEALS; a tmpfs file answers F_SEAL_SEAL alone. */
static int running_sealed(void) {
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        int seals;

        if (fd < 0)
                return -errno;
        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return errno == EINVAL ? 0 : -errno;
        return (seals & ZCT_SEALS) == ZCT_SEALS;
}

static int sealed_copy(const char *name) {
        _cleanup_close_ int exe = -EBADF, mfd = -EBADF;
        struct stat st;
        off_t done = 0;

        exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (exe < 0 || fstat(exe, &st) < 0)
                return -errno;
        /* MFD_EXEC: kernels with vm.memfd_noexec would otherwise make it non-executable; older
         * kernels refuse the unknown flag, and their memfds are executable anyway */
        mfd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (mfd < 0 && errno == EINVAL)
                mfd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0)
                return -errno;
        while (done < st.st_size) {
                ssize_t n = sendfile(mfd, exe, NULL, (size_t) (st.st_size - done));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO; /* the file shrank under us: not a copy to run */
                done += n;
        }
        /* F_SEAL_WRITE answers EBUSY while a page of the copy still has a reference it counts
         * as a pin; the copy's own pages can have one for a moment after sendfile (seen once in
         * hundreds of starts, under load): it is asked again, for at most about 200 ms */
        for (int i = 0; fcntl(mfd, F_ADD_SEALS, ZCT_SEALS) < 0; i++) {
                if (errno != EBUSY || i == 40)
                        return -errno;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
        }
        return TAKE_FD(mfd);
}

int zct_runc_run_sealed(char **argv) {
        const char *marker = getenv(ZCT_SEALED_ENV);
        int r = running_sealed(), fd;

        if (r < 0)
                return r;
        if (r > 0) {
                (void) unsetenv(ZCT_SEALED_ENV);
                /* execveat(fd, "") named the program after the fd number: its own name back,
                 * for ps and for the tools that look for it */
                const char *name = argv[0] ? strrchr(argv[0], '/') : NULL;
                (void) prctl(PR_SET_NAME,
                             (unsigned long) (name      ? name + 1
                                              : argv[0] ? argv[0]
                                                        : "zygote-runc"),
                             0UL, 0UL, 0UL);
                return 0;
        }
        if (marker)
                return -ELOOP; /* re-executed, yet not running sealed: never run unsealed */
        fd = sealed_copy(argv[0] && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0] ? argv[0] : "zygote");
        if (fd < 0)
                return fd;
        if (setenv(ZCT_SEALED_ENV, "1", 1) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        fexecve(fd, argv, environ);
        r = -errno;
        close(fd);
        (void) unsetenv(ZCT_SEALED_ENV);
        return r;
}
