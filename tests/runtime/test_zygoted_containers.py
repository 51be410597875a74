# SPDX-License-Identifier: MIT
"""Containers started by zygoted (CreateContainer, ExecContainer): the container worker runs
zygote-runc's create and exec recipes, the init and every exec'd process are zygoted's children and
tasks (Start, Wait, Kill with all, Pids, Delete), and a caller gets no more than it has: only a
root caller holding CAP_SYS_ADMIN, unconfined, in zygoted's namespaces may ask, and the container
holds no capability outside the caller's sets. A failed create leaves no process, cgroup or state."""
import array
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import containertools as ct
from containertools import PODMAN_PROFILE, container_id

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402

from conftest import SOURCE_DIR  # noqa: E402

L = "io.zygote.Launcher."
pytestmark = pytest.mark.timeout(120)


def containers_dir(d):
    return os.path.join(os.path.dirname(d.socket), "containers")


def create(conn, bundle, cid, stdout=None, console=None, check=True):
    fds = [os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)]
    params = {"id": cid, "bundle": 0}
    if stdout is not None:
        fds.append(stdout)
        params["stdout"] = params["stderr"] = 1
    if console is not None:
        fds.append(console)
        params["consoleSocket"] = len(fds) - 1
    try:
        return conn.call(L + "CreateContainer", params, fds=fds, check=check)
    finally:
        os.close(fds[0])


def run_container(conn, bundle, tmp_path, cid=None):
    """Create, start and wait: the output and the stopped task."""
    cid = cid or container_id()
    out = tmp_path / f"{cid}.out"
    with open(out, "w") as f:
        r = create(conn, bundle, cid, stdout=f.fileno())
    assert r.parameters["id"] == cid
    conn.call(L + "Start", {"id": cid})
    task = conn.call(L + "Wait", {"id": cid}).parameters["task"]
    conn.call(L + "Delete", {"id": cid})
    return out.read_text(), task


def cgroup_of(pid):
    with open(f"/proc/{pid}/cgroup") as f:
        return f.read().strip().split("::", 1)[-1]


def test_run_output_exit_and_filter(daemon, bundle, tmp_path):
    """The container's output and exit code; Podman's profile confines it (Seccomp: 2), compiled
    once by zygoted's cache (GetFilter of the same object answers cached) and not per start."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    with open(PODMAN_PROFILE) as f:
        bundle.config["linux"]["seccomp"] = json.load(f)
    bundle.set_args("sh", "-c", "echo hello; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; hostname; exit 7")
    with daemon.connect() as c:
        out, task = run_container(c, bundle, tmp_path)
        assert task["exitCode"] == 7, task
        assert "hello" in out and "Seccomp:\t2" in out, out
        assert bundle.config["hostname"] in out, out
        cached = c.call(L + "GetFilter", {"seccomp": bundle.config["linux"]["seccomp"]}).parameters["cached"]
        c.call(L + "GetFilter", {"seccomp": bundle.config["linux"]["seccomp"]}, check=False).close_fds()
        assert cached, "the container's filter was not compiled by zygoted's cache"
        before = c.call(L + "GetStatus").parameters["filters"]
        out2, task2 = run_container(c, bundle, tmp_path)
        assert task2["exitCode"] == 7 and "Seccomp:\t2" in out2, out2
        after = c.call(L + "GetStatus").parameters["filters"]
        # the worker found the program in the cache its fork copied: no call, no compile anywhere
        # (a worker never compiles on its own: ZCT_FILTER_ZYGOTED in daemon/container.c worker_run)
        assert after == before, (before, after)
    zytest.wait_for(lambda: not os.listdir(containers_dir(daemon)), "Delete removing the state", timeout=10)


def test_config_extras_through_zygoted(daemon, bundle, tmp_path):
    """The create recipe zygote-runc shares with zygoted's worker applies the same fields: HOME from
    the image's passwd, domainname, personality, scheduler, ioPriority, a shared root propagation and
    a time namespace with its offsets (made by the worker for the init it clones)."""
    with open(os.path.join(bundle.rootfs, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    bundle.config["domainname"] = "zdomain"
    bundle.config["linux"]["personality"] = {"domain": "LINUX32"}
    bundle.config["linux"]["rootfsPropagation"] = "shared"
    bundle.config["process"]["scheduler"] = {"policy": "SCHED_BATCH", "nice": 5}
    bundle.config["process"]["ioPriority"] = {"class": "IOPRIO_CLASS_IDLE", "priority": 0}
    if os.path.exists("/proc/self/ns/time"):
        bundle.config["linux"]["namespaces"].append({"type": "time"})
        bundle.config["linux"]["timeOffsets"] = {"boottime": {"secs": 86400 * 500, "nanosecs": 0}}
    bundle.set_args("sh", "-c", "echo home=$HOME; cat /proc/sys/kernel/domainname; uname -m;"
                    " awk '{print \"policy\", $41, \"nice\", $19}' /proc/self/stat; ionice -p $$;"
                    " awk '{print \"days\", int($1/86400)}' /proc/uptime")
    with daemon.connect() as c:
        out, task = run_container(c, bundle, tmp_path)
    assert task["exitCode"] == 0, (task, out)
    assert "home=/root" in out and "zdomain" in out and "i686" in out, out
    assert "policy 3 nice 5" in out and "idle" in out, out
    if os.path.exists("/proc/self/ns/time"):
        assert int(re.search(r"days (\d+)", out).group(1)) >= 500, out


def test_memory_policy_and_idmapped_mount_through_zygoted(daemon, bundle, open_tmp, tmp_path):
    """linux.memoryPolicy and an id-mapped bind (test_memory_policy.py, test_idmap_mounts.py) in a
    container zygoted's worker makes: the worker, holding its root caller's capabilities, makes the
    mapped mount before it clones the init."""
    if not os.path.exists("/proc/self/numa_maps"):
        pytest.skip("this kernel has no NUMA support (no /proc/self/numa_maps)")
    if ct.userns_refused():
        pytest.skip(f"no user namespace can be made here ({ct.userns_refused()}): an id-mapped mount needs one")
    src = open_tmp / "src"
    src.mkdir()
    (src / "f").write_text("f\n")
    os.chown(src / "f", 1000, 1000)
    os.makedirs(os.path.join(bundle.rootfs, "mnt"), exist_ok=True)
    one = [{"containerID": 1000, "hostID": 1234, "size": 1}]
    bundle.config["mounts"].append({"destination": "/mnt", "type": "bind", "source": str(src),
                                    "options": ["bind", "idmap"], "uidMappings": one, "gidMappings": one})
    bundle.config["linux"]["memoryPolicy"] = {"mode": "MPOL_INTERLEAVE", "nodes": "0"}
    bundle.set_args("sh", "-c", "stat -c owner=%u:%g /mnt/f; head -n 1 /proc/self/numa_maps")
    with daemon.connect() as c:
        out, task = run_container(c, bundle, tmp_path)
    assert task["exitCode"] == 0, (task, out)
    assert "owner=1234:1234" in out and " interleave:0 " in out, out


def test_init_is_zygoteds_child_in_its_cgroup(daemon, bundle):
    bundle.set_args("sleep", "60")
    cid = container_id()
    with daemon.connect() as c:
        r = create(c, bundle, cid)
        pid = r.parameters["pid"]
        r.close_fds()
        assert zytest.proc_status(pid)["PPid"] == str(daemon.proc.pid), "the init is not zygoted's child"
        assert cgroup_of(pid).endswith(cid), cgroup_of(pid)
        assert c.call(L + "State", {"id": cid}).parameters["task"]["state"] == "created"
        c.call(L + "Start", {"id": cid})
        assert c.call(L + "State", {"id": cid}).parameters["task"]["state"] == "running"
        assert c.call(L + "Pids", {"id": cid}).parameters["pids"] == [pid]
        c.call(L + "Kill", {"id": cid, "signal": 9, "all": True})
        assert c.call(L + "Wait", {"id": cid}).parameters["task"]["signal"] == 9
        cgroups = [os.path.join(d, n) for d, dirs, _ in os.walk("/sys/fs/cgroup") for n in dirs if n == cid]
        assert cgroups, "the container has no cgroup of its own"
        c.call(L + "Delete", {"id": cid})
        # the reply comes once the container is gone, as runc's delete returns
        assert not [g for g in cgroups if os.path.exists(g)], "cgroups left after Delete's reply"
        assert not os.listdir(containers_dir(daemon)), "the state directory left after Delete's reply"


def test_exec_joins_the_container(daemon, bundle, tmp_path):
    bundle.set_args("sleep", "60")
    cid, eid = container_id(), container_id("e-")
    out = tmp_path / "exec.out"
    with daemon.connect() as c:
        create(c, bundle, cid).close_fds()
        c.call(L + "Start", {"id": cid})
        proc = dict(bundle.config["process"], args=["sh", "-c", "cat /proc/1/cmdline; echo; hostname; exit 3"])
        with open(out, "w") as f:
            r = c.call(L + "ExecContainer", {"container": cid, "id": eid, "process": proc, "stdout": 0, "stderr": 0},
                       fds=[f.fileno()])
        r.close_fds()
        assert c.call(L + "State", {"id": eid}).parameters["task"]["state"] == "created"
        c.call(L + "Start", {"id": eid})
        assert c.call(L + "Wait", {"id": eid}).parameters["task"]["exitCode"] == 3
        text = out.read_text()
        # the container's pid namespace (its pid 1 is the init's sleep) and its hostname
        assert text.startswith("sleep\x0060"), text
        assert bundle.config["hostname"] in text, text
        # an exec into something that is no container of zygoted's
        e = c.call_error(L + "ExecContainer", {"container": "nope", "id": container_id("e-"), "process": proc})
        assert e.error == L + "NoSuchTask", e
        c.call(L + "Kill", {"id": cid, "signal": 9, "all": True})
        c.call(L + "Wait", {"id": cid})
        c.call(L + "Delete", {"id": eid})
        c.call(L + "Delete", {"id": cid})


@pytest.mark.parametrize("errno,nnp", [(1, False), (38, False), (1, True), (38, True)],
                         ids=["eperm", "enosys", "eperm-nnp", "enosys-nnp"])
def test_profile_without_openat2(daemon, bundle, tmp_path, errno, nnp):
    """A profile without openat2 (older than it, or an allow-list): the worker's init and an exec'd
    process reach their cwd and run, as with runc (test_runc_conformance.py for zygote-runc)."""
    from test_runc_conformance import REPORT, assert_report, old_profile_bundle
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sh", "-c", REPORT + "; exit 6")
    cid, eid = container_id(), container_id("e-")
    eout = tmp_path / "exec.out"
    with daemon.connect() as c:
        out, task = run_container(c, bundle, tmp_path)
        assert task["exitCode"] == 6, (task, out)
        assert_report(out, nnp)
        bundle.set_args("sleep", "60")
        create(c, bundle, cid).close_fds()
        c.call(L + "Start", {"id": cid})
        proc = dict(bundle.config["process"], args=["sh", "-c", REPORT + "; exit 5"])
        with open(eout, "w") as f:
            c.call(L + "ExecContainer", {"container": cid, "id": eid, "process": proc, "stdout": 0, "stderr": 0},
                   fds=[f.fileno()]).close_fds()
        c.call(L + "Start", {"id": eid})
        assert c.call(L + "Wait", {"id": eid}).parameters["task"]["exitCode"] == 5, eout.read_text()
        assert_report(eout.read_text(), nnp)
        c.call(L + "Kill", {"id": cid, "signal": 9, "all": True})
        c.call(L + "Wait", {"id": cid})
        c.call(L + "Delete", {"id": eid})
        c.call(L + "Delete", {"id": cid})


def test_newer_syscall_answers_enosys(daemon, bundle, tmp_path):
    """The program zygoted compiles for a container is zygote-runc's: a call newer than every one
    the profile names answers ENOSYS, as runc's stub makes it (test_runc_conformance.py)."""
    from test_runc_conformance import NEWER_SYSCALL_CHECK, assert_newer_enosys, profile_older_than
    if not os.path.exists(os.path.join(bundle.rootfs, "bin", "try-syscall")):
        pytest.skip("no try-syscall-static built")
    bundle.config["linux"]["seccomp"] = profile_older_than("io_uring_setup")
    bundle.set_args("sh", "-c", NEWER_SYSCALL_CHECK)
    with daemon.connect() as c:
        out, task = run_container(c, bundle, tmp_path)
    assert task["exitCode"] == 0, (task, out)
    assert_newer_enosys(out)


def test_terminal_through_console_socket(daemon, bundle):
    bundle.config["process"]["terminal"] = True
    bundle.set_args("sh", "-c", "tty; echo term-ok")
    cid = container_id()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with daemon.connect() as c:
        create(c, bundle, cid, console=theirs.fileno()).close_fds()
        theirs.close()
        ours.settimeout(10)
        fds = array.array("i")
        msg, anc, _, _ = ours.recvmsg(4096, socket.CMSG_SPACE(4))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:4])
        assert len(fds) == 1, "no pty master came on the console socket"
        master = fds[0]
        c.call(L + "Start", {"id": cid})
        text = zytest.read_until(master, b"term-ok", 10)
        os.close(master)
        assert b"/dev/pts/0" in text and b"term-ok" in text, text
        c.call(L + "Wait", {"id": cid})
        c.call(L + "Delete", {"id": cid})
    ours.close()


def test_a_users_task_id_does_not_block_a_container(daemon, bundle, tmp_path):
    """Ids are per owner (daemon/task-names.c): an unprivileged user who spawns a task with a
    container's id first (learnt from its cgroup path, or guessed) does not keep root's
    CreateContainer of that id from working (before: TaskExists, so containerd could not bring it
    back), and neither touches the other."""
    cid = container_id()
    with daemon.connect_as(zytest.NOBODY, zytest.NOGROUP) as u:
        u.call(L + "Spawn", {"argv": ["sleep", "60"], "id": cid, "hold": True}).close_fds()
        try:
            with daemon.connect() as c:
                out, task = run_container(c, bundle, tmp_path, cid)
                assert task["exitCode"] == 0, task
            st = u.call(L + "State", {"id": cid}).parameters["task"]
            assert st["state"] == "created" and st["owner"] == zytest.NOBODY, st
        finally:
            u.call(L + "Delete", {"id": cid}, check=False)


def test_failed_create_leaves_nothing(daemon, bundle, tmp_path):
    """A missing binary, a poststart hook (nothing would run it) and a bundle without config.json
    fail with the runtime's words; no process, cgroup or state stays."""
    with daemon.connect() as c:
        bundle.set_args("/no/such/binary")
        cid = container_id()
        e = create(c, bundle, cid, check=False)
        assert e.error == L + "SpawnFailed" and e.parameters["step"] == "create", e
        assert "/no/such/binary" in e.parameters["message"], e
        assert c.call_error(L + "State", {"id": cid}).error == L + "NoSuchTask"

        bundle.set_args("true")
        bundle.config["hooks"] = {"poststart": [{"path": "/bin/true"}]}
        bundle.save()
        e = create(c, bundle, container_id(), check=False)
        assert e.error == L + "SpawnFailed" and "hooks.poststart" in e.parameters["message"], e
        del bundle.config["hooks"]
        bundle.save()

        empty = tmp_path / "empty"
        empty.mkdir()
        fd = os.open(empty, os.O_PATH | os.O_DIRECTORY)
        e = c.call(L + "CreateContainer", {"id": container_id(), "bundle": 0}, fds=[fd], check=False)
        os.close(fd)
        assert e.error == L + "SpawnFailed" and "config.json" in e.parameters["message"], e

        cid = container_id()
        create(c, bundle, cid).close_fds()
        e = create(c, bundle, cid, check=False)
        assert e.error == L + "TaskExists", e
        c.call(L + "Delete", {"id": cid})
    zytest.wait_for(lambda: not os.listdir(containers_dir(daemon)), "no state left")
    zytest.wait_for(lambda: not [p for p in os.listdir("/proc") if p.isdigit() and _ppid(p) == daemon.proc.pid
                                 and not _comm(p).startswith("zygote-")], "no process of the containers left", timeout=10)


def test_create_and_start_container_hooks(daemon, bundle, tmp_path):
    """createContainer and startContainer hooks run in the init zygoted's worker clones, as with
    zygote-runc: before pivot_root (the rootfs its cwd) and inside the container before its process,
    each with its state. A failing startContainer hook fails Start, naming the hook, and the process
    never runs; a failing createContainer hook fails CreateContainer; nothing is left."""
    out = tmp_path / "hooks"
    out.mkdir()
    os.makedirs(os.path.join(bundle.rootfs, "hooks"), exist_ok=True)
    bundle.config["mounts"].append({"destination": "/hooks", "type": "bind", "source": str(out),
                                    "options": ["rbind", "rw"]})
    bundle.config["hooks"] = {
        "createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", f"cat > {out}/cc.state; pwd > {out}/cc.cwd"]}],
        "startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat > /hooks/sc.state; ls / > /hooks/sc.root"]}],
    }
    bundle.set_args("sh", "-c", "echo process > /hooks/process")
    with daemon.connect() as c:
        _, task = run_container(c, bundle, tmp_path)
        assert task["exitCode"] == 0, task
        cc, sc = (json.loads((out / f).read_text()) for f in ("cc.state", "sc.state"))
        assert (cc["status"], sc["status"]) == ("creating", "created") and cc["pid"] == sc["pid"] > 1, (cc, sc)
        assert (out / "cc.cwd").read_text().strip() == bundle.rootfs
        assert "hooks" in (out / "sc.root").read_text().split() and (out / "process").exists()

        (out / "process").unlink()
        bundle.config["hooks"] = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]}
        bundle.save()
        cid = container_id()
        create(c, bundle, cid).close_fds()
        e = c.call_error(L + "Start", {"id": cid})
        assert e.error == L + "SpawnFailed" and e.parameters["step"] == "startContainer hook", e
        assert e.parameters["message"] == "startContainer hook 0 failed: exit status 3", e
        assert c.call(L + "Wait", {"id": cid}).parameters["task"]["exitCode"] == 125
        assert not (out / "process").exists()
        c.call(L + "Delete", {"id": cid})

        bundle.config["hooks"] = {"createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 4"]}]}
        bundle.save()
        e = create(c, bundle, container_id(), check=False)
        assert e.error == L + "SpawnFailed", e
        assert "createContainer hook 0 (/bin/sh) failed: exit status 4" in e.parameters["message"], e
    zytest.wait_for(lambda: not os.listdir(containers_dir(daemon)), "no state left")


def _ppid(pid):
    try:
        return int(zytest.proc_status(int(pid))["PPid"])
    except (OSError, KeyError, ValueError):
        return -1


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


CLIENT = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import varlink
c = varlink.connect(sys.argv[2])
fd = int(sys.argv[3])
r = c.call("io.zygote.Launcher.CreateContainer", {"id": sys.argv[4], "bundle": 0}, fds=[fd], check=False)
r.close_fds()
print(json.dumps({"error": r.error, "parameters": r.parameters}))
"""


def create_as(daemon, bundle, *wrapper):
    cid = container_id()
    # the client's module where any uid may read it (the source tree may be root's alone)
    integration = tempfile.mkdtemp(prefix="zyct-")
    os.chmod(integration, 0o755)
    shutil.copy(os.path.join(SOURCE_DIR, "tests", "integration", "varlink.py"), integration)
    os.chmod(os.path.join(integration, "varlink.py"), 0o644)
    # the bundle's fd, opened here: the caller needs no access to the path
    fd = os.open(bundle.path, os.O_PATH | os.O_DIRECTORY)
    try:
        r = subprocess.run([*wrapper, sys.executable, "-c", CLIENT, integration, daemon.socket, str(fd), cid],
                           capture_output=True, text=True, timeout=60, pass_fds=[fd])
    finally:
        os.close(fd)
        shutil.rmtree(integration)
    assert r.returncode == 0, r.stderr
    return cid, json.loads(r.stdout)


@pytest.mark.parametrize("case", ["nobody", "no-sys-admin", "seccomp"])
def test_refused_callers(daemon, bundle, case):
    """Containers are made with root's powers: a caller without them is refused, with the reason."""
    if case == "nobody":
        wrapper = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        want = L + "PermissionDenied"
    elif case == "no-sys-admin":
        wrapper = ["setpriv", "--bounding-set=-sys_admin"]
        want = L + "PermissionDenied"
    else:
        wrapper = [sys.executable, os.path.join(SOURCE_DIR, "tests", "integration", "seccomp_wrap.py")]
        want = L + "CallerConfined"
    if case == "nobody":
        os.chmod(os.path.dirname(daemon.socket), 0o755)
        os.chmod(daemon.socket, 0o777)
    cid, r = create_as(daemon, bundle, *wrapper)
    assert r["error"] == want, r
    assert r["parameters"]["reason"], r
    assert not os.path.exists(os.path.join(containers_dir(daemon), cid))


def test_no_capability_beyond_the_callers(daemon, bundle):
    """A caller whose bounding set lacks CAP_KILL, which the container asks for, gets no container
    with it: the worker took the caller's sets, and the init's capset fails."""
    caps = bundle.config["process"]["capabilities"]
    assert "CAP_KILL" in caps["bounding"], caps
    bundle.set_args("true")
    cid, r = create_as(daemon, bundle, "setpriv", "--bounding-set=-kill")
    assert r["error"] == L + "SpawnFailed", r
    assert not os.path.exists(os.path.join(containers_dir(daemon), cid))
    # the same caller, asking only for what it has, gets its container
    for kind in caps:
        caps[kind] = [x for x in caps[kind] if x != "CAP_KILL"]
    bundle.save()
    cid, r = create_as(daemon, bundle, "setpriv", "--bounding-set=-kill")
    assert r["error"] is None, r
    with daemon.connect() as c:
        c.call(L + "Delete", {"id": cid})


F_GET_SEALS = 1034
SEALS = 0x1 | 0x2 | 0x4 | 0x8  # F_SEAL_SEAL, SHRINK, GROW, WRITE


def test_held_init_is_no_door_to_the_host(daemon, bundle):
    """CVE-2019-5736 class: the held init (and any exec'd process until its execve) is a copy of
    zygoted; its /proc/PID/exe must name no file anyone can write. zygoted runs from a sealed memfd
    copy of itself, so the init's exe carries every seal and refuses writing, even to root."""
    import fcntl
    bundle.set_args("true")
    cid = container_id()
    with daemon.connect() as c:
        r = create(c, bundle, cid)
        pid = r.parameters["pid"]
        r.close_fds()
        for who in (daemon.proc.pid, pid):
            assert os.readlink(f"/proc/{who}/exe").startswith("/memfd:"), os.readlink(f"/proc/{who}/exe")
            fd = os.open(f"/proc/{who}/exe", os.O_RDONLY)
            try:
                assert fcntl.fcntl(fd, F_GET_SEALS) & SEALS == SEALS
            finally:
                os.close(fd)
            with pytest.raises(OSError):
                os.open(f"/proc/{who}/exe", os.O_WRONLY)
        c.call(L + "Delete", {"id": cid})


def test_launchctl_container_and_create(daemon, bundle, tmp_path):
    """launchctl container runs a bundle as `runc run` does (its output on launchctl's stdout, its
    exit status); launchctl create holds it for start, wait and delete; a bad bundle is an error."""
    bundle.set_args("sh", "-c", "echo from-launchctl; exit 5")
    out = tmp_path / "out"
    with open(out, "w") as f:
        r = daemon.launchctl("container", container_id(), bundle.path, stdout=f)
    assert r.returncode == 5, r.stderr
    assert out.read_text() == "from-launchctl\n"
    cid = container_id()
    # the held init keeps launchctl's stdio: files, not pipes, which would not see EOF
    with open(out, "w") as f:
        r = subprocess.run([daemon.bins["launchctl"], "--socket", daemon.socket, "create", cid, bundle.path],
                           stdout=f, stderr=f, stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 0, out.read_text()
    assert out.read_text().split()[0] == cid
    assert daemon.launchctl("start", cid).returncode == 0
    assert daemon.launchctl("wait", cid).returncode == 5
    assert daemon.launchctl("delete", cid).returncode == 0
    r = daemon.launchctl("container", container_id(), str(tmp_path / "missing"))
    assert r.returncode == 1 and b"No such file or directory" in r.stderr, r.stderr
    r = daemon.launchctl("create", "--json", cid, bundle.path)
    assert r.returncode == 2 and b"--json" in r.stderr, r.stderr


def test_ps_shows_the_containers_command(daemon, bundle, tmp_path):
    """A container's task carries its process's arguments once it runs (the daemon never sees
    config.json: they are read from the process), so List and `launchctl ps` show a COMMAND."""
    bundle.set_args("sleep", "1000")
    cid = container_id()
    with daemon.connect() as c, open(tmp_path / "out", "w") as f:
        create(c, bundle, cid, stdout=f.fileno())
        c.call(L + "Start", {"id": cid})
        try:
            task = c.call(L + "State", {"id": cid}).parameters["task"]
            assert task["argv"] == ["sleep", "1000"], task
            line = [x for x in daemon.launchctl("ps").stdout.decode().splitlines() if x.split()[:1] == [cid]]
            assert len(line) == 1 and line[0].endswith(" sleep 1000"), line
        finally:
            c.call(L + "Kill", {"id": cid, "signal": 9})
            c.call(L + "Wait", {"id": cid})
            c.call(L + "Delete", {"id": cid})


def test_restart_adopts_containers(staged, bundle, tmp_path):
    """Under a service manager, a restarted zygoted adopts the containers' processes from the fd
    store as containers: Kill with all reaches every process in the container's cgroup, and
    Delete removes its cgroup and state."""
    from sdmanager import adopting_manager, reap_zombies, PR_SET_CHILD_SUBREAPER, prctl
    m = adopting_manager(tmp_path, staged)
    try:
        m.socket_unit()
        m.start()
        m.wait_ready()
        bundle.set_args("sh", "-c", "sleep 300 & sleep 300")
        cid = container_id()
        out = tmp_path / "out"
        with open(out, "w") as f:
            r = subprocess.run([staged["launchctl"], "--socket", m.socket, "create", cid, bundle.path],
                               stdout=f, stderr=f, stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, out.read_text()
        assert m.launchctl("start", cid).returncode == 0
        assert any(n.startswith(f"zc/") and n.endswith("/" + cid) for n in m.names()), m.names()
        assert os.waitstatus_to_exitcode(m.stop()) == 0
        m.start()
        m.wait_ready()
        m.wait_log(r"adopted 1 tasks")
        state = os.path.join(m.dir, "containers", cid)
        assert os.path.isdir(state)
        assert m.launchctl("kill", "--all", cid, "KILL").returncode == 0
        zytest.wait_for(lambda: (reap_zombies() or True) and m.state(cid)["state"] == "stopped",
                        "the adopted container stopped", timeout=30)
        assert m.launchctl("delete", cid).returncode == 0
        zytest.wait_for(lambda: not os.path.exists(state), "the adopted container's state removed", timeout=30)
        assert os.waitstatus_to_exitcode(m.stop()) == 0
    finally:
        m.close()
        reap_zombies()
        prctl(PR_SET_CHILD_SUBREAPER, 0)


@pytest.mark.parametrize("pool", ["on", "off"])
def test_namespaces_made_ahead(staged, bundle, tmp_path, needs_root, pool):
    """Network, IPC and UTS namespaces made ahead (daemon/nspool.c): after the first container the
    next ones join sets the pool made, each set used by one container (the containers alive at
    once all have namespaces of their own, none the host's), and the pool refills; with
    ZYGOTE_DISABLE_FEATURES=namespace_pool every container makes its own, the same to the
    container. A fresh network namespace either way: only a loopback device, up (as runc brings it
    up; "unknown" is what the kernel says of an up lo)."""
    env = {"ZYGOTE_DISABLE_FEATURES": "namespace_pool"} if pool == "off" else None
    d = zytest.Daemon(staged, zytest.make_workdir(), env=env)
    d.start()
    ids = []
    try:
        with d.connect() as c:
            bundle.set_args("sh", "-c", "cat /proc/net/dev | tail -n +3 | cut -d: -f1; cat /sys/class/net/lo/operstate")
            out, task = run_container(c, bundle, tmp_path)  # the first: it starts the first fill
            assert task["exitCode"] == 0 and out.split() == ["lo", "unknown"], out
            if pool == "on":
                zytest.wait_for(lambda: c.call(L + "GetStatus").parameters["namespacePool"]["ready"] > 0,
                                "the pool filled", timeout=10)
            bundle.set_args("sleep", "60")
            pids = []
            for _ in range(4):  # more than the pool holds: the last ones may come from a refill
                ids.append(container_id())
                r = create(c, bundle, ids[-1])
                pids.append(r.parameters["pid"])
                r.close_fds()
            seen = [{n: os.readlink(f"/proc/{pid}/ns/{n}") for n in ("net", "ipc", "uts")} for pid in pids]
            st = c.call(L + "GetStatus").parameters["namespacePool"]
            for cid in ids:
                c.call(L + "Delete", {"id": cid})
            ids = []
        host = {n: os.readlink(f"/proc/self/ns/{n}") for n in ("net", "ipc", "uts")}
        for kind in ("net", "ipc", "uts"):
            values = [s[kind] for s in seen]
            assert host[kind] not in values, (kind, values)
            assert len(set(values)) == len(values), f"a {kind} namespace used by two containers: {values}"
        if pool == "on":
            assert st["enabled"] and st["used"] >= 2 and st["made"] >= st["used"], st
        else:
            assert not st["enabled"] and st["used"] == 0 and st["made"] == 0, st
    finally:
        with d.connect() as c:
            for cid in ids:
                c.call(L + "Delete", {"id": cid}, check=False)
        assert d.stop() == 0, d.log()
        zytest.remove_workdir(d.dir)


def test_hooks_without_env_inherit_nothing_of_zygoteds(staged, bundle, open_tmp, tmp_path, needs_root):
    """zygote-runc's own hooks without "env" get its environment, as runc's (its caller's, in
    effect); zygoted's worker runs them for a caller, and gives them nothing of the daemon's: a
    prestart hook without "env" starts with an empty environment. createContainer, run by the init,
    gets the container process's environment (the caller's config) either way."""
    d = zytest.Daemon(staged, zytest.make_workdir(), env={"ZYGOTED_SECRET_MARK": "daemon-only"})
    d.start()
    try:
        out = open_tmp / "hooks"
        out.mkdir()
        os.chmod(out, 0o777)
        bundle.config["process"]["env"] = ["PATH=/bin", "IN_CONTAINER=1"]
        bundle.config["hooks"] = {"prestart": [{"path": "/bin/sh", "args": ["sh", "-c", f"env > {out}/prestart"]}],
                                  "createContainer": [{"path": "/bin/sh",
                                                       "args": ["sh", "-c", f"env > {out}/createContainer"]}]}
        bundle.set_args("true")
        with d.connect() as c:
            _, task = run_container(c, bundle, tmp_path)
        assert task["exitCode"] == 0, task
        pre = (out / "prestart").read_text().split()
        assert not any("ZYGOTED_SECRET_MARK" in e for e in pre), pre
        assert all(e.split("=")[0] in ("PWD", "SHLVL", "OLDPWD", "_") for e in pre), pre
        created = (out / "createContainer").read_text()
        assert "IN_CONTAINER=1" in created and "ZYGOTED_SECRET_MARK" not in created, created
    finally:
        assert d.stop() == 0, d.log()
        zytest.remove_workdir(d.dir)


def test_mount_namespace_by_path_refused_by_zygoted(daemon, bundle):
    """zygote-runc joins a mount namespace given by path (test_mount_ns_join.py); zygoted's worker
    does not set a container up in a namespace a request names: refused, with the reason, and
    nothing left (its owner untouched)."""
    owner = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", "echo ready; exec sleep 1000"],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        ns = f"/proc/{owner.pid}/ns/mnt"
        ino = os.stat(ns).st_ino
        bundle.config["linux"]["namespaces"] = [n for n in bundle.config["linux"]["namespaces"]
                                                if n["type"] != "mount"] + [{"type": "mount", "path": ns}]
        bundle.set_args("true")
        with daemon.connect() as c:
            cid = container_id()
            e = create(c, bundle, cid, check=False)
            assert e.error == L + "SpawnFailed", e
            assert "zygoted's containers get a new mount namespace" in e.parameters["message"], e
            assert c.call_error(L + "State", {"id": cid}).error == L + "NoSuchTask"
        assert owner.poll() is None and os.stat(ns).st_ino == ino
    finally:
        os.killpg(owner.pid, 9)
        owner.wait(timeout=10)
        owner.stdout.close()
