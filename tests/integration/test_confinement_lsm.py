# SPDX-License-Identifier: MIT
"""A caller's LSM confinement: refused where it cannot be carried, carried where it can be read.

Landlock (docs/SECURITY-LSM.md, and docs/SECURITY.md's "LSMs"): a
domain cannot be read from outside the process nor applied to another, and any process may make
one. The only sign of it is the no_new_privs that landlock_restrict_self() needs: a caller with
no_new_privs on any thread is refused with CallerConfined, unless its profile says
"noNewPrivsCallers": "allow", and then its task runs without the caller's domain (said so in the
docs, and checked here). Each test is an
attacker's attempt: a caller that cannot read a file asks zygoted for a task that `cat`s it.

AppArmor and SELinux labels are read through the caller's /proc/PID and the task gets its
caller's label (step "lsm"); the tests skip, with the reason, on a kernel without them.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

import varlink
import zytest

L = "io.zygote.Launcher."
PR_SET_NO_NEW_PRIVS = 38
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_ACCESS_FS_READ_FILE = 1 << 2
SECRET = b"zytest secret: only outside the caller's Landlock domain\n"


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi():
    """The kernel's Landlock ABI version, or skips the test saying why there is none."""
    libc = ctypes.CDLL(None, use_errno=True)
    v = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                     ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    if v < 0:
        pytest.skip(f"Landlock is not available on this kernel: landlock_create_ruleset: "
                    f"{os.strerror(ctypes.get_errno())}")
    return v


def set_no_new_privs():
    """no_new_privs on the calling thread only (it is per thread, as prctl sets it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ul = ctypes.c_ulong
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ul(1), ul(0), ul(0), ul(0)) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")


def landlock_everything_but(hidden):
    """The calling thread restricts itself with a real Landlock domain: files may be read only
    beneath the top-level directories other than the one holding hidden, and beneath that one's
    siblings. Sets no_new_privs first, as an unprivileged process must."""
    libc = ctypes.CDLL(None, use_errno=True)
    top, below = hidden.strip("/").split("/")[:2]
    allowed = [os.path.join("/", n) for n in os.listdir("/") if n != top]
    allowed += [os.path.join("/", top, n) for n in os.listdir(os.path.join("/", top)) if n != below]
    attr = RulesetAttr(LANDLOCK_ACCESS_FS_READ_FILE)
    rs = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                      ctypes.c_uint32(0))
    if rs < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path in allowed:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        rule = PathBeneathAttr(LANDLOCK_ACCESS_FS_READ_FILE, fd)
        r = libc.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(rs), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                         ctypes.byref(rule), ctypes.c_uint32(0))
        err = ctypes.get_errno()
        os.close(fd)
        if r < 0 and err != 22:  # EINVAL: a file, not a directory; nothing beneath it
            raise OSError(err, f"landlock_add_rule {path}")
    set_no_new_privs()
    if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(rs), ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(rs)
    try:
        open(hidden, "rb").close()
    except PermissionError:
        return
    raise AssertionError(f"the Landlock domain does not hide {hidden}")


@pytest.fixture
def secret():
    """A file in a directory of its own under /var/tmp, which the Landlock domain leaves out."""
    d = tempfile.mkdtemp(prefix="zyit-landlock-", dir="/var/tmp")
    os.chmod(d, 0o755)
    path = os.path.join(d, "secret")
    with open(path, "wb") as f:
        f.write(SECRET)
    os.chmod(path, 0o644)
    yield path
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def opt_in(daemons, needs_root):
    """A root zygoted with the bundled profiles and "nnp-ok", which admits no_new_privs callers."""
    pdir = daemons.workdir()
    with open(os.path.join(pdir, "nnp-ok.json"), "w") as f:
        json.dump({"name": "nnp-ok", "capabilities": [], "noNewPrivsCallers": "allow",
                   "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}}, f)
    return daemons(profile_dirs=[daemons.bins["profiles"], pdir])


def call_from_child(daemon, confine, argv, profile=None, in_thread=None):
    """In a forked child (the test's own threads stay as they are): confine(), then a Spawn of
    argv made by the main thread while another thread, if in_thread, runs in_thread() and idles.
    Returns (the task's stdout, None) or (None, the error reply)."""
    def child():
        res = {}
        confine()
        ready, done = threading.Event(), threading.Event()
        if in_thread:
            def other():
                in_thread()
                ready.set()
                done.wait()
            threading.Thread(target=other, daemon=True).start()
            ready.wait(zytest.CALL_TIMEOUT)
        try:
            with daemon.connect() as conn:
                out, _, _ = zytest.run_task(conn, argv, profile=profile)
            res["out"] = out.decode()
        except varlink.VarlinkError as e:
            res["error"] = dict(e.reply)
        done.set()
        return res
    res = zytest.in_child(child)
    return res.get("out"), res.get("error")


def assert_refused_for_nnp(out, err, what):
    assert err is not None, f"{what}: the caller got a task, which printed {out!r}"
    assert err["error"] == L + "CallerConfined", (what, err)
    reason = err["parameters"]["reason"]
    assert "no_new_privs" in reason and "Landlock" in reason and "cannot be read or carried" in reason, (what, err)


def launchctl_after(daemon, confine_code, argv, profile=None):
    """launchctl run ARGV, exec'd by a Python that first runs confine_code: as a program that
    confined itself and then calls zygoted."""
    opts = ["--profile", profile] if profile else []
    cmd = [daemon.bins["launchctl"], "--socket", daemon.socket, "run", *opts, "--", *argv]
    script = (f"import os, sys; sys.path[:0] = {[os.path.dirname(__file__)]!r}\n"
              f"import test_confinement_lsm as t\n{confine_code}\nos.execv({cmd[0]!r}, {cmd!r})\n")
    return subprocess.run([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)


# ---- Landlock and no_new_privs: refused by default ----------------------------------------------

@pytest.mark.parametrize("client", ["launchctl", "launchctl-nobody", "varlink"])
def test_landlocked_caller_is_refused(daemon, secret, client):
    """A caller that cannot read secret under its own Landlock domain asks for `cat secret`: the
    task would run outside the domain, so the call is refused (the default profile, launchctl as
    root and as an unprivileged user, who needs no privilege for Landlock, and the raw
    protocol)."""
    landlock_abi()
    if client.startswith("launchctl"):
        drop = (f"os.setgroups([]); os.setresgid({zytest.NOGROUP}, {zytest.NOGROUP}, {zytest.NOGROUP}); "
                f"os.setresuid({zytest.NOBODY}, {zytest.NOBODY}, {zytest.NOBODY})\n" if client.endswith("nobody") else "")
        r = launchctl_after(daemon, f"{drop}t.landlock_everything_but({secret!r})", ["cat", secret])
        assert SECRET not in r.stdout, "a Landlocked caller read a file its domain forbids, through its task"
        assert r.returncode != 0 and b"CallerConfined" in r.stderr, r.stderr
        assert b"no_new_privs: it may be confined by Landlock, which cannot be read or carried" in r.stderr, r.stderr
        return
    out, err = call_from_child(daemon, lambda: landlock_everything_but(secret), ["cat", secret])
    assert_refused_for_nnp(out, err, "Landlock")


@pytest.mark.parametrize("how", ["main-thread", "other-thread", "setpriv", "setpriv-nobody"])
def test_no_new_privs_caller_is_refused(daemon, secret, how):
    """no_new_privs alone is refused as well: it is all a Landlock domain shows from outside.
    Credentials are per thread: a caller whose other thread has it is refused too. The control:
    the same caller without it gets its task."""
    if how.startswith("setpriv"):
        who = zytest.setpriv(zytest.NOBODY, zytest.NOGROUP) if how.endswith("nobody") else []
        for prefix, ok in ((who, True), (who + ["setpriv", "--no-new-privs"], False)):
            r = subprocess.run(prefix + [daemon.bins["launchctl"], "--socket", daemon.socket, "run", "--", "cat",
                                         secret], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=dict(zytest.WORK_ENV), cwd="/",
                               timeout=zytest.CALL_TIMEOUT)
            if ok:
                assert r.returncode == 0 and r.stdout == SECRET, r.stderr
            else:
                assert r.returncode != 0 and b"CallerConfined" in r.stderr and b"Landlock" in r.stderr, r.stderr
        return
    out, err = call_from_child(daemon, lambda: None, ["cat", secret])
    assert err is None and out == SECRET.decode(), ("the control", out, err)
    if how == "main-thread":
        out, err = call_from_child(daemon, set_no_new_privs, ["cat", secret])
    else:
        out, err = call_from_child(daemon, lambda: None, ["cat", secret], in_thread=set_no_new_privs)
    assert_refused_for_nnp(out, err, how)


def test_bundled_profiles_refuse_no_new_privs_callers(daemon, bins):
    """None of the bundled profiles opts in (docs/SECURITY-LSM.md says why): each refuses."""
    for name in sorted(os.listdir(bins["profiles"])):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(bins["profiles"], name)) as f:
            assert json.load(f).get("noNewPrivsCallers", "refuse") == "refuse", name
        out, err = call_from_child(daemon, set_no_new_privs, ["true"], profile=name[:-5])
        assert_refused_for_nnp(out, err, name)


# ---- the opt-in: admitted, with no_new_privs, without the domain ---------------------------------

@pytest.mark.parametrize("how", ["landlock-launchctl", "landlock-varlink", "other-thread"])
def test_opt_in_profile_admits_no_new_privs_callers(opt_in, secret, how):
    """Under a profile with "noNewPrivsCallers": "allow" the caller gets its task, which has
    no_new_privs, and runs outside the caller's Landlock domain: it reads what the caller cannot.
    That is what the opt-in means, and docs/SECURITY-LSM.md says so."""
    argv = ["sh", "-c", f'grep NoNewPrivs /proc/self/status; cat {secret}']
    if how == "landlock-launchctl":
        landlock_abi()
        r = launchctl_after(opt_in, f"t.landlock_everything_but({secret!r})", argv, profile="nnp-ok")
        assert r.returncode == 0, r.stderr
        out = r.stdout.decode()
    elif how == "landlock-varlink":
        landlock_abi()
        out, err = call_from_child(opt_in, lambda: landlock_everything_but(secret), argv, profile="nnp-ok")
        assert err is None, err
    else:
        out, err = call_from_child(opt_in, lambda: None, argv, profile="nnp-ok", in_thread=set_no_new_privs)
        assert err is None, err
    lines = out.splitlines(keepends=True)
    assert lines[0].split() == ["NoNewPrivs:", "1"], f"{how}: the task of a no_new_privs caller lacks it: {out!r}"
    assert "".join(lines[1:]) == SECRET.decode(), f"{how}: {out!r}"
    # the same caller under a profile that does not opt in is still refused
    out, err = call_from_child(opt_in, lambda: None, ["true"], in_thread=set_no_new_privs)
    assert_refused_for_nnp(out, err, how)


def test_opt_in_is_documented(bins):
    text = ""
    for name in ("SECURITY.md", "SECURITY-LSM.md"):
        with open(os.path.join(bins["source"], "docs", name)) as f:
            text += " ".join(f.read().split()) + " "
    assert "noNewPrivsCallers" in text.split("## A task reaches no process")[0], "SECURITY.md names the opt-in"
    assert '"noNewPrivsCallers": "allow"' in text
    assert "its task does not carry the caller's Landlock domain" in text
    assert "cannot be detected" in text  # root with CAP_SYS_ADMIN, Landlock without no_new_privs


# ---- AppArmor and SELinux: the caller's label is carried ---------------------------------------

@pytest.mark.parametrize("tier", ["inherit", "load"])
def test_apparmor_label_follows_the_caller(daemons, needs_root, tier):
    """A caller under an AppArmor profile of its own (complain mode, so that it runs anything) gets
    a task under that profile, not zygoted's "unconfined"."""
    if not zytest.apparmor_enabled():
        pytest.skip("AppArmor not enabled on this kernel")
    if not shutil.which("apparmor_parser") or not shutil.which("aa-exec"):
        pytest.skip("AppArmor is enabled but apparmor_parser or aa-exec is not installed")
    name = "zytest-caller"
    prof = f"profile {name} flags=(complain) {{\n  file,\n  capability,\n  network,\n  unix,\n}}\n"
    subprocess.run(["apparmor_parser", "-r"], input=prof.encode(), check=True, timeout=zytest.CALL_TIMEOUT)
    try:
        d = daemons(tier=tier)
        r = subprocess.run(["aa-exec", "-p", name, "--", d.bins["launchctl"], "--socket", d.socket, "run", "--",
                            "cat", "/proc/self/attr/current"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().split()[0] == name, f"the task runs as {r.stdout!r}, its caller as {name}"
    finally:
        subprocess.run(["apparmor_parser", "-R"], input=prof.encode(), timeout=zytest.CALL_TIMEOUT)


def test_selinux_context_follows_the_caller(daemon):
    """A caller in another SELinux domain gets a task in that domain (ZYTEST_SELINUX_TYPE: a
    domain the policy lets root enter and run launchctl in)."""
    if not os.path.exists("/sys/fs/selinux/enforce"):
        pytest.skip("SELinux not enabled on this kernel")
    dom = os.environ.get("ZYTEST_SELINUX_TYPE")
    if not dom:
        pytest.skip("SELinux is enabled but no test domain is named (ZYTEST_SELINUX_TYPE)")
    r = subprocess.run(["runcon", "-t", dom, "--", daemon.bins["launchctl"], "--socket", daemon.socket, "run",
                        "--", "cat", "/proc/self/attr/current"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip("\0\n").split(":")[2] == dom, r.stdout
