#!/usr/bin/env python3
"""What a lane of scripts/test.sh skipped, and why: each skipped ctest entry with its reason, each
pytest case skipped inside an entry that passed, and the pytest cases counted.

    scripts/ctest-skips.py BUILD_DIR [CTEST_OUTPUT]

CTEST_OUTPUT (default BUILD_DIR/ctest.log, what test.sh keeps of ctest's output) says which
entries were skipped; BUILD_DIR/Testing/Temporary/LastTest.log holds each entry's own output,
where the reasons are: pytest's `SKIPPED [N] FILE:LINE: REASON` lines (the entries run pytest
with -rs), else the output's last line (a C test says why it exits 77 there). ctest's own count
("5 skipped") counts entries: an entry whose pytest session passed with 40 cases skipped
counts as passed, so the cases are counted here too. The last line is always
`pytest cases: P passed, S skipped, F failed in N entries`.
"""
import os
import re
import sys

RESULT = re.compile(r"^ *\d+/\d+ Test +#\d+: (\S+) \.*\s*(\*\*\*Skipped|Passed|.*?)\s+[\d.]+ sec", re.M)
BLOCK = re.compile(r"^\d+/\d+ Testing: (\S+)\n.*?^Output:\n-+\n(.*?)^<end of output>", re.M | re.S)
SKIPPED_CASE = re.compile(r"^SKIPPED \[(\d+)\] (.*)$", re.M)
# pytest -q's closing line: "12 passed, 3 skipped in 4.5s" (with -rs it follows the SKIPPED lines)
PYTEST_SUMMARY = re.compile(r"^(?:=+ )?((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s", re.M)


def statuses(ctest_output):
    with open(ctest_output, errors="replace") as f:
        return {name: status for name, status in RESULT.findall(f.read())}


def outputs(build):
    path = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    with open(path, errors="replace") as f:
        return dict(BLOCK.findall(f.read()))


def reason(output):
    cases = SKIPPED_CASE.findall(output)
    if cases:
        return "; ".join(f"[{n}] {r}" for n, r in cases)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(it printed no reason)"


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build = argv[1]
    try:
        status = statuses(argv[2] if len(argv) == 3 else os.path.join(build, "ctest.log"))
        out = outputs(build)
    except OSError as e:
        print(f"ctest-skips: {e}")
        print("pytest cases: 0 passed, 0 skipped, 0 failed in 0 entries")
        return 1
    counts = {"passed": 0, "skipped": 0, "failed": 0}
    entries = 0
    for name in sorted(status):
        text = out.get(name, "")
        if status[name] == "***Skipped":
            print(f"skipped: {name}: {reason(text)}")
        elif status[name] == "Passed":
            for n, r in SKIPPED_CASE.findall(text):
                print(f"skipped inside {name}: [{n}] {r}")
        summaries = PYTEST_SUMMARY.findall(text)
        if summaries:
            entries += 1
        for s in summaries:
            for n, kind in re.findall(r"(\d+) ([a-z]+)", s):
                if kind in counts:
                    counts[kind] += int(n)
    print(f"pytest cases: {counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed "
          f"in {entries} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
