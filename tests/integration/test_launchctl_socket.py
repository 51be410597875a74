# SPDX-License-Identifier: MIT
"""launchctl's default socket: for a user who is not root, the user's own daemon
($XDG_RUNTIME_DIR/zygote/zygoted.sock) when one listens there, else the system daemon
(/run/zygote/zygoted.sock, open to group zygote); `launchctl status` says which it used.

Real daemons from the itest fixtures, each on the socket in its own work directory. launchctl
runs in a private mount namespace (unshare) with a tmpfs on /run and the system daemon's work
directory bind-mounted on /run/zygote, so that /run/zygote/zygoted.sock there is that daemon's
socket and the host's /run is untouched; then setpriv makes it an unprivileged user with an
XDG_RUNTIME_DIR of the test's choosing.

Needs root (mounts, other uids). Run:
/usr/bin/python3 -m pytest -q tests/integration/test_launchctl_socket.py --build-dir build
"""
import os
import shutil
import socket
import subprocess

import pytest

import zytest

SYSTEM_SOCKET = "/run/zygote/zygoted.sock"
USER = zytest.NOBODY


@pytest.fixture
def runtime_dir():
    """An XDG_RUNTIME_DIR the unprivileged user owns, with no daemon in it."""
    d = zytest.make_workdir()
    os.chown(d, USER, USER)
    os.chmod(d, 0o700)
    yield d
    zytest.remove_workdir(d)


def launchctl(bins, system_dir, *args, uid=USER, env=None, group_file=None):
    """launchctl ARGS as uid, where /run/zygote is system_dir (None: no system daemon) and, given
    group_file, /etc/group is that file."""
    if not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("needs unshare(1) and setpriv(1) (Debian package util-linux)")
    script = ('mount -t tmpfs -o mode=0755 zy-run /run && mkdir -m 0755 /run/zygote && '
              '{ [ -z "$1" ] || mount --bind "$1" /run/zygote; } && '
              '{ [ -z "$2" ] || mount --bind "$2" /etc/group; } && shift 2 && exec "$@"')
    who = zytest.setpriv(uid, uid) if uid != 0 else []
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", system_dir or "",
           group_file or "", *who, bins["launchctl"], *args]
    e = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    e.update(env or {})
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                          timeout=zytest.CALL_TIMEOUT, cwd="/")


def socket_line(r):
    assert r.returncode == 0, (r.stdout, r.stderr)
    first = r.stdout.splitlines()[0]
    assert first.startswith("socket: "), r.stdout
    return first[len("socket: "):]


def test_no_user_daemon_falls_back_to_the_system_one(needs_root, daemons, bins, runtime_dir):
    system = daemons()
    r = launchctl(bins, system.dir, "status", env={"XDG_RUNTIME_DIR": runtime_dir})
    user_socket = os.path.join(runtime_dir, "zygote", "zygoted.sock")
    assert socket_line(r) == (f"{SYSTEM_SOCKET} (the system daemon; none at {user_socket}: "
                              "No such file or directory)")
    assert r.stderr == ""
    # Any verb takes the same way, run included: the task runs as the caller.
    r = launchctl(bins, system.dir, "run", "--", "/usr/bin/id", "-u", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert r.returncode == 0 and r.stdout.strip() == str(USER), (r.stdout, r.stderr)
    r = launchctl(bins, system.dir, "ps", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert r.returncode == 0 and r.stdout.startswith("ID "), (r.stdout, r.stderr)


def test_the_users_own_daemon_comes_first(needs_root, daemons, bins, runtime_dir):
    system = daemons()
    mine = daemons(as_uid=USER)
    # $XDG_RUNTIME_DIR/zygote is the user daemon's work directory, where it listens.
    os.symlink(mine.dir, os.path.join(runtime_dir, "zygote"))
    r = launchctl(bins, system.dir, "status", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert socket_line(r) == f"{os.path.join(runtime_dir, 'zygote', 'zygoted.sock')} (your own daemon)"
    # It is that daemon: a task it holds is listed (the system daemon has none). launchctl's mount
    # namespace is not the user daemon's, which it cannot join to spawn into: ps, not run.
    r = mine.launchctl("run", "--detach", "--id", "mine-1", "--", "/bin/true", uid=USER)
    assert r.returncode == 0, r.stderr
    r = launchctl(bins, system.dir, "ps", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert r.returncode == 0 and "mine-1" in r.stdout, (r.stdout, r.stderr)
    assert "mine-1" not in system.launchctl("ps").stdout.decode()
    r = mine.launchctl("wait", "mine-1", uid=USER)
    assert r.returncode == 0, r.stderr
    assert mine.launchctl("delete", "mine-1", uid=USER).returncode == 0


def test_a_dead_user_socket_falls_back_too(needs_root, daemons, bins, runtime_dir):
    """A per-user socket that nobody listens on (a daemon killed before it could remove it):
    refused, then the system daemon."""
    system = daemons()
    d = os.path.join(runtime_dir, "zygote")
    os.mkdir(d, 0o700)
    os.chown(d, USER, USER)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(os.path.join(d, "zygoted.sock"))
    dead.close()
    os.chown(os.path.join(d, "zygoted.sock"), USER, USER)
    r = launchctl(bins, system.dir, "status", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert socket_line(r) == (f"{SYSTEM_SOCKET} (the system daemon; none at {os.path.join(d, 'zygoted.sock')}: "
                              "Connection refused)")


def test_neither_daemon_names_both_sockets(needs_root, bins, runtime_dir):
    r = launchctl(bins, None, "ps", env={"XDG_RUNTIME_DIR": runtime_dir})
    user_socket = os.path.join(runtime_dir, "zygote", "zygoted.sock")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"launchctl: cannot connect to {user_socket}: No such file or directory, nor to "
                        f"{SYSTEM_SOCKET}: No such file or directory (is zygoted running? set ZYGOTE_SOCKET or "
                        "--socket)\n")


def test_root_and_explicit_choices_do_not_fall_back(needs_root, daemons, bins, runtime_dir):
    system = daemons()
    # root: the system daemon, whatever XDG_RUNTIME_DIR says
    r = launchctl(bins, system.dir, "status", uid=0, env={"XDG_RUNTIME_DIR": runtime_dir})
    assert socket_line(r) == f"{SYSTEM_SOCKET} (the system daemon)"
    # $ZYGOTE_SOCKET and --socket are used as given: no second try elsewhere
    missing = os.path.join(runtime_dir, "elsewhere.sock")
    r = launchctl(bins, system.dir, "status", env={"XDG_RUNTIME_DIR": runtime_dir, "ZYGOTE_SOCKET": missing})
    assert r.returncode == 1 and SYSTEM_SOCKET not in r.stderr and missing in r.stderr, r.stderr
    r = launchctl(bins, system.dir, "status", env={"ZYGOTE_SOCKET": SYSTEM_SOCKET})
    assert socket_line(r) == f"{SYSTEM_SOCKET} ($ZYGOTE_SOCKET)"
    r = launchctl(bins, system.dir, "--socket", SYSTEM_SOCKET, "status", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert socket_line(r) == f"{SYSTEM_SOCKET} (--socket)"
    r = launchctl(bins, system.dir, "status", "--socket", missing, env={"XDG_RUNTIME_DIR": runtime_dir})
    assert r.returncode == 1 and SYSTEM_SOCKET not in r.stderr, r.stderr


@pytest.mark.parametrize("gid,members,hint", [
    (4242, "", "zygoted is for root and the members of group zygote: an administrator adds you with "
                "usermod -aG zygote nobody, then you log in again"),
    (4242, "nobody", "you were added to group zygote after this session began: log in again, or run newgrp zygote"),
    (0, "", "the socket is root's alone (mode 0660)"),
], ids=["not-a-member", "member-since-login", "root-only"])
def test_a_refused_user_is_told_how_to_get_access(needs_root, daemons, bins, runtime_dir, gid, members, hint):
    """The system socket as the unit makes it (0660, group zygote) refuses a user outside the
    group: the message says how to be let in, not whether zygoted runs."""
    system = daemons()
    sock = os.path.join(system.dir, "zygoted.sock")
    os.chown(sock, 0, gid)
    os.chmod(sock, 0o660)
    group = os.path.join(runtime_dir, "group")
    with open(group, "w") as f:
        f.write(f"root:x:0:\nzygote:x:4242:{members}\n")
    r = launchctl(bins, system.dir, "ps", env={"XDG_RUNTIME_DIR": runtime_dir, "USER": "nobody"},
                  group_file=group)
    user_socket = os.path.join(runtime_dir, "zygote", "zygoted.sock")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"launchctl: cannot connect to {user_socket}: No such file or directory, nor to "
                        f"{SYSTEM_SOCKET}: Permission denied ({hint})\n")


def test_status_without_a_daemon_says_how_to_start_one(needs_root, bins, runtime_dir):
    """A user's `launchctl status` with neither daemon: not running, and both ways to start one
    (the system daemon as root, the user's own)."""
    r = launchctl(bins, None, "status", env={"XDG_RUNTIME_DIR": runtime_dir})
    assert r.returncode == 1
    assert r.stdout == ("zygoted: not running\n"
                        "start it: systemctl enable --now zygoted.socket (the system daemon, as root),\n"
                        "  or systemctl --user enable --now zygoted.socket (your own)\n")
