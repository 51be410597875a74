# SPDX-License-Identifier: MIT
"""Another caller's latency while one call's cost lands on the real zygoted: sockets whose close
lingers, sent among many fds, and GetFilter objects that are expensive to compile. See
test_hostile.py.

Each attack gets its documented error or disconnect (docs/SECURITY.md), the daemon keeps every fd
it was handed only as long as the call needs it (its open fd count goes back to where it was),
and a well-behaved client is served correctly throughout: `served()` (hostile.py) runs a real task
on a fresh connection and prints its latency (GetStatus round trip and spawn-to-exit of /bin/echo).
"""
import os
import re
import signal
import socket
import struct
import time

import pytest

import attacks
import varlink
from zytest import NOBODY, NOGROUP, OTHER_UID, OTHER_GID, wait_for
from hostile import (L, INVALID, LIMIT, served, raw_socket, sendmsg_fds, msg, devnull_fds,
                     close_all, StallingFuse, stalling_fuse)


# ---- another caller's latency while a call's cost lands on the daemon ---------------------------

LATENCY_BOUND = 0.100  # no request of one caller may delay another by more than this


class LatencyProbe:
    """Another user's GetStatus, on a connection of its own, round after round in a thread while
    an attack runs: every round trip is recorded. A round that takes 5 s is cut and counted as
    5 s (the daemon is stalled; the rest of the test must still end)."""

    CUT = 5.0

    def __init__(self, d, uid=OTHER_UID, gid=OTHER_GID):
        import threading
        self.conn = d.connect_as(uid, gid, timeout=self.CUT)
        self.times = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop_event.is_set():
            t0 = time.monotonic()
            try:
                assert self.conn.call(L + "GetStatus").parameters["version"]
            except (socket.timeout, TimeoutError, OSError, varlink.Closed):
                self.times.append(self.CUT)
                return
            self.times.append(time.monotonic() - t0)
            self.stop_event.wait(0.01)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        self.conn.close()

    def stop(self):
        self.stop_event.set()
        self.thread.join(self.CUT + 5)

    def check(self, capsys, label):
        """Stops the probe, prints its figures, and asserts every round under LATENCY_BOUND."""
        self.stop()
        assert self.times, "the probe made no round"
        worst = max(self.times)
        with capsys.disabled():
            print(f"\n  [{label}] another user's GetStatus: {len(self.times)} rounds, median "
                  f"{1000 * sorted(self.times)[len(self.times) // 2]:.1f} ms, worst {1000 * worst:.1f} ms", end="")
        assert worst < LATENCY_BOUND, f"{label}: another user's GetStatus waited {1000 * worst:.0f} ms"


class LingeringSocket:
    """A TCP socket on the loopback whose close waits: SO_LINGER 40 s, its send buffer full of
    data its peer (held here, never reading) does not take. Whoever drops its last reference
    waits in close() until the data went out or 40 s passed; release() resets the peer, which
    ends any such wait at once."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.client = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        self.client.connect(self.listener.getsockname())
        self.peer, _ = self.listener.accept()
        self.client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 40))
        self.client.setblocking(False)
        try:
            while True:
                self.client.send(b"x" * 65536)
        except BlockingIOError:
            pass

    def fileno(self):
        return self.client.fileno()

    def hand_over(self):
        """Our copy goes once it was sent and before the daemon can have read it (see
        send_stopped): the message in flight holds it, so this close is not the last, and the
        daemon's is."""
        os.close(self.client.detach())

    def release(self):
        # SO_LINGER 0 on the peer: its close sends a reset, which ends a lingering close
        self.peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.peer.close()
        self.listener.close()
        if self.client.fileno() >= 0:
            self.client.close()


def send_stopped(d, sock, data, fds, lingering):
    """sendmsg(data, fds) to the daemon while it is stopped, and our copies of the lingering
    sockets closed before it goes on: whatever it does with them, its release is the last."""
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        try:
            sendmsg_fds(sock, data, fds)
        except (BrokenPipeError, ConnectionResetError):
            pass
        for ling in lingering:
            ling.hand_over()
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)


def lingering_fd_attack(d, capsys, label, n_fds, position, sender=None, probe=None):
    """One message of n_fds fds (GetStatus, which takes none) whose fd at index position is a
    LingeringSocket, the rest /dev/null, while another user's GetStatus is timed. The sender
    gets an error (the message is refused, or its connection dropped) and every other caller is
    served within LATENCY_BOUND. Returns the sender's reply (None if it was dropped unanswered)."""
    ling = LingeringSocket()
    fds = devnull_fds(n_fds - 1)
    fds.insert(position, ling.fileno())
    s = sender or raw_socket(d)
    c = varlink.Connection(sock=s) if sender is None else sender
    sock = c.sock
    r = None
    try:
        send_stopped(d, sock, msg(L + "GetStatus"), fds, [ling])
        with probe or LatencyProbe(d) as probe:
            sock.settimeout(LatencyProbe.CUT + 2)
            try:
                r = c.recv()
            except (varlink.Closed, ConnectionResetError, socket.timeout, TimeoutError):
                r = None  # dropped unanswered, or the daemon stalled (the probe tells)
            # the daemon drops the last reference in this time, or after the connection closes
            c.at_eof(2)
            probe.stop_event.wait(1.0)
            probe.check(capsys, label)
    finally:
        close_all(fds[:position] + fds[position + 1:])
        ling.release()
        c.close()
    assert d.alive()
    return r


def test_lingering_socket_as_the_65th_fd(daemon, capsys):
    """A message with 65 fds, the 65th a TCP socket lingering on unsent data: with room for only
    64, recvmsg itself dropped the 65th, and its close waited 40 s in the daemon's one thread.
    Every fd is taken (room for the kernel's 253) and closed by the closer: LimitExceeded "fds",
    and another user's GetStatus stays under 100 ms."""
    r = lingering_fd_attack(daemon, capsys, "lingering socket as the 65th fd", 65, 64)
    assert r is not None and r.error == LIMIT and r.parameters == {"limit": "fds", "max": 64}, r and dict(r)


@pytest.mark.parametrize("position", [64, 170, 252])
def test_lingering_socket_among_253_fds(daemon, capsys, position):
    """The most one message can carry (SCM_MAX_FD, 253), one of them a lingering TCP socket."""
    r = lingering_fd_attack(daemon, capsys, f"lingering socket as fd {position + 1} of 253", 253, position)
    assert r is not None and r.error == LIMIT and r.parameters == {"limit": "fds", "max": 64}, r and dict(r)


def test_lingering_socket_sent_after_the_message(daemon, capsys):
    """The fds come after a message the daemon refuses and drops the connection for: they are
    never read, and closing the connection releases them (the queue's last reference). The
    sink closes such a socket, never the daemon's thread."""
    ling = LingeringSocket()
    s = raw_socket(daemon)
    s.setsockopt(socket.SOL_SOCKET, 32, 1 << 20)  # SO_SNDBUFFORCE: all of it queued at once
    c = varlink.Connection(sock=s)
    try:
        # Both queued while the daemon is stopped, so that it reads the first and never the
        # second: 64 KiB with no NUL (a message too long: refused, the connection dropped),
        # then one byte with the fd.
        os.kill(daemon.proc.pid, signal.SIGSTOP)
        try:
            s.sendall(b" " * (64 * 1024))
            sendmsg_fds(s, b" ", [ling.fileno()])
            ling.hand_over()
        finally:
            os.kill(daemon.proc.pid, signal.SIGCONT)
        with LatencyProbe(daemon) as probe:
            s.settimeout(LatencyProbe.CUT + 2)
            r = c.recv()
            assert r.error == LIMIT and r.parameters.get("limit") == "message", dict(r)
            c.at_eof(2)
            probe.stop_event.wait(1.0)
            probe.check(capsys, "lingering socket queued on a dropped connection")
    finally:
        ling.release()
        c.close()
    assert daemon.alive()


def test_lingering_socket_from_a_refused_uid(daemons, needs_root, capsys):
    """A uid whose fds hold 8 closer helpers (FUSE files whose FLUSH its server holds) is refused
    fds: recvmsg with no room for them had the kernel drop them in the daemon's thread. Its next
    message, with a lingering TCP socket, is refused unread (LimitExceeded fdsHeldInClose) and
    its connection, the socket still queued in it, goes to the sink; another user's GetStatus
    stays under 100 ms."""
    d = daemons(tier="load")
    conns = varlink.connect_many_as(d.socket, NOBODY, NOGROUP, 3, timeout=10)
    probe = LatencyProbe(d)  # its connection made before the FUSE server runs (no fork then)
    fs, mnt = stalling_fuse(daemons, [StallingFuse.FLUSH])
    files = []
    try:
        files = [os.open(os.path.join(mnt, "file"), os.O_RDWR | os.O_CLOEXEC) for _ in range(10)]
        sendmsg_fds(conns[0].sock, msg(L + "GetStatus"), files)
        assert conns[0].recv().error == INVALID
        wait_for(lambda: fs.n_held >= 10, "zygoted's ten FLUSHes held", timeout=30)

        def refused():  # on one connection: an fd taken gets InvalidParameter, and it stays
            fds = devnull_fds(1)
            try:
                sendmsg_fds(conns[1].sock, msg(L + "GetStatus"), fds)
                r = conns[1].recv()
            finally:
                close_all(fds)
            return r.error == LIMIT and r.parameters.get("limit") == "fdsHeldInClose"
        wait_for(refused, "the uid's fds refused", timeout=30)
        r = lingering_fd_attack(d, capsys, "lingering socket from a refused uid", 1, 0, sender=conns[2],
                                probe=probe)
        assert r is not None and r.error == LIMIT and r.parameters == {"limit": "fdsHeldInClose", "max": 8}, \
            r and dict(r)
    finally:
        fs.release.set()
        close_all(files)
        fs.close()
        probe.conn.close()
        for c in conns:
            c.close()


# ---- GetFilter's compile off the loop ------------------------------------------------------------

def syscall_names():
    """Every syscall name of this machine's architecture (x86_64), from the kernel's headers."""
    names = []
    try:
        with open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") as f:
            for line in f:
                m = re.match(r"#define __NR_(\w+) \d+", line)
                if m:
                    names.append(m.group(1))
    except FileNotFoundError:
        pass
    if os.uname().machine != "x86_64" or len(names) < 300:
        pytest.skip("needs x86_64's syscall names (linux-libc-dev)")
    return names


def expensive_object(entries, args, arches, tag="", names_per=1):
    """An OCI seccomp object made to keep libseccomp busy: `entries` entries of `names_per`
    syscalls each, every one comparing `args` arguments, for `arches` architectures. Its
    complexity is entries * names_per * args * arches argument comparisons (filter-cache.h)."""
    names = syscall_names()
    syscalls = [{"names": [names[(i * names_per + k) % len(names)] for k in range(names_per)],
                 "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                 "args": [{"index": a, "value": 1000 + i + a, "op": "SCMP_CMP_NE"} for a in range(args)]}
                for i in range(entries)]
    syscalls.append({"names": ["getpid"], "action": "SCMP_ACT_ALLOW", "comment": f"variant {tag}"})
    return {"defaultAction": "SCMP_ACT_ALLOW",
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"][:arches],
            "syscalls": syscalls}


# under the bound (1024 argument comparisons), each an expensive compile for libseccomp
# (the times are in docs/BENCHMARKS.md)
EXPENSIVE = [
    ("many rules", (340, 1, 3, 1)),           # 1020; compiles
    ("many names", (56, 6, 1, 3)),            # 1008
    ("many args", (170, 6, 1, 1)),            # 1020; the slowest, then too long a program
    ("several architectures", (56, 6, 3, 1)),  # 1008; compiles
]


def children_named(pid, comm):
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return out
    for c in kids:
        try:
            with open(f"/proc/{c}/comm") as g:
                if g.read().strip() == comm:
                    out.append(int(c))
        except OSError:
            pass
    return out


@pytest.mark.parametrize("label,shape", EXPENSIVE, ids=[e[0] for e in EXPENSIVE])
def test_expensive_filter_does_not_stall_others(daemon, capsys, label, shape):
    """A non-root user's GetFilter with an object made expensive on purpose: compiled in the
    daemon's thread, it held every other caller for as long as libseccomp took. The compile
    runs in a child; another user's GetStatus stays under 100 ms throughout, and the attacker
    gets its answer (the program, or why not)."""
    entries, args, arches, names_per = shape
    obj = expensive_object(entries, args, arches, tag=f"{label} {time.monotonic()}", names_per=names_per)
    with daemon.connect_as(NOBODY, NOGROUP, timeout=60) as attacker, LatencyProbe(daemon) as probe:
        t0 = time.monotonic()
        attacker.send(L + "GetFilter", {"seccomp": obj})
        r = attacker.recv()
        took = time.monotonic() - t0
        r.close_fds()
        probe.stop_event.wait(0.2)
        probe.check(capsys, f"GetFilter, {label}, answered in {1000 * took:.0f} ms")
    assert not r.error or r.error in (INVALID, LIMIT), dict(r)
    assert daemon.alive()


def test_complex_object_is_refused_before_compiling(daemon, capsys):
    """The object of the report (180 syscalls with six comparisons each on three architectures:
    3240 comparisons; here as 60 entries of three names, to fit in a message) is refused before
    any compile, root's as well: LimitExceeded filter_complexity with a sentence that says why,
    at once."""
    obj = expensive_object(60, 6, 3, names_per=3)
    for who in ("root", "user"):
        c = daemon.connect(timeout=10) if who == "root" else daemon.connect_as(NOBODY, NOGROUP, timeout=10)
        with c, LatencyProbe(daemon) as probe:
            t0 = time.monotonic()
            e = c.call_error(L + "GetFilter", {"seccomp": obj})
            took = time.monotonic() - t0
            probe.check(capsys, f"complex object from {who}, refused in {1000 * took:.1f} ms")
        assert e.error == LIMIT and e.parameters.get("limit") == "filter_complexity", dict(e)
        assert e.parameters["max"] == 1024 and "3240 argument comparisons" in e.parameters["message"], dict(e)
        assert took < 1.0


def test_back_to_back_expensive_compiles_are_refused(daemon, capsys):
    """Compile time was charged as wall time to the 10 s window the compile started in: a compile
    started late in one window was free for the next, and the next request passed at once. Now
    the child's CPU time is a debt the uid pays back at 1 s per 10 s: a request right after an
    expensive one is refused (LimitExceeded compile_time_per_user) whatever the window. The
    first compile starts 1.4 s before a 10 s boundary of CLOCK_MONOTONIC (the old windows'),
    so that it ends in the next window."""
    import threading
    first = expensive_object(170, 6, 1, tag="first")
    second = expensive_object(170, 6, 1, tag="second")
    with daemon.connect_as(NOBODY, NOGROUP, timeout=60) as c:
        threading.Event().wait((8.6 - time.monotonic() % 10) % 10)
        t0 = time.monotonic()
        r = c.call(L + "GetFilter", {"seccomp": first}, check=False)
        r.close_fds()
        t1 = time.monotonic()
        # compiled, or stopped by a limit of its own (on a crowded machine the wall-clock one can
        # come first); its CPU time is charged either way
        assert r.error != LIMIT or r.parameters.get("limit") in ("compile_cpu", "compile_wall_time"), dict(r)
        e = c.call(L + "GetFilter", {"seccomp": second}, check=False)
        e.close_fds()
        t2 = time.monotonic()
        with capsys.disabled():
            print(f"\n  [back to back] first answered in {1000 * (t1 - t0):.0f} ms ({r.error or 'compiled'}), "
                  f"second in {1000 * (t2 - t1):.0f} ms ({e.error or 'compiled'})", end="")
        assert e.error == LIMIT and e.parameters == {"limit": "compile_time_per_user", "max": 1000}, dict(e)
    # another uid is not affected
    with daemon.connect_as(OTHER_UID, OTHER_GID, timeout=60) as other:
        r = other.call(L + "GetFilter", {"seccomp": expensive_object(2, 1, 1, tag="other")})
        r.close_fds()


def test_compile_past_its_cpu_limit_is_stopped(daemons, needs_root, capsys):
    """A compile child past its CPU limit (RLIMIT_CPU; lowered to 1 s here through the test
    seam ZYGOTE_FILTER_CPU_SEC) is killed, and the caller told why: LimitExceeded compile_cpu
    with a sentence. The daemon serves on, and the child is reaped."""
    d = daemons(env={"ZYGOTE_FILTER_CPU_SEC": "1"})
    with d.connect(timeout=60) as c, LatencyProbe(d) as probe:
        e = c.call_error(L + "GetFilter", {"seccomp": expensive_object(170, 6, 1, tag="cpu")})
        probe.check(capsys, "compile past its CPU limit")
    assert e.error == LIMIT and e.parameters.get("limit") == "compile_cpu", dict(e)
    assert e.parameters["max"] == 1000 and "CPU time" in e.parameters["message"], dict(e)
    wait_for(lambda: not children_named(d.proc.pid, "zygote-compile"), "the compile child reaped", timeout=10)


def test_identical_objects_share_one_compile(daemon, capsys):
    """Two users ask for the same expensive object at once: one compile child serves both (the
    same program, key and hash), and a third request of one of them while it runs is not a
    second compile. A caller that leaves has its compile killed when nobody else waits."""
    obj = expensive_object(56, 6, 3, tag=f"shared {time.monotonic()}")
    a = daemon.connect_as(NOBODY, NOGROUP, timeout=60)
    b = daemon.connect_as(OTHER_UID, OTHER_GID, timeout=60)
    try:
        a.send(L + "GetFilter", {"seccomp": obj})
        wait_for(lambda: children_named(daemon.proc.pid, "zygote-compile"), "a compile child", timeout=10)
        b.send(L + "GetFilter", {"seccomp": obj})
        with daemon.connect(timeout=5) as c:  # b's call was read once this is answered
            c.call(L + "GetStatus")
        assert len(children_named(daemon.proc.pid, "zygote-compile")) <= 1
        ra, rb = a.recv(), b.recv()
        ra.close_fds()
        rb.close_fds()
        assert not ra.error and not rb.error, (dict(ra), dict(rb))
        assert ra.parameters["key"] == rb.parameters["key"] and ra.parameters["hash"] == rb.parameters["hash"]
        # a caller that leaves: its compile goes
        a.send(L + "GetFilter", {"seccomp": expensive_object(56, 6, 3, tag=f"left {time.monotonic()}")})
        wait_for(lambda: children_named(daemon.proc.pid, "zygote-compile"), "a compile child", timeout=10)
        a.close()
        wait_for(lambda: not children_named(daemon.proc.pid, "zygote-compile"), "the compile killed", timeout=10)
    finally:
        a.close()


# ---- the promise: no request of one caller delays another by more than 100 ms -------------------

ATTACKER = 4242  # a user with subordinate uids (mapped from SUBUIDS on, as newuidmap would)
SUBUIDS = 300000
WINDOW = 4.0  # seconds of rounds under each attack


def attack_connections(d, shape):
    """The attacker's connections: ("own", n) as itself, ("subuids", k, n) n as each of k
    subordinate uids in a user namespace it owns, both ("own+subuids", k, n)."""
    out = []
    try:
        if shape[0] == "filtered":  # ("filtered", how, n, owners): n as each of a few users
            for owner in range(ATTACKER, ATTACKER + shape[3]):
                out.append(attacks.Connections(d.socket, owner, shape[2], filtered=shape[1]))
        if shape[0] in ("own", "own+subuids"):
            out.append(attacks.Connections(d.socket, ATTACKER, shape[-1] if shape[0] == "own" else 128))
        if shape[0] in ("subuids", "own+subuids"):
            out.append(attacks.Connections(d.socket, ATTACKER, shape[2], uids=shape[1], base=SUBUIDS))
    except BaseException:
        for c in out:
            c.close()
        raise
    return out


# (label, the attacker's connections, what they send)
PROMISE_ATTACKS = [
    ("large messages", ("own", 128), "large"),
    ("many connections", ("own+subuids", 8, 128), None),
    ("subuids sending large messages", ("subuids", 16, 64), "large"),
    ("GetFilter near the size limit", ("own", 128), "getfilter"),
    ("events never read", ("own", 72), "events"),
    ("output never read", ("own", 128), "unread"),
    ("List of its 1 MiB of argv", ("own", 128), "list"),
    # Spawn after Spawn from callers under their own filters, which a root zygoted reads with
    # ptrace in a child (daemon/caller-filter.c), by three users (three turns in a row): callers
    # with a thread no ptrace stop reaches (every read runs to its 50 ms timeout), and callers
    # with 60 threads to stop and read
    ("filtered callers with a thread that cannot stop", ("filtered", "stuck", 64, 3), "spawn-svc"),
    ("filtered callers with 60 threads", ("filtered", "threads", 64, 3), "spawn-svc"),
]

# The profile the filtered attackers name: it admits callers with no_new_privs, so that their
# Spawns reach the read of their filters (the bundled profiles refuse them before it).
SVC_PROFILE = {"name": "svc", "capabilities": [], "noNewPrivileges": False, "noNewPrivsCallers": "allow",
               "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}}


@pytest.fixture
def promise_daemon(daemons, needs_root, bins, request):
    """The bundled profiles, and svc for the filtered attackers."""
    import json
    import zytest
    top = zytest.make_workdir()
    os.mkdir(os.path.join(top, "svc"))
    os.chmod(top, 0o755)
    os.chmod(os.path.join(top, "svc"), 0o755)
    with open(os.path.join(top, "svc", "svc.json"), "w") as f:
        json.dump(SVC_PROFILE, f)
    yield daemons(profile_dirs=[bins["profiles"], os.path.join(top, "svc")])
    zytest.remove_workdir(top)


def hold_big_argv_tasks(d):
    """The attacker's tasks, held before exec, with as much argv as it may keep (1 MiB as JSON:
    control characters, six bytes each in a reply): each List of them is a 1 MiB reply."""
    c = d.connect_as(ATTACKER, ATTACKER, timeout=30)
    ids = []
    for i in range(40):
        r = c.call(L + "Spawn", {"argv": ["/bin/true", "\x01" * 10000], "hold": True, "id": f"big-{i}"}, check=False)
        r.close_fds()
        if r.error:
            assert r.error == LIMIT and r.parameters.get("limit") == "argv_bytes_per_user", dict(r)
            break
        ids.append(f"big-{i}")
    return c, ids


@pytest.mark.parametrize("label,shape,kind", PROMISE_ATTACKS, ids=[a[0] for a in PROMISE_ATTACKS])
def test_no_caller_delays_another_past_100ms(promise_daemon, capsys, label, shape, kind):
    """docs/SECURITY.md's promise, under each attack known: uid 4242 (as itself, or as its
    subordinate uids in a user namespace it owns) attacks on up to 1,152 connections, while
    another user (65533) and root each call GetStatus on a fresh connection round after round,
    and another user on a connection made before the attack. Every round of each, connect
    included, must come back within 100 ms (the median and the worst are printed): a round
    refused (LimitExceeded connections at connect) or cut (5 s) fails too. Before accounts and
    turns, 128 connections of 60 KiB messages held the others at 0.3 to 0.7 s, and uid 4242's
    subordinate uids locked 65533 and root out at connect."""
    daemon = promise_daemon
    holder, held_ids = hold_big_argv_tasks(daemon) if kind == "list" else (None, [])
    held = attack_connections(daemon, shape)
    dialers = [attacks.Dialer(daemon.socket, OTHER_UID, OTHER_GID), attacks.Dialer(daemon.socket, 0, 0)]
    steady = daemon.connect_as(OTHER_UID, OTHER_GID, timeout=attacks.Probe.CUT)
    attacker = None
    probes = []
    try:
        if kind:
            attacker = attacks.Attacker(kind, [fd for h in held for fd in h.fds])
        probes = [attacks.Probe(dialer=dialers[0]), attacks.Probe(dialer=dialers[1]), attacks.Probe(conn=steady)]
        for p in probes:
            p.start()
        probes[0].stop_event.wait(WINDOW)
        for p in probes:
            p.stop()
    finally:
        if attacker:
            attacker.stop()
        for p in probes:
            p.stop()
        for x in dialers:
            x.close()
        steady.close()
        for h in held:
            h.close()
        if holder:
            for i in held_ids:
                holder.call(L + "Delete", {"id": i})
            holder.close()
    assert daemon.alive()
    bad = []
    # The promise is the main lane's (a release build); an ASan build does each step two to three
    # times slower, so its lane holds the same attacks to 2.5 times the bound (said on screen).
    # The attacks that spawn without end (the filtered callers) get 5 times: there each Spawn
    # costs the loop two forks of the daemon (the filter reader, caller-filter.c, and the worker,
    # forked in an ASan build, reference/worker-nocopy.c), and an ASan zygoted is 70-95 MB
    # resident with 2 MB of page tables to copy each time (a release one 6 MB); CI saw 290 ms.
    bound = LATENCY_BOUND
    with open(f"/proc/{daemon.proc.pid}/maps") as m:
        if "libasan" in m.read():
            bound = (5 if kind == "spawn-svc" else 2.5) * LATENCY_BOUND
            with capsys.disabled():
                print(f"\n  [{label}] an ASan build: bound {1000 * bound:.0f} ms"
                      + (" (each Spawn forks the ASan daemon twice)" if kind == "spawn-svc" else ""), end="")
    for who, p in zip(("another user, fresh connections", "root, fresh connections",
                       "another user, one connection"), probes):
        med, worst, n = p.figures()
        with capsys.disabled():
            print(f"\n  [{label}] {who}: {n} rounds, median {1000 * med:.1f} ms, worst {1000 * worst:.1f} ms"
                  + (f", {len(p.failures)} refused or cut ({p.failures[0]})" if p.failures else ""), end="")
        if worst >= bound or p.failures:
            bad.append(f"{who}: median {1000 * med:.0f} ms, worst {1000 * worst:.0f} ms, failures {p.failures[:2]}")
    assert not bad, f"{label}: " + "; ".join(bad)
