# SPDX-License-Identifier: MIT
"""process.apparmorProfile and exec's --apparmor, through zygote-runc and through zygoted.

Where the kernel applies AppArmor profiles (Debian's and Ubuntu's kernels do by default, and
Docker and podman then ask for docker-default or containers-default), the container's process
runs under the profile asked for, as with runc; where it does not (this suite's usual host),
or where ZYGOTE_DISABLE_FEATURES=apparmor forces it, a profile asked for is refused with the
reason and nothing is left: never a container that runs unconfined by surprise. The file the
profile is written to is opened through a procfs of the init's own before anything of the
container is mounted (tests/unit/test-sandbox-lsm.c tries a bind over it and a fake /proc).
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from containertools import container_id

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PROFILE = "zytest-container"
REFUSAL = f'apparmor profile "{PROFILE}" asked for, but AppArmor is not enabled on this host'


def without_apparmor(how):
    """The environment of a zygote-runc that must see no AppArmor: this host's own (skipped where
    the kernel has it), or forced."""
    if how == "forced":
        return dict(os.environ, ZYGOTE_DISABLE_FEATURES="apparmor")
    if zytest.apparmor_enabled():
        pytest.skip("AppArmor is enabled on this kernel (the forced case covers the refusal)")
    return None


def assert_nothing_left(runc):
    r = runc("list", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout or "null") in (None, []), r.stdout


@pytest.mark.parametrize("how", ["host", "forced"])
def test_profile_refused_without_apparmor(runc, bundle, how):
    """run and create: refused before anything is made, naming the profile and the reason."""
    env = without_apparmor(how)
    bundle.config["process"]["apparmorProfile"] = PROFILE
    bundle.set_args("true")
    for verb in ("run", "create"):
        r = runc(verb, "--bundle", bundle.path, container_id(), env=env)
        assert r.returncode != 0
        assert REFUSAL in r.stderr, r.stderr
    assert_nothing_left(runc)


@pytest.mark.parametrize("how", ["host", "forced"])
def test_exec_apparmor_refused_without_apparmor(runc, bundle, how):
    """exec --apparmor: refused, and no process joins the container; exec without it runs."""
    env = without_apparmor(how)
    bundle.set_args("sleep", "60")
    cid = container_id()
    assert runc("run", "--detach", "--bundle", bundle.path, cid).returncode == 0
    r = runc("exec", "--apparmor", PROFILE, cid, "sh", "-c", "echo joined", env=env)
    assert r.returncode != 0 and REFUSAL in r.stderr, (r.stdout, r.stderr)
    assert "joined" not in (r.stdout or "")
    r = runc("exec", cid, "sh", "-c", "echo joined")
    assert r.returncode == 0 and r.stdout == "joined\n", r.stderr
    r = runc("exec", "--process-label", "system_u:system_r:container_t:s0", cid, "true")
    assert r.returncode != 0 and "--process-label is not supported" in r.stderr, r.stderr


def test_bad_profile_names_are_refused(runc, bundle):
    bundle.config["process"]["apparmorProfile"] = 7
    bundle.save()
    r = runc("run", "--bundle", bundle.path, container_id())
    assert r.returncode != 0 and "process.apparmorProfile must be a string" in r.stderr, r.stderr
    bundle.config["process"]["apparmorProfile"] = "zytest\nother"
    bundle.save()
    r = runc("run", "--bundle", bundle.path, container_id())
    assert r.returncode != 0 and "process.apparmorProfile: a control character" in r.stderr, r.stderr
    assert_nothing_left(runc)


def test_zygoted_refuses_a_profile_without_apparmor(daemon, bundle):
    """zygoted's containers take the same recipe: refused with the same reason, nothing kept."""
    if zytest.apparmor_enabled():
        pytest.skip("AppArmor is enabled on this kernel (test_profile_applied covers zygoted there)")
    bundle.config["process"]["apparmorProfile"] = PROFILE
    bundle.set_args("true")
    r = daemon.launchctl("container", container_id(), bundle.path)
    assert r.returncode != 0
    assert REFUSAL.encode() in r.stderr, r.stderr
    state = os.path.join(os.path.dirname(daemon.socket), "containers")
    zytest.wait_for(lambda: not os.path.isdir(state) or not os.listdir(state), "no state left", timeout=10)


@pytest.fixture
def loaded_profile():
    """PROFILE loaded in enforce mode: everything but reading the rootfs's /etc/zytest-denied."""
    if not zytest.apparmor_enabled():
        pytest.skip("AppArmor is not enabled on this kernel: no profile can be applied here")
    if not shutil.which("apparmor_parser"):
        pytest.skip("AppArmor is enabled but apparmor_parser (Debian package apparmor) is not installed")
    text = (f"profile {PROFILE} flags=(attach_disconnected,mediate_deleted) {{\n"
            "  file,\n  capability,\n  network,\n  unix,\n  signal,\n  ptrace,\n  mount,\n  umount,\n"
            "  pivot_root,\n  deny /etc/zytest-denied r,\n}\n")
    subprocess.run(["apparmor_parser", "-r"], input=text.encode(), check=True, timeout=60)
    yield PROFILE
    subprocess.run(["apparmor_parser", "-R"], input=text.encode(), timeout=60)


SCRIPT = "cat /proc/self/attr/current; echo; cat /etc/zytest-denied 2>/dev/null || echo denied"


def test_profile_applied(runc, bundle, daemon, loaded_profile):
    """The container's process, an exec'd one and zygoted's container run under the profile, as
    runc's do; an unknown profile fails the start, naming it."""
    with open(os.path.join(bundle.rootfs, "etc", "zytest-denied"), "w") as f:
        f.write("readable\n")
    bundle.config["process"]["apparmorProfile"] = loaded_profile
    bundle.set_args("sh", "-c", SCRIPT)
    r = runc("run", "--bundle", bundle.path, container_id())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [loaded_profile, "(enforce)", "denied"], r.stdout
    if shutil.which("runc"):
        theirs = type(runc)("runc", runc.root + "-runc", runc.log + "-runc")
        t = theirs("run", "--bundle", bundle.path, container_id())
        assert (t.returncode, t.stdout) == (0, r.stdout), t.stderr
    bundle.set_args("sleep", "60")
    cid = container_id()
    assert runc("run", "--detach", "--bundle", bundle.path, cid).returncode == 0
    r = runc("exec", cid, "sh", "-c", SCRIPT)
    assert r.returncode == 0 and r.stdout.split() == [loaded_profile, "(enforce)", "denied"], (r.stdout, r.stderr)
    r = runc("exec", "--apparmor", "unconfined", cid, "sh", "-c", SCRIPT)
    assert r.returncode == 0 and r.stdout.split() == ["unconfined", "readable"], (r.stdout, r.stderr)
    bundle.set_args("sh", "-c", SCRIPT)
    out = os.path.join(os.path.dirname(bundle.path), "zygoted.out")
    with open(out, "w") as f:
        r = daemon.launchctl("container", container_id(), bundle.path, stdout=f)
    assert r.returncode == 0, r.stderr
    assert open(out).read().split() == [loaded_profile, "(enforce)", "denied"]
    bundle.config["process"]["apparmorProfile"] = "zytest-never-loaded"
    bundle.save()
    r = runc("run", "--bundle", bundle.path, container_id())
    assert r.returncode != 0 and 'apparmor profile "zytest-never-loaded"' in r.stderr, r.stderr
