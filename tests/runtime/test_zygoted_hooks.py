# SPDX-License-Identifier: MIT
"""The OCI hooks of a container zygoted starts hold nothing their caller lacks: zygoted's worker and
the init run them (prestart, createRuntime, createContainer) as uid 0, where runc would run them as
its caller's children. A root caller that shed capabilities, in every way a root process can (its
bounding set, SECBIT_NOROOT with ambient capabilities, SECBIT_NOROOT with a capset and none,
without CAP_SETPCAP), gets hooks whose capability sets are within its own and whose securebits are
at least its own; prestart and createRuntime run in the caller's cgroups, createContainer in the
container's. Each hook writes what it sees (its /proc/self/status sets, PR_GET_SECUREBITS, its
cgroups, its scheduling and umask) to a file; the caller writes the same about itself before it
calls. A caller at nice 10 on one CPU, with an idle I/O priority, oom_score_adj 500 and umask 077
gets hooks and an init scheduled as it is, and no process.oomScoreAdj below its own unless it holds
CAP_SYS_RESOURCE."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

from containertools import container_id

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402

from conftest import SOURCE_DIR  # noqa: E402

L = "io.zygote.Launcher."
pytestmark = pytest.mark.timeout(120)

CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1

# What a process sees of itself: its capability sets, securebits, no_new_privs and cgroups, as JSON
# to argv[1]. Used by the hooks and (imported) by the caller.
SEEN = r"""
import ctypes, json, sys
def seen():
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"):
                out[k] = int(v.strip(), 16 if k.startswith("Cap") else 10)
    out["securebits"] = libc.prctl(27, 0, 0, 0, 0)  # PR_GET_SECUREBITS
    with open("/proc/self/cgroup") as f:
        out["cgroup"] = f.read()
    with open("/proc/self/limits") as f:
        out["limits"] = f.read()
    out.update(sched("self"))
    return out
def sched(pid):
    # how the kernel schedules pid: nice, affinity, oom_score_adj, I/O priority, umask
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    with open(f"/proc/{pid}/stat") as f:
        out["nice"] = int(f.read().rsplit(")", 1)[1].split()[16])
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Cpus_allowed_list", "Umask"):
                out[k] = v.strip()
    with open(f"/proc/{pid}/oom_score_adj") as f:
        out["oom_score_adj"] = int(f.read())
    out["ioprio"] = libc.syscall(252, 1, 0 if pid == "self" else int(pid))  # ioprio_get, x86_64
    return out
if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump(seen(), f)
"""

# The caller: optionally sheds capabilities itself (SECBIT_NOROOT|SECBIT_NOROOT_LOCKED, then a
# capset to the mask in argv[5], with no ambient ones), writes what it holds, then asks.
CLIENT = r"""
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[1])
import varlink, seen
if sys.argv[5] != "-":
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(28, 3, 0, 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECUREBITS NOROOT|LOCKED
    m = int(sys.argv[5], 16)
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)(m & 0xffffffff, m & 0xffffffff, 0, m >> 32, m >> 32, 0)
    assert libc.capset(hdr, data) == 0, ctypes.get_errno()
with open(sys.argv[6], "w") as f:
    json.dump(seen.seen(), f)
c = varlink.connect(sys.argv[2])
r = c.call("io.zygote.Launcher.CreateContainer", {"id": sys.argv[4], "bundle": 0}, fds=[int(sys.argv[3])],
           check=False)
r.close_fds()
print(json.dumps({"error": r.error, "parameters": r.parameters}))
"""

# Eleven capabilities, enough for zygoted's worker to make a container: the caller's reduced set.
ELEVEN = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
          "CAP_NET_ADMIN", "CAP_SYS_CHROOT", "CAP_SYS_ADMIN", "CAP_MKNOD"]
NO_SETPCAP = [c for c in ELEVEN if c != "CAP_SETPCAP"]


def setpriv_list(caps):
    return "-all," + ",".join("+" + c[4:].lower() for c in caps)


# How the root caller sheds capabilities: (its capabilities, the wrapper, its own capset mask or
# None, whether its hooks get SECBIT_NOROOT|SECBIT_NOROOT_LOCKED).
SHED = {
    # SECBIT_NOROOT, locked, its eleven capabilities ambient: the caller
    "noroot-ambient": (ELEVEN, ["setpriv", "--securebits=+noroot,+noroot_locked", f"--inh-caps={setpriv_list(ELEVEN)}",
                                f"--ambient-caps={setpriv_list(ELEVEN)}"], None, True),
    # the same bits and eleven capabilities set by the caller itself (a capset): none ambient
    "noroot-capset": (ELEVEN, [], ELEVEN, True),
    # without CAP_SETPCAP no securebits can be set: its hooks still hold no more than it does
    "noroot-no-setpcap": (NO_SETPCAP, ["setpriv", "--securebits=+noroot,+noroot_locked",
                                       f"--inh-caps={setpriv_list(NO_SETPCAP)}",
                                       f"--ambient-caps={setpriv_list(NO_SETPCAP)}"], None, False),
    # only a bounding set: a root exec gives it back, to the caller as to its hooks
    "bounding-set": (ELEVEN, ["setpriv", f"--bounding-set={setpriv_list(ELEVEN)}", "--inh-caps=-all"], None, False),
}
KINDS = ("prestart", "createRuntime", "createContainer")
RUNC_KINDS = ("prestart", "createRuntime", "createContainer", "poststart", "poststop")


@pytest.fixture
def caller_cgroup():
    """A pids cgroup of the caller's own (v1 or unified)."""
    base = "/sys/fs/cgroup/pids" if os.path.isdir("/sys/fs/cgroup/pids") else "/sys/fs/cgroup"
    if not os.access(base, os.W_OK):
        pytest.skip(f"cannot create a cgroup under {base}")
    cg = tempfile.mkdtemp(prefix="zytest-hooks-", dir=base)
    yield cg
    os.rmdir(cg)  # the caller, the worker and the hooks have exited; the init moved out


def hooks_bundle(bundle, out, caps, kinds=KINDS):
    """A bundle whose hooks of kinds write what they see; its process asks for CAP_KILL within a
    bounding set of caps (the caller's)."""
    with open(out / "seen.py", "w") as f:
        f.write(SEEN)
    bundle.config["hooks"] = {k: [{"path": sys.executable, "args": ["python3", str(out / "seen.py"),
                                                                    str(out / f"{k}.json")]}] for k in kinds}
    pc = bundle.config["process"]["capabilities"]
    pc["bounding"] = list(caps)
    for kind in ("effective", "permitted"):
        pc[kind] = ["CAP_KILL"]
    pc.pop("inheritable", None)
    pc.pop("ambient", None)
    bundle.set_args("true")


def create_as(daemon, bundle, out, wrapper, own_mask, cgroup, sched=""):
    """CreateContainer from a root caller in cgroup, shed by wrapper (and own_mask, its own capset):
    the id, the reply and what the caller held when it asked. sched: shell commands that set the
    caller's scheduling and umask first."""
    cid = container_id()
    mod = tempfile.mkdtemp(prefix="zyhk-")
    for name, text in (("varlink.py", None), ("seen.py", SEEN)):
        dst = os.path.join(mod, name)
        if text is None:
            with open(os.path.join(SOURCE_DIR, "tests", "integration", name)) as f:
                text = f.read()
        with open(dst, "w") as f:
            f.write(text)
    fd = os.open(bundle.path, os.O_PATH | os.O_DIRECTORY)
    mine = str(out / "caller.json")
    mask = "%x" % zytest.caps_mask(own_mask) if own_mask else "-"
    script = f'echo $$ > {cgroup}/cgroup.procs && {sched} exec "$@"'
    try:
        r = subprocess.run(["sh", "-c", script, "sh", *wrapper, sys.executable, "-c", CLIENT, mod, daemon.socket,
                            str(fd), cid, mask, mine], capture_output=True, text=True, timeout=60, pass_fds=[fd])
    finally:
        os.close(fd)
        for name in os.listdir(mod):
            os.remove(os.path.join(mod, name))
        os.rmdir(mod)
    assert r.returncode == 0, r.stderr
    with open(mine) as f:
        return cid, json.loads(r.stdout), json.load(f)


@pytest.mark.parametrize("how", sorted(SHED))
def test_hooks_hold_nothing_the_caller_lacks(daemon, bundle, open_tmp, caller_cgroup, how):
    caps, wrapper, own_mask, noroot = SHED[how]
    held = zytest.caps_mask(caps)
    hooks_bundle(bundle, open_tmp, caps)
    cid, r, caller = create_as(daemon, bundle, open_tmp, wrapper, own_mask, caller_cgroup)
    assert r["error"] is None, r
    try:
        assert caller["CapEff"] == held and caller["CapPrm"] == held, caller
        init = r["parameters"]["pid"]
        with open(f"/proc/{init}/cgroup") as f:
            init_cgroup = f.read()
        for kind in KINDS:
            with open(open_tmp / f"{kind}.json") as f:
                hook = json.load(f)
            for k in CAP_SETS:
                extra = hook[k] & ~caller[k]
                assert extra == 0, f"{kind}: {k} {hook[k]:#x}, the caller's ({how}) {caller[k]:#x}: {extra:#x} more"
            assert hook["CapBnd"] == held, f"{kind}: bounding set {hook['CapBnd']:#x}, the caller holds {held:#x}"
            # the caller's securebits, locks included, are the hook's (where CAP_SETPCAP can set them)
            want = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED if noroot else 0
            assert hook["securebits"] == want, f"{kind}: securebits {hook['securebits']:#x}, want {want:#x}"
            if noroot:
                assert caller["securebits"] & ~hook["securebits"] == 0, (kind, hook, caller)
            assert hook["NoNewPrivs"] == caller["NoNewPrivs"] == 0
            if noroot:
                # a NOROOT process keeps only its ambient capabilities at an exec, as runc would
                assert hook["CapEff"] == caller["CapAmb"] & held, (kind, hook, caller)
            elif how == "bounding-set":
                assert hook["CapEff"] == held, (kind, hook)
            # runc runs these as its caller's children: in its cgroups; createContainer in the
            # container's init
            want_cg = init_cgroup if kind == "createContainer" else caller["cgroup"]
            assert hook["cgroup"] == want_cg, f"{kind}: in {hook['cgroup']!r}, want {want_cg!r}"
        assert caller_cgroup[len("/sys/fs/cgroup"):].split("/", 2)[-1] in caller["cgroup"], caller["cgroup"]
    finally:
        with daemon.connect() as c:
            c.call(L + "Delete", {"id": cid})


def hard_limit(limits, name):
    for line in limits.splitlines():
        if line.startswith(name):
            return line[len(name):].split()[1]
    raise AssertionError(f"no {name} in {limits!r}")


@pytest.mark.parametrize("limit", [("--nofile=300:300", "Max open files"), ("--nproc=4000:4000", "Max processes"),
                                   ("--core=1000:1000", "Max core file size")], ids=["nofile", "nproc", "core"])
def test_hooks_keep_the_callers_limits(daemon, bundle, open_tmp, caller_cgroup, limit):
    """A caller's resource limits bound its hooks (and its container, whose config may raise them
    only with CAP_SYS_RESOURCE), as for runc's hooks, its grandchildren."""
    option, name = limit
    hooks_bundle(bundle, open_tmp, ELEVEN)
    bundle.config["process"].pop("rlimits", None)
    bundle.save()
    cid, r, caller = create_as(daemon, bundle, open_tmp, ["prlimit", option, "--"], None, caller_cgroup)
    assert r["error"] is None, r
    try:
        want = option.split("=")[1].split(":")[1]
        assert hard_limit(caller["limits"], name) == want, caller["limits"]
        for kind in KINDS:
            with open(open_tmp / f"{kind}.json") as f:
                hook = json.load(f)
            assert hard_limit(hook["limits"], name) == want, f"{kind}: {hook['limits']}"
    finally:
        with daemon.connect() as c:
            c.call(L + "Delete", {"id": cid})


@pytest.mark.parametrize("kind", ["poststart", "poststop"])
def test_hooks_nothing_would_run_are_refused(daemon, bundle, kind):
    """poststart and poststop would run after zygoted's worker is gone: refused, not run by zygoted
    with its own powers."""
    bundle.config["hooks"] = {kind: [{"path": "/bin/true"}]}
    bundle.set_args("true")
    fd = os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with daemon.connect() as c:
            r = c.call(L + "CreateContainer", {"id": container_id(), "bundle": 0}, fds=[fd], check=False)
            r.close_fds()
    finally:
        os.close(fd)
    assert r.error == L + "SpawnFailed" and f"hooks.{kind}" in r.parameters["message"], dict(r)


# zygote-runc's caller: writes what it holds, then becomes zygote-runc (argv[2:]).
RUNC_CALLER = r"""
import json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import seen
with open(sys.argv[1], "w") as f:
    json.dump(seen.seen(), f)
os.execv(sys.argv[2], sys.argv[2:])
"""


def test_zygote_runcs_hooks_are_its_callers_children(runc, bundle, open_tmp, caller_cgroup):
    """The counterpart: zygote-runc's own hooks, poststart and poststop included, are its
    children and hold what its caller holds, no more: a root caller locked with SECBIT_NOROOT and
    eleven ambient capabilities runs a container; each hook's sets are within the caller's, its
    securebits the caller's, its cgroups the caller's (createContainer: the container's)."""
    caps, wrapper, _, _ = SHED["noroot-ambient"]
    held = zytest.caps_mask(caps)
    hooks_bundle(bundle, open_tmp, caps, RUNC_KINDS)
    with open(open_tmp / "caller.py", "w") as f:
        f.write(RUNC_CALLER)
    mine = str(open_tmp / "caller.json")
    script = f'echo $$ > {caller_cgroup}/cgroup.procs && exec "$@"'
    name = container_id()
    r = subprocess.run(["sh", "-c", script, "sh", *wrapper, sys.executable, str(open_tmp / "caller.py"), mine,
                        runc.binary, "--root", runc.root, "run", "--bundle", bundle.path, name],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with open(mine) as f:
        caller = json.load(f)
    assert caller["CapEff"] == held and caller["securebits"] & SECBIT_NOROOT, caller
    for kind in RUNC_KINDS:
        with open(open_tmp / f"{kind}.json") as f:
            hook = json.load(f)
        for k in CAP_SETS:
            assert hook[k] & ~caller[k] == 0, f"{kind}: {k} {hook[k]:#x}, the caller's {caller[k]:#x}"
        assert hook["securebits"] & caller["securebits"] == caller["securebits"], (kind, hook, caller)
        if kind != "createContainer":
            assert hook["cgroup"] == caller["cgroup"], f"{kind}: in {hook['cgroup']!r}"


# The caller's scheduling: nice 10, CPU 0 only, idle I/O, oom_score_adj 500, umask 077.
SCHED = "echo 500 > /proc/self/oom_score_adj && umask 077 &&"
SCHED_WRAP = ["nice", "-n", "10", "taskset", "-c", "0", "ionice", "-c", "3"]
IOPRIO_CLASS_IDLE = 3


def sched_seen(s):
    return {k: s[k] for k in ("nice", "Cpus_allowed_list", "oom_score_adj", "ioprio", "Umask")}


@pytest.mark.parametrize("how", ["root", "bounding-set"])
def test_hooks_and_init_keep_the_callers_scheduling(daemon, bundle, open_tmp, caller_cgroup, how):
    """The worker takes the caller's scheduling and umask before anything it starts: its hooks and
    the container's init are no more important than the caller (runc's would be its children)."""
    wrapper = SCHED_WRAP + (SHED[how][1] if how in SHED else [])
    hooks_bundle(bundle, open_tmp, ELEVEN)
    cid, r, caller = create_as(daemon, bundle, open_tmp, wrapper, None, caller_cgroup, SCHED)
    assert r["error"] is None, r
    try:
        want = {"nice": 10, "Cpus_allowed_list": "0", "oom_score_adj": 500, "ioprio": caller["ioprio"], "Umask": "0077"}
        assert sched_seen(caller) == want and caller["ioprio"] >> 13 == IOPRIO_CLASS_IDLE, caller
        for kind in KINDS:
            with open(open_tmp / f"{kind}.json") as f:
                hook = json.load(f)
            assert sched_seen(hook) == want, f"{kind}: {sched_seen(hook)}, the caller's {want}"
        init = sched_seen(_sched_of(r["parameters"]["pid"]))
        init.pop("Umask")  # the config's (process.user.umask, else 022) once it execs
        assert init == {k: v for k, v in want.items() if k != "Umask"}, init
    finally:
        with daemon.connect() as c:
            c.call(L + "Delete", {"id": cid})


def _status(key):
    with open("/proc/self/status") as f:
        return next(line.split(":")[1].strip() for line in f if line.startswith(key + ":"))


def _sched_of(pid):
    ns = {}
    exec(compile(SEEN, "seen", "exec"), ns)
    return ns["sched"](str(pid))


@pytest.mark.parametrize("adj,resource,refused", [(100, False, True), (-1000, False, True), (500, False, False),
                                                   (800, False, False), (100, True, False)])
def test_oom_score_adj_no_lower_than_the_callers(daemon, bundle, open_tmp, caller_cgroup, adj, resource, refused):
    """process.oomScoreAdj may make the container less likely to be killed than its caller only
    where the caller could itself (CAP_SYS_RESOURCE): a caller at 500 that lacks it gets 100 or
    -1000 refused, 500 and 800 set; one that holds it (a full root) gets 100."""
    if resource and not zytest.caps_mask(["CAP_SYS_RESOURCE"]) & int(_status("CapEff"), 16):
        pytest.skip("this root lacks CAP_SYS_RESOURCE (a container's bounding set): no caller here holds it")
    hooks_bundle(bundle, open_tmp, ELEVEN, kinds=())
    bundle.config["process"]["oomScoreAdj"] = adj
    bundle.set_args("true")
    wrapper = [] if resource else SHED["bounding-set"][1]
    cid, r, caller = create_as(daemon, bundle, open_tmp, wrapper, None, caller_cgroup, SCHED)
    try:
        assert caller["oom_score_adj"] == 500, caller
        assert bool(caller["CapEff"] & (1 << 24)) == resource, caller  # CAP_SYS_RESOURCE
        if refused:
            assert r["error"] == L + "SpawnFailed" and "oomScoreAdj" in r["parameters"]["message"], r
        else:
            assert r["error"] is None, r
            assert _sched_of(r["parameters"]["pid"])["oom_score_adj"] == adj
    finally:
        if r["error"] is None:
            with daemon.connect() as c:
                c.call(L + "Delete", {"id": cid})
