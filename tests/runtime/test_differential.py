# SPDX-License-Identifier: MIT
"""zygote-runc against runc, config by config: each row of CASES patches linux.resources of the
busybox bundle (`zygote-runc spec`), runs it under build/zygote-runc and under Debian's runc (each
with its own --root), and compares what both gave: the cgroup files of the container's cgroups,
read from the host while it is created; what the container sees in /proc/self/status and its mount
table; the exit statuses of create and run. A difference fails unless the row marks it intended,
with the reason; a difference marked intended that is not there fails too, so the table stays
true.

Each row runs on the host's cgroups and on cgroup v2 emulated as test_devices.py does it (a
private mount namespace with cgroup2 alone at /sys/fs/cgroup), where the controllers cgroup2 has
on this host can be compared; a row whose controller the mode lacks is skipped with the reason.
An intended difference is keyed by where it holds: "*" (everywhere), the host's mode ("v1",
"hybrid", "v2") or the mode and where the row's controller is there ("hybrid/v2": a hybrid host
that has the controller on cgroup2).
"""
import glob
import json
import os
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field

import pytest

from test_devices import WRAPPERS

RUNC = "/usr/sbin/runc"
MIB = 1024 * 1024
# What the container reports: some of its status, its mounts, then it exits 3 (compared too).
PROBE = ("grep -E '^(Cpus_allowed_list|Mems_allowed_list|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status;"
         " echo ---; cat /proc/self/mounts; exit 3")


def host_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        return f.read().strip()


def last_cpu():
    return host_cpus().split(",")[-1].split("-")[-1]


def a_block_device():
    """(major, minor) of a disk of this host (not a loop or zram device), or None."""
    for dev in sorted(glob.glob("/sys/block/*/dev")):
        name = dev.split("/")[3]
        if not name.startswith(("loop", "ram", "zram")):
            with open(dev) as f:
                return tuple(int(x) for x in f.read().split(":"))
    return None


@dataclass
class Case:
    name: str
    resources: dict                               # merged into linux.resources
    controller: str = ""                          # what the row needs ("" none; "unified": cgroup2)
    files: dict = field(default_factory=dict)     # {"v1": [...], "v2": [...]}: the container's cgroup files
    intended: dict = field(default_factory=dict)  # {"*", MODE or MODE/VERSION: {observation: reason}}
    refused: str = ""                             # zygote-runc must refuse, naming this field


HUGETLB_HYBRID = ("runc 1.1 on a hybrid host sets hugetlb on v1 only and fails without a v1 hugetlb hierarchy; "
                  "zygote-runc applies it on cgroup2, where this host's hugetlb controller is and the "
                  "container's processes are too")
UNIFIED_HYBRID = ("runc refuses every unified key unless the host is pure cgroup v2; zygote-runc writes "
                  "them to the container's cgroup2 directory on a hybrid host too (its processes are in it)")
# Differences of every row, by the host's mode.
ALWAYS = {
    "hybrid": {"mounts": "on a hybrid host zygote-runc's cgroup mount also binds the container's own cgroup2 "
                         "directory at /sys/fs/cgroup/unified (docs/CONTAINERS.md), where its hugetlb limit and "
                         "unified keys are; runc 1.1 leaves cgroup2 out"},
}
IDLE_BURST_V1 = "runc 1.1 ignores cpu.idle and cpu.burst on cgroup v1; zygote-runc writes them"
REFUSED = "zygote-runc refuses what it cannot apply; runc warns or ignores it and starts the container"

CASES = [
    Case("baseline", {}, files={"v1": [], "v2": ["cgroup.max.descendants"]}),
    Case("cpu-shares-quota-period", {"cpu": {"shares": 512, "quota": 50000, "period": 100000}}, "cpu",
         {"v1": ["cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"], "v2": ["cpu.weight", "cpu.max"]}),
    Case("cpu-quota-unlimited", {"cpu": {"shares": 2048, "quota": -1, "period": 250000}}, "cpu",
         {"v1": ["cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"], "v2": ["cpu.weight", "cpu.max"]}),
    Case("cpu-quota-without-period", {"cpu": {"quota": 30000}}, "cpu",
         {"v1": ["cpu.cfs_quota_us", "cpu.cfs_period_us"], "v2": ["cpu.max"]}),
    Case("cpu-idle-burst", {"cpu": {"idle": 1, "burst": 1000, "quota": 50000, "period": 100000}}, "cpu",
         {"v1": ["cpu.idle", "cpu.cfs_burst_us"], "v2": ["cpu.idle", "cpu.max.burst"]},
         intended={m: {"file:cpu.idle": IDLE_BURST_V1, "file:cpu.cfs_burst_us": IDLE_BURST_V1}
                   for m in ("v1", "hybrid")}),
    Case("cpuset", {"cpu": {"cpus": "LAST_CPU", "mems": "0"}}, "cpuset",
         {"v1": ["cpuset.cpus", "cpuset.mems"], "v2": ["cpuset.cpus", "cpuset.mems"]}),
    Case("memory-limit-reservation-swap",
         {"memory": {"limit": 256 * MIB, "reservation": 128 * MIB, "swap": 512 * MIB}}, "memory",
         {"v1": ["memory.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.memsw.limit_in_bytes"],
          "v2": ["memory.max", "memory.low", "memory.swap.max"]}),
    Case("memory-limit-only", {"memory": {"limit": 64 * MIB}}, "memory",
         {"v1": ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"], "v2": ["memory.max", "memory.swap.max"]}),
    Case("memory-unlimited", {"memory": {"limit": -1}}, "memory",
         {"v1": ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"], "v2": ["memory.max", "memory.swap.max"]}),
    Case("memory-swappiness-oom", {"memory": {"limit": 64 * MIB, "swappiness": 10, "disableOOMKiller": True}},
         "memory", {"v1": ["memory.swappiness", "memory.oom_control"], "v2": []},
         intended={"v2": {"create": "cgroup v2 has no swappiness and no OOM-killer switch: zygote-runc refuses "
                                    "them, runc ignores them",
                          "run": REFUSED}}),
    Case("memory-swappiness-default", {"memory": {"limit": 64 * MIB, "swappiness": 2 ** 64 - 1}}, "memory",
         {"v1": ["memory.limit_in_bytes", "memory.swappiness"], "v2": ["memory.max"]}),
    Case("pids-limit", {"pids": {"limit": 42}}, "pids", {"v1": ["pids.max"], "v2": ["pids.max"]}),
    Case("pids-unlimited", {"pids": {"limit": -1}}, "pids", {"v1": ["pids.max"], "v2": ["pids.max"]}),
    Case("io-weight", {"blockIO": {"weight": 300}}, "io",
         {"v1": ["blkio.weight", "blkio.bfq.weight"], "v2": ["io.weight", "io.bfq.weight"]}),
    Case("io-throttle", {"blockIO": {"throttleReadBpsDevice": [{"major": "MAJ", "minor": "MIN", "rate": MIB}],
                                     "throttleWriteIOPSDevice": [{"major": "MAJ", "minor": "MIN", "rate": 100}]}},
         "io", {"v1": ["blkio.throttle.read_bps_device", "blkio.throttle.write_iops_device"], "v2": ["io.max"]}),
    Case("hugetlb", {"hugepageLimits": [{"pageSize": "2MB", "limit": 4 * MIB}]}, "hugetlb",
         {"v1": ["hugetlb.2MB.limit_in_bytes"], "v2": ["hugetlb.2MB.max"]},
         intended={"hybrid/v2": {"create": HUGETLB_HYBRID, "run": HUGETLB_HYBRID}}),
    Case("unified-core-key", {"unified": {"cgroup.max.descendants": "5"}}, "unified",
         {"v1": [], "v2": ["cgroup.max.descendants"]},
         intended={"hybrid": {"create": UNIFIED_HYBRID, "run": UNIFIED_HYBRID}}),
    Case("unified-controller-key", {"unified": {"pids.max": "9"}}, "unified", {"v1": [], "v2": ["pids.max"]}),
    Case("unified-hugetlb-key", {"unified": {"hugetlb.2MB.max": str(2 * MIB)}}, "hugetlb",
         {"v1": [], "v2": ["hugetlb.2MB.max"]},
         intended={"hybrid/v2": {"create": UNIFIED_HYBRID, "run": UNIFIED_HYBRID}}),
    # gone from the kernel: ignored by both (zygote-runc says so in its log)
    Case("kernel-memory-ignored", {"memory": {"kernel": 64 * MIB}}, "memory"),
    Case("refused-unknown-field", {"intelRdt": {}}, refused="linux.resources.intelRdt",
         intended={"*": {"create": REFUSED + " (runc ignores an unknown field)", "run": REFUSED}}),
    Case("refused-rdma", {"rdma": {"mlx4_0": {"hcaHandles": 2}}}, refused="linux.resources.rdma.mlx4_0"),
]


def mode_of_host():
    """"v2" (pure cgroup2), "hybrid" (v1 controllers plus cgroup2) or "v1"."""
    kinds = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ")
            kinds.setdefault(left.split()[4], right.split()[0])
    if kinds.get("/sys/fs/cgroup") == "cgroup2":
        return "v2"
    return "hybrid" if "cgroup2" in kinds.values() else "v1"


def hierarchies():
    """(the host's v1 controllers {name: mount point}, the cgroup2 mount point or None)"""
    v1, v2 = {}, None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ")
            point = left.split()[4]
            fstype, _, opts = right.split()[:3]
            if fstype == "cgroup":
                for c in opts.split(","):
                    v1.setdefault(c, point)
            elif fstype == "cgroup2" and v2 is None:
                v2 = point
    return v1, v2


def v2_controllers(point):
    try:
        with open(os.path.join(point, "cgroup.controllers")) as f:
            return set(f.read().split())
    except OSError:
        return set()


def placement(mode, controller):
    """Where controller is in this mode: "v1", "v2", or None (missing)."""
    v1, v2 = hierarchies()
    v1_name = "blkio" if controller == "io" else controller
    if mode != "v2" and v1_name in v1:
        return "v1"
    if v2 and (controller == "unified" or controller in v2_controllers(v2) and (mode == "v2" or v1_name not in v1)):
        return "v2"
    return None


def container_dirs(pid, cid):
    """The container's own cgroup directories (named by its id) as the host sees them:
    {"v1:<controller>": dir, "v2": dir}; a hierarchy where it has none is left out."""
    v1, v2 = hierarchies()
    dirs = {}
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, ctls, path = line.rstrip("\n").split(":", 2)
            if cid not in path:
                continue
            if not ctls and v2:
                dirs["v2"] = v2 + path
            for c in ctls.split(","):
                if c in v1:
                    dirs["v1:" + c] = v1[c] + path
    return dirs


def read_cgroup_file(dirs, version, name):
    prefix = name.split(".")[0]
    key = "v2" if version == "v2" or prefix == "cgroup" else "v1:" + prefix
    if key not in dirs:
        return "<no such cgroup>"
    try:
        with open(os.path.join(dirs[key], name)) as f:
            return " ".join(f.read().split())
    except FileNotFoundError:
        return "<no such file>"
    except OSError as e:
        return f"<{e.strerror}>"


def in_mode(mode, argv):
    """argv as it runs in this mode: as it is on the host, or in the v2 emulation."""
    if mode == "host":
        return argv
    return ["unshare", "--mount", "sh", "-c", f"{{ {WRAPPERS['v2']}; }} || exit 77; exec \"$@\"", "sh", *argv]


class Side:
    """One runtime with its own --root, its commands run in the mode's mount namespace."""

    def __init__(self, name, binary, tmp, mode):
        self.name, self.binary, self.mode = name, binary, mode
        self.root = str(tmp / f"{name}-state")
        self.log = str(tmp / f"{name}-log.json")

    def __call__(self, *args, timeout=60, stdin=None):
        argv = in_mode(self.mode, [self.binary, "--root", self.root, "--log", self.log, "--log-format", "json",
                                   *args])
        # files, not pipes: a created container's init keeps the stdio it was given
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            kw = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
            r = subprocess.run(argv, stdout=out, stderr=err, timeout=timeout, text=True, **kw)
            out.seek(0)
            err.seek(0)
            r.stdout, r.stderr = out.read(), err.read()
        if r.returncode == 77 and self.mode != "host":
            pytest.skip(f"cannot make the cgroup v2 emulation here: {r.stderr.strip()}")
        return r


def run_if_created(side, bundle, cid, created, obs):
    """The bundle run by SIDE (as CID-run, then deleted) where its create (CREATED) succeeded:
    obs["run"] says how it ended. The run's result, or None."""
    if created.returncode != 0:
        obs["run"] = "not run: create failed"
        return None
    r = side("run", "--bundle", bundle, cid + "-run")
    side("delete", "--force", cid + "-run")
    obs["run"] = f"exit {r.returncode}"
    return r


def observe(side, bundle, case, version, tag):
    """What one runtime gives for the bundle: {observation: value}, and its create's stderr."""
    obs, cid = {}, f"zdiff-{tag}-{side.name}"
    r = side("create", "--bundle", bundle, cid)
    obs["create"] = "ok" if r.returncode == 0 else "failed"
    error = r.stderr
    dirs = {}
    try:
        if r.returncode == 0:
            st = json.loads(side("state", cid).stdout)
            dirs = container_dirs(st["pid"], cid)
            for name in case.files.get(version, []):
                obs["file:" + name] = read_cgroup_file(dirs, version, name)
                # both sides missing the cgroup would compare equal and prove nothing
                assert obs["file:" + name] != "<no such cgroup>", f"{side.name}: no cgroup of {cid} for {name}"
    finally:
        side("delete", "--force", cid)
    for d in dirs.values():
        assert not os.path.isdir(d), f"{side.name} left the cgroup {d} behind"
    r = run_if_created(side, bundle, cid, r, obs)
    if r is None:
        return obs, error
    status, _, mounts = r.stdout.partition("---\n")
    for line in status.splitlines():
        k, _, v = line.partition(":")
        obs["status:" + k] = v.strip()
    obs["mounts"] = sorted(" ".join(m.split()[1:3]) for m in mounts.splitlines())
    return obs, error


def leftover_cgroups(tag):
    """Directories of this case's containers in any hierarchy, however deep, that remain."""
    found = []
    for top in glob.glob("/sys/fs/cgroup/*") + ["/sys/fs/cgroup"]:
        if os.path.isdir(top):
            found += glob.glob(os.path.join(top, "**", f"zdiff-{tag}-*"), recursive=True)
    return found


def patch(resources, bundle_config):
    text = json.dumps(resources).replace('"LAST_CPU"', json.dumps(last_cpu()))
    dev = a_block_device()
    if '"MAJ"' in text:
        if not dev:
            pytest.skip("no block device on this host for a throttle rule")
        text = text.replace('"MAJ"', str(dev[0])).replace('"MIN"', str(dev[1]))
    bundle_config.setdefault("linux", {}).setdefault("resources", {}).update(json.loads(text))


@pytest.fixture(scope="module")
def runc_binary():
    if not os.access(RUNC, os.X_OK):
        pytest.skip(f"no {RUNC} (Debian's runc package): nothing to compare with")
    return RUNC


@pytest.fixture(params=["host", "v2"])
def mode(request):
    if request.param == "v2":
        with open("/proc/filesystems") as f:
            if "cgroup2" not in f.read():
                pytest.skip("no cgroup2 file system in this kernel")
        if mode_of_host() == "v2":
            pytest.skip("the host is pure cgroup v2: the host's run covers it")
    return request.param


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_as_runc(case, mode, bundle, runc_bin, runc_binary, tmp_path):
    host_mode = "v2" if mode == "v2" else mode_of_host()
    version = None
    if case.controller:
        version = placement(mode, case.controller)
        if version is None:
            pytest.skip(f"no {case.controller} controller in this mode ({host_mode})")
    version = version or ("v2" if host_mode == "v2" else "v1")
    if case.controller == "memory" and version == "v1" and not os.path.exists(
            hierarchies()[0]["memory"] + "/memory.memsw.limit_in_bytes"):
        pytest.skip("no swap accounting (memory.memsw.*) on this host")
    bundle.set_args("sh", "-c", PROBE)
    patch(case.resources, bundle.config)
    bundle.save()
    tag = uuid.uuid4().hex[:8]
    zy = Side("zygote", runc_bin, tmp_path, mode)
    rc = Side("runc", runc_binary, tmp_path, mode)
    try:
        ours, our_error = observe(zy, bundle.path, case, version, tag)
        theirs, _ = observe(rc, bundle.path, case, version, tag)
    finally:
        left = leftover_cgroups(tag)
        for d in sorted(left, key=len, reverse=True):
            os.rmdir(d)
    assert not left, f"cgroups left behind: {left}"
    print(json.dumps({"zygote-runc": ours, "runc": theirs}, indent=1))  # the evidence, with -rP
    if case.refused:
        assert ours["create"] == "failed", f"zygote-runc accepted {case.refused}"
        assert case.refused in our_error, f"the refusal does not name {case.refused}: {our_error}"
    intended = {**ALWAYS.get(host_mode, {}), **case.intended.get("*", {}), **case.intended.get(host_mode, {}),
                **case.intended.get(f"{host_mode}/{version}", {})}
    unexpected, stale = [], []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, "<not observed>"), theirs.get(key, "<not observed>")
        # what only one side could observe, because its create or run failed, is that difference's
        if "<not observed>" in (a, b) and (ours["create"] != theirs["create"] or ours["run"] != theirs["run"]):
            continue
        if a != b and key not in intended:
            if isinstance(a, list) and isinstance(b, list):
                a, b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
                unexpected.append(f"{key}: only zygote-runc's {a!r}, only runc's {b!r}")
            else:
                unexpected.append(f"{key}: zygote-runc {a!r}, runc {b!r}")
        if a == b and key in intended and key in ours:
            stale.append(f"{key}: marked intended ({intended[key]}) but both gave {a!r}")
    assert not unexpected, "differences from runc:\n" + "\n".join(unexpected)
    assert not stale, "the table marks differences that are not there:\n" + "\n".join(stale)


# `update` of a created container: runc's flags, then a resources object on stdin (as containerd's
# shim sends it); the files of both runtimes' cgroups after each step must match, and zygote-runc's
# state must record the resources as applied.
UPDATE_FILES = {
    "cpu": {"v1": ["cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"], "v2": ["cpu.weight", "cpu.max"]},
    "cpuset": {"v1": ["cpuset.cpus"], "v2": ["cpuset.cpus"]},
    "memory": {"v1": ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.soft_limit_in_bytes"],
               "v2": ["memory.max", "memory.swap.max", "memory.low"]},
    "pids": {"v1": ["pids.max"], "v2": ["pids.max"]},
}
UPDATE_STEPS = [
    (["--cpu-share", "300", "--cpu-quota", "20000", "--cpu-period", "100000", "--pids-limit", "7",
      "--memory", "128m", "--memory-swap", "256m", "--memory-reservation", "64m", "--cpuset-cpus", "LAST_CPU"], None),
    (["--resources", "-"], {"cpu": {"quota": -1, "shares": 1024}, "pids": {"limit": 99},
                            "memory": {"limit": 512 * MIB, "swap": 1024 * MIB}}),
    (["--memory", "64m"], None),
]


@pytest.mark.timeout(120)
def test_update_same_as_runc(bundle, runc_bin, runc_binary, tmp_path):
    controllers = [c for c in UPDATE_FILES if placement("host", c)]
    if not controllers:
        pytest.skip("no cpu, cpuset, memory or pids controller on this host")
    bundle.set_args("sleep", "60")
    tag = uuid.uuid4().hex[:8]
    sides = [Side("zygote", runc_bin, tmp_path, "host"), Side("runc", runc_binary, tmp_path, "host")]
    seen = []
    try:
        dirs = {}
        for side in sides:
            cid = f"zdiff-{tag}-{side.name}"
            r = side("create", "--bundle", bundle.path, cid)
            assert r.returncode == 0, r.stderr
            dirs[side.name] = container_dirs(json.loads(side("state", cid).stdout)["pid"], cid)
        for flags, body in UPDATE_STEPS:
            flags = [last_cpu() if f == "LAST_CPU" else f for f in flags]
            step = {}
            for side in sides:
                r = side("update", *flags, f"zdiff-{tag}-{side.name}",
                         stdin=json.dumps(body) if body is not None else None)
                step[side.name] = {"update": f"exit {r.returncode}"}
                for c in controllers:
                    version = placement("host", c)
                    for name in UPDATE_FILES[c][version]:
                        step[side.name][name] = read_cgroup_file(dirs[side.name], version, name)
            seen.append(step)
            assert step["zygote"] == step["runc"], f"after update {flags} {body}: {json.dumps(step, indent=1)}"
        # zygote-runc's state records what is applied: config.json's resources, each update's
        # fields over them, the ones an update left out kept (runc keeps them in its state too)
        with open(os.path.join(sides[0].root, f"zdiff-{tag}-zygote", "state.json")) as f:
            recorded = json.load(f)["resources"]
        assert recorded["cpu"] == {"shares": 1024, "quota": -1, "period": 100000, "cpus": last_cpu()}, recorded
        assert recorded["memory"] == {"limit": 64 * MIB, "swap": 1024 * MIB, "reservation": 64 * MIB}, recorded
        assert recorded["pids"] == {"limit": 99}, recorded
        assert recorded["devices"] == bundle.config["linux"]["resources"]["devices"], recorded
        # what it cannot apply is refused by name; config.json's own device rules pass (containerd's
        # shim sends them again), other rules are refused rather than left unapplied
        zid = f"zdiff-{tag}-zygote"
        r = sides[0]("update", "--resources", "-", zid, stdin='{"rdma":{"mlx5_0":{"hcaHandles":1}}}')
        assert r.returncode != 0 and "linux.resources.rdma.mlx5_0" in r.stderr, r.stderr
        own = {"devices": bundle.config["linux"]["resources"]["devices"], "pids": {"limit": 11}}
        r = sides[0]("update", "--resources", "-", zid, stdin=json.dumps(own))
        assert r.returncode == 0, r.stderr
        with open(os.path.join(sides[0].root, zid, "state.json")) as f:
            assert json.load(f)["resources"]["pids"] == {"limit": 11}
        if placement("host", "pids"):
            assert read_cgroup_file(dirs["zygote"], placement("host", "pids"), "pids.max") == "11"
        wider = {"devices": [{"allow": True, "access": "rwm"}]}
        r = sides[0]("update", "--resources", "-", zid, stdin=json.dumps(wider))
        assert r.returncode != 0 and "linux.resources.devices" in r.stderr, r.stderr
    finally:
        for side in sides:
            side("delete", "--force", f"zdiff-{tag}-{side.name}")
        left = leftover_cgroups(tag)
        for d in sorted(left, key=len, reverse=True):
            os.rmdir(d)
    assert not left, f"cgroups left behind: {left}"
    print(json.dumps(seen, indent=1))  # the evidence, with -rP
