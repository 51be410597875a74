/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the protocol: framing (server.c), the dispatch table and every method
 * (methods.c), Spawn's checks and plan (spawn.c), the task table (task.c), all in process and
 * without a fork (fuzz-daemon.h). One input is one connection:
 *
 *   byte 0   bits 0-1 the caller (root, nobody with group 4242, another user, the daemon's own
 *            user); bit 2 the daemon runs unprivileged; bit 3 three fds go with the first byte
 *            (/dev/null, the write end of a pipe, a directory); bit 4 the client stops reading
 *            (shutdown SHUT_RD) before its replies come; bit 5 every stand-in worker exits
 *            after the bytes were sent, before the connection closes
 *   rest     the bytes the client sends, as they are (NUL-separated JSON messages)
 *
 * Whatever the bytes: no crash, no undefined behaviour, no leak of memory or fds, only
 * well-formed replies, and every plan obeys the identity rules (the oracle in fuzz-daemon.c).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        uint8_t header = data[0];
        int client = fz_begin(header);
        int fds[3] = { -1, -1, -1 }, pipefd[2] = { -1, -1 };
        size_t n_fds = 0;

        if (header & 8) {
                fds[0] = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (pipe2(pipefd, O_CLOEXEC) == 0)
                        fds[1] = pipefd[1];
                fds[2] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0)
                        n_fds = 3;
        }
        if (header & 16)
                (void) shutdown(client, SHUT_RD);
        (void) fz_send(client, data + 1, size - 1, fds, n_fds);
        /* In flight, the kernel holds its own copies: ours go at once. */
        for (size_t i = 0; i < 3; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        if (pipefd[0] >= 0)
                close(pipefd[0]);
        fz_pump(client);
        if (header & 32) {
                fz_exit_all();
                fz_pump(client);
        }
        fz_end(client);
        return 0;
}
