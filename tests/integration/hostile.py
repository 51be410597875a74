# SPDX-License-Identifier: MIT
"""The helpers of the hostile-client tests (test_hostile*.py): the daemon's fds, raw sockets and
messages, `served()` (a well-behaved client served correctly, with its latency), and a FUSE file
system whose requests never end.
"""
import array
import contextlib
import json
import os
import re
import socket
import struct
import time

import pytest

import varlink
import zytest
from zytest import wait_for


L = "io.zygote.Launcher."
INVALID = "org.varlink.service.InvalidParameter"
LIMIT = L + "LimitExceeded"


# ---- helpers ------------------------------------------------------------------------------------

# The reference's own path (a Spawn parked until it answers): no pool worker may take the Spawn
# (the pool is off by default; this keeps it off whatever the default).
NO_POOL = {"ZYGOTE_DISABLE_FEATURES": "pool"}
# The inherit tier's pool of pre-forked workers, on.
POOL_ARGS = ["--pool-max", "4"]


def pool_pids(d):
    """The idle pool workers: children of the daemon that wait for a spawn, not workers."""
    return {pid for p in d.profiles().values() for pid in p.get("pool", {}).get("pids", ())}


def daemon_fds(d):
    """The daemon's open fds, by number -> what they are."""
    out = {}
    base = f"/proc/{d.proc.pid}/fd"
    for n in os.listdir(base):
        try:
            out[int(n)] = os.readlink(f"{base}/{n}")
        except FileNotFoundError:
            pass
    return out


def pool_fds(d, fds):
    """The numbers among fds that are the pools' (reference-pool.c): each idle worker's pidfd
    (its fdinfo names its pid) and channel, and the channel of each worker being forked. Legitimate
    fds whose count follows the pools' sizes, left out of the comparisons below. A channel is a
    socket like any other: as many of the sockets as there are channels are taken."""
    pids, channels = set(), 0
    for p in d.profiles().values():
        pool = p.get("pool")
        if pool:
            pids.update(pool["pids"])
            channels += pool["size"] + pool["forking"]
    out = set()
    for n, what in fds.items():
        if what == "anon_inode:[pidfd]":
            try:
                with open(f"/proc/{d.proc.pid}/fdinfo/{n}") as f:
                    if any(line.startswith("Pid:") and int(line.split()[1]) in pids for line in f):
                        out.add(n)
            except (FileNotFoundError, ValueError):
                pass
    sockets = sorted((n for n, what in fds.items() if what.startswith("socket:")), reverse=True)
    out.update(sockets[:channels])
    return out


def settled_fds(d):
    """The daemon's fds once it has handled what was sent before: read while a fresh connection
    has just been answered (so every reading counts that one connection), again and again until
    two readings agree (the EOF of a connection closed just before may be handled in the same
    loop iteration as the call, a moment after the answer)."""
    prev = None
    for _ in range(100):
        with d.connect() as c:
            c.call("org.varlink.service.GetInfo")
            # Not counted: each live closer helper's own /proc/PID/syscall (common/fd-closer.c),
            # which comes and goes with the helpers: a helper seen asleep in a close() is
            # replaced, and the old one leaves when its close returns, at the kernel's pace.
            cur = {k: v for k, v in daemon_fds(d).items() if not re.fullmatch(r"/proc/\d+/syscall", v)}
            for n in pool_fds(d, cur):
                del cur[n]
        if prev is not None and sorted(cur) == sorted(prev):
            return cur
        prev = cur
    return cur


def fds_back_to(d, before, what):
    """The daemon's fd table (settled_fds) returns to `before`: it closes what it was handed,
    at its own pace (a task's pidfd goes when the task is reaped)."""
    def same():
        return len(settled_fds(d)) == len(before)
    try:
        wait_for(same, what, timeout=15)
    except AssertionError:
        now = settled_fds(d)
        extra = {k: v for k, v in now.items() if before.get(k) != v}
        raise AssertionError(f"{what}: the daemon holds {len(now)} fds, {len(before)} before; new: {extra}")


def spawn_with_pipe_to_eof(c):
    """A task spawned on c with a pipe's write end as its stdout, waited for and deleted: the pipe
    must then reach EOF, that is every copy of the write end (the caller's, the daemon's, the
    reference's, the worker's) be closed."""
    import select
    pr, pw = os.pipe2(os.O_CLOEXEC)
    try:
        r = c.call(L + "Spawn", {"argv": ["true"], "fds": [{"fd": 0, "target": 1}]}, fds=[pw])
        r.close_fds()
        os.close(pw)
        pw = None
        c.call(L + "Wait", {"id": r.parameters["id"]})
        c.call(L + "Delete", {"id": r.parameters["id"]})
        assert select.select([pr], [], [], 10)[0], "no EOF on the pipe: a copy of it stayed open"
        assert os.read(pr, 1) == b""
    finally:
        os.close(pr)
        if pw is not None:
            os.close(pw)


def subscribe_and_see_a_task(daemon, c):
    """c subscribes to Events and must get the event of a task run on another connection."""
    c.send(L + "Events", {}, more=True)
    assert daemon.status()["version"]
    with daemon.connect() as other:
        zytest.run_task(other, ["true"], stdin=False, stdout=False)
    ev = c.recv()
    assert not ev.error and ev.continues, dict(ev)


def served(d, capsys, label):
    """A well-behaved client on a fresh connection: GetStatus, then /bin/echo to its exit.
    Prints both latencies (the machine is shared and slow: they are printed, never asserted)."""
    t0 = time.monotonic()
    with d.connect() as c:
        assert c.call(L + "GetStatus").parameters["version"]
        t1 = time.monotonic()
        out, final, tier = zytest.run_task(c, ["/bin/echo", "still serving"])
    t2 = time.monotonic()
    assert out == b"still serving\n" and final["exitCode"] == 0, (out, final)
    assert d.alive()
    with capsys.disabled():
        print(f"\n  [{label}] well-behaved client: GetStatus {1000 * (t1 - t0):.1f} ms, "
              f"spawn-to-exit {1000 * (t2 - t1):.1f} ms ({tier})", end="")


def blocking_connect(d):
    """A connection made with a blocking connect(): with the listen backlog full, a
    non-blocking one fails with EAGAIN where a real client would wait its turn."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    s.connect(d.socket)
    return varlink.Connection(sock=s, timeout=60)


def raw_socket(d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    s.settimeout(30)
    s.connect(d.socket)
    return s


def sendmsg_fds(sock, data, fds):
    return sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def msg(method, parameters=None, **extra):
    m = {"method": method}
    if parameters is not None:
        m["parameters"] = parameters
    m.update(extra)
    return json.dumps(m).encode() + b"\0"


def devnull_fds(n):
    return [os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC) for _ in range(n)]


def close_all(fds):
    for fd in fds:
        os.close(fd)


class StallingFuse:
    """A one-file FUSE file system (raw /dev/fuse protocol, mounted by root with allow_other)
    whose server holds every request of the kinds in `hold` (IOCTL by default, FLUSH: a close)
    until released, each in a thread of its own while the rest are answered: a file a caller can
    pass whose ioctls (or closes) never end. Its server is a thread of this process: start no
    subprocess while it is mounted (a vfork would hold the GIL that the thread needs to answer)."""

    IOCTL, FLUSH = 39, 25

    def __init__(self, mnt, hold=(IOCTL,), armed_by=None):
        """armed_by: an op; requests of `hold` are held only once one of those was answered."""
        import ctypes
        import threading
        self.hold = set(hold)
        self.armed_by = armed_by
        self.armed = armed_by is None
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.mnt = mnt.encode()
        self.fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        opts = f"fd={self.fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
        if self.libc.mount(b"zygote-test", self.mnt, b"fuse", 0, opts) != 0:
            e = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(e, os.strerror(e))
        self.held = threading.Event()
        self.n_held = 0  # requests held so far
        self.release = threading.Event()
        self.threads = [threading.Thread(target=self.serve, daemon=True)]
        self.threads[0].start()

    @staticmethod
    def attr(ino, mode):
        return struct.pack("<6Q10I", ino, 0, 0, 0, 0, 0, 0, 0, 0, mode, 1, 0, 0, 0, 4096, 0)

    def reply(self, unique, err=0, payload=b""):
        try:
            os.write(self.fd, struct.pack("<IiQ", 16 + len(payload), -err, unique) + payload)
        except OSError:
            pass  # the request was interrupted, or the file system unmounted meanwhile

    def serve(self):
        import errno
        import stat
        while True:
            try:
                data = os.read(self.fd, 1 << 18)
            except OSError:
                return  # unmounted or aborted
            if len(data) < 40:
                return  # /dev/null in its place (close())
            _, op, unique, node, _, _, _, _ = struct.unpack("<IIQQIIII", data[:40])
            if op == 26:    # INIT: protocol 7.31
                self.reply(unique, 0, struct.pack("<IIIIHHIIHHI7I", 7, 31, 1 << 17, 0, 16, 12, 1 << 17, 1, 32,
                                                  0, 0, *[0] * 7))
            elif op == 1:   # LOOKUP: only "file"
                if data[40:].split(b"\0")[0] == b"file":
                    self.reply(unique, 0, struct.pack("<QQQQII", 2, 0, 1, 1, 0, 0) +
                               self.attr(2, stat.S_IFREG | 0o666))
                else:
                    self.reply(unique, errno.ENOENT)
            elif op == 3:   # GETATTR
                mode = stat.S_IFDIR | 0o755 if node == 1 else stat.S_IFREG | 0o666
                self.reply(unique, 0, struct.pack("<QII", 1, 0, 0) + self.attr(node, mode))
            elif op == 14:  # OPEN
                self.reply(unique, 0, struct.pack("<QII", 1, 0, 0))
            elif op in self.hold and self.armed:  # answered once released, in a thread of its own
                import threading
                self.n_held += 1
                self.held.set()
                t = threading.Thread(target=self.answer_when_released,
                                     args=(unique, errno.ENOTTY if op == self.IOCTL else 0), daemon=True)
                self.threads.append(t)
                t.start()
            elif op == self.IOCTL:
                self.reply(unique, errno.ENOTTY)
                self.armed = self.armed or self.armed_by == op
            elif op in (2, 36, 42):  # FORGET, INTERRUPT, BATCH_FORGET: no reply
                pass
            elif op in (18, 25, 34):  # RELEASE, FLUSH, ACCESS
                self.reply(unique)
            else:
                self.reply(unique, errno.ENOSYS)

    def answer_when_released(self, unique, err):
        self.release.wait()
        self.reply(unique, err)

    def close(self):
        """Releases what is held, unmounts, and gives the fd's number back only once no thread of
        the server can use it: a RELEASE answered after a plain close() would be written to
        whatever took the number next (a daemon connection opened by the test, which then reads
        a FUSE reply where a call should be). /dev/null takes the number's place first."""
        self.release.set()
        self.libc.umount2(self.mnt, 1)  # MNT_FORCE: aborts requests still waiting
        self.libc.umount2(self.mnt, 2)  # MNT_DETACH
        null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        os.dup2(null, self.fd, inheritable=False)  # atomic: the number never free
        os.close(null)
        for t in self.threads:
            t.join(10)
        if any(t.is_alive() for t in self.threads):
            return  # /dev/null stays on the number: harmless, never reused under a thread
        os.close(self.fd)


def stalling_fuse(daemons, hold, armed_by=None):
    """A StallingFuse holding the requests of hold, mounted on a new "mnt" of the daemons' work
    directory: (it, the mount point). A skip without /dev/fuse or where it cannot be mounted."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    mnt = os.path.join(daemons.workdir(), "mnt")
    os.mkdir(mnt)
    try:
        return StallingFuse(mnt, hold, armed_by), mnt
    except OSError as e:
        pytest.skip(f"cannot mount a FUSE file system here: {e}")


@contextlib.contextmanager
def held_fuse_file(daemons, hold, armed_by=None):
    """stalling_fuse(daemons, hold, armed_by) with its file open read-write: yields (the file
    system, the fd). On the way out the server is released first (our own close of the file would
    be held too), then the fd is closed and the file system unmounted."""
    fs, mnt = stalling_fuse(daemons, hold, armed_by)
    f = None
    try:
        f = os.open(os.path.join(mnt, "file"), os.O_RDWR | os.O_CLOEXEC)
        yield fs, f
    finally:
        fs.release.set()
        if f is not None:
            os.close(f)
        fs.close()
