# SPDX-License-Identifier: MIT
"""zygote-runc's OCI hooks: each kind at its point of the lifecycle, with the container's state on
its stdin, only its own environment, its timeout; a failing create hook leaves nothing behind."""
import json
import os
import subprocess
import sys
import time

import pytest

from test_runtime import assert_nothing_left, cid, create_fails

# What a hook saw, written as OUT/KIND.json; the kind is appended to OUT/order.
RECORDER = r"""
import json, os, sys
kind, out = sys.argv[1], sys.argv[2]
state = json.load(sys.stdin)
seen = {"state": state}
# the argv execve gave (sys.argv starts at the script)
with open("/proc/self/cmdline", "rb") as f:
    seen["argv"] = [a.decode() for a in f.read().split(b"\0")[:-1]]
# the environment execve gave (os.environ may have been changed by the interpreter's start)
with open("/proc/self/environ", "rb") as f:
    seen["env"] = sorted(e.decode() for e in f.read().split(b"\0") if e)
pid = state["pid"]
try:  # a process that ended already (run's poststart of a short command) has none
    # the init's root is the runtime's (not pivoted yet): the same directory, whatever path the
    # kernel shows for it from another mount namespace (a chrooted runtime's root is not "/")
    r, own = os.stat(f"/proc/{pid}/root/"), os.stat("/")
    seen["init_root_is_ours"] = (r.st_dev, r.st_ino) == (own.st_dev, own.st_ino)
    seen["init_mnt"] = os.readlink(f"/proc/{pid}/ns/mnt")
    seen["own_mnt"] = os.readlink("/proc/self/ns/mnt")
except OSError:
    pass
with open(os.path.join(out, kind + ".json"), "w") as f:
    json.dump(seen, f)
with open(os.path.join(out, "order"), "a") as f:
    f.write(kind + "\n")
"""


@pytest.fixture
def recorder(tmp_path):
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out = tmp_path / "hooks"
    out.mkdir()

    def hook(kind, **extra):
        h = {"path": sys.executable, "args": ["hook-" + kind, str(script), kind, str(out)],
             "env": ["HOOK_KIND=" + kind, "PATH=/usr/bin:/bin"]}
        h.update(extra)
        return h
    hook.out = out
    return hook


def seen(recorder, kind):
    with open(recorder.out / (kind + ".json")) as f:
        return json.load(f)


def order(recorder):
    p = recorder.out / "order"
    return p.read_text().split() if p.exists() else []


def wait_stopped(runc, name):
    for _ in range(100):
        if runc.state(name)["status"] == "stopped":
            return
        time.sleep(0.05)
    raise AssertionError("the container did not stop")


def test_every_kind_at_its_point(runc, bundle, recorder, tmp_path):
    name = cid()
    kinds = ("prestart", "createRuntime", "poststart", "poststop")
    bundle.config["hooks"] = {k: [recorder(k)] for k in kinds}
    bundle.config["annotations"] = {"org.example.hooks": "yes"}
    bundle.set_args("sleep", "1000")
    pid_file = tmp_path / "pid"
    env = dict(os.environ, ZRC_RUNTIME_ONLY="secret")
    r = runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name, env=env)
    assert r.returncode == 0, r.stderr
    pid = int(pid_file.read_text())
    assert order(recorder) == ["prestart", "createRuntime"]
    for kind in ("prestart", "createRuntime"):
        s = seen(recorder, kind)
        assert s["state"] == {"ociVersion": s["state"]["ociVersion"], "id": name, "status": "creating",
                              "pid": pid, "bundle": bundle.path,
                              "annotations": {"org.example.hooks": "yes"}}
        assert s["argv"][0] == "hook-" + kind and s["argv"][1:] == [str(recorder.out.parent / "recorder.py"), kind, str(recorder.out)]
        assert s["env"] == sorted(["HOOK_KIND=" + kind, "PATH=/usr/bin:/bin"])
        # in the runtime's namespaces, the container's own exist, its init has not pivoted yet
        assert s["init_mnt"] != s["own_mnt"]
        assert s["init_root_is_ours"] is True
    assert runc("start", name).returncode == 0
    assert order(recorder) == ["prestart", "createRuntime", "poststart"]
    s = seen(recorder, "poststart")
    assert (s["state"]["status"], s["state"]["pid"], s["state"]["id"]) == ("running", pid, name)
    assert runc("kill", name, "KILL").returncode == 0
    wait_stopped(runc, name)
    assert order(recorder) == ["prestart", "createRuntime", "poststart"]
    assert runc("delete", name).returncode == 0
    assert order(recorder) == ["prestart", "createRuntime", "poststart", "poststop"]
    s = seen(recorder, "poststop")
    assert (s["state"]["status"], s["state"]["id"], s["state"]["bundle"]) == ("stopped", name, bundle.path)
    assert s["env"] == sorted(["HOOK_KIND=poststop", "PATH=/usr/bin:/bin"])
    assert_nothing_left(runc, bundle, name)


def test_run_runs_poststart_and_poststop(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {k: [recorder(k)] for k in ("createRuntime", "poststart", "poststop")}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    assert order(recorder) == ["createRuntime", "poststart", "poststop"]
    assert_nothing_left(runc, bundle, name)


def test_a_failing_create_runtime_hook_aborts_create(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {
        "prestart": [recorder("prestart")],
        "createRuntime": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}, recorder("createRuntime")],
        "poststop": [recorder("poststop")],
    }
    bundle.set_args("true")
    err = create_fails(runc, bundle, name)
    assert "createRuntime hook 0" in err and "/bin/sh" in err and "exit status 3" in err
    # no create hook after the one that failed; the container destroyed, poststop runs
    assert order(recorder) == ["prestart", "poststop"]
    s = seen(recorder, "poststop")
    assert (s["state"]["status"], s["state"]["id"], s["state"]["pid"]) == ("stopped", name, 0)


def test_a_hook_past_its_timeout_is_killed_and_fails_create(runc, bundle, tmp_path):
    name = cid()
    marker = tmp_path / "hook-pid"
    bundle.config["hooks"] = {"prestart": [
        {"path": "/bin/sh", "args": ["sh", "-c", f"echo $$ > {marker}; exec sleep 100"], "timeout": 1}]}
    bundle.set_args("true")
    t = time.monotonic()
    err = create_fails(runc, bundle, name)
    assert time.monotonic() - t < 20
    assert "prestart hook 0" in err and "timed out" in err
    hook_pid = int(marker.read_text())
    assert not os.path.exists(f"/proc/{hook_pid}") or "Z" in open(f"/proc/{hook_pid}/stat").read().split()[2]


def test_a_hooks_output_goes_to_the_runtimes_stderr(runc, bundle):
    name = cid()
    bundle.config["hooks"] = {"createRuntime": [
        {"path": "/bin/sh", "args": ["sh", "-c", "echo hook-stdout; echo hook-stderr >&2"]}]}
    bundle.set_args("true")
    r = runc("create", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    assert "hook-stdout" in r.stderr and "hook-stderr" in r.stderr and "hook" not in r.stdout
    assert runc("delete", "--force", name).returncode == 0


def test_a_failing_poststart_hook_is_logged_not_fatal(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {"poststart": [{"path": "/bin/false"}, recorder("poststart")],
                              "poststop": [{"path": "/bin/false"}, recorder("poststop")]}
    bundle.set_args("sleep", "1000")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    r = runc("start", name)
    assert r.returncode == 0 and "poststart hook 0" in r.stderr
    assert order(recorder) == ["poststart"]  # the ones after a failure still run
    assert runc("delete", "--force", name).returncode == 0
    assert order(recorder) == ["poststart", "poststop"]


@pytest.mark.parametrize("hooks, where", [
    ({"prestart": [{"path": "bin/true"}]}, "hooks.prestart[0].path"),
    ({"createRuntime": [{"path": "/bin/true", "timeout": 0}]}, "hooks.createRuntime[0].timeout"),
    ({"poststop": [{"path": "/bin/true"}, {"args": ["x"]}]}, "hooks.poststop[1].path"),
    ({"poststart": [{"path": "/bin/true", "env": [1]}]}, "hooks.poststart[0].env"),
    ({"createContainer": [{"path": "/bin/true"}]}, "hooks.createContainer"),
    ({"startContainer": [{"path": "/bin/true"}]}, "hooks.startContainer"),
    ({"prestop": [{"path": "/bin/true"}]}, "hooks.prestop"),
])
def test_invalid_or_unsupported_hooks_are_refused(runc, bundle, hooks, where):
    name = cid()
    bundle.config["hooks"] = hooks
    bundle.set_args("true")
    assert where in create_fails(runc, bundle, name)


def test_features_lists_the_hooks_that_run(runc_bin):
    r = subprocess.run([runc_bin, "features"], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["hooks"] == ["prestart", "createRuntime", "poststart", "poststop"]
