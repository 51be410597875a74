# SPDX-License-Identifier: MIT
"""Load: 100,000 spawns of /bin/true from 16 concurrent clients (Spawn with "more": one
round trip per task, the task forgotten at its exit), by tests/load/zygote-load.c.

Every spawn is accounted for with its exit status; afterwards no zombie is left, the task table
is empty, and the daemon's open fd count and RSS are what they were after the warm-up (both
printed, with the spawn rate). ZYGOTE_LOAD_SPAWNS sets the number of spawns (the sanitizer lane
runs fewer: ASan makes each spawn slower); ZYGOTE_LOAD_CLIENTS the number of clients.
"""
import json
import os
import subprocess
import time

import pytest

import zytest
from test_faults import no_zombies
from hostile import fds_back_to, served, settled_fds

L = "io.zygote.Launcher."

SPAWNS = int(os.environ.get("ZYGOTE_LOAD_SPAWNS", "100000"))
CLIENTS = int(os.environ.get("ZYGOTE_LOAD_CLIENTS", "16"))
# RSS may move by a few pages (malloc keeps freed memory in its arenas); more is a leak.
RSS_SLACK_KIB = 1024


def sanitized(d):
    """Whether this zygoted is an ASan build (its RSS then holds ASan's quarantine of freed
    memory, and LeakSanitizer checks for leaks when it exits)."""
    with open(f"/proc/{d.proc.pid}/maps") as f:
        return "libasan" in f.read()


def rss_kib(d):
    return int(zytest.proc_status(d.proc.pid)["VmRSS"].split()[0])


def load(bins, d, n, timeout):
    tool = os.path.join(bins["build"], "zygote-load")
    if not os.access(tool, os.X_OK):
        pytest.fail(f"not built: {tool}")
    p = subprocess.run([tool, "--socket", d.socket, "--clients", str(CLIENTS), "--spawns", str(n)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    assert p.stdout, f"zygote-load said nothing: {p.stderr.decode(errors='replace')}"
    r = json.loads(p.stdout)
    assert r["done"] == n and r["exit0"] == n and r["errors"] == 0, \
        f"{r['errors']} errors (the first: {r.get('first_error')!r}), {r['done']} of {n} done; {r}; daemon log ends: " \
        f"{d.log()[-800:]}"
    assert p.returncode == 0, r
    return r


# 100,000 spawns take minutes on a small machine, more on a loaded one (docs/BENCHMARKS.md): the
# test's own bound is the ctest entry's (2400 s), not the 120 s default of tests/pytest.ini.
@pytest.mark.timeout(2300)
def test_load(daemon, bins, capsys):
    d = daemon
    warm = max(SPAWNS // 50, 200)
    load(bins, d, warm, timeout=600)
    no_zombies(d)
    fds_warm = settled_fds(d)
    rss_warm = rss_kib(d)

    t0 = time.monotonic()
    r = load(bins, d, SPAWNS, timeout=3600)
    elapsed = time.monotonic() - t0

    no_zombies(d)
    assert d.status()["tasks"] == 0, "tasks left in the table after their final replies"
    fds_back_to(d, fds_warm, "after the load")
    fds_end = settled_fds(d)
    rss_end = rss_kib(d)
    asan = sanitized(d)
    with capsys.disabled():
        print(f"\n  [load] {SPAWNS} spawns of /bin/true from {CLIENTS} clients in {elapsed:.1f} s: "
              f"{r['rate']:.0f} spawns/s, every one exit 0; daemon fds {len(fds_warm)} after warm-up "
              f"({warm} spawns), {len(fds_end)} at the end; RSS {rss_warm} KiB after warm-up, "
              f"{rss_end} KiB at the end{' (ASan: quarantine included)' if asan else ''}", end="")
    if not asan:
        assert rss_end - rss_warm <= RSS_SLACK_KIB, f"RSS grew from {rss_warm} to {rss_end} KiB"
    served(d, capsys, "after the load")
    # Stopped here, so that LeakSanitizer (ASan build) reports now, about this daemon.
    assert d.stop() == 0
    log = d.log()
    assert "ERROR: LeakSanitizer" not in log, log[log.index("ERROR: LeakSanitizer"):][:4000]
    if asan:
        with capsys.disabled():
            print("\n  [load] LeakSanitizer at zygoted's exit: no leak", end="")
