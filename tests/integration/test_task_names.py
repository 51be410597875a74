# SPDX-License-Identifier: MIT
"""Task ids are per owner (daemon/task-names.c, docs/SECURITY.md): every uid, root included,
names its tasks in a namespace of its own. A user who takes an id first does not keep root (or
another user) from it; TaskExists answers only about the caller's own names, and another owner's
task is NoSuchTask however it is named (plain, "OWNER:ID"), as one that does not exist. Root
names another owner's task "OWNER:ID" (List gives it as "name").

Variants: a user taking root's id first; root taking a user's; a caller in a user namespace that
maps it to a subordinate uid of a user (uid 0 inside, 100000 as zygoted sees it) trying both
owners' ids.
"""
import ctypes
import os
import socket

import pytest

import varlink
import zytest
from zytest import NOBODY, NOGROUP, OTHER_UID
from hostile import L, served

TASK_METHODS = ("State", "Wait", "Kill", "Delete", "Start", "Pids", "CloseIO")
CLONE_NEWUSER = 0x10000000
SUBUID = 100000


def names(conn):
    return sorted((t["id"], t["owner"]) for t in conn.call(L + "List").parameters["tasks"])


def assert_no_task(conn, name):
    for m in TASK_METHODS:
        e = conn.call_error(L + m, {"id": name})
        assert e.error == L + "NoSuchTask" and e.parameters == {"id": name}, (m, name, dict(e))


def test_user_takes_roots_id_first(daemon, capsys):
    """The attack of the issue: an unprivileged user spawns "web123" before root does. Root's
    Spawn "web123" is served (before: TaskExists), and each sees its own."""
    # a connection with a Spawn "more" open serves nothing else until it ends: spawners apart
    with daemon.connect_as(NOBODY, NOGROUP) as u_spawner, daemon.connect() as root_spawner, \
            daemon.connect_as(NOBODY, NOGROUP) as u, daemon.connect() as root:
        ut = zytest.spawn(u_spawner, ["cat"], extra={"id": "web123"})
        try:
            rt = zytest.spawn(root_spawner, ["cat"], extra={"id": "web123"})
            try:
                assert ut.pid != rt.pid
                assert root.call(L + "State", {"id": "web123"}).parameters["task"]["pid"] == rt.pid
                assert u.call(L + "State", {"id": "web123"}).parameters["task"]["pid"] == ut.pid
                # root names the user's as OWNER:ID; the user cannot name root's
                st = root.call(L + "State", {"id": f"{NOBODY}:web123"}).parameters["task"]
                assert st["pid"] == ut.pid and st["owner"] == NOBODY and st["name"] == f"{NOBODY}:web123", st
                assert_no_task(u, "0:web123")
                assert ("web123", 0) in names(root) and ("web123", NOBODY) in names(root), names(root)
                assert names(u) == [("web123", NOBODY)], names(u)
                # a page that ends at root's web123 goes on with the user's: root's cursor is a
                # name as root gives it, its own plain, another owner's as OWNER:ID
                after = root.call(L + "List", {"after": "web123"}).parameters["tasks"]
                assert [(t["id"], t["owner"]) for t in after][:1] == [("web123", NOBODY)], after
                assert not [t for t in root.call(L + "List", {"after": f"{NOBODY}:web123"}).parameters["tasks"]
                            if t["id"] == "web123"]
                # launchctl ps as root shows the user's as the name root acts on it by
                ps = daemon.launchctl("ps")
                assert ps.returncode == 0, ps.stderr
                shown = [line.split()[0] for line in ps.stdout.decode().splitlines()[1:]]
                assert "web123" in shown and f"{NOBODY}:web123" in shown, shown
                # the same id again, in one's own namespace only, is TaskExists
                for c in (u, root):
                    e = c.call_error(L + "Spawn", {"argv": ["true"], "id": "web123"})
                    assert e.error == L + "TaskExists" and e.parameters == {"id": "web123"}, dict(e)
                out, final = rt.finish()
                assert final["exitCode"] == 0, final
            finally:
                rt.cleanup()
            assert not zytest.wait_readable(ut.pidfd, 0), "the user's task died with root's"
            out, final = ut.finish()
            assert final["exitCode"] == 0, final
        finally:
            ut.cleanup()
    served(daemon, capsys, "a user's id before root's")


def test_root_takes_a_users_id_first(daemon, capsys):
    """Root's "victim" does not keep a user from its own "victim" (before: TaskExists, which also
    told the user root had one), nor lets a user touch or see root's."""
    with daemon.connect() as root, daemon.connect_as(OTHER_UID, OTHER_UID) as u, \
            daemon.connect_as(OTHER_UID, OTHER_UID) as u_spawner:
        rt = zytest.spawn(root, ["cat"], extra={"id": "victim"})
        try:
            assert_no_task(u, "victim")
            assert_no_task(u, "0:victim")
            assert u.call(L + "List").parameters["tasks"] == []
            ut = zytest.spawn(u_spawner, ["cat"], extra={"id": "victim"})
            try:
                assert u.call(L + "State", {"id": "victim"}).parameters["task"]["pid"] == ut.pid
                # its own OWNER:ID is its own task too
                st = u.call(L + "State", {"id": f"{OTHER_UID}:victim"}).parameters["task"]
                assert st["pid"] == ut.pid, st
                out, final = ut.finish()
                assert final["exitCode"] == 0, final
            finally:
                ut.cleanup()
            assert not zytest.wait_readable(rt.pidfd, 0), "root's task died"
            out, final = rt.finish()
            assert final["exitCode"] == 0, final
        finally:
            rt.cleanup()
    served(daemon, capsys, "root's id before a user's")


def connect_in_userns(path, outside_uid):
    """A connection from a process in a user namespace of its own, uid 0 in it and outside_uid
    as zygoted sees it (a user's subordinate uid, as newuidmap would map it). The process stays
    (zygoted reads its caller at each call) until the returned closer runs."""
    libc = ctypes.CDLL(None, use_errno=True)
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            parent.close()
            if libc.unshare(CLONE_NEWUSER) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
            child.sendall(b"u")
            assert child.recv(1) == b"m"
            os.setresgid(0, 0, 0)
            os.setresuid(0, 0, 0)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            s.connect(path)
            socket.send_fds(child, [b"s"], [s.fileno()])
            code = 0
            while child.recv(1):
                pass
        except BaseException as e:
            try:
                child.sendall(b"E" + repr(e).encode())
            except OSError:
                pass
        finally:
            os._exit(code)
    child.close()

    def close():
        parent.close()
        os.waitpid(pid, 0)

    try:
        first = parent.recv(4096)
        if first != b"u":
            raise OSError(f"user namespace: {first.decode(errors='replace')}")
        with open(f"/proc/{pid}/setgroups", "w") as f:
            f.write("deny")
        for m in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{m}", "w") as f:
                f.write(f"0 {outside_uid} 1\n")
        parent.sendall(b"m")
        msg, fds, _, _ = socket.recv_fds(parent, 4096, 1, socket.MSG_CMSG_CLOEXEC)
        if not fds:
            raise OSError(f"connect from the user namespace: {msg.decode(errors='replace')}")
    except BaseException:
        close()
        raise
    return varlink.Connection(sock=socket.socket(fileno=fds[0]), timeout=zytest.CALL_TIMEOUT), close


def test_subuid_in_a_user_namespace_reaches_no_ones_names(daemon, capsys):
    """A caller in a user namespace, root in it and a subordinate uid outside (as zygoted sees
    it), against root's "web123" and a user's: every name of theirs is NoSuchTask (plain and
    OWNER:ID), List shows none, and a Spawn "web123" of its own is not TaskExists."""
    try:
        c, close = connect_in_userns(daemon.socket, SUBUID)
    except OSError as e:
        pytest.skip(f"no user namespace to call from: {e}")
    try:
        with daemon.connect() as root, daemon.connect_as(NOBODY, NOGROUP) as u:
            rt = zytest.spawn(root, ["cat"], extra={"id": "web123"})
            ut = zytest.spawn(u, ["cat"], extra={"id": "web123"})
            try:
                for name in ("web123", "0:web123", f"{NOBODY}:web123"):
                    assert_no_task(c, name)
                assert c.call(L + "List").parameters["tasks"] == []
                e = c.call_error(L + "Spawn", {"argv": ["true"], "id": "web123"})
                assert e.error != L + "TaskExists", dict(e)
                for t in (rt, ut):
                    assert not zytest.wait_readable(t.pidfd, 0), "a task died"
                    out, final = t.finish()
                    assert final["exitCode"] == 0, final
            finally:
                rt.cleanup()
                ut.cleanup()
    finally:
        c.close()
        close()
    served(daemon, capsys, "a subordinate uid in a user namespace")
