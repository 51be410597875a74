#!/usr/bin/env python3
"""Checks that every test file in tests/ runs in some lane of scripts/test.sh, and that every
ctest entry a lane runs goes through bounded-run (a time bound, no process left behind).

    scripts/check-collected.py LANE=BUILD_DIR[:REGEX] ...

Each argument is one lane: its build tree and the -R filter its ctest gets (none: every entry).
The entries come from `ctest --show-only=json-v1` in that tree, so what counts is what ctest
would run there, not what tests/CMakeLists.txt seems to say. Test files:

  tests/unit/test-*.c             its executable (the file's name without .c) runs in an entry
  tests/**/test_*.py              its path is on an entry's command line
  tests/fuzz/fuzz-*.c             (those defining LLVMFuzzerTestOneInput) its executable runs
  tests/kernel/run.sh             its path is on an entry's command line

Prints `not collected: FILE` for each file no lane runs and `not bounded: LANE ENTRY` for each
entry without bounded-run; exits 1 if there is any (or a lane's tree cannot be read), else 0
with a last line that says how many files were found in how many entries.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_files():
    files = []
    tests = os.path.join(ROOT, "tests")
    for dirpath, dirnames, filenames in os.walk(tests):
        dirnames[:] = [d for d in dirnames if d not in ("corpus", "results", "__pycache__")]
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            if re.fullmatch(r"test_.*\.py", f):
                files.append((rel, "path", path))
            elif rel.startswith("tests/unit/") and re.fullmatch(r"test-.*\.c", f):
                files.append((rel, "exe", f[:-2]))
            elif rel.startswith("tests/fuzz/") and re.fullmatch(r"fuzz-.*\.c", f):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    if "LLVMFuzzerTestOneInput" in fh.read():
                        files.append((rel, "exe", f[:-2]))
    files.append(("tests/kernel/run.sh", "path", os.path.join(tests, "kernel", "run.sh")))
    return files


def show_only(build):
    """`ctest --show-only=json-v1` in build, its Testing/Temporary/LastTest*.log kept as they were:
    ctest empties them even when it runs nothing, and they hold the outputs of the lane that just
    ran (where scripts/ctest-skips.py and a person after a failure read them)."""
    temp = os.path.join(build, "Testing", "Temporary")
    kept = {}
    if os.path.isdir(temp):
        for f in os.listdir(temp):
            if f.startswith("LastTest") and f.endswith(".log"):
                with open(os.path.join(temp, f), "rb") as fh:
                    kept[f] = fh.read()
    try:
        return subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, timeout=120)
    finally:
        for f, data in kept.items():
            with open(os.path.join(temp, f), "wb") as fh:
                fh.write(data)


def lane_entries(spec):
    name, _, rest = spec.partition("=")
    build, _, regex = rest.partition(":")
    out = show_only(build)
    if out.returncode != 0:
        raise RuntimeError(f"lane {name}: ctest --show-only in {build} failed: {out.stderr.strip()}")
    entries = []
    for t in json.loads(out.stdout).get("tests", []):
        if regex and not re.search(regex, t["name"]):
            continue
        entries.append((name, t["name"], t.get("command", [])))
    return entries


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        entries = [e for spec in argv[1:] for e in lane_entries(spec)]
    except (RuntimeError, OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
        print(f"check-collected: {e}")
        return 1
    problems = 0
    for lane, name, cmd in entries:
        if not cmd or os.path.basename(cmd[0]) != "bounded-run":
            print(f"not bounded: {lane} {name}")
            problems += 1
    args = [a for _, _, cmd in entries for a in cmd]
    paths = {os.path.realpath(a) for a in args if a.startswith("/")}
    exes = {os.path.basename(a) for a in args}
    files = test_files()
    for rel, kind, what in files:
        found = os.path.realpath(what) in paths if kind == "path" else what in exes
        if not found:
            print(f"not collected: {rel} (no lane's ctest entry runs it)")
            problems += 1
    if problems:
        return 1
    print(f"{len(files)} test files, each run by one of {len(entries)} entries in {len(argv) - 1} lanes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
