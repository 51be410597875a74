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
import signal
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


def kill_left(pid):
    """Kills a process left in a cgroup of ours once zygoted is gone, and reaps it (an orphan of
    the daemon's is ours, the subreaper's), so that the cgroup is empty when removed."""
    import select
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        select.select([fd], [], [], TIMEOUT)
        os.waitid(os.P_PIDFD, fd, os.WEXITED)
    except (ChildProcessError, ProcessLookupError):
        pass  # gone already, or not ours to reap
    finally:
        os.close(fd)


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
    # what zygoted, put in one of them, left there (its reference process, which exits in its
    # own time once the daemon is gone; world's teardown came first)
    for d in made:
        with open(os.path.join(d, "cgroup.procs")) as f:
            for pid in map(int, f.read().split()):
                kill_left(pid)
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError as e:
            pytest.fail(f"cgroup {d} left: {e}")


@pytest.fixture
def world(sd_bins, request):
    """zygoted under the fake manager, with the fake systemd's socket at /run/systemd/private in
    its mount namespace, and a fake system bus (the system manager's units: none unless given) at
    /run/dbus/system_bus_socket. world(units, system_units, procs) starts them (zygoted first
    written into the cgroup.procs files procs names) and returns (manager, systemd, the system's
    systemd)."""
    d = tempfile.mkdtemp(prefix="zyscope-")
    os.chmod(d, 0o755)
    bus_dir = os.path.join(d, "systemd")
    system_dir = os.path.join(d, "dbus")
    os.mkdir(bus_dir)
    os.mkdir(system_dir)
    made = {}

    def start(units, system_units=None, procs=()):
        sysd = FakeSystemd(bus_dir, units)
        system = FakeSystemd(system_dir, system_units or {}, name="system_bus_socket", bus=True)
        m = FakeManager(d, sd_bins)
        made["m"], made["s"], made["y"] = m, sysd, system
        script = ("".join(f'echo $$ > "{p}" && ' for p in procs) +
                  '{ [ -d /run/systemd ] || { mount -t tmpfs zyscope /run && mkdir /run/systemd; }; } && '
                  '{ [ -d /run/dbus ] || mkdir /run/dbus; } && '
                  f'mount --bind "$0" /run/systemd && mount --bind "{system_dir}" /run/dbus && exec "$@"')
        m.start(wrap=("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, bus_dir))
        m.wait_ready()
        return m, sysd, system

    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to give zygoted a /run/systemd of its own")
    yield start
    if "m" in made:
        rep = getattr(request.node, "rep_call", None)
        if rep is None or rep.failed:
            print(f"\n----- zygoted stderr -----\n{made['m'].log}")
        made["m"].close()
        made["s"].close()
        made["y"].close()
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
    m, sysd, _ = world(units)
    r = detach(m, cgroups, cg, "lim-1")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    (name, props), = task_scopes(sysd)
    assert name.startswith("zygote-task-") and name.endswith(".scope"), name
    # in the slice of the unit's detached tasks, below the unit's own slice (system.slice)
    assert props.get("Slice") == "system-zygote-limited.service.slice", props
    slice_props = sysd.slices["system-zygote-limited.service.slice"]
    assert slice_props.get("StopWhenUnneeded") is True, slice_props
    for where in (props, slice_props):
        for k, (_, v) in LIMITS.items():
            assert where.get(k) == plain(v), f"{k}: {where.get(k)!r}, the unit's is {v!r}"
        for k in PROTECTIONS:
            assert k not in where, f"{k} (a protection) was copied: {where}"
        for k in UNSET:
            assert k not in where, f"{k} (unset) was copied: {where}"
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
    m, sysd, _ = world(units)
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


def test_detached_tasks_of_one_unit_share_one_slice(world, cgroups):
    """Limits do not multiply: each detached task of a TasksMax=8 unit used to get a scope with a
    TasksMax=8 of its own, so N of them had 8*N. The first is made with a slice of the unit's
    detached tasks (its name escaped: a dash would nest it), which carries the limits; the second
    goes into that same slice, whose limits are set again first, as the unit has them then (here
    changed meanwhile, as by systemctl set-property); another unit gets a slice of its own; a
    slice the manager let go (its last scope gone) is made again; and one made by a concurrent
    request after GetUnit said it was not there is used as one that was."""
    cg = cgroups("caller")
    other_cg = cgroups("other")
    units = {"zygote-detach-caller-0.service": {"cgroup": cg, "slice": "zylimited.slice",
                                               "props": {"TasksMax": ("t", 8), "MemoryMax": ("t", 64 << 20)}},
             "other.service": {"cgroup": other_cg, "slice": "system.slice", "props": {"TasksMax": ("t", 5)}}}
    m, sysd, _ = world(units)
    want = "zylimited-zygote-zygote\\x2ddetach\\x2dcaller\\x2d0.service.slice"
    r = detach(m, cgroups, cg, "share-1")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert list(sysd.slices) == [want], sysd.slices
    assert sysd.slices[want]["TasksMax"] == 8 and sysd.slices[want]["MemoryMax"] == 64 << 20, sysd.slices
    units["zygote-detach-caller-0.service"]["props"]["TasksMax"] = ("t", 6)
    r = detach(m, cgroups, cg, "share-2")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    (_, first), (_, second) = task_scopes(sysd)
    assert first["Slice"] == second["Slice"] == want, (first, second)
    assert sysd.slice_sets == [(want, {"TasksMax": 6, "MemoryMax": 64 << 20})], sysd.slice_sets
    assert list(sysd.slices) == [want] and sysd.slices[want]["TasksMax"] == 6, sysd.slices
    r = detach(m, cgroups, other_cg, "share-3")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert task_scopes(sysd)[2][1]["Slice"] == "system-zygote-other.service.slice", task_scopes(sysd)
    assert sysd.slices["system-zygote-other.service.slice"]["TasksMax"] == 5, sysd.slices
    sysd.drop_slice(want)
    r = detach(m, cgroups, cg, "share-4")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert task_scopes(sysd)[3][1]["Slice"] == want and sysd.slices[want]["TasksMax"] == 6, sysd.slices
    assert len(sysd.slice_sets) == 1, sysd.slice_sets
    # made by another request between this one's GetUnit and its StartTransientUnit: UnitExists,
    # then the limits set on it and the scope in it, as for a slice that was there
    sysd.hide_slices = 1
    units["zygote-detach-caller-0.service"]["props"]["TasksMax"] = ("t", 7)
    r = detach(m, cgroups, cg, "share-5")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert task_scopes(sysd)[4][1]["Slice"] == want, task_scopes(sysd)
    assert sysd.slice_sets[1:] == [(want, {"TasksMax": 7, "MemoryMax": 64 << 20})], sysd.slice_sets


@pytest.mark.parametrize("case", ["copied", "bpf-refused", "io-refused", "not-below", "nowhere"])
def test_detach_from_another_managers_unit(cgroups, world, case):
    """A user's zygoted serving a login shell: the caller's unit (session-N.scope) is the system
    manager's, and zygoted's own manager (the user's) has no unit for that cgroup. Before, the
    detached task was refused. Now the system manager is asked (on the system bus) and the
    scope, made by zygoted's own manager (the only one it may ask), goes into a slice of that
    manager's own with the session's limits (copied), or is refused when the session sets one
    that a user's manager cannot enforce (BPF programs: IPAddressDeny; io, not delegated to it),
    when zygoted is not below the session's slice (the session's slice would not count the task),
    or when no manager has a unit for the cgroup."""
    caller_cg = cgroups("user-1000.slice/session-3.scope")
    own_cg = cgroups("user-1000.slice/user@1000.service")
    if case == "not-below":
        own_cg = cgroups("elsewhere")
    props = {"TasksMax": ("t", 8), "MemoryMax": ("t", 64 << 20), "CPUQuotaPerSecUSec": ("t", 200000),
             **PROTECTIONS, **UNSET}
    if case == "bpf-refused":
        props["IPAddressDeny"] = LIMITS["IPAddressDeny"]
    if case == "io-refused":
        props["IOReadBandwidthMax"] = LIMITS["IOReadBandwidthMax"]
    system_units = {} if case == "nowhere" else {
        "session-3.scope": {"cgroup": caller_cg, "slice": "user-1000.slice", "props": props}}
    m, sysd, system = world({"user@1000.service": {"cgroup": own_cg, "slice": "user.slice"}}, system_units,
                            procs=cgroups.procs[own_cg])
    r = detach(m, cgroups, caller_cg, "foreign-1")
    assert sysd.lookups == [caller_cg] and system.lookups == [caller_cg], (sysd.lookups, system.lookups)
    if case != "copied":
        assert r.returncode != 0, f"a detached task of {caller_cg} was started: {task_scopes(sysd)}"
        assert task_scopes(sysd) == [] and sysd.slices == {}, (task_scopes(sysd), sysd.slices)
        want = {"bpf-refused": "IPAddressDeny", "io-refused": "IOReadBandwidthMax", "not-below": "not below",
                "nowhere": "no unit"}[case]
        assert want in r.stderr, r.stderr
        return
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    (name, scope), = task_scopes(sysd)
    want = "zygote-session\\x2d3.scope.slice"
    assert scope["Slice"] == want and list(sysd.slices) == [want], (scope, sysd.slices)
    assert system.scopes() == [] and system.slices == {}, "a unit was asked of the system manager"
    for where in (scope, sysd.slices[want]):
        for k in ("TasksMax", "MemoryMax", "CPUQuotaPerSecUSec"):
            assert where.get(k) == props[k][1], (k, where)
        for k in list(PROTECTIONS) + list(UNSET):
            assert k not in where, (k, where)
    # a second one shares the slice, as for a unit of zygoted's own manager
    r = detach(m, cgroups, caller_cg, "foreign-2")
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert task_scopes(sysd)[1][1]["Slice"] == want and len(sysd.slice_sets) == 1, (task_scopes(sysd), sysd.slice_sets)


@pytest.mark.parametrize("unit,slice_,want", [
    ("getty@tty1.service", "system-getty.slice", "system-getty-zygote-getty\\x40tty1.service.slice"),
    ("a-b.service", "user-1000.slice", "user-1000-zygote-a\\x2db.service.slice"),
    ("init.scope", "-.slice", "zygote-init.scope.slice"),
    ("x" * 200 + "-" * 10 + ".service", "system.slice", None),
])
def test_slice_of_detached_tasks_is_named_by_the_manager_rules(world, cgroups, unit, slice_, want):
    """A unit's name as a slice's part: each character a unit name may hold but a slice's part
    may not (a dash would nest it, '@' is not allowed there) is escaped, below the unit's
    slice (the root slice's children have no prefix); a name that would be longer than a unit's
    may be (255) is refused, saying so, never cut (a cut name could be another unit's)."""
    cg = cgroups("named")
    m, sysd, _ = world({unit: {"cgroup": cg, "slice": slice_, "props": {"TasksMax": ("t", 8)}}})
    r = detach(m, cgroups, cg, "named-1")
    if want is None:
        assert r.returncode != 0 and "too long" in r.stderr, (r.stdout, r.stderr)
        assert task_scopes(sysd) == [] and sysd.slices == {}, (task_scopes(sysd), sysd.slices)
        return
    assert r.returncode == 0, (r.stdout, r.stderr, m.log)
    assert task_scopes(sysd)[0][1]["Slice"] == want and list(sysd.slices) == [want], (task_scopes(sysd), sysd.slices)
