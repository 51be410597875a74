#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of fuzz-protocol and fuzz-fds (tests/fuzz/corpus/{protocol,fds}).

The seeds are checked in; this script says how they were made and makes them again:
    /usr/bin/python3 tests/fuzz/make-seeds.py
Each protocol seed is one connection: a header byte (see fuzz-protocol.c) and NUL-terminated
messages. Each fds seed is a script of records (see fuzz-fds.c).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
L = "io.zygote.Launcher."

ROOT, NOBODY, OTHER, DAEMON_UID = 0, 1, 2, 3
UNPRIVILEGED, FDS, SHUT_RD, EXIT_ALL = 4, 8, 16, 32


def m(method, parameters=None, more=False):
    o = {"method": method}
    if parameters is not None:
        o["parameters"] = parameters
    if more:
        o["more"] = True
    return json.dumps(o, separators=(",", ":")).encode() + b"\0"


STD3 = [{"fd": 0, "target": 0}, {"fd": 1, "target": 1}, {"fd": 2, "target": 2}]

PROTOCOL = {
    "get-info": (ROOT, m("org.varlink.service.GetInfo") +
                 m("org.varlink.service.GetInterfaceDescription", {"interface": L[:-1]})),
    "status-profiles": (NOBODY, m(L + "GetStatus") + m(L + "ListProfiles") + m(L + "List")),
    "spawn-more-exits": (ROOT, m(L + "Spawn", {"argv": ["true"]}, more=True) + m(L + "List")),
    "spawn-runs-wait-kill": (NOBODY | EXIT_ALL, m(L + "Spawn", {"argv": ["/bin/run"], "id": "a"}) +
                             m(L + "State", {"id": "a"}) + m(L + "Pids", {"id": "a"}) +
                             m(L + "Kill", {"id": "a", "signal": 15, "all": True}) +
                             m(L + "Wait", {"id": "a"}, more=True) + m(L + "Delete", {"id": "a"})),
    "spawn-fail": (OTHER, m(L + "Spawn", {"argv": ["fail"], "cwd": "/tmp"}) + m(L + "List")),
    "hold-start": (ROOT, m(L + "Spawn", {"argv": ["run"], "hold": True, "id": "h"}, more=True)),
    "hold-start-2": (ROOT, m(L + "Spawn", {"argv": ["run"], "hold": True, "id": "h"}) +
                     m(L + "State", {"id": "h"}) + m(L + "Start", {"id": "h"}) + m(L + "Start", {"id": "h"}) +
                     m(L + "CloseIO", {"id": "h"})),
    "hold-delete": (NOBODY, m(L + "Spawn", {"argv": ["run"], "hold": True, "id": "h"}) +
                    m(L + "Delete", {"id": "h"}) + m(L + "State", {"id": "h"})),
    "spawn-fds": (ROOT | FDS, m(L + "Spawn", {"argv": ["exit"], "fds": STD3 + [{"fd": 2, "target": 1023}],
                                             "env": ["PATH=/bin", "A=b"], "cwd": "/", "dropCapabilities": ["CAP_KILL"]},
                                more=True)),
    "spawn-terminal": (NOBODY | FDS, m(L + "Spawn", {"argv": ["run"], "terminal": True, "fds": STD3})),
    "spawn-user-group": (ROOT, m(L + "Spawn", {"argv": ["true"], "user": "nobody", "group": "4242"}) +
                         m(L + "Spawn", {"argv": ["true"], "user": "65534"})),
    "nonroot-asks-root": (NOBODY, m(L + "Spawn", {"argv": ["true"], "user": "0"}) +
                          m(L + "Spawn", {"argv": ["true"], "user": "65534", "group": "4242"}) +
                          m(L + "Spawn", {"argv": ["true"], "group": "0"}) + m(L + "ReloadProfiles")),
    "access-list": (OTHER, m(L + "Spawn", {"argv": ["true"], "profile": "limited"}) +
                    m(L + "Spawn", {"argv": ["true"], "profile": "nonet"})),
    "access-list-nobody": (NOBODY, m(L + "Spawn", {"argv": ["true"], "profile": "limited"}, more=True)),
    "unprivileged": (DAEMON_UID | UNPRIVILEGED, m(L + "Spawn", {"argv": ["true"]}, more=True) +
                     m(L + "Spawn", {"argv": ["true"], "user": "root"})),
    "unprivileged-stranger": (NOBODY | UNPRIVILEGED, m(L + "Spawn", {"argv": ["true"]})),
    "events": (NOBODY | EXIT_ALL, m(L + "Events", more=True)),
    "events-then-spawn": (ROOT, m(L + "Spawn", {"argv": ["run"], "id": "e"}) + m(L + "Events", more=True)),
    "reload": (ROOT, m(L + "ReloadProfiles") + m(L + "GetStatus")),
    "bad-params": (NOBODY, m(L + "Spawn", {"argv": "true"}) + m(L + "Spawn", {"argv": ["tr\u0000ue"]}) +
                   m(L + "Kill", {"id": "x", "signal": 100000}) + m(L + "Wait", {"id": None}) +
                   m(L + "Spawn", {"argv": ["true"], "env": ["NOEQ"]}) + m(L + "Spawn", {"argv": ["true"], "id": "../x"})),
    "malformed": (ROOT, b'{"method":' + b"\0" + b"[1,2]\0" + b"\0" + b'"x"\0' + b'{"method":"' + L.encode() + b'X\xc0\xaf"}\0'),
    "strings": (NOBODY, m(L + "GetStatus\u0000x") + m(L + "Wait", {"id": "a\u0000b"}) +
                b'{"method":"' + L.encode() + b'GetStatus","method\\u0000":"x"}\0' +
                b'{"method":"' + L.encode() + b'X\xed\xa0\x80"}\0' + b'{"method":"' + L.encode() + b'X\\ud800"}\0' +
                b'{"method":"' + L.encode() + b'Wait","parameters":{"id":"\x01"}}\0'),
    "argv-bytes": (NOBODY, m(L + "Spawn", {"argv": ["run", "\u0001" * 8000], "hold": True}) + m(L + "List")),
    "shut-rd": (NOBODY | SHUT_RD, m(L + "Spawn", {"argv": ["true"]}) + m(L + "GetStatus")),
    "partial": (ROOT, b'{"method":"io.zygote.Launcher.GetSt'),
    "oversize": (ROOT, b'{"method":"' + b"x" * 65600 + b'"}\0'),
    "deep": (ROOT, b'{"method":"io.zygote.Launcher.GetStatus","parameters":' + b"[" * 40 + b"]" * 40 + b"}\0"),
    "get-filter": (NOBODY, m(L + "GetFilter", {"seccomp": {
        "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38, "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
                     {"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                      "args": [{"index": 1, "value": 21505, "op": "SCMP_CMP_EQ"}]}]}}) +
                   m(L + "GetFilter", {"profile": "default"}) + m(L + "GetFilter", {"seccomp": {"seccomp": "x"}})),
    "pipeline": (NOBODY | EXIT_ALL, m(L + "Spawn", {"argv": ["run"], "id": "p"}) +
                 m(L + "Wait", {"id": "p"}) + m(L + "Delete", {"id": "p"}) + m(L + "GetStatus")),
}

# fuzz-fds records: [op][a][b]; op & 7 the action, op >> 3 the fd kind (see fuzz-fds.c).
CANNED = {"spawn3": 0, "spawn1023": 1, "terminal": 2, "hold": 3, "fail": 4, "limited": 5, "start": 6,
          "delete": 7, "wait": 8, "kill": 9, "status": 10, "events": 11, "malformed": 12, "partial": 13}


def rec(op, kind=0, a=0, b=0):
    return bytes([(op & 7) | (kind << 3), a, b])


FDS_SEEDS = {
    "spawn-std3": bytes([ROOT]) + rec(0, 0, CANNED["spawn3"], 3) + rec(4),
    "spawn-pipes": bytes([NOBODY]) + rec(0, 1, CANNED["spawn3"], 3) + rec(4) + rec(7) + rec(4),
    "spawn-1023": bytes([ROOT]) + rec(0, 0, CANNED["spawn1023"], 64) + rec(4),
    "terminal-dir": bytes([NOBODY]) + rec(0, 3, CANNED["terminal"], 1) + rec(4),
    "terminal-devnull": bytes([ROOT]) + rec(0, 0, CANNED["terminal"], 1) + rec(4),
    "hold-start": bytes([ROOT]) + rec(0, 2, CANNED["hold"], 2) + rec(4) + rec(0, 0, CANNED["start"], 0) + rec(4),
    "hold-delete": bytes([ROOT]) + rec(0, 5, CANNED["hold"], 2) + rec(4) + rec(0, 0, CANNED["delete"], 0),
    "split-fds": bytes([ROOT]) + rec(1, 4, CANNED["spawn3"], 2) + rec(4),
    "split-over-limit": bytes([NOBODY]) + rec(1, 0, CANNED["spawn3"], 40) + rec(4),
    "flood": bytes([ROOT]) + rec(5, 0, CANNED["status"], 136) + rec(4),
    "fds-on-status": bytes([OTHER]) + rec(0, 6, CANNED["status"], 2) + rec(4),
    "fds-on-malformed": bytes([ROOT]) + rec(0, 0, CANNED["malformed"], 5) + rec(4),
    "fds-on-partial": bytes([ROOT]) + rec(0, 7, CANNED["partial"], 9) + rec(4),
    "creds": bytes([NOBODY]) + rec(3, 0, CANNED["spawn3"], 3) + rec(4),
    "own-socket": bytes([ROOT]) + rec(0, 7, CANNED["spawn3"], 3) + rec(4),
    "raw": bytes([ROOT]) + rec(2, 0, 20, 1) + b'{"method":"x"}\0' + b"\0" * 5 + rec(4),
    "shut-rd": bytes([ROOT]) + rec(0, 0, CANNED["spawn3"], 3) + rec(6) + rec(4),
    "limited-profile": bytes([NOBODY]) + rec(0, 0, CANNED["limited"], 1) + rec(4) + rec(7) + rec(4),
    "unprivileged": bytes([DAEMON_UID | UNPRIVILEGED]) + rec(0, 1, CANNED["spawn3"], 3) + rec(4),
}


def write(kind, seeds):
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    write("protocol", {n: bytes([h]) + body for n, (h, body) in PROTOCOL.items()})
    write("fds", FDS_SEEDS)


if __name__ == "__main__":
    main()
