# SPDX-License-Identifier: MIT
"""A detached task's scope takes after its caller's unit (docs/SECURITY.md, "Detached tasks"):
zygoted under the fake service manager of sdmanager.py, with a fake systemd on its private D-Bus
socket (sdbus.py) bind-mounted at /run/systemd in zygoted's own mount namespace. The caller
(launchctl) runs in cgroups made for it below the test's own, which the fake's units own.

Checked as an attacker would shape it: the slice never comes from the caller's cgroup path (a
unit whose cgroup path has a "machine.slice" component, a delegated sub-cgroup named
machine.slice), every limit of the unit reaches the scope (TasksMax, MemoryMax, DevicePolicy,
IPAddressDeny and the rest), protections do not, and what cannot be carried is refused: a unit
that sets RestrictFileSystems=, a caller below its unit's cgroup, a cgroup no unit holds.
"""
import os
import shutil
import tempfile

import pytest

from sdbus import FakeSystemd
# subreaper: an autouse fixture, imported so that it applies here
from sdmanager import TIMEOUT, FakeManager, reap_zombies, sd_bins, subreaper  # noqa: F401


def unit_hierarchy():
    """(mount point, our cgroup) of the hierarchy zygoted reads units from: name=systemd on a v1
    or hybrid host, else the unified one; None when there is none to write to."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fstype, _, opts = post.split()[:3]
            mounts.setdefault((fstype, "name=systemd" in opts), pre.split()[4])
    for _, ctl, path in lines:
        if ctl == "name=systemd" and ("cgroup", True) in mounts:
            return mounts[("cgroup", True)], path
    for _, ctl, path in lines:
        if ctl == "" and ("cgroup2", False) in mounts:
            return mounts[("cgroup2", False)], path
    return None


@pytest.fixture
def cgroups():
    """Makes cgroups below the test's own (relative names); removes them at the end."""
    h = unit_hierarchy()
    if h is None or not os.access(h[0] + h[1], os.W_OK):
        pytest.skip("no writable cgroup hierarchy for systemd's units (name=systemd or cgroup2)")
    mount, own = h
    base = f"{own.rstrip('/')}/zyscope-{os.getpid()}"
    made = []

    def make(rel):
        path = f"{base}/{rel}".replace("//", "/")
        parts = path.strip("/").split("/")
        for i in range(len(parts)):
            d = mount + "/" + "/".join(parts[: i + 1])
            if not os.path.isdir(d):
                os.mkdir(d)
                made.append(d)
        return path

    make.base = base
    make.mount = mount
    yield make
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError as e:
            pytest.fail(f"cgroup {d} left: {e}")


@pytest.fixture
def world(sd_bins, request):
    """zygoted under the fake manager, with the fake systemd's socket at /run/systemd/private in
    its mount namespace. world(units) starts them and returns (manager, systemd)."""
    d = tempfile.mkdtemp(prefix="zyscope-")
    os.chmod(d, 0o755)
    bus_dir = os.path.join(d, "systemd")
    os.mkdir(bus_dir)
    made = {}

    def start(units):
        sysd = FakeSystemd(bus_dir, units)
        m = FakeManager(d, sd_bins)
        made["m"], made["s"] = m, sysd
        script = ('[ -d /run/systemd ] || { mount -t tmpfs zyscope /run && mkdir /run/systemd; } && '
                  'mount --bind "$0" /run/systemd && exec "$@"')
        m.start(wrap=("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, bus_dir))
        m.wait_ready()
        return m, sysd

    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to give zygoted a /run/systemd of its own")
    yield start
    if "m" in made:
        rep = getattr(request.node, "rep_call", None)
        if rep is None or rep.failed:
            print(f"\n----- zygoted stderr -----\n{made['m'].log}")
        made["m"].close()
        made["s"].close()
    reap_zombies()
    shutil.rmtree(d, ignore_errors=True)


def run_in(m, cgroups, cgroup, *args):
    """launchctl ARGS, run from cgroup (an absolute path of the unit hierarchy)."""
    import subprocess
    procs = os.path.join(cgroups.mount + cgroup, "cgroup.procs")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, m.bins["launchctl"], "--socket",
                              m.socket, *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd="/",
                             env={"PATH": "/usr/bin:/bin"})
        m.wait_process(p, f"launchctl {' '.join(args)}")
        out.seek(0)
        err.seek(0)
        p.stdout, p.stderr = out.read().decode(), err.read().decode()
    return p


def task_scopes(sysd):
    """The task scopes asked for (each profile's pid namespace init has one too)."""
    return [s for s in sysd.scopes() if s[0].startswith("zygote-task-")]


def detach(m, cgroups, cgroup, task_id):
    return run_in(m, cgroups, cgroup, "run", "--detach", "--id", task_id, "--", "true")


LIMITS = {
    "TasksMax": ("t", 8),
    "MemoryMax": ("t", 64 << 20),
    "MemoryHigh": ("t", 48 << 20),
    "MemorySwapMax": ("t", 0),
    "CPUQuotaPerSecUSec": ("t", 200000),
    "CPUWeight": ("t", 20),
    "AllowedCPUs": ("ay", b"\x01"),
    "IOReadBandwidthMax": ("a(st)", [("/dev/sda", 1 << 20)]),
    "DevicePolicy": ("s", "closed"),
    "DeviceAllow": ("a(ss)", [("/dev/null", "rw")]),
    "IPAddressDeny": ("a(iayu)", [(2, bytes(4), 0), (10, bytes(16), 0)]),
    "IPAddressAllow": ("a(iayu)", [(2, bytes([127, 0, 0, 1]), 8)]),
    "RestrictNetworkInterfaces": ("(bas)", (True, ["lo"])),
    "SocketBindDeny": ("a(iiqq)", [(0, 0, 0, 0)]),
}
PROTECTIONS = {"MemoryMin": ("t", 32 << 20), "MemoryLow": ("t", 32 << 20), "DefaultMemoryLow": ("t", 1 << 20),
               "ManagedOOMPreference": ("s", "omit")}


def plain(v):
    if isinstance(v, bytes):
        return list(v)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


@pytest.mark.parametrize("layout", ["plain", "slice-named-path"])
def test_scope_takes_the_units_slice_and_limits(world, cgroups, layout):
    """The unit's own cgroup, named by it (plain), or one whose path has a machine.slice component
    that is not its slice (slice-named-path: today's code took the slice from the path): the
    scope is in the unit's Slice, with every limit of it, and none of its protections."""
    cg = cgroups("limited" if layout == "plain" else "machine.slice/limited.service")
    units = {"limited.service": {"cgroup": cg, "slice": "system.slice", "props": {**LIMITS, **PROTECTIONS}}}
    m, sysd = world(units)
    r = detach(m, cgroups, cg, "lim-1")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    (name, props), = task_scopes(sysd)
    assert name.startswith("zygote-task-") and name.endswith(".scope"), name
    assert props.get("Slice") == "system.slice", props
    for k, (_, v) in LIMITS.items():
        assert props.get(k) == plain(v), f"{k}: {props.get(k)!r}, the unit's is {v!r}"
    for k in PROTECTIONS:
        assert k not in props, f"{k} (a protection) was copied: {props}"
    assert sysd.lookups == [cg], sysd.lookups
    assert name == "zygote-task-%d.scope" % int(m.state("lim-1")["pid"]), name


@pytest.mark.parametrize("case", ["delegated-machine-slice", "delegated-deep", "refused-property", "no-unit"])
def test_detach_refused_when_limits_cannot_be_carried(world, cgroups, case):
    """A caller in a sub-cgroup named machine.slice of a Delegate=yes unit (today's code put its
    task in the manager's /machine.slice), or deeper in it; a unit that sets a property a scope
    cannot have; a cgroup no unit holds: `run --detach` fails with the reason, and no scope is
    asked for."""
    unit_cg = cgroups("deleg")
    props = {"Delegate": ("b", True), "TasksMax": ("t", 8)}
    if case == "refused-property":
        props["RestrictFileSystems"] = ("(bas)", (True, ["ext4"]))
    units = {"deleg.service": {"cgroup": unit_cg, "slice": "system.slice", "props": props}}
    caller = {"delegated-machine-slice": "deleg/machine.slice", "delegated-deep": "deleg/a/b.scope",
              "refused-property": "deleg", "no-unit": "elsewhere.slice"}[case]
    caller_cg = cgroups(caller)
    m, sysd = world(units)
    r = detach(m, cgroups, caller_cg, "ref-1")
    assert r.returncode != 0, f"a detached task of {caller_cg} was started: {task_scopes(sysd)}"
    assert task_scopes(sysd) == [], task_scopes(sysd)
    want = {"delegated-machine-slice": "delegated", "delegated-deep": "delegated",
            "refused-property": "RestrictFileSystems", "no-unit": "no unit"}[case]
    assert want in r.stderr, r.stderr
    # the daemon serves on, and a task that is not detached still runs in its caller's cgroup
    r = run_in(m, cgroups, caller_cg, "run", "--", "true")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
