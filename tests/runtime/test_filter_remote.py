# SPDX-License-Identifier: MIT
"""zygote-runc's seccomp program from zygoted (GetFilter) or compiled locally: the daemon's is
used when one we trust answers, --no-zygote / ZYGOTE_RUNC_FILTER=local compile here, a missing
daemon and one of another uid fall back to compiling here and say why in the log, and in every
case the container carries the filter its config.json asks for (checked from inside)."""
import json
import os
import re
import sys
import uuid

import pytest

from containertools import PODMAN_PROFILE, profile_with_errno

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402
import varlink  # noqa: E402


L = "io.zygote.Launcher."


@pytest.fixture
def zygoted(staged, needs_root):
    """Starts zygoted (as_uid: unprivileged) on a socket of its own; stopped after the test."""
    started = []

    def start(as_uid=None):
        d = zytest.Daemon(staged, zytest.make_workdir(), as_uid=as_uid)
        if as_uid is not None:
            os.chown(d.dir, as_uid, as_uid)
        started.append(d)
        return d.start()

    yield start
    for d in started:
        assert d.stop() == 0, d.log()
        zytest.remove_workdir(d.dir)


@pytest.fixture
def filtered(bundle):
    """The bundle runs try-syscall add_key under Podman's profile with default errno 99."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"no {PODMAN_PROFILE} (package golang-github-containers-common)")
    if not os.path.exists(os.path.join(bundle.rootfs, "bin", "try-syscall")):
        pytest.skip("try-syscall-static not built (no static libc)")
    bundle.config["linux"]["seccomp"] = profile_with_errno(99)
    bundle.set_args("sh", "-c", "grep Seccomp: /proc/self/status; try-syscall add_key")
    return bundle


def run(runc, bundle, *global_opts, env=None):
    """`run` of the bundle with --debug; checks the filter from inside; returns the debug lines
    this run wrote (to the log, which the fixture passes: runc's --debug writes only there then)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ZYGOTE_")}
    full_env.update(env or {})
    start = os.path.getsize(runc.log) if os.path.exists(runc.log) else 0
    r = runc("--debug", *global_opts, "run", "--bundle", bundle.path, "f" + uuid.uuid4().hex[:10], env=full_env)
    assert r.returncode == 0, r.stderr
    assert re.search(r"Seccomp:\s+2", r.stdout), r.stdout
    assert "add_key errno=99" in r.stdout, r.stdout
    with open(runc.log) as f:
        f.seek(start)
        return "\n".join(e["msg"] for e in map(json.loads, f) if e["level"] == "debug")


def log_lines(runc, level):
    with open(runc.log) as f:
        return [e["msg"] for e in map(json.loads, f) if e["level"] == level]


def cached_in(daemon, bundle):
    """Whether daemon has the bundle's object compiled already (asking compiles it)."""
    with varlink.connect(daemon.socket) as c:
        r = c.call(L + "GetFilter", {"seccomp": bundle.config["linux"]["seccomp"]})
        r.close_fds()
        return r.parameters["cached"]


def test_remote_used_and_cached(runc, filtered, zygoted):
    d = zygoted()
    err = run(runc, filtered, "--zygote-socket", d.socket)
    assert f"from zygoted at {d.socket} (compiled there now" in err, err
    # compiled once: later containers ask by the object's key alone, and get the same program
    err = run(runc, filtered, "--zygote-socket", d.socket)
    assert f"from zygoted at {d.socket} (cached, asked by its key" in err, err
    # ZYGOTE_SOCKET names it as well; and the strict mode is satisfied.
    err = run(runc, filtered, env={"ZYGOTE_SOCKET": d.socket, "ZYGOTE_RUNC_FILTER": "zygoted"})
    assert f"from zygoted at {d.socket} (cached, asked by its key" in err, err
    assert not log_lines(runc, "info"), "a fallback was logged although zygoted answered"


def test_get_filter_by_key(filtered, zygoted):
    """GetFilter by key: the program compiled before for the object whose key it is, the same as
    by the object; NoSuchFilter for a key not cached; a malformed key is an invalid parameter."""
    import hashlib
    d = zygoted()
    obj = filtered.config["linux"]["seccomp"]
    with varlink.connect(d.socket) as c:
        missing = hashlib.sha256(b"not compiled").hexdigest()
        e = c.call(L + "GetFilter", {"key": missing}, check=False)
        assert e.error == L + "NoSuchFilter" and e.parameters["key"] == missing, e
        first = c.call(L + "GetFilter", {"seccomp": obj})
        first.close_fds()
        key = first.parameters["key"]
        by_key = c.call(L + "GetFilter", {"key": key})
        by_key.close_fds()
        assert by_key.parameters["hash"] == first.parameters["hash"] and by_key.parameters["cached"]
        for bad in ("xyz", key.upper(), key[:-1]):
            e = c.call(L + "GetFilter", {"key": bad}, check=False)
            assert e.error == "org.varlink.service.InvalidParameter", e
        e = c.call(L + "GetFilter", {"key": key, "seccomp": obj}, check=False)
        assert e.error == "org.varlink.service.InvalidParameter", e


@pytest.mark.parametrize("how", ["--no-zygote", "ZYGOTE_RUNC_FILTER=local"])
def test_forced_local(runc, filtered, zygoted, how):
    d = zygoted()
    if how.startswith("--"):
        err = run(runc, filtered, how, "--zygote-socket", d.socket)
    else:
        err = run(runc, filtered, env={"ZYGOTE_SOCKET": d.socket, "ZYGOTE_RUNC_FILTER": "local"})
    assert "compiled here in" in err and "--no-zygote or ZYGOTE_RUNC_FILTER=local" in err, err
    assert "from zygoted" not in err
    assert not cached_in(d, filtered), "zygoted was asked although the filter was forced local"


def test_daemon_absent_falls_back(runc, filtered, tmp_path):
    missing = str(tmp_path / "no-such.sock")
    err = run(runc, filtered, "--zygote-socket", missing)
    assert "compiled here in" in err, err
    info = log_lines(runc, "info")
    assert len(info) == 1 and f"no zygoted at {missing} (No such file or directory)" in info[0], info
    # Asked to insist on zygoted, it fails instead, and says why.
    r = runc("--zygote-socket", missing, "run", "--bundle", filtered.path, "strict",
             env=dict(os.environ, ZYGOTE_RUNC_FILTER="zygoted"))
    assert r.returncode != 0
    assert f"no zygoted at {missing}" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, "strict"))


def test_untrusted_daemon_refused(runc, filtered, zygoted):
    """A zygoted of another uid (nobody) could hand out a program that allows everything: root's
    zygote-runc does not ask it, compiles itself and says why."""
    d = zygoted(as_uid=zytest.NOBODY)
    err = run(runc, filtered, "--zygote-socket", d.socket)
    assert "compiled here in" in err, err
    info = log_lines(runc, "info")
    assert len(info) == 1 and f"runs as uid {zytest.NOBODY}, neither root nor us: not trusted" in info[0], info
    assert not cached_in(d, filtered), "the untrusted zygoted was asked"


def test_only_an_oci_object(runc, bundle, zygoted, tmp_path):
    """The profile module also reads zygote's profile format, whose "seccomp" names a file: a
    config.json must not make the runtime (or, through GetFilter, root's zygoted) open one."""
    d = zygoted()
    secret = tmp_path / "other.json"
    secret.write_text(json.dumps({"defaultAction": "SCMP_ACT_ALLOW"}))
    bundle.config["linux"]["seccomp"] = {"seccomp": str(secret)}
    bundle.save()
    for opts in (("--zygote-socket", d.socket), ("--no-zygote",)):
        r = runc(*opts, "run", "--bundle", bundle.path, "w" + uuid.uuid4().hex[:10])
        assert r.returncode != 0
        assert "linux.seccomp: defaultAction: missing" in r.stderr, r.stderr


def test_stalled_daemon_falls_back(runc, filtered, zygoted):
    """A zygoted that accepts and then does not answer (stopped here) costs the start at most the
    timeout: the runtime compiles locally and says why."""
    import signal
    import time
    d = zygoted()
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        err = run(runc, filtered, "--zygote-socket", d.socket)
        took = time.monotonic() - t0
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    assert "compiled here in" in err, err
    info = log_lines(runc, "info")
    assert len(info) == 1 and f"zygoted at {d.socket} did not answer within 3000 ms" in info[0], info
    assert took < 30, took
