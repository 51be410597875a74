# SPDX-License-Identifier: MIT
"""Compares one suite's TAP results of runc and zygote-runc (runc-bats.sh): exits 1 when a test
runc passes fails (or is missing) for zygote-runc and the known table does not name it; prints
the counts side by side and each difference.

    compare-tap.py RESULTS_DIR KNOWN_TABLE FILE.bats ..."""
import os
import re
import sys

LINE = re.compile(r"^(ok|not ok) \d+ (.*?)(?: # (skip|SKIP)\b.*)?$")


def results(path):
    """{test name: "ok" | "not ok" | "skip"} of one TAP file ({} when it is missing)."""
    seen = {}
    if not os.path.exists(path):
        return seen
    with open(path) as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if m:
                seen[m.group(2)] = "skip" if m.group(3) else m.group(1)
    return seen


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


def main(out, table_path, files):
    table = known(table_path)
    failures, listed = [], []
    totals = {"runc": 0, "zygote-runc": 0, "both": 0, "tests": 0}
    for f in files:
        theirs = results(os.path.join(out, "runc", f + ".tap"))
        ours = results(os.path.join(out, "zygote-runc", f + ".tap"))
        if not theirs:
            failures.append(f"{f}: no result from runc (see {out}/runc/{f}.err)")
        for name, state in theirs.items():
            totals["tests"] += 1
            totals["runc"] += state == "ok"
            totals["zygote-runc"] += ours.get(name) == "ok"
            totals["both"] += state == "ok" and ours.get(name) == "ok"
            if state == "ok" and ours.get(name) != "ok":
                if (f, name) in table:
                    listed.append(f"{f}: {name}: {table[(f, name)]}")
                else:
                    failures.append(f"{f}: {name}: runc ok, zygote-runc {ours.get(name, 'missing')}")
    print(f"runc 1.1.5's suite, {len(files)} files, {totals['tests']} tests: runc passes {totals['runc']}, "
          f"zygote-runc {totals['zygote-runc']}, both {totals['both']}")
    for line in listed:
        print("known: " + line)
    for line in failures:
        print("FAIL: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
