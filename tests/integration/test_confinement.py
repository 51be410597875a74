# SPDX-License-Identifier: MIT
"""A task carries its caller's confinement, and reaches nothing outside its sandbox.

Each test confines a caller one way (rlimits, a network namespace, a cgroup, a seccomp filter of
its own, its own gid), asks a root zygoted for a task, and looks at the task from inside. The
rule (docs/SECURITY.md): a caller who reaches the socket never gets more than it already had, so
the task either keeps the confinement or the request is refused with an error that says why.

What zygoted does not do yet is marked as a strict xfail naming the open work: such a test fails
today (the xfail), and turns into a failure of the suite the day the escape is closed, so that
its mark has to go with the fix.
"""
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import threading

import pytest

import varlink
import zytest
from zytest import NOBODY, NOGROUP

NOT_YET = "a task does not carry its caller's confinement yet (the security issue's first item)"


def run_client(daemon, argv, prefix=(), uid=None, gid=None, timeout=zytest.CALL_TIMEOUT, options=()):
    """launchctl run OPTIONS ARGV, started through PREFIX (prlimit, unshare, ...) as uid:gid."""
    cmd = list(prefix) + [daemon.bins["launchctl"], "--socket", daemon.socket, "run", *options, "--", *argv]
    if uid is not None:
        cmd = zytest.setpriv(uid, uid if gid is None else gid) + cmd
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(zytest.WORK_ENV), cwd="/", timeout=timeout)


def limits_of(text):
    """/proc/PID/limits as {name: (soft, hard)}."""
    out = {}
    for line in text.splitlines()[1:]:
        name = line[:26].strip()
        fields = line[26:].split()
        if name and len(fields) >= 2:
            out[name] = (fields[0], fields[1])
    return out


@pytest.fixture(params=["inherit", "load"])
def tiered(request, daemons, needs_root):
    return daemons(tier=request.param)


def test_rlimits_follow_the_caller(tiered):
    names = ["Max processes", "Max file size", "Max open files", "Max address space"]
    # nproc: lower than any default, yet high enough that nobody's processes of the tests
    # running beside this one (ctest -j) never reach it: RLIMIT_NPROC counts them all
    lowered = ["prlimit", "--nproc=3000:3000", "--fsize=4096:4096", "--nofile=64:64", "--as=900000000:900000000", "--"]
    with open(tiered.bins["launchctl"], "rb") as f:
        if b"__asan_init" in f.read():
            # AddressSanitizer reserves terabytes of shadow address space: an ASan-built caller
            # cannot start under a 900 MB RLIMIT_AS. The main lane checks that limit.
            names.remove("Max address space")
            lowered.remove("--as=900000000:900000000")
    mine = subprocess.run(lowered + ["cat", "/proc/self/limits"], stdout=subprocess.PIPE, check=True).stdout
    r = run_client(tiered, ["cat", "/proc/self/limits"], prefix=lowered, uid=NOBODY, gid=NOGROUP)
    assert r.returncode == 0, r.stderr
    want, got = limits_of(mine.decode()), limits_of(r.stdout.decode())
    for name in names:
        assert got[name] == want[name], f"{name}: the caller has {want[name]}, its task {got[name]}"


def test_network_namespace_follows_the_caller(tiered):
    """A caller in network, IPC and UTS namespaces of its own gets a task in those namespaces
    (zygoted joins them: docs/SECURITY.md), never one on the host's network."""
    links = "readlink /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts"
    script = f'{links}; exec {tiered.bins["launchctl"]} --socket {tiered.socket} run -- {links}'
    r = subprocess.run(["unshare", "-n", "-i", "-u", "sh", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV), timeout=zytest.CALL_TIMEOUT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().split()
    assert len(lines) == 6 and lines[:3] == lines[3:], f"caller in {lines[:3]}, its task in {lines[3:]}"
    assert lines[0] != os.readlink("/proc/self/ns/net"), "unshare -n left the caller on the host's network"


def test_mount_namespace_follows_the_caller(tiered):
    """A caller in a mount namespace of its own (a tmpfs on /mnt there) gets a task that sees
    its mounts."""
    script = (f'mount -t tmpfs zytest /mnt && touch /mnt/zytest-marker && exec {tiered.bins["launchctl"]} '
              f'--socket {tiered.socket} run -- ls /mnt')
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV), timeout=zytest.CALL_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["zytest-marker"], f"the task does not see its caller's mounts: {r.stdout}"


@pytest.mark.parametrize("how,name", [(["-p", "-f"], "pid"), (["-U", "-r"], "user")])
def test_pid_and_user_namespaces_are_refused(daemon, how, name):
    """A pid namespace applies only to children, and a user namespace would change what every id
    of the task means: a caller in one of its own is refused with the namespace named."""
    r = subprocess.run(["unshare", *how, daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV),
                       timeout=zytest.CALL_TIMEOUT)
    if r.returncode != 0 and b"unshare failed" in r.stderr:
        pytest.skip(f"cannot make a {name} namespace here: {r.stderr.decode().strip()}")
    assert r.returncode != 0, "a caller in a namespace of its own got a task outside it"
    assert f"a {name} namespace of its own" in r.stderr.decode() and "CallerConfined" in r.stderr.decode(), r.stderr


def test_no_new_privs_follows_the_caller(daemons, needs_root):
    """A caller with no_new_privs (admitted by its profile: test_confinement_lsm.py) gets a task
    with it, even under a profile that does not ask for it (where the task of a caller without it
    has none: the control)."""
    top = zytest.make_workdir()
    try:
        os.mkdir(os.path.join(top, "profiles"))
        with open(os.path.join(top, "profiles", "lax.json"), "w") as f:
            f.write('{"name": "lax", "capabilities": [], "noNewPrivileges": false, "noNewPrivsCallers": "allow", '
                    '"seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}}')
        d = daemons(profile_dirs=[os.path.join(top, "profiles")])
        got = {}
        for prefix in ([], ["setpriv", "--no-new-privs"]):
            r = subprocess.run(prefix + [d.bins["launchctl"], "--socket", d.socket, "run", "--profile", "lax", "--",
                                         "grep", "NoNewPrivs", "/proc/self/status"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)
            assert r.returncode == 0, r.stderr
            got[bool(prefix)] = r.stdout.decode().split()[1]
        assert got == {False: "0", True: "1"}, f"NoNewPrivs of the task, without and with the caller's: {got}"
    finally:
        zytest.remove_workdir(top)


@contextlib.contextmanager
def own_cgroup():
    """A cgroup made for the test (a pids one, or one under the v2 root; skipped where none may be
    made): the cgroup and its hierarchy's root. Removed at the end, once the processes moved
    there (and their tasks) have exited."""
    base = "/sys/fs/cgroup/pids" if os.path.isdir("/sys/fs/cgroup/pids") else "/sys/fs/cgroup"
    if not os.access(base, os.W_OK):
        pytest.skip(f"cannot create a cgroup under {base}")
    cg = tempfile.mkdtemp(prefix="zytest-", dir=base)
    try:
        yield cg, base
    finally:
        os.rmdir(cg)


def cgroups_in(text, base):
    """The paths, in the hierarchy at BASE, of the cgroups /proc/PID/cgroup's TEXT names."""
    return [ln.split(":", 2)[2] for ln in text.splitlines()
            if (":pids:" in ln) or (base == "/sys/fs/cgroup" and ln.startswith("0::"))]


def test_cgroup_follows_the_caller(tiered):
    """A caller in a cgroup (here a pids cgroup of its own) gets a task in that cgroup or below."""
    with own_cgroup() as (cg, base):
        with open(os.path.join(cg, "pids.max"), "w") as f:
            f.write("50")
        script = (f'echo $$ > {cg}/cgroup.procs && exec {tiered.bins["launchctl"]} --socket {tiered.socket} '
                  f'run -- cat /proc/self/cgroup')
        r = subprocess.run(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(zytest.WORK_ENV), timeout=zytest.CALL_TIMEOUT)
        assert r.returncode == 0, r.stderr
        rel = "/" + os.path.relpath(cg, base)
        paths = cgroups_in(r.stdout.decode(), base)
        assert paths and all(p.startswith(rel) for p in paths), f"the caller is in {rel}, its task in {paths}"


def test_callers_own_filter_is_kept(daemon):
    """A caller under a filter that denies AF_INET (2) sockets (it is itself a "nonet" task) must not
    get a task that may open one."""
    ts = daemon.bins["try-syscall"]
    inner = f'{ts} socket 2; exec {daemon.bins["launchctl"]} --socket {daemon.socket} run --profile default -- {ts} socket 2'
    # The caller is itself a "nonet" task; the task it asks for uses "default".
    cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--profile", "nonet", "--", "sh", "-c", inner]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)
    lines = r.stdout.decode().split("\n")
    assert lines[0].startswith("socket errno=") and lines[0] != "socket errno=0", \
        f"the caller itself may open sockets: {lines}"
    # Its filter could be carried (test_caller_filters.py), but it has no_new_privs (nonet's),
    # which the default profile does not admit: refused, and says why.
    assert r.returncode != 0, f"the caller is denied ({lines[0]}), its task got {lines[1:]}"
    err = r.stderr.decode()
    assert "CallerConfined" in err and "no_new_privs" in err, err


@pytest.mark.parametrize("extra", [{"user": "4242"}, {"user": str(NOBODY)}, {}], ids=["no-passwd", "passwd", "unnamed"])
def test_non_root_caller_keeps_its_gid(daemon, extra):
    """A non-root caller naming itself (a uid without a passwd entry, one with an entry whose gid
    differs, or no user at all) gets its own gid and groups: never the passwd entry's gid nor its
    uid number."""
    uid = int(extra.get("user", NOBODY))
    with daemon.connect_as(uid, 4243, groups=[4244]) as c:
        out, final, _ = zytest.run_task(c, ["cat", "/proc/self/status"], extra=extra)
    assert final["exitCode"] == 0
    st = {k: v.split() for k, _, v in (ln.partition(":") for ln in out.decode().splitlines())}
    assert st["Gid"] == ["4243"] * 4, f"a caller of gid 4243 got gid {st['Gid']}"
    assert st["Groups"] == ["4244"], f"a caller in group 4244 got groups {st['Groups']}"


def test_task_cannot_kill_its_callers_other_processes(tiered):
    """Out of reach through the profile's pid namespace; without one (zygoted's fallback, logged)
    there is nothing to test: test_pidns.py checks that the fallback then lets the kill through."""
    if not all(p.get("initPid") for p in tiered.profiles().values()):
        why = [ln for ln in tiered.log().splitlines() if "pid namespace" in ln]
        pytest.skip(f"zygoted gives tasks no pid namespace here: {why[:1]}")
    victim = subprocess.Popen(zytest.setpriv(NOBODY, NOGROUP) + ["sleep", "600"])
    try:
        r = run_client(tiered, ["sh", "-c", f"kill -9 {victim.pid}"], uid=NOBODY, gid=NOGROUP)
        alive = not zytest.pidfd_wait_exit(victim.pid, 1.0)
        assert alive, f"a task killed its caller's process {victim.pid} (kill exit {r.returncode})"
    finally:
        victim.kill()
        victim.wait()


# x86_64 numbers: strict is an x86_64-only profile.
SIGNAL_CALLS = {"kill": "62, pid, 9", "tkill": "200, pid, 9", "tgkill": "234, pid, pid, 9"}


@pytest.mark.parametrize("call", sorted(SIGNAL_CALLS))
def test_strict_task_cannot_signal_by_pid(tiered, call):
    """strict leaves every call that signals by pid out (kill, tkill, tgkill): its tasks run as
    their caller's uid and could otherwise kill the caller's other processes."""
    victim = subprocess.Popen(zytest.setpriv(NOBODY, NOGROUP) + ["sleep", "600"])
    try:
        code = (f"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); pid = {victim.pid}; "
                f"r = libc.syscall({SIGNAL_CALLS[call]}); print(r, ctypes.get_errno())")
        r = run_client(tiered, ["python3", "-c", code], uid=NOBODY, gid=NOGROUP, options=["--profile", "strict"])
        alive = not zytest.pidfd_wait_exit(victim.pid, 0.5)
        assert alive, f"a strict task killed its caller's process with {call}: {r.stdout} {r.stderr}"
        assert r.returncode == 0 and r.stdout.split() == [b"-1", b"1"], (r.returncode, r.stdout, r.stderr)
    finally:
        victim.kill()
        victim.wait()


def test_profile_seccomp_path_stays_in_its_directory(bins):
    """A profile's seccomp path leaving its directory is refused, naming the profile and the path
    (tests/unit/test-profile-files.c covers symlinks and the fallback without openat2)."""
    top = zytest.make_workdir()
    try:
        os.mkdir(os.path.join(top, "profiles"))
        with open(os.path.join(top, "outside.json"), "w") as f:
            f.write('{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}')
        prof = os.path.join(top, "profiles", "escape.json")
        with open(prof, "w") as f:
            f.write('{"name": "escape", "seccomp": "../outside.json", "capabilities": []}')
        r = subprocess.run([bins["zygoted"], "--check-profile", prof], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=zytest.CALL_TIMEOUT)
        assert r.returncode != 0, f"a seccomp path outside the profile's directory was read:\n{r.stdout.decode()}"
        assert f'{prof}: seccomp: "../outside.json": the path leaves the profile\'s directory' in r.stderr.decode(), \
            r.stderr
    finally:
        zytest.remove_workdir(top)


def test_terminal_needs_read_access(daemon):
    """A caller that may only write to a terminal (another user's session-less pty, say) must not
    make it its task's controlling terminal: through /dev/tty the task could read what is typed
    there. The kernel lets only a reader (or CAP_SYS_ADMIN) do TIOCSCTTY, so the worker does it
    with the task's ids and capabilities."""
    master, slave = os.openpty()
    try:
        wfd = os.open(os.ttyname(slave), os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            with daemon.connect_as(NOBODY, NOGROUP) as c:
                r = c.call_more("io.zygote.Launcher.Spawn",
                                {"argv": ["cat", "/dev/tty"], "terminal": True, "env": ["PATH=/usr/bin:/bin"],
                                 "fds": [{"fd": 0, "target": 0}]}, fds=[wfd])
                for fd in r.fds:
                    os.close(fd)
                if not r.error:
                    # The task reads the terminal: end it before failing.
                    os.write(master, b"\x04")
                assert r.error == "io.zygote.Launcher.SpawnFailed", f"a write-only terminal became the task's: {dict(r)}"
                assert r.parameters["step"] == "ctty" and r.parameters["errno"] == 1, dict(r)
        finally:
            os.close(wfd)
    finally:
        os.close(master)
        os.close(slave)


def test_terminal_with_read_access_becomes_the_tasks(daemon):
    """The counterpart: a terminal the caller may read and write is the task's controlling one."""
    master, slave = os.openpty()
    try:
        with daemon.connect_as(NOBODY, NOGROUP) as c:
            r = c.call_more("io.zygote.Launcher.Spawn",
                            {"argv": ["sh", "-c", "echo on-the-tty > /dev/tty"], "terminal": True,
                             "env": ["PATH=/usr/bin:/bin"], "fds": [{"fd": 0, "target": 0}]}, fds=[slave])
            for fd in r.fds:
                os.close(fd)
            assert not r.error, dict(r)
            final = c.recv()
            assert final.parameters["task"]["exitCode"] == 0, dict(final)
        assert zytest.wait_readable(master, zytest.CALL_TIMEOUT)
        assert b"on-the-tty" in os.read(master, 4096)
    finally:
        os.close(master)
        os.close(slave)


# ---- a root caller's capabilities and ids, read at each call ---------------------------------------
CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")

# How a root process sheds capabilities without leaving uid 0: an empty bounding set (capsh
# --drop=all, systemd's CapabilityBoundingSet=), no capabilities at all with the bounding set
# left full (SECBIT_NOROOT: exec as root grants nothing), or one capability kept.
SHED = {
    "empty-bounding-set": ["setpriv", "--bounding-set=-all", "--inh-caps=-all"],
    "no-effective-caps": ["setpriv", "--securebits=+noroot,+noroot_locked", "--inh-caps=-all"],
    "only-net-raw": ["setpriv", "--bounding-set=-all,+net_raw", "--inh-caps=-all"],
}


def status_field(text, key):
    """The words of "Key:" in a /proc/PID/status text."""
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k == key:
            return v.split()
    raise AssertionError(f"no {key} in {text!r}")


def cap_sets(text):
    """The capability sets of a /proc/PID/status text, as numbers."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in CAP_SETS:
            out[k] = int(v.strip(), 16)
    return out


@pytest.mark.parametrize("how", sorted(SHED))
def test_root_callers_capabilities_bound_its_task(tiered, how):
    """A root caller that shed capabilities gets a task with none it lacks, in every set (the
    profile keeps 14): not through the bounding set, nor the inheritable one, nor at exec."""
    prefix = SHED[how]
    mine = subprocess.run(prefix + ["cat", "/proc/self/status"], stdout=subprocess.PIPE, check=True,
                          timeout=zytest.CALL_TIMEOUT).stdout.decode()
    caller = cap_sets(mine)
    r = run_client(tiered, ["cat", "/proc/self/status"], prefix=prefix)
    assert r.returncode == 0, r.stderr
    task = cap_sets(r.stdout.decode())
    assert status_field(r.stdout.decode(), "Uid") == ["0"] * 4, "the task does not run as root"
    for k in CAP_SETS:
        extra = task[k] & ~caller[k]
        assert extra == 0, f"{k}: the caller ({how}) has {caller[k]:#x}, its task {task[k]:#x} ({extra:#x} more)"
    if how == "only-net-raw":
        # the control: what the caller holds and the profile keeps is still given
        assert task["CapEff"] == zytest.caps_mask(["CAP_NET_RAW"]), f"{task['CapEff']:#x}"


@pytest.mark.parametrize("caps,request_", [
    ("-all", ["--user", str(NOBODY)]),
    ("-all", ["--user", "nobody"]),
    ("-all,+setuid", ["--user", str(NOBODY)]),   # another user's gid and groups need CAP_SETGID
    ("-all", ["--group", str(NOGROUP)]),
    ("-all,+setuid", ["--group", str(NOGROUP)]),
], ids=["uid", "name", "setuid-only", "group", "group-setuid-only"])
def test_root_caller_without_setuid_cannot_name_another_user(daemon, caps, request_):
    """A root process without CAP_SETUID (CAP_SETGID for a group) cannot switch ids itself: it
    must not get a task as another user, or in a group it is not in, through the socket."""
    prefix = ["setpriv", f"--bounding-set={caps}", "--inh-caps=-all"]
    r = run_client(daemon, ["id"], prefix=prefix, options=request_)
    assert r.returncode != 0, f"a root caller without the capabilities ran as {r.stdout.decode().strip()}"
    err = r.stderr.decode()
    assert "permission denied" in err and "CAP_SET" in err, err


def test_root_caller_with_setuid_and_setgid_names_another_user(daemon):
    """The counterpart: with CAP_SETUID and CAP_SETGID (and nothing else) it may."""
    prefix = ["setpriv", "--bounding-set=-all,+setuid,+setgid", "--inh-caps=-all"]
    r = run_client(daemon, ["id", "-u"], prefix=prefix, options=["--user", str(NOBODY)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(NOBODY).encode()]


def after_drop(daemon, drop, body, before_connect=None):
    """In a child (so that the test's own ids stay): connects as root, runs drop() (same process,
    same connection), then body(conn), whose JSON-able result is returned here; as a program that
    connected while privileged and dropped privileges later would."""
    def child():
        if before_connect:
            before_connect()
        conn = daemon.connect()
        drop()
        return body(conn)
    return zytest.in_child(child)


def spawn_after(daemon, drop, argv, extra=None, in_thread=None, before_connect=None):
    """after_drop() with a Spawn of argv: returns (the caller's /proc/self/status after drop(),
    the task's stdout, or None and the error reply, the task's tier). in_thread: the Spawn is
    made by a second thread, which first runs in_thread()."""
    import ctypes

    def body(conn):
        # A zygoted may read a process that dropped its ids (it is root); keep the test about
        # the ids, not about dumpability.
        ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
        with open("/proc/self/status") as f:
            res = {"status": f.read()}

        def call():
            try:
                if in_thread:
                    in_thread()
                out, _, tier = zytest.run_task(conn, argv, extra=extra)
                res.update(out=out.decode(), tier=tier)
            except varlink.VarlinkError as e:
                res["error"] = dict(e.reply)
            except BaseException as e:  # the thread's failure, reported as the child's
                res["crash"] = repr(e)
        if in_thread:
            t = threading.Thread(target=call)
            t.start()
            t.join(zytest.CALL_TIMEOUT)
        else:
            call()
        return res
    res = after_drop(daemon, drop, body, before_connect)
    assert "crash" not in res, res["crash"]
    return res["status"], res.get("out"), res.get("error"), res.get("tier")


def drop_to_nobody():
    os.setgroups([])
    os.setresgid(NOGROUP, NOGROUP, NOGROUP)
    os.setresuid(NOBODY, NOBODY, NOBODY)


def drop_every_capability():
    """Stays uid 0, with no capability in any set (bounding set first: it needs CAP_SETPCAP)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(zytest.cap_last() + 1):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    assert libc.capset(hdr, data) == 0, ctypes.get_errno()


@pytest.mark.parametrize("drop", [drop_to_nobody, drop_every_capability], ids=["setuid-nobody", "drop-caps"])
def test_identity_is_read_at_each_call(tiered, drop):
    """What the kernel recorded at connect() is not what a caller has later: a process that
    connected as root and then dropped its uid (or every capability) gets a task with what it
    has at the Spawn."""
    # Connected with supplementary groups (SO_PEERGROUPS records them): the task must not get
    # them back once the process has dropped them.
    mine, out, err, _ = spawn_after(tiered, drop, ["cat", "/proc/self/status"],
                                    before_connect=lambda: os.setgroups([4, 27]))
    assert err is None, err
    caller, task = cap_sets(mine), cap_sets(out)
    uid = status_field(out, "Uid")
    if drop is drop_to_nobody:
        assert uid == [str(NOBODY)] * 4, f"a caller now {NOBODY} got a task as uid {uid}"
        assert status_field(out, "Gid") == [str(NOGROUP)] * 4
        assert status_field(out, "Groups") == [], "it dropped every group"
    else:
        assert uid == ["0"] * 4
    for k in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert task[k] == 0, f"a caller without capabilities got a task with {k} {task[k]:#x}"
    assert task["CapBnd"] & ~caller["CapBnd"] == 0, f"bounding set: the caller's {caller}, the task's {task}"


@pytest.mark.parametrize("extra", [{"user": str(NOBODY)}, {"group": str(NOGROUP)}], ids=["user", "group"])
def test_dropped_setuid_is_seen_at_the_next_call(daemon, extra):
    """Connected as root with every capability, then without any: naming another user or group
    on that connection is refused as PermissionDenied (the protocol's answer to a refused
    parameter), naming what it lacks."""
    _, out, err, _ = spawn_after(daemon, drop_every_capability, ["id"], extra=extra)
    assert err is not None, f"a root caller without CAP_SETUID/CAP_SETGID ran {out!r}"
    assert err["error"] == "io.zygote.Launcher.PermissionDenied", err
    assert "CAP_SETGID" in err["parameters"]["reason"], err


def filter_this_thread():
    """An allow-all seccomp filter on the calling thread only (no TSYNC): the other threads of
    the process stay unfiltered."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    insn = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000))  # ret ALLOW
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", 1, ctypes.addressof(insn)))
    ul = ctypes.c_ulong
    assert libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) == 0, ctypes.get_errno()  # PR_SET_NO_NEW_PRIVS
    assert libc.prctl(22, ul(2), ul(ctypes.addressof(prog)), ul(0), ul(0)) == 0, ctypes.get_errno()  # PR_SET_SECCOMP


def start_idle_threads(n):
    ev = threading.Event()
    for _ in range(n):
        threading.Thread(target=ev.wait, daemon=True).start()


@pytest.mark.parametrize("how", ["filtered-thread", "many-threads"])
def test_every_thread_of_the_caller_counts(daemon, how):
    """The daemon cannot tell which thread sent the call. A thread under a filter of its own (the
    first thread has none) is refused as a caller whose threads differ, not served as the first thread; a
    caller with more threads than the daemon reads per call is refused too."""
    if how == "filtered-thread":
        _, out, err, _ = spawn_after(daemon, lambda: None, ["true"], in_thread=filter_this_thread)
        want = "different seccomp filters"
    else:
        _, out, err, _ = spawn_after(daemon, lambda: start_idle_threads(70), ["true"])
        want = "more than 64 threads"
    assert err is not None, f"{how}: the caller got a task"
    assert err["error"] == "io.zygote.Launcher.CallerConfined" and want in err["parameters"]["reason"], err


def test_a_few_threads_are_served(daemon):
    """The counterpart: a caller with a few unfiltered threads gets its task."""
    _, out, err, _ = spawn_after(daemon, lambda: start_idle_threads(8), ["true"], in_thread=lambda: None)
    assert err is None, err


# ---- scheduling, OOM score and umask ------------------------------------------------------------
SCHED_PROBE = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
m = os.umask(0); os.umask(m)
io = libc.syscall(252 if os.uname().machine == "x86_64" else 31, 1, 0)  # ioprio_get(WHO_PROCESS, self)
print(json.dumps({"nice": os.getpriority(os.PRIO_PROCESS, 0),
                  "oom": int(open("/proc/self/oom_score_adj").read()),
                  "ioclass": io >> 13, "iolevel": io & 7,
                  "cpus": sorted(os.sched_getaffinity(0)),
                  "policy": os.sched_getscheduler(0) & ~0x40000000,
                  "umask": m}))
"""

# The caller: nice 10, oom_score_adj 500, idle I/O class, CPU 0 only, umask 077, a batch or idle
# policy; and all of them at once.
SCHED_CALLERS = {
    "nice-10": ["nice", "-n", "10"],
    "oom-500": ["choom", "-n", "500", "--"],
    "ionice-idle": ["ionice", "-c", "3"],
    "ionice-be-7": ["ionice", "-c", "2", "-n", "7"],
    "cpu-0": ["taskset", "-c", "0"],
    "umask-077": ["sh", "-c", 'umask 077 && exec "$@"', "sh"],
    "sched-batch": ["chrt", "-b", "0"],
    "sched-idle": ["chrt", "-i", "0"],
    "all": ["nice", "-n", "10", "choom", "-n", "500", "--", "ionice", "-c", "3", "taskset", "-c", "0",
            "chrt", "-b", "0", "sh", "-c", 'umask 077 && exec "$@"', "sh"],
}

# I/O classes from most to least important: real time, best effort (none: by nice), idle.
IO_RANK = {1: 0, 2: 1, 0: 1, 3: 2}
# Policies from most to least important to the scheduler: FIFO/RR, OTHER, BATCH, IDLE.
POLICY_RANK = {1: 0, 2: 0, 0: 1, 3: 2, 5: 3}


@pytest.mark.parametrize("how", sorted(SCHED_CALLERS))
def test_task_is_never_more_important_than_its_caller(tiered, how):
    """A task gets its caller's nice value, OOM score adjustment, I/O priority, CPU affinity,
    scheduling policy and umask, or weaker ones: never the daemon's."""
    import json
    prefix = SCHED_CALLERS[how]
    mine = subprocess.run(prefix + ["python3", "-c", SCHED_PROBE], stdout=subprocess.PIPE, check=True,
                          env=dict(zytest.WORK_ENV), timeout=zytest.CALL_TIMEOUT)
    caller = json.loads(mine.stdout)
    r = run_client(tiered, ["python3", "-c", SCHED_PROBE], prefix=prefix)
    assert r.returncode == 0, r.stderr
    task = json.loads(r.stdout)
    assert task["nice"] >= caller["nice"], f"nice: the caller {caller['nice']}, its task {task['nice']}"
    assert task["oom"] >= caller["oom"], f"oom_score_adj: the caller {caller['oom']}, its task {task['oom']}"
    io_c, io_t = (IO_RANK[caller["ioclass"]], caller["iolevel"]), (IO_RANK[task["ioclass"]], task["iolevel"])
    if caller["ioclass"] == 0 and task["ioclass"] == 0:
        io_c, io_t = io_c[0], io_t[0]  # both follow their nice values, compared above
    assert io_t >= io_c, f"I/O priority: the caller {caller}, its task {task}"
    assert set(task["cpus"]) <= set(caller["cpus"]), f"CPUs: the caller {caller['cpus']}, its task {task['cpus']}"
    assert POLICY_RANK[task["policy"]] >= POLICY_RANK[caller["policy"]], f"policy: {caller} / {task}"
    assert task["umask"] & caller["umask"] == caller["umask"], f"umask: {caller['umask']:o} / {task['umask']:o}"


def test_profile_refusing_the_scheduling_calls_serves_from_the_load_tier(daemons, needs_root):
    """strict's filter refuses setpriority and the other calls of the worker's scheduling step,
    so its inherit tier cannot take a caller's scheduling: such a caller's task is forked by
    zygoted (the load tier) and still gets it; a caller scheduled as zygoted stays in the
    inherit tier (the control)."""
    d = daemons(tier="inherit")
    probe = ["cat", "/proc/self/stat"]
    base = os.nice(0)  # zygoted's and ours: the suite may itself run niced
    tiers = {}
    for niced in (False, True):
        def drop(niced=niced):
            if niced:
                os.nice(10)
        _, out, err, tier = spawn_after(d, drop, probe, extra={"profile": "strict"})
        assert err is None, err
        nice = int(out.rsplit(")", 1)[1].split()[16])  # field 19, counted after the command name
        assert nice == (min(base + 10, 19) if niced else base), f"niced={niced}: the task's nice value is {nice}"
        tiers[niced] = tier
    assert tiers == {False: "inherit", True: "load"}, tiers


UNPRIVILEGED_OOM = pytest.mark.xfail(strict=True, reason=(
    "an unprivileged zygoted's worker is not dumpable, so its /proc files are root's: it cannot write its "
    "oom_score_adj (SECURITY.md, known issues)"))


@pytest.mark.parametrize("how", ["nice-10", pytest.param("oom-500", marks=UNPRIVILEGED_OOM), "ionice-idle", "cpu-0",
                                 "umask-077", "sched-batch"])
def test_unprivileged_zygoted_carries_the_scheduling_it_may(daemons, needs_root, how):
    """An unprivileged zygoted serves its own user: the worker cannot make itself more
    important than zygoted, but may make itself less, so a caller less important than zygoted
    gets a task as unimportant as itself."""
    import json
    d = daemons(as_uid=NOBODY)
    prefix = SCHED_CALLERS[how]
    mine = subprocess.run(zytest.setpriv(NOBODY, NOGROUP) + prefix + ["python3", "-c", SCHED_PROBE],
                          stdout=subprocess.PIPE, check=True, env=dict(zytest.WORK_ENV),
                          timeout=zytest.CALL_TIMEOUT)
    caller = json.loads(mine.stdout)
    r = run_client(d, ["python3", "-c", SCHED_PROBE], prefix=prefix, uid=NOBODY, gid=NOGROUP)
    assert r.returncode == 0, r.stderr
    task = json.loads(r.stdout)
    assert task["nice"] >= caller["nice"] and task["oom"] >= caller["oom"], f"{caller} / {task}"
    assert set(task["cpus"]) <= set(caller["cpus"]), f"{caller} / {task}"
    assert task["umask"] & caller["umask"] == caller["umask"], f"{caller} / {task}"
    assert POLICY_RANK[task["policy"]] >= POLICY_RANK[caller["policy"]], f"{caller} / {task}"
    if caller["ioclass"] == 3:
        assert task["ioclass"] == 3, f"{caller} / {task}"


def calls_after(daemon, drop, calls):
    """after_drop() with each (method, parameters) of calls: [error name or None, error
    parameters, the task ids of a List]."""
    def body(conn):
        out = []
        for method, params in calls:
            r = conn.call("io.zygote.Launcher." + method, params, check=False)
            r.close_fds()
            out.append([r.error, r.parameters if r.error else None,
                        [t["id"] for t in r.parameters.get("tasks", [])] if method == "List" and not r.error else None])
        return out
    return after_drop(daemon, drop, body)


def test_calls_other_than_spawn_use_the_callers_identity_now(daemon):
    """A process that connected as root and then became nobody no longer has root's powers on
    that connection: another user's (root's) task is invisible to List, and Kill, State and Delete
    of it answer NoSuchTask; ReloadProfiles is refused; its own calls still work (GetStatus)."""
    L = "io.zygote.Launcher."
    with daemon.connect() as owner:
        first = owner.call_more(L + "Spawn", {"argv": ["sleep", "1000"], "id": "roots-task"})
        assert not first.error, dict(first)
        first.close_fds()
        try:
            res = calls_after(daemon, drop_to_nobody, [
                ("List", {}), ("State", {"id": "roots-task"}), ("Kill", {"id": "roots-task", "signal": 9}),
                ("Delete", {"id": "roots-task"}), ("ReloadProfiles", {}), ("GetStatus", {})])
            (lst, state, kill, delete, reload, status) = res
            assert lst[0] is None and "roots-task" not in lst[2], lst
            assert state[0] == L + "NoSuchTask", state
            assert kill[0] == L + "NoSuchTask", kill
            assert delete[0] == L + "NoSuchTask", delete
            assert reload[0] == L + "PermissionDenied", reload
            assert status[0] is None, status
            # the task was left alone (asked on another connection: the owner's is in its Spawn)
            with daemon.connect() as admin:
                assert admin.call(L + "State", {"id": "roots-task"}).parameters["task"]["state"] == "running"
        finally:
            with daemon.connect() as admin:
                admin.call(L + "Kill", {"id": "roots-task", "signal": 9}, check=False)
            owner.recv()  # the Spawn's final reply: the exit


@pytest.mark.timeout(60)
def test_container_wide_filter_admits_its_callers(bins, needs_root, tmp_path):
    """zygoted as in a default systemd-nspawn or Docker container: a seccomp filter on the pid
    namespace's init, inherited by zygoted and every caller. A caller with exactly that filter
    is served (its task inherits the same one from zygoted, under its profile's); one with a
    filter of its own on top is still refused. Without the shared filter the first is refused
    too (test_callers_own_filter_is_kept)."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1) (util-linux)")
    d = zytest.Daemon(bins, str(tmp_path))
    wrap = ["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "seccomp_wrap.py")]
    lc = f"{bins['launchctl']} --socket {d.socket}"
    script = (f"{shlex.join(d.command())} 2>{tmp_path}/zygoted.log & z=$!; "
              f"for i in $(seq 100); do [ -S {d.socket} ] && break; sleep 0.05; done; "
              f"{lc} run -- grep -E '^Seccomp(_filters)?:' /proc/self/status; echo shared=$?; "
              f"{shlex.join(wrap)} --keep-privs {lc} run -- true; echo own=$?; kill $z; wait $z")
    # the filtered process is pid 1 of a new pid namespace, as a container's init is
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", *wrap, "--keep-privs", "/bin/sh", "-c", script],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=45)
    out = r.stdout
    assert "shared=0" in out, (out, r.stderr, open(tmp_path / "zygoted.log").read())
    filters = int(re.search(r"Seccomp_filters:\s+(\d+)", out).group(1))
    assert "Seccomp:\t2" in out and filters >= 2, f"the task lacks the shared filter or its profile's: {out}"
    assert "own=1" in out and "CallerConfined" in r.stderr, (out, r.stderr)
