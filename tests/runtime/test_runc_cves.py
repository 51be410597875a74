# SPDX-License-Identifier: MIT
"""zygote-runc against the classes of runc's CVEs, tried as an attacker would:

- CVE-2019-5736: the runtime's own processes in the container's pid namespace (the init held
  until `start`, an exec'd process during its setup) must not open the host's runtime binary, nor
  their memory, environment or fds, to the container's processes;
- CVE-2024-21626: no fd of the runtime (or leaked by its caller) may take a container's cwd into
  the host's tree (`"cwd": "/proc/self/fd/N"`), on the host's cgroups and on cgroup v2;
- a namespace joined by path must be of the type it is declared as;
- device nodes get the config's fileMode, whatever the caller's umask.
"""
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import BUILD_DIR, Runtime
from containertools import container_id as cid, processes_naming


F_GET_SEALS = 1034
SEALS = 0x1 | 0x2 | 0x4 | 0x8  # F_SEAL_SEAL, SHRINK, GROW, WRITE


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def wait_for(path, pred, timeout):
    """The content of path once pred(its lines) holds, or what is there after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                content = f.read()
        except FileNotFoundError:
            content = ""
        if pred(content.splitlines()) or time.monotonic() >= deadline:
            return content
        time.sleep(0.05)


def wait_for_line(path, text, timeout):
    return wait_for(path, lambda lines: text in lines, timeout)


def fields(out, name):
    """{key: value} of the line starting with name ("exe-path errno=13 size=-1")."""
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == name:
            return dict(w.split("=", 1) for w in words[1:] if "=" in w)
    raise AssertionError(f"no {name} line in {out!r}")


@pytest.fixture
def attacker(bundle):
    a = os.path.join(BUILD_DIR, "runc-attacker-static")
    if not os.access(a, os.X_OK):
        pytest.fail(f"not built: {a}")
    shutil.copy(a, os.path.join(bundle.rootfs, "bin", "runc-attacker"))
    # writable, so that a detached attacker leaves its report in the rootfs for the test
    bundle.config["root"]["readonly"] = False
    bundle.save()
    return bundle


@pytest.fixture
def runc_copy(runc_bin, tmp_path, needs_root):
    """zygote-runc run from a copy: the file an attack would overwrite is the test's own."""
    d = tmp_path / "host-bin"
    d.mkdir()
    binary = str(d / "zygote-runc")
    shutil.copy(runc_bin, binary)
    rt = Runtime(binary, str(tmp_path / "state"), str(tmp_path / "log.json"))
    yield rt
    # by the build's binary: the copy may be what an attack overwrote
    cleaner = Runtime(runc_bin, rt.root, rt.log)
    if os.path.isdir(rt.root):
        for name in os.listdir(rt.root):
            cleaner("delete", "--force", name)


# ---- CVE-2019-5736: the runtime's processes in the container ----------------------------------------

def add_caps(bundle, *caps):
    for s in ("bounding", "effective", "permitted"):
        bundle.config["process"]["capabilities"][s] += list(caps)
    bundle.save()


@pytest.mark.parametrize("ptrace", [False, True], ids=["default-caps", "cap-sys-ptrace"])
def test_held_init_is_closed_to_the_container(runc_copy, attacker, ptrace):
    """While `create` holds the init (a copy of the runtime, waiting for `start`), processes exec'd
    into the container attack it: /proc/1/exe for writing and as O_PATH kept until the init has
    exec'd away (the original exploit), /proc/1/environ (the runtime's environment, with a secret),
    /proc/1/mem, pidfd_getfd of its fds. With CAP_SYS_PTRACE the container may look at the init
    (as with runc), but what /proc/1/exe names must still be no writable host file."""
    rt, bundle = runc_copy, attacker
    binary_hash = sha256(rt.binary)
    secret = "ZYGOTE_SECRET_" + uuid.uuid4().hex
    env = dict(os.environ, ZYGOTE_TEST_SECRET=secret)
    if ptrace:
        add_caps(bundle, "CAP_SYS_PTRACE")
    bundle.set_args("sleep", "1000")
    name = cid()
    r = rt("create", "--bundle", bundle.path, name, env=env)
    assert r.returncode == 0, r.stderr
    for attempt in range(3):
        r = rt("exec", name, "runc-attacker", "probe", "1", secret, env=env, timeout=30)
        assert r.returncode == 0, r.stderr
        out = r.stdout
        assert fields(out, "exe-wronly")["errno"] != "0", out
        if not ptrace:
            assert fields(out, "exe-path")["errno"] != "0", out
            assert fields(out, "environ")["marker"] == "0", out
            assert fields(out, "mem")["errno"] != "0", out
            assert fields(out, "getfd")["got"] == "0", out
    # the old exploit: hold /proc/1/exe, and write it once the init has exec'd away
    r = rt("exec", "--detach", name, "sh", "-c", "runc-attacker hold-exe 1 4 > /hold.out", env=env)
    assert r.returncode == 0, r.stderr
    report = os.path.join(bundle.rootfs, "hold.out")
    # it has tried /proc/1/exe before the init execs away
    out = wait_for(report, lambda lines: any(l.startswith("exe-path") for l in lines), 10)
    assert "exe-path" in out, out
    assert rt("start", name).returncode == 0
    out = wait_for_line(report, "done", 15)
    assert "done" in out.splitlines(), out
    assert "exe-overwritten" not in out, out
    if not ptrace:
        assert fields(out, "exe-path")["errno"] != "0", out
    assert sha256(rt.binary) == binary_hash, "the host's runtime binary was changed from the container"
    assert rt("delete", "--force", name).returncode == 0


def test_exec_during_setup_is_closed_to_the_container(runc_copy, attacker, tmp_path):
    """An exec'd process is a copy of the runtime until its execve. A PATH of thousands of entries
    through a symlink loop keeps it in its setup (the PATH search) long enough for an attacker in
    the container that watches for new processes to try everything on it, several times."""
    rt, bundle = runc_copy, attacker
    binary_hash = sha256(rt.binary)
    secret = "ZYGOTE_SECRET_" + uuid.uuid4().hex
    env = dict(os.environ, ZYGOTE_TEST_SECRET=secret)
    os.symlink("/l", os.path.join(bundle.rootfs, "l"))
    bundle.set_args("sleep", "1000")
    name = cid()
    assert rt("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    report = os.path.join(bundle.rootfs, "race.out")
    r = rt("exec", "--detach", name, "sh", "-c", f"runc-attacker race {secret} 60 /race.stop > /race.out")
    assert r.returncode == 0, r.stderr
    assert "racing" in wait_for_line(report, "racing", 10)
    slow_path = ":".join(["/l"] * 40000) + ":/bin"
    proc = tmp_path / "process.json"
    proc.write_text(json.dumps(dict(bundle.config["process"], args=["true"],
                                    env=[f"PATH={slow_path}"])))
    for attempt in range(3):
        r = rt("exec", "--process", str(proc), name, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
    open(os.path.join(bundle.rootfs, "race.stop"), "w").close()
    out = wait_for_line(report, "done", 20)
    assert "done" in out.splitlines(), out
    assert [l for l in out.splitlines() if l.startswith("won")] == [], out
    # the attacker did see the runtime's processes, and tried
    assert int(fields(out, "probed")["probed"]) > 0, out
    assert sha256(rt.binary) == binary_hash
    assert rt("delete", "--force", name).returncode == 0


@pytest.mark.parametrize("user", ["root", "uid-1000"])
@pytest.mark.parametrize("state", ["created", "running"])
def test_exec_reaches_no_fd_of_the_init(runc, attacker, state, user):
    """A process exec'd into the container goes for the init's fds: the host's exec.fifo (opened
    for writing, it starts a created container behind the caller's back) and the sync socket to
    the runtime, through /proc/1/fd/N (listing, readlink, reopening) and pidfd_getfd of every fd
    number. The held init refuses all of it; a running init holds only what the container's own
    program has, nothing of the runtime."""
    bundle = attacker
    bundle.set_args("sleep", "1000")
    name = cid()
    verb = ["create"] if state == "created" else ["run", "--detach"]
    r = runc(*verb, "--bundle", bundle.path, name, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    as_user = ["--user", "1000:1000"] if user != "root" else []
    for attempt in range(3):
        r = runc("exec", *as_user, name, "runc-attacker", "fds", "1", timeout=30)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert "done" in lines, r.stdout
        for l in lines:
            words = l.split()
            f = dict(w.split("=", 1) for w in words[2:] if "=" in w)
            if words[0] in ("link", "getfd") and f.get("errno", "0") == "0":
                assert f["type"] not in ("fifo", "sock"), f"{state}: the init's fd {words[1]} reached: {l}"
                assert "exec.fifo" not in l and runc.root not in l, l
            if words[0] in ("link", "open") and state == "created":
                # its fd numbers may be listed, but none of them read or reopened
                assert f["errno"] != "0", f"the held init's fd {words[1]}: {l}"
        if state == "created":
            assert [l for l in lines if l.startswith("getfd ")] == [], r.stdout
        assert runc.state(name)["status"] == state, "the exec'd process started the container"
    assert runc("delete", "--force", name).returncode == 0


def test_runtime_runs_from_a_sealed_copy(runc_copy, bundle):
    """The held init's /proc/PID/exe, seen from the host, is a sealed memfd, not the file."""
    rt = runc_copy
    bundle.set_args("sleep", "1000")
    name = cid()
    pid_file = os.path.join(bundle.path, "pid")
    r = rt("create", "--bundle", bundle.path, "--pid-file", pid_file, name)
    assert r.returncode == 0, r.stderr
    pid = int(open(pid_file).read())
    exe = os.readlink(f"/proc/{pid}/exe")
    assert exe.startswith("/memfd:") and exe != rt.binary, exe
    fd = os.open(f"/proc/{pid}/exe", os.O_RDONLY)
    try:
        seals = fcntl.fcntl(fd, F_GET_SEALS)
        assert seals & SEALS == SEALS, hex(seals)
    finally:
        os.close(fd)
    # even root on the host cannot change it
    try:
        fd = os.open(f"/proc/{pid}/exe", os.O_WRONLY)
    except OSError:
        pass
    else:
        try:
            with pytest.raises(OSError):
                os.write(fd, b"ZYGOTE-ATTACK")
        finally:
            os.close(fd)
    with open(f"/proc/{pid}/status") as f:
        assert f.read().startswith("Name:\tzygote-runc\n")
    assert rt("delete", "--force", name).returncode == 0


# ---- CVE-2024-21626: a host fd as the container's cwd ---------------------------------------------

FDS = range(3, 21)
EMULATED_V2 = "umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec \"$@\""


def under_v2(argv):
    """argv in a private mount namespace whose /sys/fs/cgroup is cgroup2: the host seen as a pure
    v2 host (the runtime then opens the container's cgroup for CLONE_INTO_CGROUP)."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", EMULATED_V2, "sh", *argv]


def v2_or_skip():
    r = subprocess.run(under_v2(["stat", "-f", "-c", "%T", "/sys/fs/cgroup"]), capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0 or r.stdout.strip() != "cgroup2fs":
        pytest.skip(f"cannot mount cgroup2 in a private mount namespace: {r.stderr.strip()}")


# In the container: where it started, as getcwd sees it ("(unreachable)/..." outside its root), and
# whether the host's marker file is there.
CWD_PROBE = ["sh", "-c", "pwd -P; ls host-marker 2>/dev/null && echo HOST-TREE; exit 0"]


def assert_refused_or_inside(r, what):
    if r.returncode != 0:
        assert "cwd" in r.stderr or "container process" in r.stderr, (what, r.stderr)
        return
    out = r.stdout or ""
    assert "HOST-TREE" not in out and "unreachable" not in out, (what, out)
    assert out.startswith("/"), (what, out, r.stderr)


@pytest.fixture
def leaked_dir(tmp_path):
    """A host directory the runtime's caller leaks to it as an open fd (not CLOEXEC): the runtime
    must not hand it on to the container either."""
    d = tmp_path / "host-dir"
    d.mkdir()
    (d / "host-marker").write_text("host\n")
    fd = os.open(str(d), os.O_RDONLY | os.O_DIRECTORY)
    os.set_inheritable(fd, True)
    yield fd
    os.close(fd)


def run_with_cwd(runc, bundle, name, cwd, leaked_fd, v2):
    bundle.config["process"]["cwd"] = cwd
    bundle.config["process"]["args"] = CWD_PROBE
    bundle.save()
    argv = [runc.binary, "--root", runc.root, "run", "--bundle", bundle.path, name]
    r = subprocess.run(under_v2(argv) if v2 else argv, capture_output=True, text=True, timeout=60,
                       pass_fds=(leaked_fd,))
    if v2:
        # what a failed run left behind is in the v2 view only: removed there
        subprocess.run(under_v2([runc.binary, "--root", runc.root, "delete", "--force", name]),
                       capture_output=True, timeout=60)
    return r


@pytest.mark.parametrize("v2", [False, True], ids=["host-cgroups", "emulated-v2"])
def test_cwd_through_a_runtime_fd_with_run(runc, bundle, leaked_dir, v2):
    if v2:
        v2_or_skip()
    for fd in sorted(set(FDS) | {leaked_dir}):
        r = run_with_cwd(runc, bundle, cid(), f"/proc/self/fd/{fd}", leaked_dir, v2)
        assert_refused_or_inside(r, f"run, cwd /proc/self/fd/{fd}")
    # and through the runtime's init, and its parent
    for cwd in ("/proc/1/cwd", "/proc/self/cwd/..", f"/proc/self/fd/{leaked_dir}/.."):
        r = run_with_cwd(runc, bundle, cid(), cwd, leaked_dir, v2)
        assert_refused_or_inside(r, f"run, cwd {cwd}")
    # an ordinary cwd, and one through a symlink of the image, still work (inside the root)
    os.makedirs(os.path.join(bundle.rootfs, "srv", "app"))
    os.symlink("/srv/app", os.path.join(bundle.rootfs, "app"))
    for cwd, want in (("/srv/app", "/srv/app"), ("/app", "/srv/app")):
        r = run_with_cwd(runc, bundle, cid(), cwd, leaked_dir, v2)
        assert r.returncode == 0 and r.stdout.splitlines()[0] == want, (cwd, r.stdout, r.stderr)


@pytest.mark.parametrize("v2", [False, True], ids=["host-cgroups", "emulated-v2"])
def test_cwd_through_a_runtime_fd_with_create(runc, bundle, leaked_dir, tmp_path, v2):
    """create, then start: the cwd is resolved while create holds every fd of its own."""
    if v2:
        v2_or_skip()
    bundle.config["process"]["args"] = CWD_PROBE
    for fd in list(range(3, 13)) + [leaked_dir]:
        name = cid()
        bundle.config["process"]["cwd"] = f"/proc/self/fd/{fd}"
        bundle.save()
        out = tmp_path / f"out-{fd}"
        rt = f"{runc.binary} --root {runc.root}"
        script = (f"{rt} create --bundle {bundle.path} {name} > {out}; rc=$?; "
                  f"if [ $rc = 0 ]; then {rt} start {name}; "
                  f"for i in $(seq 100); do grep -q '^/\\|unreachable' {out} && break; sleep 0.05; done; fi; "
                  f"{rt} delete --force {name}; exit $rc")
        argv = ["sh", "-c", script]
        r = subprocess.run(under_v2(argv) if v2 else argv, capture_output=True, text=True, timeout=60,
                           pass_fds=(leaked_dir,))
        r.stdout = out.read_text() if out.exists() else ""
        assert_refused_or_inside(r, f"create, cwd /proc/self/fd/{fd}")


@pytest.mark.parametrize("v2", [False, True], ids=["host-cgroups", "emulated-v2"])
def test_exec_cwd_through_a_runtime_fd(runc, bundle, leaked_dir, tmp_path, v2):
    """exec --cwd into a running container: one script (in the v2 view when emulated) runs the
    container, every exec with its output in files, and deletes the container."""
    if v2:
        v2_or_skip()
    name = cid()
    bundle.set_args("sleep", "1000")
    cwds = [f"/proc/self/fd/{fd}" for fd in sorted(set(FDS) | {leaked_dir})] + ["/proc/1/cwd/..", "/tmp"]
    rt = f"{runc.binary} --root {runc.root}"
    probe = " ".join(f"'{a}'" for a in CWD_PROBE)
    lines = [f"{rt} run --detach --bundle {bundle.path} {name} || exit 1"]
    for k, cwd in enumerate(cwds):
        lines.append(f"{rt} exec --cwd {cwd} {name} {probe} > {tmp_path}/out-{k} 2> {tmp_path}/err-{k}; "
                     f"echo $? > {tmp_path}/rc-{k}")
    lines.append(f"{rt} delete --force {name}")
    argv = ["sh", "-c", "\n".join(lines)]
    r = subprocess.run(under_v2(argv) if v2 else argv, capture_output=True, text=True, timeout=300,
                       pass_fds=(leaked_dir,))
    assert r.returncode == 0, r.stderr
    for k, cwd in enumerate(cwds):
        res = subprocess.CompletedProcess([], int((tmp_path / f"rc-{k}").read_text()),
                                          (tmp_path / f"out-{k}").read_text(), (tmp_path / f"err-{k}").read_text())
        if cwd == "/tmp":
            assert res.returncode == 0 and res.stdout.splitlines()[0] == "/tmp", res.stderr
        else:
            assert_refused_or_inside(res, f"exec --cwd {cwd}")


# ---- a namespace joined by path is of the type it is declared as ----------------------------------

NS_FILES = {"pid": "pid", "network": "net", "mount": "mnt", "ipc": "ipc", "uts": "uts", "user": "user",
            "cgroup": "cgroup"}


@pytest.fixture
def victim_namespaces():
    """A process in namespaces of its own (mount, uts, ipc, net, cgroup, user), standing in for
    the host: a runtime that joined the wrong kind would change these, not the machine's."""
    p = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--uts", "--ipc", "--net", "--cgroup",
                          "--user", "--map-root-user", "sh", "-c", "hostname victim; echo ready; exec sleep 1000"],
                         stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline() != "ready\n":
            pytest.skip("unshare cannot make the namespaces here")
        yield p.pid
    finally:
        p.kill()
        p.wait(timeout=10)


def root_and_bundle(mountinfo, bundle_path):
    """The root mount and every mount of the bundle in a mount namespace: what a runtime doing its
    mount work in the wrong namespace changes (pivot_root onto the rootfs). Not the whole table:
    other users of the machine mount and unmount meanwhile."""
    with open(mountinfo) as f:
        return [l for l in f if l.split()[4] == "/" or bundle_path in l]


def test_namespace_path_of_another_type_is_refused(runc, bundle, victim_namespaces):
    pid = victim_namespaces
    victim_root = root_and_bundle(f"/proc/{pid}/mountinfo", bundle.path)
    host_root = root_and_bundle("/proc/self/mountinfo", bundle.path)
    base = [ns for ns in bundle.config["linux"]["namespaces"]]
    bundle.config.pop("hostname", None)  # needs a uts namespace of the container's own
    tried, started, unclear = 0, [], []
    for declared in NS_FILES:
        for other, file in NS_FILES.items():
            if other == declared:
                continue
            path = f"/proc/{pid}/ns/{file}"
            namespaces = [ns for ns in base if ns["type"] != declared]
            namespaces.append({"type": declared, "path": path})
            bundle.config["linux"]["namespaces"] = namespaces
            bundle.set_args("sh", "-c", "echo started")
            name = cid()
            r = runc("run", "--bundle", bundle.path, name)
            what = f"{declared} -> {file}"
            if r.returncode == 0 or "started" in (r.stdout or ""):
                started.append(what)
            if (f"{declared} namespace path {path}: is a {other} namespace" not in r.stderr or
                    os.path.exists(os.path.join(runc.root, name))):
                unclear.append((what, r.stderr))
            tried += 1
    assert tried == 42
    assert root_and_bundle(f"/proc/{pid}/mountinfo", bundle.path) == victim_root, "the victim's mounts changed"
    assert root_and_bundle("/proc/self/mountinfo", bundle.path) == host_root, "the host's mounts changed"
    r = subprocess.run(["nsenter", "-t", str(pid), "-u", "hostname"], capture_output=True, text=True, timeout=10)
    assert r.stdout.strip() == "victim", r.stderr
    assert started == [], "containers started with a namespace of another type"
    assert unclear == [], "refused, but not before anything was made, or without saying why"
    assert processes_naming(bundle.path) == []


def test_namespace_path_that_is_no_namespace_is_refused(runc, bundle, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    for path in (str(plain), "/proc/self/exe"):
        bundle.config["linux"]["namespaces"] = [ns for ns in bundle.config["linux"]["namespaces"]
                                                if ns["type"] != "ipc"] + [{"type": "ipc", "path": path}]
        bundle.set_args("sh", "-c", "echo started")
        r = runc("run", "--bundle", bundle.path, cid())
        assert r.returncode != 0 and f"ipc namespace path {path}: not a namespace file" in r.stderr, r.stderr


def test_namespace_path_of_its_own_type_is_joined(runc, bundle, victim_namespaces):
    pid = victim_namespaces
    bundle.config["linux"]["namespaces"] = [ns for ns in bundle.config["linux"]["namespaces"]
                                            if ns["type"] != "uts"] + [{"type": "uts", "path": f"/proc/{pid}/ns/uts"}]
    del bundle.config["hostname"]
    bundle.set_args("hostname")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0 and r.stdout == "victim\n", r.stderr


# ---- device nodes: the config's mode, not the caller's umask's ------------------------------------

def test_device_modes_ignore_the_callers_umask(runc, bundle):
    devices = {"/dev/zyg-660": 0o660, "/dev/zyg-666": 0o666, "/dev/zyg-600": 0o600, "/dev/zyg-640": 0o640}
    bundle.config["linux"]["devices"] = [{"path": p, "type": "c", "major": 1, "minor": 3, "fileMode": m,
                                          "uid": 0, "gid": 0} for p, m in devices.items()]
    bundle.set_args("sh", "-c", "stat -c '%n %a' /dev/zyg-* /dev/null /dev/zero /dev/tty")
    for umask in (0o027, 0o077, 0o022):
        r = runc("run", "--bundle", bundle.path, cid(), preexec_fn=lambda: os.umask(umask))
        assert r.returncode == 0, r.stderr
        got = dict(line.split() for line in r.stdout.splitlines())
        for p, m in devices.items():
            assert got[p] == f"{m:o}", (oct(umask), p, r.stdout)
        for p in ("/dev/null", "/dev/zero", "/dev/tty"):
            assert got[p] == "666", (oct(umask), p, r.stdout)
