# SPDX-License-Identifier: MIT
"""io.containers.trace-syscall for zygoted's containers (daemon/container-record.c): a bundle
annotated "[if:/INPUT;][of:]/OUTPUT" is recorded by zygoted's eBPF tracer from Start to its init's
exit, and OUTPUT written at Delete; through CreateContainer, through containerd's shim
(containerd-shim-zygote-v2) and through `ctr run --annotation` with containerd; the file then runs
the same container under it and a new call is refused. Skips with the reason where zygoted has no tracer (not root, no BTF)."""
import json
import os
import sys

import pytest

from containertools import container_id
from test_containerd_shim import Run, ctd, name, staged, zygoted  # noqa: F401 (fixtures)
from test_record_container import PIPE, default_object, wait_written
from test_zygoted_containers import L, create

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import shimv2  # noqa: E402
import zytest  # noqa: E402
import ttrpcwire as w  # noqa: E402

pytestmark = pytest.mark.timeout(180)
ANNOTATION = "io.containers.trace-syscall"


def need_tracer(d):
    rec = d.status()["recording"]
    if not rec["bpf"]:
        pytest.skip(f"zygoted has no eBPF tracer: {rec['reason']}")


@pytest.fixture(scope="module")
def untraced(staged):  # noqa: F811
    """A zygoted without its tracer (ZYGOTE_DISABLE_FEATURES=record_bpf, the switch that sends
    tasks' recordings to user notification): its containers record through zygote-record's agent."""
    if os.geteuid() != 0:
        pytest.skip("zygoted starts containers for root callers only")
    d = zytest.Daemon(staged, zytest.make_workdir(), env={"ZYGOTE_DISABLE_FEATURES": "record_bpf"})
    d.start()
    yield d
    assert d.stop() == 0, d.log()
    zytest.remove_workdir(d.dir)


@pytest.fixture(params=["bpf", "notify"])
def via(request, zygoted):  # noqa: F811
    """(zygoted, path): the eBPF tracer's, or the agent's (user notification)."""
    if request.param == "bpf":
        need_tracer(zygoted)
        return zygoted, "bpf"
    d = request.getfixturevalue("untraced")
    assert d.status()["recording"]["bpf"] is False
    return d, "notify"


def written(path, how):
    """The file: there at Delete (zygoted writes it), or once the agent has seen the container's
    last process go (a bounded wait)."""
    if how == "notify":
        wait_written(path)
    return names(path)


def names(path):
    with open(path) as f:
        p = json.load(f)
    return p, {n for r in p["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" and not r.get("args") for n in r["names"]}


def lifecycle(conn, bundle, out_path):
    """Create, Start, Wait, Delete through zygoted: the output and the exit task."""
    cid = container_id()
    with open(out_path, "w") as f:
        create(conn, bundle, cid, stdout=f.fileno())
    conn.call(L + "Start", {"id": cid})
    task = conn.call(L + "Wait", {"id": cid}).parameters["task"]
    conn.call(L + "Delete", {"id": cid})
    with open(out_path) as f:
        return f.read(), task


@pytest.mark.parametrize("with_input", [False, True], ids=["of", "if-and-of"])
def test_create_container_records(via, bundle, tmp_path, with_input):
    zygoted, how = via
    out = os.path.join(bundle.path, "rec.json")
    value = f"of:{out}"
    if with_input:
        base = os.path.join(bundle.path, "in.json")
        with open(base, "w") as f:
            json.dump({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["mkdirat"],
                                                                        "action": "SCMP_ACT_ALLOW"}]}, f)
        value = f"if:{base};{value}"
    bundle.config.setdefault("annotations", {})[ANNOTATION] = value
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.set_args("sh", "-c", PIPE)
    with zygoted.connect() as c:
        text, task = lifecycle(c, bundle, str(tmp_path / "o1"))
        assert task["exitCode"] == 0 and text.split() == ["hi", "3"], text
        p, n = written(out, how)
        assert {"execve", "wait4", "pipe2"} <= n and ("mkdirat" in n) == with_input, n
        # the container recipe's own calls before Start are not the container's
        assert not n & {"mount", "pivot_root", "unshare", "setns", "seccomp", "capset"}, n
        # the file runs the container under it, and a call it did not see is refused
        del bundle.config["annotations"][ANNOTATION]
        bundle.config["linux"]["seccomp"] = p
        text, task = lifecycle(c, bundle, str(tmp_path / "o2"))
        assert task["exitCode"] == 0 and text.split() == ["hi", "3"], text
        if not with_input:
            bundle.set_args("sh", "-c", "mkdir /tmp/new && echo made")
            text, task = lifecycle(c, bundle, str(tmp_path / "o3"))
            assert task["exitCode"] != 0 and "made" not in text and "Operation not permitted" in text, text
        assert c.call(L + "GetStatus").parameters["recording"]["active"] == 0


def test_exec_is_recorded_into_the_containers_profile(via, bundle, tmp_path):
    """A process started with ExecContainer in a recorded container is recorded into its profile
    (from its filter's load, as the init): its mkdir is there, which the init never calls."""
    zygoted, how = via
    out = os.path.join(bundle.path, "rec.json")
    bundle.config.setdefault("annotations", {})[ANNOTATION] = f"of:{out}"
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.set_args("sleep", "60")
    cid, eid = container_id(), container_id("e-")
    with zygoted.connect() as c:
        create(c, bundle, cid).close_fds()
        c.call(L + "Start", {"id": cid})
        proc = dict(bundle.config["process"], args=["sh", "-c", "mkdir /tmp/by-exec; echo done"])
        with open(tmp_path / "exec.out", "w") as f:
            c.call(L + "ExecContainer", {"container": cid, "id": eid, "process": proc, "stdout": 0, "stderr": 0},
                   fds=[f.fileno()]).close_fds()
        c.call(L + "Start", {"id": eid})
        c.call(L + "Wait", {"id": eid})
        assert "done" in (tmp_path / "exec.out").read_text()
        c.call(L + "Delete", {"id": eid})
        c.call(L + "Kill", {"id": cid, "signal": 9, "all": True})
        c.call(L + "Wait", {"id": cid})
        c.call(L + "Delete", {"id": cid})
        assert c.call(L + "GetStatus").parameters["recording"]["active"] == 0
    _, n = written(out, how)
    assert "mkdir" in n or "mkdirat" in n, n
    assert "nanosleep" in n or "clock_nanosleep" in n, n  # the init's own
    # the exec's runtime before its filter's load is not the container's
    assert not n & {"setns", "seccomp"}, n


def test_create_container_refuses_a_bad_annotation(zygoted, bundle):  # noqa: F811
    bundle.config.setdefault("annotations", {})[ANNOTATION] = "of:relative.json"
    bundle.set_args("true")
    with zygoted.connect() as c:
        r = create(c, bundle, container_id(), check=False)
    assert r.error == "org.varlink.service.InvalidParameter", r
    assert r.parameters["parameter"] == "annotations." + ANNOTATION, r


def test_through_containerds_shim(staged, via, bundle, tmp_path):  # noqa: F811
    """containerd's Task API through containerd-shim-zygote-v2: Create (the bundle annotated),
    Start, Wait, Delete; the file is there after Delete (zygoted's tracer), or once the agent has
    seen the container's last process go."""
    zygoted, how = via
    out = os.path.join(bundle.path, "rec.json")
    bundle.config.setdefault("annotations", {})[ANNOTATION] = f"of:{out}"
    bundle.config["linux"]["seccomp"] = default_object()
    bundle.set_args("sh", "-c", PIPE)
    r = Run(staged, zygoted, bundle, str(tmp_path))
    try:
        so = r.fifo("out")
        r.create(stdout=so)
        waiting = r.c.send("Wait", w.encode([(1, r.id)]))
        r.call("Start")
        assert w.first(r.c.recv(waiting), 1) in (None, 0)  # exit 0: a default, not sent
        assert r.read("out").split() == [b"hi", b"3"]
        if how == "bpf":
            assert not os.path.exists(out)  # written at Delete, not before
        r.call("Delete")
        _, n = written(out, how)
        assert {"execve", "wait4"} <= n, n
    finally:
        r.finish()
    assert shimv2.events(r.dir)[-1][0] == "/tasks/delete"


def test_ctr_run_annotated(ctd, zygoted, tmp_path):  # noqa: F811
    """ctr run --annotation io.containers.trace-syscall=of:FILE with containerd's default seccomp
    profile (--seccomp) and the zygote shim as the runtime: FILE once ctr has removed the
    container (--rm: Delete), then the container run under it (--seccomp-profile FILE), and a
    mkdir it did not see refused."""
    need_tracer(zygoted)
    os.chmod(tmp_path, 0o755)
    out = str(tmp_path / "rec.json")
    r = ctd.zrun(name(), "sh", "-c", PIPE, opts=["--rm", "--seccomp", "--annotation", f"{ANNOTATION}=of:{out}"])
    assert r.returncode == 0 and r.stdout.split() == ["hi", "3"], r.stderr
    p, n = names(out)
    assert {"execve", "wait4"} <= n, n
    r = ctd.zrun(name(), "sh", "-c", PIPE, opts=["--rm", "--seccomp", "--seccomp-profile", out])
    assert r.returncode == 0 and r.stdout.split() == ["hi", "3"], r.stderr
    r = ctd.zrun(name(), "sh", "-c", "mkdir /tmp/new && echo made", opts=["--rm", "--seccomp", "--seccomp-profile", out])
    assert r.returncode != 0 and "made" not in r.stdout and "Operation not permitted" in r.stderr + r.stdout, r
