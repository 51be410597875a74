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


def unit_hierarchies():
    """[(mount point, our cgroup)] of the hierarchies zygoted reads units from: name=systemd on a
    v1 or hybrid host (first), and the unified one, which systemd keeps equal to it on a hybrid
    host; [] when there is none to write to."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fstype, _, opts = post.split()[:3]
            mounts.setdefault((fstype, "name=systemd" in opts), pre.split()[4])
    out = []
    for want, key in (("name=systemd", ("cgroup", True)), ("", ("cgroup2", False))):
        for _, ctl, path in lines:
            if ctl == want and key in mounts and os.access(mounts[key] + path, os.W_OK):
                out.append((mounts[key], path))
    return out


@pytest.fixture
def cgroups():
    """Makes cgroups below the test's own (relative names), in every unit hierarchy (as systemd
    does); removes them at the end. Returns the path as zygoted reads it (the first hierarchy's)."""
    hs = unit_hierarchies()
    if not hs:
        pytest.skip("no writable cgroup hierarchy for systemd's units (name=systemd or cgroup2)")
    made = []

    def make(rel):
        paths = []
        for mount, own in hs:
            path = f"{own.rstrip('/')}/zyscope-{os.getpid()}/{rel}"
            parts = path.strip("/").split("/")
            for i in range(len(parts)):
                d = mount + "/" + "/".join(parts[: i + 1])
                if not os.path.isdir(d):
                    os.mkdir(d)
                    made.append(d)
            paths.append(path)
        make.procs[paths[0]] = [os.path.join(mount + p, "cgroup.procs") for (mount, _), p in zip(hs, paths)]
        return paths[0]

    make.procs = {}
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


def run_in(m, cgroups, cgroup, *args, procs=None):
    """launchctl ARGS, run from cgroup (an absolute path of the unit hierarchy), or from the
    cgroup.procs files procs name."""
    import subprocess
    procs = procs or cgroups.procs[cgroup]
    script = 'for p in $PROCS; do echo $$ > "$p" || exit 99; done; exec "$@"'
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(["sh", "-c", script, "sh", m.bins["launchctl"], "--socket", m.socket, *args],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd="/",
                             env={"PATH": "/usr/bin:/bin", "PROCS": " ".join(procs)})
        m.wait_process(p, f"launchctl {' '.join(args)}")
        out.seek(0)
        err.seek(0)
        p.stdout, p.stderr = out.read().decode(), err.read().decode()
    return p


def task_scopes(sysd):
    """The task scopes asked for (each profile's pid namespace init has one too)."""
    return [s for s in sysd.scopes() if s[0].startswith("zygote-task-")]


def detach(m, cgroups, cgroup, task_id, procs=None):
    return run_in(m, cgroups, cgroup, "run", "--detach", "--id", task_id, "--", "true", procs=procs)


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
# what the manager reports for settings left unset: not copied (the scope's default is the same)
UNSET = {"IOWeight": ("t", (1 << 64) - 1), "BlockIOWeight": ("t", (1 << 64) - 1), "ManagedOOMSwap": ("s", "auto"),
         "IPAccounting": ("b", False), "SocketBindAllow": ("a(iiqq)", []),
         "ManagedOOMMemoryPressureLimit": ("u", 0)}
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
    scope is in the unit's Slice, with every limit of it (MemorySwapMax=0 included), none of its
    protections, and none of what it leaves unset."""
    cg = cgroups("limited" if layout == "plain" else "machine.slice/limited.service")
    units = {"limited.service": {"cgroup": cg, "slice": "system.slice", "props": {**LIMITS, **PROTECTIONS, **UNSET}}}
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
    for k in UNSET:
        assert k not in props, f"{k} (unset) was copied: {props}"
    assert sysd.lookups == [cg], sysd.lookups
    assert name == "zygote-task-%d.scope" % int(m.state("lim-1")["pid"]), name


@pytest.mark.parametrize("case", ["delegated-machine-slice", "delegated-deep", "refused-property", "no-unit",
                                  "hybrid-unified-only", "no-slice"])
def test_detach_refused_when_limits_cannot_be_carried(world, cgroups, case):
    """A caller in a sub-cgroup named machine.slice of a Delegate=yes unit (today's code put its
    task in the manager's /machine.slice), or deeper in it; a unit that sets a property a scope
    cannot have; a cgroup no unit holds; on a hybrid host, a caller that moved itself into the
    sub-cgroup in the unified hierarchy only (name=systemd, which names units, still says its
    unit's own); a manager that does not say the unit's slice (the default one could be outside
    the caller's): `run --detach` fails with the reason, and no scope is asked for."""
    unit_cg = cgroups("deleg")
    props = {"Delegate": ("b", True), "TasksMax": ("t", 8)}
    if case == "refused-property":
        props["RestrictFileSystems"] = ("(bas)", (True, ["ext4", "tmpfs"]))
    units = {"deleg.service": {"cgroup": unit_cg, "slice": None if case == "no-slice" else "system.slice",
                               "props": props}}
    caller = {"delegated-machine-slice": "deleg/machine.slice", "delegated-deep": "deleg/a/b.scope",
              "refused-property": "deleg", "no-unit": "elsewhere.slice", "hybrid-unified-only": "deleg",
              "no-slice": "deleg"}[case]
    caller_cg = cgroups(caller)
    procs = None
    if case == "hybrid-unified-only":
        if len(cgroups.procs[unit_cg]) < 2:
            pytest.skip("not a hybrid host (name=systemd and cgroup2 both)")
        procs = [cgroups.procs[unit_cg][0], cgroups.procs[cgroups("deleg/machine.slice")][1]]
    m, sysd = world(units)
    r = detach(m, cgroups, caller_cg, "ref-1", procs=procs)
    assert r.returncode != 0, f"a detached task of {caller_cg} was started: {task_scopes(sysd)}"
    assert task_scopes(sysd) == [], task_scopes(sysd)
    want = {"delegated-machine-slice": "delegated", "delegated-deep": "delegated",
            "refused-property": "RestrictFileSystems", "no-unit": "no unit",
            "hybrid-unified-only": "delegated", "no-slice": "its slice"}[case]
    assert want in r.stderr, r.stderr
    # the daemon serves on, and a task that is not detached still runs in its caller's cgroup
    r = run_in(m, cgroups, caller_cg, "run", "--", "true", procs=procs)
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
