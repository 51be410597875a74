# SPDX-License-Identifier: MIT
"""systemd's socket activation and readiness through zygote-runc, as runc and crun carry them
(container/sd-activation.c).

LISTEN_FDS in the runtime's environment: its fds from 3 go on into the container, which is told
LISTEN_FDS=N and LISTEN_PID=1; fds past them do not. NOTIFY_SOCKET: a socket of the runtime's is
bound read-only into the container at the path the caller's names (the container's NOTIFY_SOCKET
is the socket "notify" there), and once the container says READY=1 the caller's socket gets
"READY=1" and "MAINPID=<the init's pid>", nothing else the container sent; `run -d` and `start`
return only then (or once the init is gone). The container's sender is a static helper
(tests/helpers/sd-notify-send.c)."""
import os
import shutil
import socket
import subprocess
import uuid

import pytest

from conftest import BUILD_DIR


def cid():
    return "a-" + uuid.uuid4().hex[:12]


@pytest.fixture
def notifier(bundle):
    helper = os.path.join(BUILD_DIR, "sd-notify-send-static")
    if not os.access(helper, os.X_OK):
        pytest.fail(f"not built: {helper}")
    shutil.copy(helper, os.path.join(bundle.rootfs, "bin", "sd-notify-send"))
    return bundle


@pytest.fixture
def host_socket(open_tmp):
    """The caller's notify socket (systemd's, in real life): a datagram socket in a directory of
    its own."""
    path = str(open_tmp / "host-notify" / "notify.sock")
    os.mkdir(os.path.dirname(path))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)
    s.bind(path)
    yield path, s
    s.close()


def received(s):
    """Every datagram queued on s now (non-blocking: what is there when the runtime returned)."""
    out = []
    while True:
        try:
            out.append(s.recv(4096))
        except BlockingIOError:
            return out


def env_with(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("LISTEN_FDS", "LISTEN_PID", "NOTIFY_SOCKET")}
    env.update(kw)
    return env


# ---- LISTEN_FDS ---------------------------------------------------------------------------------

def run_with_fds(runc, bundle, env, script):
    """run with two pipes at fds 3 and 4 of the runtime; what the container wrote to each."""
    pipes = [os.pipe(), os.pipe()]

    def place():
        os.dup2(pipes[0][1], 3)
        os.dup2(pipes[1][1], 4)

    bundle.set_args("sh", "-c", script)
    try:
        r = runc("run", "--bundle", bundle.path, cid(), env=env, preexec_fn=place, close_fds=False)
    finally:
        for rd, wr in pipes:
            os.close(wr)
    out = []
    for rd, wr in pipes:
        os.set_blocking(rd, False)
        try:
            out.append(os.read(rd, 4096).decode())
        except BlockingIOError:
            out.append("")
        os.close(rd)
    return r, out


SCRIPT = "echo fds=$LISTEN_FDS pid=$LISTEN_PID; echo three >&3; echo four >&4; true"


def test_listen_fds_passed(runc, bundle):
    r, (three, four) = run_with_fds(runc, bundle, env_with(LISTEN_FDS="2"), SCRIPT)
    assert r.returncode == 0, r.stderr
    assert "fds=2 pid=1" in r.stdout
    assert three == "three\n" and four == "four\n"


def test_listen_fds_only_those_named(runc, bundle):
    """LISTEN_FDS=1: fd 3 goes on, fd 4 of the runtime does not (nothing more than asked)."""
    r, (three, four) = run_with_fds(runc, bundle, env_with(LISTEN_FDS="1"), SCRIPT)
    assert r.returncode == 0, r.stderr
    assert "fds=1 pid=1" in r.stdout
    assert three == "three\n" and four == ""


def test_no_listen_fds_no_fds(runc, bundle):
    """Without LISTEN_FDS the runtime's fds stay its own, and no LISTEN_PID is made up."""
    r, (three, four) = run_with_fds(runc, bundle, env_with(), SCRIPT)
    assert r.returncode == 0, r.stderr
    assert "fds= pid=" in r.stdout
    assert three == "" and four == ""


def test_listen_fds_not_a_number(runc, bundle):
    bundle.set_args("true")
    for bad in ("x", "-1", "3x", "99999999999"):
        r = runc("run", "--bundle", bundle.path, cid(), env=env_with(LISTEN_FDS=bad))
        assert r.returncode != 0 and "LISTEN_FDS" in r.stderr, bad


# ---- NOTIFY_SOCKET ------------------------------------------------------------------------------

def test_notify_run_relays_ready_only(runc, notifier, host_socket, open_tmp):
    """The container's NOTIFY_SOCKET names the socket in the directory bound at the caller's path;
    what it sends besides READY=1 (a MAINPID of its choosing, a STATUS) never reaches the
    caller; MAINPID is the init's pid as the host sees it."""
    path, s = host_socket
    pid_file = str(open_tmp / "pid")
    notifier.set_args("sh", "-c", 'echo "env=$NOTIFY_SOCKET"; grep -c " ' + path + ' " /proc/self/mountinfo; sd-notify-send "MAINPID=1" "STATUS=spoofed" '
                      '"STATUS=x\nREADY=1"; sd-notify-send "STATUS=after"')
    r = runc("run", "--pid-file", pid_file, "--bundle", notifier.path, cid(), env=env_with(NOTIFY_SOCKET=path))
    assert r.returncode == 0, r.stderr
    assert f"env={path}/notify\n1\n" in r.stdout
    with open(pid_file) as f:
        pid = int(f.read())
    assert received(s) == [b"READY=1", f"MAINPID={pid}".encode()]


def test_notify_directory_read_only(runc, notifier, host_socket):
    """The container cannot make or replace anything in the directory of its notify socket."""
    path, s = host_socket
    notifier.set_args("sh", "-c", 'd=$(dirname $NOTIFY_SOCKET); touch $d/x && echo made; '
                      'rm -f $NOTIFY_SOCKET && echo removed; ls $d; true')
    r = runc("run", "--bundle", notifier.path, cid(), env=env_with(NOTIFY_SOCKET=path))
    assert r.returncode == 0, r.stderr
    assert "made" not in r.stdout and "removed" not in r.stdout
    assert r.stdout.split() == ["notify"]
    assert received(s) == []


def test_notify_detached_run_returns_once_ready(runc, notifier, host_socket):
    path, s = host_socket
    name = cid()
    notifier.set_args("sh", "-c", "sd-notify-send READY=1; exec sleep 1000")
    r = runc("run", "--detach", "--bundle", notifier.path, name, env=env_with(NOTIFY_SOCKET=path))
    assert r.returncode == 0, r.stderr
    # queued before run returned
    assert received(s) == [b"READY=1", f"MAINPID={runc.state(name)['pid']}".encode()]
    assert runc("delete", "--force", name).returncode == 0


def test_notify_create_start(runc, notifier, host_socket):
    """create binds the socket, start binds it again (create's went with it) and returns once the
    container said READY=1: the datagrams are there when start has returned."""
    path, s = host_socket
    name = cid()
    notifier.set_args("sh", "-c", "sd-notify-send READY=1; exec sleep 1000")
    r = runc("create", "--bundle", notifier.path, name, env=env_with(NOTIFY_SOCKET=path),
             stdout=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert received(s) == []
    r = runc("start", name, env=env_with(NOTIFY_SOCKET=path))
    assert r.returncode == 0, r.stderr
    assert received(s) == [b"READY=1", f"MAINPID={runc.state(name)['pid']}".encode()]
    assert runc("delete", "--force", name).returncode == 0


def test_notify_start_of_a_container_that_never_says_ready(runc, notifier, host_socket):
    """start waits for READY=1 only while the init lives: one that exits ends the wait."""
    path, s = host_socket
    name = cid()
    notifier.set_args("true")
    assert runc("create", "--bundle", notifier.path, name, env=env_with(NOTIFY_SOCKET=path),
                stdout=subprocess.DEVNULL).returncode == 0
    r = runc("start", name, env=env_with(NOTIFY_SOCKET=path), timeout=30)
    assert r.returncode == 0, r.stderr
    assert received(s) == []
    assert runc("delete", "--force", name).returncode == 0


def test_notify_in_a_user_namespace(runc, notifier, host_socket):
    """The container's root is host uid 200000, which cannot reach the state directory: the
    runtime made the mount itself, and the socket takes anyone's datagrams."""
    r = subprocess.run(["unshare", "-U", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"this process may not create a user namespace: {r.stderr.decode().strip()}")
    path, s = host_socket
    os.chmod(os.path.dirname(path), 0o755)
    notifier.config["linux"]["namespaces"].append({"type": "user"})
    notifier.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    notifier.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    # the mapped root may not make the mount point in the root-owned image: the image has it
    os.makedirs(notifier.rootfs + path)
    notifier.set_args("sh", "-c", "id -u; sd-notify-send READY=1")
    pid_file = os.path.join(notifier.path, "pid")
    r = runc("run", "--pid-file", pid_file, "--bundle", notifier.path, cid(), env=env_with(NOTIFY_SOCKET=path))
    assert r.returncode == 0, r.stderr
    with open(pid_file) as f:
        pid = int(f.read())
    assert received(s) == [b"READY=1", f"MAINPID={pid}".encode()]


def test_no_notify_socket_no_mount(runc, notifier):
    """Without NOTIFY_SOCKET no directory of the state is mounted (field 4: the mount's root)."""
    notifier.set_args("sh", "-c", 'echo "env=$NOTIFY_SOCKET"; awk \'$4 ~ /\\/notify$/\' /proc/self/mountinfo | wc -l')
    r = runc("run", "--bundle", notifier.path, cid(), env=env_with())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["env=", "0"]


def test_version_names_notify():
    out = subprocess.run([os.path.join(BUILD_DIR, "zygote-runc"), "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert "+SYSTEMD-NOTIFY" in out.splitlines()[-1].split()



def test_notify_abstract_socket(runc, notifier):
    """An abstract NOTIFY_SOCKET ("@name") has no path to bind at: the container's directory is
    /run/notify (runc's place), and the relay reaches the abstract socket."""
    name = "@zygote-test-" + uuid.uuid4().hex[:12]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)
    s.bind("\0" + name[1:])
    try:
        notifier.set_args("sh", "-c", 'echo "env=$NOTIFY_SOCKET"; sd-notify-send READY=1')
        r = runc("run", "--bundle", notifier.path, cid(), env=env_with(NOTIFY_SOCKET=name))
        assert r.returncode == 0, r.stderr
        assert r.stdout == "env=/run/notify/notify\n"
        got = received(s)
        assert got[0] == b"READY=1" and got[1].startswith(b"MAINPID=") and len(got) == 2
    finally:
        s.close()


def test_start_waiting_for_ready_holds_no_lock(runc, notifier, host_socket):
    """While start waits for a READY=1 that does not come, the container is started and another
    command may change it: delete --force ends it (start held the container's lock until its end
    before: delete then waited for start, start for the init, for ever), and start returns."""
    import select
    path, s = host_socket
    name = cid()
    notifier.set_args("sh", "-c", "echo started; exec sleep 1000")
    rd, wr = os.pipe()
    try:
        r = runc("create", "--bundle", notifier.path, name, env=env_with(NOTIFY_SOCKET=path), stdout=wr)
        os.close(wr)
        wr = -1
        assert r.returncode == 0, r.stderr
        start = subprocess.Popen([runc.binary, "--root", runc.root, "start", name],
                                 env=env_with(NOTIFY_SOCKET=path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # the container runs: start wrote its byte, and now waits
            assert select.select([rd], [], [], 30)[0] and os.read(rd, 64) == b"started\n"
            assert start.poll() is None
            r = runc("delete", "--force", name, timeout=30)
            assert r.returncode == 0, r.stderr
            assert start.wait(timeout=30) == 0, start.stderr.read()
        finally:
            start.kill()
            start.wait()
    finally:
        os.close(rd)
        if wr >= 0:
            os.close(wr)
    assert received(s) == []
