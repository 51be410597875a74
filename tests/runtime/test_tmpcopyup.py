# SPDX-License-Identifier: MIT
"""A tmpfs with podman's `tmpcopyup` option starts as a copy of the image's directory it covers
(engine/sandbox-copyup.c), beyond what test_differential_config.py compares with runc: the kinds
runc 1.1 cannot copy (fifos, device nodes, sockets), the image left untouched by writes, a
destination the image lacks, a mount below the destination, the depth bound and its failure,
which must name the step and leave nothing behind. Run by ctest runtime-cli."""
import json
import os
import socket
import stat
import subprocess
import uuid

import pytest

from containertools import processes_naming

MAX_DEPTH = 64  # ZE_SB_COPYUP_MAX_DEPTH (engine/sandbox.h)


def cid():
    return "cu-" + uuid.uuid4().hex[:12]


def mounts_below(path):
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if path in l]


def copyup(bundle, dest="/data", options=("tmpcopyup",)):
    bundle.config["mounts"].append({"destination": dest, "type": "tmpfs", "source": "tmpfs",
                                    "options": list(options)})


def run(runc, bundle, script):
    bundle.set_args("sh", "-c", script)
    name = cid()
    r = runc("run", "--bundle", bundle.path, name)
    assert not os.path.exists(os.path.join(runc.root, name)), "state directory left behind"
    assert processes_naming(name) == [], "a process of the container is left"
    assert mounts_below(bundle.path) == [], "a mount is left"
    return r


@pytest.mark.timeout(60)
def test_special_files_are_made_and_the_image_is_untouched(runc, bundle, tmp_path):
    data = os.path.join(bundle.rootfs, "data")
    os.mkdir(data)
    os.mkfifo(os.path.join(data, "fifo"))
    os.chmod(os.path.join(data, "fifo"), 0o640)
    os.mknod(os.path.join(data, "null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    os.chmod(os.path.join(data, "null"), 0o620)
    # a socket file, bound by a short path (sun_path holds 108 bytes) and left behind
    cwd = os.getcwd()
    os.chdir(data)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind("sock")
        s.close()
    finally:
        os.chdir(cwd)
    with open(os.path.join(data, "f"), "w") as f:
        f.write("image\n")
    copyup(bundle)
    r = run(runc, bundle, "cd /data && for p in fifo null sock; do echo $p=$(stat -c '%F %a %t:%T' $p); done; "
                          "echo changed > f && touch new && cat f")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["fifo=fifo 640 0:0", "null=character special file 620 1:3",
                                     "sock=socket 755 0:0", "changed"], r.stdout
    # the writes went to the tmpfs, not to the image's directory
    assert sorted(os.listdir(data)) == ["f", "fifo", "null", "sock"]
    with open(os.path.join(data, "f")) as f:
        assert f.read() == "image\n"


@pytest.mark.timeout(60)
def test_destination_the_image_lacks_keeps_the_tmpfs_mode(runc, bundle):
    copyup(bundle, "/made/here")
    r = run(runc, bundle, "stat -c %a /made/here; ls -A /made/here | wc -l")
    assert r.returncode == 0, r.stderr
    # the tmpfs's default (runc's too); a directory of the image would give its own mode
    assert r.stdout.split() == ["1777", "0"]


@pytest.mark.timeout(60)
def test_a_mount_below_the_destination_is_copied_empty(runc, bundle):
    """procfs mounted inside the directory first: the copy makes its mount point, empty, and never
    reads /proc into the tmpfs."""
    os.makedirs(os.path.join(bundle.rootfs, "data", "keep"))
    bundle.config["mounts"].append({"destination": "/data/proc", "type": "proc", "source": "proc"})
    copyup(bundle)
    r = run(runc, bundle, "ls -A /data; ls -A /data/proc | wc -l; stat -f -c %T /data")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["keep", "proc", "0", "tmpfs"]


def nest(root, depth):
    path = root
    for i in range(depth):
        path = os.path.join(path, "d")
    os.makedirs(path)
    with open(os.path.join(path, "leaf"), "w") as f:
        f.write("deep\n")
    return "/".join(["d"] * depth)


@pytest.mark.timeout(60)
def test_depth_bound(runc, bundle):
    """As deep as the bound: copied. One more: create fails at step tmpcopyup with a message naming
    the mount and the bound, leaving no process, mount or state."""
    data = os.path.join(bundle.rootfs, "data")
    rel = nest(data, MAX_DEPTH)
    copyup(bundle)
    r = run(runc, bundle, f"cat /data/{rel}/leaf")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "deep\n"

    os.rename(os.path.join(data, "d"), os.path.join(data, "e"))
    os.mkdir(os.path.join(data, "d"))
    os.rename(os.path.join(data, "e"), os.path.join(data, "d", "d"))
    r = run(runc, bundle, "true")
    assert r.returncode != 0
    assert f"tmpcopyup of /data: the directory is more than {MAX_DEPTH} levels deep" in r.stderr, r.stderr
    with open(runc.log) as f:
        last = [json.loads(l) for l in f if l.strip()][-1]
    assert last["level"] == "error" and "tmpcopyup" in last["msg"]


@pytest.mark.timeout(60)
def test_copy_failure_is_named(runc, bundle):
    """A tmpfs too small for the directory: the copy's ENOSPC is reported as step tmpcopyup."""
    data = os.path.join(bundle.rootfs, "data")
    os.mkdir(data)
    with open(os.path.join(data, "big"), "wb") as f:
        f.write(b"\0" * (256 * 1024))
    copyup(bundle, options=("tmpcopyup", "size=64k"))
    r = run(runc, bundle, "true")
    assert r.returncode != 0
    assert "tmpcopyup of /data" in r.stderr and "no space left on device" in r.stderr.lower(), r.stderr


def test_features_lists_tmpcopyup(runc_bin):
    r = subprocess.run([runc_bin, "features"], capture_output=True, text=True, timeout=30, check=True)
    assert "tmpcopyup" in json.loads(r.stdout)["mountOptions"]
