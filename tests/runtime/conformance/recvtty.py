#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A console socket for runc's own suite (runc-bats.sh puts it where the suite looks for runc's
Go helper contrib/cmd/recvtty/recvtty): `recvtty [--pid-file F] [--mode null|single] SOCKET`.
It listens on SOCKET, then writes its pid to F; each runtime that connects sends a pty master
(SCM_RIGHTS), whose output is read and dropped until no process holds the pty any more. Only
the suite's "null" mode is of use here; "single" is accepted and behaves the same."""
import argparse
import array
import os
import socket
import threading


def drain(fd):
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def serve(conn):
    with conn:
        fds = array.array("i")
        try:
            _, anc, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(fds.itemsize))
        except OSError:
            return
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        for fd in fds:
            threading.Thread(target=drain, args=(fd,), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid-file")
    p.add_argument("--mode", "-m", default="single")
    p.add_argument("--no-stdin", action="store_true")
    # the lane's: return once the socket listens, serving from a child (no race with the runtime
    # the test starts next; runc's Go helper starts fast enough to go unnoticed, this one does not)
    p.add_argument("--fork-when-listening", action="store_true")
    p.add_argument("socket")
    a = p.parse_args()
    # nothing of the suite's held open: bats waits for every holder of its output
    null = os.open(os.devnull, os.O_RDWR)
    for fd in range(3):
        os.dup2(null, fd)
    os.closerange(3, 1 << 16)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(a.socket)
    s.listen(16)
    pid = os.fork() if a.fork_when_listening else 0
    if a.fork_when_listening and pid == 0:
        pid = os.getpid()
    else:
        pid = pid or os.getpid()
        if a.pid_file:
            with open(a.pid_file + ".tmp", "w") as f:
                f.write(str(pid))
            os.rename(a.pid_file + ".tmp", a.pid_file)
        # where the lane finds every one started, to end those a test's teardown missed
        if os.environ.get("ZYGOTE_RECVTTY_PIDS"):
            open(os.path.join(os.environ["ZYGOTE_RECVTTY_PIDS"], str(pid)), "w").close()
        if a.fork_when_listening:
            os._exit(0)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
