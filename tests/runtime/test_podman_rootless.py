# SPDX-License-Identifier: MIT
"""Rootless podman (Debian 12's 4.3, with conmon) through zygote-runc, beside runc on the same
image: `run --rm`, `run -d` plus `exec`, a limit.

A user of the test's own, with subordinate id ranges, made without touching the host's files:
in a mount namespace of its own, /etc/passwd, group, subuid and subgid are the test's (each the
host's plus the user's line), so that podman, and the setuid newuidmap/newgidmap that map its
user namespace, see the user; it runs with an XDG_RUNTIME_DIR and a home of its own (podman's
vfs storage there), no network. Podman runs the OCI runtime as root of that user namespace,
where zygote-runc is rootless: its state root is $XDG_RUNTIME_DIR/zygote-runc and the cgroups it
may not create are gone without (test_rootless.py tests both directly). The image is
make-image.sh's busybox rootfs, `podman import`ed: no registry.

At the end, the processes of the test's uid (podman's rootless pause process holds the user
namespace) are killed by pid, and the directory removed.
"""
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import uuid

import pytest

from containertools import chrooted, run_to_files, wait_gone
from conftest import BUILD_DIR, SOURCE_DIR

UID = 61000 + os.getpid() % 1000  # a uid no one has: the test's processes are that uid's alone
USER = "zyrootless"
IMAGE = "localhost/zygote-rootless:latest"
SCRIPT = """set -e
for f in passwd group subuid subgid; do mount --bind "$1/$f" "/etc/$f"; done
d=$1
shift
exec setpriv --reuid={uid} --regid={uid} --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \\
  HOME="$d/home" USER={user} LOGNAME={user} XDG_RUNTIME_DIR="$d/xdg" "$@"
"""


def processes_of(uid):
    found = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and os.stat(f"/proc/{p}").st_uid == uid:
                found.append(int(p))
        except OSError:
            pass
    return found


class RootlessUser:
    def __init__(self, workdir, runtime):
        self.dir = workdir
        self.runtime = runtime
        self.xdg = os.path.join(workdir, "xdg")

    def __call__(self, *argv, timeout=120):
        return run_to_files(["unshare", "--mount", "--propagation", "private", "sh", os.path.join(self.dir, "in.sh"),
                             self.dir, *argv], timeout=timeout)

    def podman(self, runtime, *args, timeout=120):
        return self("podman", "--runtime", runtime, *args, timeout=timeout)


@pytest.fixture(scope="module")
def user(runc_bin):
    if os.geteuid() != 0:
        pytest.skip("making a user (a mount namespace with its own /etc/passwd) needs root")
    for tool in ("podman", "conmon", "newuidmap", "newgidmap", "unshare", "setpriv"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/bin/{tool}"):
            pytest.skip(f"no {tool} (scripts/deps.sh --test: podman, uidmap, util-linux)")
    if chrooted():
        pytest.skip("chrooted (scripts/fresh-check.sh's rehearsal): the kernel refuses a new user namespace "
                    "in a chroot, and rootless podman needs one")
    if processes_of(UID):
        pytest.skip(f"uid {UID} has processes here already")
    try:
        pwd.getpwuid(UID)
        pytest.skip(f"uid {UID} is a user of this host")
    except KeyError:
        pass
    r = subprocess.run([os.path.join(SOURCE_DIR, "tests", "runtime", "make-image.sh"), BUILD_DIR, "--rootfs"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    d = tempfile.mkdtemp(prefix="zygote-rootless-")
    os.chmod(d, 0o755)
    try:
        home, xdg = os.path.join(d, "home"), os.path.join(d, "xdg")
        os.makedirs(os.path.join(home, ".config", "containers"))
        os.mkdir(xdg, 0o700)
        with open(os.path.join(home, ".config", "containers", "containers.conf"), "w") as f:
            f.write('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\nnetns = "none"\n'
                    '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n')
        with open(os.path.join(home, ".config", "containers", "storage.conf"), "w") as f:
            f.write('[storage]\ndriver = "vfs"\n')
        for name, line in (("passwd", f"{USER}:x:{UID}:{UID}::{home}:/bin/sh\n"), ("group", f"{USER}:x:{UID}:\n"),
                           ("subuid", f"{USER}:400000:65536\n"), ("subgid", f"{USER}:400000:65536\n")):
            host = f"/etc/{name}"
            with open(os.path.join(d, name), "w") as f:
                f.write((open(host).read() if os.path.exists(host) else "") + line)
        with open(os.path.join(d, "in.sh"), "w") as f:
            f.write(SCRIPT.format(uid=UID, user=USER))
        runtime = os.path.join(d, "zygote-runc")
        shutil.copy(runc_bin, runtime)
        shutil.copy(r.stdout.strip(), os.path.join(d, "rootfs.tar"))
        os.chmod(os.path.join(d, "rootfs.tar"), 0o644)
        for root, dirs, files in os.walk(home):
            for n in [root] + [os.path.join(root, x) for x in dirs + files]:
                os.chown(n, UID, UID)
        os.chown(xdg, UID, UID)
        u = RootlessUser(d, runtime)
        r = u("podman", "import", os.path.join(d, "rootfs.tar"), IMAGE)
        if r.returncode != 0 and ("newuidmap" in r.stderr or "user namespace" in r.stderr):
            pytest.skip(f"rootless podman cannot make its user namespace here: {r.stderr.strip()[-300:]}")
        assert r.returncode == 0, r.stderr
        yield u
    finally:
        # podman's rootless pause process (and anything a failed test left) holds the user
        # namespace: every process of the test's uid, by pid
        for pid in processes_of(UID):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            wait_gone(pid, timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def both(user, *args):
    """The same podman command with runc and with zygote-runc: (runc's, zygote-runc's)."""
    return user.podman("runc", *args), user.podman(user.runtime, *args)


def test_run_rm_as_with_runc(user):
    """`podman run --rm IMAGE id` as a user: the container's root is the user, its other ids the
    user's subordinate range, exactly as with runc."""
    rc, zc = both(user, "run", "--rm", IMAGE, "sh", "-c", "id; cat /proc/self/uid_map")
    assert zc.returncode == 0, zc.stderr
    assert zc.stdout.splitlines()[0] == "uid=0(root) gid=0(root)"
    assert zc.stdout.split()[2:5] == ["0", str(UID), "1"], zc.stdout
    assert rc.returncode == 0 and rc.stdout == zc.stdout, (rc.stdout, rc.stderr)


def test_detached_exec_and_state_root(user):
    """`run -d`, `exec` into it and `rm -f`: zygote-runc keeps its state below the user's
    XDG_RUNTIME_DIR, and nothing of the container is left there after rm."""
    name = "rl-" + uuid.uuid4().hex[:8]
    r = user.podman(user.runtime, "run", "-d", "--name", name, IMAGE, "sleep", "1000")
    assert r.returncode == 0, r.stderr
    cid = r.stdout.strip()
    try:
        assert os.path.isdir(os.path.join(user.xdg, "zygote-runc", cid))
        r = user.podman(user.runtime, "exec", name, "sh", "-c", "echo exec-ok; id -u")
        assert (r.returncode, r.stdout) == (0, "exec-ok\n0\n"), r.stderr
    finally:
        r = user.podman(user.runtime, "rm", "-f", "-t", "0", name)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(os.path.join(user.xdg, "zygote-runc", cid))


def test_a_limit_as_with_runc(user):
    """A memory limit: where podman keeps it (a cgroup2 host with a delegated cgroup) the runtime
    applies it or refuses it by name; where podman drops it itself (cgroup v1, rootless: it says
    so) both runtimes run the container. Either way zygote-runc answers as runc does."""
    rc, zc = both(user, "run", "--rm", "--memory", "64m", IMAGE, "true")
    assert zc.returncode == rc.returncode, (rc.stderr, zc.stderr)
    if "ignored on cgroups V1 rootless" in rc.stderr:
        assert zc.returncode == 0 and "ignored on cgroups V1 rootless" in zc.stderr, zc.stderr
