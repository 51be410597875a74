# SPDX-License-Identifier: MIT
"""Profiles from a run (launchctl run --record, launchctl profile check) with real programs: a
busybox pipeline, a Python script, a gcc compile, a socket server. Each is recorded, then run
under its profile (by the check, and for real through a zygoted that serves the file), then a
variant that calls something new is refused and the check names the call; two runs merge.

Every recording takes the path ZYTEST_RECORD_VIA names (launchctl run --record-via): "notify"
(seccomp user notification, integration-record) or "bpf" (zygoted's eBPF tracer,
integration-record-bpf), and each asserts that this path recorded it."""
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

import zytest
from zytest import NOBODY

TIMEOUT = 120
VIA = os.environ.get("ZYTEST_RECORD_VIA", "notify")
PATH_SAYS = {"bpf": b"(eBPF)", "notify": b"(user notification)"}[VIA]
notify_only = pytest.mark.skipif(VIA != "notify", reason="the user-notification path's own")


def skip_unsupported(r):
    """The kernel features a recording needs: a skip with its reason, never a pass."""
    if r.returncode == 77 and b"the kernel lacks" in r.stderr:
        pytest.skip(r.stderr.decode().strip().splitlines()[-1])
    if r.returncode == 125 and b"seccomp: Invalid argument" in r.stderr:
        pytest.skip("kernel lacks SECCOMP_FILTER_FLAG_NEW_LISTENER (Linux 5.0)")
    if r.returncode == 77 and b"zygoted cannot record with eBPF" in r.stderr:
        pytest.skip(r.stderr.decode().strip().splitlines()[-1])


def record(daemon, path, *cmd, uid=None, profile=None, via=None):
    opts = ["--profile", profile] if profile else []
    r = daemon.launchctl("run", "--record", path, "--record-via", via or VIA, *opts, "--", *cmd, uid=uid,
                         timeout=TIMEOUT)
    skip_unsupported(r)
    # the path asked for is the one that recorded
    if r.returncode == 0 and (via or VIA) == VIA:
        assert PATH_SAYS in r.stderr, r.stderr
    return r


def check(daemon, path, *cmd, uid=None):
    r = daemon.launchctl("profile", "check", path, "--", *cmd, uid=uid, timeout=TIMEOUT)
    skip_unsupported(r)
    return r


def refused(r):
    """The names the check printed: 'zygote-record: FILE refused N calls: a b c'."""
    for line in r.stderr.decode().splitlines():
        if line.startswith("zygote-record: ") and line.endswith(" refused no call"):
            return []
        if line.startswith("zygote-record: ") and " refused " in line and ":" in line[15:]:
            return line.rsplit(":", 1)[1].split()
    raise AssertionError(f"no verdict in: {r.stderr!r}")


def profile_names(path):
    with open(path) as f:
        p = json.load(f)
    names = set()
    for rule in p["syscalls"]:
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args"):
            names.update(rule["names"])
    return p, names


def arg_values(p, name):
    return sorted(rule["args"][0]["value"] for rule in p["syscalls"] if name in rule["names"] and rule.get("args"))


@pytest.fixture
def workdir(daemon):
    """A directory the task may write as root and as nobody."""
    d = zytest.make_workdir()
    os.chmod(d, 0o777)
    yield d
    zytest.remove_workdir(d)


def served(daemons, bins, path, name):
    """A second zygoted that serves the recorded file as profile NAME: the kernel's own filter."""
    pdir = zytest.make_workdir()
    shutil.copyfile(path, os.path.join(pdir, name + ".json"))
    os.chmod(os.path.join(pdir, name + ".json"), 0o644)
    daemons.dirs.append(pdir)
    return daemons(profile_dirs=[bins["profiles"], pdir])


def roundtrip(daemon, daemons, bins, workdir, uid, cmd, variant, new_call, expect_out):
    """Records cmd, checks it under its profile (no refusal, same output), runs it for real under
    the profile, and checks that variant is refused with new_call named."""
    path = os.path.join(workdir, "rec.json")
    r = record(daemon, path, *cmd, uid=uid)
    assert r.returncode == 0, r.stderr
    assert expect_out in r.stdout
    p, names = profile_names(path)
    assert p["defaultAction"] == "SCMP_ACT_ERRNO" and "execve" in names and new_call not in names
    # zygoted's own loader takes it as it is
    out, code = zytest.run_direct([bins["zygoted"], "--check-profile", path])
    assert code == 0 and b"architectures: SCMP_ARCH_X86_64" in out, out

    c = check(daemon, path, *cmd, uid=uid)
    assert c.returncode == 0 and refused(c) == [], c.stderr
    assert expect_out in c.stdout

    d2 = served(daemons, bins, path, "rec")
    k = d2.launchctl("run", "--profile", "rec", "--", *cmd, uid=uid, timeout=TIMEOUT)
    assert k.returncode == 0, k.stderr
    assert expect_out in k.stdout

    v = check(daemon, path, *variant, uid=uid)
    assert v.returncode == 3, v.stderr
    assert new_call in refused(v), v.stderr
    return p


def write_in(workdir, name, text):
    """TEXT as the file NAME in WORKDIR: its path."""
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.mark.parametrize("uid", [None, NOBODY], ids=["root", "nobody"])
def test_busybox_pipeline(daemon, daemons, bins, workdir, uid):
    if not shutil.which("busybox"):
        pytest.skip("busybox is not installed")
    pipe = "busybox seq 1 100 | busybox grep 7 | busybox wc -l"
    made = os.path.join(workdir, "made")
    roundtrip(daemon, daemons, bins, workdir, uid, ["busybox", "sh", "-c", pipe],
              ["busybox", "sh", "-c", f"{pipe}; busybox mkdir {made}"], "mkdir", b"19")
    assert not os.path.exists(made)  # refused with EPERM, as the profile would


def test_python_script(daemon, daemons, bins, workdir):
    script = write_in(workdir, "s.py",
                      "import json, os, sys\n"
                      "out = os.path.join(sys.argv[1], 'out.json')\n"
                      "with open(out, 'w') as f:\n"
                      "    json.dump({'n': sum(range(100))}, f)\n"
                      "print(open(out).read())\n"
                      "if len(sys.argv) > 2:\n"
                      "    os.mkfifo(os.path.join(sys.argv[1], 'fifo'))\n")
    roundtrip(daemon, daemons, bins, workdir, NOBODY, ["python3", "-I", script, workdir],
              ["python3", "-I", script, workdir, "fifo"], "mknodat", b'{"n": 4950}')


def test_gcc_compile(daemon, daemons, bins, workdir):
    if not shutil.which("gcc"):
        pytest.skip("gcc is not installed")
    src = write_in(workdir, "hello.c", '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n')
    out = os.path.join(workdir, "hello")
    compile_and_run = f"gcc -O1 -o {out} {src} && {out}"
    made = os.path.join(workdir, "made")
    p = roundtrip(daemon, daemons, bins, workdir, NOBODY, ["sh", "-c", compile_and_run],
                  ["sh", "-c", f"{compile_and_run} && mkdir {made}"], "mkdir", b"hello")
    # gcc runs cc1, as and ld as children: clone (or vfork) is there, without namespace flags
    _, names = profile_names(os.path.join(workdir, "rec.json"))
    assert "vfork" in names or "clone" in names or arg_values(p, "clone")


def test_socket_server(daemon, daemons, bins, workdir):
    script = write_in(workdir, "srv.py",
                      "import socket, sys, threading\n"
                      "srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                      "srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
                      "def serve():\n"
                      "    c, _ = srv.accept(); c.sendall(c.recv(16).upper()); c.close()\n"
                      "t = threading.Thread(target=serve); t.start()\n"
                      "cl = socket.create_connection(srv.getsockname()); cl.sendall(b'ping')\n"
                      "print(cl.recv(16).decode()); t.join()\n"
                      "if len(sys.argv) > 1:\n"
                      "    socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n")
    p = roundtrip(daemon, daemons, bins, workdir, NOBODY, ["python3", "-I", script],
                  ["python3", "-I", script, "v6"], "socket", b"PING")
    # the family is in the profile as a rule of its own, not socket outright
    _, names = profile_names(os.path.join(workdir, "rec.json"))
    assert "socket" not in names and 2 in arg_values(p, "socket") and 10 not in arg_values(p, "socket")
    # a thread: clone3 answered ENOSYS (and written so; the base profile answers it so to the
    # eBPF path), clone without namespace flags
    assert any(r["names"] == ["clone3"] and r["errnoRet"] == 38 for r in p["syscalls"])
    assert arg_values(p, "clone") == [0x7E020000]


@pytest.mark.parametrize("mode", ["after-leader", "exit-group"])
def test_a_threads_calls_at_its_process_end_are_recorded(daemon, bins, workdir, mode):
    """A thread's last calls are in the profile: made after its leader has exited, or while
    another thread of its process is in exit_group (seen there: the recorder holds the exit until
    the process's other threads have made their calls). The second is user notification's own: a
    kernel filter lets exit_group through at once, and the thread never sees it (the eBPF path
    records what the thread calls, and it calls nothing then)."""
    if mode == "exit-group" and VIA != "notify":
        pytest.skip("the user-notification path's own")
    path = os.path.join(workdir, "rec.json")
    for _ in range(3):
        if os.path.exists(path):
            os.unlink(path)
        r = record(daemon, path, bins["late-thread"], mode, uid=NOBODY)
        assert r.returncode == 0, r.stderr
        _, names = profile_names(path)
        assert "sysinfo" in names, sorted(names)


@notify_only
def test_a_thread_that_never_settles_does_not_hold_the_exit(daemon, bins, workdir):
    """The exit is held for the other threads' calls only so long: a thread spinning without a
    system call does not keep its process alive."""
    path = os.path.join(workdir, "rec.json")
    r = record(daemon, path, bins["late-thread"], "spin", uid=NOBODY)
    assert r.returncode == 0, r.stderr
    _, names = profile_names(path)
    assert "exit_group" in names and "sysinfo" not in names


def test_two_runs_merge(daemon, workdir):
    path = os.path.join(workdir, "rec.json")
    d = os.path.join(workdir, "d")
    assert record(daemon, path, "mkdir", d, uid=NOBODY).returncode == 0
    _, first = profile_names(path)
    assert "mkdir" in first and "rmdir" not in first
    r = record(daemon, path, "rmdir", d, uid=NOBODY)
    assert r.returncode == 0 and b"merged into" in r.stderr, r.stderr
    _, both = profile_names(path)
    assert first <= both and "rmdir" in both
    c = check(daemon, path, "sh", "-c", f"mkdir {d} && rmdir {d}", uid=NOBODY)
    # sh's own calls may be new; the union has both of the runs' own
    assert "mkdir" not in refused(c) and "rmdir" not in refused(c), c.stderr


def test_base_profile_denials_stay(daemon, workdir):
    """A call the base profile denies is refused during the recording, and not recorded: the
    profile written refuses it too (with EPERM, its default)."""
    path = os.path.join(workdir, "rec.json")
    r = record(daemon, path, "python3", "-I", "-c",
               "import socket\n"
               "socket.socket(socket.AF_UNIX)\n"
               "try:\n"
               "    socket.socket(socket.AF_INET)\n"
               "    print('inet allowed')\n"
               "except OSError:\n"
               "    print('inet refused')\n", uid=NOBODY, profile="nonet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == b"inet refused"
    p, names = profile_names(path)
    assert "socket" not in names and arg_values(p, "socket") == [1]  # AF_UNIX only


def test_confinement_kept(daemon, workdir):
    """The task under recording has the ids, capabilities and no_new_privs of any task, and
    one more filter on top of its profile's (user notification) or none at all (eBPF)."""
    keys = ("Uid", "Gid", "CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp", "Seccomp_filters")
    cmd = ["grep", "-E", "^(" + "|".join(keys) + "):", "/proc/self/status"]
    plain = daemon.launchctl("run", "--", *cmd, uid=NOBODY)
    rec = record(daemon, os.path.join(workdir, "rec.json"), *cmd, uid=NOBODY)
    assert plain.returncode == 0 and rec.returncode == 0, rec.stderr
    a = dict(line.split(":\t") for line in plain.stdout.decode().splitlines())
    b = dict(line.split(":\t") for line in rec.stdout.decode().splitlines())
    assert int(b.pop("Seccomp_filters")) == int(a.pop("Seccomp_filters")) + (1 if VIA == "notify" else 0)
    assert a == b and b["NoNewPrivs"] == "1" and int(b["CapEff"], 16) == 0


def test_unmergeable_file_refused_before_the_run(daemon, workdir):
    path = os.path.join(workdir, "rec.json")
    with open(path, "w") as f:
        json.dump({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}, f)
    marker = os.path.join(workdir, "ran")
    r = daemon.launchctl("run", "--record", path, "--", "touch", marker)
    assert r.returncode == 1 and b"cannot merge" in r.stderr, r.stderr
    assert not os.path.exists(marker)
    for bad in (["run", "--record", path, "--detach", "--", "true"], ["run", "--record"],
                ["profile", "check", path], ["profile", "nope"]):
        assert daemon.launchctl(*bad).returncode == 2, bad


# A filter that makes seccomp(op) fail with EINVAL, as a kernel without that op answers; then
# exec argv (python, as seccomp_wrap.py does it).
NO_SECCOMP_OP = """
import ctypes, os, struct, sys
NR = {"x86_64": 317, "aarch64": 277}[os.uname().machine]
def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([insn(0x20, 0, 0, 0), insn(0x15, 0, 3, NR), insn(0x20, 0, 0, 16),
                 insn(0x15, 0, 1, int(sys.argv[1])), insn(0x06, 0, 0, 0x00050000 | 22),
                 insn(0x06, 0, 0, 0x7FFF0000)])
buf = ctypes.create_string_buffer(prog)
class F(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
f = F(len(prog) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(f), 0, 0) == 0
os.execv(sys.argv[2], sys.argv[2:])
"""
SECCOMP_GET_NOTIF_SIZES = 3


@notify_only
def test_kernel_without_user_notification_is_a_skip_before_the_run(daemon, workdir):
    """Forced: where seccomp(SECCOMP_GET_NOTIF_SIZES) fails, zygote-record says which feature is
    missing and exits 77 before CMD runs; no file is written."""
    path, marker = os.path.join(workdir, "rec.json"), os.path.join(workdir, "ran")
    cmd = [sys.executable, "-c", NO_SECCOMP_OP, str(SECCOMP_GET_NOTIF_SIZES), daemon.bins["launchctl"],
           "--socket", daemon.socket, "run", "--record", path, "--record-via", "notify", "--", "touch", marker]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT, env=zytest.WORK_ENV)
    assert r.returncode == 77, r.stderr
    assert b"the kernel lacks seccomp user notification" in r.stderr
    assert not os.path.exists(path) and not os.path.exists(marker)


@notify_only
def test_task_without_a_listener_fails_at_its_step(daemon, daemons, bins, workdir):
    """Forced: where the task cannot get a listener (a base profile that answers seccomp(2)
    EINVAL, as a kernel without SECCOMP_FILTER_FLAG_NEW_LISTENER does), the run fails at step
    seccomp (125), CMD never runs, no file is written and nothing waits for ever."""
    with open(os.path.join(bins["profiles"], "default.json")) as f:
        base = json.load(f)
    base["name"] = "noseccomp"
    base["seccomp"]["syscalls"].insert(0, {"names": ["seccomp"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22})
    pdir = zytest.make_workdir()
    daemons.dirs.append(pdir)
    with open(os.path.join(pdir, "noseccomp.json"), "w") as f:
        json.dump(base, f)
    os.chmod(os.path.join(pdir, "noseccomp.json"), 0o644)
    d2 = daemons(profile_dirs=[bins["profiles"], pdir])
    path, marker = os.path.join(workdir, "rec.json"), os.path.join(workdir, "ran")
    r = d2.launchctl("run", "--record", path, "--record-via", "notify", "--profile", "noseccomp", "--", "touch",
                     marker, uid=NOBODY, timeout=TIMEOUT)
    assert r.returncode == 125 and b"seccomp: Invalid argument" in r.stderr, r.stderr
    assert not os.path.exists(path) and not os.path.exists(marker)


@notify_only
def test_check_answers_as_the_profile_does(daemon, workdir):
    """check takes any OCI file zygoted loads, and a refused call gets that profile's own errno:
    here EACCES for mkdir under a default of SCMP_ACT_ALLOW."""
    path = os.path.join(workdir, "noacc.json")
    with open(path, "w") as f:
        json.dump({"defaultAction": "SCMP_ACT_ALLOW",
                   "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}, f)
    made = os.path.join(workdir, "made")
    r = check(daemon, path, "mkdir", made, uid=NOBODY)
    assert r.returncode == 3 and b"Permission denied" in r.stderr, r.stderr
    assert refused(r) in (["mkdir"], ["mkdirat"]) and not os.path.exists(made)
    # allowed by the same profile: runs, nothing refused, the command's own status
    r = check(daemon, path, "sh", "-c", "exit 7", uid=NOBODY)
    assert r.returncode == 7 and refused(r) == [], r.stderr
    # a file zygoted would not load is refused before anything runs
    with open(path, "w") as f:
        f.write('{"defaultAction": "SCMP_ACT_NOPE"}')
    r = daemon.launchctl("profile", "check", path, "--", "mkdir", made)
    assert r.returncode == 1 and b"SCMP_ACT_NOPE" in r.stderr and not os.path.exists(made), r.stderr


def test_signal_to_the_recorder_reaches_the_task(daemon, workdir):
    """launchctl run --record becomes the recorder (launchctl execs it): a SIGTERM sent to it
    (kill, timeout(1)) reaches the task, which ends, and the file is still written."""
    path = os.path.join(workdir, "rec.json")
    cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--record", path, "--record-via", VIA,
           "--", "sh", "-c", "echo started; exec sleep 60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=zytest.WORK_ENV)
    try:
        line = p.stdout.readline()
        if line != b"started\n":
            p.kill()
            r = subprocess.CompletedProcess(cmd, p.wait(), b"", p.stderr.read())
            skip_unsupported(r)
            pytest.fail(f"no start: {line!r} {r.stderr!r}")
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signal.SIGTERM, err
    assert PATH_SAYS in err, err
    # the signal may come before sleep's own calls: sh's are there
    _, names = profile_names(path)
    assert {"execve", "write"} <= names, names
