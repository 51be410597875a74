# SPDX-License-Identifier: MIT
"""The device cgroup of zygote-runc's containers (linux.resources.devices), as runc's device tests
check it: a container with CAP_MKNOD makes nodes of the host's disk and of /dev/kmsg, and an image
ships one; opening them must fail with EPERM while /dev/null works, and an allow rule opens exactly
its device. Each test runs on the host's cgroups (v1 or hybrid here: the devices controller) and on
cgroup v2 (the eBPF program), emulated where the host is not pure v2: a private mount namespace
with cgroup2 mounted at /sys/fs/cgroup, which the runtime then takes for a v2-only host."""
import glob
import json
import os
import shlex
import stat
import subprocess
import uuid

import pytest

from conftest import CG_PARENT  # noqa: E402

EPERM_TEXT = os.strerror(1)  # "Operation not permitted", as busybox prints it

# The emulations, each in a private mount namespace of its own: "v2" unmounts the host's cgroup
# trees and mounts cgroup2 alone at /sys/fs/cgroup (the runtime then takes the host for pure v2);
# "hybrid-bpf" unmounts only the v1 devices hierarchy of a hybrid host (the runtime then attaches
# the program to the container's directory in /sys/fs/cgroup/unified, beside its v1 cgroups).
WRAPPERS = {
    "v2": "mount --make-rprivate / && umount -R /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup",
    "hybrid-bpf": "mount --make-rprivate / && umount /sys/fs/cgroup/devices",
}


def run_in(mode, argv, **kw):
    """argv on the host's cgroups, or in one of the emulations; skips when this machine does not
    let us make it."""
    if mode == "host":
        return subprocess.run(argv, **kw)
    r = subprocess.run(["unshare", "--mount", "sh", "-c", f"{{ {WRAPPERS[mode]}; }} || exit 77; exec \"$@\"",
                        "sh", *argv], **kw)
    if r.returncode == 77:
        pytest.skip(f"cannot make the {mode} emulation here: {r.stderr.strip()}")
    return r


def cid():
    return "t-" + uuid.uuid4().hex[:12]


def cgroup_dirs(cgroups_path):
    return [d for d in glob.glob("/sys/fs/cgroup/*" + cgroups_path) + glob.glob("/sys/fs/cgroup" + cgroups_path)
            if os.path.isdir(d)]


def block_devices(scratch):
    """The host's block devices that the host itself may open for reading, as (major, minor):
    loop devices first (harmless to open), the root file system's disk next. A node of each is
    made and opened in scratch, so that a refusal in the container is the container's own."""
    root = os.stat("/").st_dev
    root = (os.major(root), os.minor(root))
    devs = sorted((tuple(int(x) for x in name.split(":")) for name in os.listdir("/sys/dev/block")),
                  key=lambda d: (d[0] != 7, d != root, d))
    usable = []
    for major, minor in devs:
        node = os.path.join(scratch, f"probe-{major}-{minor}")
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(major, minor))
        try:
            os.close(os.open(node, os.O_RDONLY | os.O_CLOEXEC))
            usable.append((major, minor))
        except OSError:
            pass
        finally:
            os.unlink(node)
        if len(usable) == 2:
            break
    return usable


def kernel_has_cgroup_bpf():
    for path in ("/proc/config.gz", f"/boot/config-{os.uname().release}"):
        if os.path.exists(path):
            text = subprocess.run(["zcat" if path.endswith(".gz") else "cat", path], capture_output=True,
                                  text=True).stdout
            return "CONFIG_CGROUP_BPF=y" in text
    return None


def cgroup_mounts():
    """{mount point below /sys/fs/cgroup: (fstype, super options)}"""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ")
            point, (fstype, _, opts, *_) = left.split()[4], right.split()
            if point.startswith("/sys/fs/cgroup"):
                mounts[point] = (fstype, opts)
    return mounts


@pytest.fixture(params=["host", "v2", "hybrid-bpf"])
def cgroups(request):
    """"host": the host's own cgroups; the others: WRAPPERS."""
    if request.param == "hybrid-bpf":
        m = cgroup_mounts()
        if m.get("/sys/fs/cgroup/unified", ("",))[0] != "cgroup2" or "/sys/fs/cgroup/devices" not in m:
            pytest.skip("needs a hybrid host with the v1 devices hierarchy at /sys/fs/cgroup/devices")
    if request.param != "host":
        with open("/proc/filesystems") as f:
            if "cgroup2" not in f.read():
                pytest.skip("no cgroup2 file system in this kernel")
    return request.param


def run_container(runc, bundle, name, mode):
    argv = [runc.binary, "--root", runc.root, "--log", runc.log, "--log-format", "json", "run", "--bundle",
            bundle.path, name]
    kw = dict(capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    r = run_in(mode, argv, **kw)
    if mode != "host" and r.returncode != 0 and "device program (bpf)" in r.stderr:
        has = kernel_has_cgroup_bpf()
        if "Function not implemented" in r.stderr or has is False:
            pytest.skip(f"the kernel cannot attach cgroup device programs: {r.stderr.strip()}")
    return r


def with_mknod(bundle):
    caps = bundle.config["process"]["capabilities"]
    for k in ("bounding", "effective", "permitted"):
        caps[k] = sorted(set(caps.get(k, [])) | {"CAP_MKNOD"})


def probe_script(nodes, opens):
    """nodes: (path, kind, major, minor) to mknod; opens: (path, "r" or "w") to open. Prints
    "mknod PATH=ok|error" and "open PATH MODE=ok|error" lines."""
    lines = []
    for path, kind, major, minor in nodes:
        lines.append(f'out=$(mknod {path} {kind} {major} {minor} 2>&1) && echo "mknod {path}=ok" '
                     f'|| echo "mknod {path}=$out"')
    for path, mode in opens:
        redirect = "<" if mode == "r" else ">"
        lines.append(f'out=$( (: {redirect} {path}) 2>&1) && echo "open {path} {mode}=ok" '
                     f'|| echo "open {path} {mode}=$out"')
    return "\n".join(lines)


def results(stdout):
    out = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def assert_refused(res, key):
    assert key in res, res
    assert res[key] != "ok" and EPERM_TEXT in res[key], f"{key}: {res[key]} (expected {EPERM_TEXT})"


def assert_outcomes(res, ok=(), refused=()):
    """Each key of ok printed "ok"; each of refused failed with EPERM."""
    for key in ok:
        assert res.get(key) == "ok", (key, res)
    for key in refused:
        assert_refused(res, key)


def probe_in_container(runc, bundle, name, mode, nodes, opens):
    """probe_script(nodes, opens) as the container's command, run to its end: its results."""
    bundle.set_args("sh", "-c", probe_script(nodes, opens))
    r = run_container(runc, bundle, name, mode)
    assert r.returncode == 0, r.stderr
    return results(r.stdout)


def assert_nothing_left(runc, name, cgroups_path):
    assert not os.path.exists(os.path.join(runc.root, name)), "state directory left behind"
    assert cgroup_dirs(cgroups_path) == [], "a cgroup is left"


def test_host_devices_refused(runc, bundle, cgroups, tmp_path):
    """runc's spec (one "deny all" rule): nodes of the host's disk and of /dev/kmsg, made in the
    container with CAP_MKNOD or shipped in the image, cannot be opened (EPERM); mknod itself and
    the standard devices work."""
    disk = block_devices(tmp_path)
    if not disk:
        pytest.skip("no block device that the host itself may open")
    disk = disk[0]
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    with_mknod(bundle)
    # a node in the image: needs no capability at all
    os.mknod(os.path.join(bundle.rootfs, "disk-from-image"), stat.S_IFBLK | 0o666, os.makedev(*disk))
    res = probe_in_container(runc, bundle, name, cgroups,
                             [("/dev/zd-disk", "b", *disk), ("/dev/zd-kmsg", "c", 1, 11)],
                             [("/dev/zd-disk", "r"), ("/disk-from-image", "r"), ("/dev/zd-kmsg", "w"),
                              ("/dev/null", "w"), ("/dev/zero", "r"), ("/dev/tty", "r")])
    assert_outcomes(res, ok=["mknod /dev/zd-disk", "mknod /dev/zd-kmsg", "open /dev/null w", "open /dev/zero r"],
                    refused=["open /dev/zd-disk r", "open /disk-from-image r", "open /dev/zd-kmsg w"])
    # /dev/tty: allowed by the cgroup; without a controlling terminal the driver says ENXIO
    assert EPERM_TEXT not in res.get("open /dev/tty r", ""), res
    assert_nothing_left(runc, name, cg)


def test_allow_rule_opens_exactly_its_device(runc, bundle, cgroups, tmp_path):
    """podman's shape of list (deny all, then allows): an allow of one block device for read opens
    that device for read only; its neighbour, writing to it, and /dev/kmsg stay refused."""
    devs = block_devices(tmp_path)
    if len(devs) < 2:
        pytest.skip("needs two block devices that the host itself may open (loop devices do)")
    allowed, other = devs[0], devs[1]
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.config["linux"]["resources"] = {"devices": [
        {"allow": False, "access": "rwm"},
        {"allow": True, "type": "b", "major": allowed[0], "minor": allowed[1], "access": "r"},
    ]}
    with_mknod(bundle)
    opens = [("/dev/zd-allowed", "r"), ("/dev/zd-other", "r"), ("/dev/zd-kmsg", "w"), ("/dev/null", "w")]
    if allowed[0] == 7:
        opens.append(("/dev/zd-allowed", "w"))  # a loop device: harmless to open for writing
    res = probe_in_container(runc, bundle, name, cgroups,
                             [("/dev/zd-allowed", "b", *allowed), ("/dev/zd-other", "b", *other),
                              ("/dev/zd-kmsg", "c", 1, 11)], opens)
    assert_outcomes(res, ok=["open /dev/zd-allowed r", "open /dev/null w"],
                    refused=["open /dev/zd-other r", "open /dev/zd-kmsg w"] +
                    (["open /dev/zd-allowed w"] if allowed[0] == 7 else []))
    assert_nothing_left(runc, name, cg)


def test_exec_gets_the_same_rules(runc, bundle, cgroups, tmp_path):
    """A process added by exec is in the container's cgroups, so under its device rules. One
    shell runs run --detach, exec and delete, so that on emulated v2 all three see the same
    cgroup2 mount."""
    disk = block_devices(tmp_path)
    if not disk:
        pytest.skip("no block device that the host itself may open")
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    with_mknod(bundle)
    bundle.set_args("sleep", "1000")
    rt = " ".join(shlex.quote(a) for a in (runc.binary, "--root", runc.root, "--log", runc.log, "--log-format",
                                           "json"))
    probe = probe_script([("/dev/zd-disk", "b", *disk[0])], [("/dev/zd-disk", "r"), ("/dev/null", "w")])
    script = (f"{rt} run --detach --bundle {shlex.quote(bundle.path)} {name} </dev/null >/dev/null || exit 1\n"
              f"{rt} exec --cap CAP_MKNOD {name} sh -c {shlex.quote(probe)}\n"
              f"echo exec-exit=$?\n"
              f"{rt} delete --force {name}\n"
              f"echo delete-exit=$?\n")
    argv = ["sh", "-c", script]
    kw = dict(capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    r = run_in(cgroups, argv, **kw)
    assert r.returncode == 0, r.stderr
    res = results(r.stdout)
    assert res.get("exec-exit") == "0" and res.get("delete-exit") == "0", (res, r.stderr)
    assert_outcomes(res, ok=["mknod /dev/zd-disk", "open /dev/null w"], refused=["open /dev/zd-disk r"])
    assert_nothing_left(runc, name, cg)


@pytest.mark.parametrize("rule,words", [
    ({"allow": True, "type": "x"}, "linux.resources.devices[1]: type must be"),
    # no known letter at all ("rwx" is "rw", as runc reads it: test_runc_suite_rest.py)
    ({"allow": True, "type": "c", "access": "x"}, "linux.resources.devices[1]: access must be"),
    ({"allow": True, "type": "c", "major": -5}, "linux.resources.devices[1]: major must be"),
    ({"type": "c"}, "linux.resources.devices[1]: allow must be"),
])
def test_bad_device_rule_is_named(runc, bundle, rule, words):
    """A rule the runtime cannot enforce stops the container before anything runs, and says which."""
    name = cid()
    bundle.config["linux"]["resources"] = {"devices": [{"allow": False, "access": "rwm"}, rule]}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode != 0
    assert words in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, name))


def host_uses_v1_devices():
    return any(fstype == "cgroup" and "devices" in opts.split(",") for fstype, opts in cgroup_mounts().values())


def test_deny_inside_a_wider_allow(runc, bundle, cgroups):
    """allow c *:* then deny c 1:11: the v2 program refuses /dev/kmsg; cgroup v1 cannot express
    it (its deny only undoes an allow of the same device), so there the runtime refuses the
    config with a message rather than leave /dev/kmsg open."""
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.config["linux"]["resources"] = {"devices": [
        {"allow": False, "access": "rwm"},
        {"allow": True, "type": "c", "access": "rwm"},
        {"allow": False, "type": "c", "major": 1, "minor": 11, "access": "rwm"},
    ]}
    with_mknod(bundle)
    bundle.set_args("sh", "-c", probe_script([("/dev/zd-kmsg", "c", 1, 11)],
                                             [("/dev/zd-kmsg", "w"), ("/dev/null", "w")]))
    r = run_container(runc, bundle, name, cgroups)
    if cgroups == "host" and host_uses_v1_devices():
        assert r.returncode != 0
        assert "cgroup v1 cannot deny \"c 1:11 rwm\"" in r.stderr, r.stderr
    else:
        assert r.returncode == 0, r.stderr
        assert_outcomes(results(r.stdout), ok=["mknod /dev/zd-kmsg", "open /dev/null w"],
                        refused=["open /dev/zd-kmsg w"])
    assert_nothing_left(runc, name, cg)


def test_no_device_cgroup_at_all_is_refused(runc, bundle):
    """A host without the devices controller and without cgroup2 (emulated: both unmounted in a
    private mount namespace) cannot restrict devices: the runtime refuses to start the container
    rather than give it the host's devices."""
    mounts = cgroup_mounts()
    targets = [m for m, (fstype, opts) in mounts.items() if m.startswith("/sys/fs/cgroup/") and
               (fstype == "cgroup2" or (fstype == "cgroup" and "devices" in opts.split(",")))]
    if mounts.get("/sys/fs/cgroup", ("?",))[0] != "tmpfs" or not targets:
        pytest.skip("needs a cgroup v1 or hybrid host (/sys/fs/cgroup a tmpfs of v1 hierarchies)")
    name = cid()
    bundle.set_args("true")
    argv = [runc.binary, "--root", runc.root, "--log", runc.log, "--log-format", "json", "run", "--bundle",
            bundle.path, name]
    unmount = " && ".join(f"umount {shlex.quote(t)}" for t in targets)
    r = subprocess.run(["unshare", "--mount", "sh", "-c", f"mount --make-rprivate / && {unmount} && exec \"$@\"",
                        "sh", *argv], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode != 0, r.stdout
    assert "the container's devices cannot be restricted" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, name))


def test_exec_that_cannot_join_the_device_cgroup_is_refused(runc, bundle):
    """exec runs nothing when the process cannot join the container's cgroups: outside them it
    would open the host's devices. Made to happen on a v1 host by renaming the container's
    devices cgroup (v1 allows that) while the container runs."""
    if not host_uses_v1_devices():
        pytest.skip("needs the v1 devices controller (a cgroup can only be renamed on v1)")
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.set_args("sleep", "1000")
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    devices = [d for d in cgroup_dirs(cg) if os.path.exists(os.path.join(d, "devices.list"))]
    assert len(devices) == 1, cgroup_dirs(cg)
    moved = devices[0] + "-moved"
    os.rename(devices[0], moved)
    try:
        r = runc("exec", name, "sh", "-c", "echo ran")
        assert r.returncode != 0 and "ran" not in r.stdout, (r.stdout, r.stderr)
        assert "joining the container's cgroups" in r.stderr, r.stderr
        with open(os.path.join(moved, "cgroup.procs")) as f:
            assert len(f.read().split()) == 1, "only the init is in the container's devices cgroup"
    finally:
        os.rename(moved, devices[0])
        assert runc("delete", "--force", name).returncode == 0
    assert_nothing_left(runc, name, cg)
