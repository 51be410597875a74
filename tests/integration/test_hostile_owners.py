# SPDX-License-Identifier: MIT
"""Accounts: every per-user budget of zygoted counts a caller by the uid that owns its user
namespace chain (docs/SECURITY.md, "Accounts"), so that a user's subordinate uids are that user;
root of zygoted's own user namespace keeps a reserve of connections; idle connections are closed.

The attacker is uid 4242 with 65536 subordinate uids, as Debian gives every new user: its
processes in a user namespace it made (uids mapped by root, as newuidmap does) connect as those
uids (attacks.Connections).
"""
import os

import pytest

import attacks
import varlink
from hostile import L, LIMIT
from test_hostile_latency import expensive_object, children_named
import zytest
from zytest import OTHER_UID, OTHER_GID, wait_for

OWNER = 4242
BASE = 300000
# the paths that find a caller's user namespace: the pidfd's (Linux 6.11), and /proc/PID/ns/user
FINDERS = [None, {"ZYGOTE_DISABLE_FEATURES": "pidfd_userns"}]
FINDER_IDS = ["pidfd", "proc"]


def admitted(conns):
    """Calls GetStatus on each connection: (how many were served, the limits of those refused
    at connect)."""
    served, refused = 0, []
    for c in conns:
        try:
            c.send(L + "GetStatus")
        except OSError:
            pass  # refused and closed already: its error is still there to read
        try:
            r = c.recv()
        except (varlink.Closed, ConnectionResetError) as e:
            refused.append(repr(e))
            continue
        if r.error:
            refused.append((r.error, r.parameters.get("limit"), r.parameters.get("max")))
        else:
            served += 1
    return served, refused


def close_all(conns):
    for c in conns:
        c.close()


def assert_one_account(socket, owner, per_uid, uids):
    """PER_UID connections from each of UIDS subordinate uids of OWNER's namespace: 128 served in
    all, the rest refused for connections_per_user, as one account's."""
    with attacks.Connections(socket, owner, per_uid=per_uid, uids=uids, base=BASE) as h:
        conns = h.conns(timeout=10)
        try:
            served, refused = admitted(conns)
        finally:
            close_all(conns)
    assert served == 128, (served, refused[:3])
    assert set(refused) == {(LIMIT, "connections_per_user", 128)}, set(map(str, refused))


@pytest.mark.parametrize("env", FINDERS, ids=FINDER_IDS)
def test_subuids_count_as_their_owner(daemons, needs_root, env):
    """uid 4242 connects 64 times as each of 4 of its subordinate uids: the 256 connections are
    one account, 128 of them served and the rest refused at connect (LimitExceeded
    connections_per_user), whichever way the namespace is found. Before, each subordinate uid had
    128 of its own, and 8 of them filled the daemon."""
    d = daemons(env=env)
    assert_one_account(d.socket, OWNER, per_uid=64, uids=4)


def test_nested_namespaces_count_as_the_outer_owner(daemon):
    """A user namespace made inside one uid 4242 made (by its uid 1, mapped to 300001): its
    processes count as 4242 too, however deep. 4242's own connections and its nested namespace's
    share the 128."""
    with attacks.Connections(daemon.socket, OWNER, per_uid=100) as own, \
            attacks.Connections(daemon.socket, OWNER, per_uid=50, uids=1, base=BASE, nested=True) as nested:
        conns = own.conns(timeout=10) + nested.conns(timeout=10)
        try:
            served, refused = admitted(conns)
        finally:
            close_all(conns)
    assert served == 128, (served, refused[:3])


def test_root_made_namespace_is_not_root(daemon):
    """A user namespace root made (a container's users) is not root: its callers share one
    account with the limits of any user, whatever uids it maps (here 2, 100 connections each:
    128 served)."""
    assert_one_account(daemon.socket, 0, per_uid=100, uids=2)


@pytest.mark.parametrize("env", FINDERS, ids=FINDER_IDS)
def test_callers_gone_before_accept_share_one_account(daemons, needs_root, env):
    """A connection whose process exited before zygoted accepted it has no namespace to read: it
    counts in one account shared by all such callers (never as the uid it claims, which a
    process in a user namespace of its own could pick among its subordinate uids). With zygoted
    stopped, 100 connections of uid 5101 and then 40 of uid 5102 wait in the backlog while their
    processes exit: 128 of the 140 are served, 12 refused (connections_per_user), and a live
    caller of uid 5101 is served besides (before, each uid had 128: all 140 were served)."""
    import signal
    daemon = daemons(env=env)
    served_all, refused_all, held = 0, [], []
    try:
        for uid, n in ((5101, 100), (5102, 40)):  # each batch within the listen backlog (128)
            os.kill(daemon.proc.pid, signal.SIGSTOP)
            try:
                h = attacks.Connections(daemon.socket, uid, per_uid=n, exit_after=True)
                h.close_processes()
            finally:
                os.kill(daemon.proc.pid, signal.SIGCONT)
            held.append(h)
            conns = h.conns(timeout=10)
            held.append(conns)
            served, refused = admitted(conns)
            served_all += served
            refused_all += refused
        assert served_all == 128, (served_all, refused_all[:3])
        assert set(refused_all) == {(LIMIT, "connections_per_user", 128)}, set(map(str, refused_all))
        with daemon.connect_as(5101, 5101, timeout=10) as live:
            assert live.call(L + "GetStatus").parameters["version"]
    finally:
        for h in held:
            if isinstance(h, list):
                close_all(h)
            else:
                h.close()


def test_root_keeps_a_reserve_of_connections(daemon):
    """Eight users at 120 connections each take the 960 the others may have: a ninth user is
    refused at connect (LimitExceeded connections, max 960), and root is served (before, root
    counted in the same 1,024 as everyone)."""
    held = []
    try:
        for i in range(8):
            held.append(attacks.Connections(daemon.socket, 5000 + i, per_uid=120))
        with daemon.connect_as(OTHER_UID, OTHER_GID, timeout=10) as other:
            served, refused = admitted([other])
        assert served == 0 and refused == [(LIMIT, "connections", 960)], refused
        with daemon.connect(timeout=10) as root:
            assert root.call(L + "GetStatus").parameters["connections"] >= 961
    finally:
        for h in held:
            h.close()


def test_events_streams_count_per_owner(daemon):
    """Events streams: 8 per account. Four subordinate uids of 4242 with 3 streams each get 8 in
    all, the rest LimitExceeded subscribers_per_user (before, 8 each: 64 filled every slot). A
    stream taken answers nothing until an event; a refusal comes at once."""
    with attacks.Connections(daemon.socket, OWNER, per_uid=3, uids=4, base=BASE) as h:
        conns = h.conns(timeout=10)
        try:
            for c in conns:
                c.send(L + "Events", more=True)
            with daemon.connect(timeout=10) as root:  # the streams' calls are taken by now, mostly
                root.call(L + "GetStatus")
            ok, limits = 0, []
            for c in conns:
                c.sock.settimeout(1.0)
                try:
                    r = c.recv()
                except (TimeoutError, OSError):
                    ok += 1  # subscribed: nothing to say until an event
                    continue
                limits.append((r.error, r.parameters.get("limit")))
        finally:
            close_all(conns)
    assert ok == 8 and set(limits) == {(LIMIT, "subscribers_per_user")}, (ok, limits)


def test_compile_slot_per_owner(daemon):
    """GetFilter: one compile at a time per account. While subordinate uid 1's expensive object
    compiles, subordinate uid 2's object is refused (LimitExceeded compiles_per_user), before
    the object is even hashed; another user compiles meanwhile."""
    with attacks.Connections(daemon.socket, OWNER, per_uid=1, uids=2, base=BASE) as h:
        a, b = h.conns(timeout=60)
        try:
            a.send(L + "GetFilter", {"seccomp": expensive_object(56, 6, 3, tag=f"owner a {os.getpid()}")})
            wait_for(lambda: children_named(daemon.proc.pid, "zygote-compile"), "a compile child", timeout=10)
            e = b.call_error(L + "GetFilter", {"seccomp": expensive_object(2, 1, 1, tag="owner b")})
            assert e.error == LIMIT and e.parameters == {"limit": "compiles_per_user", "max": 1}, dict(e)
            with daemon.connect_as(OTHER_UID, OTHER_GID, timeout=60) as other:
                r = other.call(L + "GetFilter", {"seccomp": expensive_object(2, 1, 1, tag="other")})
                r.close_fds()
            a.recv().close_fds()
        finally:
            a.close()
            b.close()


def test_idle_connection_is_closed(daemons, needs_root):
    """With the idle timeout at 1 s (the test seam ZYGOTE_IDLE_TIMEOUT_SEC; 120 s otherwise): a
    connection that calls nothing is closed; one whose Events stream waits and one that calls
    GetStatus every half second stay open past it (a stream that waits is not idle), and the
    stream still gets its event."""
    d = daemons(env={"ZYGOTE_IDLE_TIMEOUT_SEC": "1"})
    idle = d.connect_as(OTHER_UID, OTHER_GID, timeout=10)
    events = d.connect_as(OTHER_UID, OTHER_GID, timeout=10)
    busy = d.connect_as(OTHER_UID, OTHER_GID, timeout=10)
    try:
        assert idle.call(L + "GetStatus").parameters["version"]
        events.send(L + "Events", more=True)
        closed = False
        for i in range(40):  # a call every half second: idle closed within 2 to 4 timeouts
            assert busy.call(L + "GetStatus").parameters["version"]
            if closed:
                assert not busy.at_eof(0.5), "a connection calling every half second was closed"
            else:
                closed = idle.at_eof(0.5)
            if closed and i >= 8:
                break
        assert closed, "an idle connection stayed open past the idle timeout"
        assert not events.at_eof(0.1), "a waiting Events stream was closed as idle"
        with d.connect_as(OTHER_UID, OTHER_GID, timeout=10) as c:
            zytest.run_task(c, ["/bin/true"])
        events.sock.settimeout(10)
        r = events.recv()
        assert not r.error and r.parameters["event"]["type"], dict(r)
    finally:
        for c in (idle, events, busy):
            c.close()
