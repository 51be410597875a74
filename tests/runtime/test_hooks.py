# SPDX-License-Identifier: MIT
"""zygote-runc's OCI hooks: each kind at its point of the lifecycle and in its namespaces (the
runtime's; createContainer and startContainer the container's, run by its init), with the
container's state on its stdin, only its own environment, its timeout; a failing create hook
leaves nothing behind, a failing startContainer hook fails start before the process runs."""
import json
import os
import subprocess
import sys
import time

import pytest

from containertools import processes_naming
from test_runtime import DOCKER_PROFILE, assert_nothing_left, cid, create_fails, last_log_error

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
    seen["init_pidns"] = os.readlink(f"/proc/{pid}/ns/pid")
    seen["own_pidns"] = os.readlink("/proc/self/ns/pid")
except OSError:
    pass
seen["cwd"] = os.getcwd()
# createContainer: the container's own mounts are there, below the rootfs, which is the cwd
seen["cwd_proc_is_a_mount"] = os.path.ismount(os.path.join(os.getcwd(), "proc"))
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


# startContainer runs inside the container (busybox, no Python): what it saw goes to /hooks, a bind
# of the recorder's directory, as files; /proc is the container's there.
IN_CONTAINER = r"""
out=/hooks
cat > $out/startContainer.state
tr '\0' '\n' < /proc/$$/environ > $out/startContainer.env
cat /proc/$$/cmdline > $out/startContainer.argv
readlink /proc/self/ns/mnt > $out/startContainer.mnt
ls / > $out/startContainer.root
grep -E '^(Seccomp|CapEff):' /proc/$$/status > $out/startContainer.status
echo startContainer >> $out/order
"""


def in_container_hook(recorder, bundle, script=IN_CONTAINER, **extra):
    """A startContainer hook: the container's /bin/sh with script, the recorder's directory bound on
    /hooks."""
    os.makedirs(os.path.join(bundle.rootfs, "hooks"), exist_ok=True)
    if not any(m["destination"] == "/hooks" for m in bundle.config["mounts"]):
        bundle.config["mounts"].append({"destination": "/hooks", "type": "bind", "source": str(recorder.out),
                                        "options": ["rbind", "rw"]})
    # busybox picks its applet by argv[0]: the hook's own argument comes after the script
    h = {"path": "/bin/sh", "args": ["sh", "-c", script, "hook-startContainer"],
         "env": ["HOOK_KIND=startContainer"]}
    h.update(extra)
    return h


def in_container_seen(recorder):
    r = {}
    for what in ("state", "env", "argv", "mnt", "root", "status"):
        p = recorder.out / ("startContainer." + what)
        r[what] = p.read_text() if p.exists() else None
    r["state"] = json.loads(r["state"]) if r["state"] else None
    return r


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
    kinds = ("prestart", "createRuntime", "createContainer", "poststart", "poststop")
    bundle.config["hooks"] = {k: [recorder(k)] for k in kinds}
    bundle.config["hooks"]["startContainer"] = [in_container_hook(recorder, bundle)]
    with open(os.path.join(bundle.rootfs, "marker-in-rootfs"), "w"):
        pass
    bundle.config["annotations"] = {"org.example.hooks": "yes"}
    bundle.set_args("sleep", "1000")
    pid_file = tmp_path / "pid"
    env = dict(os.environ, ZRC_RUNTIME_ONLY="secret")
    r = runc("create", "--bundle", bundle.path, "--pid-file", str(pid_file), name, env=env)
    assert r.returncode == 0, r.stderr
    pid = int(pid_file.read_text())
    assert order(recorder) == ["prestart", "createRuntime", "createContainer"]
    for kind in ("prestart", "createRuntime", "createContainer"):
        s = seen(recorder, kind)
        assert s["state"] == {"ociVersion": s["state"]["ociVersion"], "id": name, "status": "creating",
                              "pid": pid, "bundle": bundle.path,
                              "annotations": {"org.example.hooks": "yes"}}
        assert s["argv"][0] == "hook-" + kind and s["argv"][1:] == [str(recorder.out.parent / "recorder.py"), kind, str(recorder.out)]
        assert s["env"] == sorted(["HOOK_KIND=" + kind, "PATH=/usr/bin:/bin"])
        # the init has not pivoted yet: its root is the hook's
        assert s["init_root_is_ours"] is True
        if kind != "createContainer":
            # in the runtime's namespaces; the container's own exist
            assert s["init_mnt"] != s["own_mnt"] and s["init_pidns"] != s["own_pidns"]
    # createContainer: in the container's mount and pid namespaces, its mounts made below the
    # rootfs, which is its cwd (the host's paths, its own included, still resolve)
    s = seen(recorder, "createContainer")
    assert s["init_mnt"] == s["own_mnt"] and s["init_pidns"] == s["own_pidns"]
    assert s["cwd"] == bundle.rootfs and s["cwd_proc_is_a_mount"] is True
    assert not os.path.ismount(os.path.join(bundle.rootfs, "proc"))  # not in the host's namespace
    assert not (recorder.out / "startContainer.state").exists()  # not before start
    r = runc("start", name)
    assert r.returncode == 0, r.stderr
    assert order(recorder) == ["prestart", "createRuntime", "createContainer", "startContainer", "poststart"]
    # startContainer: inside the container, at its root, in its mount namespace, before the
    # user's process (whose pid, the init's, the state gives)
    c = in_container_seen(recorder)
    assert c["state"] == {"ociVersion": c["state"]["ociVersion"], "id": name, "status": "created", "pid": pid,
                          "bundle": bundle.path, "annotations": {"org.example.hooks": "yes"}}
    assert c["env"].split() == ["HOOK_KIND=startContainer"]
    assert c["argv"].split("\0") == ["sh", "-c", IN_CONTAINER, "hook-startContainer", ""]
    assert c["mnt"].strip() == os.readlink(f"/proc/{pid}/ns/mnt")
    assert "marker-in-rootfs" in c["root"].split() and "usr" not in c["root"].split()
    assert open(f"/proc/{pid}/cmdline").read().split("\0")[:2] == ["sleep", "1000"]
    s = seen(recorder, "poststart")
    assert (s["state"]["status"], s["state"]["pid"], s["state"]["id"]) == ("running", pid, name)
    assert runc("kill", name, "KILL").returncode == 0
    wait_stopped(runc, name)
    assert runc("delete", name).returncode == 0
    assert order(recorder) == ["prestart", "createRuntime", "createContainer", "startContainer", "poststart",
                               "poststop"]
    s = seen(recorder, "poststop")
    assert (s["state"]["status"], s["state"]["id"], s["state"]["bundle"]) == ("stopped", name, bundle.path)
    assert s["env"] == sorted(["HOOK_KIND=poststop", "PATH=/usr/bin:/bin"])
    assert_nothing_left(runc, bundle, name)


def test_run_runs_every_kind(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {k: [recorder(k)] for k in ("createRuntime", "createContainer", "poststart", "poststop")}
    bundle.config["hooks"]["startContainer"] = [in_container_hook(recorder, bundle)]
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    assert order(recorder) == ["createRuntime", "createContainer", "startContainer", "poststart", "poststop"]
    assert in_container_seen(recorder)["state"]["status"] == "created"
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


def test_a_failing_create_container_hook_aborts_create(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {
        "createRuntime": [recorder("createRuntime")],
        "createContainer": [recorder("createContainer"), {"path": "/bin/sh", "args": ["sh", "-c", "exit 4"]},
                            recorder("createContainer-after")],
        "startContainer": [in_container_hook(recorder, bundle)],
        "poststop": [recorder("poststop")],
    }
    bundle.set_args("true")
    err = create_fails(runc, bundle, name)
    assert "createContainer hook 1 (/bin/sh) failed: exit status 4" in err, err
    # no hook after the one that failed; the container destroyed, then poststop
    assert order(recorder) == ["createRuntime", "createContainer", "poststop"]
    s = seen(recorder, "poststop")
    assert (s["state"]["status"], s["state"]["id"], s["state"]["pid"]) == ("stopped", name, 0)


def test_a_create_container_hook_killed_by_a_signal_is_named(runc, bundle):
    name = cid()
    bundle.config["hooks"] = {"createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "kill -TERM $$"]}]}
    bundle.set_args("true")
    assert "createContainer hook 0 (/bin/sh) failed: killed by signal 15" in create_fails(runc, bundle, name)


def test_a_hook_that_cannot_be_executed_fails_create(runc, bundle):
    name = cid()
    bundle.config["hooks"] = {"createContainer": [{"path": "/no/such/hook"}]}
    bundle.set_args("true")
    assert "createContainer hook 0 (/no/such/hook) failed: exit status 127" in create_fails(runc, bundle, name)


def test_a_failing_start_container_hook_fails_start(runc, bundle, recorder):
    """start fails naming the hook; the user's process never runs; no poststart; the container is
    stopped, and delete runs poststop."""
    name = cid()
    bundle.config["hooks"] = {
        "startContainer": [in_container_hook(recorder, bundle),
                           in_container_hook(recorder, bundle, script="echo hook-says >&2; exit 3"),
                           in_container_hook(recorder, bundle, script="echo after >> /hooks/order")],
        "poststart": [recorder("poststart")],
        "poststop": [recorder("poststop")],
    }
    bundle.set_args("sh", "-c", "echo process >> /hooks/order; exec sleep 1000")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    r = runc("start", name)
    assert r.returncode == 1
    assert "startContainer hook 1 (/bin/sh) failed: exit status 3" in r.stderr, r.stderr
    assert last_log_error(runc) in r.stderr
    assert order(recorder) == ["startContainer"]
    wait_stopped(runc, name)
    assert runc("delete", name).returncode == 0
    assert order(recorder) == ["startContainer", "poststop"]
    assert_nothing_left(runc, bundle, name)


def test_run_with_a_failing_start_container_hook(runc, bundle, recorder):
    name = cid()
    bundle.config["hooks"] = {"startContainer": [in_container_hook(recorder, bundle, script="exit 5")],
                              "poststart": [recorder("poststart")], "poststop": [recorder("poststop")]}
    bundle.set_args("sh", "-c", "echo process >> /hooks/order")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode != 0
    assert "startContainer hook 0 (/bin/sh) failed: exit status 5" in r.stderr, r.stderr
    assert order(recorder) == ["poststop"]
    assert_nothing_left(runc, bundle, name)


@pytest.mark.parametrize("kind", ["createContainer", "startContainer"])
def test_an_init_hook_past_its_timeout_is_killed(runc, bundle, recorder, kind):
    """Killed (with what it started: the container's pid namespace goes with the init), and the
    failure says so; nothing is left."""
    name = cid()
    mark = str(10000000 + os.getpid() % 1000000)  # a sleep of our own, found by its argument
    hook = {"path": "/bin/sh", "args": ["sh", "-c", f"sleep {mark}; true"], "timeout": 1}
    bundle.config["hooks"] = {kind: [hook if kind == "createContainer" else
                                     in_container_hook(recorder, bundle, script=f"sleep {mark}; true", timeout=1)],
                              "poststop": [recorder("poststop")]}
    bundle.set_args("true")
    t = time.monotonic()
    if kind == "createContainer":
        err = create_fails(runc, bundle, name)
    else:
        assert runc("create", "--bundle", bundle.path, name).returncode == 0
        r = runc("start", name)
        assert r.returncode == 1
        err = r.stderr
        assert runc("delete", name).returncode == 0
    assert time.monotonic() - t < 20
    assert f"{kind} hook 0 (/bin/sh) timed out after 1s and was killed" in err, err
    assert order(recorder) == ["poststop"]
    for _ in range(100):  # SIGKILL to the pid namespace is asynchronous
        if not processes_naming(mark):
            break
        time.sleep(0.05)
    assert processes_naming(mark) == []
    assert_nothing_left(runc, bundle, name)


def test_init_hooks_with_a_large_state_not_read(runc, bundle, recorder):
    """A state larger than a pipe holds: a hook that never reads its stdin neither blocks the init
    nor kills it (SIGPIPE); one that reads it gets all of it."""
    name = cid()
    bundle.config["annotations"] = {f"org.example.a{i}": "x" * 1000 for i in range(300)}
    bundle.config["hooks"] = {"createContainer": [{"path": "/bin/true"}, recorder("createContainer")],
                              "startContainer": [in_container_hook(recorder, bundle, script="exit 0"),
                                                 in_container_hook(recorder, bundle)]}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    assert order(recorder) == ["createContainer", "startContainer"]
    assert seen(recorder, "createContainer")["state"]["annotations"] == bundle.config["annotations"]
    assert in_container_seen(recorder)["state"]["annotations"] == bundle.config["annotations"]
    assert_nothing_left(runc, bundle, name)


def test_start_container_hooks_under_dockers_filter(runc, bundle, recorder):
    """startContainer hooks run as the container's process: its capabilities and its seccomp filter
    (Docker's refuses clone3: the init forks them with clone)."""
    if not os.path.exists(DOCKER_PROFILE):
        pytest.skip(f"no {DOCKER_PROFILE}")
    with open(DOCKER_PROFILE) as f:
        bundle.config["linux"]["seccomp"] = json.load(f)
    name = cid()
    bundle.config["hooks"] = {"startContainer": [in_container_hook(recorder, bundle)]}
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    status = in_container_seen(recorder)["status"]
    assert "Seccomp:\t2" in status, status
    caps = int(status.split("CapEff:")[1].split()[0], 16)
    assert caps == 0x20000420 or caps & (1 << 21) == 0, status  # the spec's three, no CAP_SYS_ADMIN
    assert_nothing_left(runc, bundle, name)


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


def test_a_failing_poststart_hook_fails_start(runc, bundle, recorder):
    """As runc: the hooks after the failing one do not run, the container is ended and start
    fails; poststop still runs them all at delete (test_runc_conformance.py has run's)."""
    name = cid()
    bundle.config["hooks"] = {"poststart": [{"path": "/bin/false"}, recorder("poststart")],
                              "poststop": [{"path": "/bin/false"}, recorder("poststop")]}
    bundle.set_args("sleep", "1000")
    assert runc("create", "--bundle", bundle.path, name).returncode == 0
    r = runc("start", name)
    assert r.returncode == 1 and "poststart hook 0" in r.stderr
    assert order(recorder) == []
    assert runc("delete", "--force", name).returncode == 0
    assert order(recorder) == ["poststop"]


@pytest.mark.parametrize("hooks, where", [
    ({"prestart": [{"path": "bin/true"}]}, "hooks.prestart[0].path"),
    ({"createRuntime": [{"path": "/bin/true", "timeout": 0}]}, "hooks.createRuntime[0].timeout"),
    ({"poststop": [{"path": "/bin/true"}, {"args": ["x"]}]}, "hooks.poststop[1].path"),
    ({"poststart": [{"path": "/bin/true", "env": [1]}]}, "hooks.poststart[0].env"),
    ({"createContainer": [{"path": "bin/true"}]}, "hooks.createContainer[0].path"),
    ({"startContainer": [{"path": "/bin/true", "timeout": -1}]}, "hooks.startContainer[0].timeout"),
    ({"prestop": [{"path": "/bin/true"}]}, "hooks.prestop"),
])
def test_invalid_hooks_are_refused(runc, bundle, hooks, where):
    name = cid()
    bundle.config["hooks"] = hooks
    bundle.set_args("true")
    assert where in create_fails(runc, bundle, name)


def test_features_lists_the_hooks_that_run(runc_bin):
    r = subprocess.run([runc_bin, "features"], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["hooks"] == ["prestart", "createRuntime", "createContainer", "startContainer",
                                             "poststart", "poststop"]
