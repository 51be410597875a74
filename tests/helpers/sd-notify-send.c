/* SPDX-License-Identifier: MIT */
/*
 * sd-notify-send MESSAGE...: each MESSAGE as one datagram to $NOTIFY_SOCKET, in order, as
 * sd_notify(3) sends it ("@" first: an abstract socket); exit 0 once all were sent, 1 on an error
 * (printed), 2 on usage errors. Linked statically: it runs in the tests' busybox rootfs, where the
 * container is the sender of a runtime's NOTIFY_SOCKET relay (tests/runtime/test_sd_activation.py).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n;
        int fd;

        if (argc < 2 || !path || !*path) {
                fprintf(stderr, "usage: NOTIFY_SOCKET=PATH sd-notify-send MESSAGE...\n");
                return 2;
        }
        n = strlen(path);
        if (n >= sizeof(sa.sun_path)) {
                fprintf(stderr, "sd-notify-send: %s: too long\n", path);
                return 2;
        }
        memcpy(sa.sun_path, path, n);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                perror("sd-notify-send: socket");
                return 1;
        }
        for (int i = 1; i < argc; i++)
                if (sendto(fd, argv[i], strlen(argv[i]), 0, (struct sockaddr *) &sa,
                           (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@'))) < 0) {
                        fprintf(stderr, "sd-notify-send: %s: %s\n", path, strerror(errno));
                        return 1;
                }
        return 0;
}
