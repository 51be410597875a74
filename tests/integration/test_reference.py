# SPDX-License-Identifier: MIT
"""Reference processes: SIGKILL one, and its profile keeps serving (from the load tier while the
reference is down) and comes back with a new reference."""
import os
import select
import shutil
import signal
import time

import zytest

L = "io.zygote.Launcher."


def wait_for(cond, what, timeout=30.0):
    """Polls cond() with a deadline (a condition, not a sleep: returns as soon as it holds)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        select.select([], [], [], 0.05)


def check_sandboxed_spawn(d):
    """Spawns cat in default; returns its tier after checking its sandbox."""
    with d.connect() as c:
        t = zytest.spawn(c, ["cat"])
        try:
            st = zytest.proc_status(t.pid)
            os.write(t.stdin, b"ok\n")
            out, final = t.finish()
        finally:
            t.cleanup()
    assert out == b"ok\n" and final["exitCode"] == 0
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
    assert int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK, st
    return t.tier


def reference_of(d, name="default"):
    p = d.profiles()[name]
    return p.get("referencePid"), p


def test_reference_is_sandboxed(daemon):
    pid, p = reference_of(daemon)
    assert p["tier"] == "inherit" and pid
    st = zytest.proc_status(pid)
    assert int(st["PPid"]) == daemon.proc.pid
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1"


def test_sigkill_reference_comes_back(daemon):
    old, _ = reference_of(daemon)
    assert old
    os.kill(old, signal.SIGKILL)
    assert zytest.pidfd_wait_exit(old, 10)
    # Whether or not the daemon has noticed yet, this spawn must not be lost.
    assert check_sandboxed_spawn(daemon) in ("inherit", "load")
    new = wait_for(lambda: (lambda r: r[0] if r[0] and r[0] != old and r[1]["tier"] == "inherit" else None)(
        reference_of(daemon)), "a new reference process")
    st = zytest.proc_status(new)
    assert int(st["PPid"]) == daemon.proc.pid and st["Seccomp"] == "2"
    assert check_sandboxed_spawn(daemon) == "inherit"
    assert daemon.alive()


def test_reference_down_serves_from_load(daemons, bins, needs_root):
    """With the helper gone, the restart cannot succeed: the profile is deterministically served
    from the load tier, with the same sandbox, until the helper is back."""
    helper_dir = daemons.workdir()
    helper = os.path.join(helper_dir, "zygote-ref")
    shutil.copy2(bins["zygote-ref"], helper)
    d = daemons(env={"ZYGOTE_REF_HELPER": helper})
    old, p = reference_of(d)
    assert p["tier"] == "inherit" and old

    os.rename(helper, helper + ".away")
    os.kill(old, signal.SIGKILL)
    p = wait_for(lambda: (lambda r: r[1] if r[1]["tier"] == "load" else None)(reference_of(d)),
                 "the load tier while the reference is down")
    assert p.get("referencePid") in (None, 0), p
    assert p["tierReason"], p
    assert check_sandboxed_spawn(d) == "load"
    assert check_sandboxed_spawn(d) == "load"
    # nonet's reference was never touched.
    assert d.profiles()["nonet"]["tier"] == "inherit"

    os.rename(helper + ".away", helper)
    new = wait_for(lambda: (lambda r: r[0] if r[0] and r[0] != old and r[1]["tier"] == "inherit" else None)(
        reference_of(d)), "the reference restarted with backoff", timeout=90)
    assert zytest.proc_status(new)["Seccomp"] == "2"
    assert check_sandboxed_spawn(d) == "inherit"
