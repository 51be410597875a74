# SPDX-License-Identifier: MIT
"""A task reaches no process outside its sandbox: one pid namespace per profile (docs/SECURITY.md,
"Other processes of the caller").

A task runs as its caller's uid: without its own pid namespace it could ptrace (no Yama here),
process_vm_writev into or kill its caller's unsandboxed processes, which the default and nonet
profiles allow as Docker's does. Each test starts the caller's unsandboxed `sleep`, has a task of
the same uid try to reach it, and checks the call failed with ESRCH and the sleep lives. The
forced fallback (ZYGOTE_DISABLE_FEATURES=pid_namespace) shows the same task reaching it: the
tests can tell.
"""
import ctypes
import os
import signal
import subprocess

import pytest

import zytest
from zytest import NOBODY, NOGROUP, OTHER_UID, OTHER_GID

L = "io.zygote.Launcher."
ESRCH = 3
NO_PIDNS = {"ZYGOTE_DISABLE_FEATURES": "pid_namespace"}

# Each attempt prints "<return value> <errno>"; the victim's pid is {pid}. libc through ctypes:
# the task is a plain python3 of the host.
PRELUDE = "import ctypes; libc = ctypes.CDLL(None, use_errno=True); pid = {pid}\n"
ATTEMPTS = {
    # PTRACE_ATTACH (16); detached again at once if it worked, so the victim is not left stopped
    "ptrace": "r = libc.ptrace(16, pid, 0, 0); e = ctypes.get_errno(); print(r, e)\n"
              "r == 0 and libc.ptrace(17, pid, 0, 0)\n",
    # one byte of ours over one byte of its stack's top page
    "process_vm_writev": (
        "class iovec(ctypes.Structure): _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
        "buf = ctypes.create_string_buffer(1)\n"
        "local = iovec(ctypes.addressof(buf), 1)\n"
        "remote = iovec(0x1000, 1)\n"
        "r = libc.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0); "
        "print(r, ctypes.get_errno())\n"),
    "kill": "r = libc.kill(pid, 9); print(r, ctypes.get_errno())\n",
    "tkill": "r = libc.syscall(200, pid, 9); print(r, ctypes.get_errno())\n",  # x86_64 tkill
}


def check_x86_64():
    if os.uname().machine != "x86_64":
        pytest.skip("the tkill number used here is x86_64's")


def has_pidns(d):
    return all(p.get("initPid") for p in d.profiles().values())


@pytest.fixture(params=["inherit", "load"])
def tiered(request, daemons, needs_root):
    d = daemons(tier=request.param)
    if not has_pidns(d):
        pytest.skip(f"no pid namespace here: {d.log()}")
    return d


def victim():
    """The caller's unsandboxed process: a sleep of the caller's uid."""
    return subprocess.Popen(zytest.setpriv(NOBODY, NOGROUP) + ["sleep", "600"])


def attempt(d, call, pid, tier=None, profile="default"):
    """Runs the attempt in a task of a caller of uid nobody; returns (rc, errno) and the tier."""
    with d.connect_as(NOBODY, NOGROUP) as c:
        out, final, got_tier = zytest.run_task(c, ["python3", "-c", PRELUDE.format(pid=pid) + ATTEMPTS[call]],
                                               profile=profile)
    assert final["exitCode"] == 0, (final, out)
    rc, err = out.decode().split()[:2]
    return int(rc), int(err), got_tier


@pytest.mark.parametrize("call", sorted(ATTEMPTS))
@pytest.mark.parametrize("profile", ["default", "nonet"])
def test_task_cannot_reach_its_callers_other_processes(tiered, call, profile):
    check_x86_64()
    v = victim()
    try:
        rc, err, tier = attempt(tiered, call, v.pid, profile=profile)
        assert tier == tiered.tier, f"asked for the {tiered.tier} tier, served by {tier}"
        assert not zytest.pidfd_wait_exit(v.pid, 0.2), f"a {tier} task killed its caller's process with {call}"
        assert zytest.proc_status(v.pid)["State"][0] == "S", f"{call} left the victim {zytest.proc_status(v.pid)}"
        assert (rc, err) == (-1, ESRCH), f"{call} on the caller's process from a {tier} task: {rc}, errno {err}"
    finally:
        v.kill()
        v.wait()


def visible(d, uid, gid):
    """What a task of uid sees in /proc: {pid: uid}, and its own pid there."""
    code = ("import os\n"
            "seen = {}\n"
            "for p in os.listdir('/proc'):\n"
            "    if p.isdigit():\n"
            "        try:\n"
            "            seen[p] = open(f'/proc/{p}/status').read().split('Uid:')[1].split()[0]\n"
            "        except OSError:\n"
            "            pass\n"
            "print(os.getpid(), ' '.join(f'{k}:{v}' for k, v in seen.items()))\n")
    with d.connect_as(uid, gid) as c:
        out, final, _ = zytest.run_task(c, ["python3", "-c", code])
    assert final["exitCode"] == 0, final
    me, *rest = out.decode().split()
    return {int(k): int(v) for k, v in (x.split(":") for x in rest)}, int(me)


def test_proc_shows_only_the_callers_own_tasks(tiered):
    """/proc of a task is its pid namespace's (hidepid=invisible): the task sees itself and its
    own user's tasks, never the host's processes, nor another user's task running at the same
    time in the same profile, nor the namespace's init (root)."""
    v = victim()
    with tiered.connect() as root_conn:
        other = zytest.spawn(root_conn, ["sleep", "600"], stdin=False, stdout=False,
                             extra={"user": str(OTHER_UID), "group": str(OTHER_GID)})
        try:
            seen, me = visible(tiered, NOBODY, NOGROUP)
        finally:
            os.kill(other.pid, signal.SIGKILL)
            other.finish()
            other.cleanup()
    v.kill()
    v.wait()
    assert me in seen, f"the task does not see itself in /proc: {seen}"
    assert set(seen.values()) == {NOBODY}, f"a task of uid {NOBODY} sees other users' processes: {seen}"
    assert v.pid not in seen and os.getpid() not in seen, f"the task sees host processes: {seen}"
    assert me < 1000 and len(seen) < 10, f"not a pid namespace of the task's own: pid {me}, {seen}"


def test_caller_with_its_own_mount_namespace_gets_its_own_proc(tiered):
    """A caller in a mount namespace of its own: its task joins it (test_confinement.py) and still
    gets a /proc of its pid namespace, on a private copy (nothing is mounted in the caller's)."""
    script = (f'{tiered.bins["launchctl"]} --socket {tiered.socket} run -- '
              f'sh -c "ls -d /proc/[0-9]* | wc -l; readlink /proc/self" && grep -c " /proc proc " /proc/self/mounts')
    r = subprocess.run(["unshare", "-m", "--propagation", "shared", "sh", "-c", script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV),
                       timeout=zytest.CALL_TIMEOUT)
    assert r.returncode == 0, r.stderr
    n, self_pid, caller_procs = r.stdout.decode().split()
    assert int(n) < 10 and int(self_pid) < 1000, f"the task sees the host's /proc: {r.stdout}"
    assert caller_procs == "1", f"the task's /proc was mounted in its caller's namespace too: {r.stdout}"


def test_caller_that_sees_another_procfs_is_refused(daemon):
    """A procfs mounted elsewhere in the caller's mount namespace would show its task the host's
    processes: refused, naming the mount."""
    if not has_pidns(daemon):
        pytest.skip("no pid namespace here")
    script = (f'mount -t proc proc /mnt && exec {daemon.bins["launchctl"]} --socket {daemon.socket} '
              f'run -- true')
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV),
                       timeout=zytest.CALL_TIMEOUT)
    assert r.returncode != 0, "a caller that sees the host's procfs on /mnt got a task"
    err = r.stderr.decode()
    assert "CallerConfined" in err and "procfs outside /proc (on /mnt)" in err, err


def test_task_survives_a_zygoted_restart(daemons, needs_root):
    """The init of a profile's namespace outlives zygoted: its tasks keep running across a stop
    and start, and it leaves after the last of them."""
    d = daemons(tier="load")
    if not has_pidns(d):
        pytest.skip("no pid namespace here")
    init = d.profiles()["default"]["initPid"]
    init_fd = os.pidfd_open(init)
    conn = d.connect()
    t = zytest.spawn(conn, ["cat"])
    try:
        assert d.stop() == 0, d.log()
        assert not zytest.wait_readable(t.pidfd, 0), "the task died with zygoted"
        assert not zytest.wait_readable(init_fd, 0), "the init left with zygoted, its task still running"
        d2 = daemons(start=False)
        d2.dir, d2.socket, d2.tier = d.dir, d.socket, "load"
        d2.logpath = os.path.join(d.dir, "zygoted2.log")
        d2.start()
        assert d2.profiles()["default"]["initPid"] != init, "the new zygoted reused the old init"
        with d2.connect() as c:
            out, final, _ = zytest.run_task(c, ["echo", "served"])
        assert out == b"served\n" and final["exitCode"] == 0
        os.write(t.stdin, b"still here\n")
        t.close_stdin()
        assert zytest.read_all(t.stdout) == b"still here\n"
        t.stdout = None
        assert zytest.wait_readable(t.pidfd, 30), "the task did not exit"
        assert zytest.wait_readable(init_fd, 30), "the init outlived its namespace's last task"
    finally:
        t.cleanup()
        conn.close()
        os.close(init_fd)


def test_killed_init_is_replaced(daemons, needs_root):
    """An init killed from outside (no task can: it handles no signal) takes its namespace's tasks
    with it; zygoted starts another and goes on serving every tier from it."""
    d = daemons(tier="inherit")
    if not has_pidns(d):
        pytest.skip("no pid namespace here")
    init = d.profiles()["default"]["initPid"]
    os.kill(init, signal.SIGKILL)
    zytest.wait_for(lambda: d.profiles()["default"].get("initPid") not in (None, init), "a new init")
    with d.connect() as c:
        for _ in range(3):
            out, final, tier = zytest.run_task(c, ["sh", "-c", "readlink /proc/self"])
            assert final["exitCode"] == 0 and int(out) < 1000, (out, final, tier)
    assert "its pid namespace died" in d.log(), d.log()


def test_forced_fallback_logs_and_serves(daemons, needs_root):
    """ZYGOTE_DISABLE_FEATURES=pid_namespace (what an unprivileged zygoted or a kernel without
    CONFIG_PID_NS gets): said once in the log, no init, and tasks share zygoted's pid namespace,
    so the same task now reaches its caller's process (signal 0 only): the weakness
    docs/SECURITY.md states for that case, and the proof that the tests above can see an escape."""
    d = daemons(env=NO_PIDNS)
    log = d.log()
    assert log.count("tasks share zygoted's pid namespace") == 1, log
    assert "disabled by ZYGOTE_DISABLE_FEATURES" in log, log
    assert not any(p.get("initPid") for p in d.profiles().values())
    v = victim()
    try:
        code = PRELUDE.format(pid=v.pid) + "r = libc.kill(pid, 0); print(r, ctypes.get_errno())\n"
        with d.connect_as(NOBODY, NOGROUP) as c:
            out, final, _ = zytest.run_task(c, ["python3", "-c", code])
        assert final["exitCode"] == 0 and out.split()[0] == b"0", (out, final)
    finally:
        v.kill()
        v.wait()
