# SPDX-License-Identifier: MIT
"""Faults: SIGKILL where it hurts, and callers that vanish at the wrong moment.

- a reference process killed while spawns are in flight: no spawn lost or hung, the profile
  moves to the `load` tier and back;
- workers killed between fork and exec (held, deterministically; and by a killer racing every
  spawn): every Spawn ends with an answer, no zombie is left;
- a caller that disconnects mid-Spawn: its task is not killed (documented in docs/SECURITY.md);
  it stays in its owner's List until Delete, and nothing of it leaks;
- zygoted SIGKILLed with tasks running: the tasks run on, the references go away by themselves,
  a new zygoted serves on the same socket;
- a profile file replaced with garbage, then SIGHUP: the old profile stays in service and the
  error is logged;
- the inherit tier's parked spawns: a reference that stops answering blocks nobody
  else and is killed after 5 s; a reference lost with spawns parked runs each once in the load
  tier; at most 64 are parked per profile; a caller that leaves while its spawn is parked has
  its worker killed at the gate.
"""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import varlink
import zytest
from hostile import NO_POOL, POOL_ARGS, fds_back_to, pool_pids, served, settled_fds
from zytest import NOBODY, NOGROUP, inherit_reference, wait_for

L = "io.zygote.Launcher."


CLOSER_COMM = "zygote-closer"
SINK_COMM = "zygote-sink"  # daemon/server-closer.c: closes connection sockets with unread fds


@pytest.fixture
def no_pool_daemon(daemons, needs_root):
    """A root zygoted without the pool: its inherit-tier Spawns go to the reference."""
    return daemons(env=NO_POOL)


def children(pid):
    """The daemon's children but its fd closers (common/fd-closer.h: helpers that share its fd
    table and close callers' fds) and its sink: {pid: (state, comm)}."""
    out = {}
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        for c in f.read().split():
            try:
                with open(f"/proc/{c}/stat") as s:
                    stat = s.read()
            except OSError:  # gone meanwhile (ENOENT, or ESRCH while reading)
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            if comm in (CLOSER_COMM, SINK_COMM):
                continue
            out[int(c)] = (stat[stat.rindex(")") + 2], comm)
    return out


def reference_pids(d):
    return {p["referencePid"] for p in d.profiles().values() if p.get("referencePid")}


def init_pids(d):
    """The inits of the profiles' pid namespaces: children of the daemon that stay (and outlive
    it), not workers."""
    return {p["initPid"] for p in d.profiles().values() if p.get("initPid")}


def helper_pids(d):
    return reference_pids(d) | init_pids(d)


def untracked_after(d, timeout):
    """Waits up to timeout s for every child of the daemon other than its references and inits
    to be reaped (a condition: the daemon reaps on its pidfd events); returns those still there,
    {pid: (state, name)}: a zombie among them is one the daemon did not reap."""
    refs = helper_pids(d)
    left = {}

    def clean():
        # the pool refills meanwhile: its idle workers as they are now, read after the children
        kids = children(d.proc.pid)
        idle = pool_pids(d)
        left.clear()
        left.update({p: s for p, s in kids.items() if p not in refs and p not in idle})
        return not left
    try:
        wait_for(clean, "the daemon's children to be only its references", timeout=timeout)
    except AssertionError:
        pass  # the caller says what it expected
    return left


def no_zombies(d):
    """Every child of the daemon other than its references and inits has been reaped."""
    left = untracked_after(d, 30)
    assert not left, (f"after 30 s the daemon still has children besides its references "
                      f"{sorted(helper_pids(d))}: {left}; its log ends: {d.log()[-1500:]}")


def spawn_true(conn, argv=("/bin/true",), profile=None):
    """Spawn with "more" of a command without stdio; returns (first reply params, final task)."""
    params = {"argv": list(argv)}
    if profile:
        params["profile"] = profile
    first = conn.call_more(L + "Spawn", params)
    if first.error:
        return dict(first), None
    first.close_fds()
    final = conn.recv()
    assert not final.error and not final.continues, dict(final)
    return first.parameters, final.parameters["task"]


# ---- a reference killed while spawns are in flight ------------------------------------------------

def test_sigkill_reference_during_spawns(daemon, capsys):
    profiles = daemon.profiles()
    if profiles["default"]["tier"] != "inherit" or not profiles["default"].get("referencePid"):
        pytest.skip(f"the default profile is in the {profiles['default']['tier']} tier here, not inherit")
    old_ref = profiles["default"]["referencePid"]
    n_clients, per_client = 4, 50
    results = [[] for _ in range(n_clients)]
    errors = []
    started = threading.Event()
    done_count = [0]
    lock = threading.Lock()

    def client(i):
        try:
            with daemon.connect(timeout=60) as c:
                for _ in range(per_client):
                    first, final = spawn_true(c)
                    results[i].append((first.get("tier"), final))
                    with lock:
                        done_count[0] += 1
                        if done_count[0] >= n_clients * per_client // 5:
                            started.set()
        except Exception as e:  # reported below, with the thread's name
            errors.append(f"client {i}: {e!r}")
            started.set()

    tiers_seen = set()
    stop_poll = threading.Event()

    def poller():
        with daemon.connect() as c:
            while not stop_poll.is_set():
                for p in c.call(L + "GetStatus").parameters["profiles"]:
                    if p["name"] == "default":
                        tiers_seen.add(p["tier"])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    assert started.wait(120), "no spawn went through"
    poll = threading.Thread(target=poller)
    poll.start()
    os.kill(old_ref, signal.SIGKILL)
    for t in threads:
        t.join(300)
        assert not t.is_alive(), "a client hung: a spawn was lost"
    # Back: a new reference, the inherit tier again.
    wait_for(lambda: daemon.profiles()["default"]["tier"] == "inherit" and
             daemon.profiles()["default"].get("referencePid") not in (None, old_ref),
             "the default profile back in the inherit tier with a new reference")
    stop_poll.set()
    poll.join(60)
    assert not errors, errors
    finals = [f for r in results for _, f in r]
    assert len(finals) == n_clients * per_client
    assert all(f is not None and f.get("exitCode") == 0 for f in finals), [f for f in finals if not f or f.get("exitCode") != 0]
    spawn_tiers = {t for r in results for t, _ in r}
    with capsys.disabled():
        print(f"\n  [reference killed] {len(finals)} spawns, all exit 0; spawn tiers {sorted(spawn_tiers)}, "
              f"status tiers seen {sorted(tiers_seen)}", end="")
    assert "load" in spawn_tiers | tiers_seen, "the profile never served from the load tier"
    assert f"reference process {old_ref} died" in daemon.log()
    assert "reference process restarted" in daemon.log()
    served(daemon, capsys, "after the reference came back")


@pytest.mark.parametrize("pool", ["nopool", "pool"])
def test_reference_death_mid_spawn_runs_once(daemons, needs_root, capsys, tmp_path, pool):
    """The reference dies right after it forked a worker, before it could send the worker's
    pid back (strace injects SIGKILL into its reply's sendmsg: deterministic). The spawn must
    run its command once, and no worker may be left untracked (a zombie child of the daemon).
    The daemon finds the worker among its children by the status pipe's write end (/proc's
    fdinfo): its own copy went once the request was sent, so neither its fd closers, which share
    its fd table, nor a worker it forks meanwhile hold it. With the pool, the spawn is a pool
    worker's and the reference dies replying to the refill that follows: the pool worker it
    forked is found by its channel, killed and reaped."""
    daemon = daemons(env=NO_POOL) if pool == "nopool" else daemons(args=POOL_ARGS)
    if daemon.profiles()["default"]["tier"] != "inherit":
        pytest.skip("the default profile is not in the inherit tier here")
    ref = daemon.profiles()["default"]["referencePid"]
    out = tmp_path / "runs"
    out.touch()
    os.chmod(tmp_path, 0o777)
    os.chmod(out, 0o666)
    tracer = zytest.strace_attach(ref, "-o", "/dev/null", "-e", "trace=sendmsg", "-e", "inject=sendmsg:signal=KILL")
    try:
        with daemon.connect() as c:
            first, final = spawn_true(c, argv=("/bin/sh", "-c", f"echo once >> {out}"))
        assert final and final["exitCode"] == 0, (first, final)
        assert zytest.pidfd_wait_exit(ref, 10), "the reference was not killed"
    finally:
        if tracer.poll() is None:
            tracer.kill()
        tracer.wait()
    # The lost worker is killed and reaped on its pidfd's event, which may come after the reply.
    untracked = untracked_after(daemon, 10)  # reported below, with the runs
    runs = out.read_text().split()
    with capsys.disabled():
        print(f"\n  [reference death mid-spawn, {pool}] tier {first.get('tier')}; the command ran {len(runs)} times; "
              f"untracked children of the daemon: {untracked}", end="")
    assert not untracked, f"workers left untracked: {untracked}"
    assert runs == ["once"], f"the command ran {len(runs)} times"


def nofile_soft(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no Max open files in /proc/{pid}/limits")


def test_no_pidfd_for_the_worker_runs_nothing(daemons, needs_root, capsys, tmp_path):
    """The daemon out of fds when the reference answers with its worker's pid: the worker waits at
    its gate before exec, is killed and reaped, and the caller gets SpawnFailed for a command that
    never ran (a retry runs it once). Deterministic: the Spawn is parked for a stopped reference,
    the daemon's fd limit is cut (prlimit) to the lowest fd number it does not use, and the
    reference is let go."""
    d = daemons(tier="inherit", env=NO_POOL)
    out = tmp_path / "runs"
    out.touch()
    os.chmod(tmp_path, 0o777)
    os.chmod(out, 0o666)
    pid = d.proc.pid
    ref = d.profiles()["default"]["referencePid"]
    soft = nofile_soft(pid)
    argv = ["/bin/sh", "-c", f"echo once >> {out}"]
    try:
        with d.connect() as c:
            c.call("org.varlink.service.GetInfo")
            with stopped(ref):
                c.send(L + "Spawn", {"argv": argv}, more=True)
                wait_for(lambda: d.profiles()["default"]["parkedSpawns"] == 1, "the Spawn parked", timeout=10)

                def settled():
                    a = set(os.listdir(f"/proc/{pid}/fd"))
                    time.sleep(0.2)
                    return a if a == set(os.listdir(f"/proc/{pid}/fd")) else None
                used = {int(n) for n in wait_for(settled, "the daemon's fds settled")}
                lowest_free = min(n for n in range(len(used) + 1) if n not in used)
                subprocess.run(["prlimit", "--pid", str(pid), f"--nofile={lowest_free}:"], check=True)
            first = c.recv()
            assert first.error == L + "SpawnFailed", dict(first)
            assert first.parameters["errno"] == 24, first.parameters
    finally:
        subprocess.run(["prlimit", "--pid", str(pid), f"--nofile={soft}:"], check=True)
    with capsys.disabled():
        print(f"\n  [out of fds] SpawnFailed {first.parameters}; runs: {out.read_text().split()}", end="")
    assert "no pidfd for worker" in d.log(), "the spawn did not run out of fds at the worker's pidfd"
    assert out.read_text() == "", "the command ran although its Spawn failed"
    no_zombies(d)
    with d.connect() as c:
        _, final = spawn_true(c, argv=argv)
    assert final["exitCode"] == 0 and out.read_text().split() == ["once"]


# ---- workers killed between fork and exec -------------------------------------------------------

def test_sigkill_held_worker(daemon, capsys):
    """A held worker (sandboxed, blocked before execve) killed from outside: its Spawn was
    answered (created), its Wait reports SIGKILL, Start is refused, Delete forgets it."""
    before = settled_fds(daemon)
    with daemon.connect() as c:
        r = c.call(L + "Spawn", {"argv": ["/bin/echo", "never"], "hold": True, "id": "held"})
        r.close_fds()
        pid = r.parameters["pid"]
        assert c.call(L + "State", {"id": "held"}).parameters["task"]["state"] == "created"
        assert os.readlink(f"/proc/{pid}/exe") != "/usr/bin/echo", "the held worker already exec'd"
        os.kill(pid, signal.SIGKILL)
        w = c.call(L + "Wait", {"id": "held"}).parameters["task"]
        assert w["state"] == "stopped" and w["signal"] == signal.SIGKILL, w
        assert c.call_error(L + "Start", {"id": "held"}).error == L + "InvalidState"
        c.call(L + "Delete", {"id": "held"})
        assert c.call_error(L + "State", {"id": "held"}).error == L + "NoSuchTask"
    no_zombies(daemon)
    fds_back_to(daemon, before, "after a killed held worker")
    served(daemon, capsys, "held worker killed")


@pytest.mark.parametrize("tier", ["inherit", "inherit-pool", "load"])
def test_killer_races_every_spawn(daemons, needs_root, capsys, tier):
    """A killer SIGKILLs every new child of the daemon as soon as it sees it (many before their
    exec, while they set up the sandbox), while three clients spawn: every Spawn gets an answer
    (success then a final reply, or SpawnFailed), none hangs, and no zombie is left."""
    d = daemons(tier=tier.split("-")[0], args=POOL_ARGS if tier.endswith("pool") else ())
    refs = helper_pids(d)
    before = settled_fds(d)
    stop = threading.Event()
    killed = {"before_exec": 0, "after_exec": 0}

    def killer():
        seen = set()
        while not stop.is_set():
            try:
                kids = children(d.proc.pid)
            except OSError:
                return
            for pid, (state, comm) in kids.items():
                if pid in refs or pid in seen or state == "Z":
                    continue
                seen.add(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                # Before exec the worker is still a copy of zygoted or zygote-ref.
                killed["before_exec" if comm in ("zygoted", "zygote-ref") else "after_exec"] += 1

    outcomes = {"exit0": 0, "killed": 0, "failed": 0}
    errors = []
    lock = threading.Lock()

    def client():
        try:
            with d.connect(timeout=60) as c:
                for _ in range(40):
                    first, final = spawn_true(c, argv=("/bin/sleep", "0.05"))
                    with lock:
                        if final is None:
                            assert first["error"] == L + "SpawnFailed", first
                            outcomes["failed"] += 1
                        elif final.get("signal") == signal.SIGKILL:
                            outcomes["killed"] += 1
                        elif final.get("exitCode") == 0:
                            outcomes["exit0"] += 1
                        else:
                            errors.append(f"unexpected end: {final}")
        except Exception as e:
            errors.append(repr(e))

    k = threading.Thread(target=killer)
    k.start()
    clients = [threading.Thread(target=client) for _ in range(3)]
    for t in clients:
        t.start()
    for t in clients:
        t.join(300)
    stop.set()
    k.join(30)
    assert not any(t.is_alive() for t in clients), "a Spawn hung"
    assert not errors, errors
    assert sum(outcomes.values()) == 120, outcomes
    with capsys.disabled():
        print(f"\n  [killer, {tier}] outcomes {outcomes}; killed {killed['before_exec']} before exec, "
              f"{killed['after_exec']} after", end="")
    assert killed["before_exec"] + killed["after_exec"] > 0, "the killer never caught a worker"
    assert helper_pids(d) == refs, "the killer hit a reference or an init"
    no_zombies(d)
    fds_back_to(d, before, "after the killer")
    served(d, capsys, f"after the killer ({tier})")


# ---- a caller that disconnects mid-Spawn -------------------------------------------------------

@pytest.mark.parametrize("when", ["before-reply", "after-first-reply", "held"])
def test_caller_disconnects_mid_spawn(daemon, capsys, when):
    """The task of a caller that went away is not killed: it runs on, stays in its owner's List
    (and nobody else's) until its owner deletes it, and then nothing of it is left."""
    before = settled_fds(daemon)
    tid = f"orphan-{when}"
    r_in, w_in = os.pipe2(os.O_CLOEXEC)
    try:
        c = daemon.connect_as(NOBODY, NOGROUP)
        params = {"argv": ["cat"], "id": tid, "fds": [{"fd": 0, "target": 0}]}
        if when == "held":
            params["hold"] = True
        c.send(L + "Spawn", params, more=True, fds=[r_in])
        os.close(r_in)
        r_in = None
        if when == "before-reply":
            # The daemon has read the Spawn once a later call on another connection is answered
            # (one loop, events in order). (A call whose connection closes before the daemon
            # read it to its end is not carried out at all: nothing to leak then.)
            daemon.status()
            # In the inherit tier the task exists once the reference has answered: a caller that
            # leaves before that has its worker killed at the gate (the parked-spawn test below).
            with daemon.connect_as(NOBODY, NOGROUP) as owner:
                wait_for(lambda: any(t["id"] == tid for t in owner.call(L + "List").parameters["tasks"]),
                         "the task in its owner's List")
        else:
            first = c.recv()
            assert not first.error, dict(first)
            first.close_fds()
        c.close()
        with daemon.connect_as(NOBODY, NOGROUP) as owner:
            def listed():
                tasks = {t["id"]: t for t in owner.call(L + "List").parameters["tasks"]}
                return tasks.get(tid) if tasks.get(tid, {}).get("state") in ("running", "created") else None
            t = wait_for(listed, "the orphaned task in its owner's List")
            assert zytest.proc_status(t["pid"])["State"][0] in "RSD", "the task was killed"
            with daemon.connect() as root:
                assert any(x["id"] == tid for x in root.call(L + "List").parameters["tasks"])
            with daemon.connect_as(zytest.OTHER_UID, zytest.OTHER_GID) as other:
                assert other.call(L + "List").parameters["tasks"] == []
            if when == "held":
                d = owner.call(L + "Delete", {"id": tid}).parameters["task"]
                assert d["state"] == "created"
                assert zytest.pidfd_wait_exit(t["pid"], 30), "Delete did not kill the held task"
            else:
                os.close(w_in)
                w_in = None
                final = owner.call(L + "Wait", {"id": tid}).parameters["task"]
                assert final["exitCode"] == 0, final
                owner.call(L + "Delete", {"id": tid})
            assert owner.call_error(L + "State", {"id": tid}).error == L + "NoSuchTask"
    finally:
        for fd in (r_in, w_in):
            if fd is not None:
                os.close(fd)
    no_zombies(daemon)
    fds_back_to(daemon, before, f"after an orphaned task ({when})")
    served(daemon, capsys, f"caller gone {when}")


# ---- zygoted killed with tasks running ------------------------------------------------------------

def test_sigkill_zygoted_tasks_survive(daemons, needs_root, capsys):
    d = daemons()
    refs = reference_pids(d)
    # The tasks run in the default profile: its init must stay while they live. The other
    # profiles' inits have no task left once their references go, and leave at once (and are
    # reaped at once where the test runs under a subreaper, as bounded-run is).
    inits = {d.profiles()["default"].get("initPid")} - {None}
    conns, tasks = [], []
    try:
        for i in range(3):
            c = d.connect()
            conns.append(c)
            tasks.append(zytest.spawn(c, ["cat"], extra={"id": f"survivor-{i}"}))
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait(30)
        d.stopped = True  # killed on purpose: the fixture must not expect a clean exit
        # The references see EOF on their control socket and leave by themselves.
        for ref in refs:
            assert zytest.pidfd_wait_exit(ref, 30), f"reference {ref} outlived zygoted"
        for t in tasks:
            assert not zytest.wait_readable(t.pidfd, 0), f"task {t.id} died with zygoted"
            assert zytest.proc_status(t.pid)["State"][0] in "RS"
        # The init of the tasks' pid namespace stays while they live (its death would kill them).
        init_fds = {pid: os.pidfd_open(pid) for pid in inits}
        # A new zygoted takes over the stale socket and serves; without the fd store it does
        # not know the old tasks (adoption is tested with systemd, test_systemd.py).
        # The old listening socket lives as long as anything shares the dead daemon's fd table
        # (its fd closers, killed by PR_SET_PDEATHSIG a moment later): until it refuses
        # connections, a new zygoted would take it for a live daemon's, and so would our check.
        def refused():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            try:
                s.connect(d.socket)
                return False
            except ConnectionRefusedError:
                return True
            finally:
                s.close()
        wait_for(refused, "the dead zygoted's listening socket closed", timeout=10)
        d2 = daemons(start=False)
        d2.dir, d2.socket = d.dir, d.socket
        d2.logpath = os.path.join(d.dir, "zygoted2.log")
        d2.start()
        with d2.connect() as c:
            assert c.call(L + "List").parameters["tasks"] == []
        served(d2, capsys, "new zygoted after SIGKILL")
        # The old tasks still work: their stdio is ours.
        for t in tasks:
            os.write(t.stdin, f"{t.id}\n".encode())
            t.close_stdin()
            assert zytest.read_all(t.stdout) == f"{t.id}\n".encode()
            t.stdout = None
            assert zytest.wait_readable(t.pidfd, 30), f"task {t.id} did not exit"
        # ... and leaves after the last of them, by itself.
        for pid, fd in init_fds.items():
            assert zytest.wait_readable(fd, 30), f"the init {pid} outlived its namespace's last task"
            os.close(fd)
    finally:
        for t in tasks:
            t.cleanup()
        for c in conns:
            c.close()


# ---- a profile replaced with garbage, then SIGHUP ------------------------------------------------

def wait_log(d, text, after=0, timeout=30):
    return wait_for(lambda: text in d.log()[after:], f"'{text}' in zygoted's log", timeout)


def errno_of(d, bins, profile, call, arg=None):
    with d.connect() as c:
        argv = [bins["try-syscall"], call] + ([arg] if arg else [])
        out, final, _ = zytest.run_task(c, argv, profile=profile)
    assert final["exitCode"] == 0
    return int(out.decode().split("errno=")[1])


def test_garbage_profile_then_sighup(daemons, bins, needs_root, capsys):
    pdir = daemons.workdir()
    for n in ("default", "nonet"):
        shutil.copy(os.path.join(bins["profiles"], f"{n}.json"), pdir)
    d = daemons(profile_dirs=[pdir])
    before = d.profiles()
    assert errno_of(d, bins, "nonet", "socket", "2") == 97  # AF_INET: EAFNOSUPPORT
    path = os.path.join(pdir, "nonet.json")
    with open(path + ".tmp", "wb") as f:
        f.write(b'{"name": "nonet", "seccomp": \x00\xff garbage')
    os.rename(path + ".tmp", path)
    mark = len(d.log())
    d.proc.send_signal(signal.SIGHUP)
    wait_log(d, "reloaded:", after=mark)
    log = d.log()[mark:]
    assert "nonet.json" in log and "keeping the version loaded before" in log, log
    after = d.profiles()
    assert after["nonet"]["hash"] == before["nonet"]["hash"]
    assert after["nonet"].get("referencePid") == before["nonet"].get("referencePid")
    assert errno_of(d, bins, "nonet", "socket", "2") == 97, "the old nonet profile is no longer in force"
    assert errno_of(d, bins, "default", "socket", "2") == 0
    # A good file and another SIGHUP: the new version loads.
    shutil.copy(os.path.join(bins["profiles"], "default.json"), path + ".tmp")
    with open(path + ".tmp") as f:
        text = f.read().replace('"name": "default"', '"name": "nonet"')
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)
    mark = len(d.log())
    d.proc.send_signal(signal.SIGHUP)
    wait_log(d, "reloaded:", after=mark)
    assert d.profiles()["nonet"]["hash"] == before["default"]["hash"]
    assert errno_of(d, bins, "nonet", "socket", "2") == 0
    served(d, capsys, "after SIGHUP with garbage")


# ---- the inherit tier's parked spawns -------------------------------------------------------------

@contextlib.contextmanager
def stopped(pid):
    """The reference stopped (SIGSTOP): it reads no request and answers none until SIGCONT."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def runs_file(tmp_path):
    out = tmp_path / "runs"
    out.touch()
    os.chmod(tmp_path, 0o777)
    os.chmod(out, 0o666)
    return out


def test_stuck_reference_blocks_nobody_else(no_pool_daemon, capsys, tmp_path):
    """A reference that stops answering holds up only the spawn parked for it: another caller is
    answered at once; after 5 s the reference is killed and the spawn runs once in the load tier."""
    daemon = no_pool_daemon
    ref = inherit_reference(daemon)
    out = runs_file(tmp_path)
    with stopped(ref):
        c = daemon.connect()
        t0 = time.monotonic()
        c.send(L + "Spawn", {"argv": ["/bin/sh", "-c", f"echo once >> {out}"]}, more=True)
        # read after the Spawn (one loop, events in order): a daemon that waited for the reference
        # would answer it only after its 5 s
        daemon.status()
        t_other = time.monotonic() - t0
        first = c.recv()
        assert not first.error, dict(first)
        first.close_fds()
        final = c.recv()
        t_done = time.monotonic() - t0
        c.close()
    assert final.parameters["task"]["exitCode"] == 0, dict(final)
    assert first.parameters["tier"] == "load", first.parameters
    assert zytest.pidfd_wait_exit(ref, 10), "the stuck reference was not killed"
    assert "did not answer within 5000 ms" in daemon.log()
    assert out.read_text().split() == ["once"]
    with capsys.disabled():
        print(f"\n  [stuck reference] another caller answered after {1000 * t_other:.0f} ms; the parked "
              f"spawn ran in the load tier after {t_done:.1f} s", end="")
    assert t_other < 2.5, f"another caller waited {t_other:.1f} s for a stuck reference"
    assert t_done >= 4.5, f"the reference was given up after {t_done:.1f} s, not 5"
    no_zombies(daemon)
    wait_for(lambda: daemon.profiles()["default"].get("referencePid") not in (None, ref),
             "a new reference")
    served(daemon, capsys, "after a stuck reference")


def test_lost_reference_runs_parked_spawns_once(no_pool_daemon, capsys, tmp_path):
    """Three spawns parked for a reference that dies: each runs exactly once, in the load tier."""
    daemon = no_pool_daemon
    ref = inherit_reference(daemon)
    out = runs_file(tmp_path)
    conns = []
    try:
        with stopped(ref):
            for word in ("a", "b", "c"):
                c = daemon.connect()
                conns.append(c)
                c.send(L + "Spawn", {"argv": ["/bin/sh", "-c", f"echo {word} >> {out}"]}, more=True)
            wait_for(lambda: daemon.profiles()["default"]["parkedSpawns"] == 3, "three Spawns parked",
                     timeout=10)
            os.kill(ref, signal.SIGKILL)
        tiers = []
        for c in conns:
            first = c.recv()
            assert not first.error, dict(first)
            first.close_fds()
            tiers.append(first.parameters["tier"])
            final = c.recv()
            assert final.parameters["task"]["exitCode"] == 0, dict(final)
    finally:
        for c in conns:
            c.close()
    assert tiers == ["load"] * 3, tiers
    assert sorted(out.read_text().split()) == ["a", "b", "c"]
    assert f"reference process {ref} died" in daemon.log()
    no_zombies(daemon)
    served(daemon, capsys, "after a reference lost with spawns parked")


def test_parked_spawns_are_capped(no_pool_daemon, capsys):
    """At most 64 spawns wait for one profile's reference: the 65th is refused with
    LimitExceeded, and the 64 all run once the reference answers."""
    daemon = no_pool_daemon
    ref = inherit_reference(daemon)
    conns = []
    try:
        with stopped(ref):
            for _ in range(64):
                c = daemon.connect()
                conns.append(c)
                c.send(L + "Spawn", {"argv": ["/bin/true"]}, more=True)
            wait_for(lambda: daemon.profiles()["default"]["parkedSpawns"] == 64, "64 Spawns parked",
                     timeout=20)
            with daemon.connect() as extra:
                e = extra.call_error(L + "Spawn", {"argv": ["/bin/true"]})
        assert e.error == L + "LimitExceeded", dict(e)
        assert e.parameters == {"limit": "pendingSpawnsPerProfile", "max": 64}, e.parameters
        tiers = set()
        for c in conns:
            first = c.recv()
            assert not first.error, dict(first)
            first.close_fds()
            tiers.add(first.parameters["tier"])
            assert c.recv().parameters["task"]["exitCode"] == 0
    finally:
        for c in conns:
            c.close()
    with capsys.disabled():
        print(f"\n  [64 parked] the 65th refused; the 64 ran in tiers {sorted(tiers)}", end="")
    no_zombies(daemon)
    served(daemon, capsys, "after 64 parked spawns")


def test_caller_gone_while_parked_kills_the_worker_at_its_gate(no_pool_daemon, capsys, tmp_path):
    """A caller that leaves while its spawn waits for the reference: the worker the reference
    forks is killed at its gate and never runs the command; no task is left."""
    daemon = no_pool_daemon
    ref = inherit_reference(daemon)
    out = runs_file(tmp_path)
    with stopped(ref):
        c = daemon.connect()
        c.send(L + "Spawn", {"argv": ["/bin/sh", "-c", f"echo ran >> {out}"], "id": "parked-orphan"},
               more=True)
        wait_for(lambda: daemon.profiles()["default"]["parkedSpawns"] == 1, "the Spawn parked", timeout=10)
        c.close()
        daemon.status()  # and the caller's EOF seen
    wait_for(lambda: "killed at its gate" in daemon.log(), "the parked worker killed at its gate", timeout=15)
    no_zombies(daemon)
    assert out.read_text() == "", "the worker of a caller that left ran its command"
    with daemon.connect() as root:
        assert all(t["id"] != "parked-orphan" for t in root.call(L + "List").parameters["tasks"])
    assert daemon.profiles()["default"].get("referencePid") == ref, "the reference was replaced"
    served(daemon, capsys, "after a caller left while parked")
