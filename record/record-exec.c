/* SPDX-License-Identifier: MIT */
/*
 * The task's side of a recording (record-notify.h): the recording filter and the hand-over of its
 * listener. Runs as the task zygoted spawned; after the filter is on, the only calls made are the
 * hand-over (let through by the filter) and execve (recorded: the command needs it).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "record-notify.h"
#include "util.h"

#if defined(__x86_64__)
#define REC_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define REC_NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define REC_NATIVE_ARCH AUDIT_ARCH_I386
#elif defined(__s390x__)
#define REC_NATIVE_ARCH AUDIT_ARCH_S390X
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define REC_NATIVE_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__riscv) && __riscv_xlen == 64
#define REC_NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "the recording filter needs this architecture's AUDIT_ARCH value"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#define ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#endif

void rec_filter_build(struct sock_filter prog[static REC_FILTER_LEN], int fd) {
        /* each test jumps to the last instruction (notify) when it fails */
#define TO_NOTIFY(at) (REC_FILTER_LEN - 2 - (at))
        const struct sock_filter p[REC_FILTER_LEN] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, REC_NATIVE_ARCH, 0, TO_NOTIFY(1)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, TO_NOTIFY(3)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) fd, 0, TO_NOTIFY(5)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO_NOTIFY(7)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, REC_HANDOVER_FLAGS, 0, TO_NOTIFY(9)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(2)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, TO_NOTIFY(11)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        };
#undef TO_NOTIFY
        memcpy(prog, p, sizeof(p));
}

/* argv[0] as execve wants it: a path, searched in PATH when it has no slash. */
static char *find_command(const char *cmd) {
        const char *path = getenv("PATH") ?: "/usr/local/bin:/usr/bin:/bin";

        if (strchr(cmd, '/'))
                return strdup(cmd);
        for (const char *p = path; *p;) {
                size_t len = strcspn(p, ":");
                char *full = NULL;

                if (asprintf(&full, "%.*s/%s", (int) len, len ? p : ".", cmd) < 0)
                        return NULL;
                if (access(full, X_OK) == 0)
                        return full;
                free(full);
                p += len;
                if (*p == ':')
                        p++;
        }
        return NULL;
}

static int send_fd(int sock, int fd) {
        char byte = 'L';
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u = {};
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        /* the raw call: exactly the arguments the filter lets through */
        return syscall(__NR_sendmsg, sock, &msg, REC_HANDOVER_FLAGS) == 1 ? 0 : -errno;
}

int rec_exec(const char *sock_path, char *const argv[], const char **ret_step) {
        struct sock_filter prog[REC_FILTER_LEN];
        struct sock_fprog fprog = { .len = REC_FILTER_LEN, .filter = prog };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *cmd = NULL;
        _cleanup_close_ int sock = -EBADF;
        int listener, r;

        *ret_step = "connect";
        if (strlen(sock_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, sock_path);
        sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (sock < 0)
                return -errno;
        if (connect(sock, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;

        *ret_step = "exec";
        cmd = find_command(argv[0]);
        if (!cmd)
                return -ENOENT;

        /* A filter needs no_new_privs (or CAP_SYS_ADMIN): set, it only adds confinement. */
        *ret_step = "no_new_privs";
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;

        *ret_step = "seccomp";
        rec_filter_build(prog, sock);
        listener = (int) syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
        if (listener < 0)
                return -errno;

        /* From here on every call but the hand-over waits for the listener. When the hand-over
         * fails, nobody holds it but us, and any call (exit_group too) would wait for ever: a
         * trap ends the task without one (the kernel forces SIGILL's default action). */
        r = send_fd(sock, listener);
        if (r < 0)
                __builtin_trap();
        /* the listener and the socket are CLOEXEC: closed by the exec, without a call of ours */
        *ret_step = "exec";
        execve(cmd, argv, environ);
        return -errno;
}
