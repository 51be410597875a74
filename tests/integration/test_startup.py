# SPDX-License-Identifier: MIT
"""zygoted's command line: --help, --version, --tier (clone must fail here), the
ZYGOTE_DISABLE_FEATURES switch, --check-profile, start-up errors."""
import json
import os
import platform
import re
import struct
import subprocess

import pytest

import zytest

L = "io.zygote.Launcher."
DISABLE_ALL = {"ZYGOTE_DISABLE_FEATURES": "clone_filter,capbset_drop_mask"}


def run_zygoted(bins, *args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ZYGOTE_")}
    e.update(env or {})
    return subprocess.run([bins["zygoted"], *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env=e)


def test_help_and_version(bins):
    h = run_zygoted(bins, "--help")
    assert h.returncode == 0
    for opt in ("--socket", "--profiles", "--tier", "--check-profile", "--version", "--help",
                "auto", "clone", "inherit", "load", "ZYGOTE_DISABLE_FEATURES"):
        assert opt in h.stdout, f"--help does not mention {opt}"
    v = run_zygoted(bins, "--version")
    assert v.returncode == 0 and v.stdout.startswith("zygoted ") and len(v.stdout.split()) == 2


@pytest.mark.parametrize("args", [["--tier", "fast"], ["--bogus"], ["extra-argument"],
                                  ["--profiles", "/nonexistent-zygote-dir"]],
                         ids=["bad-tier", "unknown-option", "extra-argument", "missing-profile-dir"])
def test_bad_command_line(bins, daemons, args):
    d = daemons.workdir()
    sock = os.path.join(d, "s.sock")
    r = run_zygoted(bins, "--socket", sock, *args)
    assert r.returncode != 0
    assert r.stderr.strip(), "no message on stderr"
    assert not os.path.exists(sock)


@pytest.mark.parametrize("env", [{}, DISABLE_ALL], ids=["probed", "disabled"])
def test_forced_clone_tier_fails_at_startup(bins, daemons, env):
    d = daemons.workdir()
    sock = os.path.join(d, "s.sock")
    r = run_zygoted(bins, "--socket", sock, "--profiles", bins["profiles"], "--tier", "clone", env=env)
    if r.returncode == 0 and not env:
        pytest.skip("this kernel has SECCOMP_CLONE_FILTER: --tier clone is allowed here")
    assert r.returncode != 0
    assert "SECCOMP_CLONE_FILTER" in r.stderr, r.stderr
    if env:
        assert "ZYGOTE_DISABLE_FEATURES" in r.stderr, "the message does not say why the feature is off"
    assert not os.path.exists(sock), "the failed daemon left its socket behind"


def test_features_reported(daemons, needs_root):
    """On this kernel both RFC features are absent; status says so, per profile with its tier."""
    d = daemons()
    st = d.status()
    assert st["features"] == {"clone_filter": False, "capbset_drop_mask": False}
    profiles = {p["name"]: p for p in st["profiles"]}
    assert profiles["default"]["tier"] == "inherit"
    assert "SECCOMP_CLONE_FILTER" in profiles["default"]["tierReason"]
    for p in profiles.values():
        assert p["bpfInstructions"] > 0 and p["longestPath"] > 0
        assert len(p["hash"]) == 64
        if p["tier"] == "inherit":
            assert isinstance(p.get("referencePid"), int), p
    with d.connect() as c:
        lp = c.call(L + "ListProfiles").parameters["profiles"]
    assert {p["name"]: p for p in lp} == profiles


def test_disable_features_env(daemons, needs_root):
    """ZYGOTE_DISABLE_FEATURES turns the features off: the fallbacks serve every profile."""
    d = daemons(env=DISABLE_ALL)
    # The probes did not run: the log says the features were switched off, and by what.
    assert d.log().count("disabled by ZYGOTE_DISABLE_FEATURES") >= 2, d.log()
    st = d.status()
    assert st["features"] == {"clone_filter": False, "capbset_drop_mask": False}
    profiles = {p["name"]: p for p in st["profiles"]}
    assert profiles["default"]["tier"] == "inherit" and profiles["nonet"]["tier"] == "inherit"
    with d.connect() as c:
        s, _, final, _ = zytest.spawn_and_status(c, ["cat"])
    # The PR_CAPBSET_DROP fallback loop gives the same bounding set.
    assert int(s["CapBnd"], 16) == zytest.DOCKER_CAPS_MASK
    assert final["exitCode"] == 0


def test_tier_forced_in_status(daemons, needs_root):
    for tier in ("load", "inherit"):
        d = daemons(tier=tier)
        profiles = d.profiles()
        assert {"default", "nonet"} <= set(profiles)
        for p in profiles.values():
            assert p["tier"] == tier, p
            assert tier in p["tierReason"], p
        if tier == "load":
            assert "strict" in profiles
        d.stop()


def test_socket_in_use(daemons, needs_root):
    first = daemons()
    second = zytest.Daemon(first.bins, first.dir, profile_dirs=[first.bins["profiles"]])
    second.logpath = os.path.join(first.dir, "second.log")
    r = subprocess.run(second.command(), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode != 0, "a second daemon took over a live socket"
    assert first.alive()
    assert first.status()["version"]


def test_no_profiles(bins, daemons):
    empty = daemons.workdir()
    sock = os.path.join(empty, "s.sock")
    r = run_zygoted(bins, "--socket", sock, "--profiles", empty)
    assert r.returncode != 0
    assert empty in r.stderr


def test_one_bad_profile_among_good(daemons, bins, needs_root):
    extra = daemons.workdir()
    with open(os.path.join(extra, "broken.json"), "w") as f:
        f.write('{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [')
    d = daemons(profile_dirs=[bins["profiles"], extra])
    names = set(d.profiles())
    assert {"default", "nonet", "strict"} <= names and "broken" not in names
    assert "broken.json" in d.log()


# ---- --check-profile -------------------------------------------------------------------------------

GOOD_DOCKER = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
               "syscalls": [{"names": ["read", "write", "exit_group", "execve"], "action": "SCMP_ACT_ALLOW"}]}

BAD_FILES = [
    # (file name, content, text the message must contain besides the path)
    ("syntax.json", '{"defaultAction": "SCMP_ACT_ERRNO",\n "syscalls": [\n', None),
    ("action.json", json.dumps({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["write"], "action": "SCMP_ACT_FOO"}]}), "syscalls[1].action"),
    ("default.json", json.dumps({"defaultAction": 5, "syscalls": []}), "defaultAction"),
    ("names.json", json.dumps({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
        {"names": "read", "action": "SCMP_ACT_ALLOW"}]}), "syscalls[0].names"),
    ("caps.json", json.dumps({"name": "caps", "seccomp": GOOD_DOCKER, "capabilities": ["CAP_CHOWN", "CAP_NOPE"]}),
     "capabilities[1]"),
    ("nnp.json", json.dumps({"name": "nnp", "seccomp": GOOD_DOCKER, "capabilities": [], "noNewPrivileges": "yes"}), "noNewPrivileges"),
]


@pytest.mark.parametrize("name", ["default", "nonet", "strict"])
def test_check_profile_bundled(bins, name):
    path = os.path.join(bins["profiles"], f"{name}.json")
    r = run_zygoted(bins, "--check-profile", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert name in r.stdout
    assert f"profile:       {name} (" in r.stdout
    for line in ("instructions:  ", "longest path:  ", "worker setup:  allowed", "sha256:        "):
        assert line in r.stdout, (line, r.stdout)
    if name == "default":
        assert "capabilities:  CAP_CHOWN CAP_DAC_OVERRIDE" in r.stdout
        assert "CAP_AUDIT_WRITE CAP_SETFCAP\n" in r.stdout
        if platform.machine() == "x86_64":
            assert "architectures: SCMP_ARCH_X86_64 SCMP_ARCH_X86 SCMP_ARCH_X32\n" in r.stdout


def test_check_profile_plain_docker_file(bins, daemons):
    d = daemons.workdir()
    path = os.path.join(d, "plain.json")
    with open(path, "w") as f:
        json.dump(GOOD_DOCKER, f)
    r = run_zygoted(bins, "--check-profile", path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "plain" in r.stdout
    # Docker's 14 capabilities are kept for a plain file.
    assert "CAP_AUDIT_WRITE" in r.stdout.upper() or "a80425fb" in r.stdout.lower(), r.stdout


@pytest.mark.parametrize("fname,content,where", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_check_profile_bad(bins, daemons, fname, content, where):
    d = daemons.workdir()
    path = os.path.join(d, fname)
    with open(path, "w") as f:
        f.write(content)
    r = run_zygoted(bins, "--check-profile", path)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    msg = r.stdout + r.stderr
    assert path in msg, f"the message does not name the file: {msg!r}"
    if where:
        assert where in msg, f"the message does not name the JSON location {where}: {msg!r}"


def test_check_profile_dump_bpf(bins, daemons):
    """--dump-bpf writes the program --check-profile describes: as many struct sock_filter (8
    bytes each) as it counts, the first loading the architecture, the last a return."""
    out = os.path.join(daemons.workdir(), "default.bpf")
    r = run_zygoted(bins, "--check-profile", os.path.join(bins["profiles"], "default.json"), "--dump-bpf", out)
    assert r.returncode == 0, r.stdout + r.stderr
    n = int(re.search(r"^instructions:\s+(\d+)$", r.stdout, re.M).group(1))
    with open(out, "rb") as f:
        prog = f.read()
    assert len(prog) == 8 * n and n > 100, (len(prog), n)
    first = struct.unpack("=HBBI", prog[:8])
    last = struct.unpack("=HBBI", prog[-8:])
    assert first[0] == 0x20 and first[3] == 4, first  # BPF_LD|BPF_W|BPF_ABS of seccomp_data.arch
    assert last[0] & 0x07 == 0x06, last                # BPF_RET


@pytest.mark.parametrize("args,code", [(["--dump-bpf", "/tmp/x.bpf"], 2),
                                       (["--check-profile", "DEFAULT", "--dump-bpf", "/nonexistent-zygote/x.bpf"], 1)])
def test_dump_bpf_refused(bins, args, code):
    args = [os.path.join(bins["profiles"], "default.json") if a == "DEFAULT" else a for a in args]
    r = run_zygoted(bins, *args)
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "--dump-bpf" in r.stderr


def test_check_profile_missing_file(bins):
    r = run_zygoted(bins, "--check-profile", "/nonexistent-zygote/x.json")
    assert r.returncode == 1
    assert "/nonexistent-zygote/x.json" in r.stdout + r.stderr


def test_later_profiles_dir_overrides(daemons, bins, needs_root):
    """--profiles is repeatable; a later directory's profile replaces one of the same name."""
    extra = daemons.workdir()
    path = os.path.join(extra, "default.json")
    with open(path, "w") as f:
        json.dump({"name": "default", "seccomp": {"defaultAction": "SCMP_ACT_ALLOW"},
                   "capabilities": [], "noNewPrivileges": True}, f)
    d = daemons(profile_dirs=[bins["profiles"], extra])
    profiles = d.profiles()
    assert profiles["default"]["path"] == path, profiles["default"]
    assert profiles["default"]["capabilities"] == []
    assert profiles["nonet"]["path"].startswith(bins["profiles"])
    with d.connect() as c:
        st, _, final, _ = zytest.spawn_and_status(c, ["cat"])
    assert int(st["CapBnd"], 16) == 0 and st["Seccomp"] == "2"


class SystemPathDaemon(zytest.Daemon):
    """zygoted started by hand on the system socket path, /run/zygote/zygoted.sock, in a mount
    namespace of its own (a tmpfs on /run, and /etc/group the test's file): the host's /run is
    untouched. Its socket is reached from here through /proc/PID/root."""

    def __init__(self, bins, workdir, group_file):
        super().__init__(bins, workdir)
        self.group_file = group_file

    def command(self):
        script = ('mount -t tmpfs -o mode=0755 zy-run /run && mount --bind "$1" /etc/group && shift && '
                  'exec "$@"')
        cmd = [self.bins["zygoted"], "--socket", "/run/zygote/zygoted.sock"]
        for d in self.profile_dirs:
            cmd += ["--profiles", d]
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", self.group_file, *cmd]

    def start(self, wait=True):
        super().start(wait=False)
        self.socket = f"/proc/{self.proc.pid}/root/run/zygote/zygoted.sock"
        self.wait_ready()
        return self


@pytest.mark.parametrize("group_line,gid", [("zygote:x:4242:\n", 4242), ("", 0)], ids=["group", "no-group"])
def test_system_socket_started_by_hand_is_the_units(daemons, needs_root, group_line, gid):
    """A root zygoted that makes the system socket itself gives it what zygoted.socket gives it:
    mode 0660 and group zygote (root's alone, with a warning, where the group does not exist),
    never every uid; a socket elsewhere stays connectable by every uid."""
    workdir = daemons.workdir()
    group = os.path.join(workdir, "group")
    with open(group, "w") as f:
        f.write("root:x:0:\n" + group_line)
    d = SystemPathDaemon(daemons.bins, workdir, group)
    daemons.daemons.append(d)
    d.start()
    st = os.stat(d.socket)
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o660, 0, gid)
    assert ("no group zygote" in d.log()) == (gid == 0), d.log()
    other = daemons()
    assert os.stat(other.socket).st_mode & 0o777 == 0o666
