# SPDX-License-Identifier: MIT
"""Docker (Debian's docker.io 20.10, its dockerd and the containerd it manages, the runc v2 shim)
driving zygote-runc as the runtime `zygote` of daemon.json, on the offline busybox image: what a
Docker user does, each step's effect checked, and what each step leaves behind.

The module starts one dockerd of its own (containertools.Docker) whose daemon.json is
examples/docker-daemon.json.in with this build's zygote-runc filled in, so that the documented
entry is what runs. The image is make-image.sh's rootfs tar, `docker import`ed (no registry).
Skipped, with the reason, where dockerd is missing, cannot start here, or cannot run a container
even with runc (Docker's own runtime); once runc can, zygote-runc must. After each test no
container, shim, container process, mount or cgroup may remain; the last test stops dockerd and
checks that it and its containerd leave nothing.

Run: ZYGOTE_BUILD_DIR=build /usr/bin/python3 -m pytest -q tests/runtime/test_docker.py
"""
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest

import containertools as ct
from conftest import BUILD_DIR, SOURCE_DIR
from containertools import IMAGE

RUNTIME = "zygote"  # the runtime's name in examples/docker-daemon.json.in
STATUS_LINES = r"^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Seccomp_filters):"


def daemon_json(runc_bin):
    """The example as cmake configures it, naming this build's zygote-runc instead of the installed one."""
    with open(os.path.join(SOURCE_DIR, "examples", "docker-daemon.json.in")) as f:
        text = f.read()
    assert "@ZYGOTE_RUNC_PATH@" in text, "examples/docker-daemon.json.in no longer names the runtime's path"
    text = text.replace("@ZYGOTE_RUNC_PATH@", runc_bin)
    assert RUNTIME in json.loads(text)["runtimes"], text
    return text


@pytest.fixture(scope="module")
def docker(runc_bin):
    if os.geteuid() != 0:
        pytest.skip("dockerd needs root here")
    for path in (ct.DOCKERD, ct.DOCKER_CLIENT):
        if not os.access(path, os.X_OK):
            pytest.skip(f"no {path} (Debian package docker.io)")
    for tool in ("containerd", "containerd-shim-runc-v2", "runc"):
        if not shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin"):
            pytest.skip(f"no {tool} (Debian packages containerd, runc)")
    r = subprocess.run([os.path.join(SOURCE_DIR, "tests", "runtime", "make-image.sh"), BUILD_DIR, "--rootfs"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    rootfs_tar = r.stdout.strip()
    dk = ct.Docker(ct.make_workdir("zyg-dk."), daemon_json(runc_bin))
    try:
        try:
            dk.start()
        except RuntimeError as e:  # a chroot, no cgroups, no overlay nor vfs here: not zygote's
            pytest.skip(str(e))
        r = dk("import", "--change", 'CMD ["/bin/sh"]', "--change", "ENV PATH=/bin", rootfs_tar, IMAGE, timeout=120)
        assert r.returncode == 0, r.stderr
        r = dk("run", "--rm", "--runtime", "runc", IMAGE, "true")
        if r.returncode != 0:
            pytest.skip(f"Docker cannot run a container here even with runc: {r.stderr.strip()[-400:]}")
        yield dk
    finally:
        ids = dk("ps", "-a", "-q").stdout.split() if dk.proc and dk.proc.poll() is None else []
        if ids:
            dk("rm", "--force", *ids)
        dk.stop()
        ct.remove_workdir(dk.dir)
        ct.remove_cgroup_parent(ct.DOCKER_CGROUP_PARENT)


@pytest.fixture
def dk(docker):
    if docker.proc.poll() is not None:
        pytest.fail("dockerd is not running (stopped by an earlier test): " + docker.log_tail(400))
    yield docker
    left = docker.leftovers()
    ids = docker("ps", "-a", "-q").stdout.split()
    if ids:
        docker("rm", "--force", *ids)
    assert left == [], f"left behind: {left}"


def name():
    return ct.DOCKER_NAME_PREFIX + uuid.uuid4().hex[:10]


def run(dk, *args, runtime=RUNTIME, **kw):
    return dk("run", "--runtime", runtime, *args, **kw)


def needs_try_syscall(dk):
    r = run(dk, "--rm", IMAGE, "test", "-x", "/bin/try-syscall")
    if r.returncode != 0:
        pytest.skip("try-syscall-static not built (no static libc): the image has no try-syscall")


def detached(dk, *args, runtime=RUNTIME):
    """A container started with `docker run -d ARGS`, checked to run under RUNTIME (for zygote:
    zygote-runc's own state, under the root the shim gave it, names the pid Docker reports);
    returns its name, its init's pid on the host and its id."""
    n = name()
    r = run(dk, "-d", "--name", n, *args, runtime=runtime)
    assert r.returncode == 0, r.stderr
    assert dk.inspect(n, "{{.State.Status}}") == "running"
    pid = int(dk.inspect(n, "{{.State.Pid}}"))
    cid = dk.inspect(n, "{{.Id}}")
    binary = dk.inspect(n, "{{json .HostConfig.Runtime}}")
    assert json.loads(binary) == runtime
    if runtime == RUNTIME:
        state = subprocess.run([os.path.join(BUILD_DIR, "zygote-runc"), "--root", dk.runtime_root(), "state", cid],
                               capture_output=True, text=True, timeout=30)
        assert state.returncode == 0, f"zygote-runc has no container {cid}: {state.stderr}"
        assert (json.loads(state.stdout)["pid"], json.loads(state.stdout)["status"]) == (pid, "running")
    return n, pid, cid


def test_run_output_exit_code_and_stdin(dk):
    n = name()
    r = run(dk, "--rm", "--name", n, IMAGE, "sh", "-c", f"echo hello from {n}; exit 7")
    assert (r.returncode, r.stdout) == (7, f"hello from {n}\n"), r.stderr
    r = run(dk, "--rm", "-i", IMAGE, "sh", "-c", "tr a-z A-Z; exit 0", input="through a pipe\nand more\n")
    assert (r.returncode, r.stdout) == (0, "THROUGH A PIPE\nAND MORE\n"), r.stderr
    # what cannot run: Docker's exit codes from the runtime's words, as with runc
    for argv, code in ((["no-such-command"], 127), (["/etc"], 126)):
        mine, runc = run(dk, "--rm", IMAGE, *argv), run(dk, "--rm", IMAGE, *argv, runtime="runc")
        assert (mine.returncode, runc.returncode) == (code, code), (argv, mine.stderr, runc.stderr)


def test_run_with_a_terminal(dk):
    """`docker run -it` as a person types it (script gives the client a terminal): the container's
    stdin and stdout are a pty of its own devpts."""
    r = ct.under_script(dk.argv("run", "--runtime", RUNTIME, "--rm", "-it", IMAGE, "sh", "-c",
                                "test -t 0 && test -t 1 && tty; exit 5"), env=dk.env)
    assert r.returncode == 5, r.stdout + r.stderr
    # the line may start with "^@", the pty's echo of a NUL the client sends (with runc as well)
    assert re.search(r"^(\^@)?/dev/pts/\d+\r?$", r.stdout, re.M), r.stdout


def test_detached_exec_tty_top_and_stats(dk):
    n, pid, cid = detached(dk, IMAGE, "sleep", "1000")
    r = dk("exec", n, "sh", "-c", "echo in $(hostname); tr '\\0' ' ' </proc/1/cmdline; exit 4")
    assert r.returncode == 4, r.stderr
    assert r.stdout.splitlines() == [f"in {cid[:12]}", "sleep 1000 "], r.stdout
    r = dk("exec", "-i", n, "tr", "a-z", "A-Z", input="into an exec\n")
    assert (r.returncode, r.stdout) == (0, "INTO AN EXEC\n"), r.stderr
    r = dk("exec", "--user", "65534:65534", n, "id", "-u")
    assert (r.returncode, r.stdout.strip()) == (0, "65534"), r.stderr
    r = dk("exec", n, "/no/such/binary")
    assert r.returncode in (126, 127), r.stdout + r.stderr
    # -t: the process gets a pty of the container's devpts (script gives the client a terminal)
    r = ct.under_script(dk.argv("exec", "-t", n, "sh", "-c", "test -t 0 && test -t 1 && tty; exit 3"), env=dk.env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert re.search(r"^/dev/pts/\d+\r?$", r.stdout, re.M), r.stdout
    r = dk("top", n)
    assert r.returncode == 0, r.stderr
    rows = [l.split() for l in r.stdout.splitlines()[1:]]
    assert [row for row in rows if row[1] == str(pid) and row[-2:] == ["sleep", "1000"]], r.stdout
    r = dk("stats", "--no-stream", "--format", "{{json .}}", n)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    assert stats["Name"] == n and stats["PIDs"] == "1", stats
    usage, limit = (s.strip() for s in stats["MemUsage"].split("/"))
    assert re.fullmatch(r"[0-9.]+[KMG]iB", usage) and re.fullmatch(r"[0-9.]+[KMGT]iB", limit), stats
    assert re.fullmatch(r"[0-9.]+%", stats["CPUPerc"]) and re.fullmatch(r"[0-9.]+%", stats["MemPerc"]), stats
    r = dk("rm", "--force", n)
    assert r.returncode == 0, r.stderr
    ct.wait_gone(pid, timeout=30)
    assert not os.path.exists(f"/proc/{pid}")


def test_memory_and_pids_limits(dk):
    from test_differential import container_dirs, placement, read_cgroup_file

    mem, pids = placement("host", "memory"), placement("host", "pids")
    if not mem or not pids:
        pytest.skip(f"no memory or pids controller on this host (memory: {mem}, pids: {pids})")
    n, pid, cid = detached(dk, "--memory", "64m", "--pids-limit", "5", IMAGE, "sleep", "1000")
    dirs = container_dirs(pid, cid)
    limit_file = "memory.limit_in_bytes" if mem == "v1" else "memory.max"
    assert read_cgroup_file(dirs, mem, limit_file) == str(64 << 20), dirs
    assert read_cgroup_file(dirs, pids, "pids.max") == "5", dirs
    stats = json.loads(dk("stats", "--no-stream", "--format", "{{json .}}", n).stdout)
    assert stats["MemUsage"].split("/")[1].strip() == "64MiB", stats
    assert dk("rm", "--force", n).returncode == 0
    # past the limit a fork fails: pid 1 (sh) and 4 sleeps make 5, the sixth process is refused
    r = run(dk, "--rm", "--pids-limit", "5", IMAGE, "sh", "-c",
            "for i in 1 2 3 4 5 6 7 8; do sleep 60 & echo started; done; echo all started")
    assert r.stdout.split("\n").count("started") == 4, r.stdout + r.stderr
    assert "all started" not in r.stdout and "can't fork" in r.stderr, r.stdout + r.stderr
    assert r.returncode != 0


def test_stop_kill_and_rm_force(dk):
    # pid 1 ignores SIGTERM without a handler: the trap makes `docker stop` end it with 42
    n, pid, _ = detached(dk, IMAGE, "sh", "-c", "trap 'exit 42' TERM; sleep 1000 & wait")
    r = dk("stop", "--time", "30", n)
    assert r.returncode == 0, r.stderr
    assert dk.inspect(n, "{{.State.ExitCode}}") == "42"  # 137 would mean SIGTERM was lost
    assert not os.path.exists(f"/proc/{pid}")
    # started again (the same container, a new init), then killed (docker kill: SIGKILL)
    r = dk("start", n)
    assert r.returncode == 0, r.stderr
    pid = int(dk.inspect(n, "{{.State.Pid}}"))
    r = dk("kill", n)
    assert r.returncode == 0, r.stderr
    r = dk("wait", n)
    assert r.stdout.strip() == "137", r.stdout + r.stderr
    assert not os.path.exists(f"/proc/{pid}")
    # and again, removed while running
    r = dk("start", n)
    assert r.returncode == 0, r.stderr
    pid = int(dk.inspect(n, "{{.State.Pid}}"))
    r = dk("rm", "--force", n)
    assert r.returncode == 0, r.stderr
    ct.wait_gone(pid, timeout=30)
    assert not os.path.exists(f"/proc/{pid}")
    assert dk("inspect", n).returncode != 0


# Docker's default profile refuses each with EPERM; unshare and setns only without CAP_SYS_ADMIN
BLOCKED = ["add_key", "keyctl", "unshare", "mount", "kexec_load", "bpf", "perf_event_open", "setns",
           "open_by_handle_at", "init_module", "delete_module", "swapon", "reboot", "acct", "settimeofday"]


def test_default_seccomp_profile(dk):
    needs_try_syscall(dk)
    probe = "grep Seccomp: /proc/self/status; for s in getpid " + " ".join(BLOCKED) + "; do try-syscall $s; done"
    seen = {}
    for runtime in (RUNTIME, "runc"):
        r = run(dk, "--rm", IMAGE, "sh", "-c", probe, runtime=runtime)
        assert r.returncode == 0, r.stderr
        seen[runtime] = r.stdout
    mine = seen[RUNTIME]
    assert re.search(r"^Seccomp:\s+2$", mine, re.M), mine
    assert "getpid errno=0" in mine
    for s in BLOCKED:
        assert f"{s} errno=1\n" in mine, f"{s} not refused with EPERM by Docker's profile:\n{mine}"
    assert mine == seen["runc"]
    # unconfined: no filter, and the kernel's own answer to add_key's bad arguments
    r = run(dk, "--rm", "--security-opt", "seccomp=unconfined", IMAGE, "sh", "-c",
            "grep Seccomp: /proc/self/status; try-syscall add_key")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^Seccomp:\s+0$", r.stdout, re.M), r.stdout
    assert "add_key errno=" in r.stdout and "add_key errno=1\n" not in r.stdout, r.stdout


IDS_AND_CAPS = [
    pytest.param([], id="default"),
    pytest.param(["--user", "65534:65534", "--group-add", "10"], id="user-and-groups"),
    pytest.param(["--cap-drop", "ALL", "--cap-add", "NET_BIND_SERVICE", "--cap-add", "KILL"], id="caps-dropped"),
    pytest.param(["--cap-add", "SYS_ADMIN", "--cap-add", "SYS_PTRACE"], id="caps-added"),
    pytest.param(["--user", "1000", "--cap-add", "NET_ADMIN"], id="user-with-a-cap"),
    pytest.param(["--security-opt", "no-new-privileges"], id="no-new-privileges"),
    pytest.param(["--privileged"], id="privileged"),
]


@pytest.mark.parametrize("flags", IDS_AND_CAPS)
def test_ids_and_capabilities_as_with_runc(dk, flags):
    probe = f"id; grep -E '{STATUS_LINES}' /proc/self/status"
    seen = {runtime: run(dk, "--rm", *flags, IMAGE, "sh", "-c", probe, runtime=runtime) for runtime in ("runc", RUNTIME)}
    if seen["runc"].returncode != 0:
        # e.g. --privileged where this host's bounding set lacks a capability Docker asks for:
        # zygote-runc must refuse it too, not start the container with less
        assert seen[RUNTIME].returncode == seen["runc"].returncode, seen[RUNTIME].stdout + seen[RUNTIME].stderr
        pytest.skip(f"runc cannot run this container here either (nor can zygote-runc): {seen['runc'].stderr.strip()}")
    assert seen[RUNTIME].returncode == 0, seen[RUNTIME].stderr
    seen = {runtime: r.stdout for runtime, r in seen.items()}
    lines = seen[RUNTIME].splitlines()
    assert len(lines) == 12 and lines[0].startswith("uid="), seen[RUNTIME]  # id and 11 status lines
    assert seen[RUNTIME] == seen["runc"]


def test_teardown_leaves_nothing(docker):
    """dockerd stopped (SIGTERM) with no container left: it and its containerd exit, and nothing of
    theirs (process, mount, cgroup) remains without being killed or unmounted by force."""
    if docker.proc.poll() is not None:
        pytest.fail("dockerd had already exited: " + docker.log_tail(400))
    ids = docker("ps", "-a", "-q").stdout.split()
    assert ids == [], f"containers left by earlier tests: {ids}"
    containerd_pid = docker.containerd_pid
    assert containerd_pid and os.path.exists(f"/proc/{containerd_pid}"), "no managed containerd found"
    forced = docker.stop()
    assert docker.proc.returncode is not None
    assert not os.path.exists(f"/proc/{containerd_pid}"), "dockerd's containerd outlived it"
    if ct.chrooted():
        # dockerd's own bind of its data root onto itself, which it fails to undo in a chroot
        # (seen in scripts/fresh-check.sh's rehearsal; on a host it does): unmounted above
        forced = [f for f in forced if f != f"mount {docker.data_root}"]
    assert forced == [], f"left after dockerd stopped: {forced}"
    assert ct.cgroups_naming(ct.DOCKER_CGROUP_PARENT, "") == []
