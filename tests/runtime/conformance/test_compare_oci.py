# SPDX-License-Identifier: MIT
"""The OCI runtime-tools lane's own parts, without any runtime: compare-oci.py on results made
here (what fails the lane, what a known line excuses, how repeated, nested, skipped and TODO
assertions count), and tap-go, the TAP writer the programs are built with, read back by
compare-oci.py (skipped without Go).

Run: /usr/bin/python3 -m pytest -q tests/runtime/conformance/test_compare_oci.py
"""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "compare-oci.py")


def write_results(tmp_path, runs, known=""):
    """runs: {program: {runtime: (tap text, exit status)}}; a runtime left out has no result."""
    out = tmp_path / "results"
    for program, sides in runs.items():
        for side, (tap, rc) in sides.items():
            (out / side).mkdir(parents=True, exist_ok=True)
            (out / side / f"{program}.tap").write_text(tap)
            (out / side / f"{program}.rc").write_text(f"{rc}\n")
    table = tmp_path / "known.txt"
    table.write_text("# comment\n" + known)
    return out, table


def compare(out, table, programs):
    return subprocess.run([sys.executable, COMPARE, str(out), str(table), *programs],
                          capture_output=True, text=True, timeout=30)


def tap(*lines):
    return "TAP version 13\n" + "".join(line + "\n" for line in lines) + f"1..{len(lines)}\n"


def test_an_assertion_a_peer_passes_fails_the_lane_unless_listed(tmp_path):
    runs = {"hostname": {"runc": (tap("ok 1 - has expected hostname"), 0),
                         "crun": (tap("not ok 1 - has expected hostname"), 0),
                         "zygote-runc": (tap("not ok 1 - has expected hostname"), 0)}}
    out, table = write_results(tmp_path, runs)
    r = compare(out, table, ["hostname"])
    assert r.returncode == 1, r.stdout
    assert "FAIL: hostname: has expected hostname: passes runc 1, crun 0, zygote-runc 0" in r.stdout
    out, table = write_results(tmp_path, runs, "known: hostname: has expected hostname | a reason\n")
    r = compare(out, table, ["hostname"])
    assert r.returncode == 0, r.stdout
    assert "known: hostname: has expected hostname: passes runc 1, crun 0, zygote-runc 0: a reason" in r.stdout
    # a line for another program or assertion excuses nothing
    out, table = write_results(tmp_path, runs, "known: other: * | x\nknown: hostname: has other | y\n")
    assert compare(out, table, ["hostname"]).returncode == 1


def test_a_whole_program_listed(tmp_path):
    runs = {"linux_ns_itype": {"runc": (tap("ok 1 - inherit namespace ipc", "ok 2 - inherit namespace uts"), 0),
                               "crun": (tap("ok 1 - inherit namespace ipc", "ok 2 - inherit namespace uts"), 0),
                               "zygote-runc": (tap("not ok 1 - cannot run validation tests"), 0)}}
    out, table = write_results(tmp_path, runs, "known: linux_ns_itype: * | refused\n")
    r = compare(out, table, ["linux_ns_itype"])
    assert r.returncode == 0, r.stdout
    assert "known: linux_ns_itype: 2 assertions: refused" in r.stdout


def test_a_repeated_assertion_counts_each_time(tmp_path):
    # one description per rlimit or device can be asserted several times in one program
    same = "has expected hard RLIMIT_NOFILE"
    runs = {"process_rlimits": {"runc": (tap(*(f"ok {i} - {same}" for i in (1, 2, 3))), 0),
                                "crun": (tap(f"ok 1 - {same}"), 0),
                                "zygote-runc": (tap(f"ok 1 - {same}", f"not ok 2 - {same}", f"ok 3 - {same}"), 0)}}
    out, table = write_results(tmp_path, runs)
    r = compare(out, table, ["process_rlimits"])
    assert r.returncode == 1, r.stdout
    assert f"FAIL: process_rlimits: {same}: passes runc 3, crun 1, zygote-runc 2" in r.stdout


def test_nested_skipped_and_todo_lines_are_not_assertions(tmp_path):
    # a program embeds the container's own TAP stream in an indented YAML block (tap-go here
    # writes it as one JSON string; a YAML writer would write its lines indented)
    nested = "  ---\n  stdout: |\n    ok 1 - nested\n    not ok 2 - nested\n  ...\n"
    theirs = tap("ok 1 - outer", "ok 2 # SKIP not here", "ok 3 - todo one # TODO") + nested + "ok 4 - nested\n"
    ours = tap("ok 1 - outer", "not ok 2 # SKIP not here", "not ok 3 - todo one # TODO") + nested + "ok 4 - nested\n"
    runs = {"misc": {"runc": (theirs, 0), "crun": (theirs, 0), "zygote-runc": (ours, 0)}}
    out, table = write_results(tmp_path, runs)
    r = compare(out, table, ["misc"])
    assert r.returncode == 0, r.stdout
    assert "zygote-runc  programs passed   1, assertions ok     2, not ok    0" in r.stdout


def test_a_missing_result_and_the_counts_side_by_side(tmp_path):
    runs = {"state": {"runc": (tap("ok 1 - state", "not ok 2 - other"), 0),
                      "crun": (tap("ok 1 - state", "ok 2 - other"), 1)}}
    out, table = write_results(tmp_path, runs)
    r = compare(out, table, ["state"])
    assert r.returncode == 1, r.stdout
    assert "FAIL: state: other: passes runc 0, crun 1, zygote-runc 0" in r.stdout
    assert "FAIL: state: state: passes runc 1, crun 1, zygote-runc 0" in r.stdout
    # a program passes with exit 0, a result and no failure: runc has a failure, crun exited 1
    assert "runc         programs passed   0, assertions ok     1, not ok    1" in r.stdout
    assert "crun         programs passed   0, assertions ok     2, not ok    0" in r.stdout
    assert "zygote-runc  programs passed   0, assertions ok     0, not ok    0" in r.stdout


def test_tap_go_read_back(tmp_path):
    go = shutil.which("go")
    if not go:
        pytest.skip("no go (Debian's golang-go): tap-go is not built")
    gopath = tmp_path / "gopath"
    (gopath / "src" / "github.com" / "mndrix").mkdir(parents=True)
    os.symlink(os.path.join(HERE, "tap-go"), gopath / "src" / "github.com" / "mndrix" / "tap-go")
    prog = gopath / "src" / "example" / "main.go"
    prog.parent.mkdir(parents=True)
    prog.write_text("""package main

import "github.com/mndrix/tap-go"

func main() {
	t := tap.New()
	t.Header(0)
	t.Ok(true, "first")
	t.YAML(map[string]string{"stdout": "ok 9 - nested\\nnot ok 10 - nested"})
	t.Todo().Fail("expected to fail")
	t.Skip(2, "not here")
	t.Fail("multi\\nline")
	t.Diagnosticf("count %d", t.Count())
	t.Pass("last")
	t.AutoPlan()
}
""")
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOPATH=str(gopath), GOCACHE=str(tmp_path / "cache"),
               CGO_ENABLED="0")
    r = subprocess.run([go, "run", "example"], cwd=prog.parent, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["TAP version 13", "ok 1 - first"]
    # the counter is shared with the TODO view: numbers follow on
    assert "not ok 2 - expected to fail # TODO" in lines
    assert lines[-6:] == ["ok 3 # SKIP not here", "ok 4 # SKIP not here", "not ok 5 - multi line",
                          "# count 5", "ok 6 - last", "1..6"]
    # read back: the nested stream, the skips and the TODO are no assertions of the program
    out, table = write_results(tmp_path, {"p": {side: (r.stdout, 0) for side in ("runc", "crun", "zygote-runc")}})
    c = compare(out, table, ["p"])
    assert c.returncode == 0, c.stdout
    assert "zygote-runc  programs passed   0, assertions ok     2, not ok    1" in c.stdout
