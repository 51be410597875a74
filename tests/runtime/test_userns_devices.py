# SPDX-License-Identifier: MIT
"""linux.devices in a container with a user namespace of its own (container/devices-premade.c):
the kernel refuses mknod there, so a runtime that may make nodes (root of the initial user
namespace) makes them itself and hands each over as a mount: the container gets the node the
config names, with its type, number, mode and owner, even where the host has no node of that path,
and no other node; the device cgroup still decides what it may open. As crun does (crun 1.8.1's
test_devices.py owner-device)."""
import os
import subprocess
import uuid

import pytest

FULL = [{"containerID": 0, "hostID": 0, "size": 4294967295}]
SHIFTED = [{"containerID": 0, "hostID": 200000, "size": 65536}]


def cid():
    return "d-" + uuid.uuid4().hex[:12]


def needs_user_namespaces():
    r = subprocess.run(["unshare", "-U", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"this process may not create a user namespace: {r.stderr.decode().strip()}")


def in_userns(bundle, mapping, devices, script):
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["linux"]["uidMappings"] = mapping
    bundle.config["linux"]["gidMappings"] = mapping
    bundle.config["linux"]["devices"] = devices
    bundle.set_args("sh", "-c", script)


@pytest.mark.parametrize("mapping", [FULL, SHIFTED], ids=["full", "shifted"])
def test_device_the_host_lacks(runc, bundle, mapping):
    """A block 1:5 node at /dev/zygote-foo (no host has one): made with the config's owner, as
    the container sees it, and mode."""
    needs_user_namespaces()
    assert not os.path.exists("/dev/zygote-foo")
    in_userns(bundle, mapping, [{"path": "/dev/zygote-foo", "type": "b", "major": 1, "minor": 5,
                                 "fileMode": 0o640, "uid": 10, "gid": 11}],
              "stat -c '%t:%T %F %u:%g %a' /dev/zygote-foo")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1:5 block special file 10:11 640"


def test_only_the_nodes_asked_for(runc, bundle):
    """/dev holds the default nodes and the config's, no other of the host's."""
    needs_user_namespaces()
    in_userns(bundle, SHIFTED, [{"path": "/dev/zygote-foo", "type": "c", "major": 1, "minor": 7}],
              "for f in /dev/*; do [ -L $f ] || ! [ -c $f -o -b $f ] || echo ${f#/dev/}; done")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == sorted(["full", "null", "random", "tty", "urandom", "zero", "zygote-foo"])


def test_device_cgroup_still_decides(runc, bundle):
    """A node the config makes but its device rules do not allow (kmsg, char 1:11) cannot be
    opened; /dev/null can."""
    needs_user_namespaces()
    in_userns(bundle, FULL, [{"path": "/dev/zygote-kmsg", "type": "c", "major": 1, "minor": 11}],
              "echo x > /dev/zygote-kmsg && echo opened; echo x > /dev/null && echo null-ok; true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    assert "opened" not in r.stdout and "null-ok" in r.stdout
    assert os.strerror(1) in r.stdout + r.stderr


def test_exec_sees_the_nodes(runc, bundle):
    needs_user_namespaces()
    in_userns(bundle, SHIFTED, [{"path": "/dev/zygote-foo", "type": "b", "major": 1, "minor": 5, "uid": 3}],
              "exec sleep 1000")
    name = cid()
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    r = runc("exec", name, "stat", "-c", "%t:%T %u", "/dev/zygote-foo")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1:5 3"
    assert runc("delete", "--force", name).returncode == 0


# ---- the fallback: a runtime that may not make nodes binds the host's ----------------------------

AUDIT_ARCH_X86_64 = 0xC000003E
NR_MKNOD, NR_MKNODAT = 133, 259  # x86_64


def no_mknod():
    """preexec_fn: a filter answering EPERM to mknod and mknodat, as to a runtime without
    CAP_MKNOD in the initial user namespace (the container inherits it: its init binds anyway)."""
    import ctypes
    import struct

    def insn(code, jt, jf, k):
        return struct.pack("HBBI", code, jt, jf, k)

    prog = b"".join([
        insn(0x20, 0, 0, 4),                  # ld [arch]
        insn(0x15, 1, 0, AUDIT_ARCH_X86_64),  # jeq x86_64: on
        insn(0x06, 0, 0, 0x7FFF0000),         # allow
        insn(0x20, 0, 0, 0),                  # ld [nr]
        insn(0x15, 1, 0, NR_MKNOD),
        insn(0x15, 0, 1, NR_MKNODAT),
        insn(0x06, 0, 0, 0x00050000 | 1),     # errno EPERM
        insn(0x06, 0, 0, 0x7FFF0000),         # allow
    ])
    buf = ctypes.create_string_buffer(prog)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog) // 8, ctypes.addressof(buf))
    if ctypes.CDLL(None, use_errno=True).prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def test_fallback_binds_the_hosts_node(runc, bundle):
    needs_user_namespaces()
    if os.uname().machine != "x86_64":
        pytest.skip("the test's filter is written for x86_64's system call numbers")
    in_userns(bundle, SHIFTED, [{"path": "/dev/full", "type": "c", "major": 1, "minor": 7}],
              "stat -c '%t:%T' /dev/full")
    r = runc("run", "--bundle", bundle.path, cid(), preexec_fn=no_mknod)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1:7"
    # where the host has no node of that path, nothing can be bound: refused by name
    bundle.config["linux"]["devices"] = [{"path": "/dev/zygote-foo", "type": "b", "major": 1, "minor": 5}]
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, cid(), preexec_fn=no_mknod)
    assert r.returncode != 0 and "device" in r.stderr
