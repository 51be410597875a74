# SPDX-License-Identifier: MIT
"""Helpers of the integration tests: start and stop a real zygoted, run launchctl and workloads,
read what /proc says about a task.

Every daemon gets its own socket in its own directory and a log file for its stderr; it is
ready when its socket accepts a connection (polled with a deadline, never a bare sleep).
"""
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import varlink

NOBODY = 65534      # the unprivileged user of setups (a) and (b)
NOGROUP = 65534
OTHER_UID = 65533   # another unprivileged uid (no passwd entry needed)
OTHER_GID = 65533

START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
CALL_TIMEOUT = 60.0

# Capability numbers (linux/capability.h), for turning ProfileInfo.capabilities into a mask.
CAP_NUMBERS = {
    "CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3,
    "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
    "CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_BROADCAST": 11,
    "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_IPC_OWNER": 15,
    "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
    "CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_NICE": 23,
    "CAP_SYS_RESOURCE": 24, "CAP_SYS_TIME": 25, "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27,
    "CAP_LEASE": 28, "CAP_AUDIT_WRITE": 29, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
    "CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
    "CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
    "CAP_CHECKPOINT_RESTORE": 40,
}

# Docker's 14 default capabilities: the bounding set of the "default" profile.
DOCKER_CAPS_MASK = 0x00000000A80425FB

WORK_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def cap_last():
    with open("/proc/sys/kernel/cap_last_cap") as f:
        return int(f.read())


def full_capset():
    """The bounding set a process started from here gets: every capability the kernel knows,
    less what our own environment already dropped (a container may lack some)."""
    return int(proc_status(os.getpid())["CapBnd"], 16) & ((1 << (cap_last() + 1)) - 1)


def caps_mask(names):
    m = 0
    for n in names:
        m |= 1 << CAP_NUMBERS[n.upper()]
    return m


def is_root():
    return os.geteuid() == 0


def chrooted():
    """Whether this process runs chrooted (scripts/fresh-check.sh's rehearsal does): joining its
    own mount namespace lands at that namespace's root, which is not ours then."""
    joined = subprocess.run(["nsenter", "--mount=/proc/self/ns/mnt", "stat", "-c", "%d:%i", "/"],
                            capture_output=True, text=True, timeout=30)
    if joined.returncode != 0:
        return False
    st = os.stat("/")
    return joined.stdout.strip() != f"{st.st_dev}:{st.st_ino}"


def apparmor_enabled():
    """Whether this kernel applies AppArmor profiles."""
    try:
        with open("/sys/module/apparmor/parameters/enabled") as f:
            return f.read().strip() == "Y"
    except OSError:
        return False


def setpriv(uid, gid):
    """The command prefix that runs a program as uid:gid with no supplementary groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]


def proc_status(pid):
    """/proc/PID/status as a dict of stripped strings."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def inherit_reference(d):
    """The pid of the default profile's reference process; a skip when that profile is not in
    the inherit tier here."""
    import pytest
    p = d.profiles()["default"]
    if p["tier"] != "inherit" or not p.get("referencePid"):
        pytest.skip("the default profile is not in the inherit tier here")
    return p["referencePid"]


def wait_for(cond, what, timeout=30.0):
    """Polls cond() with a deadline (a condition, not a sleep: returns as soon as it holds)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        select.select([], [], [], 0.02)


def pidfd_pid(fd):
    """The pid a pidfd of ours refers to, from its fdinfo (None if it says none)."""
    with open(f"/proc/self/fdinfo/{fd}") as f:
        for line in f:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return None


def wait_readable(fd, timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    return bool(r)


def read_until(fd, marker, timeout):
    """What FD (a terminal's master, say) gives until MARKER has come, it ends or fails, or
    TIMEOUT seconds have gone by."""
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out:
        left = deadline - time.monotonic()
        if left <= 0 or not wait_readable(fd, left):
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


def strace_attach(pid, *options):
    """strace -p PID OPTIONS, returned once it has attached (its stderr says so). Skips the test
    when strace is not installed. The caller kills and waits for it."""
    import pytest
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("needs strace (scripts/deps.sh --test)")
    tracer = subprocess.Popen([strace, "-p", str(pid), *options], stderr=subprocess.PIPE)
    try:
        line = b""
        while b"attached" not in line:
            assert wait_readable(tracer.stderr.fileno(), 30), "strace did not attach"
            line = tracer.stderr.readline()
            assert line, f"strace exited: {tracer.wait()}"
    except BaseException:
        tracer.kill()
        tracer.wait()
        raise
    return tracer


def pidfd_wait_exit(pid, timeout):
    """Waits (on a pidfd, no polling) until process pid has exited. True if it did."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return wait_readable(fd, timeout)
    finally:
        os.close(fd)


def read_all(fd, timeout=CALL_TIMEOUT):
    """Reads fd until EOF (bounded by a deadline) and closes it."""
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not wait_readable(fd, left):
                raise TimeoutError("no EOF on the task's output")
            b = os.read(fd, 65536)
            if not b:
                return b"".join(chunks)
            chunks.append(b)
    finally:
        os.close(fd)


class DaemonDied(Exception):
    pass


class Daemon:
    """One zygoted on its own socket. as_uid runs it unprivileged (setup (b))."""

    def __init__(self, bins, workdir, tier=None, profile_dirs=None, as_uid=None, env=None, args=()):
        self.bins = bins
        self.dir = workdir
        self.socket = os.path.join(workdir, "zygoted.sock")
        self.logpath = os.path.join(workdir, "zygoted.log")
        self.tier = tier
        self.profile_dirs = profile_dirs if profile_dirs is not None else [bins["profiles"]]
        self.as_uid = as_uid
        self.env = env or {}
        self.args = list(args)
        self.proc = None
        self.stopped = False

    def command(self):
        cmd = [self.bins["zygoted"], "--socket", self.socket]
        for d in self.profile_dirs:
            cmd += ["--profiles", d]
        if self.tier:
            cmd += ["--tier", self.tier]
        # ZYTEST_DAEMON_ARGS: options of every daemon of a run (none of tests/CMakeLists.txt's entries now)
        cmd += list(self.args) + os.environ.get("ZYTEST_DAEMON_ARGS", "").split()
        if self.as_uid is not None:
            cmd = setpriv(self.as_uid, self.as_uid) + cmd
        return cmd

    def start(self, wait=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ZYGOTE_") and k != "JOURNAL_STREAM"}
        env.update(self.env)
        # ZYTEST_DISABLE_FEATURES: fallbacks forced in every daemon of a run (tests/CMakeLists.txt's
        # *-fallbacks entries), besides what a test forces itself
        forced = [f for f in (os.environ.get("ZYTEST_DISABLE_FEATURES", ""), env.get("ZYGOTE_DISABLE_FEATURES", ""))
                  if f]
        if forced:
            env["ZYGOTE_DISABLE_FEATURES"] = ",".join(forced)
        with open(self.logpath, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         env=env, cwd=self.dir, close_fds=True)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=START_TIMEOUT):
        """Ready = the socket accepts a connection. Polls the path with short select timeouts
        until a deadline, and notices at once when the daemon exits instead."""
        deadline = time.monotonic() + timeout
        while True:
            rc = self.proc.poll()
            if rc is not None:
                raise DaemonDied(f"zygoted exited with status {rc} before listening:\n{self.log()}")
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
                try:
                    s.connect(self.socket)
                    return
                finally:
                    s.close()
            except (FileNotFoundError, ConnectionRefusedError):
                pass
            if time.monotonic() > deadline:
                raise DaemonDied(f"zygoted not listening after {timeout}s:\n{self.log()}")
            select.select([], [], [], 0.02)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM; returns the exit status. Raises DaemonDied if it was no longer running."""
        if self.stopped:
            return self.proc.returncode
        self.stopped = True
        rc = self.proc.poll()
        if rc is not None:
            raise DaemonDied(f"zygoted died during the test (status {rc})")
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise DaemonDied(f"zygoted did not exit within {STOP_TIMEOUT}s of SIGTERM")

    def log(self):
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    # ---- clients ------------------------------------------------------------------------------
    def connect(self, timeout=CALL_TIMEOUT):
        return varlink.connect(self.socket, timeout)

    def connect_as(self, uid, gid=None, groups=(), timeout=CALL_TIMEOUT):
        return varlink.connect_as(self.socket, uid, uid if gid is None else gid, groups, timeout)

    def status(self):
        with self.connect() as c:
            return c.call("io.zygote.Launcher.GetStatus").parameters

    def profiles(self):
        return {p["name"]: p for p in self.status()["profiles"]}

    def launchctl(self, *args, uid=None, input=None, stdin=None, stdout=subprocess.PIPE,
                  timeout=CALL_TIMEOUT, env=None):
        cmd = [self.bins["launchctl"], "--socket", self.socket, *args]
        if uid is not None:
            cmd = setpriv(uid, uid) + cmd
        e = {"PATH": WORK_ENV["PATH"], "LANG": WORK_ENV["LANG"]}
        if env:
            e.update(env)
        return subprocess.run(cmd, input=input, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                              timeout=timeout, env=e, cwd="/")


class Task:
    """A task started with Spawn "more": true, whose stdin and stdout are pipes we hold."""

    def __init__(self, conn, first, stdin_w, stdout_r):
        self.conn = conn
        self.reply = first
        self.id = first.parameters["id"]
        self.pid = first.parameters["pid"]
        self.tier = first.parameters["tier"]
        self.pidfd = first.fds[0] if first.fds else None
        self.stdin = stdin_w
        self.stdout = stdout_r

    def close_stdin(self):
        if self.stdin is not None:
            os.close(self.stdin)
            self.stdin = None

    def finish(self):
        """Closes stdin, reads stdout to EOF, returns (output, final Task dict)."""
        self.close_stdin()
        fd, self.stdout = self.stdout, None  # read_all closes it, even on failure
        out = read_all(fd) if fd is not None else b""
        final = self.conn.recv()
        assert not final.error, f"Spawn's final reply is an error: {dict(final)}"
        assert not final.continues, f"more than two replies to Spawn: {dict(final)}"
        return out, final.parameters["task"]

    def cleanup(self):
        self.close_stdin()
        if self.stdout is not None:
            os.close(self.stdout)
            self.stdout = None
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def spawn(conn, argv, profile=None, stdin=True, stdout=True, env=None, extra=None, stdin_data=None):
    """Spawn with "more": true and pipes for stdin/stdout (stderr goes to our stderr). Returns a
    Task once the first reply arrived (the worker has exec'd), or raises VarlinkError."""
    fds, mapping = [], []
    stdin_r = stdin_w = stdout_r = stdout_w = None
    if stdin:
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
        mapping.append({"fd": len(fds), "target": 0})
        fds.append(stdin_r)
    if stdout:
        stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
        mapping.append({"fd": len(fds), "target": 1})
        fds.append(stdout_w)
    mapping.append({"fd": len(fds), "target": 2})
    fds.append(2)
    params = {"argv": list(argv), "env": [f"{k}={v}" for k, v in (env or WORK_ENV).items()], "fds": mapping}
    if profile:
        params["profile"] = profile
    if extra:
        params.update(extra)
    try:
        first = conn.call_more("io.zygote.Launcher.Spawn", params, fds=fds)
    finally:
        # The daemon has its copies (or refused): ours of the child's ends go now, so that EOF
        # on stdout means the task closed it.
        for fd in (stdin_r, stdout_w):
            if fd is not None:
                os.close(fd)
    if first.error:
        for fd in (stdin_w, stdout_r):
            if fd is not None:
                os.close(fd)
        raise varlink.VarlinkError(first)
    assert first.continues, f"first Spawn reply without continues: {dict(first)}"
    t = Task(conn, first, stdin_w, stdout_r)
    if stdin_data is not None:
        os.write(t.stdin, stdin_data)
    return t


def spawn_and_status(conn, argv, data=b"", **kw):
    """Spawns argv (a cat, as a rule), reads its /proc status while it runs, then writes data to
    its stdin and waits for it: returns (status dict, stdout bytes, final task, tier)."""
    t = spawn(conn, argv, **kw)
    try:
        st = proc_status(t.pid)
        if data:
            os.write(t.stdin, data)
        out, final = t.finish()
    finally:
        t.cleanup()
    return st, out, final, t.tier


def run_task(conn, argv, stdin_data=b"", **kw):
    """Spawns argv with stdin_data on its stdin; returns (stdout bytes, final task, tier)."""
    t = spawn(conn, argv, **kw)
    try:
        if stdin_data:
            # Pipe capacity is 64 KiB: the workloads' inputs are smaller.
            os.write(t.stdin, stdin_data)
        out, final = t.finish()
        return out, final, t.tier
    finally:
        t.cleanup()


def run_direct(argv, stdin_data=b"", uid=None, env=None, cwd="/"):
    """The same program without zygote, as the same user, for the reference output."""
    cmd = list(argv)
    if uid is not None:
        cmd = setpriv(uid, uid) + cmd
    p = subprocess.run(cmd, input=stdin_data, stdout=subprocess.PIPE, env=env or WORK_ENV, cwd=cwd,
                       timeout=CALL_TIMEOUT)
    return p.stdout, p.returncode


def make_workdir():
    """A fresh directory every uid may traverse (pytest's own tmp dirs are 0700 root)."""
    d = tempfile.mkdtemp(prefix="zyit-")
    os.chmod(d, 0o755)
    return d


def remove_workdir(d):
    shutil.rmtree(d, ignore_errors=True)


# What other uids exec or read: zygoted as setup (b), launchctl and the shim as callers, the
# workloads, the reference helper (the daemon opens it, but an unprivileged daemon looks for it).
STAGED_PROGRAMS = ("zygoted", "launchctl", "zygote-ref", "try-syscall", "zygote-shim", "zygote-load", "zygote-record",
                   "late-thread")


def stage_build(build, source):
    """Copies the programs of the build (and libzygote, which the shim finds at $ORIGIN/client)
    and the bundled profiles into a fresh directory every uid may search: the tree may lie where
    only its owner can (a clone in /root, mode 0700), and a uid that cannot reach a file cannot
    exec or read it. Returns (directory, {name: path}); the caller removes the directory."""
    stage = make_workdir()

    def copy(src, dst, mode):
        shutil.copyfile(src, dst)
        os.chmod(dst, mode)
        return dst

    paths = {name: copy(os.path.join(build, name), os.path.join(stage, name), 0o755)
             for name in STAGED_PROGRAMS if os.access(os.path.join(build, name), os.X_OK)}
    os.mkdir(os.path.join(stage, "libzygote"), 0o755)
    lib = os.path.join(build, "libzygote")
    for name in os.listdir(lib) if os.path.isdir(lib) else ():
        if name.startswith("libzygote.so"):
            copy(os.path.join(lib, name), os.path.join(stage, "libzygote", name), 0o644)
    paths["profiles"] = os.path.join(stage, "profiles")
    os.mkdir(paths["profiles"], 0o755)
    for name in os.listdir(os.path.join(source, "profiles")):
        copy(os.path.join(source, "profiles", name), os.path.join(paths["profiles"], name), 0o644)
    return stage, paths


def in_child(body):
    """Runs body() in a forked child, so that what it does to its process (ids dropped, no_new_privs,
    a Landlock domain, threads) never reaches the test's own; returns body()'s JSON-able result.
    An exception in the child fails the test here with its repr."""
    import json
    rd, wr = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(rd)
            os.write(wr, json.dumps({"result": body()}).encode())
            code = 0
        except BaseException as e:  # never return into pytest from the child
            try:
                os.write(wr, json.dumps({"crash": repr(e)}).encode())
            except OSError:
                pass
        finally:
            os._exit(code)
    os.close(wr)
    try:
        got = read_all(rd, CALL_TIMEOUT)
    finally:
        if not pidfd_wait_exit(pid, CALL_TIMEOUT):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
    res = json.loads(got)
    assert "crash" not in res, res["crash"]
    return res["result"]
