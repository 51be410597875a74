# SPDX-License-Identifier: MIT
"""zygoted under a service manager, without systemd as PID 1 (docs/SYSTEMD.md).

The test plays systemd's part itself, as precisely as it matters here (FakeManager):
- the notify socket: a datagram socket of the test's, given as NOTIFY_SOCKET; every message is
  parsed (fields, SCM_RIGHTS, the sender's SCM_CREDENTIALS, which NotifyAccess=main checks);
- the fd store: FDSTORE=1/FDNAME=/FDPOLL=0/FDSTOREREMOVE=1 kept as systemd keeps them,
  including the automatic removal of a polled fd that reports EPOLLHUP or EPOLLERR (a pidfd does
  once its process is reaped), and handed back at a restart as LISTEN_FDS/LISTEN_FDNAMES with
  LISTEN_PID set to the new daemon's pid, after the socket unit's listening socket;
- the reaper: this process is a child subreaper, so the tasks a dead zygoted leaves behind become
  its children, as they become PID 1's (or the user manager's) under systemd. It reaps them when
  the test says so: that is what makes the window between a task's exit and its reaping
  testable (this machine's PID 1 may not reap at all, and would reap at a time nobody controls).

Plus the real tool: systemd-socket-activate (Debian's systemd package) for socket activation,
and a journal socket of the test's, bind-mounted over /run/systemd in a private mount
namespace, for the structured journal fields.

The fake service manager, its fixtures and the tasks are in sdmanager.py.

Run: /usr/bin/python3 -m pytest -q tests/integration/test_systemd.py (ZYGOTE_BUILD_DIR=build)
"""
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import threading
import time

import pytest

from zytest import pidfd_pid
# subreaper: an autouse fixture, imported so that it applies here
from sdmanager import (PROFILES, TIMEOUT, BASE_ENV, sd_bins, subreaper, pidfd_info_exit_supported, readable,
                       Stored, manager, Task)


# ---- notify: READY, STATUS, WATCHDOG, RELOADING, STOPPING ------------------------------------

def test_notify_lifecycle(manager):
    m = manager
    pid = m.start(env={"WATCHDOG_USEC": "1000000"})
    ready = m.wait_ready()
    assert ready.pid == pid, "READY=1 must come from the main process (NotifyAccess=main)"
    # READY=1 means serving: profiles compiled, references up, socket listening.
    status = json.loads(m.launchctl("status", "--json").stdout)
    profiles = status["profiles"]
    assert profiles and all(p.get("reference_pid") or p["tier"] == "load" for p in profiles)
    assert m.launchctl("run", "--", "true").returncode == 0

    st = m.wait_message(lambda x: x.get("STATUS"), "STATUS=")
    rx = re.match(r"(\d+) profiles \(clone (\d+), inherit (\d+), load (\d+)\), (\d+) tasks", st.get("STATUS"))
    assert rx, st.get("STATUS")
    assert int(rx.group(1)) == len(profiles)
    tiers = [p["tier"] for p in profiles]
    assert [int(rx.group(i)) for i in (2, 3, 4)] == [tiers.count(t) for t in ("clone", "inherit", "load")]

    # WATCHDOG=1 every WATCHDOG_USEC/2 = 0.5 s. Never early (libev timers do not fire early);
    # late only by scheduling, so a median under 0.75 s still separates half from a full
    # interval (1.0 s), which is the usual mistake. Arrival times are send times only while we
    # listen: what queued up meanwhile is drained first.
    m.drain()
    start = len(m.messages)
    m.pump(lambda: sum(1 for x in m.messages[start:] if x.get("WATCHDOG") == "1") >= 7, "7 WATCHDOG=1")
    times = [x.at for x in m.messages[start:] if x.get("WATCHDOG") == "1"]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= 0.4, f"watchdog pings too early: {gaps}"
    assert statistics.median(gaps) <= 0.75, f"watchdog pings not at half of WATCHDOG_USEC: {gaps}"
    assert all(x.pid == pid for x in m.messages)

    # ExecReload=: SIGHUP gives RELOADING=1 (with MONOTONIC_USEC), then READY=1 again.
    start = len(m.messages)
    before = time.monotonic()
    os.kill(pid, signal.SIGHUP)
    rel = m.wait_message(lambda x: x.get("RELOADING") == "1", "RELOADING=1", start)
    mono = int(rel.get("MONOTONIC_USEC")) / 1e6
    assert before <= mono <= rel.at, "MONOTONIC_USEC is not CLOCK_MONOTONIC at the reload"
    again = m.wait_ready(m.messages.index(rel) + 1)
    assert again.at >= rel.at

    # SIGTERM: STOPPING=1, then a clean exit.
    start = len(m.messages)
    status = m.stop()
    assert os.waitstatus_to_exitcode(status) == 0, m.log
    tail = m.messages[start:]
    assert any(x.get("STOPPING") == "1" for x in tail), tail
    assert not any(x.get("READY") == "1" or x.get("WATCHDOG") == "1"
                   for x in tail[[x.get("STOPPING") for x in tail].index("1"):]), tail


def test_no_notify_socket_says_tasks_are_not_adopted(sd_bins, tmp_path):
    """Without systemd there is no fd store: the daemon says so, plainly."""
    sock = str(tmp_path / "s.sock")
    p = subprocess.Popen([sd_bins["zygoted"], "--socket", sock, "--profiles", PROFILES], env=BASE_ENV,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        log = b""
        while b"listening on" not in log:
            assert readable(p.stderr.fileno(), TIMEOUT), log
            chunk = os.read(p.stderr.fileno(), 4096)
            assert chunk, log
            log += chunk
        while b"not adopted" not in log:
            assert readable(p.stderr.fileno(), TIMEOUT), log
            chunk = os.read(p.stderr.fileno(), 4096)
            assert chunk, log
            log += chunk
        assert b"not under systemd" in log
        # A round trip: the loop runs, so the SIGTERM below meets its handler.
        r = subprocess.run([sd_bins["launchctl"], "--socket", sock, "status"], stdout=subprocess.DEVNULL,
                           env=BASE_ENV, timeout=TIMEOUT)
        assert r.returncode == 0
    finally:
        p.terminate()
        assert p.wait(TIMEOUT) == 0
        p.stderr.close()


# ---- socket activation -------------------------------------------------------------------------

def listening_sockets():
    """path -> sockfs inode of every listening Unix socket (/proc/net/unix, __SO_ACCEPTCON)."""
    out = {}
    with open("/proc/net/unix") as f:
        for line in f.read().splitlines()[1:]:
            x = line.split()
            if len(x) >= 8 and int(x[3], 16) & 0x10000:
                out[x[7]] = int(x[6])
    return out


def test_systemd_socket_activate(sd_bins, tmp_path):
    tool = shutil.which("systemd-socket-activate")
    if not tool:
        pytest.skip("systemd-socket-activate is not installed (Debian package systemd)")
    sock = str(tmp_path / "activated.sock")
    own = str(tmp_path / "own.sock")  # what zygoted would bind without activation
    p = subprocess.Popen([tool, "-l", sock, "--fdname=varlink", sd_bins["zygoted"], "--socket", own,
                          "--profiles", PROFILES], env=BASE_ENV, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.fileno()
    log = b""

    def read_until(token):
        nonlocal log
        while token not in log:
            assert readable(err, TIMEOUT), f"no {token!r}: {log.decode()}"
            chunk = os.read(err, 65536)
            assert chunk, f"EOF before {token!r}: {log.decode()}"
            log += chunk
    try:
        read_until(b"Listening on")       # the tool's socket is bound: connecting now queues
        r = subprocess.run([sd_bins["launchctl"], "--socket", sock, "run", "--", "sh", "-c", "echo $((6*7))"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BASE_ENV, timeout=TIMEOUT)
        assert r.returncode == 0, (r.stderr, log)
        assert r.stdout == b"42\n"
        read_until(b"listening on")
        assert b"listening on a socket from systemd" in log, log.decode()
        assert not os.path.exists(own), "zygoted bound its own socket although one was passed"
        # The passed socket is the only listening socket zygoted holds.
        assert os.readlink(f"/proc/{p.pid}/exe") == "/memfd:zygoted (deleted)"  # its sealed copy
        with open(f"/proc/{p.pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[0].decode() == sd_bins["zygoted"]
        ino = listening_sockets().get(sock)
        assert ino is not None
        def fd_link(fd):
            # A connection may close between listdir and readlink (launchctl's Delete has just
            # been answered): such an fd is gone, not a listening socket.
            try:
                return os.readlink(f"/proc/{p.pid}/fd/{fd}")
            except FileNotFoundError:
                return ""
        held = {int(x[8:-1]) for x in (fd_link(fd) for fd in os.listdir(f"/proc/{p.pid}/fd"))
                if x.startswith("socket:[")}
        assert held & set(listening_sockets().values()) == {ino}
        inode = os.stat(sock).st_ino
        p.terminate()
        assert p.wait(TIMEOUT) == 0
        # Never unlinked: the socket unit owns the path.
        assert os.path.exists(sock) and os.stat(sock).st_ino == inode
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()


# ---- the fd store and adoption -------------------------------------------------------------------

def task_names(m):
    return [n for n in m.names() if n.startswith("zt/")]


def parse_task_name(name):
    f = name.split("/")
    assert len(f) == 8 and f[0] == "zt", name
    return {"owner": int(f[1]), "run_uid": int(f[2]), "pid": int(f[3]), "tier": f[4], "created_ms": int(f[5]),
            "profile": f[6], "id": f[7]}


def test_fd_store_messages(manager):
    m = manager
    m.start()
    m.wait_ready()
    refs = {p["reference_pid"] for p in json.loads(m.launchctl("status", "--json").stdout)["profiles"]
            if p.get("reference_pid")}
    # One ref/<pid> per reference process, polled (a dead reference leaves the store by itself).
    for pid in refs:
        (e,) = m.stored(f"ref/{pid}")
        assert e.poll and pidfd_pid(e.fd) == pid
    t = Task(m, "store-me", "read x; exit 9")
    try:
        msg = m.wait_message(lambda x: x.get("FDSTORE") == "1" and (x.get("FDNAME") or "").endswith("/store-me"),
                             "FDSTORE=1 of the task")
        assert msg.get("FDPOLL") == "0", "a task's pidfd must survive its reaping in the store"
        name = msg.get("FDNAME")
        f = parse_task_name(name)
        assert f == dict(f, owner=os.geteuid(), run_uid=os.geteuid(), pid=t.pid, tier=t.tier, profile="default",
                         id="store-me")
        assert abs(f["created_ms"] / 1000 - time.time()) < 600
        assert len(msg.fds) == 1 and pidfd_pid(m.stored(name)[0].fd) == t.pid
        t.release()
        assert m.launchctl("wait", t.id, check=False).returncode == 9
        assert m.stored(name), "an exited task stays in the store until it is deleted"
        start = len(m.messages)
        m.launchctl("delete", t.id)
        m.wait_message(lambda x: x.get("FDSTOREREMOVE") == "1" and x.get("FDNAME") == name, "FDSTOREREMOVE", start)
        assert not m.stored(name)
    finally:
        t.close()
    status = m.stop()
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("how", ["restart", "crash"])
def test_restart_adopts_tasks(manager, how):
    if not pidfd_info_exit_supported():
        pytest.skip("the kernel lacks PIDFD_INFO_EXIT (Linux 6.15): an adopted task's status cannot be known")
    m = manager
    m.socket_unit()
    m.start()
    m.wait_ready()
    a = Task(m, "a", "read x; exit 7")          # exits after the restart, reaped while adopted
    b = Task(m, "b", "read x; exit 3")          # exits and is reaped while no zygoted runs
    c = Task(m, "c", "exit 5", held=False)      # exits (reaped by the first zygoted) before it
    d = Task(m, "d", "read x")                  # killed through the new zygoted
    try:
        assert m.launchctl("wait", "c", check=False).returncode == 5
        names = {parse_task_name(n)["id"]: n for n in task_names(m)}
        assert set(names) == {"a", "b", "c", "d"}
        old_refs = [n for n in m.names() if n.startswith("ref/")]
        assert old_refs

        start = len(m.messages)
        status = m.stop(signal.SIGTERM if how == "restart" else signal.SIGKILL)
        if how == "restart":
            assert os.waitstatus_to_exitcode(status) == 0, m.log
            assert any(x.get("STOPPING") == "1" for x in m.messages[start:])
        else:
            assert os.WIFSIGNALED(status)
        assert not any(x.get("FDSTOREREMOVE") == "1" and (x.get("FDNAME") or "").startswith("zt/")
                       for x in m.messages[start:]), "a stopping zygoted must leave its tasks in the store"
        assert not readable(a.pidfd, 0) and not readable(b.pidfd, 0), "tasks must outlive zygoted"

        # b ends while no daemon runs; we are its reaper now. Its pidfd stays in the store only
        # because it was stored with FDPOLL=0: a polled one would be dropped at the reaping.
        b.release()
        b.wait_exited()
        assert os.waitpid(b.pid, 0)[1] == 3 << 8
        assert names["b"] in m.names()

        first_log = m.log
        m.start(env={"ZYGOTE_LOG_LEVEL": "debug"})
        m.wait_ready()
        assert "a socket from systemd" in m.log
        # The old references were ended and taken out of the store (by the old daemon when it
        # stopped cleanly, by the new one after a crash).
        assert not set(old_refs) & set(m.names())
        if how == "crash":
            m.wait_log(r"ended %d of its reference processes" % len(old_refs))
        m.wait_log(r"adopted 4 tasks")

        tasks = m.ps()
        assert tasks["a"]["state"] == "running" and tasks["a"]["pid"] == a.pid
        assert tasks["a"]["argv"] == ["sh", "-c", "read x; exit 7"]
        assert tasks["a"]["profile"] == "default" and tasks["a"]["tier"] == a.tier
        assert tasks["b"]["state"] == "stopped" and tasks["b"].get("exitCode") == 3, tasks["b"]
        assert tasks["c"]["state"] == "stopped" and tasks["c"].get("exitCode") == 5, tasks["c"]

        # a exits; until someone reaps it, its status does not exist yet. The daemon must wait
        # for the reaping (and say so at debug level), not invent a status.
        waiter = subprocess.Popen([m.bins["launchctl"], "--socket", m.socket, "wait", "a"], env=BASE_ENV,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            a.release()
            a.wait_exited()
            m.wait_log(r"task a: exited while adopted; its status comes when its reaper reaps it")
            st = m.state("a")
            assert "exitCode" not in st and "signal" not in st, st
            assert waiter.poll() is None, "Wait answered before the status existed"
            assert os.waitpid(a.pid, 0)[1] == 7 << 8     # the reaping
            assert m.wait_process(waiter, "launchctl wait a") == 7, waiter.stderr.read()
        finally:
            if waiter.poll() is None:
                waiter.kill()
                waiter.wait()
            waiter.stderr.close()
        assert m.ps()["a"].get("exitCode") == 7
        m.wait_log(r"task a exit: .* status=7 \(adopted\)")

        # Kill works on an adopted task (through its pidfd); the status arrives after the reaping.
        m.launchctl("kill", "d", "KILL")
        d.wait_exited()
        assert os.waitpid(d.pid, 0)[1] == signal.SIGKILL
        assert m.launchctl("wait", "d", check=False).returncode == 128 + signal.SIGKILL
        assert m.state("d").get("signal") == signal.SIGKILL

        start = len(m.messages)
        m.launchctl("delete", "c")
        m.wait_message(lambda x: x.get("FDSTOREREMOVE") == "1" and x.get("FDNAME") == names["c"],
                       "FDSTOREREMOVE of c", start)
        assert names["c"] not in m.names() and names["a"] in m.names()
        assert os.waitstatus_to_exitcode(m.stop()) == 0
        assert "adopted" not in first_log
    finally:
        for t in (a, b, c, d):
            t.close()


def test_store_rejects_what_it_cannot_adopt(manager):
    """A foreign or mangled fd in the store is dropped (and removed from it), never fatal."""
    m = manager
    r, w = os.pipe2(os.O_CLOEXEC)
    m.store.append(Stored("zt/0/0/1/load/1/default/not-a-pidfd", r, False))
    m.store.append(Stored("zt/garbage", w, False))
    m.start()
    m.wait_ready()
    m.wait_log(r"not adopting the fd named 'zt/0/0/1/load/1/default/not-a-pidfd': not a pidfd")
    m.wait_log(r"not adopting the fd named 'zt/garbage'")
    assert not task_names(m)
    assert m.ps() == {}
    assert os.waitstatus_to_exitcode(m.stop()) == 0


def test_longest_names_round_trip(manager, tmp_path):
    """The longest profile name and task id, and 10-digit uids, still fit an fd name (255
    bytes) and come back intact after a restart."""
    if not pidfd_info_exit_supported():
        pytest.skip("the kernel lacks PIDFD_INFO_EXIT (Linux 6.15)")
    if os.geteuid() != 0:
        pytest.skip("needs root: runs the task as uid 4294967294")
    m = manager
    pdir = tmp_path / "profiles"
    pdir.mkdir()
    long_profile = "p" * 63 + "_"  # ZP_PROFILE_NAME_MAX: 64 of A-Z a-z 0-9 . _ -
    with open(os.path.join(PROFILES, "default.json")) as f:
        prof = json.load(f)
    prof["name"] = long_profile
    (pdir / "long.json").write_text(json.dumps(prof))
    long_id = "i" * 62 + ".-"    # ids: 64 of A-Z a-z 0-9 _ . -
    m.start(args=("--profiles", str(pdir)))
    m.wait_ready()
    p = m.launchctl("run", "--detach", "--json", "--profile", long_profile, "--id", long_id,
                    "--user", "4294967294", "--", "/bin/true")
    pid = json.loads(p.stdout)["pid"]
    assert m.launchctl("wait", long_id, check=False).returncode == 0
    (name,) = task_names(m)
    assert len(name) <= 255
    f = parse_task_name(name)
    assert (f["profile"], f["id"], f["run_uid"], f["pid"]) == (long_profile, long_id, 4294967294, pid)
    m.stop()
    m.start(args=("--profiles", str(pdir)))
    m.wait_ready()
    t = m.ps()[long_id]
    assert (t["profile"], t["pid"], t["uid"], t.get("exitCode")) == (long_profile, pid, 4294967294, 0)
    assert os.waitstatus_to_exitcode(m.stop()) == 0


# ---- logging: the journal, or stderr -------------------------------------------------------------

def parse_journal(data):
    """systemd's native journal protocol: KEY=VALUE lines, or KEY\\n<le64 size><bytes>\\n."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            size, = struct.unpack_from("<Q", data, nl + 1)
            v = data[nl + 9: nl + 9 + size]
            i = nl + 9 + size + 1
        fields[k.decode()] = v.decode()
    return fields


class Journal:
    """A journal socket of the test's, seen by zygoted as /run/systemd/journal/socket."""

    def __init__(self, root, with_socket=True):
        self.root = root
        os.makedirs(os.path.join(root, "journal"))
        self.sock, self.entries, self.lock, self.closed = None, [], threading.Lock(), threading.Event()
        # Read on a thread, as journald reads while zygoted runs: the kernel queues only
        # net.unix.max_dgram_qlen datagrams (10 here), and a sender blocks on a full queue.
        self.reader = threading.Thread(target=lambda: [self.drain() for _ in iter(lambda: self.closed.wait(0.02), True)])
        if with_socket:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self.sock.bind(os.path.join(root, "journal", "socket"))
            self.reader.start()

    def wrap(self):
        # Private mount namespace: the bind mount is zygoted's alone; unshare and sh exec, so the
        # pid (and LISTEN_PID/NOTIFY_SOCKET's view of it) stays zygoted's.
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                'mount --bind "$0" /run/systemd && exec "$@"', self.root]

    def drain(self):
        with self.lock:
            while self.sock is not None and readable(self.sock, 0):
                data, anc, flags, _ = self.sock.recvmsg(1 << 20, socket.CMSG_SPACE(4 * 4))
                assert not anc, "journal message passed as a memfd: not expected for short lines"
                self.entries.append(parse_journal(data))
            return list(self.entries)

    def close(self):
        self.closed.set()
        if self.reader.is_alive():
            self.reader.join(timeout=5)
        if self.sock is not None:
            with self.lock:
                self.sock.close()
                self.sock = None


@pytest.fixture
def journal_ns(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root: a private mount namespace to put a test journal socket at /run/systemd")
    if not os.path.isdir("/run/systemd") or not shutil.which("unshare"):
        pytest.skip("no /run/systemd to mount over, or no unshare(1)")
    made = []

    def make(with_socket=True):
        j = Journal(str(tmp_path / f"run-systemd-{len(made)}"), with_socket)
        made.append(j)
        return j
    yield make
    for j in made:
        j.close()


def stderr_file(path):
    open(path, "wb").close()
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def run_one_task(m, j, log, stream, task_id, *argv):
    """zygoted under journal namespace j, its stderr to the file log and JOURNAL_STREAM naming the
    file stream: runs one task, then stops zygoted. Returns (the task's exit status as launchctl
    run gives it, zygoted's exit code)."""
    m.start(wrap=j.wrap(), stderr=log, env={"JOURNAL_STREAM": stderr_file(stream)})
    m.wait_ready()
    rc = m.launchctl("run", "--id", task_id, "--", *argv, check=False).returncode
    return rc, os.waitstatus_to_exitcode(m.stop())


def test_journal_structured_fields(manager, journal_ns, tmp_path):
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    # sh outlives the report of its exec: ZYGOTE_EXE is read from /proc while it runs.
    assert run_one_task(m, j, log, log, "j1", "sh", "-c", "sleep 0.5; exit 4") == (4, 0)
    entries = j.drain()
    tasks = [e for e in entries if e.get("ZYGOTE_TASK") == "j1"]
    start = [e for e in tasks if e.get("ZYGOTE_EVENT") == "start"]
    end = [e for e in tasks if e.get("ZYGOTE_EVENT") == "exit"]
    assert len(start) == 1 and len(end) == 1, entries
    for e in start + end:
        assert e["PRIORITY"] == "6" and e["SYSLOG_IDENTIFIER"] == "zygoted"
        # The path executed, after the PATH search and the symlinks: not the name as given.
        assert e["ZYGOTE_PROFILE"] == "default" and is_path_executed(e["ZYGOTE_EXE"], "sh"), e
        assert e["ZYGOTE_UID"] == str(os.geteuid()) and e["ZYGOTE_RUN_UID"] == str(os.geteuid())
        assert e["ZYGOTE_TIER"] in ("clone", "inherit", "load") and int(e["ZYGOTE_PID"]) > 0
        assert "task j1" in e["MESSAGE"]
    assert "ZYGOTE_EXIT" not in start[0]
    assert end[0]["ZYGOTE_EXIT"] == "4"
    # Plain lines went to the journal too, and nothing to stderr.
    assert any("listening on" in e.get("MESSAGE", "") for e in entries)
    assert "task j1" not in open(log).read()


def test_journal_stream_of_another_file_means_stderr(manager, journal_ns, tmp_path):
    """JOURNAL_STREAM names systemd's stream; a stderr redirected elsewhere is not it."""
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    other = str(tmp_path / "other")
    assert run_one_task(m, j, log, other, "j2", "true") == (0, 0)
    text = open(log).read()
    assert re.search(r"task j2 start: uid=\d+ run_uid=\d+ pid=\d+ profile=default tier=\w+ exe=\S+$", text, re.M), text
    assert re.search(r"task j2 exit: .* status=0", text), text
    assert j.drain() == []


def test_journal_gone_falls_back_to_stderr(manager, journal_ns, tmp_path):
    """JOURNAL_STREAM matches, but no journald answers: lines must not be lost."""
    m = manager
    j = journal_ns(with_socket=False)
    log = str(tmp_path / "stderr")
    assert run_one_task(m, j, log, log, "j3", "true") == (0, 0)
    text = open(log).read()
    assert "listening on" in text and re.search(r"task j3 exit: .* status=0", text), text


def is_path_executed(exe, name):
    """exe is the path of name that ran: its real path. A chrooted zygoted (the rehearsal on a
    debootstrapped root) is shown the path of a task in a mount namespace of its own from that
    namespace's root: the real path behind a prefix that is outside our root."""
    want = os.path.realpath(shutil.which(name))
    return exe == want or (exe.endswith(want) and exe != want and not os.path.exists(exe))


def test_journal_exe_is_the_path_executed(manager, journal_ns, tmp_path):
    """A program given by name is logged as the path that ran, after the PATH search."""
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    assert run_one_task(m, j, log, log, "j4", "sleep", "0.5") == (0, 0)
    start = [e for e in j.drain() if e.get("ZYGOTE_TASK") == "j4" and e.get("ZYGOTE_EVENT") == "start"]
    assert len(start) == 1 and is_path_executed(start[0]["ZYGOTE_EXE"], "sleep"), start


def varlink_calls(path, calls, after=None):
    """Sends calls (method, parameters) on one connection and returns the replies; after(), if
    given, runs after each reply (a journal drained as lines come: its queue is short)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    s.settimeout(TIMEOUT)
    s.connect(path)
    replies, buf = [], b""
    try:
        for method, params in calls:
            s.sendall(json.dumps({"method": method, "parameters": params}).encode() + b"\0")
            while b"\0" not in buf:
                chunk = s.recv(65536)
                assert chunk, replies
                buf += chunk
            msg, buf = buf.split(b"\0", 1)
            replies.append(json.loads(msg))
            if after:
                after()
    finally:
        s.close()
    return replies


def test_journal_refused_calls(manager, journal_ns, tmp_path):
    """A refused call leaves one line with its method, error, reason and caller; a flood of them
    is cut to a budget per uid and a count of what was left out."""
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    m.start(wrap=j.wrap(), stderr=log, env={"JOURNAL_STREAM": stderr_file(log)})
    m.wait_ready()
    r = varlink_calls(m.socket, [("io.zygote.Launcher.State", {"id": "nosuch"}),
                                 ("io.zygote.Launcher.Kill", {"id": "x", "signal": 0})], j.drain)
    assert [x.get("error") for x in r] == ["io.zygote.Launcher.NoSuchTask", "org.varlink.service.InvalidParameter"]
    time.sleep(1.1)
    flood = varlink_calls(m.socket, [("io.zygote.Launcher.State", {"id": f"n{i}"}) for i in range(50)], j.drain)
    assert all(x.get("error") == "io.zygote.Launcher.NoSuchTask" for x in flood)
    time.sleep(1.1)
    varlink_calls(m.socket, [("io.zygote.Launcher.State", {"id": "last"})], j.drain)
    assert os.waitstatus_to_exitcode(m.stop()) == 0
    entries = j.drain()
    refused = [e for e in entries if e.get("ZYGOTE_EVENT") == "refused"]
    first, second = refused[0], refused[1]
    assert first["ZYGOTE_METHOD"] == "io.zygote.Launcher.State"
    assert first["ZYGOTE_ERROR"] == "io.zygote.Launcher.NoSuchTask" and first["ZYGOTE_REASON"] == "nosuch"
    assert second["ZYGOTE_METHOD"] == "io.zygote.Launcher.Kill"
    assert second["ZYGOTE_ERROR"] == "org.varlink.service.InvalidParameter" and second["ZYGOTE_REASON"] == "signal"
    for e in refused:
        assert e["ZYGOTE_UID"] == str(os.geteuid()) and int(e["ZYGOTE_CALLER_PID"]) == os.getpid()
        assert e["PRIORITY"] == "5" and e["SYSLOG_IDENTIFIER"] == "zygoted" and "refused" in e["MESSAGE"]
    # The flood: a budget of lines, then one line with the count of the rest.
    flooded = [e for e in refused if e["ZYGOTE_REASON"].startswith("n") and e["ZYGOTE_REASON"] != "nosuch"]
    assert 10 <= len(flooded) < 50, len(flooded)
    assert refused[-1]["ZYGOTE_REASON"] == "last"
    sup = [e for e in entries if e.get("ZYGOTE_EVENT") == "refused-suppressed"]
    # One count per second the flood lasted (one, unless the machine is slow): together, the rest.
    assert sup and sum(int(e["ZYGOTE_SUPPRESSED"]) for e in sup) == 50 - len(flooded), sup
    assert all(e["ZYGOTE_UID"] == str(os.geteuid()) for e in sup)


def test_journal_names_the_missing_profile(manager, journal_ns, tmp_path):
    """A call for a profile zygoted has not got leaves the profile's name in the refusal's line
    and ZYGOTE_REASON: the journal says which one a service asked for."""
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    m.start(wrap=j.wrap(), stderr=log, env={"JOURNAL_STREAM": stderr_file(log)})
    m.wait_ready()
    r = varlink_calls(m.socket, [("io.zygote.Launcher.Spawn", {"profile": "no-such-prof", "argv": ["/bin/true"]})],
                      j.drain)
    assert r[0].get("error") == "io.zygote.Launcher.NoSuchProfile", r
    assert os.waitstatus_to_exitcode(m.stop()) == 0
    refused = [e for e in j.drain() if e.get("ZYGOTE_EVENT") == "refused"]
    assert len(refused) == 1, refused
    assert refused[0]["ZYGOTE_REASON"] == "no-such-prof"
    assert "NoSuchProfile no-such-prof" in refused[0]["MESSAGE"]


def test_journal_lines_name_the_binary_and_no_build_path(manager, journal_ns, tmp_path):
    """No CODE_FILE=, CODE_LINE=, CODE_FUNC=: libsystemd's would name the one line that sends
    every entry, by the build tree's path (the package's build directory on every user's host).
    ZYGOTE_BINARY= names the file zygoted runs from: the journal's _EXE= is its sealed copy,
    /memfd:zygoted, on every host."""
    m = manager
    j = journal_ns()
    log = str(tmp_path / "stderr")
    m.start(wrap=j.wrap(), stderr=log, env={"JOURNAL_STREAM": stderr_file(log)})
    m.wait_ready()
    varlink_calls(m.socket, [("io.zygote.Launcher.State", {"id": "nosuch"})], j.drain)
    assert os.waitstatus_to_exitcode(m.stop()) == 0
    entries = j.drain()
    assert any(e.get("ZYGOTE_EVENT") == "refused" for e in entries), entries
    assert [e for e in entries if {"CODE_FILE", "CODE_LINE", "CODE_FUNC"} & set(e)] == []
    binary = os.path.realpath(m.bins["zygoted"])
    assert {e.get("ZYGOTE_BINARY") for e in entries} == {binary}, [e.get("ZYGOTE_BINARY") for e in entries]


# ---- zygoted under a seccomp filter of its own ---------------------------------------------------

def test_own_seccomp_filter(manager):
    """As in a default systemd-nspawn container or under Docker: zygoted says so at start-up and
    in GetStatus and launchctl status, and still serves."""
    m = manager
    wrap = ["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "seccomp_wrap.py")]
    pid = m.start(wrap=wrap)
    m.wait_ready()
    with open(f"/proc/{pid}/status") as f:
        assert "Seccomp:\t2" in f.read()
    m.wait_log("seccomp filter of its own")
    assert "SYSTEMD_SECCOMP=0" in m.log
    st = json.loads(m.launchctl("status", "--json").stdout)
    assert st["own_filter"] is True
    out = m.launchctl("status").stdout
    assert "runs under a seccomp filter of its own" in out, out
    r = m.launchctl("run", "--", "sh", "-c", "echo served", check=False)
    assert r.returncode == 0 and r.stdout == "served\n", (r.returncode, r.stdout, r.stderr, m.log)
    assert os.waitstatus_to_exitcode(m.stop()) == 0, m.log


def test_no_own_seccomp_filter(manager):
    m = manager
    m.start()
    m.wait_ready()
    assert json.loads(m.launchctl("status", "--json").stdout)["own_filter"] is False
    assert "seccomp filter of its own" not in m.launchctl("status").stdout
    assert os.waitstatus_to_exitcode(m.stop()) == 0, m.log


def test_detach_without_private_socket_stays_with_caller(manager):
    """`launchctl run --detach` asks for a scope unit of its own (outlive); where the manager has
    no private socket (here: the fake manager; also ZYGOTE_DISABLE_FEATURES=scopes) there is none
    to ask: the daemon says why once, the task runs in its caller's cgroup, and a held one is not
    refused (outlive is not asked with --hold). The scope itself is checked under a real systemd
    (tests/system)."""
    if os.path.exists("/run/systemd/private"):
        pytest.skip("this host's systemd has a private socket: the fallback is forced in tests/system instead")
    m = manager
    m.start()
    m.wait_ready()
    r = m.launchctl("run", "--detach", "--", "sleep", "30")
    tid = r.stdout.strip()
    try:
        st = json.loads(m.launchctl("state", "--json", tid).stdout)
        st = st.get("task", st)
        assert st["state"] == "running", st
        pid = st["pid"]
        with open(f"/proc/{pid}/cgroup") as f, open("/proc/self/cgroup") as g:
            assert f.read() == g.read(), "the task is not in its caller's cgroups"
        m.wait_log("no scope units: the service manager's private socket is not there")
        r = m.launchctl("run", "--detach", "--hold", "--", "true", check=False)
        assert r.returncode == 0, (r.stdout, r.stderr)
        m.launchctl("delete", r.stdout.strip())
    finally:
        m.launchctl("kill", tid, "KILL", check=False)
        m.launchctl("delete", tid, check=False)
    assert os.waitstatus_to_exitcode(m.stop()) == 0, m.log
