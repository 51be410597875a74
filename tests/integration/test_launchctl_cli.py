# SPDX-License-Identifier: MIT
"""launchctl without zygoted: argument handling, error paths and exit codes, against no daemon at
all or against a fake daemon in this process that speaks io.zygote.Launcher (NUL-framed JSON on a
Unix socket, fds as SCM_RIGHTS) with canned replies.

Run: /usr/bin/python3 -m pytest -q tests/integration/test_launchctl_cli.py --build-dir build
"""
import errno
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading

import pytest


@pytest.fixture(scope="module")
def launchctl(request):
    path = os.path.join(os.path.abspath(request.config.getoption("--build-dir")), "launchctl")
    if not os.access(path, os.X_OK):
        pytest.fail(f"not built: {path}")
    return path


def run(launchctl, *args, env=None, timeout=30, **kw):
    e = {k: v for k, v in os.environ.items() if k != "ZYGOTE_SOCKET"}
    e.update(env or {})
    return subprocess.run([launchctl, *args], env=e, capture_output=True, text=True, timeout=timeout, **kw)


# ---- without any daemon ----------------------------------------------------------------------

def test_help_and_version(launchctl):
    r = run(launchctl, "--help")
    assert r.returncode == 0
    for verb in ("run", "ps", "kill", "wait", "start", "state", "delete", "profiles", "status", "reload"):
        assert f"\n  {verb} " in r.stdout
    assert "ZYGOTE_SOCKET" in r.stdout
    r = run(launchctl, "--version")
    assert r.returncode == 0 and r.stdout.startswith("launchctl (zygote) ")


@pytest.mark.parametrize("verb", ["run", "ps", "kill", "wait", "start", "state", "delete", "profiles", "status",
                                  "reload"])
def test_verb_help(launchctl, verb):
    # --help never needs a daemon, even where the socket is nonsense.
    r = run(launchctl, "--socket", "/nonexistent/sock", verb, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Usage: launchctl {verb} ")
    assert "--json" in r.stdout


def test_run_help_documents_environment(launchctl):
    r = run(launchctl, "run", "--help")
    for s in ("PATH, TERM and LANG", "--env-clear", "--detach", "--hold", "125", "126", "127"):
        assert s in r.stdout


def test_status_help_documents_snake_case(launchctl):
    r = run(launchctl, "status", "--help")
    assert "bpf_instructions" in r.stdout and "reference_pid" in r.stdout


@pytest.mark.parametrize("args,message", [
    ((), "missing verb"),
    (("frobnicate",), "unknown verb 'frobnicate'"),
    (("--bogus", "ps"), "unknown option '--bogus'"),
    (("--socket",), "needs a path"),
    (("run",), "missing command"),
    (("run", "--profile", "x"), "missing command"),
    (("run", "--"), "missing command"),
    (("run", "--bogus", "--", "true"), "unknown option '--bogus'"),
    (("run", "--env", "NOEQUALS", "--", "true"), "--env wants KEY=VALUE"),
    (("run", "--env", "=x", "--", "true"), "--env wants KEY=VALUE"),
    (("run", "--profile"), "needs an argument"),
    (("kill",), "missing argument"),
    (("kill", "id", "BOGUS"), "unknown signal 'BOGUS'"),
    (("kill", "id", "SIGBOGUS"), "unknown signal 'SIGBOGUS'"),
    (("kill", "id", "0"), "unknown signal '0'"),
    (("kill", "id", "99"), "unknown signal '99'"),
    (("kill", "id", "RTMIN+99"), "unknown signal 'RTMIN+99'"),
    (("kill", "id", "TERM", "extra"), "unexpected argument 'extra'"),
    (("ps", "extra"), "unexpected argument 'extra'"),
    (("wait",), "missing argument"),
    (("state", "--all", "x"), "unknown option '--all'"),
])
def test_usage_errors(launchctl, args, message):
    # Usage errors come before any connection attempt: the socket does not matter.
    r = run(launchctl, *args, env={"ZYGOTE_SOCKET": "/nonexistent/zygoted.sock"})
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "--help" in r.stderr
    assert "cannot connect" not in r.stderr


@pytest.mark.parametrize("args", [
    ("ps",), ("status",), ("status", "--json"), ("kill", "x", "SIGKILL"), ("kill", "x", "9"), ("kill", "x", "hup"),
    ("kill", "x", "RTMIN+1"), ("wait", "x"), ("start", "x"), ("state", "x"), ("delete", "x"), ("profiles",),
    ("reload",), ("run", "--", "true"), ("run", "--detach", "--", "true"),
])
def test_no_daemon(launchctl, args):
    r = run(launchctl, *args, env={"ZYGOTE_SOCKET": "/nonexistent/zygoted.sock"})
    assert r.returncode == 1
    assert r.stderr == ("launchctl: cannot connect to /nonexistent/zygoted.sock: No such file or directory "
                        "(is zygoted running? set ZYGOTE_SOCKET or --socket)\n")
    if args == ("status",):
        # the status of a daemon that does not answer says so, and how it is started
        first = "zygoted: not running\nstart it: systemctl enable --now zygoted.socket (the system daemon, as root)"
        assert r.stdout.startswith(first), r.stdout
        assert ("systemctl --user enable --now zygoted.socket" in r.stdout) == (os.geteuid() != 0), r.stdout
    else:
        assert r.stdout == ""


def test_no_daemon_socket_option_wins(launchctl):
    r = run(launchctl, "--socket", "/nonexistent/a.sock", "ps", env={"ZYGOTE_SOCKET": "/nonexistent/b.sock"})
    assert r.returncode == 1 and "/nonexistent/a.sock" in r.stderr
    r = run(launchctl, "ps", "--socket", "/nonexistent/c.sock", env={"ZYGOTE_SOCKET": "/nonexistent/b.sock"})
    assert r.returncode == 1 and "/nonexistent/c.sock" in r.stderr


def test_no_daemon_default_path(launchctl):
    if os.geteuid() != 0:
        pytest.skip("the default path of root")
    if os.path.exists("/run/zygote/zygoted.sock"):
        pytest.skip("a system zygoted runs here")
    r = run(launchctl, "ps")
    assert r.returncode == 1
    assert "cannot connect to /run/zygote/zygoted.sock: No such file or directory" in r.stderr


def test_not_a_daemon(launchctl, tmp_path):
    # A socket path that exists but nobody listens on.
    path = str(tmp_path / "dead.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    r = run(launchctl, "--socket", path, "ps")
    assert r.returncode == 1 and "Connection refused" in r.stderr


# ---- against a fake daemon -------------------------------------------------------------------

IFACE = "io.zygote.Launcher."


def task(id_, state="stopped", **kw):
    t = {"id": id_, "profile": "default", "state": state, "pid": 4242, "uid": 0, "tier": "load",
         "argv": ["/bin/true"], "createdAt": 1700000000.5}
    t.update(kw)
    return t


class FakeDaemon:
    """Listens on a socket; each connection gets a thread; handler(conn, method, params, fds, msg)
    sends the replies (conn.reply / conn.error). Every call is recorded. A Spawn with "more" (a
    foreground run) is answered as zygoted does, in two replies: the handler's Spawn reply goes
    out with continues, then the handler is asked for the final one as if Wait had been called
    (recorded as "Spawn more" and "(Wait)")."""

    def __init__(self, handler):
        self.dir = tempfile.mkdtemp(prefix="zygote-fake-")
        self.path = os.path.join(self.dir, "zygoted.sock")
        self.handler = handler
        self.calls = []
        self.lock = threading.Lock()
        self.called = threading.Condition(self.lock)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(16)
        self.errors = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                s, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(Conn(s),), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                m = conn.read()
                if m is None:
                    return
                msg, fds = m
                with self.lock:
                    self.calls.append((msg["method"], msg.get("parameters", {}), len(fds)))
                    self.called.notify_all()
                try:
                    if msg["method"] == IFACE + "Spawn" and msg.get("more"):
                        self._spawn_more(conn, msg, fds)
                        continue
                    if msg["method"] == IFACE + "Delete" and not getattr(self.handler, "handles_delete", False):
                        # A foreground run deletes its task after reading its exit: answer that
                        # for every handler that does not test Delete itself.
                        conn.reply({"task": {"id": msg.get("parameters", {}).get("id", ""), "state": "stopped"}})
                        continue
                    self.handler(conn, msg["method"][len(IFACE):], msg.get("parameters", {}), fds, msg)
                finally:
                    for fd in fds:
                        os.close(fd)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left before a reply (launchctl exits at a bad one): its exit is checked
        except Exception as e:  # reported by the test through self.errors
            self.errors.append(repr(e))
        finally:
            conn.sock.close()

    def _spawn_more(self, conn, msg, fds):
        sent = []
        reply = conn.reply
        conn.reply = lambda params=None, fds=(), continues=False: sent.append(params) or reply(params, fds, True)
        try:
            self.handler(conn, "Spawn", msg.get("parameters", {}), fds, msg)
        finally:
            conn.reply = reply
        if not sent:
            return  # an error ended the call
        with self.lock:
            self.calls[-1] = (IFACE + "Spawn more",) + self.calls[-1][1:]
            self.calls.append((IFACE + "(Wait)", {"id": sent[0].get("id")}, 0))
            self.called.notify_all()
        self.handler(conn, "Wait", {"id": sent[0].get("id")}, [], msg)

    def close(self):
        self.sock.close()
        os.unlink(self.path)
        os.rmdir(self.dir)
        assert not self.errors, self.errors

    def wait_call(self, method, timeout=30):
        """Blocks until a call of method arrived (woken by the connection threads)."""
        with self.called:
            return self.called.wait_for(lambda: IFACE + method in (c[0] for c in self.calls), timeout)

    def methods(self):
        with self.lock:
            return [c[0][len(IFACE):] for c in self.calls]


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.fds = []

    def read(self):
        while b"\0" not in self.buf:
            data, fds, _, _ = socket.recv_fds(self.sock, 65536, 64)
            self.fds += fds
            if not data:
                return None
            self.buf += data
        raw, self.buf = self.buf.split(b"\0", 1)
        fds, self.fds = self.fds, []
        return json.loads(raw), fds

    def send(self, obj, fds=()):
        data = json.dumps(obj).encode() + b"\0"
        if fds:
            socket.send_fds(self.sock, [data], list(fds))
        else:
            self.sock.sendall(data)

    def reply(self, params=None, fds=(), continues=False):
        m = {"parameters": params or {}}
        if continues:
            m["continues"] = True
        self.send(m, fds)

    def error(self, name, params=None):
        self.send({"error": IFACE + name if "." not in name else name, "parameters": params or {}})


@pytest.fixture
def fake():
    made = []

    def make(handler):
        d = FakeDaemon(handler)
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


def spawn_failed(step, err):
    def handler(conn, method, params, fds, msg):
        assert method == "Spawn"
        conn.error("SpawnFailed", {"step": step, "errno": err, "message": os.strerror(err)})
    return handler


@pytest.mark.parametrize("step,err,code,message", [
    ("exec", errno.ENOENT, 127, "launchctl: cannot run 'nosuchcmd': No such file or directory\n"),
    ("exec", errno.EACCES, 126, "launchctl: cannot run 'nosuchcmd': Permission denied\n"),
    ("exec", errno.ENOEXEC, 126, "launchctl: cannot run 'nosuchcmd': Exec format error\n"),
    ("exec", errno.E2BIG, 125, "launchctl: cannot run 'nosuchcmd': Argument list too long\n"),
    ("uid", errno.EPERM, 125, "launchctl: sandbox setup failed at step uid: Operation not permitted\n"),
    ("filter", errno.EINVAL, 125, "launchctl: sandbox setup failed at step filter: Invalid argument\n"),
])
def test_run_spawn_failed(launchctl, fake, step, err, code, message):
    d = fake(spawn_failed(step, err))
    r = run(launchctl, "--socket", d.path, "run", "--", "nosuchcmd", "arg")
    assert r.returncode == code
    assert r.stderr == message


@pytest.mark.parametrize("name,params,code,message", [
    ("NoSuchProfile", {"profile": "nope"}, 1, "launchctl: run: no such profile 'nope'\n"),
    ("PermissionDenied", {"reason": "profile nope is for root"}, 1,
     "launchctl: run: permission denied: profile nope is for root\n"),
    ("TaskExists", {"id": "t"}, 1, "launchctl: run: a task 't' exists already\n"),
    ("LimitExceeded", {"limit": "tasks", "max": 10}, 1, "launchctl: run: limit 'tasks' exceeded (max 10)\n"),
    ("org.varlink.service.InvalidParameter", {"parameter": "cwd"}, 1,
     "launchctl: run: Invalid argument (org.varlink.service.InvalidParameter)\n"),
])
def test_run_refused(launchctl, fake, name, params, code, message):
    d = fake(lambda conn, *a: conn.error(name, params))
    r = run(launchctl, "--socket", d.path, "run", "--profile", "nope", "--", "true")
    assert (r.returncode, r.stderr) == (code, message)


def test_run_request_and_exit_code(launchctl, fake, tmp_path):
    """What run sends (argv, env, cwd, the three stdio fds) and that it exits with the task's code;
    the fake daemon writes to the stdout fd it received, as the worker would."""
    seen = {}

    def handler(conn, method, params, fds, msg):
        if method == "Spawn":
            seen["params"] = params
            seen["stat"] = [os.fstat(fd) for fd in fds]
            os.write(fds[params["fds"][1]["fd"]], b"from the task\n")
            conn.reply({"id": "t1", "pid": 99, "tier": "load"})
        elif method == "Wait":
            seen["wait"] = params
            conn.reply({"task": task("t1", exitCode=3)})

    d = fake(handler)
    out = tmp_path / "out"
    with open(out, "w") as f, open("/dev/null") as devnull:
        r = subprocess.run([launchctl, "--socket", d.path, "run", "--profile", "strict", "--env", "A=1", "--env",
                            "PATH=/only", "--id", "t1", "--user", "nobody", "--group", "nogroup",
                            "--drop-cap", "CAP_NET_RAW", "--", "prog", "-x", "--y"],
                           stdin=devnull, stdout=f, stderr=subprocess.PIPE, text=True, cwd=str(tmp_path),
                           env={"PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8", "SECRET": "no"},
                           timeout=30)
        stdout_stat = os.fstat(f.fileno())
    assert r.returncode == 3, r.stderr
    assert out.read_text() == "from the task\n"
    p = seen["params"]
    assert p["argv"] == ["prog", "-x", "--y"]
    # PATH, TERM, LANG from launchctl's environment, --env on top (replacing PATH), nothing else.
    assert sorted(p["env"]) == sorted(["PATH=/only", "TERM=xterm", "LANG=C.UTF-8", "A=1"])
    assert p["cwd"] == str(tmp_path)
    assert (p["profile"], p["id"], p["user"], p["group"]) == ("strict", "t1", "nobody", "nogroup")
    assert p["dropCapabilities"] == ["CAP_NET_RAW"]
    assert "hold" not in p and "terminal" not in p
    assert sorted((m["fd"], m["target"]) for m in p["fds"]) == [(0, 0), (1, 1), (2, 2)]
    st = seen["stat"][p["fds"][1]["fd"]]
    assert (st.st_dev, st.st_ino) == (stdout_stat.st_dev, stdout_stat.st_ino)
    # One call, Spawn with "more", whose last reply is the exit: no Wait, no Delete (the daemon
    # forgets the task once that exit went out).
    assert d.methods() == ["Spawn more", "(Wait)"]


def test_run_env_clear(launchctl, fake):
    seen = {}

    def handler(conn, method, params, fds, msg):
        if method == "Spawn":
            seen["env"] = params["env"]
            conn.reply({"id": "t", "pid": 9, "tier": "load"})
        else:
            conn.reply({"task": task("t", exitCode=0)})

    d = fake(handler)
    r = run(launchctl, "--socket", d.path, "run", "--env-clear", "--env", "ONLY=1", "--cwd", "/tmp", "--", "true",
            env={"PATH": "/bin", "TERM": "dumb"})
    assert r.returncode == 0, r.stderr
    assert seen["env"] == ["ONLY=1"]


@pytest.mark.parametrize("final,code", [
    ({"exitCode": 0}, 0), ({"exitCode": 42}, 42), ({"signal": 9}, 137), ({"signal": 15, "exitCode": None}, 143),
])
def test_run_exit_status(launchctl, fake, final, code):
    def handler(conn, method, params, fds, msg):
        if method == "Spawn":
            conn.reply({"id": "t", "pid": 9, "tier": "load"})
        else:
            conn.reply({"task": task("t", **final)})

    d = fake(handler)
    assert run(launchctl, "--socket", d.path, "run", "--", "true").returncode == code


def test_run_json_prints_final_task_on_stderr(launchctl, fake):
    def handler(conn, method, params, fds, msg):
        if method == "Spawn":
            conn.reply({"id": "t", "pid": 9, "tier": "load"})
        else:
            conn.reply({"task": task("t", exitCode=5)})

    d = fake(handler)
    r = run(launchctl, "--socket", d.path, "run", "--json", "--", "true")
    assert r.returncode == 5
    assert r.stdout == ""
    assert json.loads(r.stderr)["task"]["exitCode"] == 5


def test_run_detach(launchctl, fake):
    holds = []

    def handler(conn, method, params, fds, msg):
        assert method == "Spawn"
        holds.append(params.get("hold", False))
        conn.reply({"id": "det-1", "pid": 9, "tier": "inherit"})

    d = fake(handler)
    r = run(launchctl, "--socket", d.path, "run", "--detach", "--hold", "--", "sleep", "100")
    assert (r.returncode, r.stdout) == (0, "det-1\n")
    r = run(launchctl, "--socket", d.path, "run", "--detach", "--json", "--", "sleep", "100")
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"id": "det-1", "pid": 9, "tier": "inherit"}
    assert d.methods() == ["Spawn", "Spawn"]
    assert holds == [True, False]


def test_run_daemon_dies_during_wait(launchctl, fake):
    def handler(conn, method, params, fds, msg):
        if method == "Spawn":
            conn.reply({"id": "t", "pid": 9, "tier": "load"})
        else:
            conn.sock.shutdown(socket.SHUT_RDWR)

    d = fake(handler)
    r = run(launchctl, "--socket", d.path, "run", "--", "true")
    assert r.returncode == 1
    assert "lost the connection to zygoted" in r.stderr


def test_run_malformed_reply(launchctl, fake):
    d = fake(lambda conn, *a: conn.reply({"id": "t", "pid": "not a number", "tier": "load"}))
    r = run(launchctl, "--socket", d.path, "run", "--", "true")
    assert r.returncode == 1
    assert r.stderr == "launchctl: run: Bad message\n"


class Worker:
    """A real process standing in for the sandboxed worker: the fake daemon hands out its pidfd
    (or not), kills it on Kill, and answers Wait when it has exited."""

    def __init__(self, send_pidfd=True):
        self.proc = subprocess.Popen(["sleep", "1000"])
        self.send_pidfd = send_pidfd
        self.kills = []

    def handler(self, conn, method, params, fds, msg):
        if method == "Spawn":
            pidfds = [os.pidfd_open(self.proc.pid)] if self.send_pidfd else []
            conn.reply({"id": "fw", "pid": self.proc.pid, "tier": "load"}, fds=pidfds)
            for fd in pidfds:
                os.close(fd)
        elif method == "Kill":
            self.kills.append(params)
            self.proc.send_signal(params["signal"])
            conn.reply({})
        elif method == "Wait":
            rc = self.proc.wait()
            conn.reply({"task": task("fw", signal=-rc) if rc < 0 else task("fw", exitCode=rc)})


@pytest.mark.parametrize("send_pidfd", [True, False], ids=["pidfd", "kill-method"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT])
def test_run_forwards_signals(launchctl, fake, send_pidfd, sig):
    w = Worker(send_pidfd)
    d = fake(w.handler)
    p = subprocess.Popen([launchctl, "--socket", d.path, "run", "--", "sleep", "1000"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        # Signal only once launchctl waits (the fake daemon answered the Spawn's first reply): by
        # then its signals are blocked and read from a signalfd, and it has the pidfd.
        assert d.wait_call("(Wait)")
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()
    assert p.returncode == 128 + sig, err
    assert w.proc.returncode == -sig
    assert w.kills == ([] if send_pidfd else [{"id": "fw", "signal": int(sig)}])


# ---- the other verbs -----------------------------------------------------------------------------

PROFILE = {"name": "default", "path": "/p/default.json", "tier": "inherit", "tierReason": "kernel lacks it",
           "bpfInstructions": 321, "longestPath": 17, "hash": "ab" * 32, "capabilities": ["CAP_KILL"],
           "noNewPrivileges": True, "referencePid": 77, "skippedSyscalls": 1}
STATUS = {"version": "0.1.0", "features": {"clone_filter": False, "capbset_drop_mask": False},
          "profiles": [PROFILE], "tasks": 2, "connections": 1}


def replying(replies):
    def handler(conn, method, params, fds, msg):
        r = replies[method]
        if isinstance(r, tuple):
            conn.error(*r)
        else:
            conn.reply(r)
    handler.handles_delete = "Delete" in replies
    return handler


def test_status(launchctl, fake):
    d = fake(replying({"GetStatus": STATUS}))
    r = run(launchctl, "--socket", d.path, "status", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["features"] == {"clone_filter": False, "capbset_drop_mask": False}
    p = s["profiles"][0]
    assert (p["name"], p["tier"], p["bpf_instructions"], p["reference_pid"]) == ("default", "inherit", 321, 77)
    # The other fields stay, renamed the same way.
    assert (p["tier_reason"], p["longest_path"], p["no_new_privileges"], p["skipped_syscalls"]) == \
        ("kernel lacks it", 17, True, 1)
    assert "bpfInstructions" not in p
    assert (s["version"], s["tasks"], s["connections"]) == ("0.1.0", 2, 1)

    r = run(launchctl, "--socket", d.path, "status")
    assert r.returncode == 0
    assert "zygoted 0.1.0: 2 tasks, 1 connection" in r.stdout
    assert "SECCOMP_CLONE_FILTER no" in r.stdout
    assert "default" in r.stdout and "inherit" in r.stdout and "321" in r.stdout


def test_ps_state_profiles(launchctl, fake):
    d = fake(replying({
        "List": {"tasks": [task("a", "running"), task("bb", exitCode=3), task("c", signal=9)]},
        "State": {"task": task("a", "running", startedAt=1700000001)},
        "ListProfiles": {"profiles": [PROFILE]},
    }))
    r = run(launchctl, "--socket", d.path, "ps")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["ID", "PID", "STATE", "STATUS", "PROFILE", "TIER", "COMMAND"]
    assert lines[1].split() == ["a", "4242", "running", "-", "default", "load", "/bin/true"]
    assert lines[2].split()[3] == "3"
    assert lines[3].split()[3] == "SIGKILL"
    r = run(launchctl, "--socket", d.path, "ps", "--json")
    assert [t["id"] for t in json.loads(r.stdout)["tasks"]] == ["a", "bb", "c"]
    r = run(launchctl, "--socket", d.path, "state", "a")
    assert r.returncode == 0 and "state:    running" in r.stdout
    r = run(launchctl, "--socket", d.path, "profiles")
    assert r.returncode == 0 and r.stdout.splitlines()[1].split()[:3] == ["default", "inherit", "321"]


def test_ps_follows_every_page(launchctl, fake):
    """List answers a page at a time ("next" is the "after" of the following page): ps and
    ps --json show the tasks of every page, once each; a "next" that does not move forward is
    the daemon's error, not an endless loop."""
    pages = {None: ["a", "b"], "b": ["c"], "c": ["d", "e"]}
    asked = []

    def handler(conn, method, params, fds, msg):
        after = (params or {}).get("after")
        asked.append(after)
        p = {"tasks": [task(i) for i in pages[after]]}
        if after != "c":
            p["next"] = pages[after][-1]
        conn.reply(p)
    d = fake(handler)
    r = run(launchctl, "--socket", d.path, "ps")
    assert r.returncode == 0, r.stderr
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["a", "b", "c", "d", "e"]
    assert asked == [None, "b", "c"]
    r = run(launchctl, "--socket", d.path, "ps", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [t["id"] for t in out["tasks"]] == ["a", "b", "c", "d", "e"] and "next" not in out

    def stuck(conn, method, params, fds, msg):
        conn.reply({"tasks": [task("a")], "next": "a"})
    d = fake(stuck)
    for args in (("ps",), ("ps", "--json")):
        r = run(launchctl, "--socket", d.path, *args, timeout=10)
        assert r.returncode != 0, r.stdout


def test_kill(launchctl, fake):
    d = fake(replying({"Kill": {}}))
    for args, want in [((), {"id": "t"}), (("KILL",), {"id": "t", "signal": 9}),
                       (("sigusr1", "--all"), {"id": "t", "signal": 10, "all": True}),
                       (("2", "--json"), {"id": "t", "signal": 2}),
                       (("RTMIN+1",), {"id": "t", "signal": signal.SIGRTMIN + 1})]:
        r = run(launchctl, "--socket", d.path, "kill", "t", *args)
        assert r.returncode == 0, r.stderr
        assert d.calls[-1][1] == want


@pytest.mark.parametrize("verb", ["kill", "start", "state", "delete", "wait"])
def test_no_such_task(launchctl, fake, verb):
    def handler(conn, *a):
        conn.error("NoSuchTask", {"id": "gone"})
    handler.handles_delete = True
    d = fake(handler)
    r = run(launchctl, "--socket", d.path, verb, "gone")
    assert (r.returncode, r.stderr) == (1, f"launchctl: {verb}: no such task 'gone'\n")
    r = run(launchctl, "--socket", d.path, verb, "gone", "--json")
    assert r.returncode == 1 and "no such task 'gone'" in r.stderr


def test_wait_and_delete(launchctl, fake):
    d = fake(replying({"Wait": {"task": task("w", signal=15)}, "Delete": {"task": task("w", exitCode=0)},
                       "Start": ("InvalidState", {"id": "w", "state": "stopped"})}))
    r = run(launchctl, "--socket", d.path, "wait", "w")
    assert (r.returncode, r.stdout) == (143, "w: killed by signal 15 (SIGTERM)\n")
    r = run(launchctl, "--socket", d.path, "wait", "w", "--json")
    assert r.returncode == 143 and json.loads(r.stdout)["task"]["signal"] == 15
    assert run(launchctl, "--socket", d.path, "delete", "w").returncode == 0
    r = run(launchctl, "--socket", d.path, "start", "w")
    assert (r.returncode, r.stderr) == (1, "launchctl: start: the task is stopped\n")


def test_reload(launchctl, fake):
    d = fake(replying({"ReloadProfiles": {"loaded": ["default"], "failed": ["broken"]}}))
    r = run(launchctl, "--socket", d.path, "reload")
    assert r.returncode == 1
    assert r.stdout == "loaded: default\nfailed: broken\n"
    # each failure on a line of its own, as the daemon words them ("PATH: why")
    d3 = fake(replying({"ReloadProfiles": {"loaded": ["default"], "failed": [
        "/p/a.json: line 1: unexpected end of input", "/p/b.json: profile name \"x\" is already used by /p/c.json"]}}))
    r = run(launchctl, "--socket", d3.path, "reload")
    assert r.returncode == 1
    assert r.stdout == ("loaded: default\nfailed: /p/a.json: line 1: unexpected end of input\n"
                        "failed: /p/b.json: profile name \"x\" is already used by /p/c.json\n")
    d4 = fake(replying({"ReloadProfiles": {"loaded": ["default"], "failed": []}}))
    r = run(launchctl, "--socket", d4.path, "reload")
    assert (r.returncode, r.stdout) == (0, "loaded: default\n")
    d2 = fake(replying({"ReloadProfiles": ("PermissionDenied", {"reason": "root only"})}))
    r = run(launchctl, "--socket", d2.path, "reload")
    assert (r.returncode, r.stderr) == (1, "launchctl: reload: permission denied: root only\n")
