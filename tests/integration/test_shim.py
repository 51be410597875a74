# SPDX-License-Identifier: MIT
"""zygote-shim end to end against a real zygoted: the lifecycle a containerd shim drives (create
with stdio fifos or fds, start, wait, kill on a signal, delete, exit with the task's code), Kill
of a created task, signals to every process of the task, a shim that crashes and a new one that
takes the task over (--attach) and still gets its status, and a caller of another uid.

The shim's --events-fd output (one JSON object a line: the daemon's create, start, exit and
delete events of its task, and "attach" when it took a task over) is how the tests know where
the shim is: they read it from a pipe, never poll or sleep.
"""
import json
import os
import signal
import subprocess
import time

import pytest

import varlink
import zytest
from zytest import NOBODY, wait_for

TIMEOUT = zytest.CALL_TIMEOUT


class Shim:
    """A zygote-shim process with its events on a pipe."""

    def __init__(self, d, *args, uid=None, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 events=True):
        self.events_r = None
        pass_fds = ()
        cmd = [os.path.join(d.bins["build"], "zygote-shim"), "--socket", d.socket]
        if events:
            self.events_r, events_w = os.pipe2(os.O_CLOEXEC)
            cmd += ["--events-fd", str(events_w)]
            pass_fds = (events_w,)
        cmd += list(args)
        if uid is not None:
            cmd = zytest.setpriv(uid, uid) + cmd
        self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=pass_fds,
                                     env=zytest.WORK_ENV, cwd="/")
        if events:
            os.close(events_w)  # the shim holds the only write end: EOF when it exits
        self.buf = b""
        self.seen = []

    def event(self):
        """The next line of the shim's event output, as a dict; None at EOF."""
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not zytest.wait_readable(self.events_r, left):
                raise TimeoutError(f"no event from zygote-shim; so far {self.seen}")
            chunk = os.read(self.events_r, 4096)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        e = json.loads(line)
        self.seen.append(e)
        return e

    def expect(self, type_):
        e = self.event()
        assert e is not None and e["type"] == type_, f"expected a {type_} event, got {e}; before: {self.seen[:-1]}"
        return e

    def rest(self):
        """The remaining event lines, up to EOF."""
        out = []
        while (e := self.event()) is not None:
            out.append(e)
        return out

    def signal(self, sig):
        self.proc.send_signal(sig)

    def finish(self):
        """Waits for the shim; returns (exit status, stdout, stderr)."""
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise
        return self.proc.returncode, out or b"", (err or b"").decode(errors="replace")

    def close(self):
        # Not communicate(): a task that outlives its shim may hold the other ends of its pipes.
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        if self.events_r is not None:
            os.close(self.events_r)
            self.events_r = None


@pytest.fixture
def shims():
    started = []

    def start(*args, **kw):
        s = Shim(*args, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()


@pytest.fixture
def shim_bin(bins):
    path = os.path.join(bins["build"], "zygote-shim")
    if not os.access(path, os.X_OK):
        pytest.fail(f"not built: {path}")
    return path


def task_state(d, task_id):
    """The daemon's Task, or None when it says NoSuchTask."""
    with d.connect() as c:
        r = c.call("io.zygote.Launcher.State", {"id": task_id}, check=False)
    if r.error == "io.zygote.Launcher.NoSuchTask":
        return None
    assert not r.error, dict(r)
    return r.parameters["task"]


def check_lifecycle_events(events, task_id, pid, started=True):
    """create, [start,] exit, delete of one task, its pid in each, times in order."""
    want = ["create", "start", "exit", "delete"] if started else ["create", "exit", "delete"]
    assert [e["type"] for e in events] == want, events
    assert all(e["id"] == task_id and e["pid"] == pid for e in events), events
    times = [e["time"] for e in events]
    assert times == sorted(times), events
    assert time.time() - 600 < times[0] <= time.time() + 1
    return {e["type"]: e for e in events}


def held_exes(d):
    """What a held worker may still run: zygote-ref (inherit tier) or zygoted (clone, load), which
    runs from a sealed memfd copy of itself."""
    return {os.path.realpath(d.bins["zygote-ref"]), "/memfd:zygoted (deleted)"}


# ---- the lifecycle ------------------------------------------------------------------------------

def test_fifos_and_exit_code(daemon, shims, shim_bin):
    """Stdio on fifos, as containerd hands them to a shim; the shim exits with the task's code."""
    paths = {n: os.path.join(daemon.dir, f"shim-{n}") for n in ("in", "out", "err")}
    for p in paths.values():
        os.mkfifo(p, 0o600)
    # Our ends first, as containerd opens its own before Create: reading ends that do not block,
    # and a writer for stdin (O_RDWR never blocks on a fifo).
    out_r = os.open(paths["out"], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    err_r = os.open(paths["err"], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    in_w = os.open(paths["in"], os.O_RDWR | os.O_CLOEXEC)
    pid_file = os.path.join(daemon.dir, "shim.pid")
    s = shims(daemon, "--id", "shim-fifo", "--stdin", paths["in"], "--stdout", paths["out"], "--stderr",
              paths["err"], "--pid-file", pid_file, "--",
              "sh", "-c", 'read line; echo "out:$line"; echo "err:$line" >&2; exit 7')
    create = s.expect("create")
    with open(pid_file) as f:
        assert int(f.read()) == create["pid"]
    os.write(in_w, b"hello\n")
    os.close(in_w)
    assert zytest.read_all(out_r) == b"out:hello\n"
    assert zytest.read_all(err_r) == b"err:hello\n"
    rc, _, err = s.finish()
    assert rc == 7, err
    ev = check_lifecycle_events([create] + s.rest(), "shim-fifo", create["pid"])
    assert ev["exit"]["exitCode"] == 7 and "signal" not in ev["exit"]
    assert task_state(daemon, "shim-fifo") is None, "the shim did not delete its task"


def test_own_stdio_and_statuses(daemon, shims, shim_bin):
    """Without fifos the task gets the shim's fds; every way of ending gives the shell's status."""
    data = os.urandom(200000)
    p = subprocess.run([shim_bin, "--socket", daemon.socket, "--", "cat"], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT, env=zytest.WORK_ENV)
    assert p.returncode == 0 and p.stdout == data, p.stderr
    cases = [
        (["sh", "-c", "exit 3"], 3),
        (["sh", "-c", "kill -KILL $$"], 128 + signal.SIGKILL),
        (["/nonexistent/zygote-cmd"], 127),
        (["/etc"], 126),
    ]
    for argv, code in cases:
        p = subprocess.run([shim_bin, "--socket", daemon.socket, "--", *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, env=zytest.WORK_ENV)
        assert p.returncode == code, (argv, p.returncode, p.stderr)
        if code in (126, 127):
            assert b"exec" in p.stderr, p.stderr
    # Every task was deleted by its shim.
    with daemon.connect() as c:
        assert c.call("io.zygote.Launcher.List").parameters["tasks"] == []


def test_usage_errors(daemon, shim_bin):
    for args in ([], ["--attach", "x", "--", "true"], ["--no-such-option"], ["--events-fd", "999", "--", "true"]):
        p = subprocess.run([shim_bin, "--socket", daemon.socket, *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
    p = subprocess.run([shim_bin, "--socket", os.path.join(daemon.dir, "nothing.sock"), "--", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert p.returncode == 1 and b"connect" in p.stderr


@pytest.mark.parametrize("tier", ["auto", "load"])
def test_kill_created(daemons, needs_root, shims, tier):
    """A signal to the shim while the task is created kills it: it never runs."""
    d = daemons(tier=tier)
    s = shims(d, "--hold", "--id", "shim-created", "--", "sh", "-c", "echo ran")
    create = s.expect("create")
    pid = create["pid"]
    # Held: already under the filter, and still the daemon's (or the reference's) binary.
    assert zytest.proc_status(pid)["Seccomp"] == "2"
    assert os.path.realpath(f"/proc/{pid}/exe") in held_exes(d)
    assert task_state(d, "shim-created")["state"] == "created"
    s.signal(signal.SIGTERM)
    rc, out, err = s.finish()
    assert rc == 128 + signal.SIGTERM, err
    assert out == b"", "a killed created task ran"
    ev = check_lifecycle_events([create] + s.rest(), "shim-created", pid, started=False)
    assert ev["exit"]["signal"] == signal.SIGTERM
    assert task_state(d, "shim-created") is None


def test_hold_then_start(daemon, shims):
    """--hold: created first, started on SIGUSR1 (containerd's separate Start call)."""
    s = shims(daemon, "--hold", "--id", "shim-start", "--", "sh", "-c", "echo started; exit 5")
    create = s.expect("create")
    assert task_state(daemon, "shim-start")["state"] == "created"
    s.signal(signal.SIGUSR1)
    rc, out, err = s.finish()
    assert rc == 5, err
    assert out == b"started\n"
    ev = check_lifecycle_events([create] + s.rest(), "shim-start", create["pid"])
    assert ev["exit"]["exitCode"] == 5


def assert_sigint_forwarded(s):
    """SIGINT to shim S (running cat) goes to its task: the task exits on it, the shim with 128+2,
    its events an exit by that signal and the delete."""
    s.signal(signal.SIGINT)
    # The task's exit before finish(): finish() closes the shim's stdin, which is cat's, and a cat
    # that reads EOF before the shim has forwarded the signal exits 0 on its own.
    ev = [s.event()]
    rc, _, err = s.finish()
    assert rc == 128 + signal.SIGINT, err
    ev += s.rest()
    assert [e["type"] for e in ev] == ["exit", "delete"] and ev[0]["signal"] == signal.SIGINT


def test_signal_forwarded(daemon, shims):
    """A signal to the shim goes to the running task (Kill); the shim exits with 128+N."""
    s = shims(daemon, "--id", "shim-int", "--", "cat", stdin=subprocess.PIPE)
    create = s.expect("create")
    s.expect("start")
    assert os.path.realpath(f"/proc/{create['pid']}/exe") == os.path.realpath("/usr/bin/cat")
    assert_sigint_forwarded(s)


def test_kill_all(daemon, shims):
    """--kill-all: the signal reaches every process of the task, not only its first."""
    s = shims(daemon, "--kill-all", "--id", "shim-all", "--", "sh", "-c",
              "exec 3<&0; cat <&3 & cat <&3 & echo ready; wait", stdin=subprocess.PIPE)
    create = s.expect("create")
    s.expect("start")
    assert zytest.wait_readable(s.proc.stdout.fileno(), TIMEOUT), "the task never said ready"
    assert s.proc.stdout.readline() == b"ready\n"
    with daemon.connect() as c:
        pids = c.call("io.zygote.Launcher.Pids", {"id": "shim-all"}).parameters["pids"]
    assert create["pid"] in pids and len(pids) == 3, pids
    pidfds = [os.pidfd_open(p) for p in pids]
    try:
        s.signal(signal.SIGTERM)
        for fd in pidfds:
            assert zytest.wait_readable(fd, TIMEOUT), "a process of the task survived Kill all"
    finally:
        for fd in pidfds:
            os.close(fd)
    rc, _, err = s.finish()
    assert rc == 128 + signal.SIGTERM, err


# ---- a shim that goes away, and the one that takes over ------------------------------------------

def test_reattach_after_exit(daemon, shims):
    """The shim crashes; the task exits while no shim is connected; a new shim gets its status."""
    fifo = os.path.join(daemon.dir, "reattach-in")
    os.mkfifo(fifo, 0o600)
    in_w = os.open(fifo, os.O_RDWR | os.O_CLOEXEC)
    # The task's stdio must not be pipes to the shim's reader here: the task keeps them open
    # after the crash, and finish() would wait for their EOF.
    s1 = shims(daemon, "--id", "shim-re", "--stdin", fifo, "--", "sh", "-c", "read x; exit 7",
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    create = s1.expect("create")
    s1.expect("start")
    s1.signal(signal.SIGKILL)  # a crash: no Kill, no Delete
    s1.finish()
    assert task_state(daemon, "shim-re")["state"] == "running"
    task_pidfd = os.pidfd_open(create["pid"])
    os.write(in_w, b"go\n")
    os.close(in_w)
    assert zytest.wait_readable(task_pidfd, TIMEOUT)
    os.close(task_pidfd)
    st = task_state(daemon, "shim-re")
    assert st["state"] == "stopped" and st["exitCode"] == 7, st  # kept with no client at all

    s2 = shims(daemon, "--attach", "shim-re")
    attach = s2.expect("attach")
    assert attach["state"] == "stopped" and attach["exitCode"] == 7 and attach["pid"] == create["pid"]
    rc, _, err = s2.finish()
    assert rc == 7, err
    assert [e["type"] for e in s2.rest()] == ["delete"]
    assert task_state(daemon, "shim-re") is None


def test_reattach_created_then_start(daemon, shims):
    """The shim crashes while its task is created; a new shim starts it, waits and deletes it."""
    s1 = shims(daemon, "--hold", "--id", "shim-re2", "--", "sh", "-c", "exit 9", stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
    create = s1.expect("create")
    s1.signal(signal.SIGKILL)
    s1.finish()
    assert task_state(daemon, "shim-re2")["state"] == "created"

    s2 = shims(daemon, "--attach", "shim-re2")
    attach = s2.expect("attach")
    assert attach["state"] == "created" and attach["pid"] == create["pid"]
    s2.signal(signal.SIGUSR1)  # start
    rc, _, err = s2.finish()
    assert rc == 9, err
    assert [e["type"] for e in s2.rest()] == ["start", "exit", "delete"]
    assert task_state(daemon, "shim-re2") is None


def test_attach_unknown(daemon, shim_bin):
    p = subprocess.run([shim_bin, "--socket", daemon.socket, "--attach", "no-such-task"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert p.returncode == 1 and b"NoSuchTask" in p.stderr, p.stderr


# ---- another uid ----------------------------------------------------------------------------------

def test_other_uid(daemon, shims, shim_bin):
    """A shim of uid 65534 runs its task as itself and cannot take over root's task."""
    p = subprocess.run(zytest.setpriv(NOBODY, NOBODY) + [shim_bin, "--socket", daemon.socket, "--", "id", "-u"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT, env=zytest.WORK_ENV, cwd="/")
    assert p.returncode == 0 and p.stdout == f"{NOBODY}\n".encode(), p.stderr

    s = shims(daemon, "--hold", "--id", "shim-root", "--", "true")
    s.expect("create")
    other = shims(daemon, "--attach", "shim-root", uid=NOBODY)
    rc, _, err = other.finish()
    assert rc == 1 and "NoSuchTask" in err, err
    assert other.rest() == []
    assert task_state(daemon, "shim-root")["state"] == "created", "the other uid's shim touched the task"
    s.signal(signal.SIGTERM)
    rc, _, err = s.finish()
    assert rc == 128 + signal.SIGTERM, err


def test_signal_forwarded_after_the_control_connection_idled(daemons, needs_root, shims):
    """zygoted closes a connection with no call in progress once it idled (1 s here through the
    test seam ZYGOTE_IDLE_TIMEOUT_SEC, 120 s otherwise), and the shim's control connection idles
    for as long as its task runs: a signal then reconnects for the Kill, and the Delete after
    the exit too (before, both failed on the closed connection)."""
    d = daemons(env={"ZYGOTE_IDLE_TIMEOUT_SEC": "1"})
    s = shims(d, "--id", "shim-idle", "--", "cat", stdin=subprocess.PIPE)
    s.expect("create")
    s.expect("start")
    wait_for(lambda: "idle for 1s" in d.log(), "zygoted closing the shim's idle control connection", timeout=30)
    assert_sigint_forwarded(s)
    assert task_state(d, "shim-idle") is None
