/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SCM_RIGHTS and ancillary-data handling of server.c (conn_read: fds
 * collected per connection and handed to the next message that completes, the 64-fd limit,
 * MSG_CTRUNC, control messages that are not SCM_RIGHTS) and for what Spawn does with the fds it
 * is handed (the fd map, terminal, targets up to 1023). Real fds go through a real socketpair
 * into the in-process daemon of fuzz-daemon.h; the input is a script of sends:
 *
 *   byte 0        the header of fuzz-daemon.h (caller, privileged)
 *   then records  [op] [a] [b] ...:
 *     op & 7 = 0  canned message a, with b % 80 fds of kind op >> 3 on its first byte
 *              1  canned message a split in two writes, b % 80 fds on the first, a % 80 on the
 *                 second
 *              2  raw bytes: the next a % 64 bytes of the input, with b % 80 fds
 *              3  canned message a with SCM_CREDENTIALS (ours) next to b % 4 fds
 *              4  run the daemon until nothing moves
 *              5  canned message a with 64 + b % 190 fds in one sendmsg (the kernel's limit is 253)
 *              6  the client stops reading (shutdown SHUT_RD)
 *              7  every stand-in worker exits
 *   fd kinds      0 /dev/null, 1 a pipe's read end, 2 its write end, 3 a directory, 4 an O_PATH
 *                 fd, 5 one end of a socketpair, 6 an eventfd, 7 the client's own connection
 *
 * Checked after every input (fuzz-daemon.c): no crash or leak, and the process holds exactly
 * the fds it held before: every fd the daemon was handed, on any path, was closed.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define L "io.zygote.Launcher."
static const char *const canned[] = {
        "{\"method\":\"" L "Spawn\",\"parameters\":{\"argv\":[\"run\"],\"fds\":[{\"fd\":0,\"target\":0},{\"fd\":1,"
        "\"target\":1},{\"fd\":2,\"target\":2}]},\"more\":true}",
        "{\"method\":\"" L
        "Spawn\",\"parameters\":{\"argv\":[\"true\"],\"fds\":[{\"fd\":63,\"target\":1023},{\"fd\":0,\"target\":3}]}}",
        "{\"method\":\"" L
        "Spawn\",\"parameters\":{\"argv\":[\"run\"],\"terminal\":true,\"fds\":[{\"fd\":0,\"target\":0}]}}",
        "{\"method\":\"" L "Spawn\",\"parameters\":{\"argv\":[\"run\"],\"hold\":true,\"id\":\"h\",\"fds\":[{\"fd\":1,"
        "\"target\":1},{\"fd\":1,\"target\":2}]}}",
        "{\"method\":\"" L "Spawn\",\"parameters\":{\"argv\":[\"fail\"],\"fds\":[{\"fd\":0,\"target\":7}]}}",
        "{\"method\":\"" L "Spawn\",\"parameters\":{\"argv\":[\"run\"],\"profile\":\"limited\",\"fds\":[{\"fd\":0,"
        "\"target\":0}]},\"more\":true}",
        "{\"method\":\"" L "Start\",\"parameters\":{\"id\":\"h\"}}",
        "{\"method\":\"" L "Delete\",\"parameters\":{\"id\":\"h\"}}",
        "{\"method\":\"" L "Wait\",\"parameters\":{\"id\":\"t1\"},\"more\":true}",
        "{\"method\":\"" L "Kill\",\"parameters\":{\"id\":\"t1\",\"all\":true,\"signal\":9}}",
        "{\"method\":\"" L "GetStatus\"}",
        "{\"method\":\"" L "Events\",\"more\":true}",
        "{\"method\": nope}",
        "{\"method\":\"" L "Spawn\",\"parameters\":{\"argv\":[\"run\"],\"fds\":[{\"fd\":",
};

static int make_fd(unsigned kind, int client, int *extra) {
        int p[2];
        switch (kind & 7) {
        case 1:
        case 2:
                if (pipe2(p, O_CLOEXEC) < 0)
                        return -1;
                *extra = p[kind == 1 ? 1 : 0];
                return p[kind == 1 ? 0 : 1];
        case 3:
                return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        case 4:
                return open("/etc/hostname", O_PATH | O_CLOEXEC);
        case 5:
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
                        return -1;
                *extra = p[1];
                return p[0];
        case 6:
                return eventfd(0, EFD_CLOEXEC);
        case 7:
                return fcntl(client, F_DUPFD_CLOEXEC, 3);
        default:
                return open("/dev/null", O_RDWR | O_CLOEXEC);
        }
}

/* Sends bytes with n fds of a kind on the first byte; our copies are closed right after (the
 * kernel holds its own while they are in flight). */
static int send_with(int client, const void *buf, size_t len, size_t n, unsigned kind) {
        int fds[253], extra[253];
        size_t k = 0;
        if (n > 253)
                n = 253;
        for (; k < n; k++) {
                extra[k] = -1;
                fds[k] = make_fd(kind, client, &extra[k]);
                if (fds[k] < 0)
                        break;
        }
        int r = fz_send(client, buf, len, fds, k);
        for (size_t i = 0; i < k; i++) {
                close(fds[i]);
                if (extra[i] >= 0)
                        close(extra[i]);
        }
        return r;
}

static int send_with_creds(int client, const char *m, size_t n) {
        union {
                struct cmsghdr align;
                char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
        } control;
        memset(&control, 0, sizeof(control));
        struct ucred uc = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
        int fds[4];
        size_t k = 0;
        for (; k < n && k < 4; k++)
                fds[k] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct iovec iov = { .iov_base = (void *) m, .iov_len = strlen(m) + 1 };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control.b,
                             .msg_controllen = CMSG_SPACE(sizeof(uc)) + (k ? CMSG_SPACE(sizeof(int) * k) : 0) };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_CREDENTIALS;
        cm->cmsg_len = CMSG_LEN(sizeof(uc));
        memcpy(CMSG_DATA(cm), &uc, sizeof(uc));
        if (k) {
                cm = CMSG_NXTHDR(&mh, cm);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int) * k);
                memcpy(CMSG_DATA(cm), fds, sizeof(int) * k);
        }
        ssize_t r = sendmsg(client, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        for (size_t i = 0; i < k; i++)
                close(fds[i]);
        if (r < 0)
                return -1;
        /* The rest, if the socket took only part of it. */
        if ((size_t) r < iov.iov_len)
                return fz_send(client, m + r, iov.iov_len - (size_t) r, NULL, 0);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        int client = fz_begin(data[0]);
        size_t i = 1;
        bool gone = false;
        unsigned ops = 0;

        while (i + 3 <= size && !gone && ops++ < 64) {
                uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
                i += 3;
                const char *m = canned[a % (sizeof(canned) / sizeof(canned[0]))];
                size_t mlen = strlen(m) + 1; /* with its NUL */
                int r = 0;
                switch (op & 7) {
                case 0:
                        r = send_with(client, m, mlen, b % 80, op >> 3);
                        break;
                case 1: {
                        size_t half = mlen / 2;
                        r = send_with(client, m, half, b % 80, op >> 3);
                        if (r >= 0)
                                r = send_with(client, m + half, mlen - half, a % 80, op >> 3);
                        break;
                }
                case 2: {
                        size_t n = a % 64;
                        if (n > size - i)
                                n = size - i;
                        r = send_with(client, data + i, n, b % 80, op >> 3);
                        i += n;
                        break;
                }
                case 3:
                        r = send_with_creds(client, m, b % 4);
                        break;
                case 4:
                        fz_pump(client);
                        break;
                case 5:
                        r = send_with(client, m, mlen, 64 + b % 190, op >> 3);
                        break;
                case 6:
                        (void) shutdown(client, SHUT_RD);
                        break;
                case 7:
                        fz_exit_all();
                        break;
                }
                if (r < 0)
                        gone = true; /* the daemon dropped us: the rest of the script is moot */
        }
        fz_end(client);
        return 0;
}
