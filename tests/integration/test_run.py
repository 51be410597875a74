# SPDX-License-Identifier: MIT
"""launchctl against a real zygoted: run's exit codes and stdio, --detach with wait/kill/ps,
status --json, reload; as root and as uid 65534 (setpriv)."""
import json
import os
import signal
import subprocess

import pytest

import zytest
from zytest import NOBODY


@pytest.mark.parametrize("uid", [None, NOBODY], ids=["root", "nobody"])
def test_run_exit_codes(daemon, uid):
    notexec = os.path.join(daemon.dir, "not-executable.sh")
    with open(notexec, "w") as f:
        f.write("#!/bin/sh\necho should not run\n")
    os.chmod(notexec, 0o644)
    cases = [
        (["true"], 0),
        (["sh", "-c", "exit 3"], 3),
        (["sh", "-c", "exit 255"], 255),
        (["/nonexistent/zygote-cmd"], 127),
        (["no-such-command-zygote"], 127),
        ([notexec], 126),
        (["/etc"], 126),
        (["sh", "-c", "kill -TERM $$"], 128 + signal.SIGTERM),
        (["sh", "-c", "kill -KILL $$"], 128 + signal.SIGKILL),
        (["sh", "-c", "kill -SEGV $$"], 128 + signal.SIGSEGV),
    ]
    for argv, code in cases:
        r = daemon.launchctl("run", "--", *argv, uid=uid)
        assert r.returncode == code, (argv, r.returncode, r.stderr)
        assert b"should not run" not in r.stdout
        if code in (126, 127):
            assert r.stderr.strip(), f"{argv}: no message for exit {code}"


@pytest.mark.parametrize("uid", [None, NOBODY], ids=["root", "nobody"])
def test_run_passes_stdio(daemon, uid):
    data = os.urandom(1 << 20)  # more than a pipe holds: streamed both ways
    r = daemon.launchctl("run", "--", "cat", input=data, uid=uid)
    assert r.returncode == 0, r.stderr
    assert r.stdout == data
    r = daemon.launchctl("run", "--", "sh", "-c", "echo to-err >&2; echo to-out", uid=uid)
    assert r.stdout == b"to-out\n" and b"to-err" in r.stderr
    r = daemon.launchctl("run", "--", "id", "-u", uid=uid)
    assert r.stdout.decode().strip() == str(uid or 0)
    # A filtered, capability-less task when not root.
    r = daemon.launchctl("run", "--", "grep", "-E", "^(Seccomp|NoNewPrivs|CapEff|CapBnd):", "/proc/self/status",
                         uid=uid)
    st = dict(line.split(":\t") for line in r.stdout.decode().splitlines())
    assert st["Seccomp"] == "2" and int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK
    if uid:
        assert int(st["CapEff"], 16) == 0 and st["NoNewPrivs"] == "1"


def test_run_environment(daemon):
    r = daemon.launchctl("run", "--env", "ZY_TEST=42", "--", "sh", "-c", 'echo "$ZY_TEST:$HOME"',
                         env={"HOME": "/should/not/leak"})
    assert r.stdout == b"42:\n", r.stdout


def popen_detached(d, *args, uid=None):
    """launchctl run --detach with a stdin pipe we hold (so that cat keeps running) and stdout and
    stderr in files (a detached task keeps launchctl's stdio: a pipe would not see EOF)."""
    r_fd, w_fd = os.pipe2(os.O_CLOEXEC)
    out = os.path.join(d.dir, f"detach-{os.urandom(4).hex()}.out")
    cmd = [d.bins["launchctl"], "--socket", d.socket, "run", "--detach", *args]
    if uid is not None:
        cmd = zytest.setpriv(uid, uid) + cmd
    with open(out, "wb") as f, open(out + ".err", "wb") as ferr:
        p = subprocess.run(cmd, stdin=r_fd, stdout=f, stderr=ferr, timeout=60, env=zytest.WORK_ENV, cwd="/")
    os.close(r_fd)
    with open(out, "rb") as f, open(out + ".err", "rb") as ferr:
        printed = f.read()
        p.stderr = ferr.read()
    return p, printed, w_fd


@pytest.mark.parametrize("uid", [None, NOBODY], ids=["root", "nobody"])
def test_detach_wait_kill_ps(daemon, uid):
    # A detached task that exits by itself: wait gives its status, even after the exit.
    p, printed, w = popen_detached(daemon, "--id", "d-exit", "--", "sh", "-c", "exit 5", uid=uid)
    os.close(w)
    assert p.returncode == 0 and printed == b"d-exit\n", (p.stderr, printed)
    r = daemon.launchctl("wait", "d-exit", uid=uid)
    assert r.returncode == 5, r.stderr
    assert daemon.launchctl("delete", "d-exit", uid=uid).returncode == 0

    # A detached task that runs until killed.
    p, printed, w = popen_detached(daemon, "--", "cat", uid=uid)
    try:
        assert p.returncode == 0, p.stderr
        tid = printed.decode().strip()
        assert tid
        ps = daemon.launchctl("ps", uid=uid)
        assert ps.returncode == 0
        rows = [line.split() for line in ps.stdout.decode().splitlines()[1:]]
        row = [x for x in rows if x[0] == tid]
        assert row, ps.stdout
        pid = int(row[0][1])
        assert row[0][2] == "running" and "cat" in row[0]
        assert zytest.proc_status(pid)["Uid"].split()[0] == str(uid or 0)
        js = json.loads(daemon.launchctl("ps", "--json", uid=uid).stdout)
        assert any(t["id"] == tid and t["pid"] == pid for t in (js["tasks"] if isinstance(js, dict) else js))

        r = daemon.launchctl("kill", tid, uid=uid)
        assert r.returncode == 0, r.stderr
        r = daemon.launchctl("wait", tid, uid=uid)
        assert r.returncode == 128 + signal.SIGTERM, r.stderr
        assert daemon.launchctl("kill", tid, uid=uid).returncode != 0, "killing a stopped task succeeded"
        assert daemon.launchctl("delete", tid, uid=uid).returncode == 0
        assert daemon.launchctl("wait", tid, uid=uid).returncode == 1
    finally:
        os.close(w)


def test_nonroot_cannot_touch_roots_tasks(daemon):
    p, printed, w = popen_detached(daemon, "--id", "roots", "--", "cat")
    try:
        assert p.returncode == 0
        ps = daemon.launchctl("ps", uid=NOBODY)
        assert b"roots" not in ps.stdout
        for verb in (["kill", "roots"], ["kill", "roots", "KILL"], ["wait", "roots"], ["state", "roots"],
                     ["delete", "roots"]):
            r = daemon.launchctl(*verb, uid=NOBODY)
            assert r.returncode == 1, (verb, r.returncode, r.stderr)
        st = daemon.launchctl("state", "roots")
        assert b"running" in st.stdout
        assert b"roots" in daemon.launchctl("ps").stdout
        r = daemon.launchctl("run", "--user", "root", "--", "true", uid=NOBODY)
        assert r.returncode == 1 and b"permission denied" in r.stderr.lower(), r.stderr
    finally:
        os.close(w)
    assert daemon.launchctl("wait", "roots").returncode == 0


def test_status_json(daemon):
    r = daemon.launchctl("status", "--json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["features"] == {"clone_filter": False, "capbset_drop_mask": False}
    profiles = {p["name"]: p for p in st["profiles"]}
    assert {"default", "nonet", "strict"} <= set(profiles)
    for name, p in profiles.items():
        assert p["tier"] in ("inherit", "load"), p
        assert isinstance(p["bpf_instructions"], int) and p["bpf_instructions"] > 0, p
        if p["tier"] == "inherit":
            ref = p["reference_pid"]
            assert isinstance(ref, int) and ref > 0, p
            s = zytest.proc_status(ref)
            assert int(s["PPid"]) == daemon.proc.pid and s["Seccomp"] == "2", (name, s)
    assert profiles["default"]["tier"] == "inherit" and profiles["nonet"]["tier"] == "inherit"
    # The human form says the same.
    text = daemon.launchctl("status").stdout.decode()
    assert "SECCOMP_CLONE_FILTER no" in text and "PR_CAPBSET_DROP_MASK no" in text
    # As nobody too (reading the status is not a privilege).
    assert daemon.launchctl("status", "--json", uid=NOBODY).returncode == 0


def test_reload(daemon):
    r = daemon.launchctl("reload")
    assert r.returncode == 0, r.stderr
    assert b"default" in r.stdout
    r = daemon.launchctl("reload", uid=NOBODY)
    assert r.returncode == 1 and b"permission denied" in r.stderr.lower(), r.stderr
    assert daemon.launchctl("run", "--", "true").returncode == 0
