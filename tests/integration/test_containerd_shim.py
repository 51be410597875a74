# SPDX-License-Identifier: MIT
"""containerd-shim-zygote-v2 without containerd and without containers: `start` and `delete` as
containerd runs them, and the ttrpc Task service spoken by hand (ttrpcwire.py): its framing,
several calls in flight on one connection, and the errors containerd reads as status codes
(unknown methods, bad requests, unknown processes, zygoted out of reach). The containers
themselves: tests/runtime/test_containerd_shim.py."""
import json
import os
import shutil
import socket
import subprocess
import threading
import uuid

import pytest

import shimv2
import ttrpcwire as w
import zytest


@pytest.fixture
def workdir():
    d = zytest.make_workdir()
    yield d
    zytest.remove_workdir(d)


@pytest.fixture
def shim_bin(request, workdir):
    build = os.path.abspath(request.config.getoption("--build-dir"))
    if not shimv2.find_shim(build):
        pytest.fail(f"not built: {build}/containerd-shim-zygote-v2")
    return shimv2.copy_shim(build, workdir)


@pytest.fixture
def shim(shim_bin, workdir, needs_root):
    """A started shim whose zygoted is out of reach (a socket path nobody listens on)."""
    bundle = os.path.join(workdir, "bundle")
    os.mkdir(bundle)
    s = shimv2.Shim(shim_bin, bundle, env={"ZYGOTE_SOCKET": os.path.join(workdir, "none.sock")})
    s.start()
    yield s
    s.stop()


def test_start_prints_and_records_the_address(shim):
    with open(os.path.join(shim.bundle, "address")) as f:
        assert f.read() == "unix://" + shim.path
    st = os.stat(shim.path)
    assert (st.st_mode & 0o170000, st.st_mode & 0o777) == (0o140000, 0o600)  # a socket for its uid alone
    # the serving shim is a session leader of its own, not the start command's child
    with open(f"/proc/{shim.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    assert int(fields[3]) == shim.pid, fields  # its session id is its pid


def test_start_again_answers_the_same_address(shim):
    again = shimv2.Shim(shim.binary, shim.bundle, cid=shim.id, env=shim.env)
    r = subprocess.run(again.argv("start"), cwd=shim.bundle, env=shim.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "unix://" + shim.path


def test_connect_and_shutdown(shim):
    c = shim.client()
    resp = c.call("Connect", w.encode([(1, shim.id)]))
    assert w.first(resp, 1) == shim.pid
    assert w.first(resp, 3).startswith(b"zygote "), resp
    # no process: Shutdown stops the shim, which removes its socket
    assert c.call("Shutdown", w.encode([(1, shim.id)])) == {}
    assert shim.wait_gone()
    shim.pid = None
    assert not os.path.exists(shim.path)


@pytest.mark.parametrize("method,payload,code,message", [
    ("Nope", b"", w.UNIMPLEMENTED, "method containerd.task.v2.Task.Nope"),
    ("Stats", w.encode([(1, "x")]), w.NOT_FOUND, "stats: no process x"),
    ("Update", w.encode([(1, "x")]), w.INVALID_ARGUMENT, "update: no resources"),
    ("Update", w.encode([(1, "x"), (2, [(1, "r"), (2, b"{}")])]), w.NOT_FOUND, "update: no process x"),
    ("Checkpoint", b"", w.UNIMPLEMENTED, "Checkpoint: checkpoints are not supported"),
    ("State", b"\xff\xff\xff", w.INVALID_ARGUMENT, "State: the request is not a containerd.task.v2.StateRequest"),
    ("State", w.encode([(1, "x")]), w.NOT_FOUND, "state: no process x"),
    ("Wait", w.encode([(1, "x"), (2, "e")]), w.NOT_FOUND, "wait: no process x e"),
    ("Kill", w.encode([(1, "x"), (3, 9)]), w.NOT_FOUND, "kill: no process x"),
    ("Delete", w.encode([(1, "x")]), w.NOT_FOUND, "delete: no process x"),
    ("Start", w.encode([(1, "x")]), w.NOT_FOUND, "start: no process x"),
    ("Pids", w.encode([(1, "x")]), w.NOT_FOUND, "pids: no process x"),
    ("ResizePty", w.encode([(1, "x")]), w.NOT_FOUND, "resizepty: no process x"),
    ("Exec", w.encode([(1, "x"), (2, "e"), (7, [(1, "t"), (2, b"{}")])]), w.NOT_FOUND, "exec: no container x"),
    ("Exec", w.encode([(1, "x")]), w.INVALID_ARGUMENT, "exec: no exec id"),
    ("Create", w.encode([(1, "a/b"), (2, "/tmp")]), w.INVALID_ARGUMENT,
     "create: a/b is not a valid container id for zygote"),
    ("Create", w.encode([(1, "a"), (2, "rel")]), w.INVALID_ARGUMENT, "create: the bundle path is not absolute"),
])
def test_errors_as_status_codes(shim, method, payload, code, message):
    c = shim.client()
    with pytest.raises(w.Error) as e:
        c.call(method, payload)
    assert (e.value.code, e.value.message) == (code, message)
    # the connection goes on serving
    assert w.first(c.call("Connect", w.encode([(1, shim.id)])), 1) == shim.pid


def test_unknown_service(shim):
    c = shim.client()
    with pytest.raises(w.Error) as e:
        c.call("Forward", b"", service="containerd.services.events.ttrpc.v1.Events")
    assert e.value.code == w.UNIMPLEMENTED
    assert "containerd.services.events.ttrpc.v1.Events" in e.value.message


def test_create_without_zygoted(shim):
    """zygoted out of reach: UNAVAILABLE with the reason; the failed Create leaves nothing, so a
    second one is answered the same way (not "exists")."""
    c = shim.client()
    for _ in range(2):
        with pytest.raises(w.Error) as e:
            c.call("Create", w.encode([(1, shim.id), (2, shim.bundle)]))
        assert e.value.code == w.UNAVAILABLE, e.value
        assert e.value.message == "create: cannot reach zygoted: No such file or directory"
    with pytest.raises(w.Error) as e:
        c.call("State", w.encode([(1, shim.id)]))
    assert e.value.code == w.NOT_FOUND


class RefusingDaemon:
    """A socket in zygoted's place that answers every call with one error (name, parameters), as
    zygoted refuses a caller; the shim is what is tested here, not the refusal."""

    def __init__(self, path, error, parameters):
        self.reply = json.dumps({"error": error, "parameters": parameters}).encode() + b"\0"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind(path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                data = b""
                while b"\0" not in data:
                    more = conn.recv(65536)
                    if not more:
                        break
                    data += more
                if data:
                    conn.sendall(self.reply)

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=30)


@pytest.mark.parametrize("error,parameters,shown", [
    ("io.zygote.Launcher.CallerConfined", {"reason": "the caller is in namespaces or a root other than zygoted's"},
     "io.zygote.Launcher.CallerConfined: the caller is in namespaces or a root other than zygoted's"),
    ("io.zygote.Launcher.InvalidParameter", {"parameter": "rootfs", "message": "not a directory"},
     "io.zygote.Launcher.InvalidParameter: not a directory (parameter rootfs)"),
    ("io.zygote.Launcher.NoSuchProfile", {"profile": "web"}, "io.zygote.Launcher.NoSuchProfile (profile web)"),
    ("io.zygote.Launcher.PermissionDenied", {}, "io.zygote.Launcher.PermissionDenied"),
])
def test_zygoteds_reason_reaches_containerd(shim_bin, workdir, needs_root, error, parameters, shown):
    """zygoted's refusal reaches containerd (and the kubelet, which shows containerd's message)
    with what its parameters say, not only its name: the reason is no longer in zygoted's log
    alone."""
    bundle = os.path.join(workdir, "bundle")
    os.mkdir(bundle)
    daemon = RefusingDaemon(os.path.join(workdir, "refusing.sock"), error, parameters)
    s = shimv2.Shim(shim_bin, bundle, env={"ZYGOTE_SOCKET": os.path.join(workdir, "refusing.sock")})
    s.start()
    try:
        with pytest.raises(w.Error) as e:
            s.client().call("Create", w.encode([(1, s.id), (2, bundle)]))
        assert e.value.message == "create: zygoted: " + shown
    finally:
        s.stop()
        daemon.close()


def test_calls_in_flight_on_one_connection(shim):
    """Requests sent before any reply is read are each answered on their own stream."""
    c = shim.client()
    streams = {c.send("Connect", w.encode([(1, shim.id)])): None for _ in range(8)}
    bad = c.send("State", w.encode([(1, "nothing")]))
    with pytest.raises(w.Error):
        c.recv(bad)
    for s in reversed(list(streams)):
        assert w.first(c.recv(s), 1) == shim.pid


def test_bad_frames_close_only_their_connection(shim):
    """A response frame or an oversized one ends that connection; others go on."""
    other = shim.client()
    for frame in (b"\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00", b"\x7f\x00\x00\x00\x00\x00\x00\x01\x01\x00"):
        c = shim.client()
        c.sock.sendall(frame)
        assert c.sock.recv(1) == b""
        c.close()
    assert w.first(other.call("Connect", w.encode([(1, shim.id)])), 1) == shim.pid


def test_delete_command_without_a_task(shim_bin, workdir, needs_root):
    """`delete` after a dead shim whose task zygoted does not know: success, and a
    DeleteResponse with 137 and a time."""
    bundle = os.path.join(workdir, "gone")
    os.mkdir(bundle)
    s = shimv2.Shim(shim_bin, bundle, env={"ZYGOTE_SOCKET": os.path.join(workdir, "none.sock")})
    r = s.delete()
    assert r.returncode == 0, r.stderr
    resp = w.decode(r.stdout)
    assert w.first(resp, 2) == 137, resp
    assert w.first(w.decode(w.first(resp, 3)), 1) > 0, resp  # exited_at.seconds
    assert b"cannot" not in r.stderr or b"cleaning up task" in r.stderr


def tmpfs(path, mark):
    """A tmpfs mounted on path, a file named mark in it."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "zytest", path], check=True)
    with open(os.path.join(path, mark), "w"):
        pass


def unmount_all(path):
    while os.path.ismount(path):
        subprocess.run(["umount", "-l", path], check=True)


def delete_in(shim_bin, workdir, bundle):
    s = shimv2.Shim(shim_bin, bundle, env={"ZYGOTE_SOCKET": os.path.join(workdir, "none.sock")})
    r = s.delete()
    assert r.returncode == 0, r.stderr
    return r.stderr.decode()


@pytest.mark.parametrize("how", ["symlinked-rootfs", "dotdot-bundle", "symlinked-bundle", "own-rootfs"])
def test_delete_unmounts_only_the_bundles_own_rootfs(shim_bin, workdir, needs_root, how):
    """`delete` detaches the mounts stacked on BUNDLE/rootfs itself, and nothing else: not the
    target of a rootfs that is a symlink (two tmpfs stacked on a directory elsewhere), not a rootfs
    reached through a bundle path with ".." or a symlink in it (-bundle names another directory
    than the one it says). The control: a bundle whose rootfs has two tmpfs stacked on it is left
    with none."""
    target = os.path.join(workdir, "real", "rootfs")
    os.makedirs(target)
    os.mkdir(os.path.join(workdir, "other"))
    try:
        tmpfs(target, "lower")
        tmpfs(target, "upper")
        if how == "symlinked-rootfs":
            bundle = os.path.join(workdir, "linked")
            os.mkdir(bundle)
            os.symlink(target, os.path.join(bundle, "rootfs"))
        elif how == "dotdot-bundle":
            bundle = os.path.join(workdir, "other", "..", "real")
        elif how == "symlinked-bundle":
            bundle = os.path.join(workdir, "real-link")
            os.symlink(os.path.join(workdir, "real"), bundle)
        else:
            bundle = os.path.join(workdir, "real")
        delete_in(shim_bin, workdir, bundle)
        if how == "own-rootfs":
            assert not os.path.ismount(target) and os.listdir(target) == []
        else:
            assert os.path.ismount(target) and os.listdir(target) == ["upper"], os.listdir(target)
    finally:
        unmount_all(target)


@pytest.mark.parametrize("how", ["symlinked-rootfs", "dangling-rootfs", "symlinked-bundle", "own-rootfs"])
def test_create_mounts_only_on_the_bundles_own_rootfs(shim_bin, workdir, needs_root, how):
    """Create mounts containerd's rootfs mounts on BUNDLE/rootfs itself and never through a
    symlink: a rootfs linked to a host directory (or to one that does not exist yet), or a bundle
    path through a symlink (Delete could not unmount what was mounted through it), gets nothing
    mounted there, and Create fails. The control: with the bundle's own directory, the tmpfs is
    mounted there (then unmounted again, as zygoted is out of reach)."""
    host = os.path.join(workdir, "host")
    os.mkdir(host)
    bundle = os.path.join(workdir, "b-" + how)
    os.mkdir(bundle)
    if how == "symlinked-rootfs":
        os.symlink(host, os.path.join(bundle, "rootfs"))
    elif how == "dangling-rootfs":
        os.symlink(os.path.join(host, "new"), os.path.join(bundle, "rootfs"))
    elif how == "symlinked-bundle":
        os.mkdir(os.path.join(host, "rootfs"))
        os.rmdir(bundle)
        os.symlink(host, bundle)
    s = shimv2.Shim(shim_bin, bundle, env={"ZYGOTE_SOCKET": os.path.join(workdir, "none.sock")})
    s.start()
    try:
        # a failing Create (zygoted is out of reach) unmounts only the bundle's own rootfs: a
        # mount made through the symlink would stay on the host directory
        mount = [(1, "tmpfs"), (2, "zytest-rootfs"), (4, "size=1m")]
        req = [(1, s.id), (2, bundle), (3, mount)]
        with pytest.raises(w.Error) as e:
            s.client().call("Create", w.encode(req))
        # the shim writes its address into the bundle, here the host directory behind the link
        assert not os.path.ismount(host) and set(os.listdir(host)) <= {"rootfs", "address"}, os.listdir(host)
        assert not os.path.ismount(os.path.join(host, "rootfs"))
        if how == "symlinked-bundle":
            assert "mounting the rootfs: Too many levels of symbolic links" in e.value.message, e.value.message
        elif how == "own-rootfs":
            # mounted, then failed at zygoted (and unmounted again)
            assert "cannot reach zygoted" in e.value.message, e.value.message
        else:
            assert "mounting the rootfs: Not a directory" in e.value.message, e.value.message
            assert not os.path.exists(os.path.join(host, "new"))
    finally:
        s.stop()
        unmount_all(host)
        unmount_all(os.path.join(bundle, "rootfs"))


def test_version(shim_bin):
    for flag in ("-v", "--version"):
        r = subprocess.run([shim_bin, flag], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith("containerd-shim-zygote-v2 (zygote "), r.stdout


def test_usage_errors(shim_bin):
    r = subprocess.run([shim_bin, "start"], capture_output=True, text=True)
    assert r.returncode == 2 and "-namespace, -id and -address are required" in r.stderr
    r = subprocess.run([shim_bin, "-namespace", "n", "-id", "i", "-address", "a", "frobnicate"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "unknown action frobnicate" in r.stderr


def test_valgrind_clean(shim_bin, workdir, needs_root):
    """The serving shim under valgrind through start, errors of every kind and Shutdown: no
    invalid access, no leak (the thread that reads the connection may still be reading when
    the shim exits: "possibly lost" is its own stack)."""
    if not shutil.which("valgrind"):
        pytest.skip("no valgrind")
    skip_if_sanitized(shim_bin)
    bundle = os.path.join(workdir, "vg")
    os.mkdir(bundle)
    logs = os.path.join(workdir, "vg.%p")
    s = shimv2.Shim(shim_bin, bundle, cid="vg-" + uuid.uuid4().hex[:8],
                    env={"ZYGOTE_SOCKET": os.path.join(workdir, "none.sock")},
                    wrapper=["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
                             "--show-leak-kinds=definite", f"--log-file={logs}"])
    s.start(timeout=120)
    c = s.client()
    for method, payload in (("Nope", b""), ("State", b"\xff"), ("State", w.encode([(1, "x")])),
                            ("Create", w.encode([(1, s.id), (2, bundle)])), ("Stats", b"")):
        with pytest.raises(w.Error):
            c.call(method, payload)
    c.call("Connect", w.encode([(1, s.id)]))
    c.call("Shutdown", w.encode([(1, s.id)]))
    assert s.wait_gone(timeout=120)
    s.pid = None
    reports = [f for f in os.listdir(workdir) if f.startswith("vg.")]
    assert len(reports) >= 2, reports  # the start command and the shim it left
    for name in reports:
        with open(os.path.join(workdir, name)) as f:
            text = f.read()
        assert text.strip() == "", f"{name}:\n{text}"


def skip_if_sanitized(binary):
    """valgrind cannot run an AddressSanitizer build (the asan lane's): the main lane checks it."""
    with open(binary, "rb") as f:
        if b"__asan_init" in f.read():
            pytest.skip("an AddressSanitizer build: valgrind runs the main lane's")
