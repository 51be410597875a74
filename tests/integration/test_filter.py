# SPDX-License-Identifier: MIT
"""GetFilter against the real zygoted: a compiled seccomp program as a sealed memfd, compiled
once per distinct OCI seccomp object, with per-user limits that protect root's entries and the
daemon's time, and errors that name the bad field."""
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import struct

import pytest

import zytest
from varlink import VarlinkError
from zytest import OTHER_UID, OTHER_GID

L = "io.zygote.Launcher."
PODMAN_PROFILE = "/usr/share/containers/seccomp.json"
F_GET_SEALS = 1034
F_ADD_SEALS = 1033
F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE = 1, 2, 4, 8
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SYS_seccomp = 317
SYS_getppid = 110

if os.uname().machine != "x86_64":
    pytest.skip("the syscall numbers below are x86_64's", allow_module_level=True)


def small(n=0, errno_ret=99):
    """A tiny object: getppid answers errno_ret; n only makes the content (the key) distinct."""
    return {"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["getppid"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno_ret},
                         {"names": ["getpid"], "action": "SCMP_ACT_ALLOW", "comment": f"variant {n}"}]}


def get_filter(conn, **params):
    """GetFilter; returns (parameters, the memfd)."""
    r = conn.call(L + "GetFilter", params)
    assert len(r.fds) == 1, f"GetFilter sent {len(r.fds)} fds"
    return r.parameters, r.fds[0]


def read_program(fd, instructions):
    data = os.pread(fd, instructions * 8 + 1, 0)
    assert len(data) == instructions * 8
    return data


def run_with_filter(program, flags):
    """Loads program in a child and calls getppid there: the child's exit status is the errno
    getppid failed with (0: it succeeded)."""
    pid = os.fork()
    if pid == 0:
        code = 100
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            buf = ctypes.create_string_buffer(program, len(program))

            class Fprog(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            prog = Fprog(len(program) // 8, ctypes.addressof(buf))
            if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                os._exit(101)
            if libc.syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(prog)) != 0:
                os._exit(102)
            r = libc.syscall(SYS_getppid)
            code = ctypes.get_errno() if r < 0 else 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    return os.WEXITSTATUS(status)


def test_compiled_once_and_the_program_works(daemon):
    with daemon.connect() as c:
        p1, fd1 = get_filter(c, seccomp=small())
        p2, fd2 = get_filter(c, seccomp=small())
        p3, fd3 = get_filter(c, seccomp=small(errno_ret=98))
    try:
        assert p1["cached"] is False and p2["cached"] is True, (p1, p2)
        assert p1["key"] == p2["key"] and p1["hash"] == p2["hash"]
        assert p3["key"] != p1["key"] and p3["hash"] != p1["hash"]
        assert len(p1["key"]) == 64 and len(p1["hash"]) == 64
        # The key is the SHA-256 of json-c's plain serialization: for this object (no '/', which
        # json-c escapes) the same text as Python's compact one, keys in the order sent.
        text = json.dumps(small(), separators=(",", ":")).encode()
        assert p1["key"] == hashlib.sha256(text).hexdigest()
        prog = read_program(fd1, p1["instructions"])
        assert read_program(fd2, p2["instructions"]) == prog
        # A fresh memfd per reply: no shared offset, no shared file.
        assert os.fstat(fd1).st_ino != os.fstat(fd2).st_ino
        # The program is the one the object says, checked by the kernel.
        assert run_with_filter(prog, p1["flags"]) == 99
        assert run_with_filter(read_program(fd3, p3["instructions"]), p3["flags"]) == 98
    finally:
        for fd in (fd1, fd2, fd3):
            os.close(fd)


def test_podman_profile_cache_hit(daemon):
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"{PODMAN_PROFILE} missing (golang-github-containers-common)")
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    with daemon.connect() as c:
        p1, fd1 = get_filter(c, seccomp=profile)
        p2, fd2 = get_filter(c, seccomp=profile)
    try:
        assert (p1["cached"], p2["cached"]) == (False, True)
        assert p1["instructions"] > 100
        assert read_program(fd1, p1["instructions"]) == read_program(fd2, p2["instructions"])
    finally:
        os.close(fd1)
        os.close(fd2)


def test_profile_by_name(daemon):
    info = daemon.profiles()["default"]
    with daemon.connect() as c:
        p, fd = get_filter(c, profile="default")
        os.close(fd)
        e = c.call_error(L + "GetFilter", {"profile": "no-such"})
    assert p["hash"] == info["hash"] and p["instructions"] == info["bpfInstructions"]
    assert e.error == L + "NoSuchProfile" and e.parameters["profile"] == "no-such"


def test_sealed_memfd_cannot_be_changed(daemon):
    with daemon.connect() as c:
        p, fd = get_filter(c, seccomp=small())
    try:
        seals = fcntl.fcntl(fd, F_GET_SEALS)
        assert seals == F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, hex(seals)
        before = read_program(fd, p["instructions"])
        # Not through this fd, nor through a new writable open of the same file.
        for attempt in (lambda: os.pwrite(fd, b"\0" * 8, 0), lambda: os.ftruncate(fd, 0),
                        lambda: os.ftruncate(fd, 1 << 20), lambda: fcntl.fcntl(fd, F_ADD_SEALS, 0)):
            with pytest.raises(PermissionError):
                attempt()
        w = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)
        try:
            with pytest.raises(PermissionError):
                os.write(w, b"\0" * 8)
        finally:
            os.close(w)
        import mmap
        with pytest.raises(PermissionError):
            mmap.mmap(fd, 8, mmap.MAP_SHARED, mmap.PROT_WRITE)
        assert read_program(fd, p["instructions"]) == before
        assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        os.close(fd)


@pytest.mark.parametrize("obj, field, words", [
    ({"defaultAction": "SCMP_ACT_FOO"}, "seccomp.defaultAction", "unknown action"),
    ({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["getpid"], "action": "SCMP_ACT_ALLOW"},
                                                      {"names": ["read"], "action": 7}]},
     "seccomp.syscalls[1].action", ""),
    ({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                                       "args": [{"index": 9, "value": 1, "op": "SCMP_CMP_EQ"}]}]},
     "seccomp.syscalls[0].args[0].index", ""),
    ({"defaultAction": "SCMP_ACT_ALLOW", "bogus": 1}, "seccomp", "bogus"),
    # zygote's own profile format names a file to read: root's daemon must not open one for anyone
    ({"seccomp": "/etc/shadow"}, "seccomp.defaultAction", "missing"),
    ({"name": "x", "seccomp": {"defaultAction": "SCMP_ACT_ALLOW"}}, "seccomp.defaultAction", "missing"),
    ({"defaultAction": None, "syscalls": []}, "seccomp.defaultAction", "missing"),
])
def test_bad_object_names_the_field(daemon, obj, field, words):
    with daemon.connect() as c:
        e = c.call_error(L + "GetFilter", {"seccomp": obj})
        assert e.error == "org.varlink.service.InvalidParameter", dict(e)
        assert e.parameters["parameter"] == field, dict(e)
        assert words in e.parameters["message"], dict(e)
        # The daemon goes on serving this connection.
        p, fd = get_filter(c, seccomp=small())
        os.close(fd)


@pytest.mark.parametrize("params, parameter", [
    ({}, "profile"),
    ({"profile": "default", "seccomp": {"defaultAction": "SCMP_ACT_ALLOW"}}, "seccomp"),
    ({"seccomp": "not an object"}, "seccomp"),
    ({"seccomp": {"defaultAction": "SCMP_ACT_ALLOW"}, "extra": 1}, "extra"),
])
def test_bad_parameters(daemon, params, parameter):
    with daemon.connect() as c:
        e = c.call_error(L + "GetFilter", params)
    assert e.error == "org.varlink.service.InvalidParameter" and e.parameters["parameter"] == parameter, dict(e)


def test_per_user_cache_limit(daemon):
    """A non-root uid owns at most 16 cached programs: the 17th pushes out its least recently
    used; root's and another user's stay."""
    with daemon.connect() as root:
        _, fd = get_filter(root, seccomp=small(1000))
        os.close(fd)
    with daemon.connect_as(OTHER_UID, OTHER_GID) as c:
        for i in range(17):
            p, fd = get_filter(c, seccomp=small(i))
            os.close(fd)
            assert p["cached"] is False
        p, fd = get_filter(c, seccomp=small(16))
        os.close(fd)
        assert p["cached"] is True
        p, fd = get_filter(c, seccomp=small(0))  # pushed out by the 17th
        os.close(fd)
        assert p["cached"] is False
    with daemon.connect() as root:
        p, fd = get_filter(root, seccomp=small(1000))
        os.close(fd)
        assert p["cached"] is True


def test_user_cannot_evict_roots_entries(daemon):
    """Root fills the whole cache (256); a user's programs are then answered but not kept, and
    every one of root's stays."""
    with daemon.connect() as root:
        for i in range(256):
            p, fd = get_filter(root, seccomp=small(10000 + i))
            os.close(fd)
            assert p["cached"] is False
    with daemon.connect_as(OTHER_UID, OTHER_GID) as c:
        for i in range(20):
            p, fd = get_filter(c, seccomp=small(i))
            os.close(fd)
        p, fd = get_filter(c, seccomp=small(0))
        os.close(fd)
        assert p["cached"] is False, "a user's program took a slot of root's"
        # A user may use root's entries (a hit is free), which leaves them root's.
        p, fd = get_filter(c, seccomp=small(10000))
        os.close(fd)
        assert p["cached"] is True
    with daemon.connect() as root:
        for i in range(256):
            p, fd = get_filter(root, seccomp=small(10000 + i))
            os.close(fd)
            assert p["cached"] is True, f"root's entry {i} was pushed out"


def test_compile_time_budget_per_user(daemon):
    """A non-root uid that keeps sending new content runs out of compile time; asking by key
    stays free, while an object, even one cached, is refused before it is hashed (the key is
    what a client asks first); root and other users go on."""
    if not os.path.exists(PODMAN_PROFILE):
        pytest.skip(f"{PODMAN_PROFILE} missing: a small object compiles too fast to spend 1 s in few calls")
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    last = None
    with daemon.connect_as(OTHER_UID, OTHER_GID) as c:
        for i in range(400):
            profile["syscalls"][0]["comment"] = f"variant {i}"  # new content, same work
            try:
                p_last, fd = get_filter(c, seccomp=profile)
                os.close(fd)
                last = json.loads(json.dumps(profile))
            except VarlinkError as e:
                assert e.error == L + "LimitExceeded", e.reply
                assert e.parameters == {"limit": "compile_time_per_user", "max": 1000}, e.reply
                break
        else:
            pytest.fail("400 distinct compiles and no compile_time_per_user")
        assert last is not None, "refused before the first compile"
        e = c.call_error(L + "GetFilter", {"seccomp": last})  # not even hashed
        assert e.parameters == {"limit": "compile_time_per_user", "max": 1000}, e.reply
        p, fd = get_filter(c, key=p_last["key"])  # a hit by key costs nothing
        os.close(fd)
        assert p["cached"] is True
    with daemon.connect() as root:
        _, fd = get_filter(root, seccomp=small(1))
        os.close(fd)
    with daemon.connect_as(OTHER_UID + 1, OTHER_GID) as other:
        _, fd = get_filter(other, seccomp=small(2))
        os.close(fd)
