# SPDX-License-Identifier: MIT
"""Files that never answer, against the real zygoted: a FUSE file whose ioctl or close never ends
passed to Spawn, the caller's fds closed off the loop, and what a fork copies or drops while such
closes wait. See test_hostile.py.

Each attack gets its documented error or disconnect (docs/SECURITY.md), the daemon keeps every fd
it was handed only as long as the call needs it (its open fd count goes back to where it was),
and a well-behaved client is served correctly throughout: `served()` (hostile.py) runs a real task
on a fresh connection and prints its latency (GetStatus round trip and spawn-to-exit of /bin/echo).
"""
import json
import os
import re
import signal
import socket
import time

import pytest

import varlink
import zytest
from zytest import NOBODY, NOGROUP, OTHER_UID, OTHER_GID, wait_for
from hostile import (L, INVALID, LIMIT, NO_POOL, POOL_ARGS, settled_fds, fds_back_to, spawn_with_pipe_to_eof, served,
                     raw_socket, sendmsg_fds, StallingFuse, stalling_fuse, held_fuse_file)


def spawn_with_stalling_fuse(daemon, daemons, hold, params):
    """Spawn (params) with a file of a StallingFuse that holds `hold` as fd 0, and GetStatus from
    another client meanwhile. Returns (the server held a request, GetStatus was answered within
    5 s, the Spawn's reply)."""
    with held_fuse_file(daemons, hold) as (fs, f):
        with daemon.connect() as attacker, daemon.connect(timeout=5) as other:
            attacker.send(L + "Spawn", {**params, "fds": [{"fd": 0, "target": 0}]}, fds=[f])
            held = fs.held.wait(10)
            try:
                ok = bool(other.call(L + "GetStatus").parameters["version"])
            except (socket.timeout, TimeoutError):
                ok = False
            fs.release.set()
            r = attacker.recv()
            r.close_fds()
            return held, ok, r


def closers_under(pid):
    """The zygote-closer children of process pid: zygoted's or a reference's (common/fd-closer.h)."""
    out = []
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        for c in f.read().split():
            try:
                with open(f"/proc/{c}/comm") as g:
                    if g.read().strip() == "zygote-closer":
                        out.append(int(c))
            except OSError:
                pass
    return out


def closers_of(d):
    """The daemon's zygote-closer children."""
    return closers_under(d.proc.pid)


@pytest.mark.parametrize("closer", ["helper", "disabled"])
def test_caller_fds_are_closed(daemons, needs_root, closer):
    """The fds a caller passes are closed, every copy, by the daemon's fd closer (one helper
    sharing its fd table: the same fds) or, forced with ZYGOTE_DISABLE_FEATURES=fd_closer (the
    fallback when no helper can start), on the daemon's loop, which says so in its log."""
    d = daemons(env={"ZYGOTE_DISABLE_FEATURES": "fd_closer"} if closer == "disabled" else None)
    if closer == "helper":  # named once it runs
        wait_for(lambda: closers_of(d), "the zygote-closer helper")
    helpers = closers_of(d)
    if closer == "disabled":
        assert helpers == [] and "no fd closer (disabled)" in d.log(), d.log()[-400:]
    else:
        assert len(helpers) == 1 and "no fd closer" not in d.log(), helpers
        assert sorted(os.listdir(f"/proc/{helpers[0]}/fd")) == sorted(os.listdir(f"/proc/{d.proc.pid}/fd"))
    before = settled_fds(d)
    with d.connect() as c:
        for _ in range(5):
            spawn_with_pipe_to_eof(c)
    fds_back_to(d, before, "the callers' fds closed")


def test_terminal_check_cannot_stall_the_daemon(daemon, daemons):
    """Spawn with terminal and a FUSE file as fd 0 (its server never answers ioctls): the daemon
    must go on serving everyone else meanwhile. It makes no ioctl on the fd; the worker's
    TIOCSCTTY waits for the server and then fails."""
    held, ok, r = spawn_with_stalling_fuse(daemon, daemons, [StallingFuse.IOCTL], {"argv": ["true"], "terminal": True})
    assert r.error == L + "SpawnFailed" and r.parameters["step"] == "ctty", dict(r)
    assert ok, f"the daemon stopped serving (the FUSE server held an ioctl: {held})"


@pytest.mark.parametrize("tier", ["load", "inherit"])
def test_failed_worker_still_exiting_is_freed_at_stop(daemons, needs_root, tier):
    """A Spawn whose worker fails (step ctty: fd 0 is a FUSE file, not a terminal) and then cannot
    finish exiting (its close of that file waits on a FLUSH the server holds): its task is out of
    the table, its process not yet reaped, when the daemon stops. The daemon must still account
    for it (the stop's log line counts it among those exiting) and free it: in the asan lane a
    leak of it (and of its argv) is a LeakSanitizer report at exit, which fails the test."""
    d = daemons(tier=tier)
    # FLUSHes are held once the worker's TIOCSCTTY was answered (ENOTTY): the closes before it
    # (the worker's fd map) pass, the one of its exit waits
    with held_fuse_file(daemons, [StallingFuse.FLUSH], armed_by=StallingFuse.IOCTL) as (fs, f):
        with d.connect() as c:
            c.send(L + "Spawn", {"argv": ["true", "x" * 100], "terminal": True, "id": "held-exit",
                                 "fds": [{"fd": 0, "target": 0}]}, fds=[f])
            r = c.recv()
            r.close_fds()
            assert r.error == L + "SpawnFailed" and r.parameters["step"] == "ctty", dict(r)
            # the worker's own close is held: it has not exited (and cannot be reaped) yet
            assert fs.held.wait(10), "the FUSE server saw no FLUSH"
            assert c.call_error(L + "State", {"id": "held-exit"}).error == L + "NoSuchTask"
        assert d.stop() == 0
        stop_line = [ln for ln in d.log().splitlines() if "stopping;" in ln]
        assert stop_line and re.search(r"[1-9]\d* out of the table are exiting", stop_line[-1]), stop_line


@pytest.mark.parametrize("variant", ["load", "inherit", "inherit-nopool"])
def test_fuse_flush_cannot_stall_the_daemon(daemons, needs_root, variant, capsys):
    """A FUSE file passed with a Spawn whose server holds every FLUSH (every close() of it waits):
    the daemon's copy, and in the inherit tier without the pool the reference's, are closed by
    helpers sharing their fd tables (common/fd-closer.h). Meanwhile another caller's GetStatus and
    Spawns of the same profile (the same reference) are served, and their fds are closed: a helper
    that does not answer is replaced. Once the server answers, the daemon's fd table is back where
    it was."""
    tier = variant.split("-")[0]
    d = daemons(tier=tier, env=NO_POOL if variant == "inherit-nopool" else None,
                args=POOL_ARGS if variant == "inherit" else ())
    before = settled_fds(d)
    with held_fuse_file(daemons, [StallingFuse.FLUSH]) as (fs, f):
        with d.connect() as attacker, d.connect(timeout=10) as other:
            # Its own worker waits for its close of the file too (before exec): so does its reply.
            attacker.send(L + "Spawn", {"argv": ["true"], "id": "fuse", "fds": [{"fd": 0, "target": 0}]}, fds=[f])
            assert fs.held.wait(10), "the FUSE server saw no FLUSH"
            # Every copy's close is under way: the attacker's worker's, the daemon's and (inherit
            # without the pool) the reference's; a pool worker's spawn never reaches the reference.
            # (A fork before a copy has left a table is the next tests' matter:
            # test_fork_never_copies_an_fd_queued_for_closing.)
            copies = 3 if variant == "inherit-nopool" else 2
            wait_for(lambda: fs.n_held >= copies, f"{copies} FLUSHes held")
            worst = 0.0
            for _ in range(10):
                t0 = time.monotonic()
                assert other.call(L + "GetStatus").parameters["version"]
                worst = max(worst, time.monotonic() - t0)
            # Another caller's spawns through the same profile, with a pipe: its write end must
            # be closed by the daemon (and the reference) although a helper is stuck.
            t0 = time.monotonic()
            for _ in range(3):
                spawn_with_pipe_to_eof(other)
            spawns = time.monotonic() - t0
            with capsys.disabled():
                print(f"\n  [FUSE FLUSH held, {variant}] {fs.n_held} FLUSHes held; another caller's slowest GetStatus {1000 * worst:.1f} ms; "
                      f"3 spawns with a pipe to EOF {1000 * spawns:.0f} ms", end="")
            assert worst < 1.0, f"GetStatus took {worst:.2f} s while a FLUSH was held"
            fs.release.set()
            r = attacker.recv()
            r.close_fds()
            assert not r.error and r.parameters["tier"] == tier, dict(r)
            attacker.call(L + "Wait", {"id": "fuse"})
            attacker.call(L + "Delete", {"id": "fuse"})
    fds_back_to(d, before, "fds once the FUSE server answered")


def signal_all(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("tier", ["load", "inherit"])
def test_fork_never_copies_an_fd_queued_for_closing(daemons, needs_root, tier, capsys):
    """A caller's FUSE file (its server holds every FLUSH) handed to a closer helper that has not
    yet taken it out of the shared fd table: here every helper is stopped, as one the scheduler
    has not run yet would leave it. The next fork (zygoted's in the load tier, the reference's in
    the inherit tier) would copy the fd, and its worker's close of the copy would wait on the
    FLUSH: another caller's Spawn would hang. The fork first takes the fd back from the stopped
    helper and has a new one close it (docs/SECURITY.md: "Caller fds and forks"). In the inherit
    tier without the pool: a pool worker's spawn never reaches the reference."""
    d = daemons(tier=tier, env=NO_POOL if tier == "inherit" else None)
    owner = zytest.inherit_reference(d) if tier == "inherit" else d.proc.pid
    wait_for(lambda: closers_under(owner), "the zygote-closer helper")
    helpers = closers_under(owner)
    with held_fuse_file(daemons, [StallingFuse.FLUSH]) as (fs, f):
        try:
            with d.connect() as attacker, d.connect(timeout=20) as other:
                signal_all(helpers, signal.SIGSTOP)
                attacker.send(L + "Spawn", {"argv": ["true"], "id": "fuse", "fds": [{"fd": 0, "target": 0}]}, fds=[f])
                assert fs.held.wait(10), "the attacker's worker made no FLUSH"
                # past the attacker's Spawn: zygoted (and the reference, which answered) handed the
                # file to a stopped helper, so it is still in their fd table
                wait_for(lambda: d.profiles()["default"].get("parkedSpawns", 0) == 0, "the reference answered")
                assert other.call(L + "GetStatus").parameters["version"]
                t0 = time.monotonic()
                try:
                    spawn_with_pipe_to_eof(other)
                except (socket.timeout, TimeoutError):
                    pytest.fail("another caller's Spawn hung: its worker copied the attacker's FUSE file")
                took = time.monotonic() - t0
                with capsys.disabled():
                    print(f"\n  [fd queued for a stopped closer, {tier}] another caller's spawn with a pipe to EOF "
                          f"{1000 * took:.0f} ms", end="")
                fs.release.set()
                r = attacker.recv()
                r.close_fds()
                assert not r.error, dict(r)
                attacker.call(L + "Wait", {"id": "fuse"})
                attacker.call(L + "Delete", {"id": "fuse"})
        finally:
            signal_all(helpers, signal.SIGCONT)


def test_fork_drops_a_connection_holding_fds_of_an_unfinished_message(daemons, needs_root, capsys):
    """fds sent with the first bytes of a message that never ends sit in zygoted's fd table: the
    next fork (a load-tier worker for another caller) would copy them, and a FUSE file among them
    whose server holds FLUSH would hold up that worker's close. Before it forks, zygoted drops
    the connection, telling it why (InvalidParameter "fds"); the other caller is served."""
    d = daemons(tier="load")
    s = None
    with held_fuse_file(daemons, [StallingFuse.FLUSH]) as (fs, f):
        try:
            s = raw_socket(d)
            sendmsg_fds(s, b'{"method":"io.zygote.Launcher.Spawn","parameters":{"argv":["tr', [f])
            with d.connect(timeout=20) as other:
                assert other.call(L + "GetStatus").parameters["version"]  # the partial message is read
                try:
                    spawn_with_pipe_to_eof(other)
                except (socket.timeout, TimeoutError):
                    pytest.fail("another caller's Spawn hung: its worker copied the unfinished message's FUSE file")
            s.settimeout(10)
            got = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            reply = json.loads(got.split(b"\0")[0])
            assert reply["error"] == INVALID and reply["parameters"]["parameter"] == "fds", reply
            assert "the fds of a message not yet complete" in d.log(), d.log()[-400:]
        finally:
            if s is not None:
                s.close()


class NetnsCaller:
    """`launchctl run -- true` from a network namespace of its own (served by the load tier: a
    fork of zygoted), started now and waiting until run() lets it ask."""

    def __init__(self, d):
        import subprocess
        go_r, self.go_w = os.pipe2(os.O_CLOEXEC)
        self.proc = subprocess.Popen(["unshare", "-n", "sh", "-c",
                                      f"read x && exec {d.bins['launchctl']} --socket {d.socket} run -- true"],
                                     stdin=go_r, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(zytest.WORK_ENV))
        os.close(go_r)

    def run(self, hung, timeout=30):
        """Lets it ask: it must exit 0 within timeout (pytest.fail(hung) otherwise); a skip when
        no network namespace can be made here."""
        import subprocess
        os.write(self.go_w, b"go\n")
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the caller in a network namespace hung: {hung}")
        err = self.proc.stderr.read().decode()
        if rc != 0 and "unshare failed" in err:
            pytest.skip(f"cannot make a network namespace here: {err.strip()}")
        assert rc == 0, err

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.close(self.go_w)


def test_fork_releases_the_fds_of_parked_spawns(daemons, needs_root, capsys):
    """An inherit-tier Spawn parked for a stopped reference keeps its caller's fds (to run it in
    the load tier should the reference be lost): a FUSE file among them would be copied by the
    next fork of zygoted, a load-tier worker for a caller in a network namespace of its own. They
    go to the closer before that fork; the other caller is served, and the parked Spawn, once
    the reference goes on, runs as asked (the reference had its own copies). Without the pool, whose
    idle worker would take the Spawn without the reference."""
    d = daemons(tier="inherit", env=NO_POOL)
    ref = zytest.inherit_reference(d)
    other = NetnsCaller(d)  # before the FUSE file exists: no subprocess may start while it is open
    with held_fuse_file(daemons, [StallingFuse.FLUSH]) as (fs, f):
        try:
            with d.connect() as attacker:
                os.kill(ref, signal.SIGSTOP)
                try:
                    attacker.send(L + "Spawn", {"argv": ["true"], "id": "parked", "fds": [{"fd": 0, "target": 0}]},
                                  fds=[f])
                    wait_for(lambda: d.profiles()["default"]["parkedSpawns"] == 1, "the Spawn parked", timeout=10)
                    other.run("its load-tier worker copied a parked spawn's FUSE file")
                finally:
                    signal_all([ref], signal.SIGCONT)
                fs.release.set()
                r = attacker.recv()
                r.close_fds()
                assert not r.error and r.parameters["tier"] == "inherit", dict(r)
                attacker.call(L + "Wait", {"id": "parked"})
                attacker.call(L + "Delete", {"id": "parked"})
        finally:
            other.close()


def test_parked_spawn_whose_fds_went_fails_when_its_reference_is_lost(daemons, needs_root, tmp_path):
    """The other side of releasing a parked spawn's fds before a fork: should its reference then
    be lost, the spawn cannot run in the load tier (its fds are gone), so it fails, SpawnFailed
    step "reference", and nothing ran (a retry is safe). Without the pool, as above."""
    d = daemons(tier="inherit", env=NO_POOL)
    ref = zytest.inherit_reference(d)
    out = tmp_path / "ran"
    other = NetnsCaller(d)
    pr, pw = os.pipe2(os.O_CLOEXEC)
    try:
        with d.connect() as c:
            os.kill(ref, signal.SIGSTOP)
            try:
                c.send(L + "Spawn", {"argv": ["/bin/sh", "-c", f"echo ran >> {out}"],
                                     "fds": [{"fd": 0, "target": 1}]}, fds=[pw], more=True)
                wait_for(lambda: d.profiles()["default"]["parkedSpawns"] == 1, "the Spawn parked", timeout=10)
                other.run("its load-tier worker hung")  # a fork of zygoted: the parked fds go first
                os.kill(ref, signal.SIGKILL)
            finally:
                signal_all([ref], signal.SIGCONT)
            r = c.recv()
            r.close_fds()
            assert r.error == L + "SpawnFailed" and r.parameters.get("step") == "reference", dict(r)
        assert "its fds are released, so it fails (nothing ran)" in d.log(), d.log()[-600:]
        assert not out.exists(), "the spawn reported failed ran"
    finally:
        other.close()
        os.close(pr)
        os.close(pw)


def test_fds_held_in_close_are_bounded_per_uid(daemons, needs_root, capsys):
    """A uid whose FUSE server holds every FLUSH makes each of its fds that zygoted closes hold a
    closer helper (a process) inside close(). Unbounded, its fds would take every helper, and
    another caller's fds would then wait in the fd table for one, where the next fork copies
    them. Once a non-root uid's fds hold 8 helpers, its further fds are refused unread
    (LimitExceeded fdsHeldInClose: the kernel drops them, no close, no FLUSH); another uid's fds
    are still taken and closed."""
    d = daemons(tier="load")
    conns = varlink.connect_many_as(d.socket, NOBODY, NOGROUP, 40, timeout=20)
    other = d.connect_as(OTHER_UID, OTHER_GID, timeout=20)
    fs, mnt = stalling_fuse(daemons, [StallingFuse.FLUSH])
    files = []
    try:
        files = [os.open(os.path.join(mnt, "file"), os.O_RDWR | os.O_CLOEXEC) for _ in range(10)]
        conns[0].send(L + "Spawn", {"argv": ["true"], "fds": [{"fd": i, "target": 3 + i} for i in range(10)]},
                      fds=files)
        # its worker waits in its first close; zygoted's ten copies come to hold a helper each
        wait_for(lambda: fs.n_held >= 11, "the worker's and zygoted's ten FLUSHes held", timeout=30)
        attempts = iter(conns[1:])

        def refused():
            c = next(attempts, None)
            if c is None:
                pytest.fail("39 Spawns of the uid passed their fds: none was refused")
            pr, pw = os.pipe2(os.O_CLOEXEC)
            try:
                c.send(L + "Spawn", {"argv": ["true"], "fds": [{"fd": 0, "target": 1}]}, fds=[pw])
                r = c.recv()
                r.close_fds()
            finally:
                os.close(pr)
                os.close(pw)
            if r.error == LIMIT:
                assert r.parameters == {"limit": "fdsHeldInClose", "max": 8}, dict(r)
                return True
            assert not r.error, dict(r)
            return False
        wait_for(refused, "the uid's fds refused", timeout=20)
        assert "refusing the fds of uid" in d.log(), d.log()[-400:]
        # another uid's fds are taken, and every copy of its pipe closed
        spawn_with_pipe_to_eof(other)
        with capsys.disabled():
            print(f"\n  [FLUSH held by one uid] {len(closers_of(d))} closer helpers; the uid's next fds refused, "
                  f"another uid served", end="")
    finally:
        fs.release.set()
        for f in files:
            os.close(f)
        fs.close()
        other.close()
        for c in conns:
            c.close()


def test_sigterm_frees_deleted_tasks_still_exiting(daemons, needs_root):
    """A held task deleted (killed) whose worker has not yet exited when zygoted stops: it is out
    of the task table and was freed only on its pidfd's event, which a stop never sees, so it
    leaked (memory, its pidfd and status pipe; LeakSanitizer in a ZYGOTE_SANITIZE build). The
    worker is kept from exiting by a FUSE file whose FLUSH (in its exit's close) is held."""
    d = daemons()
    with held_fuse_file(daemons, []) as (fs, f):
        with d.connect() as c:
            r = c.call(L + "Spawn", {"argv": ["true"], "hold": True, "id": "dying",
                                     "fds": [{"fd": 0, "target": 0}]}, fds=[f])
            r.close_fds()
            fs.hold.add(StallingFuse.FLUSH)  # from now on: the worker's exit waits in its close
            c.call(L + "Delete", {"id": "dying"})
            assert fs.held.wait(10), "the killed worker made no FLUSH"
            assert c.call(L + "GetStatus").parameters["tasks"] == 0
        assert d.stop() == 0
        assert "0 tasks keep running, 1 out of the table are exiting" in d.log(), d.log()[-500:]


def shares_memory(a, b):
    """Whether processes a and b share one address space (kcmp(2) KCMP_VM)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    r = libc.syscall(312, a, b, 1, 0, 0)  # SYS_kcmp on x86_64, KCMP_VM
    if r < 0:
        raise OSError(ctypes.get_errno(), "kcmp")
    return r == 0


def test_blocked_workers_share_memory_and_others_are_served(daemons, needs_root, capsys):
    """Several callers at once whose workers block before their exec (each passes a FUSE file
    whose server holds every FLUSH: the worker's close of it, at the fd step, waits). By default
    every such worker shares its reference's memory (reference/worker-nocopy.h, kcmp KCMP_VM), and
    the reference is not suspended by them: it made every one of them, and another caller's spawns
    through the same profile are served meanwhile. With every worker forked
    (ZYTEST_DISABLE_FEATURES=nocopy_worker, the entry integration-hostile-stalls-forked) none
    shares it, and the rest holds the same."""
    if os.uname().machine != "x86_64":
        pytest.skip("workers share the reference's memory on x86_64 only")
    forked = "nocopy_worker" in os.environ.get("ZYTEST_DISABLE_FEATURES", "")
    n = 4
    d = daemons(tier="inherit", env=NO_POOL)
    ref = zytest.inherit_reference(d)
    with open(f"/proc/{ref}/maps") as m:
        if not forked and "libasan" in m.read():
            pytest.skip("an ASan build's reference holds TLS the no-copy worker does not take "
                        "(reference/worker-nocopy.c): its workers are forked")
    with held_fuse_file(daemons, [StallingFuse.FLUSH]) as (fs, f):
        attackers = [d.connect() for _ in range(n)]
        try:
            with d.connect(timeout=10) as other:
                for i, a in enumerate(attackers):
                    a.send(L + "Spawn", {"argv": ["true"], "id": f"fuse{i}", "fds": [{"fd": 0, "target": 0}]}, fds=[f])
                # each spawn's three copies: the worker's, the daemon's, the reference's
                wait_for(lambda: fs.n_held >= 3 * n, f"{3 * n} FLUSHes held")
                with open(f"/proc/{d.proc.pid}/task/{d.proc.pid}/children") as c:
                    children = [int(p) for p in c.read().split() if int(p) != ref]
                sharing = [p for p in children if shares_memory(p, ref)]
                t0 = time.monotonic()
                for _ in range(3):
                    spawn_with_pipe_to_eof(other)
                spawns = time.monotonic() - t0
                with capsys.disabled():
                    print(f"\n  [{n} workers blocked before exec, {'forked' if forked else 'default'}] "
                          f"{len(sharing)} share the reference's memory; another caller's 3 spawns {1000 * spawns:.0f} ms",
                          end="")
                assert len(sharing) == (0 if forked else n), (children, sharing)
                assert spawns < 5.0
                fs.release.set()
                for i, a in enumerate(attackers):
                    r = a.recv()
                    r.close_fds()
                    assert not r.error and r.parameters["tier"] == "inherit", dict(r)
                    a.call(L + "Wait", {"id": f"fuse{i}"})
                    a.call(L + "Delete", {"id": f"fuse{i}"})
        finally:
            for a in attackers:
                a.close()
