# SPDX-License-Identifier: MIT
"""zygote-runc against runc, command by command: the same busybox container (`sleep 300`) is
created and started under build/zygote-runc and under Debian's runc (each with its own --root),
then each row of STEPS runs one command line on both, in order, and compares the exit status and
the output's shape as the row's `shape` function reduces it (a table's header and columns, a JSON
document's keys, the lines a process printed). A difference fails unless the row marks it intended
with the reason; a difference marked intended that is not there fails too. The last error line of
--log-format json must be runc's (level, msg, time).
"""
import json
import os
import re
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field

import pytest

import containertools as ct
from test_differential_config import RUNC, RUNC_11

ID = "<id>"


def same(out, cid):
    return out.replace(cid, ID).strip()


def table(out, cid):
    """The header's columns, then per row its number of columns and its status."""
    lines = out.strip().splitlines()
    if not lines:
        return []
    head = lines[0].split()
    rows = [f"{len(l.split())} columns" + (f", {l.split()[2]}" if "STATUS" in head else "") for l in lines[1:]]
    return [" ".join(head)] + rows


def json_keys(out, cid):
    try:
        doc = json.loads(out)
    except ValueError:
        return f"not JSON: {out[:80]!r}"
    if isinstance(doc, list):
        return [sorted(d) if isinstance(d, dict) else type(d).__name__ for d in doc]
    return sorted(doc)


def stats_keys(out, cid):
    """events --stats: the document's keys, data's, and the keys of data's cpu, memory and pids."""
    try:
        doc = json.loads(out.splitlines()[0])
    except (ValueError, IndexError):
        return f"not JSON: {out[:80]!r}"
    d = doc.get("data", {})
    # what a container's own I/O decides (a list or a cache figure runc leaves out at zero) is not
    # compared: only which keys may be there
    blkio = d.get("blkio") or {}
    entries = [e for k in ("ioServiceBytesRecursive", "ioServicedRecursive") for e in blkio.get(k, [])]
    return {"top": sorted(doc), "type": doc.get("type"), "id": same(doc.get("id", ""), cid), "data": sorted(d),
            "cpu.usage": sorted(d.get("cpu", {}).get("usage", {})), "cpuset": sorted(d.get("cpuset") or {}),
            "memory": sorted(set(d.get("memory") or {}) - {"cache"}),
            "memory.usage": sorted((d.get("memory") or {}).get("usage", {})),
            "pids": sorted(d.get("pids") or {}),
            "blkio": set(blkio) <= {"ioServiceBytesRecursive", "ioServicedRecursive"} and
            all({"major", "op"} <= set(e) <= {"major", "minor", "op", "value"} for e in entries)}


def ps_table(out, cid):
    lines = out.strip().splitlines()
    return [" ".join(lines[0].split())] + [f"{len(l.split())} columns, {l.split()[-1]}" for l in lines[1:]] \
        if lines else []


def version(out, cid):
    """--version: the first line's words before the number, then each line's label."""
    lines = out.strip().splitlines()
    return [re.sub(r"version .*", "version N", re.sub(r"^\S+", "NAME", lines[0]))] + \
        [l.split(":")[0] for l in lines[1:]]


def sections(out, cid):
    """--help: its section titles (NAME:, USAGE:, ...)."""
    return [l for l in out.splitlines() if re.fullmatch(r"[A-Z][A-Z ]+:", l)]


def nothing(out, cid):
    return ""


@dataclass
class Step:
    name: str
    args: list                                      # ID: the container's id
    shape: object = same
    intended: dict = field(default_factory=dict)    # {"exit" or "out": reason}
    pass_fd: bool = False                           # fd 3: a file holding "preserved"


CAPS = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status"
PS_DASHES_11 = RUNC_11 + "passes the \"--\" itself on to ps(1), which refuses it; zygote-runc drops it"
EXEC_127 = ("zygote-runc's exec exits 127 for a command not found (126: not executable), as a shell and podman "
            "report it; runc 1.1 exits 255 with the same message")
VERSION = "zygote-runc has no Go: no go: line"
NEWER_FEATURES = ("memoryPolicy", "mountExtensions")  # what `features` says of newer runc's features

STEPS = [
    Step("list", ["list"], table),
    Step("list-quiet", ["list", "-q"]),
    Step("list-json", ["list", "--format", "json"], json_keys),
    Step("state", ["state", ID], json_keys),
    Step("kill-0", ["kill", ID, "0"], nothing),
    Step("kill-0-missing", ["kill", "no-such-container", "0"], nothing),
    Step("ps-default", ["ps", ID], ps_table),
    Step("ps-json", ["ps", "--format", "json", ID], lambda o, c: [type(p).__name__ for p in json.loads(o)]),
    Step("ps-options", ["ps", ID, "-o", "pid,comm"], ps_table),
    Step("ps-options-after-dashes", ["ps", ID, "--", "-o", "pid,comm"], ps_table,
         intended={"exit": PS_DASHES_11, "out": PS_DASHES_11, "log": PS_DASHES_11}),
    Step("events-stats", ["events", "--stats", ID], stats_keys),
    Step("exec-cwd-env", ["exec", "--cwd", "/tmp", "--env", "FOO=bar", ID, "sh", "-c", "pwd; echo $FOO"]),
    Step("exec-user-additional-gids", ["exec", "--user", "1000:1000", "--additional-gids", "7",
                                       "--additional-gids", "8", ID, "id"]),
    Step("exec-cap", ["exec", "--cap", "CAP_SYS_ADMIN", ID, "sh", "-c", CAPS]),
    Step("exec-no-new-privs", ["exec", "--no-new-privs", ID, "grep", "NoNewPrivs", "/proc/self/status"]),
    Step("exec-preserve-fds", ["exec", "--preserve-fds", "1", ID, "cat", "/proc/self/fd/3"], pass_fd=True),
    Step("exec-home", ["exec", ID, "sh", "-c", "echo $HOME"]),
    Step("exec-missing-command", ["exec", ID, "no-such-command"], nothing, intended={"exit": EXEC_127}),
    Step("pause", ["pause", ID], nothing),
    Step("state-paused", ["state", ID], lambda o, c: json.loads(o)["status"]),
    Step("exec-paused", ["exec", ID, "true"], nothing),
    Step("resume", ["resume", ID], nothing),
    Step("resume-not-paused", ["resume", ID], nothing),
    Step("delete-running", ["delete", ID], nothing),
    Step("kill-all-0", ["kill", "--all", ID, "0"], nothing),
    Step("delete-force-running", ["delete", "--force", ID], nothing),
    Step("state-deleted", ["state", ID], nothing),
    Step("delete-force-missing", ["delete", "--force", ID], nothing),
    Step("features", ["features"], lambda o, c: {"keys": sorted(json.loads(o)),
                                                  "linux": sorted(set(json.loads(o)["linux"]) - set(NEWER_FEATURES)),
                                                  "capabilities": json.loads(o)["linux"]["capabilities"]}),
    Step("features-newer", ["features"], lambda o, c: sorted(set(json.loads(o)["linux"]) & set(NEWER_FEATURES)),
         intended={"out": RUNC_11 + "has neither: linux.memoryPolicy (runc 1.3) and id-mapped mounts (runc 1.2's "
                          "mountExtensions.idmap) are implemented by zygote-runc"}),
    Step("features-hooks", ["features"], lambda o, c: json.loads(o)["hooks"]),
    Step("features-namespaces", ["features"], lambda o, c: json.loads(o)["linux"]["namespaces"],
         intended={"out": RUNC_11 + "has no time namespace"}),
    Step("version", ["--version"], version, intended={"out": VERSION}),
    Step("help", ["--help"], sections),
]


class Side:
    def __init__(self, name, binary, tmp):
        self.name, self.binary = name, binary
        self.root = str(tmp / f"{name}-state")
        self.log = str(tmp / f"{name}-log.json")

    def __call__(self, *args, pass_fd=False, timeout=60):
        argv = [self.binary, "--root", self.root, "--log", self.log, "--log-format", "json", *args]
        if pass_fd:
            three = self.root + ".fd3"
            with open(three, "w") as f:
                f.write("preserved\n")
            argv = ["sh", "-c", 'exec "$@" 3<"$0"', three, *argv]
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            r = subprocess.run(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, timeout=timeout, text=True)
            out.seek(0)
            err.seek(0)
            r.stdout, r.stderr = out.read(), err.read()
        return r

    def last_log(self):
        try:
            with open(self.log) as f:
                lines = [l for l in f if l.strip()]
        except FileNotFoundError:
            return None
        return json.loads(lines[-1]) if lines else None


@pytest.fixture(scope="module")
def runc_binary():
    if not os.access(RUNC, os.X_OK):
        pytest.skip(f"no {RUNC} (Debian's runc package): nothing to compare with")
    return RUNC


# chrooted (scripts/fresh-check.sh's rehearsal): runc 1.1's exec lands at the namespace's root
CHROOTED = ct.chrooted()


@pytest.mark.timeout(300)
def test_commands_same_as_runc(bundle, runc_bin, runc_binary, tmp_path):
    bundle.set_args("sleep", "300")
    with open(os.path.join(bundle.rootfs, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    tag = uuid.uuid4().hex[:8]
    sides = [Side("zygote", runc_bin, tmp_path), Side("runc", runc_binary, tmp_path)]
    cids = {s.name: f"zdx-{tag}-{s.name}" for s in sides}
    seen, unexpected, stale = [], [], []
    try:
        for s in sides:
            r = s("create", "--bundle", bundle.path, cids[s.name])
            assert r.returncode == 0, f"{s.name}: {r.stderr}"
            r = s("start", cids[s.name])
            assert r.returncode == 0, f"{s.name}: {r.stderr}"
        for step in STEPS:
            got = {}
            for s in sides:
                args = [cids[s.name] if a == ID else a for a in step.args]
                r = s(*args, pass_fd=step.pass_fd)
                got[s.name] = {"exit": r.returncode, "out": step.shape(r.stdout, cids[s.name])}
                if r.returncode != 0:
                    got[s.name]["log"] = sorted(s.last_log() or {})
            seen.append({"step": step.name, **got})
            ours, theirs = got["zygote"], got["runc"]
            if CHROOTED and step.args[0] == "exec":
                # runc 1.1 in a chroot: its exec'd process, having joined the container's mount
                # namespace, runs at that namespace's root, the host's real root, not the
                # container's (zygote-runc enters the init's root): its output is the host's
                continue
            for key in ("exit", "out", "log"):
                if key not in ours and key not in theirs:
                    continue
                a, b = ours.get(key), theirs.get(key)
                if a != b and key not in step.intended:
                    unexpected.append(f"{step.name} {key}: zygote-runc {a!r}, runc {b!r}")
                if a == b and key in step.intended:
                    stale.append(f"{step.name} {key}: marked intended ({step.intended[key]}) but both gave {a!r}")
    finally:
        for s in sides:
            s("delete", "--force", cids[s.name])
        print(json.dumps(seen, indent=1))  # the evidence, with -rP
    assert not unexpected, "differences from runc:\n" + "\n".join(unexpected)
    assert not stale, "the table marks differences that are not there:\n" + "\n".join(stale)


@pytest.mark.timeout(120)
def test_events_interval_until_the_container_exits(bundle, runc_bin, tmp_path):
    """events without --stats: a stats line every --interval, until the init exits (then exit 0)."""
    bundle.set_args("sleep", "2")
    side = Side("zygote", runc_bin, tmp_path)
    cid = "zdx-ev-" + uuid.uuid4().hex[:8]
    try:
        assert side("create", "--bundle", bundle.path, cid).returncode == 0
        assert side("start", cid).returncode == 0
        r = side("events", "--interval", "200ms", cid, timeout=30)
        lines = [json.loads(l) for l in r.stdout.splitlines()]
        assert r.returncode == 0, r.stderr
        assert len(lines) >= 3 and all(l["type"] == "stats" and l["id"] == cid for l in lines), r.stdout
        r = side("events", "--interval", "soon", cid)
        assert r.returncode != 0 and "--interval" in r.stderr
    finally:
        side("delete", "--force", cid)


@pytest.mark.timeout(120)
def test_events_say_oom_at_once(bundle, runc_bin, runc_binary, tmp_path):
    """events without --stats: a process of the container that hits the memory limit is an
    {"type": "oom", "id": ID} line at once (the interval is a minute), from both runtimes."""
    bundle.config["linux"].setdefault("resources", {})["memory"] = {"limit": 16 << 20}
    # a child of the init grows past the limit (the OOM killer takes it, the init stays)
    bundle.set_args("sh", "-c", "sleep 1; (x=$(head -c 100000000 /dev/zero | tr '\\0' a)); sleep 60")
    for s in (Side("zygote", runc_bin, tmp_path), Side("runc", runc_binary, tmp_path)):
        cid = f"zdx-oom-{s.name}-" + uuid.uuid4().hex[:6]
        path = tmp_path / f"events-{s.name}"
        try:
            assert s("create", "--bundle", bundle.path, cid).returncode == 0
            with open(path, "w") as out:
                ev = subprocess.Popen([s.binary, "--root", s.root, "events", "--interval", "60s", cid], stdout=out,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                assert s("start", cid).returncode == 0
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and '"oom"' not in path.read_text():
                    time.sleep(0.2)
            finally:
                ev.kill()
                ev.wait()
        finally:
            s("delete", "--force", cid)
        lines = [json.loads(l) for l in path.read_text().splitlines() if l.startswith("{")]
        assert {"type": "oom", "id": cid} in lines, (s.name, lines)
        assert all(l["type"] == "oom" for l in lines), (s.name, "no stats line before the first interval", lines)


@pytest.mark.timeout(120)
def test_frozen_cgroup_is_refused(bundle, runc_bin, runc_binary, tmp_path):
    """A cgroupsPath that exists already frozen: both refuse create (zygote-runc used to hang)."""
    freezer = "/sys/fs/cgroup/freezer"
    if not os.path.isdir(freezer):
        pytest.skip("no v1 freezer hierarchy on this host")
    name = "zdx-frozen-" + uuid.uuid4().hex[:8]
    os.mkdir(os.path.join(freezer, name))
    try:
        with open(os.path.join(freezer, name, "freezer.state"), "w") as f:
            f.write("FROZEN")
        bundle.config["linux"]["cgroupsPath"] = "/" + name
        bundle.save()
        for s in (Side("zygote", runc_bin, tmp_path), Side("runc", runc_binary, tmp_path)):
            r = s("create", "--bundle", bundle.path, name + "-" + s.name, timeout=30)
            s("delete", "--force", name + "-" + s.name)
            assert r.returncode == 1 and "unexpectedly frozen" in r.stderr, f"{s.name}: {r.stderr}"
    finally:
        with open(os.path.join(freezer, name, "freezer.state"), "w") as f:
            f.write("THAWED")
        for top in os.listdir("/sys/fs/cgroup"):
            d = os.path.join("/sys/fs/cgroup", top, name)
            if os.path.isdir(d):
                os.rmdir(d)


def exec_on_a_terminal(side, cid, sock_path):
    """exec -t -d --console-socket: what the process printed on its pty, pts numbers left out."""
    import select
    import socket
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)
    try:
        r = side("exec", "-t", "-d", "--console-socket", sock_path, cid, "sh", "-c",
                 "tty; test -t 0 && test -t 1 && test -t 2 && echo all-ttys; echo done")
        if r.returncode != 0:
            return {"exit": r.returncode}
        srv.settimeout(10)
        conn, _ = srv.accept()
        _, fds, _, _ = socket.recv_fds(conn, 16, 1)
        conn.close()
        out = b""
        while b"done" not in out:
            ready, _, _ = select.select([fds[0]], [], [], 10)
            if not ready:
                break
            try:
                chunk = os.read(fds[0], 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(fds[0])
        return {"exit": r.returncode, "fds": len(fds), "out": re.sub(r"pts/\d+", "pts/N", out.decode()).split()}
    finally:
        srv.close()


@pytest.mark.timeout(120)
def test_exec_tty_same_as_runc(bundle, runc_bin, runc_binary, tmp_path):
    bundle.set_args("sleep", "300")
    tag = uuid.uuid4().hex[:8]
    got = {}
    for s in (Side("zygote", runc_bin, tmp_path), Side("runc", runc_binary, tmp_path)):
        cid = f"zdx-tty-{tag}-{s.name}"
        try:
            assert s("create", "--bundle", bundle.path, cid).returncode == 0
            assert s("start", cid).returncode == 0
            got[s.name] = exec_on_a_terminal(s, cid, str(tmp_path / f"{s.name}.sock"))
        finally:
            s("delete", "--force", cid)
    print(json.dumps(got))
    assert got["zygote"] == got["runc"]
    assert got["zygote"]["out"][:2] == ["/dev/pts/N", "all-ttys"], got
