# SPDX-License-Identifier: MIT
"""The eBPF path of launchctl run --record (zygoted's tracer, daemon/record-bpf.c) against the
user-notification path: which one records (auto, forced either way, switched off in zygoted),
that the tracer sees the task from its execve on and nothing else, that it adds nothing to the
task, and that a refusal leaves nothing behind. The real-program tests of test_record.py run
through both paths (ZYTEST_RECORD_VIA)."""
import os
import subprocess
import threading

import pytest

import zytest
from test_record import TIMEOUT, profile_names
from zytest import NOBODY


def need_tracer(daemon):
    """Skips, with zygoted's reason, where it has no tracer (not root, no BTF, an old kernel)."""
    rec = daemon.status()["recording"]
    if not rec["bpf"]:
        pytest.skip(f"zygoted has no eBPF tracer: {rec['reason']}")
    return rec


def run_record(daemon, path, *cmd, via=None, uid=NOBODY):
    opts = ["--record-via", via] if via else []
    return daemon.launchctl("run", "--record", path, *opts, "--", *cmd, uid=uid, timeout=TIMEOUT)


@pytest.fixture
def workdir():
    d = zytest.make_workdir()
    os.chmod(d, 0o777)
    yield d
    zytest.remove_workdir(d)


def test_auto_takes_the_tracer_and_notify_can_be_asked_for(daemon, workdir):
    need_tracer(daemon)
    path = os.path.join(workdir, "rec.json")
    r = run_record(daemon, path, "true")
    assert r.returncode == 0 and b"recorded in" in r.stderr and b"(eBPF)" in r.stderr, r.stderr
    r = run_record(daemon, path, "true", via="notify")
    if r.returncode == 77:
        pytest.skip(r.stderr.decode().strip())
    assert r.returncode == 0 and b"merged into" in r.stderr and b"(user notification)" in r.stderr, r.stderr
    assert daemon.status()["recording"]["active"] == 0


def test_switched_off_falls_back_or_is_refused_before_the_run(daemons, workdir):
    """ZYGOTE_DISABLE_FEATURES=record_bpf: GetStatus says why, auto records through user
    notification, --record-via bpf exits 77 with the reason and CMD never runs."""
    d = daemons(env={"ZYGOTE_DISABLE_FEATURES": "record_bpf"})
    rec = d.status()["recording"]
    assert not rec["bpf"] and "ZYGOTE_DISABLE_FEATURES" in rec["reason"], rec
    path, marker = os.path.join(workdir, "rec.json"), os.path.join(workdir, "ran")
    r = run_record(d, path, "touch", marker, via="bpf")
    assert r.returncode == 77 and b"disabled by ZYGOTE_DISABLE_FEATURES" in r.stderr, r.stderr
    assert not os.path.exists(marker) and not os.path.exists(path)
    r = run_record(d, path, "touch", marker)
    if r.returncode == 77:
        pytest.skip(r.stderr.decode().strip())
    assert r.returncode == 0 and b"(user notification)" in r.stderr, r.stderr
    assert os.path.exists(marker)


def test_unprivileged_zygoted_has_no_tracer(daemons, workdir):
    if not zytest.is_root():
        pytest.skip("needs root to start a zygoted as another user")
    d = daemons(as_uid=NOBODY)
    rec = d.status()["recording"]
    assert not rec["bpf"] and "not run as root" in rec["reason"], rec


def test_from_execve_on_only(daemon, workdir):
    """The worker's own steps before its gate (ids, capabilities, no_new_privs, its filter) are
    not the command's: they are not in its profile; execve, the first call of the command, is."""
    need_tracer(daemon)
    # the worker's steps race with the daemon's start of the recording (a pool worker, forked
    # ahead, runs them as soon as it has the plan): several runs, each apart
    for i in range(8):
        path = os.path.join(workdir, f"rec{i}.json")
        r = run_record(daemon, path, "true")
        assert r.returncode == 0, r.stderr
        _, names = profile_names(path)
        assert "execve" in names and "exit_group" in names, names
        assert not names & {"setresuid", "setresgid", "setgroups", "capset", "prctl", "seccomp", "close_range"}, names


def test_recordings_apart(daemon, workdir):
    """Two recordings at once, and a task not recorded beside them: each profile holds its own
    task's calls, not the other's (mkdir is only B's, mknodat only the unrecorded task's)."""
    need_tracer(daemon)
    fifo, made, node = (os.path.join(workdir, n) for n in ("fifo", "made", "node"))
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    a, b = os.path.join(workdir, "a.json"), os.path.join(workdir, "b.json")
    cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--record", a, "--",
           "sh", "-c", f"echo ready; cat {fifo}"]
    # A runs, recorded, until B writes to the fifo; meanwhile an unrecorded task and B run
    pa = subprocess.Popen(zytest.setpriv(NOBODY, NOBODY) + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=zytest.WORK_ENV, cwd="/")
    try:
        assert pa.stdout.readline() == b"ready\n"
        plain = daemon.launchctl("run", "--", "python3", "-c", f"import os; os.mkfifo({node!r})", uid=NOBODY)
        rb = run_record(daemon, b, "sh", "-c", f"mkdir {made} && echo hi > {fifo}")
        out, err = pa.communicate(timeout=TIMEOUT)
    finally:
        if pa.poll() is None:
            pa.kill()
            pa.wait()
    assert plain.returncode == 0 and os.path.exists(node), plain.stderr
    assert rb.returncode == 0 and pa.returncode == 0 and out == b"hi\n", (rb.stderr, err)
    assert b"(eBPF)" in err and b"(eBPF)" in rb.stderr
    _, na = profile_names(a)
    _, nb = profile_names(b)
    assert "mkdir" in nb and "mkdir" not in na and "mknodat" not in na | nb, (na, nb)


def test_refused_spawn_records_nothing(daemon, workdir):
    """A command that cannot run: launchctl's status, no file, no recording left under way."""
    need_tracer(daemon)
    path = os.path.join(workdir, "rec.json")
    r = run_record(daemon, path, "/nonexistent/cmd")
    assert r.returncode == 127, r.stderr
    assert not os.path.exists(path)
    assert daemon.status()["recording"]["active"] == 0


def test_record_fd_and_record_checked(daemon):
    """launchctl run --record-fd wants an open fd above 2; Spawn refuses record with hold."""
    for bad in (["--record-fd", "1"], ["--record-fd", "x"], ["--record-fd", "99"]):
        r = daemon.launchctl("run", *bad, "--", "true")
        assert r.returncode == 2, (bad, r.stderr)
    with daemon.connect() as c:
        rep = c.call("io.zygote.Launcher.Spawn", {"argv": ["true"], "record": True, "hold": True}, check=False)
    assert rep.error == "org.varlink.service.InvalidParameter" and rep.parameters["parameter"] == "record", rep


def test_recordings_per_user_bounded(daemon, workdir):
    """A user holds 8 eBPF recordings at most (the tracer has 64 for everyone): the ninth is
    LimitExceeded before its command runs; root's are not counted against it."""
    need_tracer(daemon)
    fifo, marker = os.path.join(workdir, "fifo"), os.path.join(workdir, "ran")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    held = []
    try:
        for i in range(8):
            cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--record",
                   os.path.join(workdir, f"{i}.json"), "--record-via", "bpf", "--", "sh", "-c", f"echo ready; cat {fifo}"]
            p = subprocess.Popen(zytest.setpriv(NOBODY, NOBODY) + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=zytest.WORK_ENV, cwd="/")
            held.append(p)
            assert p.stdout.readline() == b"ready\n"
        assert daemon.status()["recording"]["active"] == 8
        r = run_record(daemon, os.path.join(workdir, "9.json"), "touch", marker, via="bpf")
        assert r.returncode == 1 and b"recordings_per_user" in r.stderr, r.stderr
        assert not os.path.exists(marker)
        r = run_record(daemon, os.path.join(workdir, "root.json"), "true", via="bpf", uid=None)
        assert r.returncode == 0 and b"(eBPF)" in r.stderr, r.stderr
        # each reader ends once a writer comes and goes
        with open(fifo, "w") as f:
            f.write("x")
        for p in held:
            p.communicate(timeout=TIMEOUT)
    finally:
        for p in held:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert daemon.status()["recording"]["active"] == 0


@pytest.mark.parametrize("via", ["bpf", "notify"])
def test_descendant_outliving_the_task_is_recorded(daemon, workdir, via):
    """A process the command leaves behind (a daemon it started) is recorded until it exits, and
    the file is written then, through either path: the command's exit alone does not end it."""
    if via == "bpf":
        need_tracer(daemon)
    fifo, made = os.path.join(workdir, "fifo"), os.path.join(workdir, "made")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    path = os.path.join(workdir, "rec.json")
    cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--record", path, "--record-via", via, "--",
           "sh", "-c", f"(cat {fifo} >/dev/null; mkdir {made}) >/dev/null 2>&1 </dev/null & echo left"]
    p = subprocess.Popen(zytest.setpriv(NOBODY, NOBODY) + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=zytest.WORK_ENV, cwd="/")
    try:
        assert p.stdout.readline() == b"left\n"
        # sh has exited (or is about to); its child waits on the fifo: nothing written yet
        assert p.poll() is None and not os.path.exists(path)
        with open(fifo, "w") as f:
            f.write("go")
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode == 77:
        pytest.skip(err.decode().strip())
    assert p.returncode == 0 and os.path.isdir(made), err
    _, names = profile_names(path)
    assert "mkdir" in names, names


@pytest.mark.parametrize("via", ["bpf", "notify"])
def test_exec_from_a_thread(daemon, workdir, via):
    """A thread other than the leader execs (it takes the leader's id): what the new program
    calls is recorded, and the recording ends when it exits."""
    if via == "bpf":
        need_tracer(daemon)
    made, path = os.path.join(workdir, "made"), os.path.join(workdir, "rec.json")
    script = ("import os, threading\n"
              f"t = threading.Thread(target=os.execv, args=('/bin/mkdir', ['mkdir', {made!r}]))\n"
              "t.start(); t.join()\n")
    r = run_record(daemon, path, "python3", "-I", "-c", script, via=via)
    if r.returncode == 77:
        pytest.skip(r.stderr.decode().strip())
    assert r.returncode == 0 and os.path.isdir(made), r.stderr
    _, names = profile_names(path)
    assert {"mkdir", "execve"} <= names, names
