# SPDX-License-Identifier: MIT
"""The inherit tier's pool of pre-forked workers: a pooled task is the task a reference's fresh
worker would have been (filter, capabilities, identity, stdio, exit code, signals), an idle pool
worker holds nothing but its channel, the pool is reported, it falls back to the reference when
it is disabled or empty, and an idle worker killed or left behind by its reference is replaced,
never used."""
import json
import os
import shutil
import signal

import pytest

import zytest
from hostile import POOL_ARGS
from zytest import wait_for

L = "io.zygote.Launcher."


@pytest.fixture
def daemon(daemons, needs_root):
    """A root zygoted with the pool, which is off by default."""
    return daemons(args=POOL_ARGS)


def pool_of(d, name="default"):
    p = d.profiles()[name]
    if p["tier"] != "inherit":
        pytest.skip(f"the {name} profile is not in the inherit tier here")
    return p.get("pool")


def full_pool(d, name="default"):
    """Waits until the profile's pool is refilled to its target; returns it."""
    return wait_for(lambda: (lambda p: p if p and p["size"] == p["target"] and p["size"] > 0 else None)(
        pool_of(d, name)), f"the {name} pool refilled")


def fds_of(pid):
    d = f"/proc/{pid}/fd"
    return {int(fd): os.readlink(os.path.join(d, fd)) for fd in os.listdir(d)}


def cat_from(daemon, pids):
    """Spawns cat, which must be one of the idle pool workers pids, feeds it a line and checks the
    task as check_task does; returns its /proc status as it ran."""
    with daemon.connect() as c:
        t = zytest.spawn(c, ["cat"])
        try:
            assert t.pid in pids, (t.pid, pids)
            st = zytest.proc_status(t.pid)
            os.write(t.stdin, b"ok\n")
            out, final = t.finish()
        finally:
            t.cleanup()
    check_task(st, out, final, t.tier)
    return st


def check_task(st, out, final, tier, want_out=b"ok\n"):
    assert tier == "inherit" and out == want_out and final["exitCode"] == 0, (tier, out, final)
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
    assert st["NoNewPrivs"] == "1", st
    assert int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK, st
    assert (st["SigIgn"], st["SigBlk"]) == ("0000000000000000",) * 2, st


def test_idle_pool_workers_hold_only_their_channel(daemon):
    pool = full_pool(daemon)
    ref = daemon.profiles()["default"]["referencePid"]
    ref_st = zytest.proc_status(ref)
    assert pool["max"] == 4 and 1 <= pool["target"] <= pool["max"] and len(pool["pids"]) == pool["size"]
    for pid in pool["pids"]:
        st = zytest.proc_status(pid)
        # zygoted's child, under the reference's filter and bounding set, in its pid namespace
        assert int(st["PPid"]) == daemon.proc.pid, st
        for k in ("Seccomp", "Seccomp_filters", "NoNewPrivs", "CapBnd", "CapEff", "Uid", "Gid", "Groups"):
            assert st[k] == ref_st[k], (k, st[k], ref_st[k])
        # no caller's fd, none of the reference's: the channel alone
        fds = fds_of(pid)
        assert len(fds) == 1 and list(fds.values())[0].startswith("socket:"), fds


def test_pooled_task_is_a_fresh_workers_task(daemon):
    """The task runs in a worker that was idle in the pool (its pid), with the sandbox of any
    inherit-tier task; as root and as another user."""
    pool = full_pool(daemon)
    idle = set(pool["pids"])
    st = cat_from(daemon, idle)
    assert st["Uid"].split()[0] == "0"
    assert pool_of(daemon)["hits"] >= pool["hits"] + 1

    full_pool(daemon)
    with daemon.connect_as(zytest.NOBODY, zytest.NOGROUP) as c:
        st, out, final, tier = zytest.spawn_and_status(c, ["cat"], b"ok\n")
    check_task(st, out, final, tier)
    assert st["Uid"].split() == [str(zytest.NOBODY)] * 4 and st["Gid"].split()[0] == str(zytest.NOGROUP), st
    assert int(st["CapEff"], 16) == 0 and int(st["CapPrm"], 16) == 0, st
    # exit codes come through
    with daemon.connect() as c:
        out, final, tier = zytest.run_task(c, ["sh", "-c", "echo out; exit 7"], stdin=False)
    assert (out, final["exitCode"], tier) == (b"out\n", 7, "inherit")


def test_pool_disabled_falls_back_to_the_reference(daemons, needs_root):
    for how in ({"env": {"ZYGOTE_DISABLE_FEATURES": "pool"}, "args": POOL_ARGS}, {"args": ["--pool-max", "0"]}, {}):
        d = daemons(tier="inherit", **how)
        assert "pool" not in d.profiles()["default"], how
        ref = d.profiles()["default"]["referencePid"]
        with d.connect() as c:
            st, out, final, tier = zytest.spawn_and_status(c, ["cat"], b"ok\n")
        check_task(st, out, final, tier)
        # forked by the reference for this spawn: no pool worker was waiting
        assert "pool" not in d.profiles()["default"] and d.profiles()["default"]["referencePid"] == ref
        assert "no pool" in d.log(), how
        d.stop()


def test_concurrent_spawns_exhaust_the_pool(daemon):
    """More spawns at once than the pool holds (sent before any answer is read): the rest go to
    the reference, every task is right, and the pool grows."""
    pool = full_pool(daemon)
    n = 16
    conns = [daemon.connect() for _ in range(n)]
    outs = []
    try:
        for i, c in enumerate(conns):
            r, w = os.pipe2(os.O_CLOEXEC)
            params = {"argv": ["sh", "-c", f"echo {i}; exit {i}"], "env": ["PATH=/usr/bin:/bin"],
                      "fds": [{"fd": 0, "target": 1}]}
            c.send(L + "Spawn", params, more=True, fds=[w])
            os.close(w)
            outs.append(r)
        for i, c in enumerate(conns):
            first = c.recv()
            assert not first.error and first.continues, dict(first)
            assert first.parameters["tier"] == "inherit", dict(first)
            first.close_fds()
            out = zytest.read_all(outs[i])
            outs[i] = None
            final = c.recv()
            assert out == f"{i}\n".encode() and final.parameters["task"]["exitCode"] == i, (out, dict(final))
    finally:
        for fd in outs:
            if fd is not None:
                os.close(fd)
        for c in conns:
            c.close()
    after = pool_of(daemon)
    assert after["misses"] > pool["misses"], after
    assert after["hits"] >= pool["hits"] + pool["size"], after
    assert after["target"] > pool["target"] or after["target"] == after["max"], (pool, after)
    full_pool(daemon)


def test_killed_idle_pool_worker_is_replaced(daemon):
    pool = full_pool(daemon)
    victim = pool["pids"][0]
    os.kill(victim, signal.SIGKILL)
    assert zytest.pidfd_wait_exit(victim, 10)
    after = wait_for(lambda: (lambda p: p if p["replaced"] > pool["replaced"] and victim not in p["pids"]
                              and p["size"] == p["target"] else None)(pool_of(daemon)), "the worker replaced")
    # reaped, not left a zombie
    wait_for(lambda: not os.path.exists(f"/proc/{victim}"), "the killed worker reaped")
    cat_from(daemon, after["pids"])


def test_pool_workers_go_with_their_reference(daemon):
    """A pool worker never outlives its reference's generation: killed with it, and the new
    reference's pool serves the next spawns."""
    old = full_pool(daemon)
    ref = daemon.profiles()["default"]["referencePid"]
    os.kill(ref, signal.SIGKILL)
    for pid in old["pids"]:
        assert zytest.pidfd_wait_exit(pid, 10), f"pool worker {pid} outlived its reference"
    wait_for(lambda: (lambda p: p["tier"] == "inherit" and p.get("referencePid") not in (None, ref))(
        daemon.profiles()["default"]), "a new reference", timeout=60)
    new = full_pool(daemon)
    assert not set(new["pids"]) & set(old["pids"])
    cat_from(daemon, new["pids"])


def test_reload_replacing_the_profile_replaces_its_pool(daemons, needs_root, bins):
    """A reload that changes the profile's program starts a new reference: the old pool's workers
    are killed, and the new pool's workers carry the new filter."""
    pdir = daemons.workdir()
    src = os.path.join(bins["profiles"], "default.json")
    dst = os.path.join(pdir, "default.json")
    shutil.copy(src, dst)
    d = daemons(tier="inherit", profile_dirs=[pdir], args=POOL_ARGS)
    old = full_pool(d)
    old_hash = d.profiles()["default"]["hash"]
    with open(dst) as f:
        prof = json.load(f)
    # a different program: the default errno of what the profile does not allow
    prof["seccomp"]["defaultErrnoRet"] = 38
    with open(dst, "w") as f:
        json.dump(prof, f)
    with d.connect() as c:
        c.call(L + "ReloadProfiles")
    for pid in old["pids"]:
        assert zytest.pidfd_wait_exit(pid, 10), f"pool worker {pid} outlived its profile"
    new = full_pool(d)
    assert not set(new["pids"]) & set(old["pids"])
    assert d.profiles()["default"]["hash"] != old_hash
    with d.connect() as c:
        st, out, final, tier = zytest.spawn_and_status(c, ["cat"], b"ok\n")
    check_task(st, out, final, tier)
