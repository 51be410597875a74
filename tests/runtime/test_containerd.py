# SPDX-License-Identifier: MIT
"""containerd (1.6, its runc v2 shim) driving zygote-runc through `ctr run --runc-binary`, on the
offline busybox image: the shim's calls (create with stdio on pipes, start, ps, exec, kill,
pause/resume, delete then delete --force) and the errors it reports from log.json.

One containerd serves the session (conftest.py); each test's containers are named with a marker
that their command lines carry, and none of their processes, mounts, cgroups or runtime state may
outlive the test."""
import json
import re
import subprocess
import uuid

import pytest

import containertools as ct


def cid():
    return "zyg-ctr-" + uuid.uuid4().hex[:10]


@pytest.fixture
def ctd(containerd, runc_bin):
    made = []

    def run(*args, opts=(), name=None, **kw):
        name = name or cid()
        made.append(name)
        return name, containerd.run(runc_bin, name, *args, opts=opts, **kw)

    containerd.new = run
    containerd.track = made.append
    containerd.runtime = runc_bin
    yield containerd
    left = {n: containerd.leftovers(n) for n in made}
    for n in made:  # what a failed test left, so that the next one starts clean
        containerd.ctr("task", "kill", "-a", "-s", "KILL", n)
        containerd.ctr("task", "rm", "-f", n)
        containerd.ctr("containers", "rm", n)
    assert {n: l for n, l in left.items() if l} == {}, "left behind"


def exit_status(ctd, name):
    """The task's exit status: `ctr task attach` waits for it (and returns at once when the task
    already exited); containerd keeps the status until the task is deleted."""
    r = ctd.ctr("task", "attach", name)
    return r.returncode


def remove(ctd, name):
    ctd.ctr("task", "rm", name)  # attach may have removed the task already
    r = ctd.ctr("containers", "rm", name)
    assert r.returncode == 0, r.stderr


def needs_try_syscall(ctd):
    _, r = ctd.new("test", "-x", "/bin/try-syscall", opts=["--rm"])
    if r.returncode != 0:
        pytest.skip("try-syscall-static not built (no static libc): the image has no try-syscall")


def test_echo_and_exit_code(ctd):
    n, r = ctd.new("sh", "-c", "echo hello from $0; exit 7", "zyg-ctr-echo", opts=["--rm"])
    assert r.stdout == "hello from zyg-ctr-echo\n", r.stderr
    assert r.returncode == 7


def test_terminal_under_script(ctd):
    n = cid()
    ctd.track(n)
    r = ct.under_script(ctd.run_argv(ctd.runtime, n, "sh", "-c", "test -t 0 && test -t 1 && tty; exit 5",
                                     opts=["--rm", "-t"]))
    left = ctd.leftovers(n)
    assert r.returncode == 5, r.stdout + r.stderr
    assert re.search(r"/dev/pts/\d+", r.stdout), r.stdout
    assert left == []


def test_detached_kill(ctd):
    # pid 1 ignores SIGTERM without a handler: the trap makes it end with 42
    n, r = ctd.new("sh", "-c", "trap 'exit 42' TERM; sleep 1000 & wait", opts=["-d"])
    assert r.returncode == 0, r.stderr
    pid, status = ctd.task_pid(n)
    assert status == "RUNNING"
    assert ctd.ctr("task", "kill", n).returncode == 0  # SIGTERM
    assert exit_status(ctd, n) == 42
    remove(ctd, n)
    n, r = ctd.new("sleep", "1000", opts=["-d"])
    assert r.returncode == 0, r.stderr
    assert ctd.ctr("task", "kill", "-s", "KILL", n).returncode == 0
    assert exit_status(ctd, n) == 137
    remove(ctd, n)


def test_exec_ps_and_kill_all(ctd):
    n, r = ctd.new("sleep", "1000", opts=["-d"])
    assert r.returncode == 0, r.stderr
    init, _ = ctd.task_pid(n)
    r = ctd.ctr("task", "exec", "--exec-id", "e1", n, "sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '; exit 6")
    assert r.returncode == 6, r.stderr
    assert r.stdout.strip() == "sleep 1000"  # the exec sees the container's init as its pid 1
    r = ctd.ctr("task", "exec", "--exec-id", "e2", n, "/no/such/binary")
    assert r.returncode != 0
    assert "no such file or directory" in r.stderr
    r = ctd.ctr("task", "exec", "--exec-id", "e3", "--user", "65534", n, "id", "-u")
    assert (r.returncode, r.stdout.strip()) == (0, "65534"), r.stderr
    r = ct.under_script(ctd.ctr_argv("task", "exec", "-t", "--exec-id", "e4", n, "sh", "-c", "tty; exit 3"))
    assert r.returncode == 3 and "/dev/pts/" in r.stdout, r.stdout + r.stderr
    # a detached exec: `ctr task ps` (the runtime's `ps --format json`) lists it beside the init
    r = ctd.ctr("task", "exec", "-d", "--exec-id", "e5", n, "sleep", "2000")
    assert r.returncode == 0, r.stderr
    r = ctd.ctr("task", "ps", n)
    pids = [int(l.split()[0]) for l in r.stdout.splitlines()[1:] if l.strip()]
    assert init in pids and len(pids) == 2, r.stdout
    # kill --all reaches the exec'd process too
    assert ctd.ctr("task", "kill", "-a", "-s", "KILL", n).returncode == 0
    assert exit_status(ctd, n) == 137
    remove(ctd, n)
    assert ct.processes_naming("sleep 2000".replace(" ", "\0")) == []


def test_pause_resume(ctd):
    n, r = ctd.new("sleep", "1000", opts=["-d"])
    assert r.returncode == 0, r.stderr
    pid, _ = ctd.task_pid(n)
    assert ctd.ctr("task", "pause", n).returncode == 0
    assert ctd.task_pid(n) == (pid, "PAUSED")
    assert ct.is_frozen(pid)
    assert ctd.ctr("task", "resume", n).returncode == 0
    assert ctd.task_pid(n) == (pid, "RUNNING")
    assert not ct.is_frozen(pid)
    assert ctd.ctr("task", "kill", "-s", "KILL", n).returncode == 0
    assert exit_status(ctd, n) == 137
    remove(ctd, n)


def test_podman_profile_from_inside(ctd, tmp_path):
    needs_try_syscall(ctd)
    opts = ["--rm", "--seccomp", "--seccomp-profile", ct.PODMAN_PROFILE]
    _, r = ctd.new("sh", "-c", "grep Seccomp: /proc/self/status; try-syscall add_key", opts=opts)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^Seccomp:\s+2$", r.stdout, re.M), r.stdout
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(ct.profile_with_errno(99)))
    _, r = ctd.new("try-syscall", "add_key", opts=["--rm", "--seccomp", "--seccomp-profile", str(profile)])
    assert r.stdout.strip() == "add_key errno=99", r.stdout + r.stderr
    _, r = ctd.new("sh", "-c", "grep Seccomp: /proc/self/status; try-syscall add_key", opts=["--rm"])
    assert re.search(r"^Seccomp:\s+0$", r.stdout, re.M), r.stdout
    assert "add_key errno=99" not in r.stdout


def test_bad_bundles(ctd, bundle, tmp_path):
    """containerd reports the last error line of the runtime's log.json; nothing may be left."""
    _, r = ctd.new("no-such-command", opts=["--rm"])
    assert r.returncode != 0
    assert 'exec: "no-such-command": executable file not found in $PATH' in r.stderr
    _, r = ctd.new("/etc", opts=["--rm"])
    assert r.returncode != 0 and "permission denied" in r.stderr, r.stderr
    # a root that does not exist (ctr hands the path over as root.path)
    n = cid()
    ctd.track(n)
    r = ctd.ctr(*["run", "--rm", "--runc-binary", ctd.runtime, "--runc-root", ctd.runc_root,
                       "--cgroup", f"{ct.CTR_CGROUP_PARENT}/{n}", "--rootfs", str(tmp_path / "nonexistent"), n, "true"])
    assert r.returncode != 0 and "no such file or directory" in r.stderr, r.stderr
    # a network namespace to join that does not exist
    _, r = ctd.new("true", opts=["--rm", "--with-ns", "network:/nonexistent-netns"])
    assert r.returncode != 0 and "/nonexistent-netns: no such file or directory" in r.stderr, r.stderr
    # a namespace type the runtime does not know, in a whole spec of ctr's own
    spec = json.loads(ctd.ctr("oci", "spec").stdout)
    spec["linux"]["namespaces"].append({"type": "frob"})
    spec["process"]["args"] = ["true"]
    spec["root"] = {"path": bundle.rootfs}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    n = cid()
    ctd.track(n)
    r = ctd.ctr(*["run", "--rm", "--runc-binary", ctd.runtime, "--runc-root", ctd.runc_root,
                       "--config", str(tmp_path / "spec.json"), n])
    assert r.returncode != 0 and 'unknown namespace type "frob"' in r.stderr, r.stderr


def test_resource_flags_as_with_runc(ctd):
    """ctr's resource flags through the shim: the container's cgroup files, read from the host, are
    those runc gives for the same flags."""
    from test_differential import UPDATE_FILES, container_dirs, placement, read_cgroup_file

    where = {c: placement("host", c) for c in ("cpu", "memory")}
    if not any(where.values()):
        pytest.skip("no cpu or memory controller on this host")
    flags = ["-d", "--cpus", "0.5", "--cpu-shares", "512", "--memory-limit", str(64 * 1024 * 1024)]
    seen = {}
    for runtime in (ctd.runtime, "runc"):
        n = cid()
        ctd.track(n)
        r = ctd.run(runtime, n, "sleep", "1000", opts=flags)
        assert r.returncode == 0, r.stderr
        pid, _ = ctd.task_pid(n)
        dirs = container_dirs(pid, n)
        seen[runtime] = {f: read_cgroup_file(dirs, v, f) for c, v in where.items() if v for f in UPDATE_FILES[c][v]}
        assert ctd.ctr("task", "kill", "-s", "KILL", n).returncode == 0
        assert exit_status(ctd, n) == 137
        remove(ctd, n)
    print(json.dumps(seen, indent=1))  # the evidence, with -rP
    assert seen[ctd.runtime] == seen["runc"], json.dumps(seen, indent=1)
    if where["cpu"] == "v1":
        assert (seen[ctd.runtime]["cpu.cfs_quota_us"], seen[ctd.runtime]["cpu.shares"]) == ("50000", "512")
