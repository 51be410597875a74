# SPDX-License-Identifier: MIT
"""Setup (b): zygoted itself runs as uid 65534, its socket in a directory it owns. Its workers
run as 65534 with no_new_privs; it cannot shrink the bounding set (documented); a caller of
another non-root uid is refused."""
import os

import pytest

import zytest
from zytest import NOBODY, NOGROUP, OTHER_UID, OTHER_GID

L = "io.zygote.Launcher."


@pytest.fixture
def udaemon(daemons, needs_root):
    d = daemons(as_uid=NOBODY)
    st = os.stat(d.socket)
    assert st.st_uid == NOBODY, "the socket is not the unprivileged daemon's"
    assert zytest.proc_status(d.proc.pid)["Uid"].split()[0] == str(NOBODY)
    return d


def cat_status(conn, **extra):
    st, out, final, _ = zytest.spawn_and_status(conn, ["cat"], b"x\n", extra=extra or None)
    assert out == b"x\n" and final["exitCode"] == 0
    return st


def test_workers_run_as_the_daemon_user(udaemon):
    with udaemon.connect_as(NOBODY, NOGROUP) as conn:
        st = cat_status(conn)
    assert st["Uid"].split() == [str(NOBODY)] * 4
    assert st["NoNewPrivs"] == "1"
    assert int(st["CapEff"], 16) == 0 and int(st["CapPrm"], 16) == 0
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1"
    # Cannot shrink the bounding set without CAP_SETPCAP: it stays full, as documented.
    assert int(st["CapBnd"], 16) == zytest.full_capset()


def test_root_caller_is_refused(udaemon):
    """An unprivileged zygoted may not look into root's namespaces (no CAP_SYS_PTRACE), so it
    cannot tell whether root's task would leave them: it refuses, and says why."""
    with udaemon.connect() as c:
        e = c.call_error(L + "Spawn", {"argv": ["true"]})
    assert e.error == L + "CallerConfined", dict(e)
    assert "cannot be read" in e.parameters["reason"], dict(e)


def test_full_bounding_set_is_documented(bins):
    with open(os.path.join(bins["source"], "docs", "SECURITY.md")) as f:
        text = " ".join(f.read().split())
    assert "unprivileged zygoted" in text
    assert "workers keep the full bounding set" in text


def test_other_uid_refused(udaemon):
    with udaemon.connect_as(OTHER_UID, OTHER_GID) as c:
        e = c.call_error(L + "Spawn", {"argv": ["true"]})
        assert e.error == L + "PermissionDenied", dict(e)
    # The daemon's own user still gets served.
    with udaemon.connect_as(NOBODY, NOGROUP) as c:
        out, final, _ = zytest.run_task(c, ["id", "-u"])
    assert out == b"65534\n" and final["exitCode"] == 0


@pytest.mark.parametrize("extra", [{"user": "root"}, {"user": "nobody"}, {"group": "nogroup"}],
                         ids=["user-root", "user-self", "group"])
def test_no_identity_switch(udaemon, extra):
    with udaemon.connect() as c:
        e = c.call_error(L + "Spawn", {"argv": ["true"], **extra})
        assert e.error == L + "PermissionDenied", dict(e)


def test_status_of_unprivileged_daemon(udaemon):
    st = udaemon.status()
    profiles = {p["name"]: p for p in st["profiles"]}
    assert profiles["default"]["tier"] == "inherit"
    ref = profiles["default"]["referencePid"]
    s = zytest.proc_status(ref)
    assert s["Uid"].split()[0] == str(NOBODY) and s["NoNewPrivs"] == "1" and s["Seccomp"] == "2"
    r = udaemon.launchctl("run", "--", "id", "-u", uid=NOBODY)
    assert r.returncode == 0 and r.stdout == b"65534\n", r.stderr
    r = udaemon.launchctl("run", "--", "true", uid=OTHER_UID)
    assert r.returncode == 1 and b"permission denied" in r.stderr.lower()


def test_unprivileged_daemon_has_no_pid_namespace_and_is_not_dumpable(udaemon):
    """It cannot make a pid namespace: said once, tasks share its pid namespace (the fallback
    docs/SECURITY.md states). Its tasks run as its own user: it is not dumpable, so they cannot
    ptrace it or read its memory."""
    log = udaemon.log()
    assert log.count("tasks share zygoted's pid namespace") == 1, log
    assert not any(p.get("initPid") for p in udaemon.profiles().values())
    with open(udaemon.bins["zygoted"], "rb") as f:
        if b"__asan_init" in f.read():
            pytest.skip("an ASan zygoted stays dumpable: its leak check attaches with ptrace")
    code = (f"import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
            f"r = libc.ptrace(16, {udaemon.proc.pid}, 0, 0); print(r, ctypes.get_errno())")
    r = udaemon.launchctl("run", "--", "python3", "-c", code, uid=NOBODY)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [b"-1", b"1"], f"a task attached to its unprivileged zygoted: {r.stdout}"
