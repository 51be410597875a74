# SPDX-License-Identifier: MIT
"""A caller that changes after its first Spawn is seen as it is at the next one, on the same
connection.

zygoted keeps what it learnt of a connection's process between calls (daemon/caller.c: its pidfd,
/proc/PID, the files it reads again, its mount table while nothing says it changed). Each test
here connects, spawns once (so that all of that is kept), changes the caller one way (a
capability dropped, a seccomp filter, no_new_privs, a network namespace, a cgroup, an rlimit, a
procfs mounted in its mount namespace, its uid, its nice value) and spawns again on the same
connection: the task carries the new confinement, or the call is refused as it would be on a new
connection. Each runs in the inherit and load tiers, against a daemon that keeps nothing
(ZYGOTE_DISABLE_FEATURES=caller_cache), the path of every call before the connection kept its
caller, against one that keeps the process but lists and opens its threads at each call
(ZYGOTE_DISABLE_FEATURES=caller_threads) where by default it keeps their status files open, and
against one that reads them through /proc (ZYGOTE_DISABLE_FEATURES=caller_bpf) where a root
zygoted reads every thread in one read() of a BPF task iterator (daemon/caller-bpf.c). The
changes are also made in a thread that is not the first, after a Spawn that kept its file, and
by a thread that replaces another between two Spawns.
"""
import ctypes
import os
import queue
import re
import tempfile
import threading

import pytest

import varlink
import zytest
from test_confinement import (cap_sets, cgroups_in, drop_every_capability, drop_to_nobody, filter_this_thread,
                              own_cgroup, spawn_after, status_field)
from zytest import NOBODY

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000


@pytest.fixture(params=[("inherit", None), ("load", None), ("inherit", "caller_cache"), ("load", "caller_cache"),
                        ("inherit", "caller_threads"), ("inherit", "caller_bpf")],
                ids=["inherit", "load", "inherit-fresh", "load-fresh", "inherit-threads-listed", "inherit-proc"])
def tiered(request, daemons, needs_root):
    tier, disabled = request.param
    return daemons(tier=tier, env={"ZYGOTE_DISABLE_FEATURES": disabled} if disabled else None)


def spawn_twice(daemon, change, argv, before=None):
    """In a child: connects, spawns argv, runs change(), spawns argv again on the same
    connection. Returns {"first": out, "second": out or the error reply, ...change()'s result}."""
    def child():
        if before:
            before()
        conn = daemon.connect()
        res = {}
        for key in ("first", "second"):
            if key == "second":
                got = change()
                res.update(got if isinstance(got, dict) else {})
            try:
                res[key] = zytest.run_task(conn, argv)[0].decode()
            except varlink.VarlinkError as e:
                res[key] = dict(e.reply)
        return res
    return zytest.in_child(child)


def refused(reply, reason):
    return isinstance(reply, dict) and reply.get("error") == "io.zygote.Launcher.CallerConfined" and \
        reason in reply["parameters"]["reason"]


def test_dropped_capabilities_are_seen(tiered):
    res = spawn_twice(tiered, drop_every_capability, ["cat", "/proc/self/status"])
    assert cap_sets(res["first"])["CapEff"] != 0, res["first"]
    task = cap_sets(res["second"])
    for k in ("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"):
        assert task[k] == 0, f"a caller that dropped every capability got a task with {k} {task[k]:#x}"


def test_dropped_uid_is_seen(tiered):
    def change():
        drop_to_nobody()
        libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: about the ids, not about dumpability
    res = spawn_twice(tiered, change, ["cat", "/proc/self/status"])
    assert status_field(res["first"], "Uid") == ["0"] * 4
    assert status_field(res["second"], "Uid") == [str(NOBODY)] * 4, res["second"]


def test_seccomp_filter_is_seen(tiered):
    """A filter (and the no_new_privs it needs) added between two calls: the second is refused
    under the bundled profile, which admits no no_new_privs caller (a filtered caller whose profile
    admits it gets its filters carried: test_caller_filters.py)."""
    res = spawn_twice(tiered, filter_this_thread, ["true"])
    assert res["first"] == ""
    assert refused(res["second"], "no_new_privs"), res["second"]


def test_no_new_privs_is_seen(tiered):
    res = spawn_twice(tiered, lambda: libc.prctl(38, 1, 0, 0, 0), ["true"])  # PR_SET_NO_NEW_PRIVS
    assert res["first"] == ""
    assert refused(res["second"], "no_new_privs"), res["second"]


def test_network_namespace_is_seen(tiered):
    def change():
        assert libc.unshare(CLONE_NEWNET) == 0, ctypes.get_errno()
        return {"caller": os.readlink("/proc/self/ns/net")}
    res = spawn_twice(tiered, change, ["readlink", "/proc/self/ns/net"])
    assert res["first"].strip() == os.readlink("/proc/self/ns/net")
    assert res["second"].strip() == res["caller"], f"caller in {res['caller']}, its task in {res['second']}"


def test_rlimit_is_seen(tiered):
    import resource
    res = spawn_twice(tiered, lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)),
                      ["sh", "-c", "ulimit -n; ulimit -Hn"])
    assert res["first"].split() != ["64", "64"]
    assert res["second"].split() == ["64", "64"], res["second"]


def test_nice_is_seen(tiered):
    res = spawn_twice(tiered, lambda: os.nice(7), ["python3", "-c", "import os; print(os.nice(0))"])
    assert res["first"].strip() == "0"
    assert res["second"].strip() == "7", res["second"]


def test_cgroup_is_seen(tiered):
    with own_cgroup() as (cg, base):
        def change():
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write("0")
        res = spawn_twice(tiered, change, ["cat", "/proc/self/cgroup"])
        rel = "/" + os.path.relpath(cg, base)
        first, second = cgroups_in(res["first"], base), cgroups_in(res["second"], base)
        assert first and not any(p.startswith(rel) for p in first)
        assert second and all(p.startswith(rel) for p in second), f"the caller is in {rel}, its task in {second}"


def test_procfs_mounted_in_its_mount_namespace_is_seen(tiered):
    """A caller in a mount namespace of its own is served (its mount table kept, in the daemon
    that keeps it) until it mounts a procfs outside /proc there, which would show its task
    processes outside its sandbox: then it is refused."""
    if not all(p.get("initPid") for p in tiered.profiles().values()):
        pytest.skip("no pid namespace here (a chrooted zygoted has none): no procfs of its own to protect")
    where = zytest.make_workdir()
    try:
        def before():
            assert libc.unshare(CLONE_NEWNS) == 0, ctypes.get_errno()
            assert libc.mount(None, b"/", None, 0x4000 | 0x40000, None) == 0, ctypes.get_errno()  # MS_REC|PRIVATE

        def change():
            assert libc.mount(b"proc", where.encode(), b"proc", 0, None) == 0, ctypes.get_errno()
        res = spawn_twice(tiered, change, ["true"], before=before)
        assert res["first"] == "", res["first"]
        assert refused(res["second"], "procfs outside /proc"), res["second"]
    finally:
        zytest.remove_workdir(where)


# A second thread of the caller's own, made after it connected: in a new network, UTS or IPC
# namespace (CLONE_NEW*), or moved alone to another v1 cgroup (0).
THREAD_OWN = {"netns-thread": CLONE_NEWNET, "utsns-thread": 0x04000000, "ipcns-thread": 0x08000000,
              "v1-cgroup-thread": 0}


def thread_of_its_own(flag, cg):
    def go():
        if cg:
            with open(os.path.join(cg, "tasks"), "w") as f:
                f.write(str(threading.get_native_id()))
        elif libc.unshare(flag) != 0:
            pytest.fail(f"unshare {flag:#x}: {os.strerror(ctypes.get_errno())}")
    return go


@pytest.mark.parametrize("how", sorted(THREAD_OWN))
def test_a_thread_in_other_namespaces_or_cgroups_is_refused(daemon, how):
    """Namespaces and v1 cgroups belong to threads, like capabilities and filters: the daemon
    cannot tell which thread sent the call, so a caller whose second thread (the one that calls)
    is in a namespace or cgroup of its own is refused, not served with its first thread's."""
    cg, base = None, "/sys/fs/cgroup/pids"
    if not THREAD_OWN[how]:
        if not os.path.isfile(os.path.join(base, "tasks")) or not os.access(base, os.W_OK):
            pytest.skip("no writable cgroup v1 pids hierarchy (a thread alone in a cgroup needs v1)")
        cg = tempfile.mkdtemp(prefix="zytest-thread-", dir=base)
    try:
        _, out, err, _ = spawn_after(daemon, lambda: None, ["true"], in_thread=thread_of_its_own(THREAD_OWN[how], cg))
    finally:
        if cg:
            os.rmdir(cg)  # the caller has exited
    assert err is not None, f"{how}: the caller got a task"
    assert err["error"] == "io.zygote.Launcher.CallerConfined" and \
        "different namespaces or cgroups" in err["parameters"]["reason"], err


class Worker:
    """A thread of the caller that runs what it is given (run()), and lives until stop()."""
    def __init__(self):
        self.q, self.done = queue.Queue(), queue.Queue()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        for fn in iter(self.q.get, None):
            try:
                self.done.put(("ok", fn()))
            except BaseException as e:  # the caller's failure, reported by run()
                self.done.put(("err", repr(e)))

    def run(self, fn):
        self.q.put(fn)
        how, got = self.done.get(timeout=zytest.CALL_TIMEOUT)
        assert how == "ok", got
        return got

    def stop(self):
        self.q.put(None)
        self.t.join(zytest.CALL_TIMEOUT)
        assert not self.t.is_alive()


@pytest.mark.parametrize("how", ["caps", "filter", "replaced"])
def test_a_thread_that_changes_is_seen(tiered, how):
    """Four threads besides the first at the first Spawn (their files kept, by default); then one
    of them drops every capability or puts a filter on itself, or ends and a new one with a
    filter of its own takes its place (the count stays the same): the second Spawn sees it."""
    workers = []

    def before():
        ev = threading.Event()
        for _ in range(3):
            threading.Thread(target=ev.wait, daemon=True).start()
        workers.append(Worker())

    def change():
        if how == "caps":
            workers[0].run(drop_every_capability)
        elif how == "filter":
            workers[0].run(filter_this_thread)
        else:
            workers[0].stop()
            workers.append(Worker())
            workers[1].run(filter_this_thread)

    if how == "caps":
        res = spawn_twice(tiered, change, ["cat", "/proc/self/status"], before=before)
        assert cap_sets(res["first"])["CapEff"] != 0, res["first"]
        task = cap_sets(res["second"])
        for k in ("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"):
            assert task[k] == 0, f"a caller whose thread dropped every capability got a task with {k} {task[k]:#x}"
    else:
        res = spawn_twice(tiered, change, ["true"], before=before)
        assert res["first"] == ""
        # one thread's filter: its threads differ (test_caller_filters.py carries a shared one)
        assert refused(res["second"], "different seccomp filters"), res["second"]


def held_by(pid):
    """The targets of the fds process pid holds."""
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            held.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return held


@pytest.mark.parametrize("reader", ["bpf", "proc"])
def test_which_reader_reads_the_threads(daemons, needs_root, reader):
    """The reader of callers' threads that zygoted says it took at start-up is the one it uses: with
    the BPF task iterator (root, the kernel's BTF, Linux 6.1), a caller of four threads holds, after
    two Spawns on one connection, one BPF link in zygoted and no file of any of its threads; forced
    to /proc (ZYGOTE_DISABLE_FEATURES=caller_bpf), no link, and (unless caller_threads is forced off
    too) the status files of its other threads."""
    forced = os.environ.get("ZYTEST_DISABLE_FEATURES", "").split(",")
    if reader == "bpf" and "caller_bpf" in forced:
        pytest.skip("ZYTEST_DISABLE_FEATURES forces the /proc reader in this run")
    if reader == "bpf" and not os.path.exists("/sys/kernel/btf/vmlinux"):
        pytest.skip("no kernel BTF (/sys/kernel/btf/vmlinux): no BPF task iterator")
    d = daemons(env={"ZYGOTE_DISABLE_FEATURES": "caller_bpf"} if reader == "proc" else None)
    ev = threading.Event()
    idle = [threading.Thread(target=ev.wait, daemon=True) for _ in range(3)]
    for t in idle:
        t.start()
    try:
        conn = d.connect()
        try:
            for _ in range(2):
                zytest.run_task(conn, ["true"])
            held = held_by(d.proc.pid)
        finally:
            conn.close()
    finally:
        ev.set()
        for t in idle:
            t.join(zytest.CALL_TIMEOUT)
    files = [h for h in held if re.fullmatch(rf"/proc/{os.getpid()}/task/\d+/status", h)]
    links = [h for h in held if h == "anon_inode:bpf_link"]
    log = d.log()
    if reader == "bpf":
        assert "callers' threads: read by a BPF task iterator" in log, log
        assert len(links) == 1 and not files, held
    else:
        assert "BPF task iterator disabled by ZYGOTE_DISABLE_FEATURES" in log, log
        assert not links, held
        assert len(files) >= (0 if "caller_threads" in forced else 3), held


def test_unprivileged_zygoted_reads_threads_through_proc(daemons, needs_root):
    """Where the BPF task iterator cannot load (here: zygoted without CAP_BPF and CAP_PERFMON), zygoted
    says why once at start-up and reads its callers' threads through /proc: it serves its user, and
    holds no BPF link."""
    from test_confinement import run_client
    if "caller_bpf" in os.environ.get("ZYTEST_DISABLE_FEATURES", "").split(","):
        pytest.skip("ZYTEST_DISABLE_FEATURES forces the /proc reader in this run: not the load's failure")
    d = daemons(as_uid=NOBODY)
    r = run_client(d, ["true"], uid=NOBODY)
    assert r.returncode == 0, r.stderr
    log = d.log()
    assert "callers' threads: read through /proc (no BPF task iterator: Operation not permitted" in log, log
    assert "anon_inode:bpf_link" not in held_by(d.proc.pid)
