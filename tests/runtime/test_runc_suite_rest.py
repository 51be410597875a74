# SPDX-License-Identifier: MIT
"""What the rest of runc 1.1.5's suite in the conformance lane (update.bats, cgroups.bats,
mounts_recursive.bats, userns.bats) found, each as runc does it: flags after the container's id,
a shorter cpu period under a parent's quota, resources keys in any case (Go's decoder), device
access letters runc ignores, a refused exec's status, the warning for a cgroup already in use,
and "rbind,ro" (the top mount) beside "rro" (every mount)."""
import glob
import os
import select
import subprocess
import uuid

import pytest

import containertools as ct
from conftest import CG_PARENT


def cid():
    return "rest-" + uuid.uuid4().hex[:12]


def cgroup_file(controller, path, name):
    """The file of the container's cgroup: in controller's v1 hierarchy, else in cgroup2."""
    for base in (f"/sys/fs/cgroup/{controller}", "/sys/fs/cgroup"):
        f = f"{base}{path}/{name}"
        if os.path.exists(f):
            return f
    pytest.fail(f"no {name} for {path}")


def read(path):
    with open(path) as f:
        return f.read().strip()


def with_cgroup(bundle, name):
    path = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = path
    bundle.save()
    return path


def v1_controller(name):
    return os.path.exists(f"/sys/fs/cgroup/{name}/tasks")


def run_detached(runc, bundle, name):
    bundle.set_args("sleep", "300")
    r = runc("run", "-d", "--bundle", bundle.path, name, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r


def test_update_takes_flags_after_the_id(runc, bundle):
    """runc's urfave/cli moves a verb's flags in front ("update ID --pids-limit N"); they were
    taken for positional arguments and dropped, the update answering 0 with nothing written."""
    name = cid()
    path = with_cgroup(bundle, name)
    run_detached(runc, bundle, name)
    r = runc("update", name, "--pids-limit", "7")
    assert r.returncode == 0, r.stderr
    assert read(cgroup_file("pids", path, "pids.max")) == "7"
    r = runc("update", name, "--pids-limit=9")
    assert r.returncode == 0, r.stderr
    assert read(cgroup_file("pids", path, "pids.max")) == "9"
    # an unknown flag is still refused by name
    r = runc("update", "--no-such-flag", "1", name)
    assert r.returncode != 0 and "--no-such-flag" in r.stderr, r.stderr


def test_exec_and_ps_keep_what_follows_the_id(runc, bundle):
    """exec's command after the id keeps its own flags (runc's SkipArgReorder): "-e" is ps's, not
    exec's --env."""
    name = cid()
    run_detached(runc, bundle, name)
    r = runc("exec", name, "echo", "-e", "--pid-file", "x")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["--pid-file", "x"], r.stdout


def test_shorter_cpu_period_under_a_parent_quota(runc, bundle):
    """update.bats "update cpu period in a pod cgroup with pod limit set": the parent holds 50%;
    a period of 10 ms under the old quota (500 ms) would be 5000% and the kernel refuses it
    (EINVAL), the pair 3 ms / 10 ms is 30%: the quota goes first then, as runc writes it."""
    if not v1_controller("cpu") or not os.path.exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        pytest.skip("no v1 cpu controller with CFS bandwidth here (the parent's limit is v1's)")
    name = cid()
    parent = f"/sys/fs/cgroup/cpu/{CG_PARENT}/pod-{name}"
    os.makedirs(parent)
    try:
        with open(f"{parent}/cpu.cfs_quota_us", "w") as f:
            f.write("50000")
        path = f"/{CG_PARENT}/pod-{name}/{name}"
        bundle.config["linux"]["cgroupsPath"] = path
        bundle.config["linux"]["resources"] = {"cpu": {"quota": 500000, "period": 1000000}}
        run_detached(runc, bundle, name)
        r = runc("update", "--cpu-quota", "600000", name)
        assert r.returncode == 1, "60% under a 50% parent was accepted"
        r = runc("update", "--cpu-period", "10000", "--cpu-quota", "3000", name)
        assert r.returncode == 0, r.stderr
        assert read(cgroup_file("cpu", path, "cpu.cfs_period_us")) == "10000"
        assert read(cgroup_file("cpu", path, "cpu.cfs_quota_us")) == "3000"
        # a period alone that the kernel refuses still fails, naming the file
        r = runc("update", "--cpu-period", "1000", name)
        assert r.returncode == 1 and "cpu.cfs_period_us" in r.stderr, r.stderr
    finally:
        runc("delete", "--force", name)
        # the runtime made the pod's directory in every hierarchy: the test's to remove
        for d in glob.glob(f"/sys/fs/cgroup/*/{CG_PARENT}/pod-{name}") + glob.glob(f"/sys/fs/cgroup/{CG_PARENT}/pod-{name}"):
            os.rmdir(d)


def test_resources_keys_in_any_case(runc, bundle):
    """Go's decoder takes "Pids" and "LIMIT" for "pids" and "limit" (update.bats: resources.CPU):
    in config.json and in update --resources; refused before as unknown fields."""
    name = cid()
    path = with_cgroup(bundle, name)
    bundle.config["linux"]["resources"] = {"Pids": {"Limit": 21}}
    run_detached(runc, bundle, name)
    assert read(cgroup_file("pids", path, "pids.max")) == "21"
    r = runc("update", "-r", "-", name, input='{"PIDS": {"limit": 23}}')
    assert r.returncode == 0, r.stderr
    assert read(cgroup_file("pids", path, "pids.max")) == "23"
    # an unknown field stays refused in any case
    r = runc("update", "-r", "-", name, input='{"pids": {"limits": 3}}')
    assert r.returncode != 0 and "limits" in r.stderr, r.stderr


def test_device_access_letters_runc_ignores(runc, bundle):
    """update.bats "update devices [minimal transition rules]" gives "rwa": runc reads the known
    letters ("rw") and ignores the rest. A rule covers what its known letters say, no more; an
    access of unknown letters only is refused (it is not the empty access, which means all)."""
    bundle.config["linux"]["devices"] = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]
    # opening /dev/kmsg to write needs no capability: the device rule alone decides
    bundle.set_args("sh", "-c", "echo -n > /dev/kmsg && echo write-ok; true")
    seen = {}
    for access in ("rwa", "ra"):
        bundle.config["linux"]["resources"] = {"devices": [
            {"allow": False, "access": "rwm"},
            {"allow": True, "type": "c", "major": 1, "minor": 11, "access": access}]}
        bundle.save()
        r = runc("run", "--bundle", bundle.path, cid())
        assert r.returncode == 0, r.stderr
        seen[access] = "write-ok" in r.stdout
    assert seen == {"rwa": True, "ra": False}, seen
    bundle.config["linux"]["resources"]["devices"][1]["access"] = "ax"
    bundle.save()
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "access must be a string of r, w and m" in r.stderr, r.stderr


def test_unified_on_a_v1_controller_is_an_invalid_configuration(runc, bundle):
    """cgroups.bats "cgroup v1 + unified resources should fail": runc's words."""
    if not v1_controller("memory"):
        pytest.skip("the memory controller is on cgroup2 here: unified's memory.min applies")
    bundle.config["linux"]["resources"] = {"unified": {"memory.min": "131072"}}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "invalid configuration" in r.stderr, r.stderr


def test_refused_exec_exits_255(runc, bundle):
    """cgroups.bats "runc exec should refuse a paused container": status 255, runc's for a failed
    exec; a stopped container's too."""
    name = cid()
    with_cgroup(bundle, name)
    run_detached(runc, bundle, name)
    r = runc("pause", name)
    if r.returncode != 0:
        pytest.skip(f"pause: {r.stderr.strip()}")
    r = runc("exec", name, "true")
    assert r.returncode == 255 and "cannot exec in a paused container" in r.stderr, (r.returncode, r.stderr)
    assert runc("resume", name).returncode == 0
    pidfd = os.pidfd_open(runc.state(name)["pid"])
    try:
        assert runc("kill", name, "KILL").returncode == 0
        assert select.select([pidfd], [], [], 30)[0], "the init outlived SIGKILL"
    finally:
        os.close(pidfd)
    r = runc("exec", name, "true")
    assert r.returncode == 255, (r.returncode, r.stderr)


def test_warns_of_a_cgroup_in_use(runc, bundle):
    """cgroups.bats "runc run/create should warn about a non-empty cgroup": a second container in
    the first's cgroupsPath starts, and says so (without --debug)."""
    first, second = cid(), cid()
    with_cgroup(bundle, first)
    run_detached(runc, bundle, first)
    r = runc("run", "-d", "--bundle", bundle.path, second, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "container's cgroup is not empty: 1 process(es) found" in r.stderr, r.stderr
    # a container alone in its cgroup hears nothing
    third = cid()
    with_cgroup(bundle, third)
    r = runc("run", "-d", "--bundle", bundle.path, third, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "not empty" not in r.stderr, r.stderr


@pytest.fixture
def volume(open_tmp):
    """A tmpfs with a tmpfs mounted below it (mounts_recursive.bats' volume)."""
    top = open_tmp / "volume"
    top.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "none", str(top)], check=True)
    try:
        (top / "sub").mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "none", str(top / "sub")], check=True)
        yield str(top)
    finally:
        subprocess.run(["umount", "-R", str(top)])


@pytest.mark.parametrize("options,top_ro,sub_ro", [
    (["rbind", "ro"], True, False),
    (["rbind", "rro"], True, True),
    (["rbind", "ro", "rro"], True, True),
    (["bind", "rro"], True, True),
], ids=["rbind-ro", "rbind-rro", "rbind-ro-rro", "bind-rro"])
def test_read_only_top_or_recursive(runc, bundle, volume, options, top_ro, sub_ro):
    """mounts_recursive.bats: "ro" makes the bind's own mount read-only, "rro" every mount of it
    (mount_setattr AT_RECURSIVE), as runc 1.1 does; ro was applied to the submounts too and rro
    refused. A plain bind has no submount: its sub is the top's empty directory."""
    bundle.config["mounts"].append({"source": volume, "destination": "/mnt", "type": "bind", "options": options})
    bundle.set_args("sh", "-c", "touch /mnt/a 2>/dev/null && echo top-rw; touch /mnt/sub/b 2>/dev/null && echo sub-rw; true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert ("top-rw" not in out) == top_ro, out
    assert ("sub-rw" not in out) == sub_ro, out


def test_recursive_attribute_needs_a_bind(runc, bundle):
    bundle.config["mounts"].append({"destination": "/mnt", "type": "tmpfs", "source": "tmpfs", "options": ["rro"]})
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "needs a bind mount" in r.stderr, r.stderr


def test_exec_into_sub_cgroups(runc, bundle):
    """exec.bats "runc exec --cgroup sub-cgroups [v1]": --cgroup [CONTROLLERS:]PATH puts the process
    in a sub-cgroup of the container's (one the container made in its writable cgroup mount),
    never above it; the option was unknown."""
    if not v1_controller("memory"):
        pytest.skip("no v1 memory hierarchy here (the test's sub-cgroup is made in it)")
    name = cid()
    path = with_cgroup(bundle, name)
    cg = next(m for m in bundle.config["mounts"] if m["type"] == "cgroup")
    cg["options"] = [o for o in cg["options"] if o != "ro"] + ["rw"]
    run_detached(runc, bundle, name)
    r = runc("exec", name, "mkdir", "/sys/fs/cgroup/memory/submem")
    assert r.returncode == 0, r.stderr
    try:
        r = runc("exec", "--cgroup", "memory:submem", name, "cat", "/proc/self/cgroup")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert any(l.endswith(f":memory:{path}/submem") for l in lines), lines
        # the other hierarchies: the container's own
        assert any(l.endswith(f":pids:{path}") for l in lines), lines
        for sub, words in (("..", ".. is not a sub cgroup path"), ("memory:a/../..", "is not a sub cgroup path"),
                           ("nonexistent", "/nonexistent/cgroup.procs: no such file"),
                           ("whaaat:/", 'unknown controller "whaaat"')):
            r = runc("exec", "--cgroup", sub, name, "true")
            assert r.returncode != 0 and words in r.stderr, (sub, r.stderr)
    finally:
        # the sub-cgroup first (nothing is left in it): the runtime removes only the container's own
        os.rmdir(f"/sys/fs/cgroup/memory{path}/submem")
        runc("delete", "--force", name)


def test_user_namespace_binds_a_source_its_root_cannot_reach(runc, bundle, open_tmp):
    """userns.bats "userns with 2 inaccessible mounts" (and "+ exec"): sources in a 0700 directory
    of the host's root, bound into a container whose root is uid 100000 on the host: the init
    copies them (open_tree) while it still has the runtime's ids, as runc opens them before the
    user namespace; it used to bind them as the namespace's root, and failed (EACCES). The
    container reaches them through the binds only."""
    for i in (1, 2):
        d = open_tmp / f"inaccessible-{i}" / "dir"
        d.mkdir(parents=True)
        (d / "foo.txt").write_text(f"foo{i}\n")
        os.chmod(d.parent, 0o700)
        # the image has the mount points (its root, uid 100000 on the host, could not make them)
        os.mkdir(os.path.join(bundle.rootfs, "tmp", f"mount-{i}"))
    for k in ("uidMappings", "gidMappings"):
        bundle.config["linux"][k] = [{"containerID": 0, "hostID": 100000, "size": 65534}]
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["mounts"] += [{"source": str(open_tmp / f"inaccessible-{i}" / "dir"),
                                 "destination": f"/tmp/mount-{i}", "type": "bind", "options": ["bind"]}
                                for i in (1, 2)]
    name = cid()
    bundle.set_args("sleep", "300")
    r = runc("run", "-d", "--bundle", bundle.path, name, stdin=subprocess.DEVNULL)
    if r.returncode != 0 and ct.userns_refused():
        pytest.skip(f"no user namespace can be made here ({ct.userns_refused()}): {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    r = runc("exec", name, "cat", "/tmp/mount-1/foo.txt", "/tmp/mount-2/foo.txt")
    assert r.returncode == 0 and r.stdout.split() == ["foo1", "foo2"], (r.stdout, r.stderr)
    # the directory above the source stays closed to the container's root (host uid 100000)
    r = runc("exec", name, "sh", "-c", f"ls {open_tmp}/inaccessible-1 2>/dev/null || echo closed")
    assert r.stdout.strip() == "closed", r.stdout
