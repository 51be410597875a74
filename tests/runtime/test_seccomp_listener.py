# SPDX-License-Identifier: MIT
"""Seccomp user notification (`linux.seccomp.listenerPath`, SCMP_ACT_NOTIFY), issue #24.

A small agent (a thread of the test) listens on a Unix stream socket in the test's directory,
receives the runtime's container process state with the listener (socket.recv_fds), and answers
each notification with SECCOMP_IOCTL_NOTIF_RECV / SEND: mkdir(2) fails with EXDEV, "succeeds"
without making anything, or goes on as asked (SECCOMP_USER_NOTIF_FLAG_CONTINUE); the container
prints what it saw. Through zygote-runc's own create (the filter loaded before the capabilities
without no_new_privs, last with it; compiled here and from zygoted's cache), its exec (a
listener of its own, as runc 1.1 sends), and zygoted's container worker. Refusals name the field;
a failed hand-over fails create and leaves nothing behind; every listener the agent holds hangs up
(no process under the filter is left) by the end of each test.
"""
import ctypes
import errno
import fcntl
import json
import os
import select
import socket
import struct
import sys
import threading
import time

import pytest

from conftest import rootless_config  # noqa: E402

from containertools import container_id, processes_naming

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402
import varlink  # noqa: E402


L = "io.zygote.Launcher."

# <linux/seccomp.h>, x86_64 and every other 64-bit ABI: struct seccomp_notif is 80 bytes
# (id, pid, flags, then struct seccomp_data: nr, arch, instruction_pointer, args[6]) and
# struct seccomp_notif_resp 24 (id, val, error, flags).
NOTIF = struct.Struct("=QII iIQ 6Q")
RESP = struct.Struct("=QqiI")
NOTIF_RECV = (3 << 30) | (NOTIF.size << 16) | (ord("!") << 8) | 0
NOTIF_SEND = (3 << 30) | (RESP.size << 16) | (ord("!") << 8) | 1
FLAG_CONTINUE = 1
NEW_LISTENER = 1 << 3
SECCOMP_RET_USER_NOTIF = 0x7FC00000


def _user_notif_available():
    libc = ctypes.CDLL(None, use_errno=True)
    action = ctypes.c_uint32(SECCOMP_RET_USER_NOTIF)
    # seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action): 0 when the kernel has the action
    return libc.syscall(317, 2, 0, ctypes.byref(action)) == 0


@pytest.fixture(autouse=True)
def user_notif():
    if os.uname().machine != "x86_64":
        pytest.skip("the agent's structs and syscall numbers are written for x86_64")
    if not _user_notif_available():
        pytest.skip("the kernel lacks seccomp user notification (SECCOMP_RET_USER_NOTIF)")


class Agent:
    """A seccomp agent on path: each connection's state and listener kept; each notification
    answered by answer(nr) -> (val, error, flags) and recorded as (pid, nr)."""

    def __init__(self, path, answer):
        self.path = path
        self.answer = answer
        self.states = []
        self.notifications = []
        self.listeners = []
        self.errors = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind(path)
        self.sock.listen(8)
        self.stop = threading.Event()
        self.arrived = threading.Condition()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _accept(self):
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(10)
            data, fds, _, _ = socket.recv_fds(conn, 65536, 4)
            # one JSON document, perhaps in parts; read until it parses, not until EOF: runc 1.1
            # keeps its end open until it exits (and its exec waits for the process)
            while True:
                try:
                    state = json.loads(data)
                    break
                except ValueError:
                    more = conn.recv(65536)
                    if not more:
                        raise
                    data += more
        with self.arrived:
            self.states.append((state, len(fds)))
            self.listeners.extend(fds)
            self.arrived.notify_all()

    def _notification(self, fd):
        buf = bytearray(NOTIF.size)
        try:
            fcntl.ioctl(fd, NOTIF_RECV, buf, True)
        except OSError as e:
            if e.errno == errno.ENOENT:  # the caller went away meanwhile
                return
            raise
        nid, pid, _flags, nr, _arch, _ip, *_args = NOTIF.unpack(buf)
        self.notifications.append((pid, nr))
        val, error, flags = self.answer(nr)
        try:
            fcntl.ioctl(fd, NOTIF_SEND, bytearray(RESP.pack(nid, val, error, flags)), True)
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise

    def _serve(self):
        try:
            while not self.stop.is_set():
                p = select.poll()
                p.register(self.sock, select.POLLIN)
                for fd in self.listeners:
                    p.register(fd, select.POLLIN)
                for fd, ev in p.poll(50):
                    if fd == self.sock.fileno():
                        self._accept()
                    elif ev & select.POLLIN:
                        self._notification(fd)
        except Exception as e:  # reported by close()
            self.errors.append(repr(e))

    def wait_states(self, n, timeout=10):
        """The states received once n have come (the runtime's send returns before this thread
        has read them), or when the timeout passed."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.states) >= n, timeout)
            return list(self.states)

    def hung_up(self):
        """Whether every listener says its filter has no task left."""
        p = select.poll()
        for fd in self.listeners:
            p.register(fd, select.POLLIN)
        hup = {fd for fd, ev in p.poll(0) if ev & select.POLLHUP}
        return hup == set(self.listeners)

    def close(self):
        """Stops serving; fails if it failed, or if a process under a listener's filter is left."""
        deadline = time.monotonic() + 10
        while self.listeners and not self.hung_up() and time.monotonic() < deadline:
            p = select.poll()  # wakes at a hang-up (or a notification the thread answers)
            for fd in self.listeners:
                p.register(fd, select.POLLIN)
            p.poll(max(1, int((deadline - time.monotonic()) * 1000)))
        hung_up = self.hung_up()
        self.stop.set()
        self.thread.join(10)
        for fd in self.listeners:
            os.close(fd)
        self.sock.close()
        assert not self.errors, self.errors
        assert hung_up, "a process under the notifying filter outlived the test"


def exdev(nr):
    return 0, -errno.EXDEV, 0


@pytest.fixture
def agent(open_tmp):
    made = []

    def start(answer=exdev, name="agent.sock"):
        a = Agent(str(open_tmp / name), answer)
        made.append(a)
        return a

    yield start
    for a in made:
        a.close()


MKDIR = "mkdir /tmp/a; echo rc=$?; if test -d /tmp/a; then echo made; else echo absent; fi"


def notify_bundle(bundle, listener, metadata="agent-meta", names=("mkdir", "mkdirat")):
    """The container may write its root (a mkdir let through is seen); mkdir notifies."""
    bundle.config["root"]["readonly"] = False
    bundle.config["linux"]["seccomp"] = notify_profile(listener, metadata, names)


def notify_profile(listener, metadata=None, names=("mkdir", "mkdirat")):
    p = {"defaultAction": "SCMP_ACT_ALLOW",
         "syscalls": [{"names": list(names), "action": "SCMP_ACT_NOTIFY"}]}
    if listener is not None:
        p["listenerPath"] = listener
    if metadata is not None:
        p["listenerMetadata"] = metadata
    return p


def env_of(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZYGOTE_")}
    env.update(kw)
    return env


def check_state(state, n_fds, bundle, cid, status, metadata="agent-meta"):
    assert n_fds == 1, state
    assert state["ociVersion"] and state["fds"] == ["seccompFd"], state
    assert state.get("metadata") == metadata, state
    s = state["state"]
    assert s["id"] == cid and s["status"] == status and s["bundle"] == bundle.path, state
    assert isinstance(state["pid"], int) and state["pid"] > 0 and s["pid"] > 0, state


ANSWERS = {
    "errno": (exdev, "rc=1", "absent"),
    "fake-success": (lambda nr: (0, 0, 0), "rc=0", "absent"),
    "continue": (lambda nr: (0, 0, FLAG_CONTINUE), "rc=0", "made"),
}


@pytest.mark.parametrize("nnp", [True, False], ids=["nnp-filter-last", "no-nnp-filter-before-caps"])
@pytest.mark.parametrize("answer", ANSWERS)
def test_agent_answers_for_the_container(runc, bundle, agent, nnp, answer):
    """create, start: the agent gets the state and the listener once, and the container's mkdir
    gets the agent's answer; the filter loaded last (no_new_privs) or before the capabilities."""
    fn, rc, made = ANSWERS[answer]
    a = agent(fn)
    bundle.config["process"]["noNewPrivileges"] = nnp
    notify_bundle(bundle, a.path)
    # the listener is the agent's alone: none of the container's fds is one
    bundle.set_args("sh", "-c", MKDIR + "; for f in /proc/1/fd/*; do readlink $f; done; true")
    cid = container_id()
    r = runc("run", "--bundle", bundle.path, cid, env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode == 0, r.stderr
    assert rc in r.stdout and made in r.stdout, r.stdout
    assert "seccomp" not in r.stdout and "anon_inode" not in r.stdout, r.stdout
    if answer == "errno":
        assert "Invalid cross-device link" in r.stderr, r.stderr
    assert len(a.wait_states(1)) == 1, a.states
    check_state(*a.states[0], bundle, cid, "creating")
    assert a.notifications, "the agent was never asked"
    assert {nr for _, nr in a.notifications} <= {83, 258}, a.notifications  # mkdir, mkdirat


@pytest.mark.parametrize("nnp", [True, False], ids=["nnp-filter-last", "no-nnp-filter-before-caps"])
def test_init_own_calls_after_the_load_wait_for_the_agent(runc, bundle, agent, nnp):
    """The init's own calls between the load and execve (closing the listener, capset, prctl,
    the cwd's fchdir, the exec check, the report and execve) may notify too: the listener is
    with the agent before any of them, so they are answered instead of deadlocking create."""
    init_calls = ["close", "capset", "prctl", "openat", "openat2", "fchdir", "faccessat", "faccessat2", "sendto",
                  "read", "close_range", "execve", "umask", "getpid", "write", "personality"]
    a = agent(lambda nr: (0, 0, FLAG_CONTINUE))
    bundle.config["process"]["noNewPrivileges"] = nnp
    notify_bundle(bundle, a.path, names=init_calls)
    bundle.set_args("echo", "started")
    cid = container_id()
    r = runc("run", "--bundle", bundle.path, cid, env=env_of(ZYGOTE_RUNC_FILTER="local"), timeout=30)
    assert r.returncode == 0, r.stderr
    assert "started" in r.stdout, r.stdout
    assert len(a.wait_states(1)) == 1
    init = a.states[0][0]["pid"]
    # execve (59) and close (3) of the init itself, before its program ran
    assert {(init, 59), (init, 3)} <= set(a.notifications), a.notifications


def test_listener_flags_the_kernel_takes(runc, bundle, agent):
    """TSYNC with a listener (the runtime adds TSYNC_ESRCH) and WAIT_KILLABLE_RECV: the kernel
    loads the filter with them and the agent still answers."""
    release = tuple(int(x) for x in os.uname().release.split(".")[:2])
    if release < (5, 19):
        pytest.skip(f"kernel {os.uname().release} lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19)")
    a = agent()
    notify_bundle(bundle, a.path)
    bundle.config["linux"]["seccomp"]["flags"] = ["SECCOMP_FILTER_FLAG_TSYNC",
                                                  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"]
    bundle.set_args("sh", "-c", MKDIR)
    r = runc("run", "--bundle", bundle.path, container_id(), env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode == 0, r.stderr
    assert "rc=1" in r.stdout and "absent" in r.stdout, r.stdout
    assert len(a.wait_states(1)) == 1 and a.notifications


def test_non_root_user_without_nnp(runc, bundle, agent):
    """uid 1000 without no_new_privs: the effective set raised back for the early load; the
    listener still reaches the agent and the answer the process."""
    a = agent()
    bundle.config["process"]["noNewPrivileges"] = False
    bundle.config["process"]["user"] = {"uid": 1000, "gid": 1000}
    notify_bundle(bundle, a.path)
    bundle.set_args("sh", "-c", "mkdir /tmp/b; echo rc=$?; id -u")
    r = runc("run", "--bundle", bundle.path, container_id(), env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode == 0, r.stderr
    assert "rc=1" in r.stdout and "1000" in r.stdout, r.stdout
    assert len(a.wait_states(1)) == 1 and a.notifications


def test_rootless(runc_bin, bundle, agent, open_tmp):
    """As nobody, `spec --rootless`'s user namespace: the init loads the notifying filter as its
    namespace's root, and the unprivileged runtime hands the listener to the agent."""
    import shutil
    import subprocess
    if not os.path.exists("/proc/self/ns/user"):
        pytest.skip("kernel without user namespaces")
    r = subprocess.run(["unshare", "-U", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"this process may not create a user namespace: {r.stderr.decode().strip()}")
    nobody = 65534
    a = agent()
    os.chmod(a.path, 0o777)
    binary = str(open_tmp / "zygote-runc")
    shutil.copy(runc_bin, binary)
    cfg = rootless_config(runc_bin, bundle, nobody)
    cfg["root"]["readonly"] = False
    cfg["linux"]["seccomp"] = notify_profile(a.path, "agent-meta")
    cfg["process"]["args"] = ["sh", "-c", MKDIR]
    json.dump(cfg, open(os.path.join(bundle.path, "config.json"), "w"))
    subprocess.run(["chown", "-R", f"{nobody}:{nobody}", bundle.path], check=True)
    cid = container_id()
    r = subprocess.run(["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", binary, "--root",
                        os.path.join(bundle.path, "state"), "run", "--bundle", bundle.path, cid],
                       capture_output=True, text=True, timeout=60, env=env_of(ZYGOTE_RUNC_FILTER="local"))
    if r.returncode != 0 and "clone3: operation not permitted" in r.stderr:
        pytest.skip("unprivileged user namespaces are disabled here")
    assert r.returncode == 0, r.stderr
    assert "rc=1" in r.stdout and "absent" in r.stdout, r.stdout
    assert len(a.wait_states(1)) == 1, a.states
    check_state(*a.states[0], bundle, cid, "creating")


def test_exec_gets_a_listener_of_its_own(runc, bundle, agent, tmp_path):
    """exec: its process loads the container's filter with a new listener, which goes to the
    agent with status "running", the process's pid and the init's (runc 1.1 does the same)."""
    a = agent()
    notify_bundle(bundle, a.path)
    bundle.set_args("sleep", "60")
    cid = container_id()
    env = env_of(ZYGOTE_RUNC_FILTER="local")
    r = runc("create", "--bundle", bundle.path, cid, env=env)
    assert r.returncode == 0, r.stderr
    assert len(a.wait_states(1)) == 1
    check_state(*a.states[0], bundle, cid, "creating")
    assert runc("start", cid, env=env).returncode == 0
    init = runc.state(cid)["pid"]
    assert a.states[0][0]["pid"] == init and a.states[0][0]["state"]["pid"] == init
    pidfile = tmp_path / "exec.pid"
    r = runc("exec", "--pid-file", str(pidfile), cid, "sh", "-c", MKDIR, env=env)
    assert r.returncode == 0, r.stderr
    assert "rc=1" in r.stdout and "absent" in r.stdout, r.stdout
    assert len(a.wait_states(2)) == 2, a.states
    state, n_fds = a.states[1]
    check_state(state, n_fds, bundle, cid, "running")
    assert state["pid"] == int(pidfile.read_text()) and state["state"]["pid"] == init, state
    assert runc("delete", "--force", cid).returncode == 0


RUNC = "/usr/sbin/runc"


def test_same_as_runc_11(runc, bundle, agent, tmp_path):
    """Debian's runc 1.1 on the same bundle: one state at create ("creating", the init's pid),
    one more for exec ("running", the exec'd process's pid and the init's), the same fds and
    metadata, and the same answer seen by the container, from each runtime."""
    if not os.access(RUNC, os.X_OK):
        pytest.skip(f"no {RUNC} (Debian package runc)")
    seen = {}
    for name, binary in (("zygote-runc", runc.binary), ("runc", RUNC)):
        a = agent(name=f"{name}.sock")
        notify_bundle(bundle, a.path)
        bundle.set_args("sleep", "60")
        rt = type(runc)(binary, str(tmp_path / f"{name}-root"), str(tmp_path / f"{name}-log"))
        cid = container_id()
        try:
            env = env_of(ZYGOTE_RUNC_FILTER="local")
            assert rt("create", "--bundle", bundle.path, cid, env=env).returncode == 0
            assert rt("start", cid, env=env).returncode == 0
            init = rt.state(cid)["pid"]
            pidfile = tmp_path / f"{name}.pid"
            r = rt("exec", "--pid-file", str(pidfile), cid, "sh", "-c", MKDIR, env=env)
            assert r.returncode == 0, r.stderr
            shape = []
            for state, n_fds in a.states:
                pid = state["pid"]
                shape.append((n_fds, state["fds"], state.get("metadata"), state["state"]["status"],
                              state["state"]["id"] == cid, state["state"]["pid"] == init,
                              "init" if pid == init else "exec" if pid == int(pidfile.read_text()) else pid))
            seen[name] = (shape, r.stdout)
        finally:
            rt("delete", "--force", cid)
    assert seen["zygote-runc"] == seen["runc"], seen
    assert seen["runc"][0][1][-1] == "exec", seen


def test_listener_path_without_notify_is_ignored(runc, bundle, agent):
    """The spec: without SCMP_ACT_NOTIFY, listenerPath is ignored (runc too): no connection."""
    a = agent()
    notify_bundle(bundle, a.path)
    bundle.config["linux"]["seccomp"]["syscalls"] = []
    bundle.set_args("sh", "-c", MKDIR)
    r = runc("run", "--bundle", bundle.path, container_id(), env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode == 0, r.stderr
    assert "rc=0" in r.stdout and "made" in r.stdout, r.stdout
    assert a.states == [], a.states


REFUSED = {
    "notify-without-listenerPath": (notify_profile(None), "listenerPath: missing: syscalls[0]"),
    "notify-default-action": ({"defaultAction": "SCMP_ACT_NOTIFY", "listenerPath": "/x"},
                              "defaultAction: SCMP_ACT_NOTIFY cannot be the default action"),
    "notify-on-sendmsg": (notify_profile("/x", names=("getpid", "sendmsg")),
                          "syscalls[0].names: SCMP_ACT_NOTIFY cannot apply to sendmsg"),
    "metadata-without-path": ({"defaultAction": "SCMP_ACT_ALLOW", "listenerMetadata": "m"},
                              "listenerMetadata: set without listenerPath"),
    "wait-killable-without-notify": ({"defaultAction": "SCMP_ACT_ALLOW",
                                      "flags": ["SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"]},
                                     "flags[0]: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a rule"),
    "new-listener-flag": ({"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_NEW_LISTENER"]},
                          "flags[0]: SECCOMP_FILTER_FLAG_NEW_LISTENER is not an OCI flag"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_naming_the_field(runc, bundle, case):
    profile, message = REFUSED[case]
    bundle.config["linux"]["seccomp"] = profile
    bundle.set_args("true")
    cid = container_id()
    r = runc("run", "--bundle", bundle.path, cid, env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode != 0
    # "linux.seccomp: BUNDLE/config.json: FIELD: why"
    assert "linux.seccomp: " in r.stderr and f"config.json: {message}" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, cid)), "state left behind"


def test_agent_absent_fails_create_leaving_nothing(runc, bundle, tmp_path):
    """The hand-over fails (nobody listens): create fails naming listenerPath, and no process,
    state or cgroup of the container is left."""
    missing = str(tmp_path / "nobody.sock")
    notify_bundle(bundle, missing, metadata=None)
    bundle.set_args("sh", "-c", "mkdir /tmp/a; echo should-not-run")
    cid = container_id()
    r = runc("create", "--bundle", bundle.path, cid, env=env_of(ZYGOTE_RUNC_FILTER="local"))
    assert r.returncode != 0
    assert f"failed to connect with seccomp agent at linux.seccomp.listenerPath {missing}" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, cid)), "state left behind"
    assert not processes_naming(cid), "a process of the container is left"
    cgroup = bundle.config["linux"].get("cgroupsPath")
    if cgroup:
        assert not any(os.path.exists(os.path.join(h, cgroup.lstrip("/")))
                       for h in ("/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"))


def test_agent_hanging_up_fails_create_leaving_nothing(runc, bundle, tmp_path):
    """The agent takes the connection and closes it: the hand-over fails once the init has its
    filter; create fails naming listenerPath, and the init is killed and reaped, its state and
    cgroups gone."""
    path = str(tmp_path / "rude.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    srv.bind(path)
    srv.listen(1)

    def rude():
        conn, _ = srv.accept()
        conn.close()

    t = threading.Thread(target=rude, daemon=True)
    t.start()
    notify_bundle(bundle, path)
    bundle.set_args("sh", "-c", "echo should-not-run")
    cid = container_id()
    try:
        r = runc("create", "--bundle", bundle.path, cid, env=env_of(ZYGOTE_RUNC_FILTER="local"))
        t.join(10)
    finally:
        srv.close()
    assert r.returncode != 0
    assert f"seccomp agent at linux.seccomp.listenerPath {path}: " in r.stderr, r.stderr
    # failed at the hand-over (the connection was made before the init existed)
    assert "broken pipe" in r.stderr or "connection reset" in r.stderr, r.stderr
    assert "should-not-run" not in (r.stdout or "")
    assert not os.path.exists(os.path.join(runc.root, cid)), "state left behind"
    assert not processes_naming(cid), "a process of the container is left"


# ---- zygoted: the compiled program from its cache, and its own container worker ------------------

def test_program_from_zygoted_carries_the_listener(runc, bundle, agent, daemon):
    """GetFilter compiles SCMP_ACT_NOTIFY and its flags say NEW_LISTENER; zygote-runc, made to
    take the program from zygoted (no local fallback), hands the listener over as with its own
    compile."""
    a = agent()
    notify_bundle(bundle, a.path)
    bundle.set_args("sh", "-c", MKDIR)
    with varlink.connect(daemon.socket) as c:
        r = c.call(L + "GetFilter", {"seccomp": bundle.config["linux"]["seccomp"]})
        r.close_fds()
        assert r.parameters["flags"] & NEW_LISTENER, r.parameters
    cid = container_id()
    r = runc("--debug", "run", "--bundle", bundle.path, cid,
             env=env_of(ZYGOTE_SOCKET=daemon.socket, ZYGOTE_RUNC_FILTER="zygoted"))
    assert r.returncode == 0, r.stderr
    with open(runc.log) as f:  # runc's --debug with --log: the debug lines are in the log only
        debug = [e["msg"] for e in map(json.loads, f) if e["level"] == "debug"]
    assert any(f"from zygoted at {daemon.socket} (cached" in m for m in debug), debug
    assert "rc=1" in r.stdout and "absent" in r.stdout, r.stdout
    assert len(a.wait_states(1)) == 1
    check_state(*a.states[0], bundle, cid, "creating")


def test_zygoted_container_worker_hands_the_listener_over(daemon, bundle, agent, tmp_path):
    """CreateContainer: the worker takes the program from the daemon's cache (with its flags) and
    hands the init's listener to the agent; ExecContainer's process gets one of its own."""
    a = agent()
    notify_bundle(bundle, a.path)
    bundle.set_args("sh", "-c", MKDIR + "; exec sleep 60")
    cid, eid = container_id(), container_id("e-")
    out, exec_out = tmp_path / "out", tmp_path / "exec.out"
    with daemon.connect() as c, open(out, "w") as f, open(exec_out, "w") as g:
        fds = [os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC), f.fileno()]
        try:
            c.call(L + "CreateContainer", {"id": cid, "bundle": 0, "stdout": 1, "stderr": 1}, fds=fds).close_fds()
        finally:
            os.close(fds[0])
        try:
            assert len(a.wait_states(1)) == 1, a.states
            check_state(*a.states[0], bundle, cid, "creating")
            c.call(L + "Start", {"id": cid})
            init = c.call(L + "State", {"id": cid}).parameters["task"]["pid"]
            assert a.states[0][0]["pid"] == init, (a.states, init)
            proc = dict(bundle.config["process"], args=["sh", "-c", "mkdir /tmp/e; echo exec-rc=$?"])
            c.call(L + "ExecContainer", {"container": cid, "id": eid, "process": proc, "stdout": 0, "stderr": 0},
                   fds=[g.fileno()]).close_fds()
            assert len(a.wait_states(2)) == 2, a.states
            check_state(*a.states[1], bundle, cid, "running")
            assert a.states[1][0]["state"]["pid"] == init, a.states
            c.call(L + "Start", {"id": eid})
            assert c.call(L + "Wait", {"id": eid}).parameters["task"]["exitCode"] == 0
        finally:
            c.call(L + "Kill", {"id": cid, "signal": 9, "all": True}, check=False)
            c.call(L + "Wait", {"id": cid}, check=False)
            c.call(L + "Delete", {"id": eid}, check=False)
            c.call(L + "Delete", {"id": cid}, check=False)
    text = out.read_text()
    assert "rc=1" in text and "absent" in text, text
    assert "exec-rc=1" in exec_out.read_text(), exec_out.read_text()


def test_relative_listener_path(runc, bundle, agent, daemon, open_tmp):
    """A relative listenerPath: zygote-runc resolves it in its working directory, as runc does;
    zygoted refuses it by name (its worker has no working directory of the caller's)."""
    a = agent()
    notify_bundle(bundle, "agent.sock")
    bundle.set_args("sh", "-c", MKDIR)
    r = runc("run", "--bundle", bundle.path, container_id(), env=env_of(ZYGOTE_RUNC_FILTER="local"),
             cwd=str(open_tmp))
    assert r.returncode == 0, r.stderr
    assert "rc=1" in r.stdout and len(a.wait_states(1)) == 1, (r.stdout, a.states)
    cid = container_id()
    with daemon.connect() as c:
        fds = [os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)]
        try:
            e = c.call(L + "CreateContainer", {"id": cid, "bundle": 0}, fds=fds, check=False)
        finally:
            os.close(fds[0])
        assert e.error == L + "SpawnFailed", e
        assert "linux.seccomp.listenerPath agent.sock: not an absolute path" in e.parameters["message"], e
    assert len(a.wait_states(1)) == 1
    state_dir = os.path.join(os.path.dirname(daemon.socket), "containers")
    zytest.wait_for(lambda: not os.path.isdir(state_dir) or not os.listdir(state_dir), "no state left", timeout=10)
