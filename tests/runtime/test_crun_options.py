# SPDX-License-Identifier: MIT
"""crun's options that zygote-runc takes as crun does (crun 1.8.1's suite tests them).

--config FILE: create reads FILE instead of the bundle's config.json and keeps a copy in the state
directory, which exec reads too: both see one container whatever becomes of either file later.
run.oci.keep_original_groups (an annotation): the process keeps the supplementary groups of the
runtime, its caller's, instead of the config's additionalGids; nothing beyond them."""
import json
import os
import subprocess
import uuid

import pytest


def cid():
    return "o-" + uuid.uuid4().hex[:12]


# ---- --config -----------------------------------------------------------------------------------

def write_alt(bundle, value, name="alt.json"):
    conf = json.loads(json.dumps(bundle.config))
    conf["process"]["env"] = [e for e in conf["process"]["env"] if not e.startswith("X=")] + [f"X={value}"]
    conf["process"]["args"] = ["sleep", "1000"]
    path = os.path.join(bundle.path, "conf", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(conf, f)
    return path


def test_config_create_and_exec_read_the_same(runc, bundle):
    bundle.config["process"]["env"].append("X=bundle")
    bundle.set_args("sleep", "1000")
    write_alt(bundle, "alt")
    name = cid()
    # relative to the working directory, as crun takes it
    r = runc("create", "--config", "conf/alt.json", "--bundle", bundle.path, name, cwd=bundle.path,
             stdout=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert runc("start", name).returncode == 0
    # the file changed, and the bundle's says otherwise: exec sees create's
    write_alt(bundle, "changed")
    r = runc("exec", name, "sh", "-c", 'echo "X=$X"; cat /proc/1/cmdline | tr "\\0" " "')
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "X=alt"
    assert r.stdout.split("\n")[1].strip() == "sleep 1000"
    assert runc("delete", "--force", name).returncode == 0


def test_config_the_bundles_own(runc, bundle):
    """--config config.json is the bundle's, wherever the runtime runs."""
    bundle.set_args("echo", "bundle's")
    r = runc("run", "--config", "config.json", "--bundle", bundle.path, cid(), cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "bundle's\n"


def test_config_missing(runc, bundle):
    r = runc("run", "--config", "/nonexistent/alt.json", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "--config" in r.stderr


# ---- run.oci.keep_original_groups ---------------------------------------------------------------

def groups_in_container(runc, bundle, annotation, extra=None):
    if annotation is not None:
        bundle.config["annotations"] = {"run.oci.keep_original_groups": annotation}
    if extra is not None:
        bundle.config["process"]["user"]["additionalGids"] = extra
    bundle.set_args("sh", "-c", "grep ^Groups: /proc/self/status")
    r = runc("run", "--bundle", bundle.path, cid(), preexec_fn=lambda: os.setgroups([1, 2, 3]))
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[1:]


def test_keep_groups(runc, bundle):
    assert groups_in_container(runc, bundle, "1", extra=[7]) == ["1", "2", "3"]


def test_keep_groups_zero_is_no(runc, bundle):
    assert groups_in_container(runc, bundle, "0", extra=[7]) == ["7"]


def test_groups_without_the_annotation(runc, bundle):
    """The runtime's groups never reach the process unless the annotation asks."""
    assert groups_in_container(runc, bundle, None, extra=[7]) == ["7"]
    assert groups_in_container(runc, bundle, None, extra=[]) == []


def test_keep_groups_in_a_user_namespace(runc, bundle):
    """In a user namespace the kept groups are the runtime's still, none of them mapped: they show
    as the overflow gid, and the process gains no group of the namespace's."""
    r = subprocess.run(["unshare", "-U", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"this process may not create a user namespace: {r.stderr.decode().strip()}")
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    bundle.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    with open("/proc/sys/kernel/overflowgid") as f:
        overflow = f.read().strip()
    assert groups_in_container(runc, bundle, "1") == [overflow] * 3


def test_keep_groups_refused_by_zygoted(daemon, bundle):
    """zygoted's worker holds the daemon's groups, not its caller's: the annotation is refused
    there rather than give a container the daemon's groups."""
    bundle.config["annotations"] = {"run.oci.keep_original_groups": "1"}
    bundle.set_args("true")
    fd = os.open(bundle.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with daemon.connect() as c:
            e = c.call("io.zygote.Launcher.CreateContainer", {"id": cid(), "bundle": 0}, fds=[fd], check=False)
    finally:
        os.close(fd)
    assert e.error == "io.zygote.Launcher.SpawnFailed", e
    assert "keep_original_groups" in e.parameters["message"], e
