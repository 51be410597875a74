# SPDX-License-Identifier: MIT
"""Compares one suite's TAP results of a peer runtime (runc, crun) and zygote-runc (runc-bats.sh,
crun-py.sh): exits 1 when a test the peer passes fails (or is missing) for zygote-runc and the
known table does not name it; prints the counts side by side and each difference.

    compare-tap.py [--peer NAME] [--suite LABEL] RESULTS_DIR KNOWN_TABLE FILE ...

RESULTS_DIR holds PEER/FILE.tap and zygote-runc/FILE.tap (default peer: runc). bats writes
`ok 3 NAME # skip`, crun's suite `ok 3 - NAME #SKIP`."""
import argparse
import os
import re
import sys

LINE = re.compile(r"^(ok|not ok) \d+ (?:- )?(.*?)(?: ?#(?: ?)(skip|SKIP)\b.*)?$")


def results(path):
    """{test name: "ok" | "not ok" | "skip"} of one TAP file ({} when it is missing), and whether
    its plan is "1..0": a file the suite itself skips (crun's test_mounts.py without python's
    libmount)."""
    seen, empty_plan = {}, False
    if not os.path.exists(path):
        return seen, empty_plan
    with open(path) as f:
        for line in f:
            empty_plan |= line.rstrip("\n") == "1..0"
            m = LINE.match(line.rstrip("\n"))
            if m:
                seen[m.group(2)] = "skip" if m.group(3) else m.group(1)
    return seen, empty_plan


def known(path):
    """{(file, test name): reason} of the table's "known:" lines."""
    table = {}
    with open(path) as f:
        for line in f:
            if line.startswith("known: "):
                where, reason = line[len("known: "):].rstrip("\n").split(" | ", 1)
                file, name = where.split(": ", 1)
                table[(file, name)] = reason
    return table


def main(out, table_path, files, peer="runc", suite="runc 1.1.5's suite"):
    table = known(table_path)
    failures, listed = [], []
    totals = {"peer": 0, "zygote-runc": 0, "both": 0, "tests": 0}
    for f in files:
        theirs, skipped = results(os.path.join(out, peer, f + ".tap"))
        ours, _ = results(os.path.join(out, "zygote-runc", f + ".tap"))
        if skipped:
            print(f"skipped: {f}: the suite runs none of its tests here (plan 1..0)")
        elif not theirs:
            failures.append(f"{f}: no result from {peer} (see {out}/{peer}/{f}.err)")
        for name, state in theirs.items():
            totals["tests"] += 1
            totals["peer"] += state == "ok"
            totals["zygote-runc"] += ours.get(name) == "ok"
            totals["both"] += state == "ok" and ours.get(name) == "ok"
            if state == "ok" and ours.get(name) != "ok":
                if (f, name) in table:
                    listed.append(f"{f}: {name}: {table[(f, name)]}")
                else:
                    failures.append(f"{f}: {name}: {peer} ok, zygote-runc {ours.get(name, 'missing')}")
    print(f"{suite}, {len(files)} files, {totals['tests']} tests: {peer} passes {totals['peer']}, "
          f"zygote-runc {totals['zygote-runc']}, both {totals['both']}, listed {len(listed)}")
    for line in listed:
        print("known: " + line)
    for line in failures:
        print("FAIL: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--peer", default="runc")
    p.add_argument("--suite", default="runc 1.1.5's suite")
    p.add_argument("out")
    p.add_argument("table")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    sys.exit(main(a.out, a.table, a.files, a.peer, a.suite))
