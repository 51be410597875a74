# SPDX-License-Identifier: MIT
"""The fake service manager of test_systemd.py (docs/SYSTEMD.md): the notify socket, the fd store
and the reaper, as systemd provides them, with the fixtures that start zygoted under it.
"""
import array
import ctypes
import fcntl
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest


SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = os.path.join(SOURCE_DIR, "profiles")
TIMEOUT = 60.0          # for anything that should happen; only reached when it does not
PR_SET_CHILD_SUBREAPER = 36
SD_LISTEN_FDS_START = 3
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


# ---- environment ---------------------------------------------------------------------------

def build_dir(config):
    opt = getattr(config.option, "build_dir", None)  # conftest.py's --build-dir, when present
    return os.path.abspath(os.environ.get("ZYGOTE_BUILD_DIR") or opt or os.path.join(SOURCE_DIR, "build"))


@pytest.fixture(scope="module")
def sd_bins(request):
    build = build_dir(request.config)
    b = {name: os.path.join(build, name) for name in ("zygoted", "launchctl", "zygote-ref")}
    missing = [p for p in b.values() if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"not built: {', '.join(missing)} (cmake --build {build})")
    return b


_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option, arg):
    if _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


@pytest.fixture(scope="module", autouse=True)
def subreaper():
    """Orphans of a dead zygoted come to us, as they come to the service manager."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    yield
    prctl(PR_SET_CHILD_SUBREAPER, 0)
    reap_zombies()


def reap_zombies():
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG)
        except ChildProcessError:
            return
        if info is None:
            return


def pidfd_info_exit_supported():
    """PIDFD_GET_INFO with PIDFD_INFO_EXIT (Linux 6.15): a reaped child's status through its pidfd."""
    pid = os.fork()
    if pid == 0:
        os._exit(42)
    fd = os.pidfd_open(pid)
    try:
        os.waitpid(pid, 0)
        return pidfd_exit_status(fd) == 42 << 8
    finally:
        os.close(fd)


def pidfd_exit_status(fd):
    """The raw wait status the kernel keeps for a reaped process, or None."""
    buf = bytearray(struct.pack("QQ", 1 << 3, 0) + bytes(48))
    req = (3 << 30) | (len(buf) << 16) | (0xFF << 8) | 11  # _IOWR(0xFF, 11, struct pidfd_info)
    try:
        fcntl.ioctl(fd, req, buf)
    except OSError:
        return None
    mask, = struct.unpack_from("Q", buf, 0)
    return struct.unpack_from("i", buf, 60)[0] if mask & (1 << 3) else None


def readable(fd, timeout):
    return bool(select.select([fd], [], [], timeout)[0])


# ---- the fake service manager --------------------------------------------------------------

class Message:
    def __init__(self, data, fds, pid, at):
        self.raw = data
        self.fields = {}
        for line in data.decode().split("\n"):
            if not line:
                continue
            k, sep, v = line.partition("=")
            assert sep, f"notify message line without '=': {data!r}"
            self.fields[k] = v
        self.fds = fds
        self.pid = pid
        self.at = at

    def get(self, k):
        return self.fields.get(k)

    def __repr__(self):
        return f"<{self.raw!r} fds={len(self.fds)} pid={self.pid}>"


class Stored:
    def __init__(self, name, fd, poll):
        self.name, self.fd, self.poll = name, fd, poll


class FakeManager:
    def __init__(self, workdir, bins):
        self.dir = workdir
        self.bins = bins
        self.notify_path = os.path.join(workdir, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self.notify.bind(self.notify_path)
        self.notify.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.messages = []
        self.store = []
        self.listener = None
        self.pid = None
        self.pidfd = None
        self.first_message = 0
        self.err = None        # read end of the daemon's stderr
        self.log = ""
        self.all_logs = []
        self.socket = os.path.join(workdir, "zygoted.sock")

    # -- socket unit --
    def socket_unit(self, name="varlink"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        s.bind(self.socket)
        s.listen(128)
        self.listener = (s, name)

    # -- fd store --
    def prune(self):
        """systemd watches every polled stored fd and drops it on EPOLLHUP/EPOLLERR."""
        keep = []
        for e in self.store:
            if e.poll:
                p = select.poll()
                p.register(e.fd, 0)
                if any(ev & (select.POLLHUP | select.POLLERR) for _, ev in p.poll(0)):
                    os.close(e.fd)
                    continue
            keep.append(e)
        self.store = keep

    def drain(self):
        """Takes in every message already queued. zygoted sends FDSTORE before it answers the
        request that caused it, so after a reply this is the store as zygoted left it."""
        while readable(self.notify, 0):
            self.recv_one()
        self.prune()

    def names(self):
        self.drain()
        return [e.name for e in self.store]

    def stored(self, name):
        self.drain()
        return [e for e in self.store if e.name == name]

    def _apply(self, m):
        if m.get("FDSTORE") == "1":
            name = m.get("FDNAME") or "stored"
            for fd in m.fds:
                self.store.append(Stored(name, fd, m.get("FDPOLL") != "0"))
        else:
            for fd in m.fds:
                os.close(fd)  # systemd closes fds that come without FDSTORE=1
        if m.get("FDSTOREREMOVE") == "1":
            name = m.get("FDNAME")
            for e in [e for e in self.store if e.name == name]:
                os.close(e.fd)
            self.store = [e for e in self.store if e.name != name]

    # -- the service --
    def start(self, args=(), env=None, wrap=(), stderr=None):
        """Forks and execs zygoted the way systemd does: listening socket first, then the fd
        store, at fds 3...; LISTEN_PID is the daemon's own pid (the exec keeps it)."""
        self.prune()
        fds, names = [], []
        if self.listener:
            fds.append(self.listener[0].fileno())
            names.append(self.listener[1])
        for e in self.store:
            fds.append(e.fd)
            names.append(e.name)
        e = dict(BASE_ENV)
        e["NOTIFY_SOCKET"] = self.notify_path
        if fds:
            e["LISTEN_FDS"] = str(len(fds))
            e["LISTEN_FDNAMES"] = ":".join(names)
        e.update(env or {})
        argv = list(wrap) + [self.bins["zygoted"], "--socket", self.socket, "--profiles", PROFILES, *args]
        if stderr is None:
            r, w = os.pipe2(os.O_CLOEXEC)
        else:
            r, w = None, os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        devnull = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
        n = len(fds)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only rearranges fds and execs
            try:
                os.dup2(devnull, 0)
                os.dup2(w, 1)
                os.dup2(w, 2)
                # A source may sit where another one goes: move them all above the range first.
                high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, SD_LISTEN_FDS_START + n + 16) for fd in fds]
                for i, fd in enumerate(high):
                    os.dup2(fd, SD_LISTEN_FDS_START + i, inheritable=True)
                os.closerange(SD_LISTEN_FDS_START + n, 1 << 20)
                if n:
                    e["LISTEN_PID"] = str(os.getpid())
                os.execve(argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0]), argv, e)
            finally:
                os._exit(127)
        os.close(w)
        os.close(devnull)
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)  # our child: it cannot be reaped before we wait
        self.first_message = len(self.messages)
        self.err = r
        self.log = ""
        self.all_logs.append(self)
        return pid

    def _read_err(self):
        b = os.read(self.err, 65536)
        if not b:
            os.close(self.err)
            self.err = None
        self.log += b.decode(errors="replace")
        return bool(b)

    def pump(self, until, what, timeout=TIMEOUT, extra=()):
        """Receives notify messages and stderr until until() holds, checked after every event;
        extra: more fds whose readiness until() looks at. Fails with everything seen."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            watch = [self.notify, *extra] + ([self.err] if self.err is not None else [])
            r = select.select(watch, [], [], left)[0] if left > 0 else []
            if not r:
                raise AssertionError(f"no {what} within {timeout}s; notify messages: {self.messages}\n"
                                     f"zygoted stderr:\n{self.log}")
            if self.err is not None and self.err in r:
                self._read_err()
            if self.notify in r:
                self.recv_one()

    def recv_one(self):
        cmsg = socket.CMSG_SPACE(253 * 4) + socket.CMSG_SPACE(struct.calcsize("iII"))
        data, anc, flags, _ = self.notify.recvmsg(65536, cmsg, socket.MSG_CMSG_CLOEXEC)
        at = time.monotonic()
        assert not flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC), "notify message truncated"
        fds, pid = [], None
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(cdata[: len(cdata) - len(cdata) % a.itemsize])
                fds.extend(a)
            elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack_from("iII", cdata)[0]
        m = Message(data, fds, pid, at)
        self.messages.append(m)
        self._apply(m)
        return m

    def wait_message(self, pred, what, start=0, timeout=TIMEOUT):
        """The first message from index start on that satisfies pred."""
        found = []

        def until():
            for m in self.messages[start:]:
                if pred(m):
                    found.append(m)
                    return True
            return False
        self.pump(until, what, timeout)
        return found[0]

    def wait_ready(self, start=None):
        """READY=1 from the daemon started last (from message start on, if given)."""
        return self.wait_message(lambda m: m.get("READY") == "1", "READY=1",
                                 self.first_message if start is None else start)

    def wait_log(self, pattern, what=None):
        rx = re.compile(pattern, re.M)
        self.pump(lambda: rx.search(self.log), what or f"log line /{pattern}/")
        return rx.search(self.log)

    def exited(self):
        return self.pidfd is not None and readable(self.pidfd, 0)

    def wait_exit(self, timeout=TIMEOUT):
        """Waits for the daemon's exit (reading its stderr meanwhile); returns its wait status."""
        deadline = time.monotonic() + timeout
        while not readable(self.pidfd, 0):
            left = deadline - time.monotonic()
            assert left > 0, f"zygoted did not exit within {timeout}s:\n{self.log}"
            watch = [self.pidfd, self.notify] + ([self.err] if self.err is not None else [])
            r = select.select(watch, [], [], left)[0]
            if self.err is not None and self.err in r:
                self._read_err()
            if self.notify in r:
                self.recv_one()
        _, status = os.waitpid(self.pid, 0)
        while self.err is not None and self._read_err():
            pass
        while readable(self.notify, 0):  # whatever it sent before it went is queued here
            self.recv_one()
        os.close(self.pidfd)
        self.pidfd = None
        return status

    def stop(self, sig=signal.SIGTERM):
        os.kill(self.pid, sig)
        return self.wait_exit()

    def close(self):
        if self.pidfd is not None:
            os.kill(self.pid, signal.SIGKILL)
            self.wait_exit()
        for e in self.store:
            os.close(e.fd)
        self.store = []
        if self.listener:
            self.listener[0].close()
        self.notify.close()

    # -- clients --
    def wait_process(self, proc, what):
        """Waits for a client process to exit while serving the notify socket and the daemon's
        stderr, as a live service manager does: zygoted's sd_notify() blocks once the notify
        socket's queue is full (net.unix.max_dgram_qlen, 10 by default; systemd raises it to
        512), and so would a daemon whose stderr pipe nobody reads."""
        fd = os.pidfd_open(proc.pid)
        try:
            self.pump(lambda: readable(fd, 0), what, extra=(fd,))
        finally:
            os.close(fd)
        return proc.wait()

    def launchctl(self, *args, stdin=subprocess.DEVNULL, check=True):
        # Files, not pipes: a detached task keeps launchctl's stdout and stderr, and a pipe would
        # not see EOF before the task ends.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen([self.bins["launchctl"], "--socket", self.socket, *args], stdin=stdin, stdout=out,
                                 stderr=err, env=BASE_ENV, cwd="/")
            self.wait_process(p, f"exit of launchctl {' '.join(args)}")
            out.seek(0)
            err.seek(0)
            p.stdout, p.stderr = out.read().decode(), err.read().decode()
        if check:
            assert p.returncode == 0, f"launchctl {args}: {p.returncode} {p.stderr}\n{self.log}"
        return p

    def ps(self):
        return {t["id"]: t for t in json.loads(self.launchctl("ps", "--json").stdout)["tasks"]}

    def state(self, task_id):
        st = json.loads(self.launchctl("state", task_id, "--json").stdout)
        return st.get("task", st)


def adopting_manager(tmp_path, bins):
    """A FakeManager (its files in TMP_PATH/sd) for a zygoted that adopts its containers when it
    restarts; skips where the kernel cannot tell an adopted task's status (no PIDFD_INFO_EXIT,
    Linux 6.15). The orphans of a stopped zygoted come to this process, as to systemd: the caller
    reaps them."""
    if not pidfd_info_exit_supported():
        pytest.skip("the kernel lacks PIDFD_INFO_EXIT (Linux 6.15): an adopted task's status cannot be known")
    work = tmp_path / "sd"
    work.mkdir()
    os.chmod(work, 0o755)
    m = FakeManager(str(work), bins)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    return m


@pytest.fixture
def manager(sd_bins, request):
    d = tempfile.mkdtemp(prefix="zysd-")
    os.chmod(d, 0o755)
    m = FakeManager(d, sd_bins)
    yield m
    rep = getattr(request.node, "rep_call", None)
    if rep is None or rep.failed:
        print(f"\n----- notify messages -----\n{m.messages}\n----- zygoted stderr -----\n{m.log}")
    m.close()
    reap_zombies()
    shutil.rmtree(d, ignore_errors=True)


class Task:
    """A detached task whose stdin is a pipe we hold: closing it makes a task that reads its
    stdin exit. held: the script blocks on its stdin, so its pid is safe to open a pidfd on."""

    def __init__(self, mgr, task_id, script, held=True):
        r, self.stdin = os.pipe2(os.O_CLOEXEC)
        try:
            p = mgr.launchctl("run", "--detach", "--json", "--id", task_id, "--", "sh", "-c", script, stdin=r)
        finally:
            os.close(r)
        reply = json.loads(p.stdout)
        self.id = task_id
        self.pid = reply["pid"]
        self.tier = reply["tier"]
        self.pidfd = os.pidfd_open(self.pid) if held else None

    def release(self):
        os.close(self.stdin)
        self.stdin = None

    def wait_exited(self):
        assert readable(self.pidfd, TIMEOUT), f"task {self.id} did not exit"

    def close(self):
        if self.stdin is not None:
            os.close(self.stdin)
        if self.pidfd is not None:
            os.close(self.pidfd)
