# SPDX-License-Identifier: MIT
"""The Debian package (`cpack -G DEB`, CMakeLists.txt and packaging/deb/): what it holds, what it
depends on, and its scripts run as dpkg runs them: installed into a scratch root
(`dpkg --root`, the scripts chrootless with DPKG_ROOT), it creates the group zygote through
sysusers and enables zygoted.socket there; purged, it leaves no file of its own and no
enablement behind."""
import os
import shutil
import subprocess

import pytest

from cmakeinstall import cache_value

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def package(request, tmp_path_factory):
    for tool in ("cpack", "dpkg-deb", "dpkg", "systemd-sysusers", "systemctl"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool}")
    build = os.path.abspath(request.config.getoption("--build-dir"))
    out = tmp_path_factory.mktemp("deb")
    r = subprocess.run(["cpack", "-G", "DEB", "-B", str(out)], cwd=build, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    assert len(debs) == 1, debs
    return os.path.join(out, debs[0]), cache_value(build, "CMAKE_INSTALL_PREFIX")


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True, check=True).stdout.strip()


def test_control_and_contents(package):
    deb, prefix = package
    assert field(deb, "Package") == "zygote"
    depends = field(deb, "Depends")
    for lib in ("libseccomp2", "libcap2", "libsystemd0", "libev4", "libjson-c5", "libprotobuf-c1", "libbpf1",
                "systemd"):
        assert lib in depends, depends
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    p = prefix.lstrip("/")
    for f in ("sbin/zygoted", "bin/launchctl", "bin/zygote-runc", "bin/containerd-shim-zygote-v2",
              "libexec/zygote/zygote-ref", "libexec/zygote/zygote-record",
              "lib/systemd/system/zygoted.socket", "lib/systemd/system/zygoted.service", "lib/sysusers.d/zygote.conf",
              "share/man/man8/zygoted.8", "share/man/man1/launchctl.1", "share/zygote/profiles/default.json",
              "share/doc/zygote/docs/SYSTEMD.md"):
        assert f"./{p}/{f}\n" in files, f
    # nothing of the test suite's own
    for f in ("try-syscall", "zygote-bench", "bounded-run", "test-"):
        assert f not in files, f


@pytest.fixture
def root(tmp_path, needs_root):
    r = tmp_path / "root"
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"):
        (r / d).mkdir(parents=True)
    (r / "var/lib/dpkg/status").touch()
    return r


@pytest.fixture
def needs_root():
    if os.geteuid() != 0:
        pytest.skip("dpkg --root with maintainer scripts needs root")


def dpkg(root, *args):
    return subprocess.run(["dpkg", f"--root={root}", "--force-script-chrootless", "--force-depends", *args],
                          capture_output=True, text=True, timeout=120)


def own_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if not os.path.relpath(d, root).startswith("var/lib/dpkg"))


def test_install_enables_the_socket_and_purge_removes_everything(package, root):
    deb, prefix = package
    before = own_files(root)
    r = dpkg(root, "-i", deb)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(root / "etc/group") as f:
        assert any(line.startswith("zygote:") for line in f), "sysusers made no group zygote"
    link = root / "etc/systemd/system/sockets.target.wants/zygoted.socket"
    assert os.readlink(link) == f"{prefix}/lib/systemd/system/zygoted.socket"
    assert os.access(root / prefix.lstrip("/") / "sbin/zygoted", os.X_OK)

    r = dpkg(root, "-P", "zygote")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not os.path.lexists(link), "purge left the socket enabled"
    left = [f for f in own_files(root) if f not in before]
    # the group stays, as Debian keeps system groups: /etc/group and its shadow, nothing else
    assert set(left) <= {"etc/group", "etc/gshadow", "etc/.pwd.lock", "etc/group-", "etc/gshadow-"}, left


def test_removal_names_the_tasks_that_keep_running(package, root, tmp_path):
    """dpkg -r asks the daemon (the package's launchctl, the root's /run/zygote/zygoted.sock)
    which tasks keep running after it, and says so, with how to stop them."""
    import zytest
    deb, prefix = package
    r = dpkg(root, "-i", deb)
    assert r.returncode == 0, r.stdout + r.stderr
    usr = root / prefix.lstrip("/")
    rundir = root / "run/zygote"
    rundir.mkdir(parents=True)
    lc = str(tmp_path / "launchctl")  # the package's, kept for the cleanup after the removal
    shutil.copy(usr / "bin/launchctl", lc)
    d = zytest.Daemon({"zygoted": str(usr / "sbin/zygoted"), "profiles": str(usr / "share/zygote/profiles")},
                      str(rundir), env={"ZYGOTE_REF_HELPER": str(usr / "libexec/zygote/zygote-ref")})
    d.start()
    try:
        with open(tmp_path / "task.out", "w") as f:  # a detached task keeps launchctl's stdio
            r = subprocess.run([lc, "--socket", d.socket, "run", "--detach", "--id", "kept-task", "--", "/bin/sleep",
                                "1000"], stdout=f, stderr=f, stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (tmp_path / "task.out").read_text()
        r = dpkg(root, "-r", "zygote")
        assert r.returncode == 0, r.stdout + r.stderr
        out = r.stdout + r.stderr
        assert "zygote: these tasks keep running after the removal" in out, out
        assert "kept-task" in out and "/bin/sleep 1000" in out, out
        assert "launchctl kill --all ID" in out, out
    finally:
        subprocess.run([lc, "--socket", d.socket, "kill", "--all", "kept-task", "KILL"], capture_output=True,
                       timeout=60)
        subprocess.run([lc, "--socket", d.socket, "wait", "kept-task"], capture_output=True, timeout=60)
        d.stop()
