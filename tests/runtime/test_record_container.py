# SPDX-License-Identifier: MIT
"""Recording a container through its runtime's seccomp agent interface (docs/RECORDING.md):
`zygote-record oci-profile` turns the container's seccomp object into one whose allowing rules
notify, `zygote-record agent` is the agent at its listenerPath, and zygote-runc hands it the
listener as for any agent. The written profile then runs the same container (its runtime's own
calls after the filter's load included), and a variant that calls something new is refused.
"""
import contextlib
import ctypes
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, SOURCE_DIR
from containertools import container_id
from test_docker import docker  # noqa: F401 (its dockerd, for the Docker round trip)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402

TIMEOUT = 60
SECCOMP_RET_USER_NOTIF = 0x7FC00000


@pytest.fixture(autouse=True)
def user_notif():
    """A skip with its reason where the kernel cannot notify (SECCOMP_GET_ACTION_AVAIL)."""
    libc = ctypes.CDLL(None, use_errno=True)
    action = ctypes.c_uint32(SECCOMP_RET_USER_NOTIF)
    nr = {"x86_64": 317, "aarch64": 277}.get(os.uname().machine)
    if nr is None or libc.syscall(nr, 2, 0, ctypes.byref(action)) != 0:
        pytest.skip("the kernel lacks seccomp user notification (SECCOMP_RET_USER_NOTIF)")


@pytest.fixture
def recorder(needs_root):
    b = os.path.join(BUILD_DIR, "zygote-record")
    if not os.access(b, os.X_OK):
        pytest.fail(f"not built: {b}")
    return b


def start_agent(recorder, out, sock):
    a = subprocess.Popen([recorder, "agent", "--out", out, "--socket", sock], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    line = a.stdout.readline()  # "ready SOCKET" once it listens: no waiting on the socket's file
    if line != b"ready " + sock.encode() + b"\n":
        a.kill()
        _, err = a.communicate(timeout=TIMEOUT)
        pytest.fail(f"agent did not start: {err!r}")
    return a


def recording_object(recorder, sock):
    r = subprocess.run([recorder, "oci-profile", "--socket", sock, os.path.join(SOURCE_DIR, "profiles", "default.json")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


PIPE = "echo hi; seq 3 | wc -l"


@contextlib.contextmanager
def recording(recorder, out, sock):
    """The agent recording to OUT, listening on SOCK, for the body of the with; once the body is
    done (its container gone: the agent writes the file once no process of the container is left
    under the filter) it must have written OUT and exited 0. Killed if not gone."""
    agent = start_agent(recorder, out, sock)
    try:
        yield agent
        _, err = agent.communicate(timeout=TIMEOUT)
        assert agent.returncode == 0, err
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


def write_recording_object(recorder, sock, tmp_path):
    """The recording object of the agent on SOCK, as a file in TMP_PATH (a runtime's --seccomp)."""
    obj = tmp_path / "recording.json"
    obj.write_text(json.dumps(recording_object(recorder, sock)))
    return obj


def runc_pipe(runc, bundle):
    """PIPE run in BUNDLE by runc run: its result."""
    bundle.set_args("sh", "-c", PIPE)
    return runc("run", "--bundle", bundle.path, container_id())


def assert_ran(r):
    """PIPE ran to its end in the container."""
    assert r.returncode == 0 and r.stdout.split() == ["hi", "3"], r.stderr


@pytest.mark.parametrize("nnp", [True, False], ids=["nnp-filter-last", "no-nnp-filter-before-caps"])
def test_container_recorded_then_run_under_its_profile(runc, bundle, recorder, nnp):
    out = os.path.join(bundle.path, "rec.json")
    sock = os.path.join(bundle.path, "agent.sock")
    with recording(recorder, out, sock):
        obj = recording_object(recorder, sock)
        assert obj["listenerPath"] == sock and obj["defaultAction"] == "SCMP_ACT_ERRNO"
        kept = {n for r in obj["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
        assert kept == {"write", "sendmsg"}, kept  # the hand-over's calls only
        bundle.config["process"]["noNewPrivileges"] = nnp
        bundle.config["linux"]["seccomp"] = obj
        assert_ran(runc_pipe(runc, bundle))
    with open(out) as f:
        profile = json.load(f)
    names = set(profile["syscalls"][0]["names"])
    assert {"execve", "sendmsg", "write", "wait4"} <= names and "mkdir" not in names and "mkdirat" not in names

    # the same container under the written profile: runs, runtime and all
    bundle.config["linux"]["seccomp"] = profile
    bundle.config["root"]["readonly"] = False
    assert_ran(runc_pipe(runc, bundle))
    # a variant that makes a directory: refused by the profile
    bundle.set_args("sh", "-c", PIPE + "; mkdir /made; echo rc=$?")
    r = runc("run", "--bundle", bundle.path, container_id())
    assert "rc=1" in r.stdout and "Operation not permitted" in r.stderr, (r.stdout, r.stderr)
    assert not os.path.exists(os.path.join(bundle.rootfs, "made"))


def test_recording_object_needs_an_allow_list(recorder, tmp_path):
    base = tmp_path / "allow.json"
    base.write_text(json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}))
    r = subprocess.run([recorder, "oci-profile", "--socket", "/x", str(base)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert r.returncode == 1 and b"allow-list" in r.stderr and not r.stdout


@pytest.mark.parametrize("runtime", ["zygote-runc", "runc"])
def test_podman_records_then_runs_the_profile(podman, recorder, tmp_path, runtime):
    """Through podman: the recording object as --security-opt seccomp (podman hands listenerPath
    to its runtime as it is), then the written file, unmodified, as the container's profile; with
    zygote-runc and with runc (which loads the filter before dropping ids without
    no_new_privs: its own calls after the load are in the recording too)."""
    from containertools import IMAGE

    rt = None if runtime == "zygote-runc" else "runc"
    out, sock = str(tmp_path / "rec.json"), str(tmp_path / "agent.sock")
    os.chmod(tmp_path, 0o755)
    with recording(recorder, out, sock):
        obj = write_recording_object(recorder, sock, tmp_path)
        r = podman("run", "--rm", "--security-opt", f"seccomp={obj}", IMAGE, "sh", "-c", PIPE, runtime=rt)
        assert_ran(r)
    r = podman("run", "--rm", "--security-opt", f"seccomp={out}", IMAGE, "sh", "-c", PIPE, runtime=rt)
    assert_ran(r)
    r = podman("run", "--rm", "--security-opt", f"seccomp={out}", IMAGE, "sh", "-c", "mkdir /made; echo rc=$?",
               runtime=rt)
    assert "rc=1" in r.stdout and "Operation not permitted" in r.stderr, (r.stdout, r.stderr)


def default_object():
    with open(os.path.join(SOURCE_DIR, "profiles", "default.json")) as f:
        return json.load(f)["seccomp"]


def wait_written(path):
    """The detached agent writes the file (renamed into place, whole) once the container's last
    process is gone: a bounded wait for it."""
    zytest.wait_for(lambda: os.path.exists(path), f"the recording {path}", timeout=TIMEOUT)


@pytest.mark.parametrize("with_input", [False, True], ids=["of", "if-and-of"])
def test_annotation_records_the_container(runc, bundle, recorder, with_input):
    """io.containers.trace-syscall (podman's hook's form): zygote-runc starts the agent itself and
    records with the container's own seccomp object; if: gives the base of the union."""
    out = os.path.join(bundle.path, "rec.json")
    value = f"of:{out}"
    if with_input:
        base = os.path.join(bundle.path, "in.json")
        with open(base, "w") as f:
            json.dump({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["mkdirat"],
                                                                        "action": "SCMP_ACT_ALLOW"}]}, f)
        value = f"if:{base};{value}"
    bundle.config.setdefault("annotations", {})["io.containers.trace-syscall"] = value
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.set_args("sh", "-c", PIPE)
    r = runc("run", "--bundle", bundle.path, container_id())
    assert_ran(r)
    wait_written(out)
    with open(out) as f:
        profile = json.load(f)
    names = set(profile["syscalls"][0]["names"])
    assert "execve" in names and ("mkdirat" in names) == with_input, names
    del bundle.config["annotations"]["io.containers.trace-syscall"]
    bundle.config["linux"]["seccomp"] = profile
    bundle.set_args("sh", "-c", PIPE)
    r = runc("run", "--bundle", bundle.path, container_id())
    assert_ran(r)


def test_annotation_records_the_exec_d_processes(runc, bundle, recorder):
    """A process that zygote-runc exec starts in a recorded container is recorded too (the agent
    serves its listener beside the init's): its mkdir, which the init never calls, is in the
    profile."""
    out = os.path.join(bundle.path, "rec.json")
    bundle.config.setdefault("annotations", {})["io.containers.trace-syscall"] = f"of:{out}"
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.set_args("sleep", "60")
    cid = container_id()
    r = runc("run", "--detach", "--bundle", bundle.path, cid)
    assert r.returncode == 0, r.stderr
    r = runc("exec", cid, "sh", "-c", "mkdir /tmp/by-exec; echo joined")
    assert r.returncode == 0 and "joined" in r.stdout, r.stderr
    assert runc("kill", cid, "KILL").returncode == 0
    r = runc("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    wait_written(out)
    with open(out) as f:
        names = set(json.load(f)["syscalls"][0]["names"])
    assert "mkdir" in names or "mkdirat" in names, names
    assert "nanosleep" in names or "clock_nanosleep" in names, names  # the init's own


def test_annotation_refused_with_a_reason(runc, bundle):
    bundle.config.setdefault("annotations", {})["io.containers.trace-syscall"] = "of:relative.json"
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, container_id())
    assert r.returncode != 0 and "io.containers.trace-syscall" in r.stderr, r.stderr


def test_podman_annotation(podman, tmp_path):
    """podman run --annotation io.containers.trace-syscall=of:FILE with zygote-runc: the file, then
    used as the container's profile, runs it."""
    from containertools import IMAGE

    os.chmod(tmp_path, 0o755)
    out = str(tmp_path / "rec.json")
    r = podman("run", "--rm", "--annotation", f"io.containers.trace-syscall=of:{out}", IMAGE, "sh", "-c", PIPE)
    assert_ran(r)
    wait_written(out)
    r = podman("run", "--rm", "--security-opt", f"seccomp={out}", IMAGE, "sh", "-c", PIPE)
    assert_ran(r)


def test_docker_runs_the_recorded_profile(docker, runc, bundle):
    """Docker (20.10) reads a written profile with its own parser, and its runtime (zygote-runc
    through containerd's shim) runs the container under it; a new mkdir is refused. Docker itself
    drops listenerPath, so the recording is zygote-runc's (the annotation, without
    no_new_privs, as Docker runs a container)."""
    from containertools import IMAGE
    from test_docker import RUNTIME

    out = os.path.join(bundle.path, "rec.json")
    os.chmod(bundle.path, 0o755)
    bundle.config.setdefault("annotations", {})["io.containers.trace-syscall"] = f"of:{out}"
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.config["process"]["noNewPrivileges"] = False
    bundle.set_args("sh", "-c", PIPE)
    r = runc("run", "--bundle", bundle.path, container_id())
    assert_ran(r)
    wait_written(out)
    os.chmod(out, 0o644)
    r = docker("run", "--rm", "--runtime", RUNTIME, "--security-opt", f"seccomp={out}", IMAGE, "sh", "-c", PIPE)
    assert_ran(r)
    r = docker("run", "--rm", "--runtime", RUNTIME, "--security-opt", f"seccomp={out}", IMAGE, "sh", "-c",
               "mkdir /made; echo rc=$?")
    assert "rc=1" in r.stdout and "Operation not permitted" in r.stderr, (r.stdout, r.stderr)


def test_ctr_records_then_runs_the_profile(containerd, runc_bin, recorder, tmp_path):
    """containerd's ctr (--seccomp-profile) with zygote-runc as the runc shim's binary: the
    recording object through containerd to the runtime, then the written file as the profile."""
    os.chmod(tmp_path, 0o755)
    out, sock = str(tmp_path / "rec.json"), str(tmp_path / "agent.sock")
    with recording(recorder, out, sock) as agent:
        obj = write_recording_object(recorder, sock, tmp_path)
        r = containerd.run(runc_bin, container_id(), "sh", "-c", PIPE,
                           opts=["--rm", "--seccomp", "--seccomp-profile", str(obj)])
        if r.returncode != 0 and agent.poll() is None:
            pytest.skip(f"this containerd does not hand listenerPath to its runtime: {r.stderr.strip()[-300:]}")
        assert_ran(r)
    r = containerd.run(runc_bin, container_id(), "sh", "-c", PIPE, opts=["--rm", "--seccomp", "--seccomp-profile", out])
    assert_ran(r)
    r = containerd.run(runc_bin, container_id(), "sh", "-c", "mkdir /made; echo rc=$?",
                       opts=["--rm", "--seccomp", "--seccomp-profile", out])
    assert "rc=1" in r.stdout and "Operation not permitted" in r.stderr, (r.stdout, r.stderr)
