# SPDX-License-Identifier: MIT
"""A tiny varlink client for zygoted's raw protocol tests.

Messages are JSON objects, each followed by one NUL byte, on a Unix stream socket. File
descriptors travel as SCM_RIGHTS attached to the first byte of the message they belong to, in
both directions. This client is deliberately dumb: it sends exactly what a test asks for (also
malformed bytes) and reports exactly what came back (also EOF), so that the tests can check the
daemon's handling of bad input.
"""
import array
import ctypes
import json
import os
import socket
import struct

MAX_FDS_PER_RECV = 253  # SCM_MAX_FD: the kernel never delivers more with one recvmsg
PR_SET_DUMPABLE = 4


class Closed(Exception):
    """The daemon closed the connection (EOF) before a complete message arrived."""


class VarlinkError(Exception):
    def __init__(self, reply):
        super().__init__(f"{reply.get('error')}: {reply.get('parameters')}")
        self.reply = reply
        self.error = reply.get("error")
        self.parameters = reply.get("parameters") or {}


class Reply(dict):
    """One decoded message, plus the fds that came with it (already CLOEXEC)."""

    def __init__(self, msg, fds):
        super().__init__(msg)
        self.fds = fds

    @property
    def parameters(self):
        return self.get("parameters") or {}

    @property
    def error(self):
        return self.get("error")

    @property
    def continues(self):
        return bool(self.get("continues"))

    def close_fds(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


class Connection:
    def __init__(self, path=None, sock=None, timeout=30.0):
        if sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            # A blocking connect, bounded by SO_SNDTIMEO: on a Unix socket whose backlog is full
            # (a daemon busy accepting a thousand others) a non-blocking one, which a Python
            # timeout makes, fails at once with EAGAIN where a client would wait its turn.
            if timeout is not None:
                sec = int(timeout)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                                struct.pack("@ll", sec, int((timeout - sec) * 1e6)))
            sock.connect(path)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("@ll", 0, 0))
            sock.settimeout(timeout)
        else:
            sock.settimeout(timeout)
        self.sock = sock
        self.buf = b""
        self.fds = []  # fds received and not yet handed to a message
        self.keeper = None  # the process that connected, kept alive while this is open

    # ---- context manager --------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.keeper is not None:
            self.keeper.release()
            self.keeper = None

    def fileno(self):
        return self.sock.fileno()

    # ---- sending ----------------------------------------------------------------------------
    def send_raw(self, data, fds=()):
        """Sends bytes as they are; fds go with the last byte, as libzygote sends them (zygoted
        drops a connection that holds fds of an unfinished message when it must fork)."""
        fds = list(fds)
        if fds and data:
            self.sock.sendall(data[:-1])
            self.sock.sendmsg([data[-1:]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        elif data:
            self.sock.sendall(data)

    def send(self, method, parameters=None, more=False, oneway=False, fds=(), extra=None):
        msg = {"method": method}
        if parameters is not None:
            msg["parameters"] = parameters
        if more:
            msg["more"] = True
        if oneway:
            msg["oneway"] = True
        if extra:
            msg.update(extra)
        self.send_raw(json.dumps(msg).encode() + b"\0", fds)

    # ---- receiving --------------------------------------------------------------------------
    def _fill(self):
        cmsg_space = socket.CMSG_SPACE(MAX_FDS_PER_RECV * array.array("i").itemsize)
        data, ancdata, flags, _ = self.sock.recvmsg(65536, cmsg_space, socket.MSG_CMSG_CLOEXEC)
        for level, ctype, cdata in ancdata:
            if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                a = array.array("i")
                # A truncated last int cannot be an fd: only whole ints count.
                a.frombytes(cdata[: len(cdata) - (len(cdata) % a.itemsize)])
                self.fds.extend(a)
        if flags & socket.MSG_CTRUNC:
            raise AssertionError("daemon sent more fds than a recvmsg can take")
        if not data:
            raise Closed()
        self.buf += data

    def recv(self):
        """Returns the next Reply; raises Closed on EOF, socket.timeout after the timeout."""
        while b"\0" not in self.buf:
            self._fill()
        raw, self.buf = self.buf.split(b"\0", 1)
        try:
            msg = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise AssertionError(f"reply is not UTF-8, so not JSON (RFC 8259): {raw!r}") from e
        assert isinstance(msg, dict), f"reply is not an object: {raw!r}"
        # The daemon sends at most one fd per reply (the pidfd) and sends nothing else until we
        # ask again, so every fd received so far belongs to this message.
        fds, self.fds = self.fds, []
        return Reply(msg, fds)

    def at_eof(self, timeout):
        """Waits up to timeout seconds for EOF. True on EOF; False if the socket stays open.
        Data that arrives meanwhile is buffered."""
        old = self.sock.gettimeout()
        self.sock.settimeout(timeout)
        try:
            while True:
                self._fill()
        except Closed:
            return True
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return True
        finally:
            if self.sock is not None:
                self.sock.settimeout(old)

    # ---- calls ------------------------------------------------------------------------------
    def call(self, method, parameters=None, fds=(), check=True):
        """One call, one reply. Raises VarlinkError for an error reply when check is set."""
        self.send(method, parameters, fds=fds)
        r = self.recv()
        if check and r.error:
            r.close_fds()
            raise VarlinkError(r)
        return r

    def call_error(self, method, parameters=None, fds=()):
        """A call that must fail: returns the error Reply."""
        r = self.call(method, parameters, fds=fds, check=False)
        assert r.error, f"{method} {parameters} succeeded: {dict(r)}"
        return r

    def call_more(self, method, parameters=None, fds=()):
        """Starts a "more" call; returns the first reply (the rest: recv())."""
        self.send(method, parameters, more=True, fds=fds)
        return self.recv()


def connect(path, timeout=30.0):
    return Connection(path, timeout=timeout)


class _Connector:
    """The child that connected, alive until the last of its connections is closed: zygoted reads
    the confinement of the process that connected (its rlimits, namespaces, cgroups) at each
    Spawn and refuses a caller that has exited."""

    def __init__(self, sock, pid, n):
        self.sock, self.pid, self.n = sock, pid, n

    def release(self):
        self.n -= 1
        if self.n == 0:
            self.sock.close()  # the child reads EOF and exits
            os.waitpid(self.pid, 0)


def report_failure(sock, e):
    """A helper process's failure E sent over SOCK as text, which recv_fds_all() raises in the
    parent; nothing if the parent is gone."""
    try:
        sock.sendall(repr(e).encode())
    except OSError:
        pass


def recv_fds_all(sock, n, what):
    """N fds a helper process sends over SOCK (as many messages as it takes, 253 fds at most each);
    the text it sends instead of one is its failure, raised as OSError (WHAT failed), the fds
    received so far closed."""
    got = []
    while len(got) < n:
        msg, fds, _, _ = socket.recv_fds(sock, 4096, 253, socket.MSG_CMSG_CLOEXEC)
        if not fds:
            for fd in got:
                os.close(fd)
            raise OSError(f"{what} failed: {msg.decode(errors='replace')}")
        got += fds
    return got


def connect_many_as(path, uid, gid, n, groups=(), timeout=30.0):
    """n connections whose peer credentials are uid/gid/groups.

    The kernel records SO_PEERCRED and SO_PEERGROUPS at connect(): a child switches to the
    identity, connects, and hands the connected sockets back over a socketpair (200 a message).
    The daemon then sees a caller of that identity for each connection's whole life, exactly as if
    that user's own program had connected. The child stays (holding no other fd) until every one
    of the connections is closed.
    """
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            parent.close()
            os.setgroups(list(groups))
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            # The id switch made this process non-dumpable, and a zygoted of this uid (not root)
            # could not read its namespaces: be what a program started as this user is.
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            socks = []
            for _ in range(n):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
                s.connect(path)
                socks.append(s)
            for i in range(0, n, 200):
                socket.send_fds(child, [b"s"], [s.fileno() for s in socks[i:i + 200]])
            keep = child.fileno()
            os.closerange(0, keep)
            os.closerange(keep + 1, 1 << 20)
            code = 0
            while child.recv(1):
                pass
        except BaseException as e:  # report, never return into pytest from the child
            report_failure(child, e)
        finally:
            os._exit(code)
    child.close()
    try:
        got = recv_fds_all(parent, n, f"connect as {uid}:{gid}")
    except BaseException:
        parent.close()
        os.waitpid(pid, 0)
        raise
    keeper = _Connector(parent, pid, n)
    conns = [Connection(sock=socket.socket(fileno=fd), timeout=timeout) for fd in got]
    for c in conns:
        c.keeper = keeper
    return conns


def connect_as(path, uid, gid, groups=(), timeout=30.0):
    """One connection whose peer credentials are uid/gid/groups (see connect_many_as)."""
    return connect_many_as(path, uid, gid, 1, groups, timeout)[0]
