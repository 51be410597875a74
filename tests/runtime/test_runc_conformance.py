# SPDX-License-Identifier: MIT
"""zygote-runc where runc's own behaviour is the reference (issue 36): a profile written for runc
runs unchanged, runc's defaults, a terminal of the runtime's own for a foreground run, and the
small differences runc's and crun's suites found. Each test says what runc does."""
import json
import os
import select
import uuid

import pytest

from containertools import PODMAN_PROFILE


def cid():
    return "conf-" + uuid.uuid4().hex[:12]


def profile_without_openat2(errno):
    """Podman's profile as one written before openat2 existed (or a hand-written allow-list): the
    call falls to the default action, which answers errno. runc runs such bundles; the runtime's
    own steps must not need the call once the filter is loaded."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    profile["defaultErrnoRet"] = errno
    profile.pop("defaultErrno", None)
    for rule in profile["syscalls"]:
        rule["names"] = [n for n in rule["names"] if n != "openat2"]
    profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
    return profile


def old_profile_bundle(bundle, errno, nnp):
    bundle.config["linux"]["seccomp"] = profile_without_openat2(errno)
    bundle.config["process"]["noNewPrivileges"] = nnp
    bundle.config["process"]["cwd"] = "/tmp"
    bundle.save()


# what the container reports: its cwd, and that the filter is on
REPORT = "pwd; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"


def assert_report(text, nnp):
    lines = text.split("\n")
    assert lines[0] == "/tmp", text
    assert "Seccomp:\t2" in text, text
    assert f"NoNewPrivs:\t{int(nnp)}" in text, text


def profile_older_than(name):
    """Podman's profile as one written before the system call `name` existed: every name whose
    number (native) is `name`'s or higher left out. runc 1.1 answers ENOSYS to those (its stub),
    so that a newer libc falls back; below the highest named, the default action (EPERM) stays."""
    import ctypes
    lib = ctypes.CDLL("libseccomp.so.2")
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    first = lib.seccomp_syscall_resolve_name(name.encode())
    profile = profile_without_openat2(1)
    for rule in profile["syscalls"]:
        rule["names"] = [n for n in rule["names"] if lib.seccomp_syscall_resolve_name(n.encode()) < first]
    profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
    return profile


NEWER_SYSCALL_CHECK = "try-syscall io_uring_setup; try-syscall reboot"


def assert_newer_enosys(out):
    """io_uring_setup (newer than the profile): ENOSYS; reboot (older, not allowed): EPERM."""
    assert "io_uring_setup errno=38" in out and "reboot errno=1" in out, out


def wait_exit(pid, timeout=30):
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        assert select.select([pidfd], [], [], timeout)[0], f"pid {pid} still running"
    finally:
        os.close(pidfd)


OLD_PROFILES = pytest.mark.parametrize("errno,nnp", [(1, False), (38, False), (1, True), (38, True)],
                                       ids=["eperm", "enosys", "eperm-nnp", "enosys-nnp"])


@OLD_PROFILES
def test_profile_without_openat2_run(runc, bundle, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sh", "-c", REPORT + "; exit 3")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 3, r.stderr
    assert_report(r.stdout, nnp)


@OLD_PROFILES
def test_profile_without_openat2_create_start(runc, bundle, tmp_path, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sh", "-c", REPORT)
    name, out, pid_file = cid(), tmp_path / "out", tmp_path / "pid"
    with open(out, "w") as f:
        r = runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name, stdout=f)
    assert r.returncode == 0, r.stderr
    assert runc("start", name).returncode == 0
    wait_exit(int(pid_file.read_text()))
    assert runc.state(name)["status"] == "stopped"
    assert_report(out.read_text(), nnp)
    assert runc("delete", name).returncode == 0


@OLD_PROFILES
def test_profile_without_openat2_exec(runc, bundle, errno, nnp):
    old_profile_bundle(bundle, errno, nnp)
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    r = runc("exec", name, "sh", "-c", REPORT + "; exit 4")
    assert r.returncode == 4, r.stderr
    assert_report(r.stdout, nnp)
    assert runc("delete", "--force", name).returncode == 0


# ---- the small differences runc's and crun's suites found (issue 36) ---------------------------------

RUNC = "/usr/sbin/runc"


def both(runc, bundle, tmp_path, *args, env=None):
    """`run` of the bundle under zygote-runc and, where it is installed, Debian's runc (own roots):
    [(status, stdout)] for each."""
    import subprocess
    seen = []
    for binary in (runc.binary, RUNC):
        if binary == RUNC and not os.access(RUNC, os.X_OK):
            continue
        root = str(tmp_path / f"root-{len(seen)}")
        name = cid()
        r = subprocess.run([binary, "--root", root, "run", "--bundle", bundle.path, *args, name], capture_output=True,
                           text=True, timeout=60, env=env)
        subprocess.run([binary, "--root", root, "delete", "--force", name], capture_output=True)
        seen.append((r.returncode, r.stdout, r.stderr))
    return seen


def test_run_keep(runc, bundle):
    """runc's run.bats "--keep": the stopped container stays (state, delete) until deleted."""
    bundle.set_args("sh", "-c", "exit 3")
    name = cid()
    r = runc("run", "--keep", "--bundle", bundle.path, name)
    assert r.returncode == 3, r.stderr
    assert runc.state(name)["status"] == "stopped"
    assert runc("delete", name).returncode == 0
    assert runc("state", name).returncode != 0


def test_empty_home_and_a_variable_set_twice(runc, bundle, tmp_path):
    """An empty HOME= is the user's home, as runc's setupUser makes it; a variable set twice is set
    once, the last value at the first place (runc's setenv of each in turn)."""
    with open(os.path.join(bundle.rootfs, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    bundle.config["process"]["env"] = ["A=1", "HOME=", "PATH=/bin", "A=2", "B=3", "PATH=/usr/bin:/bin"]
    bundle.set_args("env")
    seen = both(runc, bundle, tmp_path)
    for status, out, err in seen:
        assert status == 0, err
        assert out.split() == ["A=2", "HOME=/root", "PATH=/usr/bin:/bin", "B=3"], out


def test_exec_env_set_once(runc, bundle):
    bundle.config["process"]["env"] = ["A=1", "PATH=/bin"]
    bundle.set_args("sleep", "1000")
    name = cid()
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    r = runc("exec", "-e", "A=5", "-e", "C=6", "-e", "C=7", name, "env")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["A=5", "PATH=/bin", "C=7", "HOME=/"], r.stdout
    assert runc("delete", "--force", name).returncode == 0


def test_hooks_without_env_inherit(runc, bundle, tmp_path):
    """A hook without "env" gets the environment of whoever runs it, as runc's exec.Cmd with no Env:
    the runtime's for prestart, createRuntime, poststart and poststop, the container process's for
    createContainer and startContainer (run by the init); "env": [] stays empty."""
    import subprocess
    out = tmp_path / "hooks"
    out.mkdir()
    os.chmod(out, 0o777)

    def hook(kind, env=None):
        h = {"path": "/bin/sh", "args": ["sh", "-c", f"env > {out}/{kind}"]}
        if env is not None:
            h["env"] = env
        return h
    bundle.config["process"]["env"] = ["PATH=/bin", "IN_CONTAINER=1"]
    bundle.config["root"]["readonly"] = False
    bundle.config["hooks"] = {"createRuntime": [hook("createRuntime")], "poststart": [hook("poststart", [])],
                              "createContainer": [hook("createContainer")],
                              "startContainer": [{"path": "/bin/sh",
                                                  "args": ["sh", "-c", "env > /tmp/startContainer"]}]}
    bundle.set_args("cat", "/tmp/startContainer")
    env = dict(os.environ, ZYGOTE_RUNTIME_MARK="runtime")
    r = subprocess.run([runc.binary, "--root", runc.root, "run", "--bundle", bundle.path, cid()], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "ZYGOTE_RUNTIME_MARK=runtime" in (out / "createRuntime").read_text()
    assert (out / "poststart").read_text().split() in ([], ["PWD=/"], [f"PWD={os.getcwd()}"])
    created = (out / "createContainer").read_text().split()
    assert "IN_CONTAINER=1" in created and not any(e.startswith("ZYGOTE_RUNTIME_MARK") for e in created)
    assert "IN_CONTAINER=1" in r.stdout.split(), r.stdout


def test_missing_cwd_is_made(runc, bundle, tmp_path):
    """runc makes a missing process.cwd (0755) inside the root, before a read-only root."""
    bundle.config["process"]["cwd"] = "/work/here"
    bundle.set_args("sh", "-c", "pwd; stat -c %a .")
    for status, out, err in both(runc, bundle, tmp_path):
        assert status == 0, err
        assert out.split() == ["/work/here", "755"], out
    # made inside the root: a symlink of the image to the host's / leads nowhere outside it
    os.symlink("/", os.path.join(bundle.rootfs, "escape"))
    made = "zygote-cwd-" + cid()
    bundle.config["process"]["cwd"] = "/escape/" + made
    bundle.save()
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["/" + made, "755"], r.stdout
    assert not os.path.exists("/" + made)
    assert os.path.isdir(os.path.join(bundle.rootfs, made))


def test_loopback_up_in_a_new_network_namespace(runc, bundle, tmp_path):
    bundle.set_args("sh", "-c", "cat /sys/class/net/lo/operstate /sys/class/net/lo/flags")
    for status, out, err in both(runc, bundle, tmp_path):
        assert status == 0, err
        assert int(out.split()[1], 16) & 1, out  # IFF_UP


@pytest.mark.parametrize("with_hostname", [False, True], ids=["alone", "beside-hostname"])
def test_kernel_hostname_sysctl(runc, bundle, with_hostname):
    """runc 1.1 and crun 1.8 (its suite's uts-sysctl) refuse a kernel.hostname sysctl, alone or
    beside "hostname": the field says the container's name."""
    if not with_hostname:
        bundle.config.pop("hostname", None)
    bundle.config["linux"]["sysctl"] = {"kernel.hostname": "from-sysctl"}
    bundle.set_args("hostname")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "kernel.hostname" in r.stderr, r.stderr
    # kernel.domainname has no field of its own: accepted in the container's uts namespace
    bundle.config["linux"]["sysctl"] = {"kernel.domainname": "from-sysctl"}
    bundle.set_args("cat", "/proc/sys/kernel/domainname")
    r = runc("run", "--bundle", bundle.path, cid())
    assert (r.returncode, r.stdout.strip()) == (0, "from-sysctl"), r.stderr


@pytest.mark.parametrize("args", [["--log-format", "yaml"], ["--log", "/nonexistent/dir/log"]],
                         ids=["log-format", "log"])
def test_invalid_global_log_options_refused(runc_bin, tmp_path, args):
    import subprocess
    r = subprocess.run([runc_bin, "--root", str(tmp_path), *args, "list"], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and r.stderr, r
    if os.access(RUNC, os.X_OK):
        assert subprocess.run([RUNC, "--root", str(tmp_path), *args, "list"], capture_output=True,
                              timeout=30).returncode != 0


def test_data_options_on_a_bind_are_ignored_and_logged(runc, bundle, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "f").write_text("x\n")
    bundle.config["mounts"].append({"destination": "/mnt", "type": "bind", "source": str(src),
                                    "options": ["rbind", "size=1m", "mode=700", "ro"]})
    bundle.set_args("sh", "-c", "cat /mnt/f; touch /mnt/g 2>/dev/null || echo ro")
    for status, out, err in both(runc, bundle, tmp_path):
        assert (status, out.split()) == (0, ["x", "ro"]), err
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    with open(runc.log) as f:
        assert "bind mount options \\\"size=1m,mode=700\\\" ignored" in f.read()
    # what would change the mount the container gets and is not implemented is refused by name:
    # a recursive clear, nosymfollow (rro and rnosuid are applied: test_runc_suite_rest.py; an id
    # mapping is made: test_idmap_mounts.py)
    for opt in ("rrw", "rsuid", "nosymfollow"):
        bundle.config["mounts"][-1]["options"] = ["rbind", opt]
        bundle.save()
        r = runc("run", "--bundle", bundle.path, cid())
        assert r.returncode != 0 and f'"{opt}" is not supported on a bind mount' in r.stderr, r.stderr


def test_kernel_memory_is_ignored_and_logged(runc, bundle, tmp_path):
    bundle.config["linux"]["resources"] = {"memory": {"kernel": 64 << 20, "limit": 128 << 20}}
    bundle.set_args("true")
    for status, out, err in both(runc, bundle, tmp_path):
        assert status == 0, err
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    with open(runc.log) as f:
        assert "linux.resources.memory.kernel: ignored" in f.read()


def test_failing_poststart_hook_fails_start(runc, bundle, tmp_path):
    """runc ends the container when a poststart hook fails, and the command fails; the hooks after
    it do not run."""
    mark = tmp_path / "second"
    bundle.config["hooks"] = {"poststart": [{"path": "/bin/false"},
                                            {"path": "/bin/sh", "args": ["sh", "-c", f"touch {mark}"]}]}
    bundle.set_args("sleep", "1000")
    name, pid_file = cid(), tmp_path / "pid"
    assert runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name).returncode == 0
    r = runc("start", name)
    assert r.returncode != 0 and "poststart hook 0" in r.stderr, r.stderr
    wait_exit(int(pid_file.read_text()))
    assert runc.state(name)["status"] == "stopped"
    assert not mark.exists()
    assert runc("delete", name).returncode == 0
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "poststart hook 0" in r.stderr, r.stderr


def test_device_path_with_a_trailing_slash(runc, bundle, tmp_path):
    bundle.config["linux"]["devices"] = [{"path": "/dev/zygote-null/", "type": "c", "major": 1, "minor": 3,
                                          "fileMode": 0o666, "uid": 0, "gid": 0}]
    bundle.config["linux"]["resources"] = {"devices": [{"allow": False, "access": "rwm"},
                                                       {"allow": True, "type": "c", "major": 1, "minor": 3,
                                                        "access": "rwm"}]}
    bundle.set_args("sh", "-c", "stat -c '%t:%T %F' /dev/zygote-null; echo x > /dev/zygote-null && echo ok")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["1:3 character special file", "ok"], r.stdout


def test_list_by_id(runc, bundle):
    """runc lists containers by id (list.bats), not in the directory's hash order."""
    bundle.set_args("true")
    stem = cid()
    names = [f"{stem}-{x}" for x in "qhzbmawe"]
    for n in names:
        assert runc("create", "--bundle", bundle.path, n).returncode == 0
    r = runc("list", "-q")
    assert r.stdout.split() == sorted(names), r.stdout
    for n in names:
        assert runc("delete", "--force", n).returncode == 0


def test_exec_cwd_entered_as_root_first(runc, bundle):
    """runc's cwd.bats "runc exec --user with no access to cwd": the cwd is entered first with the
    runtime's capabilities, then the user's ids are taken: root without CAP_DAC_OVERRIDE (spec's
    default capabilities) gets a cwd only uid 42 may search, as runc gives it."""
    home = os.path.join(bundle.rootfs, "root")
    os.chown(home, 42, 42)
    os.chmod(home, 0o700)
    bundle.config["process"]["cwd"] = "/root"
    bundle.config["process"]["user"] = {"uid": 42, "gid": 42}
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    r = runc("exec", "--user", "0", name, "pwd")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "/root\n"
    # the same for the init: a user the directory refuses still starts there
    os.chown(home, 0, 0)
    bundle.set_args("sh", "-c", "pwd; ls . || echo no-access")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "/root" and "no-access" in r.stdout, r.stdout


def test_cwd_tried_again_as_the_user(runc, bundle, open_tmp):
    """Where the runtime is refused and the user is not (runc tries again after the ids): in a user
    namespace, its root's capabilities do not cover a directory whose group is not mapped; the
    container's uid 1000 owns it and enters it."""
    base = 200000
    rootfs = bundle.rootfs
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
    bundle.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": base, "size": 65536}]
    bundle.config["process"]["user"] = {"uid": 1000, "gid": 1000}
    bundle.config["process"]["cwd"] = "/home-1000"
    # the user namespace's root reaches the bundle: every directory on the way is open to others
    for d in (open_tmp, bundle.path, rootfs):
        os.chmod(d, 0o755)
    home = os.path.join(rootfs, "home-1000")
    os.mkdir(home)
    os.chown(home, base + 1000, 4242)  # the group is not mapped
    os.chmod(home, 0o700)
    bundle.set_args("sh", "-c", "pwd; id -u")
    r = runc("run", "--bundle", bundle.path, cid())
    # a chroot (the fresh-root rehearsal) may make no user namespace: clone3 refused
    if r.returncode != 0 and ("uidMappings" in r.stderr or "clone3: operation not permitted" in r.stderr):
        pytest.skip(f"user namespace refused here: {r.stderr}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["/home-1000", "1000"], r.stdout
    # neither may enter it: refused, naming the step
    os.chown(home, base + 2000, 4242)
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "chdir" in r.stderr, r.stderr


def test_unknown_capabilities_ignored(runc, bundle):
    """runc 1.1 and crun ignore a capability name they do not know (a newer kernel's), in
    config.json and in exec --cap, with a warning: the process gets the ones known, never more."""
    caps = bundle.config["process"]["capabilities"]
    for s in caps:
        caps[s] = ["CAP_KILL", "CAP_UNKNOWN"]
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    with open(runc.log) as f:
        assert "CAP_UNKNOWN" in f.read()
    r = runc("exec", "--cap", "CAP_UNKNOWN", name, "grep", "-E", "^Cap(Eff|Bnd):", "/proc/self/status")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["CapEff:", "0000000000000020", "CapBnd:", "0000000000000020"], r.stdout


def test_help_in_runcs_words(runc_bin):
    """runc's help.bats: the NAME line says "... - Open Container Initiative runtime", every verb of
    runc's (checkpoint and restore too: refused when run) has COMMAND -h, and an unknown one
    answers urfave/cli's "No help topic"."""
    import subprocess
    r = subprocess.run([runc_bin, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "runc - Open Container Initiative runtime" in r.stdout.split("\n")[1], r.stdout
    for verb in ("checkpoint", "restore"):
        r = subprocess.run([runc_bin, verb, "-h"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stdout.split("\n")[1] == f"   zygote-runc {verb}", r.stdout
        r = subprocess.run([runc_bin, verb, "x"], capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and "not supported" in r.stderr, r.stderr
    r = subprocess.run([runc_bin, "foo", "-h"], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "No help topic for 'foo'" in r.stderr, r.stderr


def test_delete_force_of_an_init_frozen_elsewhere(runc, bundle):
    """crun's test_delete.py: root moves the init into a v1 freezer cgroup of its own and freezes
    it; `delete --force` gives up waiting after 10 s, as runc does, and the container is gone
    (before: 100 rounds of 10 s each)."""
    import time
    freezer = "/sys/fs/cgroup/freezer"
    if not os.path.exists(os.path.join(freezer, "freezer.state")) and not os.path.isdir(freezer):
        pytest.skip("no cgroup v1 freezer hierarchy here")
    frozen = os.path.join(freezer, "zygote-test-frozen-" + uuid.uuid4().hex[:8])
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    pid = runc.state(name)["pid"]
    pidfd = os.pidfd_open(pid)
    os.mkdir(frozen)
    try:
        with open(os.path.join(frozen, "tasks"), "w") as f:
            f.write(str(pid))
        with open(os.path.join(frozen, "freezer.state"), "w") as f:
            f.write("FROZEN")
        t0 = time.monotonic()
        r = runc("delete", "--force", name, timeout=60)
        took = time.monotonic() - t0
        assert r.returncode == 0, r.stderr
        assert took < 20, took
        assert runc("state", name).returncode != 0
    finally:
        with open(os.path.join(frozen, "freezer.state"), "w") as f:
            f.write("THAWED")
        # killed already: gone once thawed
        assert select.select([pidfd], [], [], 30)[0], f"pid {pid} still running"
        os.close(pidfd)
        os.rmdir(frozen)


def test_exec_pid_file_unwritable(runc, bundle):
    """runc's exec.bats "runc exec [exit codes]": a pid file that cannot be written fails the exec
    with 255, naming the path, and the process does not go on unseen."""
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    r = runc("exec", "--pid-file", "/non-existent/directory", name, "sh", "-c", "touch /tmp/ran; sleep 1000")
    assert r.returncode == 255 and "/non-existent/directory" in r.stderr, (r.returncode, r.stderr)
    r = runc("ps", name)
    assert r.returncode == 0 and "touch" not in r.stdout and r.stdout.count("sleep 1000") == 1, r.stdout


def test_delete_regex(runc, bundle):
    """crun's `delete --force --regex PATTERN` (its test_delete.py): every container of the root
    whose id the extended regular expression matches, and no other."""
    bundle.set_args("sleep", "1000")
    names = ["rx-a-" + uuid.uuid4().hex[:6], "rx-b-" + uuid.uuid4().hex[:6], "other-" + uuid.uuid4().hex[:6]]
    for n in names:
        r = runc("run", "--detach", "--bundle", bundle.path, n)
        assert r.returncode == 0, r.stderr
    r = runc("delete", "--force", "--regex", "^rx-(a|b)-")
    assert r.returncode == 0, r.stderr
    r = runc("list", "-q")
    assert r.stdout.split() == [names[2]], r.stdout
    r = runc("delete", "--regex", "(")
    assert r.returncode != 0 and "regular expression" in r.stderr, r.stderr


def test_hook_failure_in_runcs_words(runc, bundle):
    """runc's seccomp.bats "(startContainer hook)": a hook's failure says "error running hook" and
    names the signal in runc's (Go's) words, "bad system call"."""
    bundle.config["hooks"] = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "kill -SYS $$"]}]}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0
    assert "error running hook" in r.stderr and "killed by signal 31 (bad system call)" in r.stderr, r.stderr


def test_read_only_dev(runc, bundle):
    """runc's mounts.bats "runc run [ro /dev mount]": /dev's tmpfs with "ro" is made read-only
    after the devices and devpts below it (mounting it read-only first failed at devpts)."""
    for m in bundle.config["mounts"]:
        if m["destination"] == "/dev":
            m["options"].append("ro")
    bundle.set_args("sh", "-c", "grep -E '^(tmpfs /dev|devpts /dev/pts) ' /proc/mounts; touch /dev/x || echo refused;"
                    " test -c /dev/null && echo null")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    dev = [line for line in lines if line.startswith("tmpfs /dev ")]
    pts = [line for line in lines if line.startswith("devpts /dev/pts ")]
    assert dev and " ro," in dev[0], r.stdout
    assert pts and " rw," in pts[0], r.stdout
    assert "refused" in lines and "null" in lines, r.stdout


def test_debug_lines_in_runcs_shape(runc_bin, bundle, tmp_path):
    """runc's debug.bats and exec.bats `--debug`: logrus's lines (`time="..." level=debug msg="..."`)
    on stderr without --log, none on stderr with it (text or JSON lines in the log instead), and
    runc's words at the init's steps: its container setup, the child in init, the pipe closed
    when the init is held (create), about to exec (exec). A quote in a message stays escaped."""
    import re
    import subprocess
    root = str(tmp_path / "state")
    steps = ["nsexec container setup", "child process in init()", "init: closing the pipe to signal completion"]

    def call(*args):
        return subprocess.run([runc_bin, "--root", root, *args], capture_output=True, text=True, timeout=60)

    bundle.set_args("echo", "hello")
    r = call("--debug", "run", "--bundle", bundle.path, cid())
    assert r.returncode == 0 and r.stdout == "hello\n", r.stderr
    lines = [line for line in r.stderr.splitlines() if "level=debug" in line]
    assert lines and all(re.fullmatch(r'time="[-0-9T:]+Z" level=debug msg="([^"\\]|\\.)*"', x) for x in lines), lines
    for s in steps:
        assert any(s in x for x in lines), (s, r.stderr)
    for fmt in ("text", "json"):
        log = tmp_path / f"log.{fmt}"
        r = call("--debug", "--log", str(log), "--log-format", fmt, "run", "--bundle", bundle.path, cid())
        assert r.returncode == 0 and "level=debug" not in r.stderr and "nsexec" not in r.stderr, r.stderr
        text = log.read_text()
        if fmt == "json":
            msgs = [e["msg"] for e in map(json.loads, text.splitlines()) if e["level"] == "debug"]
        else:
            msgs = re.findall(r'^time="[^"]+" level=debug msg="(.*)"$', text, re.M)
        for s in steps:
            assert any(s in m for m in msgs), (s, text)
    # exec: the last step before execve is setns_init's
    bundle.set_args("sleep", "60")
    name = cid()
    # the container keeps the stdio it is given: none of this test's pipes
    assert subprocess.run([runc_bin, "--root", root, "run", "--detach", "--bundle", bundle.path, name],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=60).returncode == 0
    try:
        r = call("--debug", "exec", name, "true")
        assert r.returncode == 0, r.stderr
        for s in ("nsexec container setup", "child process in init()", "setns_init: about to exec"):
            assert s in r.stderr, (s, r.stderr)
        # a message quoting the user's words (here an unknown signal) stays one parsable line
        r = call("--debug", "--log", str(tmp_path / "log.q"), "kill", name, 'NO"SIG')
        assert r.returncode != 0
    finally:
        call("delete", "--force", name)
    quoted = [x for x in (tmp_path / "log.q").read_text().splitlines() if 'NO\\"SIG' in x]
    assert quoted and all(re.fullmatch(r'time="[^"]+" level=\w+ msg="([^"\\]|\\.)*"', x) for x in quoted), quoted


def test_newer_syscall_answers_enosys(runc, bundle):
    """runc's seccomp.bats "[seccomp -ENOSYS handling]": a call newer than every one the profile
    names answers ENOSYS (runc 1.1's stub), one it is older than the default action; the same
    program when zygoted compiles it (test_zygoted_containers.py)."""
    if not os.path.exists(os.path.join(bundle.rootfs, "bin", "try-syscall")):
        pytest.skip("no try-syscall-static built")
    bundle.config["linux"]["seccomp"] = profile_older_than("io_uring_setup")
    bundle.set_args("sh", "-c", NEWER_SYSCALL_CHECK)
    r = runc("--no-zygote", "run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert_newer_enosys(r.stdout)
