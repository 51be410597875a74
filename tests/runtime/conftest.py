# SPDX-License-Identifier: MIT
"""Fixtures of zygote-runc's tests: a busybox bundle per test, a state root per test.

Run: ZYGOTE_BUILD_DIR=build /usr/bin/python3 -m pytest -q tests/runtime
The bundle's rootfs holds Debian's static busybox with its applet links (made here, like
`busybox --install -s`) and a static try-syscall; config.json comes from `zygote-runc spec`.
The session exits 77 (ctest: skipped) when nothing passed and something was skipped
(tests/conftest.py).
"""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

import containertools as ct

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.path.abspath(os.environ.get("ZYGOTE_BUILD_DIR", os.path.join(SOURCE_DIR, "build")))
BUSYBOX = "/bin/busybox"
# The parent of the tests' absolute cgroupsPath: the session's own, since another session (ctest
# runs two at once) removes its own at its end, and would remove a shared one between a runtime's
# mkdir of the parent and of the container's cgroup.
CG_PARENT = f"zygote-runc-test-{os.getpid()}"


class Runtime:
    """zygote-runc with its own --root; every call returns the CompletedProcess."""

    def __init__(self, binary, root, log):
        self.binary = binary
        self.root = root
        self.log = log

    def __call__(self, *args, timeout=60, **kw):
        # Output goes to files, not pipes: a created container's init keeps the stdio it was
        # given (conmon and the shim read it), so a pipe would not see EOF when zygote-runc exits.
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            kw.setdefault("stdout", out)
            r = subprocess.run([self.binary, "--root", self.root, "--log", self.log, "--log-format", "json",
                                *args], timeout=timeout, stderr=err, text=True, **kw)
            out.seek(0)
            err.seek(0)
            r.stdout = out.read() if kw["stdout"] is out else None
            r.stderr = err.read()
            return r

    def state(self, cid):
        r = self("state", cid)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)


class Bundle:
    def __init__(self, path):
        self.path = path
        self.rootfs = os.path.join(path, "rootfs")
        with open(os.path.join(path, "config.json")) as f:
            self.config = json.load(f)

    def save(self):
        with open(os.path.join(self.path, "config.json"), "w") as f:
            json.dump(self.config, f)

    def set_args(self, *args):
        self.config["process"]["args"] = list(args)
        self.save()


@pytest.fixture(scope="session")
def runc_bin():
    b = os.path.join(BUILD_DIR, "zygote-runc")
    if not os.access(b, os.X_OK):
        pytest.fail(f"not built: {b}")
    return b


@pytest.fixture
def needs_root():
    if os.geteuid() != 0:
        pytest.skip("containers need root here (namespaces, mounts, cgroups)")


@pytest.fixture
def runc(runc_bin, tmp_path, needs_root):
    rt = Runtime(runc_bin, str(tmp_path / "state"), str(tmp_path / "log.json"))
    yield rt
    # nothing a test left running survives it
    if os.path.isdir(rt.root):
        for cid in os.listdir(rt.root):
            rt("delete", "--force", cid)


@pytest.fixture(scope="session")
def _open_root():
    d = tempfile.mkdtemp(prefix="zygote-runtime-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def open_tmp(_open_root, request):
    """A fresh directory under /tmp that every uid may traverse: for what a container's mapped
    root, nobody or an agent must reach. pytest's tmp_path is not: /tmp/pytest-of-root is 0700,
    and every pytest session that starts sets it back to 0700 (ctest runs two at once), so a
    chmod of it is a race. The session removes them all when it ends, after every container."""
    d = tempfile.mkdtemp(prefix=request.node.name[:30] + "-", dir=_open_root)
    os.chmod(d, 0o755)
    return pathlib.Path(d)


@pytest.fixture
def bundle(runc_bin, open_tmp, needs_root):
    if not os.path.exists(BUSYBOX):
        pytest.skip("no /bin/busybox (Debian's busybox-static)")
    b = open_tmp / "bundle"
    rootfs = b / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    for d in ("proc", "sys", "dev", "tmp", "etc", "root"):
        (rootfs / d).mkdir()
    shutil.copy(BUSYBOX, rootfs / "bin" / "busybox")
    applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True, check=True).stdout.split()
    for a in applets:
        if a != "busybox":
            os.symlink("busybox", rootfs / "bin" / a)
    ts = os.path.join(BUILD_DIR, "try-syscall-static")
    if os.access(ts, os.X_OK):
        shutil.copy(ts, rootfs / "bin" / "try-syscall")
    subprocess.run([runc_bin, "spec", "--bundle", str(b)], check=True)
    bundle = Bundle(str(b))
    # spec writes a terminal, as runc's does; the tests give the container their own stdio (as
    # runc's own suite does after `runc spec`)
    bundle.config["process"]["terminal"] = False
    bundle.save()
    return bundle


# ---- the session's end (its exit status 77 when everything was skipped: tests/conftest.py) ----
def pytest_sessionfinish(session, exitstatus):
    # the parent of the tests' absolute cgroupsPath (the runtime removes only the container's own)
    import glob
    for d in glob.glob(f"/sys/fs/cgroup/*/{CG_PARENT}") + glob.glob(f"/sys/fs/cgroup/{CG_PARENT}"):
        try:
            os.rmdir(d)
        except OSError:
            pass


# ---- podman and containerd (test_podman.py, test_containerd.py) -----------------------------------
# Session-wide: the image is built once (cached in the build dir), podman's store is loaded once,
# one containerd serves every test. Each skips, with the reason, where the tool is missing or
# cannot run a container here even with runc; if runc can, zygote-runc must.

@pytest.fixture(scope="session")
def oci_image(runc_bin):
    if os.geteuid() != 0:
        pytest.skip("podman and containerd need root here")
    r = subprocess.run([os.path.join(SOURCE_DIR, "tests", "runtime", "make-image.sh"), BUILD_DIR],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def _probe_with_runc(what, r):
    if r.returncode != 0:
        pytest.skip(f"{what} cannot run a container here even with runc: {(r.stderr or r.stdout).strip()[-400:]}")


@pytest.fixture(scope="session")
def podman(runc_bin, oci_image):
    for tool in ("podman", "conmon", "runc"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/libexec/podman/{tool}"):
            pytest.skip(f"no {tool} (Debian packages podman, conmon, runc)")
    pm = ct.Podman(runc_bin, ct.make_workdir("zyg-pm."))
    try:
        r = pm("load", "-q", "-i", oci_image, timeout=120)
        assert r.returncode == 0, r.stderr
        _probe_with_runc("podman", pm("run", "--rm", ct.IMAGE, "true", runtime="runc"))
        yield pm
    finally:
        pm("rm", "--all", "--force", "--time", "0")
        ct.remove_workdir(pm.dir)
        ct.remove_cgroup_parent(ct.PODMAN_CGROUP_PARENT)


@pytest.fixture(scope="session")
def containerd(runc_bin, oci_image):
    for tool in ("containerd", "ctr", "containerd-shim-runc-v2", "runc"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (Debian packages containerd, runc)")
    cd = ct.Containerd(ct.make_workdir("zyg-ctd."))
    try:
        try:
            cd.start()
        except RuntimeError as e:
            pytest.skip(str(e))
        r = cd.ctr("image", "import", oci_image, timeout=120)
        assert r.returncode == 0, r.stderr
        _probe_with_runc("containerd", cd.run("runc", "probe-runc", "true", opts=["--rm"]))
        yield cd
    finally:
        cd.stop()
        ct.remove_workdir(cd.dir)
        ct.remove_cgroup_parent(ct.CTR_CGROUP_PARENT)


# ---- a zygoted of the build, for the tests of its container path and of GetFilter -------------------

@pytest.fixture(scope="module")
def staged():
    """The build's programs staged where zygoted trusts them (zytest.stage_build)."""
    import zytest
    stage, bins = zytest.stage_build(BUILD_DIR, SOURCE_DIR)
    yield bins
    zytest.remove_workdir(stage)


@pytest.fixture
def daemon(staged, needs_root):
    """A zygoted of the build on a socket of its own, stopped (cleanly) after the test."""
    import zytest
    d = zytest.Daemon(staged, zytest.make_workdir())
    d.start()
    yield d
    assert d.stop() == 0, d.log()
    zytest.remove_workdir(d.dir)


def rootless_config(runc_bin, bundle, host_id):
    """config.json of `spec --rootless` in bundle, its user namespace mapping root to host_id: the
    parsed object, for the test to change and save."""
    os.remove(os.path.join(bundle.path, "config.json"))
    subprocess.run([runc_bin, "spec", "--rootless", "--bundle", bundle.path], check=True)
    with open(os.path.join(bundle.path, "config.json")) as f:
        cfg = json.load(f)
    cfg["process"]["terminal"] = False
    for m in cfg["linux"]["uidMappings"] + cfg["linux"]["gidMappings"]:
        m["hostID"] = host_id
    return cfg
