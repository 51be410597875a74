# SPDX-License-Identifier: MIT
"""A mount namespace joined by path (linux.namespaces [{"type": "mount", "path": ...}]), as runc 1.1
joins it: the init joins it and sets the rootfs up there (pivot_root). Sharing the runtime's own
mount namespace (no "mount" entry, or a path naming the runtime's or pid 1's) stays refused
(docs/CONTAINERS.md, deliberate differences)."""
import os
import signal
import subprocess
import uuid

import pytest

import containertools as ct
from test_runtime import create_fails, mounts_below


def cid():
    return "m-" + uuid.uuid4().hex[:12]


class Owner:
    """A process in a mount namespace of its own (private propagation), with a tmpfs at `shown`
    holding a file `f`: a mount only that namespace has. Ready when it has said so on stdout."""

    def __init__(self, shown, then="true"):
        script = f"mount -t tmpfs owner {shown} && echo owned > {shown}/f && {then} && echo ready && exec sleep 1000"
        self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                                     stdout=subprocess.PIPE, text=True, start_new_session=True)
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", "the owner of the mount namespace did not start"
        self.ns = f"/proc/{self.proc.pid}/ns/mnt"
        self.ino = os.stat(self.ns).st_ino

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


@pytest.fixture
def owner(open_tmp):
    if subprocess.run(["unshare", "--help"], capture_output=True).returncode != 0:
        pytest.skip("no unshare(1) (util-linux)")
    if ct.chrooted():
        pytest.skip("chrooted (the rehearsal): a mount namespace joined lands at its own root, the host's, "
                    "where the bundle's path is not")
    shown = open_tmp / "shown"
    shown.mkdir()
    o = Owner(str(shown))
    yield o
    o.close()


def join_mount(bundle, path):
    ns = [n for n in bundle.config["linux"]["namespaces"] if n["type"] != "mount"]
    bundle.config["linux"]["namespaces"] = ns + [{"type": "mount", "path": path}]
    bundle.save()


def test_join_mount_namespace_by_path(runc, bundle, owner, open_tmp):
    shown = str(open_tmp / "shown")
    join_mount(bundle, owner.ns)
    # the tmpfs at `shown` exists only in the joined namespace: a bind of it shows its file
    bundle.config["mounts"].append({"destination": "/joined", "type": "bind", "source": shown,
                                    "options": ["rbind", "ro"]})
    bundle.set_args("sh", "-c", "cat /joined/f; stat -Lc %i /proc/self/ns/mnt; ls /")
    name = cid()
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert out[0] == "owned", r.stdout
    assert int(out[1]) == owner.ino, "the container is not in the joined mount namespace"
    # its root is the rootfs (pivoted), not the namespace's old "/"
    assert "bin" in out and "joined" in out and "usr" not in out, r.stdout
    # nothing of the container is mounted in the runtime's (the test's) mount table
    assert mounts_below(bundle.path) == []
    # the owner lives on in the namespace it had
    assert owner.proc.poll() is None
    assert os.stat(owner.ns).st_ino == owner.ino
    assert not os.path.exists(os.path.join(runc.root, name))


def test_exec_into_a_container_in_a_joined_mount_namespace(runc, bundle, owner):
    join_mount(bundle, owner.ns)
    bundle.set_args("sleep", "1000")
    name = cid()
    assert runc("run", "-d", "--bundle", bundle.path, name).returncode == 0
    try:
        r = runc("exec", name, "sh", "-c", "stat -Lc %i /proc/self/ns/mnt; test -x /bin/busybox && echo rootfs")
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [str(owner.ino), "rootfs"], r.stdout
    finally:
        assert runc("delete", "--force", name).returncode == 0
    assert owner.proc.poll() is None and os.stat(owner.ns).st_ino == owner.ino


@pytest.mark.parametrize("path, said", [
    ("/nonexistent/ns/mnt", "namespace /nonexistent/ns/mnt"),
    ("/proc/self/ns/net", "is a network namespace, not a mount one"),
    ("/etc/hostname", "not a namespace file"),
    # the runtime's own mount namespace and pid 1's: the host's, by another name
    ("/proc/self/ns/mnt", "the runtime's own (the host's) mount namespace"),
    ("/proc/1/ns/mnt", "the runtime's own (the host's) mount namespace"),
    (f"/proc/{os.getpid()}/ns/mnt", "the runtime's own (the host's) mount namespace"),
])
def test_bad_mount_namespace_paths_refused(runc, bundle, path, said):
    if path.startswith("/etc") and not os.path.exists(path):
        pytest.skip(f"no {path} here")
    if path == "/proc/1/ns/mnt" and not os.access(path, os.R_OK):
        pytest.skip("pid 1's mount namespace cannot be opened here (pid 1 is not ours to inspect)")
    before = open("/proc/self/mountinfo").read()
    join_mount(bundle, path)
    assert said in create_fails(runc, bundle, cid())
    assert open("/proc/self/mountinfo").read() == before, "a mount was made in the runtime's namespace"


def test_create_container_hooks_not_taken_from_the_joined_namespace(runc, bundle, open_tmp):
    """The owner of the joined namespace plants an executable at the createContainer hook's path,
    which exists only in its namespace: the init would run it with its full privileges, before
    pivot_root. Refused; the planted hook never runs."""
    if ct.chrooted():
        pytest.skip("chrooted (the rehearsal): a mount namespace joined lands at its own root, the host's, "
                    "where the bundle's path is not")
    shown = open_tmp / "shown"
    shown.mkdir()
    pwned = open_tmp / "pwned"
    planted = Owner(str(shown), f"printf '#!/bin/sh\\ntouch {pwned}\\n' > {shown}/hook && chmod 755 {shown}/hook")
    try:
        join_mount(bundle, planted.ns)
        bundle.config["hooks"] = {"createContainer": [{"path": f"{shown}/hook"}]}
        bundle.set_args("true")
        assert "hooks.createContainer with a mount namespace joined by path" in create_fails(runc, bundle, cid())
        assert not pwned.exists()
        # the planted hook is there and runs, in its namespace
        subprocess.run(["nsenter", "-t", str(planted.proc.pid), "-m", f"{shown}/hook"], check=True, timeout=30)
        assert pwned.exists()
    finally:
        planted.close()


def test_mount_namespace_given_twice_refused(runc, bundle, owner):
    bundle.config["linux"]["namespaces"].append({"type": "mount", "path": owner.ns})
    bundle.save()
    assert '"mount" given more than once' in create_fails(runc, bundle, cid())


def test_no_mount_namespace_refused_and_nothing_mounted(runc, bundle):
    """runc 1.1 sets such a container up in its own mount namespace (the host's) and chroots: the
    rootfs and every mount of the config in the host's table. Refused, saying what to write."""
    before = open("/proc/self/mountinfo").read()
    bundle.config["linux"]["namespaces"] = [n for n in bundle.config["linux"]["namespaces"] if n["type"] != "mount"]
    bundle.save()
    err = create_fails(runc, bundle, cid())
    assert 'linux.namespaces has no "mount"' in err and '{"type": "mount"}' in err
    assert open("/proc/self/mountinfo").read() == before
