# SPDX-License-Identifier: MIT
"""The attacks of test_hostile_latency.py's promise test: connections made as a user or as the
subordinate uids of a user (in a user namespace that user owns, its uids mapped by root as
newuidmap would), an attacker process that runs one attack on them until stopped, and a probe
that times another user's GetStatus, on one connection or on a fresh connection each round.

The attacker is a process of its own, never a thread of the test: the probe's thread must not
wait for the interpreter's lock behind it, or the test would time Python rather than zygoted.
"""
import ctypes
import json
import os
import selectors
import shutil
import signal
import socket
import statistics
import struct
import tempfile
import threading
import time

import varlink

L = "io.zygote.Launcher."
CLONE_NEWUSER = 0x10000000
PR_SET_DUMPABLE = 4
_libc = ctypes.CDLL(None, use_errno=True)


def _unshare_user():
    if _libc.unshare(CLONE_NEWUSER) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def userns_refused():
    """Why a new user namespace cannot be made here, or None: a chroot (scripts/fresh-check.sh's
    rehearsal) makes unshare(CLONE_NEWUSER) EPERM for everyone, so no subordinate uid can connect."""
    pid = os.fork()
    if pid == 0:
        try:
            _unshare_user()
            os._exit(0)
        except OSError as e:
            os._exit(e.errno or 1)
        finally:
            os._exit(255)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return None if code == 0 else f"unshare(CLONE_NEWUSER): {os.strerror(code)}"


def _close_others(keep):
    """In a child just forked: every fd but stdio and keep closed, so that none of the test's
    other sockets (another helper's end, whose EOF ends that helper) lives on here."""
    last = 2
    for fd in sorted(set(keep)):
        os.closerange(last + 1, fd)
        last = fd
    os.closerange(last + 1, 1 << 16)


def _become(uid, gid=None):
    """This process as UID and GID (by default the same number as UID), no supplementary groups,
    still dumpable so that zygoted reads it as before."""
    gid = uid if gid is None else gid
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


class Connections:
    """Sockets connected to path by processes that stay alive (the daemon looks at the process
    that connected) until close(). owner: the user. In a user namespace (uids > 0): the
    namespace is made by owner, uids 0..uids of it map to base.., and the connections are made
    as the inside uids 1..uids, per_uid each (what a user with subordinate uids can do). nested:
    each of those makes a user namespace of its own inside first and connects from there.
    exit_after: the connecting processes exit (and are reaped) once the sockets are handed over."""

    def __init__(self, path, owner, per_uid, uids=0, base=300000, nested=False, exit_after=False, filtered=None):
        self.fifo = None
        if filtered == "stuck":
            self.fifo = tempfile.mkdtemp(prefix="zy-stuck-")
            os.chmod(self.fifo, 0o755)
            for name in ("ready", "hold"):
                os.mkfifo(os.path.join(self.fifo, name))
                os.chmod(os.path.join(self.fifo, name), 0o666)
        self.keep, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sync_r, sync_w = os.pipe2(os.O_CLOEXEC)
        go_r, go_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                _close_others([child_end.fileno(), sync_w, go_r])
                _become(owner)
                if uids:
                    _unshare_user()
                os.write(sync_w, b"u")
                if os.read(go_r, 1) != b"m":
                    os._exit(1)
                kids = []
                for k in (range(1, uids + 1) if uids else [None]):
                    done_r, done_w = os.pipe()
                    kid = os.fork()
                    if kid == 0:
                        try:
                            _close_others([child_end.fileno(), done_w])
                            if k is not None:
                                _become(k)
                                if nested:
                                    _unshare_user()
                            socks = []
                            for _ in range(per_uid):
                                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
                                s.connect(path)
                                socks.append(s)
                            if filtered:
                                _filtered_caller(filtered, self.fifo)
                            socket.send_fds(child_end, [b"s"], [s.fileno() for s in socks])
                            for s in socks:
                                s.close()
                            os.write(done_w, b"d")
                            while not exit_after and child_end.recv(1):
                                pass
                            os._exit(0)
                        except BaseException as e:
                            try:
                                child_end.sendall(repr(e).encode())
                            finally:
                                os._exit(1)
                    os.close(done_w)
                    os.read(done_r, 1)
                    os.close(done_r)
                    kids.append(kid)
                for kid in kids:
                    os.waitpid(kid, 0)
                code = 0
            except BaseException as e:
                varlink.report_failure(child_end, e)
            finally:
                os._exit(code)
        self.pid = pid
        child_end.close()
        os.close(sync_w)
        os.close(go_r)
        try:
            if os.read(sync_r, 1) != b"u":
                why = userns_refused() if uids or nested else None
                if why:
                    import pytest
                    pytest.skip(f"no user namespace can be made here ({why}: a chroot refuses it), "
                                "so no subordinate uid can connect")
                raise OSError("the connecting process failed before its namespace was made")
            if uids:
                for name in ("uid_map", "gid_map"):
                    with open(f"/proc/{pid}/{name}", "w") as f:
                        f.write(f"0 {base} {uids + 1}\n")
            os.write(go_w, b"m")
            self.fds = varlink.recv_fds_all(self.keep, per_uid * (uids or 1), "connecting")
        except BaseException:
            self.close()
            raise
        finally:
            os.close(sync_r)
            os.close(go_w)

    def conns(self, timeout=30.0):
        return [varlink.Connection(sock=socket.socket(fileno=os.dup(fd)), timeout=timeout) for fd in self.fds]

    def close_processes(self):
        """Waits for the connecting processes (exit_after: they are gone once this returns); the
        sockets stay."""
        if self.keep is not None:
            self.keep.close()
            self.keep = None
            os.waitpid(self.pid, 0)

    def close(self):
        for fd in getattr(self, "fds", []):
            os.close(fd)
        self.fds = []
        release = -1
        if self.fifo:
            # the stuck vfork children wait to open the FIFO for reading: a writer lets them
            # exec (and exit), whether or not their parents are still there
            try:
                release = os.open(os.path.join(self.fifo, "hold"), os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                pass
        if self.keep is not None:
            self.keep.close()  # the connecting processes read EOF and exit
            self.keep = None
            os.waitpid(self.pid, 0)
        if self.fifo:
            if release >= 0:
                os.close(release)
            shutil.rmtree(self.fifo, ignore_errors=True)
            self.fifo = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _deny_mkdirat():
    """no_new_privs and a seccomp filter that denies mkdirat (x86_64's 258) on this thread, and on
    every thread it starts afterwards: a caller whose own filter zygoted must read."""
    ul = ctypes.c_ulong
    ins = [(0x20, 0, 0, 0), (0x15, 0, 1, 258), (0x06, 0, 0, 0x00050001), (0x06, 0, 0, 0x7FFF0000)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in ins))
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(ins), ctypes.addressof(buf)))
    assert _libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) == 0, ctypes.get_errno()  # PR_SET_NO_NEW_PRIVS
    assert _libc.prctl(22, ul(2), ul(ctypes.addressof(prog)), ul(0), ul(0)) == 0, ctypes.get_errno()


def _filtered_caller(how, fifo):
    """The connecting process becomes a caller under a filter of its own, and: "stuck", one thread
    that no ptrace stop reaches (a vfork parent, libc's posix_spawn, whose child blocks opening
    FIFO before its exec), so that every read of its filters runs to zygoted's timeout; "threads",
    60 threads asleep, each to be seized, stopped and read."""
    _deny_mkdirat()
    if how == "stuck":
        ready, hold = os.path.join(fifo, "ready"), os.path.join(fifo, "hold")

        def stuck():
            # the child's file actions, in order: open "ready" (the sign that it runs, so that
            # this thread waits in vfork), then "hold", which blocks until close() releases it
            fa = ctypes.create_string_buffer(256)
            _libc.posix_spawn_file_actions_init(fa)
            _libc.posix_spawn_file_actions_addopen(fa, 3, ready.encode(), os.O_WRONLY, 0)
            _libc.posix_spawn_file_actions_addopen(fa, 4, hold.encode(), os.O_RDONLY, 0)
            pid = ctypes.c_int()
            argv = (ctypes.c_char_p * 2)(b"true", None)
            envp = (ctypes.c_char_p * 1)(None)
            if _libc.posix_spawn(ctypes.byref(pid), b"/bin/true", fa, None, argv, envp) == 0:
                os.waitpid(pid.value, 0)

        threading.Thread(target=stuck, daemon=True).start()
        with open(ready, "rb"):  # returns once the vfork child opened it
            pass
    else:
        stop_r, _ = os.pipe()
        for _ in range(60):
            threading.Thread(target=os.read, args=(stop_r, 1), daemon=True).start()


def _msg(method, parameters=None, more=False):
    m = {"method": method, "parameters": parameters or {}}
    if more:
        m["more"] = True
    return json.dumps(m, separators=(",", ":")).encode() + b"\0"


def big_status():
    """A GetStatus padded to about 60 KiB (refused, after a parse of all of it)."""
    return _msg(L + "GetStatus", {"pad": "x" * 60000})


def big_filter(i):
    """A GetFilter object of about 60 KiB, distinct each time (no cache hit): refused while the
    uid's compile runs or its CPU debt lasts, compiled otherwise."""
    syscalls = [{"names": ["getpid"], "action": "SCMP_ACT_ALLOW", "comment": f"{i} {k} " + "c" * 400}
                for k in range(140)]
    return _msg(L + "GetFilter", {"seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": syscalls}})


def _attack(kind, fds, stop_fd):
    """The attacker's loop (in its own process): each connection sends one message, and its
    next once the reply came (none are read for the kinds that never read)."""
    sel = selectors.DefaultSelector()
    socks = [socket.socket(fileno=fd) for fd in fds]
    for s in socks:
        s.setblocking(False)
    sel.register(stop_fd, selectors.EVENT_READ, None)
    n = 0
    small = _msg(L + "GetStatus") * 64

    def payload():
        nonlocal n
        n += 1
        if kind == "large":
            return big_status()
        if kind == "getfilter":
            return big_filter(n)
        if kind == "spawn":
            return _msg(L + "Spawn", {"argv": ["/bin/true"], "env": []}, more=False)
        if kind == "spawn-svc":  # a profile that admits callers with no_new_privs
            return _msg(L + "Spawn", {"argv": ["/bin/true"], "env": [], "profile": "svc"}, more=False)
        if kind == "list":
            return _msg(L + "List")
        return small

    state = {}
    subscribers = socks[:8] if kind == "events" else []
    for s in subscribers:
        try:
            s.send(_msg(L + "Events", more=True))  # its events are never read
        except OSError:
            pass
    workers = socks[8:] if kind == "events" else socks
    for s in workers:
        state[s] = [payload(), 0]
        sel.register(s, selectors.EVENT_WRITE, s)
    while True:
        for key, ev in sel.select(1.0):
            s = key.data
            if s is None:
                return
            out = state[s]
            try:
                if ev & selectors.EVENT_READ:
                    msgs, fds, _, _ = socket.recv_fds(s, 1 << 16, 16)
                    for fd in fds:
                        os.close(fd)
                    if not msgs:
                        raise ConnectionResetError
                    out[1] += msgs.count(b"\0")
                    if out[1] > 0:  # the reply came: the next message
                        out[1] = 0
                        out[0] = payload()
                        sel.modify(s, selectors.EVENT_WRITE, s)
                    continue
                k = s.send(out[0])
                out[0] = out[0][k:]
                if out[0]:
                    continue
                if kind == "unread":
                    out[0] = payload()  # never a read: the replies pile up in the daemon
                else:
                    sel.modify(s, selectors.EVENT_READ, s)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                sel.unregister(s)  # refused, or dropped: the attack goes on with the others


class Attacker:
    """Runs one attack on fds (connections the attacker made) in a child process until stop().
    kinds: large (60 KiB GetStatus), getfilter (60 KiB objects), unread (pipelined GetStatus
    whose replies are never read), events (8 Events streams never read while the other
    connections spawn /bin/true), spawn, list (List, of whatever the attacker holds)."""

    def __init__(self, kind, fds):
        self.stop_r, self.stop_w = os.pipe2(os.O_CLOEXEC)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                _close_others(list(fds) + [self.stop_r])
                # The attacker's own CPU is not zygoted's doing (any user may burn a core): its
                # client runs at nice 10, so that what is timed is the daemon's work for it.
                os.nice(10)
                _attack(kind, list(fds), self.stop_r)
            finally:
                os._exit(0)
        os.close(self.stop_r)

    def stop(self):
        if self.pid:
            os.close(self.stop_w)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Dialer:
    """A process of uid that connects to path whenever asked and hands the socket over: a fresh
    connection of that user for each round, without a fork per round."""

    def __init__(self, path, uid, gid):
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                _close_others([child.fileno()])
                try:  # part of the probe: the client's wait for a core is not the daemon's delay
                    os.setpriority(os.PRIO_PROCESS, 0, -10)
                except OSError:
                    pass
                if uid != 0:
                    _become(uid, gid)
                while child.recv(1):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
                    s.connect(path)
                    socket.send_fds(child, [b"c"], [s.fileno()])
                    s.close()
            finally:
                os._exit(0)
        child.close()

    def dial(self, timeout):
        self.sock.send(b"d")
        _, fds, _, _ = socket.recv_fds(self.sock, 16, 1, socket.MSG_CMSG_CLOEXEC)
        return varlink.Connection(sock=socket.socket(fileno=fds[0]), timeout=timeout)

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
            os.waitpid(self.pid, 0)


class Probe:
    """Another caller's GetStatus round after round in a thread, on a fresh connection each round
    (dialer) or on one made first (conn): every round trip is recorded, a round that fails (a
    connection refused, an error) or takes longer than CUT counts as CUT."""

    CUT = 5.0

    def __init__(self, conn=None, dialer=None):
        self.conn, self.dialer = conn, dialer
        self.times = []
        self.failures = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def round(self):
        t0 = time.monotonic()
        c = self.dialer.dial(self.CUT) if self.dialer else self.conn
        try:
            r = c.call(L + "GetStatus", check=False)
            if r.error:
                self.failures.append(f"{r.error} {r.parameters}")
                return self.CUT
        finally:
            if self.dialer:
                c.close()
        return time.monotonic() - t0

    def run(self):
        # The client's own scheduling is not the daemon's delay: on a loaded machine this thread
        # would wait for a core behind the attacker and the test's other threads (root may).
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -10)
        except OSError:
            pass
        while not self.stop_event.is_set():
            try:
                self.times.append(self.round())
            except (socket.timeout, TimeoutError, OSError, varlink.Closed) as e:
                self.failures.append(repr(e))
                self.times.append(self.CUT)
                if not self.dialer:
                    return
            self.stop_event.wait(0.01)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join(self.CUT + 5)

    def figures(self):
        t = sorted(self.times)
        return statistics.median(t), t[-1], len(t)
