# SPDX-License-Identifier: MIT
"""Runs argv[1:] under a seccomp filter that allows every system call but acct(2), as a
container manager's default filter confines its payload: no_new_privs, then the filter, then exec
(same pid). With --keep-privs (root, which needs no no_new_privs for a filter: systemd-nspawn's
and Docker's default filters come without it) the no_new_privs step is left out."""
import ctypes
import os
import struct
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
NR_ACCT = {"x86_64": 163, "aarch64": 89}[os.uname().machine]
EPERM = 1


def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


prog = b"".join([
    insn(0x20, 0, 0, 0),                        # ld [nr]
    insn(0x15, 0, 1, NR_ACCT),                  # jeq acct
    insn(0x06, 0, 0, SECCOMP_RET_ERRNO | EPERM),
    insn(0x06, 0, 0, SECCOMP_RET_ALLOW),
])
buf = ctypes.create_string_buffer(prog)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


fprog = SockFprog(len(prog) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
keep_privs = sys.argv[1] == "--keep-privs"
if keep_privs:
    del sys.argv[1]
elif libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    sys.exit(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit(f"prctl(SECCOMP): {os.strerror(ctypes.get_errno())}")
os.execv(sys.argv[1], sys.argv[1:])
