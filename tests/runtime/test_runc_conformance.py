# SPDX-License-Identifier: MIT
"""zygote-runc where runc's own behaviour is the reference (issue 36): a profile written for runc
runs unchanged, runc's defaults, a terminal of the runtime's own for a foreground run, and the
small differences runc's and crun's suites found. Each test says what runc does."""
import json
import os
import select
import uuid

import pytest

from containertools import PODMAN_PROFILE


def cid():
    return "conf-" + uuid.uuid4().hex[:12]


def profile_without_openat2(errno):
    """Podman's profile as one written before openat2 existed (or a hand-written allow-list): the
    call falls to the default action, which answers errno. runc runs such bundles; the runtime's
    own steps must not need the call once the filter is loaded."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    profile["defaultErrnoRet"] = errno
    profile.pop("defaultErrno", None)
    for rule in profile["syscalls"]:
        rule["names"] = [n for n in rule["names"] if n != "openat2"]
    profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
    return profile


def old_profile_bundle(bundle, errno, nnp):
    bundle.config["linux"]["seccomp"] = profile_without_openat2(errno)
    bundle.config["process"]["noNewPrivileges"] = nnp
    bundle.config["process"]["cwd"] = "/tmp"
    bundle.save()


# what the container reports: its cwd, and that the filter is on
REPORT = "pwd; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"


def assert_report(text, nnp):
    lines = text.split("\n")
    assert lines[0] == "/tmp", text
    assert "Seccomp:\t2" in text, text
    assert f"NoNewPrivs:\t{int(nnp)}" in text, text


def wait_exit(pid, timeout=30):
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        assert select.select([pidfd], [], [], timeout)[0], f"pid {pid} still running"
    finally:
        os.close(pidfd)


OLD_PROFILES = pytest.mark.parametrize("errno,nnp", [(1, False), (38, False), (1, True), (38, True)],
                                       ids=["eperm", "enosys", "eperm-nnp", "enosys-nnp"])


@OLD_PROFILES
def test_profile_without_openat2_run(runc, bundle, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sh", "-c", REPORT + "; exit 3")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 3, r.stderr
    assert_report(r.stdout, nnp)


@OLD_PROFILES
def test_profile_without_openat2_create_start(runc, bundle, tmp_path, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sh", "-c", REPORT)
    name, out, pid_file = cid(), tmp_path / "out", tmp_path / "pid"
    with open(out, "w") as f:
        r = runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name, stdout=f)
    assert r.returncode == 0, r.stderr
    assert runc("start", name).returncode == 0
    wait_exit(int(pid_file.read_text()))
    assert runc.state(name)["status"] == "stopped"
    assert_report(out.read_text(), nnp)
    assert runc("delete", name).returncode == 0


@OLD_PROFILES
def test_profile_without_openat2_exec(runc, bundle, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    r = runc("exec", name, "sh", "-c", REPORT + "; exit 4")
    assert r.returncode == 4, r.stderr
    assert_report(r.stdout, nnp)
    assert runc("delete", "--force", name).returncode == 0
