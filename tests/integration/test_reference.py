# SPDX-License-Identifier: MIT
"""Reference processes: SIGKILL one, and its profile keeps serving (from the load tier while the
reference is down) and comes back with a new reference."""
import json
import os
import shutil
import signal

import pytest

import zytest
from zytest import wait_for

L = "io.zygote.Launcher."


def check_sandboxed_spawn(d):
    """Spawns cat in default; returns its tier after checking its sandbox."""
    with d.connect() as c:
        st, out, final, tier = zytest.spawn_and_status(c, ["cat"], b"ok\n")
    assert out == b"ok\n" and final["exitCode"] == 0
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
    assert int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK, st
    # No ignored or blocked signal from the daemon or the reference (whose workers skip the
    # reset when it had none to give them).
    assert (st["SigIgn"], st["SigBlk"]) == ("0000000000000000",) * 2, st
    return tier


def reference_of(d, name="default"):
    p = d.profiles()[name]
    return p.get("referencePid"), p


def test_reference_is_sandboxed(daemon):
    pid, p = reference_of(daemon)
    assert p["tier"] == "inherit" and pid
    st = zytest.proc_status(pid)
    assert int(st["PPid"]) == daemon.proc.pid
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1"
    # It dropped what its profile's workers drop, once for all of them.
    assert int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK, st


def test_dropped_capabilities_in_every_tier(daemons, needs_root):
    """A request's dropCapabilities leave the task's bounding set whoever forks it: in the inherit
    tier the worker starts from its reference's set (the profile's) and drops only these."""
    CAP_NET_RAW, CAP_KILL = 13, 5
    want = zytest.DOCKER_CAPS_MASK & ~(1 << CAP_NET_RAW) & ~(1 << CAP_KILL)
    for tier in ("inherit", "load"):
        d = daemons(tier=tier)
        with d.connect() as c:
            st, out, final, got = zytest.spawn_and_status(c, ["cat"], b"ok\n",
                                                          extra={"dropCapabilities": ["CAP_NET_RAW", "CAP_KILL"]})
        assert got == tier and out == b"ok\n" and final["exitCode"] == 0
        assert int(st["CapBnd"], 16) == want, (tier, st["CapBnd"])
        # and a request that drops nothing more still gets the profile's set
        assert check_sandboxed_spawn(d) == tier


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
    """With the helper not executable, the restart cannot succeed: the profile is deterministically
    served from the load tier, with the same sandbox, until the helper is executable again. (The
    daemon execs the file it opened at start-up: renaming it away would change nothing.)"""
    helper_dir = daemons.workdir()
    helper = os.path.join(helper_dir, "zygote-ref")
    shutil.copy2(bins["zygote-ref"], helper)
    d = daemons(env={"ZYGOTE_REF_HELPER": helper})
    old, p = reference_of(d)
    assert p["tier"] == "inherit" and old

    os.chmod(helper, 0o644)
    os.kill(old, signal.SIGKILL)
    p = wait_for(lambda: (lambda r: r[1] if r[1]["tier"] == "load" else None)(reference_of(d)),
                 "the load tier while the reference is down")
    assert p.get("referencePid") in (None, 0), p
    assert p["tierReason"], p
    assert check_sandboxed_spawn(d) == "load"
    assert check_sandboxed_spawn(d) == "load"
    # nonet's reference was never touched.
    assert d.profiles()["nonet"]["tier"] == "inherit"

    os.chmod(helper, 0o755)
    new = wait_for(lambda: (lambda r: r[0] if r[0] and r[0] != old and r[1]["tier"] == "inherit" else None)(
        reference_of(d)), "the reference restarted with backoff", timeout=90)
    assert zytest.proc_status(new)["Seccomp"] == "2"
    assert check_sandboxed_spawn(d) == "inherit"


def test_build_where_only_root_may_search(daemons, bins, needs_root):
    """zygoted and zygote-ref in a directory only root may search (a clone in /root, mode 0700).
    The inherit probe's worker and every task run as other uids, which cannot reach the helper by
    that path; the daemon execs it through the fd it opened: the tier does not depend on where
    the build lies."""
    hidden = daemons.workdir()
    os.chmod(hidden, 0o700)
    assert os.stat(hidden).st_uid == 0
    own = dict(bins)
    for name in ("zygoted", "zygote-ref"):
        own[name] = shutil.copy2(bins[name], os.path.join(hidden, name))
    d = daemons(bins=own)
    # zygoted runs from a sealed copy of itself (its exe is a memfd): the program it was started
    # as is its argv[0]
    with open(f"/proc/{d.proc.pid}/cmdline", "rb") as f:
        assert f.read().split(b"\0")[0].decode() == own["zygoted"]
    assert os.readlink(f"/proc/{d.proc.pid}/exe").startswith("/memfd:zygoted")

    status = json.loads(d.launchctl("status", "--json").stdout)
    default = next(p for p in status["profiles"] if p["name"] == "default")
    assert default["tier"] == "inherit", default
    assert os.readlink(f"/proc/{default['reference_pid']}/exe") == own["zygote-ref"]
    r = d.launchctl("run", "--", "id", "-u", uid=zytest.NOBODY)
    assert r.returncode == 0 and r.stdout == f"{zytest.NOBODY}\n".encode(), r.stderr
    assert check_sandboxed_spawn(d) == "inherit"


def test_client_pidfd_is_not_the_watched_one(daemons, needs_root, capsys):
    """The pidfd a Spawn reply carries is a pidfd of its own (pidfd_open), not a copy of the one
    the daemon watches with epoll: with a copy, the daemon's registration outlives its close
    while the caller holds the copy, and the stale event that follows makes libev drop and
    rebuild its whole epoll set (epoll_create1 and one epoll_ctl per watched fd). Counted with
    strace on the daemon over spawns whose callers hold their pidfds past the exit, in both
    tiers that reply with one."""
    n = 40
    for tier in ("inherit", "load"):
        d = daemons(tier=tier)
        log = os.path.join(d.dir, f"epoll-{tier}.strace")
        tracer = zytest.strace_attach(d.proc.pid, "-o", str(log), "-e", "trace=epoll_create,epoll_create1")
        try:
            held = []
            with d.connect() as c:
                for _ in range(n):
                    first = c.call_more(L + "Spawn", {"argv": ["/bin/true"]})
                    assert not first.error, dict(first)
                    final = c.recv()
                    assert final.parameters["task"]["exitCode"] == 0
                    held.append(first)  # the pidfd stays open past the daemon's close of its own
                # One more round trip: every event of the last exit has been handled.
                c.call("org.varlink.service.GetInfo")
            for r in held:
                r.close_fds()
        finally:
            tracer.terminate()
            tracer.wait()
        with open(log) as f:
            rebuilds = sum(1 for line in f if "epoll_create" in line)
        with capsys.disabled():
            print(f"\n  [{tier}] {rebuilds} epoll set rebuilds over {n} spawns", end="")
        assert rebuilds == 0, f"{tier}: libev rebuilt its epoll set {rebuilds} times over {n} spawns"


def test_profile_refusing_the_nocopy_clone_gets_forked_workers(daemons, bins, tmp_path):
    """A profile whose filter kills clone(CLONE_SETTLS) (one of the flags of a worker that shares
    its reference's memory, reference/worker-nocopy.h) and allows every other clone the default
    allows: the profile check sees it (child.h's ZE_WORKER_CALL_NOCOPY), so its reference forks
    every worker instead of dying of its own filter. Its spawns stay in the inherit tier with the
    same reference."""
    CLONE_SETTLS = 0x80000
    with open(os.path.join(bins["profiles"], "default.json")) as f:
        prof = json.load(f)
    rules = prof["seccomp"]["syscalls"]
    clone = next(r for r in rules if r["names"] == ["clone"] and r["action"] == "SCMP_ACT_ALLOW")
    clone["args"] = [{**clone["args"][0], "value": clone["args"][0]["value"] | CLONE_SETTLS}]
    rules.append({"names": ["clone"], "action": "SCMP_ACT_KILL_PROCESS",
                  "args": [{"index": 0, "op": "SCMP_CMP_MASKED_EQ", "value": CLONE_SETTLS, "valueTwo": CLONE_SETTLS}]})
    with open(tmp_path / "default.json", "w") as f:
        json.dump(prof, f)
    d = daemons(tier="inherit", profile_dirs=[str(tmp_path)])
    ref, p = reference_of(d)
    assert p["tier"] == "inherit" and ref, p
    for _ in range(3):
        assert check_sandboxed_spawn(d) == "inherit"
    assert reference_of(d)[0] == ref
