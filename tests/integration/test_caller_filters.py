# SPDX-License-Identifier: MIT
"""A caller under seccomp filters of its own (a service with SystemCallFilter= and
NoNewPrivileges=yes): a root zygoted reads every thread's programs (daemon/caller-filter.c) and the
worker loads them, oldest first, under the profile's filter, so the task is denied what the caller
is denied and what the profile denies; it keeps the caller's no_new_privs. A caller whose threads
run under different filters is refused, and so is every filtered caller where the filters are not
read (ZYGOTE_DISABLE_FEATURES=caller_filters; an unprivileged zygoted), saying why and what to do.

The caller is a small Python program that sets no_new_privs, loads its filters (classic BPF
assembled here) and execs launchctl; its task runs try-syscall, which prints each call's errno."""
import json
import os
import platform
import subprocess
import sys
import threading
import time

import pytest

import varlink
import zytest

L = "io.zygote.Launcher."
EPERM, ENOENT, EACCES, EOPNOTSUPP = 1, 2, 13, 95

# x86_64 only: the numbers below are its system call numbers
NR = {"mkdirat": 258, "uname": 63, "seccomp": 317, "prctl": 157}
AUDIT_ARCH_X86_64 = 0xC000003E

# The caller: argv[1] a JSON list of filters, each [syscall number, errno] (oldest first), then the
# command to exec. no_new_privs first (the kernel wants it, or CAP_SYS_ADMIN, for a filter).
CALLER = r"""
import ctypes, json, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
ul = ctypes.c_ulong
assert libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) == 0  # PR_SET_NO_NEW_PRIVS
keep = []
for nr, err in json.loads(sys.argv[1]):
    ins = [(0x20, 0, 0, 4), (0x15, 1, 0, 0xC000003E), (0x06, 0, 0, 0x7FFF0000),  # other arch: allow
           (0x20, 0, 0, 0), (0x15, 0, 1, nr), (0x06, 0, 0, 0x00050000 | err), (0x06, 0, 0, 0x7FFF0000)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in ins))
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(ins), ctypes.addressof(buf)))
    keep += [buf, prog]
    assert libc.prctl(22, ul(2), ul(ctypes.addressof(prog)), ul(0), ul(0)) == 0, ctypes.get_errno()
os.execv(sys.argv[2], sys.argv[2:])
"""

# A profile that denies personality (EOPNOTSUPP) and admits no_new_privs callers (their Landlock
# domain, if any, is not carried: docs/SECURITY-LSM.md), as the example unit's does; it does not ask
# for no_new_privs itself, so a root caller's task has it only from its caller.
PROFILE = {"name": "svc", "capabilities": [], "noNewPrivileges": False, "noNewPrivsCallers": "allow",
           "seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
                       "syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": EOPNOTSUPP}]}}


@pytest.fixture
def svc_daemons(daemons, needs_root):
    if platform.machine() != "x86_64":
        pytest.skip("the callers' filters here are assembled with x86_64's system call numbers")
    top = zytest.make_workdir()
    os.mkdir(os.path.join(top, "profiles"))
    with open(os.path.join(top, "profiles", "svc.json"), "w") as f:
        json.dump(PROFILE, f)
    yield lambda **kw: daemons(profile_dirs=[os.path.join(top, "profiles")], **kw)
    zytest.remove_workdir(top)


def run_filtered(d, filters, script, profile="svc", uid=None):
    """The caller under filters ([(name, errno)], oldest first) runs `sh -c script` as a task (as
    uid, when given)."""
    argv = (zytest.setpriv(uid, uid) if uid is not None else []) + [sys.executable, "-c", CALLER, json.dumps([[NR[n], e] for n, e in filters]), d.bins["launchctl"],
            "--socket", d.socket, "run", "--profile", profile, "--", "sh", "-c", script]
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(zytest.WORK_ENV), cwd="/", timeout=zytest.CALL_TIMEOUT)


def probes(d):
    ts = d.bins["try-syscall"]
    return (f"{ts} mkdirat; {ts} uname; {ts} personality; grep -E '^(NoNewPrivs|Seccomp_filters):' "
            f"/proc/self/status")


def results(out):
    """{"mkdirat": errno, ..., "NoNewPrivs": n, "Seccomp_filters": n} from the task's output."""
    got = {}
    for line in out.decode().splitlines():
        if " errno=" in line:
            name, _, e = line.partition(" errno=")
            got[name] = int(e)
        elif ":" in line:
            k, _, v = line.partition(":")
            got[k] = int(v)
    return got


@pytest.mark.parametrize("filters", [[], [("mkdirat", EPERM)], [("mkdirat", EPERM), ("uname", EACCES)]],
                         ids=["control", "one-filter", "two-stacked"])
def test_task_carries_the_callers_filters_and_nnp(svc_daemons, filters):
    """The task is denied what each of the caller's filters denies (with the caller's errno), and
    what the profile denies (personality) on top; it has the caller's filters plus the profile's,
    and no_new_privs. The control: a caller without filters (no_new_privs all the same) gets a task
    where mkdirat and uname are allowed."""
    d = svc_daemons()
    r = run_filtered(d, filters, probes(d))
    assert r.returncode == 0, r.stderr
    got = results(r.stdout)
    want = {"mkdirat": ENOENT, "uname": 0, "personality": EOPNOTSUPP, "NoNewPrivs": 1,
            "Seccomp_filters": len(filters) + 1}
    want.update(dict(filters))
    assert got == want, f"the caller's filters {filters}: its task {got}"
    if filters:
        assert "tier=load" in d.log(), d.log()  # stacked by the worker that loads both


@pytest.mark.parametrize("errnos", [(EPERM, EACCES), (EACCES, EPERM)], ids=["EPERM-then-EACCES", "EACCES-then-EPERM"])
def test_filter_order_is_kept(svc_daemons, errnos):
    """Two caller filters deny the same call with different errnos: the kernel answers with the
    newest filter's, so the task answers as the caller itself does only if its filters were
    loaded in the caller's order, oldest first (each order tried: not a constant)."""
    d = svc_daemons()
    filters = [("mkdirat", e) for e in errnos]
    direct = subprocess.run([sys.executable, "-c", CALLER, json.dumps([[NR[n], e] for n, e in filters]),
                             d.bins["try-syscall"], "mkdirat"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=zytest.CALL_TIMEOUT)
    assert direct.returncode == 0, direct.stderr
    r = run_filtered(d, filters, f"{d.bins['try-syscall']} mkdirat")
    assert r.returncode == 0, r.stderr
    assert r.stdout == direct.stdout == f"mkdirat errno={errnos[1]}\n".encode(), (r.stdout, direct.stdout)


def test_caller_that_denies_seccomp_gets_its_filters_through_prctl(svc_daemons):
    """systemd's @system-service allows prctl but not seccomp(2): the worker, once the caller's
    filter denies seccomp(2), loads the rest (the profile's) through PR_SET_SECCOMP."""
    d = svc_daemons()
    r = run_filtered(d, [("seccomp", EPERM)], probes(d))
    assert r.returncode == 0, r.stderr
    got = results(r.stdout)
    assert (got["personality"], got["Seccomp_filters"]) == (EOPNOTSUPP, 2), got


def test_caller_that_denies_more_filters_gets_no_task(svc_daemons):
    """A caller whose filters deny both ways of adding one (seccomp(2), then prctl) gets a spawn
    that fails at the filter step, saying so: never a task without the profile's filter."""
    d = svc_daemons()
    r = run_filtered(d, [("seccomp", EPERM), ("prctl", EPERM)], "echo ran")
    assert r.returncode != 0 and b"ran" not in r.stdout, (r.stdout, r.stderr)
    assert b"filter" in r.stderr and b"Operation not permitted" in r.stderr, r.stderr


def test_disabled_reading_refuses_as_before(svc_daemons):
    """The fallback, forced: ZYGOTE_DISABLE_FEATURES=caller_filters refuses every caller with a
    filter of its own, saying why and what to do; a caller without one is served."""
    d = svc_daemons(env={"ZYGOTE_DISABLE_FEATURES": "caller_filters"})
    r = run_filtered(d, [("mkdirat", EPERM)], probes(d))
    assert r.returncode != 0, r.stdout
    err = r.stderr.decode()
    assert "CallerConfined" in err and "seccomp filter of its own" in err, err
    assert "ZYGOTE_DISABLE_FEATURES=caller_filters" in err and "SystemCallFilter=" in err, err
    r = run_filtered(d, [], probes(d))
    assert r.returncode == 0 and results(r.stdout)["mkdirat"] == ENOENT, r.stderr


def test_unprivileged_zygoted_refuses_saying_why(svc_daemons):
    """An unprivileged zygoted cannot read another process's filters (no CAP_SYS_ADMIN): its own
    user's filtered caller is refused, told to call the system zygoted or drop the filter; the
    same caller without a filter is served (the control)."""
    d = svc_daemons(as_uid=zytest.NOBODY)
    r = run_filtered(d, [("mkdirat", EPERM)], probes(d), uid=zytest.NOBODY)
    assert r.returncode != 0, r.stdout
    err = r.stderr.decode()
    assert "CallerConfined" in err and "only a zygoted running as root" in err, err
    assert "call the system zygoted" in err and "SystemCallFilter=" in err, err
    r = run_filtered(d, [], probes(d), uid=zytest.NOBODY)
    assert r.returncode == 0 and results(r.stdout)["mkdirat"] == ENOENT, r.stderr


def deny(nr, err=EPERM):
    """A filter that denies system call nr with err on the calling thread (no TSYNC)."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    ul = ctypes.c_ulong
    ins = [(0x20, 0, 0, 0), (0x15, 0, 1, nr), (0x06, 0, 0, 0x00050000 | err), (0x06, 0, 0, 0x7FFF0000)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in ins))
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(ins), ctypes.addressof(buf)))
    assert libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) == 0, ctypes.get_errno()  # PR_SET_NO_NEW_PRIVS
    assert libc.prctl(22, ul(2), ul(ctypes.addressof(prog)), ul(0), ul(0)) == 0, ctypes.get_errno()


@pytest.mark.parametrize("how", ["same", "differ", "differ-caller"])
def test_threads_with_different_filters_are_refused(svc_daemons, how):
    """zygoted cannot tell which thread sent the call. Every thread of the caller has a filter
    denying mkdirat; with "differ" a second thread, idle, also has one denying uname
    ("differ-caller": the thread that calls has the extra one): refused, saying so. The control
    ("same"): two threads sharing their filters are served, the task denied mkdirat, and the idle
    thread, paused for the read, goes on."""
    d = svc_daemons()
    ts = d.bins["try-syscall"]

    def child():
        conn = d.connect()
        deny(NR["mkdirat"])
        ready, done, res = threading.Event(), threading.Event(), {}

        def idle():
            if how == "differ":
                deny(NR["uname"], EACCES)
            ready.set()
            done.wait(zytest.CALL_TIMEOUT)
            res["idle"] = "went on"

        def call():
            if how == "differ-caller":
                deny(NR["uname"], EACCES)
            try:
                out, _, _ = zytest.run_task(conn, ["sh", "-c", f"{ts} mkdirat; {ts} uname"], profile="svc")
                res["out"] = out.decode()
            except varlink.VarlinkError as e:
                res["error"] = dict(e.reply)

        t = threading.Thread(target=idle)
        t.start()
        ready.wait(zytest.CALL_TIMEOUT)
        c = threading.Thread(target=call)
        c.start()
        c.join(zytest.CALL_TIMEOUT)
        done.set()
        t.join(zytest.CALL_TIMEOUT)
        return res

    res = zytest.in_child(child)
    assert res.get("idle") == "went on", res
    if how == "same":
        assert res.get("out") == "mkdirat errno=1\nuname errno=0\n", res
    else:
        err = res.get("error")
        assert err and err["error"] == L + "CallerConfined", res
        assert "different seccomp filters" in err["parameters"]["reason"], err


def test_thread_that_cannot_stop_is_refused_in_time(svc_daemons):
    """An attacker's caller: one thread blocked where a ptrace stop cannot reach it (a vfork
    parent, libc's posix_spawn, waiting for its child, which blocks opening a FIFO before its
    exec) while another thread calls. zygoted gives up after 50 ms and refuses, saying why; the
    stuck thread is left untraced (TracerPid 0 once it runs again) and goes on, and the same
    caller's next call, with nothing stuck, is served."""
    import ctypes
    d = svc_daemons()
    ts = d.bins["try-syscall"]
    top = zytest.make_workdir()
    ready, hold = os.path.join(top, "ready"), os.path.join(top, "hold")
    os.mkfifo(ready)
    os.mkfifo(hold)

    def child():
        conn = d.connect()
        deny(NR["mkdirat"])
        libc = ctypes.CDLL(None, use_errno=True)
        res = {}

        def stuck():
            # the child's file actions, in order: open "ready" (the test's sign that the child
            # runs, so that this thread waits in vfork), then "hold", which blocks until released
            fa = ctypes.create_string_buffer(256)
            assert libc.posix_spawn_file_actions_init(fa) == 0
            assert libc.posix_spawn_file_actions_addopen(fa, 3, ready.encode(), os.O_WRONLY, 0) == 0
            assert libc.posix_spawn_file_actions_addopen(fa, 4, hold.encode(), os.O_RDONLY, 0) == 0
            pid = ctypes.c_int()
            argv = (ctypes.c_char_p * 2)(b"true", None)
            envp = (ctypes.c_char_p * 1)(None)
            res["spawn"] = libc.posix_spawn(ctypes.byref(pid), b"/bin/true", fa, None, argv, envp)
            os.waitpid(pid.value, 0)
            with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
                res["tracer"] = [ln.split()[1] for ln in f if ln.startswith("TracerPid:")][0]

        def call(key):
            t0 = time.monotonic()
            try:
                out, _, _ = zytest.run_task(conn, ["sh", "-c", f"{ts} mkdirat"], profile="svc")
                res[key] = out.decode()
            except varlink.VarlinkError as e:
                res[key] = dict(e.reply)
            res[key + "_s"] = time.monotonic() - t0

        t = threading.Thread(target=stuck)
        t.start()
        with open(ready, "rb"):  # returns once the vfork child opened it: the thread waits in vfork
            call("first")
        with open(hold, "wb"):  # the child's open returns, it execs, the thread goes on
            pass
        t.join(zytest.CALL_TIMEOUT)
        call("second")
        return res

    try:
        res = zytest.in_child(child)
    finally:
        zytest.remove_workdir(top)
    err = res["first"]
    assert isinstance(err, dict) and err["error"] == L + "CallerConfined", res
    assert "did not stop to be read in time" in err["parameters"]["reason"], err
    assert res["first_s"] < 2, f"the refusal took {res['first_s']:.2f} s"
    assert (res.get("spawn"), res.get("tracer")) == (0, "0"), res
    assert res["second"] == "mkdirat errno=1\n", res


def readers(daemon_pid):
    """zygoted's children reading a caller's filters (daemon/caller-filter.c names them)."""
    out = []
    try:
        with open(f"/proc/{daemon_pid}/task/{daemon_pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return out
    for k in kids:
        try:
            with open(f"/proc/{k}/comm") as f:
                if f.read().strip() == "zygote-cfread":
                    out.append(int(k))
        except OSError:
            pass
    return out


def test_reads_wait_off_the_loop_one_per_owner_and_go_with_their_caller(svc_daemons):
    """A caller with a thread that cannot stop sends Spawn on 6 connections at once: zygoted
    reads its filters one at a time (never two readers for one owner) without holding its loop
    (another connection's GetStatus is answered while they wait), refuses each in turn, and when
    the caller leaves with Spawns still waiting, its reader is killed: none is left, the stuck
    thread is untraced and goes on once released."""
    import ctypes
    d = svc_daemons()
    top = zytest.make_workdir()
    ready, hold = os.path.join(top, "ready"), os.path.join(top, "hold")
    os.mkfifo(ready)
    os.mkfifo(hold)
    daemon_pid = d.proc.pid

    def child():
        conns = [d.connect() for _ in range(6)]
        deny(NR["mkdirat"])
        libc = ctypes.CDLL(None, use_errno=True)
        res = {"max": 0}

        def stuck():
            fa = ctypes.create_string_buffer(256)
            assert libc.posix_spawn_file_actions_init(fa) == 0
            assert libc.posix_spawn_file_actions_addopen(fa, 3, ready.encode(), os.O_WRONLY, 0) == 0
            assert libc.posix_spawn_file_actions_addopen(fa, 4, hold.encode(), os.O_RDONLY, 0) == 0
            pid = ctypes.c_int()
            argv = (ctypes.c_char_p * 2)(b"true", None)
            envp = (ctypes.c_char_p * 1)(None)
            res["spawn"] = libc.posix_spawn(ctypes.byref(pid), b"/bin/true", fa, None, argv, envp)
            os.waitpid(pid.value, 0)
            with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
                res["tracer"] = [ln.split()[1] for ln in f if ln.startswith("TracerPid:")][0]

        t = threading.Thread(target=stuck)
        t.start()
        with open(ready, "rb"):  # the thread waits in vfork from here on
            for c in conns:
                c.send(L + "Spawn", {"argv": ["/bin/true"], "profile": "svc"})
            # the first refusal: a read ran to its timeout; meanwhile the loop answers others
            with d.connect(timeout=5) as other:
                other.call(L + "GetStatus")
            first = conns[0].recv()
            res["first"] = (first.error, first.parameters.get("reason", ""))
            # the next read starts (slowly in an ASan build: up to 5 s), then 0.2 s of watching
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                n = len(readers(daemon_pid))
                if n and res["max"] == 0:
                    deadline = min(deadline, time.monotonic() + 0.2)
                res["max"] = max(res["max"], n)
            for c in conns[1:]:  # leaves with Spawns waiting, one of them being read
                c.close()
            conns[0].close()
            zytest.wait_for(lambda: not readers(daemon_pid), "the leaving caller's reader killed", timeout=5)
            res["left"] = readers(daemon_pid)
        with open(hold, "wb"):  # the vfork child's open returns, it execs, the thread goes on
            pass
        t.join(zytest.CALL_TIMEOUT)
        with d.connect(timeout=5) as other:  # zygoted serves on
            other.call(L + "GetStatus")
        return res

    try:
        res = zytest.in_child(child)
    finally:
        zytest.remove_workdir(top)
    assert res["first"][0] == L + "CallerConfined" and "in time" in res["first"][1], res
    # the reads waited, one at a time (a read that refuses at once, its thread seen asleep in the
    # kernel, starts no reader: then none is seen)
    assert res["max"] <= 1, res
    assert res["left"] == [], res
    assert (res.get("spawn"), res.get("tracer")) == (0, "0"), res
