# SPDX-License-Identifier: MIT
"""The raw protocol, through tests/integration/varlink.py: replies, fds, and every bad input of
the protocol, each followed by a good request that the daemon must still serve."""
import json
import os
import select
import signal
import time

import pytest

import varlink
import zytest
from zytest import NOBODY, NOGROUP, OTHER_UID, OTHER_GID, pidfd_pid

L = "io.zygote.Launcher."
INVALID = "org.varlink.service.InvalidParameter"


def good_request(d):
    """A fresh connection runs a real task to the end: the daemon still serves."""
    with d.connect() as c:
        out, final, _ = zytest.run_task(c, ["/bin/echo", "still serving"])
    assert out == b"still serving\n"
    assert final["exitCode"] == 0
    assert d.alive()


def test_get_info(daemon):
    with daemon.connect() as c:
        info = c.call("org.varlink.service.GetInfo").parameters
        assert "io.zygote.Launcher" in info["interfaces"]
        desc = c.call("org.varlink.service.GetInterfaceDescription", {"interface": "io.zygote.Launcher"})
        assert "interface io.zygote.Launcher" in desc.parameters["description"]
        assert "method Spawn(" in desc.parameters["description"]
        e = c.call_error("org.varlink.service.GetInterfaceDescription", {"interface": "org.example.Nope"})
        assert e.error == "org.varlink.service.InterfaceNotFound"


def test_spawn_more_replies_twice(daemon):
    with daemon.connect() as c:
        t = zytest.spawn(c, ["/bin/sh", "-c", "read x; echo got $x; exit 7"])
        try:
            p = t.reply.parameters
            assert set(p) >= {"id", "pid", "tier"}, p
            assert p["tier"] in ("inherit", "load")
            # The pidfd of the worker comes with the first reply.
            assert len(t.reply.fds) == 1
            assert pidfd_pid(t.pidfd) == t.pid
            assert not zytest.wait_readable(t.pidfd, 0), "pidfd readable while the task runs"
            # The task is a child of the daemon (inherit: CLONE_PARENT) in its own session.
            st = zytest.proc_status(t.pid)
            assert int(st["PPid"]) == daemon.proc.pid
            with open(f"/proc/{t.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            assert int(fields[3]) == t.pid, "the worker is not a session leader"
            with daemon.connect() as c2:
                s = c2.call(L + "State", {"id": t.id}).parameters["task"]
                assert s["state"] == "running" and s["pid"] == t.pid and s["profile"] == "default"
            os.write(t.stdin, b"hello\n")
            out, final = t.finish()
            assert zytest.wait_readable(t.pidfd, 10), "pidfd not readable after the exit"
        finally:
            t.cleanup()
    assert out == b"got hello\n"
    assert final["id"] == t.id and final["state"] == "stopped"
    assert final["exitCode"] == 7 and final.get("signal") in (None, 0)
    assert final["argv"] == ["/bin/sh", "-c", "read x; echo got $x; exit 7"]
    assert final["uid"] == 0 and final["tier"] == t.tier
    assert final["createdAt"] <= final["startedAt"] <= final["exitedAt"]
    # After the final reply the task is deleted.
    with daemon.connect() as c:
        e = c.call_error(L + "State", {"id": t.id})
        assert e.error == L + "NoSuchTask"


def test_spawn_without_more_then_wait_delete(daemon):
    with daemon.connect() as c:
        r = c.call(L + "Spawn", {"argv": ["sh", "-c", "kill -USR1 $$"], "id": "plain-1"})
        assert not r.continues and r.parameters["id"] == "plain-1"
        r.close_fds()
        e = c.call_error(L + "Spawn", {"argv": ["true"], "id": "plain-1"})
        assert e.error == L + "TaskExists"
        w = c.call(L + "Wait", {"id": "plain-1"}).parameters["task"]
        assert w["state"] == "stopped" and w["signal"] == signal.SIGUSR1
        # Stopped tasks stay until deleted.
        assert c.call(L + "State", {"id": "plain-1"}).parameters["task"]["signal"] == signal.SIGUSR1
        assert any(t["id"] == "plain-1" for t in c.call(L + "List").parameters["tasks"])
        d = c.call(L + "Delete", {"id": "plain-1"}).parameters["task"]
        assert d["id"] == "plain-1"
        assert c.call_error(L + "State", {"id": "plain-1"}).error == L + "NoSuchTask"


def test_spawn_failures(daemon):
    with daemon.connect() as c:
        e = c.call_error(L + "Spawn", {"argv": ["/nonexistent/zygote-test"]})
        assert e.error == L + "SpawnFailed"
        assert e.parameters["step"] == "exec" and e.parameters["errno"] == 2
        e = c.call_error(L + "Spawn", {"argv": ["true"], "profile": "no-such-profile"})
        assert e.error == L + "NoSuchProfile" and e.parameters["profile"] == "no-such-profile"
        e = c.call_error(L + "Spawn", {"argv": ["true"], "cwd": "/nonexistent-zygote"})
        assert e.error == L + "SpawnFailed" and e.parameters["step"] == "chdir"
    good_request(daemon)


# ---- bad input --------------------------------------------------------------------------------

SPAWN_OK = {"argv": ["true"]}

BAD_CALLS = [
    # (label, method, parameters, expected error, expected "parameter" or None)
    ("unknown method", L + "Frobnicate", {}, "org.varlink.service.MethodNotFound", None),
    ("unknown service method", "org.varlink.service.Nope", {}, "org.varlink.service.MethodNotFound", None),
    ("argv not an array", L + "Spawn", {"argv": "true"}, INVALID, "argv"),
    ("argv of numbers", L + "Spawn", {"argv": [1, 2]}, INVALID, "argv"),
    ("empty argv", L + "Spawn", {"argv": []}, INVALID, "argv"),
    ("missing argv", L + "Spawn", {}, INVALID, "argv"),
    ("argv with NUL", L + "Spawn", {"argv": ["tr\u0000ue"]}, INVALID, "argv"),
    ("profile a number", L + "Spawn", {**SPAWN_OK, "profile": 5}, INVALID, "profile"),
    ("env a string", L + "Spawn", {**SPAWN_OK, "env": "A=1"}, INVALID, "env"),
    ("env of numbers", L + "Spawn", {**SPAWN_OK, "env": [5]}, INVALID, "env"),
    ("env without =", L + "Spawn", {**SPAWN_OK, "env": ["NOEQUALS"]}, INVALID, "env"),
    ("cwd relative", L + "Spawn", {**SPAWN_OK, "cwd": "tmp"}, INVALID, "cwd"),
    ("cwd a list", L + "Spawn", {**SPAWN_OK, "cwd": ["/"]}, INVALID, "cwd"),
    ("hold a string", L + "Spawn", {**SPAWN_OK, "hold": "yes"}, INVALID, "hold"),
    ("terminal a number", L + "Spawn", {**SPAWN_OK, "terminal": 1}, INVALID, "terminal"),
    ("fds a string", L + "Spawn", {**SPAWN_OK, "fds": "0"}, INVALID, "fds"),
    ("fd index a string", L + "Spawn", {**SPAWN_OK, "fds": [{"fd": "0", "target": 1}]}, INVALID, "fds"),
    ("fd index not sent", L + "Spawn", {**SPAWN_OK, "fds": [{"fd": 0, "target": 1}]}, INVALID, "fds"),
    ("user a number", L + "Spawn", {**SPAWN_OK, "user": 0}, INVALID, "user"),
    ("unknown user", L + "Spawn", {**SPAWN_OK, "user": "no-such-user-zygote"}, INVALID, "user"),
    ("dropCapabilities unknown", L + "Spawn", {**SPAWN_OK, "dropCapabilities": ["CAP_NOPE"]}, INVALID,
     "dropCapabilities"),
    ("bad id", L + "Spawn", {**SPAWN_OK, "id": "bad id!"}, INVALID, "id"),
    ("id too long", L + "Spawn", {**SPAWN_OK, "id": "x" * 65}, INVALID, "id"),
    ("unknown Spawn field", L + "Spawn", {**SPAWN_OK, "bogus": 1}, INVALID, "bogus"),
    ("unknown GetStatus field", L + "GetStatus", {"verbose": True}, INVALID, "verbose"),
    ("unknown Kill field", L + "Kill", {"id": "x", "bogus": 1}, INVALID, "bogus"),
    ("Kill signal a string", L + "Kill", {"id": "x", "signal": "TERM"}, INVALID, "signal"),
    ("Kill signal out of range", L + "Kill", {"id": "x", "signal": 100000}, INVALID, "signal"),
    ("State id a number", L + "State", {"id": 5}, INVALID, "id"),
    ("State without id", L + "State", {}, INVALID, "id"),
    ("Wait id null", L + "Wait", {"id": None}, INVALID, "id"),
    ("unknown task", L + "Wait", {"id": "no-such-task"}, L + "NoSuchTask", None),
]


@pytest.mark.parametrize("label,method,params,error,param", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
def test_bad_call(daemon, label, method, params, error, param):
    with daemon.connect() as c:
        e = c.call_error(method, params)
        assert e.error == error, dict(e)
        if param is not None:
            assert e.parameters.get("parameter") == param, dict(e)
        # The same connection goes on serving.
        assert c.call(L + "GetStatus").parameters["version"]
    good_request(daemon)


BAD_MESSAGES = [
    ("truncated JSON", b'{"method": "io.zygote.Launcher.GetStatus"'),
    ("not JSON", b"hello, daemon"),
    ("JSON array", b'["io.zygote.Launcher.GetStatus"]'),
    ("JSON string", b'"io.zygote.Launcher.GetStatus"'),
    ("empty message", b""),
    ("trailing garbage", b'{"method": "io.zygote.Launcher.GetStatus"} xyz'),
    ("method a number", b'{"method": 5}'),
    ("no method", b'{"parameters": {}}'),
    ("parameters a list", b'{"method": "io.zygote.Launcher.GetStatus", "parameters": [1]}'),
    ("invalid UTF-8", b'{"method": "io.zygote.Launcher.GetStatus\xff\xfe"}'),
    ("deep nesting", b'{"method": "io.zygote.Launcher.GetStatus", "parameters": {"a": ' + b"[" * 5000 +
     b"]" * 5000 + b"}}"),
]


@pytest.mark.parametrize("label,data", BAD_MESSAGES, ids=[b[0] for b in BAD_MESSAGES])
def test_malformed_message(daemon, label, data):
    with daemon.connect() as c:
        c.send_raw(data + b"\0")
        try:
            r = c.recv()
        except varlink.Closed:
            r = None  # dropping the peer is allowed too
        if r is not None:
            assert r.error in (INVALID, "org.varlink.service.MethodNotFound"), dict(r)
            # Still framed correctly: the next call on the same connection works.
            assert c.call(L + "GetStatus").parameters["version"]
    good_request(daemon)


def test_message_too_large(daemon):
    limit = 64 * 1024
    # A whole message over the limit...
    with daemon.connect() as c:
        big = json.dumps({"method": L + "Spawn", "parameters": {"argv": ["echo", "x" * limit]}}).encode()
        c.send_raw(big + b"\0")
        r = c.recv()
        assert r.error == L + "LimitExceeded" and r.parameters.get("limit") == "message", dict(r)
        assert c.at_eof(10), "connection left open after a too-large message"
    # ... and one that never ends: the daemon must not buffer it without bound.
    with daemon.connect() as c:
        try:
            c.send_raw(b'{"method": "' + b"x" * (limit + 4096))
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            r = c.recv()
            assert r.error == L + "LimitExceeded", dict(r)
        except (varlink.Closed, ConnectionResetError):
            pass
        assert c.at_eof(10)
    # Just under the limit is fine.
    with daemon.connect() as c:
        msg = {"method": L + "Spawn", "parameters": {"argv": ["true", ""]}}
        pad = limit - 1 - len(json.dumps(msg).encode()) - 64
        msg["parameters"]["argv"][1] = "y" * pad
        r = c.call(L + "Spawn", msg["parameters"])
        r.close_fds()
        assert c.call(L + "Wait", {"id": r.parameters["id"]}).parameters["task"]["exitCode"] == 0
    good_request(daemon)


def test_too_many_fds(daemon):
    fds = [os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC) for _ in range(65)]
    try:
        # 64 fds are allowed (the last one becomes fd 3 of the task: it must be open there).
        with daemon.connect() as c:
            mapping = [{"fd": 63, "target": 3}]
            r = c.call(L + "Spawn", {"argv": ["sh", "-c", "exec 0<&3"], "fds": mapping}, fds=fds[:64])
            r.close_fds()
            assert c.call(L + "Wait", {"id": r.parameters["id"]}).parameters["task"]["exitCode"] == 0
        # 65 are not.
        with daemon.connect() as c:
            try:
                c.send(L + "Spawn", {"argv": ["true"]}, fds=fds)
            except (BrokenPipeError, ConnectionResetError):
                pass  # it may drop us as soon as it sees the fds: its reply is still readable
            r = c.recv()
            assert r.error == L + "LimitExceeded" and r.parameters.get("limit") == "fds", dict(r)
            assert c.at_eof(10)
        # fds with a method that takes none.
        with daemon.connect() as c:
            e = c.call_error(L + "GetStatus", fds=fds[:1])
            assert e.error == INVALID and e.parameters.get("parameter") == "fds"
    finally:
        for fd in fds:
            os.close(fd)
    good_request(daemon)


@pytest.mark.parametrize("field", ["argv", "env"])
def test_argv_env_limits(daemon, field):
    def params(n):
        if field == "argv":
            return {"argv": ["true"] + ["a"] * (n - 1)}
        return {"argv": ["true"], "env": [f"V{i}=1" for i in range(n)]}

    with daemon.connect() as c:
        r = c.call(L + "Spawn", params(4096))
        r.close_fds()
        assert c.call(L + "Wait", {"id": r.parameters["id"]}).parameters["task"]["exitCode"] == 0
        e = c.call_error(L + "Spawn", params(4097))
        assert e.error == INVALID and e.parameters.get("parameter") == field, dict(e)
        assert c.call(L + "GetStatus").parameters["version"]
    good_request(daemon)


# ---- identity -----------------------------------------------------------------------------------

@pytest.mark.parametrize("extra", [{"user": "root"}, {"user": "0"}, {"user": str(OTHER_UID)},
                                   {"group": "0"}, {"group": "root"}],
                         ids=["user-root", "user-0", "user-other", "group-0", "group-root"])
def test_nonroot_cannot_name_another_user(daemon, extra):
    with daemon.connect_as(NOBODY, NOGROUP) as c:
        e = c.call_error(L + "Spawn", {"argv": ["id"], **extra})
        assert e.error == L + "PermissionDenied", dict(e)
        assert e.parameters.get("reason")
    good_request(daemon)


def test_root_names_a_user(daemon):
    with daemon.connect() as c:
        t = zytest.spawn(c, ["cat"], extra={"user": "nobody"})
        try:
            st = zytest.proc_status(t.pid)
            out, final = t.finish()
        finally:
            t.cleanup()
    assert st["Uid"].split() == [str(NOBODY)] * 4
    assert st["Gid"].split() == [str(NOGROUP)] * 4
    assert int(st["CapEff"], 16) == 0 and int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK
    assert final["exitCode"] == 0


def test_nonroot_refused_root_methods(daemon):
    with daemon.connect_as(NOBODY, NOGROUP) as c:
        e = c.call_error(L + "ReloadProfiles")
        assert e.error == L + "PermissionDenied"
        # Read-only methods are for everyone.
        assert "default" in [p["name"] for p in c.call(L + "ListProfiles").parameters["profiles"]]
        assert c.call(L + "GetStatus").parameters["version"]
    with daemon.connect() as c:
        r = c.call(L + "ReloadProfiles").parameters
        assert {"default", "nonet", "strict"} <= set(r["loaded"]) and r["failed"] == []
    good_request(daemon)


def _alive(pid):
    return not zytest.pidfd_wait_exit(pid, 0)


def test_tasks_are_private(daemon):
    """A caller sees and signals only its own tasks; root sees all, and names another owner's as
    OWNER:ID."""
    root_c = daemon.connect()
    a_c = daemon.connect_as(NOBODY, NOGROUP)
    b_c = daemon.connect_as(OTHER_UID, OTHER_GID)
    tasks = []
    try:
        t_root = zytest.spawn(root_c, ["cat"], extra={"id": "t-root"})
        tasks.append(t_root)
        t_a = zytest.spawn(a_c, ["cat"], extra={"id": "t-a"})
        tasks.append(t_a)
        t_b = zytest.spawn(b_c, ["cat"], extra={"id": "t-b"})
        tasks.append(t_b)
        assert zytest.proc_status(t_b.pid)["Uid"].split()[0] == str(OTHER_UID)

        with daemon.connect_as(NOBODY, NOGROUP) as a:
            ids = [t["id"] for t in a.call(L + "List").parameters["tasks"]]
            assert ids == ["t-a"], ids
            for other in ("t-root", "t-b"):
                for method, extra in [("State", {}), ("Kill", {"signal": 9}), ("Wait", {}), ("Delete", {}),
                                      ("Start", {}), ("Pids", {}), ("CloseIO", {})]:
                    e = a.call_error(L + method, {"id": other, **extra})
                    assert e.error == L + "NoSuchTask", (method, other, dict(e))
            assert a.call(L + "State", {"id": "t-a"}).parameters["task"]["uid"] == NOBODY
            # Its own task: it may signal it.
            a.call(L + "Kill", {"id": "t-a", "signal": signal.SIGTERM})
        _, final = t_a.finish()
        assert final["signal"] == signal.SIGTERM
        assert _alive(t_root.pid) and _alive(t_b.pid), "a refused Kill killed a task"

        with daemon.connect() as r:
            ids = {t["id"] for t in r.call(L + "List").parameters["tasks"]}
            assert {"t-root", "t-b"} <= ids
            # ids are per owner (test_task_names.py): root's plain id is its own, another
            # owner's task is OWNER:ID
            assert r.call_error(L + "State", {"id": "t-b"}).error == L + "NoSuchTask"
            r.call(L + "Kill", {"id": f"{OTHER_UID}:t-b", "signal": signal.SIGKILL})
        _, final = t_b.finish()
        assert final["signal"] == signal.SIGKILL
        _, final = t_root.finish()
        assert final["exitCode"] == 0
    finally:
        for t in tasks:
            t.cleanup()
        for c in (root_c, a_c, b_c):
            c.close()
    good_request(daemon)


# ---- profile access lists -----------------------------------------------------------------------

ALLOW_ALL_SECCOMP = {"defaultAction": "SCMP_ACT_ALLOW",
                     "syscalls": [{"names": ["kexec_load"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}


def write_profile(d, name, access):
    prof = {"name": name, "seccomp": ALLOW_ALL_SECCOMP, "capabilities": ["CAP_KILL"], "noNewPrivileges": True}
    if access is not None:
        prof["access"] = access
    with open(os.path.join(d, f"{name}.json"), "w") as f:
        json.dump(prof, f)


def test_profile_access_lists(daemons, bins, needs_root):
    extra = daemons.workdir()
    write_profile(extra, "for-nobody", {"users": [NOBODY]})
    write_profile(extra, "for-nobody-by-name", {"users": ["nobody"]})
    write_profile(extra, "for-group", {"groups": [4242]})
    write_profile(extra, "for-root-only", {"users": []})
    d = daemons(profile_dirs=[bins["profiles"], extra])
    names = set(d.profiles())
    assert {"for-nobody", "for-nobody-by-name", "for-group", "for-root-only"} <= names, names

    def attempt(conn, profile):
        r = conn.call(L + "Spawn", {"argv": ["true"], "profile": profile}, check=False)
        r.close_fds()
        if not r.error:
            assert conn.call(L + "Wait", {"id": r.parameters["id"]}).parameters["task"]["exitCode"] == 0
        return r.error

    cases = [
        # (uid, gid, groups, profile, allowed)
        (NOBODY, NOGROUP, [], "for-nobody", True),
        (NOBODY, NOGROUP, [], "for-nobody-by-name", True),
        (OTHER_UID, OTHER_GID, [], "for-nobody", False),
        (OTHER_UID, OTHER_GID, [], "for-nobody-by-name", False),
        (OTHER_UID, OTHER_GID, [4242], "for-group", True),   # a supplementary group
        (OTHER_UID, 4242, [], "for-group", True),            # the primary group
        (NOBODY, NOGROUP, [], "for-group", False),
        (NOBODY, NOGROUP, [], "for-root-only", False),
        (NOBODY, NOGROUP, [], "default", True),               # no access list: everyone
        (0, 0, [], "for-root-only", True),                    # root always may
        (0, 0, [], "for-nobody", True),
    ]
    for uid, gid, groups, profile, allowed in cases:
        with d.connect_as(uid, gid, groups) as c:
            err = attempt(c, profile)
        if allowed:
            assert err is None, (uid, gid, groups, profile, err)
        else:
            assert err == L + "PermissionDenied", (uid, gid, groups, profile, err)
    good_request(d)


# ---- hold and Start ----------------------------------------------------------------------------

def test_hold_then_start(daemon):
    with daemon.connect() as c:
        # It keeps running after Start until its stdin closes, so that a second Start meets a
        # running task (an exited one would already be deleted: it was spawned with "more").
        t = zytest.spawn(c, ["/bin/sh", "-c", "echo started; exec cat >/dev/null"],
                         extra={"hold": True, "id": "held"})
        try:
            assert t.reply.parameters["id"] == "held"
            with daemon.connect() as c2:
                s = c2.call(L + "State", {"id": "held"}).parameters["task"]
                assert s["state"] == "created", s
                # The sandbox is complete before exec: filter, capabilities, nnp.
                st = zytest.proc_status(t.pid)
                assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
                assert int(st["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK
                exe = os.readlink(f"/proc/{t.pid}/exe")
                assert os.path.basename(exe) not in ("sh", "dash", "cat"), f"exec'd before Start: {exe}"
                # Held: nothing written yet (the worker blocks on its hold pipe).
                assert not zytest.wait_readable(t.stdout, 0)
                assert c2.call(L + "Start", {"id": "held"}).parameters == {}
                assert os.read(t.stdout, 100) == b"started\n"
                e = c2.call_error(L + "Start", {"id": "held"})
                assert e.error == L + "InvalidState"
            out, final = t.finish()
        finally:
            t.cleanup()
    assert out == b""
    assert final["exitCode"] == 0 and final["startedAt"] >= final["createdAt"]


def test_hold_then_delete(daemon):
    with daemon.connect() as c:
        r = c.call(L + "Spawn", {"argv": ["/bin/echo", "never"], "hold": True, "id": "held-del"})
        assert len(r.fds) == 1
        pidfd = r.fds[0]
        try:
            assert c.call(L + "State", {"id": "held-del"}).parameters["task"]["state"] == "created"
            d = c.call(L + "Delete", {"id": "held-del"}).parameters["task"]
            assert d["id"] == "held-del"
            # Deleting a created task kills it: its pidfd says it exited.
            assert zytest.wait_readable(pidfd, 10)
        finally:
            os.close(pidfd)
        assert c.call_error(L + "State", {"id": "held-del"}).error == L + "NoSuchTask"
    good_request(daemon)


# ---- a partial message --------------------------------------------------------------------------

def test_idle_partial_message_closed(daemon):
    idle = daemon.connect()              # connected, sends nothing: allowed to stay
    slow = daemon.connect()
    try:
        started = time.monotonic()
        slow.send_raw(b'{"method": "io.zygote.Launcher.GetSt')
        # Meanwhile everyone else is served.
        good_request(daemon)
        assert slow.at_eof(30), "a partial message kept its connection open for 30 s"
        elapsed = time.monotonic() - started
        # The documented timeout is 10 s; closing much earlier would cut slow honest clients.
        assert elapsed >= 9.0, f"closed after {elapsed:.1f}s"
        assert idle.call(L + "GetStatus").parameters["version"], "an idle connection was closed"
    finally:
        idle.close()
        slow.close()
    good_request(daemon)


def collect_events(daemon):
    """Subscribes as uid 65534, then: root runs ev-root and 65534 runs ev-mine (both Spawn with
    more, deleted after their exit), then 65534 runs ev-last (Spawn, Wait, Delete). Events come
    in order, so once ev-last's delete arrives every earlier event has arrived too."""
    with daemon.connect_as(NOBODY, NOGROUP) as sub:
        sub.send(L + "Events", {}, more=True)
        # Subscribed once a later call on another connection is answered (one loop, in order).
        assert daemon.status()["version"]
        with daemon.connect() as c:
            zytest.run_task(c, ["true"], extra={"id": "ev-root"})
        with daemon.connect_as(NOBODY, NOGROUP) as c:
            zytest.run_task(c, ["sh", "-c", "exit 4"], extra={"id": "ev-mine"})
            r = c.call(L + "Spawn", {"argv": ["true"], "id": "ev-last"})
            r.close_fds()
            c.call(L + "Wait", {"id": "ev-last"})
            c.call(L + "Delete", {"id": "ev-last"})
        events = []
        while not (events and events[-1]["id"] == "ev-last" and events[-1]["type"] == "delete"):
            r = sub.recv()
            assert not r.error and r.continues, dict(r)
            events.append(r.parameters["event"])
    return events


def test_events_only_own_tasks(daemon):
    """Events streams the caller's tasks only, in order; root's tasks never show up."""
    events = collect_events(daemon)
    assert {e["id"] for e in events} == {"ev-mine", "ev-last"}, events
    mine = [e for e in events if e["id"] == "ev-mine"]
    last = [e["type"] for e in events if e["id"] == "ev-last"]
    assert [e["type"] for e in mine][:2] in (["start", "exit"], ["create", "start"]), mine
    assert [e for e in mine if e["type"] == "exit"][0]["exitCode"] == 4
    assert last[-3:] == ["start", "exit", "delete"], last
    assert [e["time"] for e in events] == sorted(e["time"] for e in events)
    good_request(daemon)
    # Without "more" it is refused.
    with daemon.connect() as c:
        assert c.call_error(L + "Events").error == INVALID


def test_events_announce_auto_delete(daemon):
    """A task spawned with "more" is deleted after its final reply: a subscriber that
    keeps a task table from the events must hear of that deletion too."""
    events = collect_events(daemon)
    mine = [e["type"] for e in events if e["id"] == "ev-mine"]
    assert mine[-2:] == ["exit", "delete"], f"ev-mine's events: {mine}"
