# SPDX-License-Identifier: MIT
"""zygote-runc against the classes of runc's CVEs, tried as an attacker would (issue #22):

- device nodes get the config's fileMode, whatever the caller's umask.
"""
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from conftest import BUILD_DIR, Runtime
from containertools import processes_naming

F_GET_SEALS = 1034
SEALS = 0x1 | 0x2 | 0x4 | 0x8  # F_SEAL_SEAL, SHRINK, GROW, WRITE


def cid():
    return "c-" + uuid.uuid4().hex[:12]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def wait_for(path, pred, timeout):
    """The content of path once pred(its lines) holds, or what is there after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                content = f.read()
        except FileNotFoundError:
            content = ""
        if pred(content.splitlines()) or time.monotonic() >= deadline:
            return content
        time.sleep(0.05)


def wait_for_line(path, text, timeout):
    return wait_for(path, lambda lines: text in lines, timeout)


def fields(out, name):
    """{key: value} of the line starting with name ("exe-path errno=13 size=-1")."""
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == name:
            return dict(w.split("=", 1) for w in words[1:] if "=" in w)
    raise AssertionError(f"no {name} line in {out!r}")


@pytest.fixture
def attacker(bundle):
    a = os.path.join(BUILD_DIR, "runc-attacker-static")
    if not os.access(a, os.X_OK):
        pytest.fail(f"not built: {a}")
    shutil.copy(a, os.path.join(bundle.rootfs, "bin", "runc-attacker"))
    # writable, so that a detached attacker leaves its report in the rootfs for the test
    bundle.config["root"]["readonly"] = False
    bundle.save()
    return bundle


@pytest.fixture
def runc_copy(runc_bin, tmp_path, needs_root):
    """zygote-runc run from a copy: the file an attack would overwrite is the test's own."""
    d = tmp_path / "host-bin"
    d.mkdir()
    binary = str(d / "zygote-runc")
    shutil.copy(runc_bin, binary)
    rt = Runtime(binary, str(tmp_path / "state"), str(tmp_path / "log.json"))
    yield rt
    # by the build's binary: the copy may be what an attack overwrote
    cleaner = Runtime(runc_bin, rt.root, rt.log)
    if os.path.isdir(rt.root):
        for name in os.listdir(rt.root):
            cleaner("delete", "--force", name)


# ---- device nodes: the config's mode, not the caller's umask's ------------------------------------

def test_device_modes_ignore_the_callers_umask(runc, bundle):
    devices = {"/dev/zyg-660": 0o660, "/dev/zyg-666": 0o666, "/dev/zyg-600": 0o600, "/dev/zyg-640": 0o640}
    bundle.config["linux"]["devices"] = [{"path": p, "type": "c", "major": 1, "minor": 3, "fileMode": m,
                                          "uid": 0, "gid": 0} for p, m in devices.items()]
    bundle.set_args("sh", "-c", "stat -c '%n %a' /dev/zyg-* /dev/null /dev/zero /dev/tty")
    for umask in (0o027, 0o077, 0o022):
        r = runc("run", "--bundle", bundle.path, cid(), preexec_fn=lambda: os.umask(umask))
        assert r.returncode == 0, r.stderr
        got = dict(line.split() for line in r.stdout.splitlines())
        for p, m in devices.items():
            assert got[p] == f"{m:o}", (oct(umask), p, r.stdout)
        for p in ("/dev/null", "/dev/zero", "/dev/tty"):
            assert got[p] == "666", (oct(umask), p, r.stdout)
