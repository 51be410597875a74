# SPDX-License-Identifier: MIT
"""containerd-shim-zygote-v2 running containers through a zygoted of the test's own: first its
Task service spoken by hand on the busybox bundle (lifecycle, events, a terminal, exec, stdin
and CloseIO, valgrind), then `ctr run --runtime` of the offline image through a containerd (exit
codes, output, a terminal, exec, kill). Each part skips, with the reason, where the daemon cannot
start containers here or containerd is missing."""
import json
import os
import re
import shutil
import sys
import threading
import time
import uuid

import pytest

import containertools as ct

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import shimv2  # noqa: E402
import ttrpcwire as w  # noqa: E402
import zytest  # noqa: E402

from conftest import BUILD_DIR, SOURCE_DIR  # noqa: E402

pytestmark = pytest.mark.timeout(300)

CREATED, RUNNING, STOPPED = 1, 2, 3


@pytest.fixture(scope="module")
def staged():
    if not shimv2.find_shim(BUILD_DIR):
        pytest.fail(f"not built: {BUILD_DIR}/containerd-shim-zygote-v2")
    stage, bins = zytest.stage_build(BUILD_DIR, SOURCE_DIR)
    bins["shim"] = shimv2.copy_shim(BUILD_DIR, stage)
    yield bins
    zytest.remove_workdir(stage)


@pytest.fixture(scope="module")
def zygoted(staged):
    if os.geteuid() != 0:
        pytest.skip("zygoted starts containers for root callers only")
    d = zytest.Daemon(staged, zytest.make_workdir())
    d.start()
    yield d
    assert d.stop() == 0, d.log()
    zytest.remove_workdir(d.dir)


class Run:
    """A shim started in the bundle, with fifos and a fake publisher in a directory of the test's."""

    def __init__(self, staged, zygoted, bundle, directory, wrapper=(), env=None):
        self.dir = directory
        self.bundle = bundle
        self.shim = shimv2.Shim(staged["shim"], bundle.path, env={"ZYGOTE_SOCKET": zygoted.socket, **(env or {})},
                                publish=shimv2.fake_publisher(directory), wrapper=wrapper)
        self.id = self.shim.id
        self.shim.start(timeout=120)
        self.c = self.shim.client()
        self.output = {}
        self.readers = []

    def fifo(self, name, read=True):
        path = os.path.join(self.dir, name)
        os.mkfifo(path)
        if read:  # read until EOF, as containerd's client does
            t = threading.Thread(target=lambda: self.output.__setitem__(name, open(path, "rb").read()), daemon=True)
            t.start()
            self.readers.append(t)
        return path

    def read(self, name, timeout=30):
        for t in self.readers:
            t.join(timeout)
        return self.output.get(name)

    def create(self, terminal=False, stdin="", stdout="", stderr=""):
        req = [(1, self.id), (2, self.bundle.path), (4, terminal), (5, stdin), (6, stdout), (7, stderr)]
        try:
            return w.first(self.c.call("Create", w.encode(req)), 1)
        except w.Error as e:
            if e.code in (w.UNIMPLEMENTED, w.PERMISSION_DENIED):
                pytest.skip(f"zygoted cannot start containers here: {e.message}")
            raise

    def call(self, method, *fields):
        return self.c.call(method, w.encode([(1, self.id), *fields]))

    def finish(self):
        """Kills and deletes what is left, then shuts the shim down (once)."""
        if self.c is None:
            return
        try:
            self.call("Kill", (3, 9), (4, True))
        except w.Error:
            pass
        try:
            self.call("Wait")
            self.call("Delete")
        except w.Error:
            pass
        self.c.close()
        self.c = None
        self.shim.stop()


@pytest.fixture
def run(staged, zygoted, bundle, tmp_path):
    made = []

    def make(**kw):
        r = Run(staged, zygoted, bundle, str(tmp_path), **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.finish()
    # nothing of the containers may stay: their tasks and cgroups go with zygoted's Delete
    tasks = task_ids(zygoted)
    left = [t for r in made for t in tasks if t == r.id or t.startswith(r.id + ".")]
    left += [os.path.join(d, n) for r in made for d, dirs, _ in os.walk("/sys/fs/cgroup") for n in dirs if n == r.id]
    assert left == [], "left behind"


def test_lifecycle_and_events(run, bundle):
    bundle.set_args("sh", "-c", "echo hello from $0; echo to stderr >&2; exit 7", "zyg-shim")
    r = run()
    out, err = r.fifo("out"), r.fifo("err")
    pid = r.create(stdout=out, stderr=err)
    state = r.call("State")
    assert (w.first(state, 3), w.first(state, 4), w.first(state, 6)) == (pid, CREATED, out.encode())
    waiting = r.c.send("Wait", w.encode([(1, r.id)]))  # answered at the exit, after Start
    assert w.first(r.call("Start"), 1) == pid
    done = r.c.recv(waiting)
    assert w.first(done, 1) == 7
    assert r.read("out") == b"hello from zyg-shim\n"
    assert r.read("err") == b"to stderr\n"
    state = r.call("State")
    assert (w.first(state, 4), w.first(state, 9)) == (STOPPED, 7)
    deleted = r.call("Delete")
    assert (w.first(deleted, 1), w.first(deleted, 2)) == (pid, 7)
    with pytest.raises(w.Error) as e:
        r.call("State")
    assert e.value.code == w.NOT_FOUND
    ev = shimv2.events(r.dir)
    assert [(t, ns, url) for t, ns, url, _ in ev] == [
        ("/tasks/create", shimv2.NAMESPACE, "containerd.events.TaskCreate"),
        ("/tasks/start", shimv2.NAMESPACE, "containerd.events.TaskStart"),
        ("/tasks/exit", shimv2.NAMESPACE, "containerd.events.TaskExit"),
        ("/tasks/delete", shimv2.NAMESPACE, "containerd.events.TaskDelete")]
    exit_ = ev[2][3]  # container_id, id, pid, exit_status, exited_at
    assert (w.first(exit_, 1), w.first(exit_, 2), w.first(exit_, 3), w.first(exit_, 4)) == (
        r.id.encode(), r.id.encode(), pid, 7)
    assert w.first(done, 2) == w.first(exit_, 5)  # the same exit time in Wait and the event


def test_events_over_ttrpc_and_the_fallback(run, bundle, tmp_path):
    """With $TTRPC_ADDRESS (containerd sets it for its shims) the events are Forward calls on
    containerd's ttrpc events service, the publish binary unused; with nobody listening there,
    the binary takes them."""
    bundle.set_args("true")
    events = shimv2.FakeEvents(str(tmp_path))
    try:
        r = run(env={"TTRPC_ADDRESS": events.path})
        r.create()
        r.call("Start")
        r.call("Wait")
        r.call("Delete")
        with events.lock:
            got = list(events.received)
    finally:
        events.close()
    assert [(s, m, ns, t, u) for s, m, ns, t, u, _ in got] == [
        ("containerd.services.events.ttrpc.v1.Events", "Forward", shimv2.NAMESPACE, topic,
         "containerd.events." + name)
        for topic, name in (("/tasks/create", "TaskCreate"), ("/tasks/start", "TaskStart"),
                            ("/tasks/exit", "TaskExit"), ("/tasks/delete", "TaskDelete"))]
    assert w.first(got[2][5], 1) == r.id.encode()
    assert shimv2.events(r.dir) == []
    r.finish()
    os.unlink(os.path.join(r.dir, "events.ttrpc"))
    r = run(env={"TTRPC_ADDRESS": "unix://" + os.path.join(r.dir, "events.ttrpc")})
    r.create()
    r.call("Start")
    r.call("Wait")
    assert [t for t, _, _, _ in shimv2.events(r.dir)] == ["/tasks/create", "/tasks/start", "/tasks/exit"]


def test_terminal_and_resize(run, bundle):
    bundle.config["process"]["terminal"] = True
    bundle.set_args("sh", "-c", "tty; stty size; exit 3")
    r = run()
    out = r.fifo("out")
    r.create(terminal=True, stdout=out)
    r.call("ResizePty", (3, 101), (4, 33))
    r.call("Start")
    assert w.first(r.call("Wait"), 1) == 3
    text = r.read("out").decode()
    assert "/dev/pts/" in text and "33 101" in text, text


def test_calls_in_flight_are_bounded(run, bundle):
    """Each call in flight holds a thread of the shim: past 256 on one connection, calls are
    answered at once with RESOURCE_EXHAUSTED; another connection is served. The Waits end with
    the container's exit."""
    bundle.set_args("sleep", "1000")
    r = run()
    r.create()
    r.call("Start")
    streams = [r.c.send("Wait", w.encode([(1, r.id)])) for _ in range(260)]
    for s in streams[256:]:
        with pytest.raises(w.Error) as e:
            r.c.recv(s)
        assert (e.value.code, e.value.message) == (8, "too many calls in flight")
    other = r.shim.client()
    other.call("Kill", w.encode([(1, r.id), (3, 9), (4, True)]))
    other.close()
    assert all(w.first(r.c.recv(s), 1) == 137 for s in streams[:256])


def test_stdin_until_closeio(run, bundle):
    bundle.set_args("sh", "-c", "cat; echo done")
    r = run()
    stdin, out = r.fifo("in", read=False), r.fifo("out")
    r.create(stdin=stdin, stdout=out)
    r.call("Start")
    with open(stdin, "wb") as f:  # containerd's writer comes and goes: cat keeps reading
        f.write(b"abc\n")
    r.call("CloseIO", (3, True))
    assert w.first(r.call("Wait"), 1, 0) == 0  # proto3: 0 is not sent
    assert r.read("out") == b"abc\ndone\n"


def test_exec_kill_and_pids(run, bundle):
    bundle.set_args("sleep", "1000")
    r = run()
    pid = r.create()
    r.call("Start")
    process = dict(bundle.config["process"], args=["sh", "-c", "echo exec $0; exit 4", "ran"], terminal=False)
    spec = [(1, "types.containerd.io/opencontainers/runtime-spec/1/Process"), (2, json.dumps(process).encode())]
    out = r.fifo("out")
    r.call("Exec", (2, "e1"), (5, out), (7, spec))
    assert w.first(r.call("State", (2, "e1")), 4) == CREATED
    epid = w.first(r.call("Start", (2, "e1")), 1)
    assert w.first(r.call("Wait", (2, "e1")), 1) == 4
    assert r.read("out") == b"exec ran\n"
    assert pid in [w.first(w.decode(p), 1) for p in r.call("Pids")[1]]
    assert w.first(r.call("Delete", (2, "e1")), 1) == epid
    with pytest.raises(w.Error) as e:
        r.call("Exec", (2, "e1"), (7, spec[:1]))
    assert e.value.code == w.INVALID_ARGUMENT  # no process object
    r.call("Kill", (3, 9), (4, True))
    assert w.first(r.call("Wait"), 1) == 137
    with pytest.raises(w.Error) as e:
        r.call("Kill", (3, 9))
    assert e.value.code == w.NOT_FOUND
    r.call("Delete")
    topics = [t for t, _, _, _ in shimv2.events(r.dir)]
    assert topics == ["/tasks/create", "/tasks/start", "/tasks/exec-added", "/tasks/exec-started", "/tasks/exit",
                      "/tasks/exit", "/tasks/delete"], topics


def test_valgrind_clean_with_a_container(run, bundle, tmp_path, staged):
    """The shim under valgrind through a container's life: a terminal (the copies), an exec, the
    events forwarded over ttrpc, Stats, Update; no invalid access, no leak."""
    if not shutil.which("valgrind"):
        pytest.skip("no valgrind")
    skip_if_sanitized(staged["shim"])
    bundle.config["process"]["terminal"] = True
    bundle.set_args("sh", "-c", "echo hi; sleep 1000")
    logs = str(tmp_path / "vg.%p")
    events = shimv2.FakeEvents(str(tmp_path))
    try:
        r = run(env={"TTRPC_ADDRESS": events.path},
                wrapper=["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
                         "--show-leak-kinds=definite", f"--log-file={logs}"])
        out = r.fifo("out")
        r.create(terminal=True, stdout=out)
        r.call("Start")
        process = dict(bundle.config["process"], args=["true"], terminal=False)
        r.call("Exec", (2, "e"), (7, [(1, "p"), (2, json.dumps(process).encode())]))
        r.call("Start", (2, "e"))
        r.call("Wait", (2, "e"))
        for method, fields in (("Stats", ()), ("Update", ((2, [(1, "r"), (2, b'{"pids": {"limit": 50}}')]),))):
            try:
                r.call(method, *fields)
            except w.Error:
                pass  # no cgroup of its own here: the error path instead
        r.call("Kill", (3, 9), (4, True))
        assert w.first(r.call("Wait"), 1) == 137
        assert b"hi" in r.read("out")
        r.call("Delete")
        r.finish()
        assert len(events.received) == 7
    finally:
        events.close()
    reports = sorted(p for p in os.listdir(tmp_path) if p.startswith("vg."))
    assert reports
    for name in reports:
        text = (tmp_path / name).read_text()
        assert text.strip() == "", f"{name}:\n{text}"


# ---- through containerd ---------------------------------------------------------------------------

@pytest.fixture
def ctd(containerd, staged, zygoted, tmp_path):
    """containerd with the shim as the runtime: a wrapper that names the test's zygoted (a shim
    has containerd's environment)."""
    wrapper = os.path.join(zygoted.dir, "containerd-shim-zygote-v2")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nZYGOTE_SOCKET={zygoted.socket} exec {staged['shim']} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    made = []

    def run_argv(name, *args, opts=()):
        made.append(name)
        return containerd.ctr_argv("run", "--runtime", wrapper, "--cgroup", f"{ct.CTR_CGROUP_PARENT}/{name}", *opts,
                                   ct.IMAGE, name, *args)

    containerd.zrun_argv = run_argv
    containerd.zrun = lambda name, *a, opts=(), **kw: ct.run_to_files(run_argv(name, *a, opts=opts), **kw)
    yield containerd
    left = {n: containerd.leftovers(n) for n in made}
    tasks = task_ids(zygoted)
    for n in made:
        left[n] += [f"zygoted's task {t}" for t in tasks if t == n or t.startswith(n + ".")]
    for n in made:
        containerd.ctr("task", "kill", "-a", "-s", "KILL", n)
        containerd.ctr("task", "rm", "-f", n)
        containerd.ctr("containers", "rm", n)
    assert {n: l for n, l in left.items() if l} == {}, "left behind"


def name():
    return "zyg-zs-" + uuid.uuid4().hex[:10]


def test_ctr_run_output_and_exit_code(ctd):
    r = ctd.zrun(name(), "sh", "-c", "echo hello from $0; exit 7", "zyg-zs-echo", opts=["--rm"])
    if r.returncode != 7 and "no container support" in r.stderr + r.stdout:
        pytest.skip("zygoted has no container support")
    assert r.stdout == "hello from zyg-zs-echo\n", r.stderr
    assert r.returncode == 7, r.stderr


def test_ctr_run_failing_create(ctd):
    """A container that cannot start: containerd reports the runtime's reason, and nothing is left
    (the rootfs is unmounted again, zygoted forgot the task)."""
    r = ctd.zrun(name(), "/nonexistent", opts=["--rm"])
    assert r.returncode != 0
    assert 'create: the container failed at step create: ' in r.stderr, r.stderr
    assert '"/nonexistent"' in r.stderr, r.stderr


def test_ctr_run_terminal(ctd):
    r = ct.under_script(ctd.zrun_argv(name(), "sh", "-c", "test -t 0 && tty; exit 5", opts=["--rm", "-t"]))
    assert r.returncode == 5, r.stdout + r.stderr
    assert "/dev/pts/" in r.stdout, r.stdout


def test_ctr_detached_exec_and_kill(ctd):
    n = name()
    r = ctd.zrun(n, "sleep", "1000", opts=["-d"])
    assert r.returncode == 0, r.stderr
    r = ctd.ctr("task", "exec", "--exec-id", "e1", n, "sh", "-c", "echo in exec; exit 4")
    assert (r.returncode, r.stdout) == (4, "in exec\n"), r.stderr
    pid, status = ctd.task_pid(n)
    assert status == "RUNNING"
    r = ctd.ctr("task", "metrics", n)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^pids.current\s+1\s*$", r.stdout, re.M), r.stdout
    r = ctd.ctr("task", "kill", "-s", "KILL", n)
    assert r.returncode == 0, r.stderr
    r = ctd.ctr("task", "attach", n)  # waits for the exit
    assert r.returncode == 137, r.stderr
    ctd.ctr("task", "rm", n)  # attach may have removed the task already
    r = ctd.ctr("containers", "rm", n)
    assert r.returncode == 0, r.stderr


def test_ctr_containerd_restart(ctd):
    """containerd restarted while a container runs: it finds the running shim again (the bundle's
    address file), the task is still RUNNING with the same pid, and a kill through the new
    containerd still ends it with its status."""
    n = name()
    r = ctd.zrun(n, "sleep", "1000", opts=["-d"])
    assert r.returncode == 0, r.stderr
    pid, status = ctd.task_pid(n)
    assert status == "RUNNING"
    ctd.restart()
    assert ctd.task_pid(n) == (pid, "RUNNING")
    r = ctd.ctr("task", "kill", "-s", "KILL", n)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 30
    while ctd.task_pid(n)[1] != "STOPPED":
        assert time.monotonic() < deadline, "the task was not seen to stop after the restart"
        time.sleep(0.1)
    r = ctd.ctr("task", "rm", n)
    assert r.returncode == 0, r.stderr
    r = ctd.ctr("containers", "rm", n)
    assert r.returncode == 0, r.stderr


def task_ids(zygoted):
    import varlink
    with varlink.connect(zygoted.socket) as c:
        r = c.call("io.zygote.Launcher.List")
        return [t["id"] for t in r.parameters["tasks"]]


def test_init_delete_takes_the_execs_along(run, bundle, zygoted):
    """An exec'd process containerd never deleted goes with the init's Delete: zygoted keeps no
    task of the container afterwards."""
    bundle.set_args("sleep", "1000")
    r = run()
    r.create()
    r.call("Start")
    process = dict(bundle.config["process"], args=["true"], terminal=False)
    r.call("Exec", (2, "left"), (7, [(1, "p"), (2, json.dumps(process).encode())]))
    r.call("Start", (2, "left"))
    r.call("Wait", (2, "left"))
    assert r.id + ".left" in task_ids(zygoted)
    r.call("Kill", (3, 9), (4, True))
    r.call("Wait")
    r.call("Delete")
    assert [t for t in task_ids(zygoted) if t.startswith(r.id)] == []


def test_delete_after_a_dead_shim(run, bundle, zygoted):
    """The shim killed with its container and an exec'd process running: `delete` kills them,
    reports 137 and leaves no task in zygoted."""
    bundle.set_args("sleep", "1000")
    r = run()
    pid = r.create()
    r.call("Start")
    # an exec'd process with an exec id too long for zygoted's ids: a hashed task id, recorded
    process = dict(bundle.config["process"], args=["sleep", "1000"], terminal=False)
    r.call("Exec", (2, "e" * 70), (7, [(1, "p"), (2, json.dumps(process).encode())]))
    r.call("Start", (2, "e" * 70))
    with open(os.path.join(bundle.path, "zygote-exec-ids")) as f:
        hashed = [line.split()[0] for line in f]
    assert len(hashed) == 1 and hashed[0].startswith("x-") and hashed[0] in task_ids(zygoted), hashed
    os.kill(r.shim.pid, 9)
    assert r.shim.wait_gone()
    r.shim.pid = None
    d = r.shim.delete()
    assert d.returncode == 0, d.stderr
    resp = w.decode(d.stdout)
    assert (w.first(resp, 1), w.first(resp, 2)) == (pid, 137), resp
    assert r.id not in task_ids(zygoted) and hashed[0] not in task_ids(zygoted)
    r.c.close()
    r.c = None  # nothing left for finish()


def test_delete_after_a_dead_shim_kills_only_its_own(run, bundle, zygoted, staged):
    """`delete` after a dead shim kills the exec'd processes of its own container only: not another
    user's task its bundle's exec-ids file names (by its id alone, or with an exec id it is not made
    of), nor one named ID.SOMETHING (another user's, or another container whose id starts with
    "ID."), which run on."""
    import subprocess
    import varlink
    bundle.set_args("sleep", "1000")
    r = run()
    r.create()
    r.call("Start")
    sock = zygoted.socket
    os.chmod(os.path.dirname(sock), 0o755)
    os.chmod(sock, 0o777)
    others = [r.id + ".nobody", "victim-" + uuid.uuid4().hex[:8]]
    for t in others:
        subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", staged["launchctl"],
                        "--socket", sock, "run", "--detach", "--id", t, "--cwd", "/", "--", "sleep", "1000"],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    other_container = r.id + ".other"
    fd = os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with varlink.connect(sock) as c:
            c.call("io.zygote.Launcher.CreateContainer", {"id": other_container, "bundle": 0}, fds=[fd]).close_fds()
    finally:
        os.close(fd)
    others.append(other_container)
    with open(os.path.join(bundle.path, "zygote-exec-ids"), "a") as f:
        f.write(f"{others[1]}\n{others[1]} {b'x'.hex()}\n{others[0]}\n{other_container}\n")
    os.kill(r.shim.pid, 9)
    assert r.shim.wait_gone()
    r.shim.pid = None
    r.c.close()
    r.c = None  # nothing left for finish()
    d = r.shim.delete()
    assert d.returncode == 0, d.stderr
    # Task ids are per owner: root names nobody's tasks as 65534:ID.
    qualified = ["65534:" + t for t in others[:2]] + [other_container]
    try:
        with varlink.connect(sock) as c:
            for t in qualified:
                st = c.call("io.zygote.Launcher.State", {"id": t}).parameters["task"]["state"]
                assert st in ("running", "created"), f"{t}: {st}"
        assert r.id not in task_ids(zygoted)
    finally:
        with varlink.connect(sock) as c:
            for t in qualified:
                c.call("io.zygote.Launcher.Kill", {"id": t, "signal": 9}, check=False)
                c.call("io.zygote.Launcher.Wait", {"id": t}, check=False)
                c.call("io.zygote.Launcher.Delete", {"id": t}, check=False)


def test_ctr_same_sandbox_as_runc(ctd):
    """The same image and command through the zygote shim and through containerd's runc shim with
    Debian's runc: the same capability sets, the same kinds of new namespaces, the same ids,
    no_new_privs and a seccomp filter in both."""
    script = ("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Uid|Gid):' /proc/self/status; "
              "for n in cgroup ipc mnt net pid uts user; do echo $n $(readlink /proc/self/ns/$n); done")
    opts = ["--rm", "--seccomp"]  # containerd's default profile
    mine = ctd.zrun(name(), "sh", "-c", script, opts=opts)
    assert mine.returncode == 0, mine.stderr
    theirs = ctd.run(shutil.which("runc"), "zyg-zs-runc-" + uuid.uuid4().hex[:8], "sh", "-c", script, opts=opts)
    assert theirs.returncode == 0, theirs.stderr

    def view(out):
        lines = dict(line.split(None, 1) for line in out.splitlines())
        host = {n: os.readlink(f"/proc/self/ns/{n}") for n in ("cgroup", "ipc", "mnt", "net", "pid", "uts", "user")}
        new = sorted(n for n in host if lines[n].strip() != host[n])
        status = {k.rstrip(":"): v.split() for k, v in lines.items() if k.endswith(":")}
        return status, new

    assert view(mine.stdout) == view(theirs.stdout), (mine.stdout, theirs.stdout)
    assert view(mine.stdout)[0]["Seccomp"] == ["2"], mine.stdout


def skip_if_sanitized(binary):
    """valgrind cannot run an AddressSanitizer build (the asan lane's): the main lane checks it."""
    with open(binary, "rb") as f:
        if b"__asan_init" in f.read():
            pytest.skip("an AddressSanitizer build: valgrind runs the main lane's")


def test_wait_across_a_zygoted_restart(staged, bundle, tmp_path):
    """zygoted restarted under its service manager while the shim waits for the container: the
    new zygoted adopts the container's init (fd store), the shim connects again and sends its Wait
    again, and containerd gets the container's own exit status, not a made-up one."""
    from sdmanager import PR_SET_CHILD_SUBREAPER, adopting_manager, prctl, reap_zombies
    if os.geteuid() != 0:
        pytest.skip("zygoted starts containers for root callers only")
    m = adopting_manager(tmp_path, staged)
    stop = threading.Event()
    reaper = threading.Thread(target=lambda: [reap_zombies() for _ in iter(lambda: stop.wait(0.05), True)],
                              daemon=True)
    r = None
    try:
        m.socket_unit()
        m.start()
        m.wait_ready()
        bundle.set_args("sh", "-c", "sleep 3; exit 7")
        r = Run(staged, m, bundle, str(tmp_path))
        pid = r.create()
        waiting = r.c.send("Wait", w.encode([(1, r.id)]))
        assert w.first(r.call("Start"), 1) == pid
        assert os.waitstatus_to_exitcode(m.stop()) == 0
        reaper.start()
        m.start()
        m.wait_ready()
        m.wait_log(r"adopted 1 tasks")
        done = r.c.recv(waiting)
        assert w.first(done, 1) == 7, done
        deleted = r.call("Delete")
        assert (w.first(deleted, 1), w.first(deleted, 2)) == (pid, 7)
    finally:
        if r is not None:
            r.finish()
        stop.set()
        if reaper.is_alive():
            reaper.join(5)
        m.close()
        reap_zombies()
        prctl(PR_SET_CHILD_SUBREAPER, 0)


DOCKER_PROFILE = os.path.join(os.environ.get("ZYGOTE_REFERENCE_DIR") or os.path.join(
    os.path.dirname(SOURCE_DIR), "shared", "reference"), "docker-default.json")


def test_ctr_docker_profile_compiled_once(ctd, zygoted):
    """Docker's seccomp profile through ctr and the zygote shim: the container is under a filter
    (Seccomp: 2); zygoted compiles the profile for the first container only: a second start
    neither compiles nor asks (GetStatus' filter counters)."""
    if not os.path.exists(DOCKER_PROFILE):
        pytest.skip(f"no {DOCKER_PROFILE} (Docker's profile: ../shared/reference in the development tree)")
    import varlink

    def filters():
        with varlink.connect(zygoted.socket) as c:
            return c.call("io.zygote.Launcher.GetStatus").parameters["filters"]

    opts = ["--rm", "--seccomp", "--seccomp-profile", DOCKER_PROFILE]
    script = "grep '^Seccomp:' /proc/self/status"
    first = ctd.zrun(name(), "sh", "-c", script, opts=opts)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["Seccomp:", "2"], first.stdout
    before = filters()
    second = ctd.zrun(name(), "sh", "-c", script, opts=opts)
    assert second.returncode == 0 and second.stdout == first.stdout, second.stdout + second.stderr
    assert filters() == before, (before, filters())
