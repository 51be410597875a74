# SPDX-License-Identifier: MIT
"""zygote-runc driven directly, as podman's conmon and containerd's shim drive runc: run, the
create/start/state/kill/delete lifecycle, exec, ps, pause/resume, bad bundles, and the sandbox
checked from inside the container (namespaces, mounts, capabilities, no_new_privs, seccomp)."""
import glob
import json
import os
import re
import select
import subprocess
import uuid

import pytest

from conftest import CG_PARENT, rootless_config  # noqa: E402

from containertools import processes_naming

# Docker's profile is read from the reference directory that ctest names, never copied in.
DOCKER_PROFILE = os.path.join(os.environ.get("ZYGOTE_REFERENCE_DIR", "/nonexistent"), "docker-default.json")
PODMAN_PROFILE = "/usr/share/containers/seccomp.json"


def cid():
    return "t-" + uuid.uuid4().hex[:12]


def status_field(text, name):
    m = re.search(rf"^{name}:\s*(\S+)", text, re.M)
    assert m, f"no {name} in {text!r}"
    return m.group(1)


def cgroup_dirs(cgroups_path):
    """Every hierarchy's directory for an absolute cgroupsPath."""
    return [d for d in glob.glob("/sys/fs/cgroup/*" + cgroups_path) + glob.glob("/sys/fs/cgroup" + cgroups_path)
            if os.path.isdir(d)]


def mounts_below(path):
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if path in l]


def assert_nothing_left(runc, bundle, name, cgroups_path=None):
    assert not os.path.exists(os.path.join(runc.root, name)), "state directory left behind"
    assert processes_naming(name) == [], "a process of the container is left"
    assert mounts_below(bundle.path) == [], "a mount is left"
    if cgroups_path:
        assert cgroup_dirs(cgroups_path) == [], "a cgroup is left"


def last_log_error(runc):
    with open(runc.log) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    errors = [l for l in lines if l["level"] == "error"]
    assert errors, "no error in the log"
    assert set(errors[-1]) >= {"level", "msg", "time"}
    return errors[-1]["msg"]


# ---- run ---------------------------------------------------------------------------------------

def test_run_echo_and_exit_code(runc, bundle):
    bundle.set_args("sh", "-c", "echo hello from the container; exit 7")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.stdout == "hello from the container\n", r.stderr
    assert r.returncode == 7


def test_sandbox_from_inside(runc, bundle):
    bundle.set_args("sh", "-c", "echo pid=$$; hostname; cat /proc/self/status; "
                    "touch /newfile 2>&1; echo touch=$?; "
                    "echo keys=$(cat /proc/keys | wc -c); echo firmware=$(ls /sys/firmware | wc -l); "
                    "awk '$5==\"/proc/sys\"{print \"procsys\", $6}' /proc/self/mountinfo; "
                    "ls -l /dev/null /dev/zero /dev/urandom /dev/tty; readlink /dev/ptmx; readlink /dev/fd; "
                    "echo umask=$(umask); pwd")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "pid=1\n" in out
    assert "\nzygote\n" in out
    assert "Read-only file system" in out and "touch=1" in out
    assert "keys=0" in out            # a masked file reads as /dev/null
    assert "firmware=0" in out        # a masked directory is an empty tmpfs
    assert re.search(r"^procsys ro,", out, re.M)  # a read-only path
    for dev in ("null", "zero", "urandom", "tty"):
        assert re.search(rf"^c.* /dev/{dev}$", out, re.M), out
    assert "pts/ptmx\n/proc/self/fd\n" in out
    assert "umask=0022" in out
    assert out.rstrip().endswith("\n/")
    # runc's default spec: bounding = effective = permitted = AUDIT_WRITE, KILL, NET_BIND_SERVICE
    want = (1 << 29) | (1 << 5) | (1 << 10)
    assert int(status_field(out, "CapBnd"), 16) == want
    assert int(status_field(out, "CapEff"), 16) == want
    assert int(status_field(out, "CapPrm"), 16) == want
    assert int(status_field(out, "CapInh"), 16) == 0
    assert status_field(out, "NoNewPrivs") == "1"
    assert status_field(out, "Seccomp") == "0"


def test_user_ids_and_caps_of_a_non_root_process(runc, bundle):
    bundle.config["process"]["user"] = {"uid": 65534, "gid": 65534, "additionalGids": [100]}
    bundle.config["process"]["capabilities"]["effective"] = ["CAP_KILL"]
    bundle.config["process"]["capabilities"]["permitted"] = ["CAP_KILL"]
    bundle.config["process"]["capabilities"]["inheritable"] = ["CAP_KILL"]
    bundle.config["process"]["capabilities"]["ambient"] = ["CAP_KILL"]
    bundle.set_args("sh", "-c", "id; cat /proc/self/status")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert "uid=65534 gid=65534 groups=100" in r.stdout
    assert int(status_field(r.stdout, "CapEff"), 16) == 1 << 5
    assert int(status_field(r.stdout, "CapAmb"), 16) == 1 << 5


def test_rlimits(runc, bundle):
    bundle.config["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 123, "hard": 456}]
    bundle.set_args("sh", "-c", "ulimit -n; ulimit -Hn")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.stdout.split() == ["123", "456"], r.stderr


def try_syscall(runc, bundle, profile, name):
    if not os.path.exists(os.path.join(bundle.rootfs, "bin", "try-syscall")):
        pytest.skip("try-syscall-static not built (no static libc)")
    bundle.config["linux"].pop("seccomp", None)
    if isinstance(profile, dict):
        bundle.config["linux"]["seccomp"] = profile
    elif profile:
        with open(profile) as f:
            bundle.config["linux"]["seccomp"] = json.load(f)
    bundle.set_args("sh", "-c", f"grep Seccomp: /proc/self/status; try-syscall {name}")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    m = re.search(rf"{name} errno=(\d+)", r.stdout)
    assert m, r.stdout
    return status_field(r.stdout, "Seccomp"), int(m.group(1))


def test_podman_profile(runc, bundle):
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    # Podman's profile answers ENOSYS (38) by default, which is also what this kernel says for
    # add_key (no CONFIG_KEYS); with the default errno made distinct, the filter's answer shows
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    mode, err = try_syscall(runc, bundle, profile, "add_key")
    assert (mode, err) == ("2", 38)
    profile["defaultErrnoRet"] = 99
    profile.pop("defaultErrno", None)
    mode, err = try_syscall(runc, bundle, profile, "add_key")
    assert (mode, err) == ("2", 99)
    mode, unfiltered = try_syscall(runc, bundle, None, "add_key")
    assert mode == "0" and unfiltered != 99


def test_docker_profile(runc, bundle):
    if not os.path.exists(DOCKER_PROFILE):
        pytest.skip(f"no {DOCKER_PROFILE}")
    mode, err = try_syscall(runc, bundle, DOCKER_PROFILE, "keyctl")
    assert mode == "2"
    assert err == 1  # EPERM, Docker's defaultErrnoRet
    _, unfiltered = try_syscall(runc, bundle, None, "keyctl")
    assert unfiltered != 1


def test_profile_without_no_new_privs(runc, bundle):
    """Podman runs with noNewPrivileges false: the filter goes on while CAP_SYS_ADMIN is there."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    profile["defaultErrnoRet"] = 99  # distinct from what the kernel itself answers
    profile.pop("defaultErrno", None)
    bundle.config["process"]["noNewPrivileges"] = False
    bundle.config["process"]["user"] = {"uid": 1000, "gid": 1000}
    mode, err = try_syscall(runc, bundle, profile, "add_key")
    assert (mode, err) == ("2", 99)


def needs_user_namespaces():
    """The kernel refuses CLONE_NEWUSER to a chrooted process (a debootstrap rehearsal runs in
    one) and where user namespaces are disabled: a skip, with the reason, not a failure."""
    if not os.path.exists("/proc/self/ns/user"):
        pytest.skip("kernel without user namespaces")
    r = subprocess.run(["unshare", "-U", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"this process may not create a user namespace (chrooted, or disabled): {r.stderr.decode().strip()}")


def test_user_namespace(runc, bundle):
    needs_user_namespaces()
    # the mapped root (host uid 200000) reaches the rootfs: the bundle is in open_tmp, as with runc
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    bundle.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    bundle.set_args("sh", "-c", "id -u; cat /proc/self/uid_map; echo x > /dev/null && echo devnull-ok")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "0"
    assert lines[1].split() == ["0", "200000", "65536"]
    assert "devnull-ok" in r.stdout
    # exec joins the user namespace with the others
    name = cid()
    bundle.set_args("sleep", "1000")
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    r = runc("exec", name, "sh", "-c", "id -u; cat /proc/self/uid_map")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "0", "200000", "65536"]
    assert runc("delete", "--force", name).returncode == 0


# ---- lifecycle --------------------------------------------------------------------------------

def test_create_start_state_kill_delete(runc, bundle, tmp_path):
    name = cid()
    bundle.set_args("sh", "-c", "echo started; exec sleep 1000")
    out = tmp_path / "out"
    pid_file = tmp_path / "pid"
    with open(out, "w") as f:
        r = runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name, stdout=f)
    assert r.returncode == 0, r.stderr
    pid = int(pid_file.read_text())
    st = runc.state(name)
    assert set(st) >= {"ociVersion", "id", "pid", "status", "bundle", "rootfs", "created", "owner"}
    assert (st["id"], st["pid"], st["status"], st["bundle"]) == (name, pid, "created", bundle.path)
    assert st["rootfs"] == bundle.rootfs
    assert out.read_text() == ""  # nothing ran before start
    assert runc("start", name).returncode == 0
    assert runc.state(name)["status"] == "running"
    assert runc("start", name).returncode != 0  # twice is an error
    r = runc("delete", name)
    assert r.returncode != 0 and "not stopped" in r.stderr
    assert runc("kill", name, "KILL").returncode == 0
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        pass  # gone and reaped already: its parent (the runtime) left, and a subreaper reaps at once
    else:
        select.select([pidfd], [], [], 10)
        os.close(pidfd)
    assert runc.state(name)["status"] == "stopped"
    assert "started" in out.read_text()
    assert runc("delete", name).returncode == 0
    assert runc("state", name).returncode != 0
    r = runc("delete", name)
    assert r.returncode != 0 and "does not exist" in r.stderr
    assert runc("delete", "--force", name).returncode == 0
    assert_nothing_left(runc, bundle, name)


def test_delete_force_of_a_created_container(runc, bundle):
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.set_args("true")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    assert cgroup_dirs(cg)
    assert runc("delete", "--force", name).returncode == 0
    assert_nothing_left(runc, bundle, name, cg)


def test_kill_signal_names_and_numbers(runc, bundle):
    bundle.set_args("sleep", "1000")
    # the container's init ignores signals it has no handler for (TERM to a pid 1 sleep)
    for sig in ("KILL", "SIGKILL", "9"):
        name = cid()
        assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
        pid = runc.state(name)["pid"]
        pidfd = os.pidfd_open(pid)
        assert runc("kill", name, sig).returncode == 0, sig
        select.select([pidfd], [], [], 10)
        os.close(pidfd)
        assert runc.state(name)["status"] == "stopped"
        assert runc("delete", name).returncode == 0
    assert runc("kill", name, "NOSUCHSIG").returncode != 0


def test_ps_and_kill_all(runc, bundle):
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.config["linux"]["resources"]["pids"] = {"limit": 42}
    bundle.config["linux"]["resources"]["memory"] = {"limit": 64 << 20}
    bundle.set_args("sh", "-c", "sleep 1000 & sleep 1000 & echo ready; wait")
    p = subprocess.Popen([runc.binary, "--root", runc.root, "run", "--bundle", bundle.path, name],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    r = runc("ps", "--format", "json", name)
    assert r.returncode == 0, r.stderr
    pids = json.loads(r.stdout)
    assert len(pids) == 3 and runc.state(name)["pid"] in pids
    limits = [open(os.path.join(d, "pids.max")).read().strip() for d in cgroup_dirs(cg)
              if os.path.exists(os.path.join(d, "pids.max"))]
    assert limits == ["42"]
    memory = [open(os.path.join(d, f)).read().strip() for d in cgroup_dirs(cg)
              for f in ("memory.max", "memory.limit_in_bytes") if os.path.exists(os.path.join(d, f))]
    assert memory == [str(64 << 20)]
    assert runc("kill", "--all", name, "9").returncode == 0
    assert p.wait(timeout=30) == 128 + 9
    assert_nothing_left(runc, bundle, name, cg)


def test_exec(runc, bundle, tmp_path):
    name = cid()
    bundle.set_args("sleep", "1000")
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    r = runc("exec", name, "sh", "-c", "echo pid=$$; hostname; cat /proc/1/cmdline; exit 5")
    assert r.returncode == 5, r.stderr
    assert "zygote" in r.stdout and "sleep" in r.stdout
    assert "pid=1\n" not in r.stdout
    proc = tmp_path / "process.json"
    spec = dict(bundle.config["process"], args=["sh", "-c", "echo $$ > /tmp/p; exec sleep 1000"])
    proc.write_text(json.dumps(spec))
    pid_file = tmp_path / "exec.pid"
    r = runc("exec", "--process", str(proc), "--detach", "--pid-file", str(pid_file), name)
    assert r.returncode == 0, r.stderr
    pid = int(pid_file.read_text())
    assert pid in json.loads(runc("ps", "--format", "json", name).stdout)
    r = runc("exec", name, "nosuchbinary")
    assert r.returncode == 127 and "executable file not found in $PATH" in r.stderr
    assert runc("delete", "--force", name).returncode == 0


def test_pause_resume(runc, bundle):
    name = cid()
    bundle.set_args("sleep", "1000")
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    pid = runc.state(name)["pid"]
    r = runc("pause", name)
    if r.returncode != 0 and "freezer" in r.stderr:
        pytest.skip(f"no cgroup freezer: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    assert runc.state(name)["status"] == "paused"
    with open(f"/proc/{pid}/stat") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] in ("D", "S", "T")
    assert runc("pause", name).returncode != 0
    assert runc("resume", name).returncode == 0
    assert runc.state(name)["status"] == "running"
    assert runc("resume", name).returncode != 0
    assert runc("delete", "--force", name).returncode == 0


def test_commands_on_one_container_take_turns(runc, bundle):
    """update, pause, resume, start and delete hold the container's lock (flock on ROOT/ID)
    while they run: one waits for the holder; state, ps and kill do not. Twenty pairs of updates
    at once keep both fields in the recorded resources (each read-modify-write of state.json
    whole)."""
    import fcntl
    name = cid()
    bundle.set_args("sleep", "1000")
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    fd = os.open(os.path.join(runc.root, name), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        cmd = [runc.binary, "--root", runc.root, "update", "--pids-limit", "77", name]
        waiting = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # readers go on meanwhile, and prove the time it had to take the lock
            for _ in range(5):
                assert runc.state(name)["status"] == "running"
                assert runc("ps", name).returncode == 0
            assert waiting.poll() is None, waiting.stderr.read()
            assert "77" not in json.dumps(json.load(open(os.path.join(runc.root, name, "state.json"))).get(
                "resources", {}).get("pids", {}))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        assert waiting.wait(timeout=30) == 0, waiting.stderr.read()
    finally:
        os.close(fd)
    with open(os.path.join(runc.root, name, "state.json")) as f:
        assert json.load(f)["resources"]["pids"]["limit"] == 77
    for i in range(20):
        a = subprocess.Popen([runc.binary, "--root", runc.root, "update", "--pids-limit", str(100 + i), name],
                             stderr=subprocess.PIPE)
        b = subprocess.Popen([runc.binary, "--root", runc.root, "update", "--cpu-share", str(200 + i), name],
                             stderr=subprocess.PIPE)
        assert a.wait(timeout=30) == 0 and b.wait(timeout=30) == 0, (a.stderr.read(), b.stderr.read())
        with open(os.path.join(runc.root, name, "state.json")) as f:
            res = json.load(f)["resources"]
        assert (res["pids"]["limit"], res["cpu"]["shares"]) == (100 + i, 200 + i), res
    assert runc("delete", "--force", name).returncode == 0


def test_list(runc, bundle):
    name = cid()
    bundle.set_args("true")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    r = runc("list", "--format", "json")
    assert [c["id"] for c in json.loads(r.stdout)] == [name]
    assert runc("list", "-q").stdout == name + "\n"


# ---- bad bundles ---------------------------------------------------------------------------------

def create_fails(runc, bundle, name, cg=None):
    r = runc("create", "--bundle", bundle.path, name)
    assert r.returncode != 0
    assert_nothing_left(runc, bundle, name, cg)
    assert last_log_error(runc) in r.stderr
    return r.stderr


def test_missing_binary(runc, bundle):
    name = cid()
    cg = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["cgroupsPath"] = cg
    bundle.set_args("nosuchbinary")
    assert "executable file not found in $PATH" in create_fails(runc, bundle, name, cg)
    bundle.set_args("/bin/nosuchbinary")
    assert "no such file or directory" in create_fails(runc, bundle, name, cg)
    os.chmod(os.path.join(bundle.rootfs, "etc"), 0o755)
    bundle.set_args("/etc")
    assert "permission denied" in create_fails(runc, bundle, name, cg)
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 126


def test_sysctl(runc, bundle):
    """linux.sysctl is written in the container's own namespaces; the host's values stay."""
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        host_forward = f.read()
    with open("/proc/sys/kernel/shmmni") as f:
        host_shmmni = f.read()
    bundle.config["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234"}
    bundle.set_args("cat", "/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/shmmni")
    r = runc("run", "--bundle", bundle.path, cid())
    assert (r.returncode, r.stdout) == (0, "1\n1234\n"), r.stderr
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        assert f.read() == host_forward
    with open("/proc/sys/kernel/shmmni") as f:
        assert f.read() == host_shmmni
    # not namespaced: it would change the host
    name = cid()
    bundle.config["linux"]["sysctl"] = {"vm.swappiness": "1"}
    bundle.save()
    assert "sysctl vm.swappiness: not namespaced" in create_fails(runc, bundle, name)
    # a namespace the container shares with the host
    bundle.config["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1"}
    bundle.config["linux"]["namespaces"] = [n for n in bundle.config["linux"]["namespaces"] if n["type"] != "network"]
    bundle.save()
    assert "shares the host's net namespace" in create_fails(runc, bundle, name)
    # a key that would leave /proc/sys/net
    bundle.config["linux"]["sysctl"] = {"net/../../kernel/shmmni": "1"}
    bundle.save()
    assert "linux.sysctl: bad entry" in create_fails(runc, bundle, name)


def test_cgroup_namespace_and_oom_score_adj(runc, bundle):
    """A cgroup namespace is rooted at the container's own cgroups (on v1 and hybrid hosts too,
    where the init cannot be born in them by CLONE_INTO_CGROUP); oomScoreAdj reaches the command."""
    name = cid()
    bundle.config["linux"]["cgroupsPath"] = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["namespaces"].append({"type": "cgroup"})
    bundle.config["process"]["oomScoreAdj"] = 321
    bundle.set_args("sh", "-c", "cat /proc/self/cgroup /proc/self/oom_score_adj")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "321"
    # every hierarchy the container joined reads "/" (cpuset and the like stay the caller's)
    joined = [l for l in lines[:-1] if l.split(":", 2)[1] in ("pids", "memory", "freezer", "")]
    assert joined and all(l.endswith(":/") for l in joined), r.stdout
    bundle.config["process"]["oomScoreAdj"] = 5000
    bundle.save()
    assert "oomScoreAdj" in create_fails(runc, bundle, cid())


def test_cgroup_mount_shows_the_containers_own(runc, bundle):
    """/sys/fs/cgroup inside is the container's own cgroups, read-only, not the host's tree: a
    program reads its limits there (on v1: one directory per hierarchy, as runc binds them)."""
    name = cid()
    bundle.config["linux"]["cgroupsPath"] = f"/{CG_PARENT}/{name}"
    bundle.config["linux"]["resources"] = {"pids": {"limit": 42}}
    bundle.set_args("sh", "-c", "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; "
                    "ls /sys/fs/cgroup | grep -c " + CG_PARENT + "; mkdir /sys/fs/cgroup/pids/x /sys/fs/cgroup/x")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode != 0  # mkdir: read-only
    assert r.stdout.splitlines() == ["42", "0"], r.stdout + r.stderr
    assert "Read-only file system" in r.stderr or "Read-only file system" in r.stdout


def test_missing_rootfs(runc, bundle):
    bundle.config["root"]["path"] = "nosuchdir"
    bundle.save()
    assert "no such file or directory" in create_fails(runc, bundle, cid())


def test_broken_config(runc, bundle):
    with open(os.path.join(bundle.path, "config.json"), "w") as f:
        f.write('{"ociVersion": "1.0.2", "process": ')
    assert "not valid JSON" in create_fails(runc, bundle, cid())


def test_unknown_namespace(runc, bundle):
    bundle.config["linux"]["namespaces"].append({"type": "nosuchns"})
    bundle.save()
    assert 'unknown namespace type "nosuchns"' in create_fails(runc, bundle, cid())


def test_failing_mount_is_named(runc, bundle):
    name = cid()
    bundle.config["mounts"].append({"destination": "/mnt", "type": "nosuchfs", "source": "none"})
    bundle.save()
    err = create_fails(runc, bundle, name)
    assert "nosuchfs" in err and "/mnt" in err


def test_duplicate_id(runc, bundle):
    name = cid()
    bundle.set_args("true")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    r = runc("create", "--bundle", bundle.path, name)
    assert r.returncode != 0 and "exists" in r.stderr


# ---- the command line ---------------------------------------------------------------------------

def test_cli(runc_bin, tmp_path):
    r = subprocess.run([runc_bin, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "zygote-runc version" in r.stdout
    r = subprocess.run([runc_bin, "kill", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "kill [--all]" in r.stdout
    r = subprocess.run([runc_bin, "features"], capture_output=True, text=True)
    assert json.loads(r.stdout)["linux"]["cgroup"]["v1"] is True
    r = subprocess.run([runc_bin, "nosuchcommand"], capture_output=True, text=True)
    assert r.returncode != 0
    r = subprocess.run([runc_bin, "spec", "--rootless", "--bundle", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0
    spec = json.loads((tmp_path / "config.json").read_text())
    assert {"type": "user"} in spec["linux"]["namespaces"]
    assert spec["linux"]["uidMappings"][0]["hostID"] == os.getuid()
    r = subprocess.run([runc_bin, "spec", "--bundle", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode != 0 and "exists" in r.stderr
    r = subprocess.run([runc_bin, "--root", str(tmp_path / "none"), "delete", "--force", "gone"])
    assert r.returncode == 0


# ---- terminal ------------------------------------------------------------------------------------

def test_terminal_through_console_socket(runc, bundle, tmp_path):
    """conmon's way: a pty whose master arrives on --console-socket by SCM_RIGHTS."""
    import socket
    name = cid()
    path = str(tmp_path / "console.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    bundle.config["process"]["terminal"] = True
    bundle.set_args("sh", "-c", "tty; test -t 0 && test -t 1 && echo both-ttys; ls -l /dev/console; cat")
    r = runc("create", "--bundle", bundle.path, "--console-socket", path, name)
    assert r.returncode == 0, r.stderr
    conn, _ = srv.accept()
    _, fds, _, _ = socket.recv_fds(conn, 16, 1)
    assert len(fds) == 1
    master = fds[0]
    assert os.isatty(master)
    assert runc("start", name).returncode == 0
    os.write(master, b"typed\n")
    out = b""
    while out.count(b"typed") < 2:  # the echo of the line, then cat's copy
        ready, _, _ = select.select([master], [], [], 10)
        assert ready, out
        out += os.read(master, 4096)
    text = out.decode()
    assert re.search(r"^/dev/pts/\d+\r$", text, re.M), text
    assert "both-ttys" in text
    assert "/dev/console" in text
    os.close(master)
    conn.close()
    srv.close()
    assert runc("delete", "--force", name).returncode == 0


def test_terminal_needs_a_console_socket(runc, bundle):
    bundle.config["process"]["terminal"] = True
    bundle.save()
    r = runc("create", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "console socket" in r.stderr


def test_rootless(runc_bin, bundle, open_tmp):
    """As nobody: `spec --rootless`'s user namespace, no cgroup of its own."""
    import shutil
    needs_user_namespaces()
    nobody = 65534
    binary = str(open_tmp / "zygote-runc")
    shutil.copy(runc_bin, binary)
    cfg = rootless_config(runc_bin, bundle, nobody)
    cfg["process"]["args"] = ["sh", "-c", "id -u; cat /proc/self/uid_map; echo x > /dev/null && hostname"]
    json.dump(cfg, open(os.path.join(bundle.path, "config.json"), "w"))
    subprocess.run(["chown", "-R", f"{nobody}:{nobody}", bundle.path], check=True)
    r = subprocess.run(["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", binary,
                        "--root", os.path.join(bundle.path, "state"), "run", "--bundle", bundle.path, cid()],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 and "clone3: operation not permitted" in r.stderr:
        pytest.skip("unprivileged user namespaces are disabled here")
    assert r.returncode == 0, r.stderr
    out = r.stdout.split("\n")
    assert out[0] == "0"
    assert out[1].split() == ["0", str(nobody), "1"]
    assert out[2] == "zygote"


def test_symlink_in_image_cannot_lead_a_mount_outside(runc, bundle, tmp_path):
    """An image whose /mnt is a symlink to a host path that the image lacks: the link resolves
    inside the rootfs, where the missing directories are made (as runc makes them), and the mount
    lands there; nothing is made or mounted at the host's path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), os.path.join(bundle.rootfs, "mnt"))
    bundle.config["mounts"].append({"destination": "/mnt/x", "type": "tmpfs", "source": "tmpfs"})
    bundle.set_args("sh", "-c", "touch /mnt/x/inside && echo made && stat -f -c %T " + str(outside) + "/x")
    inside = os.path.join(bundle.rootfs, str(outside).lstrip("/"))
    for _ in range(2):
        r = runc("run", "--bundle", bundle.path, cid())
        assert r.returncode == 0, r.stderr
        assert r.stdout == "made\ntmpfs\n"
        assert os.listdir(outside) == []
        assert mounts_below(str(outside)) == []
        # the first run made the directories inside the rootfs; the second finds them
        assert os.path.isdir(os.path.join(inside, "x")) and os.listdir(os.path.join(inside, "x")) == []


def test_exec_from_a_chroot(runc_bin, bundle, tmp_path, needs_root):
    """zygote-runc run from a chroot (a CI job, a debootstrap'd build root): joining the
    container's mount namespace puts the joiner at that namespace's root, which is the host's
    real root, not the container's; exec must land in the container's root all the same."""
    jail = tmp_path / "jail"
    jail.mkdir()
    state = tmp_path / "state"
    name = cid()
    bundle.set_args("sleep", "1000")
    with open(os.path.join(bundle.rootfs, "etc", "marker"), "w") as f:
        f.write("inside the container\n")
    script = f"""
set -e
mount --make-rprivate /
mount --rbind / {jail}
cd {jail}
chroot . {runc_bin} --root {state} run --detach --bundle {bundle.path} {name}
set +e
chroot . {runc_bin} --root {state} exec {name} sh -c 'cat /proc/1/cmdline; echo; cat /etc/marker'
echo "exit=$?"
chroot . {runc_bin} --root {state} delete --force {name}
"""
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert "exit=0" in r.stdout, (r.stdout, r.stderr)
    assert r.stdout.startswith("sleep") and "inside the container" in r.stdout, (r.stdout, r.stderr)
