# SPDX-License-Identifier: MIT
"""zygote-runc against the cgroup v1 escape class (CVE-2022-0492): a `cgroup` mount in config.json
on a v1 or hybrid host shows the container its own cgroup of each hierarchy as that hierarchy's
root, never the host's hierarchy (whose root holds `release_agent`, a program the host's kernel
runs as root when a cgroup empties); on a v2 host where cgroup2 may not be mounted (a user
namespace without a cgroup namespace), its own cgroup rather than the host's whole tree.
"""
import glob
import os

import pytest

from containertools import container_id as cid

CG_PARENT = "zygote-runc-cve-test"
CGROUP2_SUPER_MAGIC = "cgroup2fs"

# Inside: every release_agent below /sys/fs/cgroup (and below a second cgroup mount), then the
# device and inode of each hierarchy's directory, then whether a write into the view works.
PROBE = ("find /sys/fs/cgroup /mnt/cg -name release_agent 2>/dev/null | sed 's/^/agent /'; "
         "for d in /sys/fs/cgroup/* /mnt/cg/*; do [ -d $d ] && echo \"dir $d $(stat -c '%d %i' $d)\"; done; "
         "mkdir /sys/fs/cgroup/pids/zyg-sub 2>/dev/null && rmdir /sys/fs/cgroup/pids/zyg-sub && echo writable; "
         "touch /sys/fs/cgroup/zyg-file 2>/dev/null && echo tmpfs-writable; "
         "true")


def host_is_v2_only():
    import subprocess
    r = subprocess.run(["stat", "-f", "-c", "%T", "/sys/fs/cgroup"], capture_output=True, text=True)
    return r.stdout.strip() == CGROUP2_SUPER_MAGIC


def v1_hierarchies():
    """{mount point below /sys/fs/cgroup: set of its controllers (and name=)} of the host."""
    found = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ", 1)
            fstype, _src, opts = post.split()[:3]
            mnt = pre.split()[4]
            if fstype == "cgroup" and os.path.dirname(mnt) == "/sys/fs/cgroup":
                found[os.path.basename(mnt)] = set(opts.split(","))
    return found


def own_dirs(pid):
    """{hierarchy name: the host directory of pid's cgroup in it}."""
    hier = v1_hierarchies()
    dirs = {}
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _n, ctrls, path = line.rstrip("\n").split(":", 2)
            if not ctrls:
                if os.path.isdir("/sys/fs/cgroup/unified"):
                    dirs["unified"] = "/sys/fs/cgroup/unified" + path
                continue
            for name, opts in hier.items():
                if set(ctrls.split(",")) <= opts:
                    dirs[name] = f"/sys/fs/cgroup/{name}" + path
    return dirs


@pytest.fixture(autouse=True)
def no_parent_left():
    """The parent an absolute cgroupsPath made in each hierarchy goes with the test."""
    yield
    for d in glob.glob(f"/sys/fs/cgroup/*/{CG_PARENT}") + glob.glob(f"/sys/fs/cgroup/{CG_PARENT}"):
        try:
            os.rmdir(d)
        except OSError:
            pass


@pytest.fixture
def v1_host():
    if host_is_v2_only():
        pytest.skip("a pure cgroup v2 host: no v1 hierarchy, no release_agent to reach")
    if "cpuset" not in v1_hierarchies():
        pytest.skip("no cpuset hierarchy at /sys/fs/cgroup/cpuset")


VARIANTS = {
    "default": {},
    "absolute-path": {"cgroupsPath": f"/{CG_PARENT}/NAME"},
    "root-path": {"cgroupsPath": "/"},
    "rw-option": {"rw": True},
    "cgroup-namespace": {"cgroupns": True},
    "second-mount": {"second": True},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cgroup_mount_reaches_no_release_agent(runc, bundle, v1_host, variant):
    """Each variant of the cgroup mount an attacker's config (or a careless one) can ask for: no
    `release_agent` is reachable inside, and every hierarchy shown, cpuset included (where the
    runtime used to leave the container in the caller's cgroup, the host's root), is the
    container's own directory (same device and inode as on the host); the binds and the tmpfs under
    them read-only unless the config says rw."""
    v = VARIANTS[variant]
    name = cid()
    if "cgroupsPath" in v:
        bundle.config["linux"]["cgroupsPath"] = v["cgroupsPath"].replace("NAME", name)
    cg = next(m for m in bundle.config["mounts"] if m["type"] == "cgroup")
    if v.get("rw"):
        cg["options"] = [o for o in cg["options"] if o != "ro"] + ["rw"]
    if v.get("cgroupns"):
        bundle.config["linux"]["namespaces"].append({"type": "cgroup"})
    if v.get("second"):
        bundle.config["mounts"].append({"destination": "/mnt/cg", "type": "cgroup", "source": "cgroup",
                                        "options": ["nosuid", "noexec", "nodev"]})
    bundle.set_args("sleep", "1000")
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    if variant == "root-path" and r.returncode != 0:
        # refusing a container in the hierarchies' roots is as good as hiding them
        return
    assert r.returncode == 0, r.stderr
    try:
        pid = runc.state(name)["pid"]
        host = own_dirs(pid)
        r = runc("exec", name, "sh", "-c", PROBE)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert [l for l in lines if l.startswith("agent ")] == [], r.stdout
        shown = {}
        for l in lines:
            if l.startswith("dir "):
                _, path, dev, ino = l.split()
                shown[path] = (int(dev), int(ino))
        assert "/sys/fs/cgroup/cpuset" in shown or variant == "root-path", r.stdout
        for path, ident in shown.items():
            h = os.path.basename(path)
            assert h in host, (path, host)
            st = os.stat(host[h])
            assert (st.st_dev, st.st_ino) == ident, f"{path} inside is not the container's {host[h]}"
            assert os.path.dirname(host[h]) != "/sys/fs/cgroup", f"{path} is the root of the host's hierarchy"
        if variant != "rw-option":  # a writable view of its own cgroups, when asked for
            assert "writable" not in lines and "tmpfs-writable" not in lines, r.stdout
    finally:
        assert runc("delete", "--force", name).returncode == 0


@pytest.mark.parametrize("cgroups_path", ["default", "absolute"])
def test_cgroup2_refused_binds_only_the_containers_own(runc, bundle, cgroups_path):
    """On a cgroup v2 host (emulated in a private mount namespace where the host is hybrid), a
    container in a user namespace without a cgroup namespace of its own may not mount cgroup2: the
    runtime binds its own cgroup instead, read-only, and never the host's whole tree."""
    import subprocess
    from test_runc_cves import under_v2, v2_or_skip
    from test_runtime import needs_user_namespaces
    v2_or_skip()
    needs_user_namespaces()
    name = cid()
    if cgroups_path == "absolute":
        bundle.config["linux"]["cgroupsPath"] = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    for k in ("uidMappings", "gidMappings"):
        bundle.config["linux"][k] = [{"containerID": 0, "hostID": 0, "size": 65536}]
    bundle.set_args("sh", "-c", "grep ' /sys/fs/cgroup ' /proc/self/mountinfo; "
                    "find /sys/fs/cgroup -mindepth 1 -type d | sed 's/^/subdir /'; "
                    "mkdir /sys/fs/cgroup/zyg-sub 2>/dev/null && echo writable; true")
    r = subprocess.run(under_v2([runc.binary, "--root", runc.root, "--log", runc.log, "run", "--bundle",
                                 bundle.path, name]), capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0 and "user" in r.stderr and "not permitted" in r.stderr.lower():
        pytest.skip(f"no user namespace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    mounts = [l for l in r.stdout.splitlines() if " /sys/fs/cgroup " in l]
    assert mounts, r.stdout
    for l in mounts:
        fields = l.split()
        assert fields[3].endswith("/" + name), f"not the container's own cgroup: {l}"
        assert "ro" in fields[5].split(","), l
    assert [l for l in r.stdout.splitlines() if l.startswith("subdir ")] == [], r.stdout
    assert "writable" not in r.stdout.splitlines(), r.stdout
