/* SPDX-License-Identifier: MIT */
/*
 * late-thread MODE: a process whose second thread makes a distinctive system call, sysinfo(2),
 * at the end of the process's life, for the recordings' tests (test_record.py): that call must be
 * in the profile recorded.
 *
 *   after-leader  the main thread ends alone (pthread_exit: the leader is a zombie); the thread
 *                 then calls sysinfo and ends the process by returning (exit_group).
 *   exit-group    the main thread calls exit_group at once; the thread waits until it sees the
 *                 main thread in that call (/proc/self/task/TID/syscall), then calls sysinfo and
 *                 blocks. Under a recording that answers exit_group as soon as it reads it, the
 *                 thread is killed before its call is read: it is never in the profile.
 *   spin          as exit-group, but the thread spins without a system call for ever: the
 *                 recording must still let the process end.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static pid_t leader;
static pthread_t leader_thread;

static int leader_in_exit_group(void) {
        char path[64], buf[64] = { 0 }, want[16];
        int fd, n;

        snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int) leader);
        snprintf(want, sizeof(want), "%d ", (int) __NR_exit_group);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = (int) read(fd, buf, sizeof(buf) - 1);
        close(fd);
        return n > 0 && strncmp(buf, want, strlen(want)) == 0;
}

static void *late(void *arg) {
        const char *mode = arg;
        struct sysinfo si;

        if (strcmp(mode, "after-leader") == 0) {
                /* returns once the leader has exited (the kernel clears its tid) */
                if (pthread_join(leader_thread, NULL) != 0)
                        _exit(2);
                syscall(__NR_sysinfo, &si);
                return NULL; /* the last thread: the process exits 0 */
        }
        if (strcmp(mode, "spin") == 0)
                for (volatile unsigned long i = 0;; i++)
                        ;
        while (!leader_in_exit_group())
                ;
        syscall(__NR_sysinfo, &si);
        for (;;)
                pause();
}

int main(int argc, char **argv) {
        pthread_t t;

        if (argc != 2 ||
            (strcmp(argv[1], "after-leader") && strcmp(argv[1], "exit-group") && strcmp(argv[1], "spin"))) {
                fprintf(stderr, "usage: late-thread after-leader|exit-group|spin\n");
                return 2;
        }
        leader = getpid();
        leader_thread = pthread_self();
        if (pthread_create(&t, NULL, late, argv[1]) != 0)
                return 1;
        if (strcmp(argv[1], "after-leader") == 0)
                pthread_exit(NULL);
        syscall(__NR_exit_group, 0);
        return 1;
}
