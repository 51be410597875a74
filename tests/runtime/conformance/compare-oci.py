# SPDX-License-Identifier: MIT
"""Compares the OCI runtime-tools validation programs' TAP output of Debian's runc and crun with
zygote-runc's (runtime-tools.sh): exits 1 when an assertion a peer passes passes fewer times for
zygote-runc and runtime-tools-known.txt does not name it; prints each runtime's counts side by side
and each difference.

    compare-oci.py RESULTS_DIR KNOWN_TABLE PROGRAM ...

RESULTS_DIR holds RUNTIME/PROGRAM.tap and RUNTIME/PROGRAM.rc for runc, crun and zygote-runc. An
assertion is a TAP line at the start of a line (a nested stream, which a program embeds in a YAML
block, is indented and so not counted); it is named by its description, and as one description can
be asserted several times in a program (one per device, mount, rlimit), each runtime's passes of it
are counted. "# SKIP" and "# TODO" lines count as neither pass nor failure. A known line names an
assertion ("known: PROGRAM: DESCRIPTION | REASON") or a whole program ("known: PROGRAM: * | REASON")."""
import collections
import os
import re
import sys

PEERS = ("runc", "crun")
SIDES = PEERS + ("zygote-runc",)
LINE = re.compile(r"^(ok|not ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$")


def results(out, side, program):
    """(passes, failures, exit status) of one run: passes and failures count each description."""
    passes, failures = collections.Counter(), collections.Counter()
    tap = os.path.join(out, side, program + ".tap")
    if os.path.exists(tap):
        with open(tap, errors="replace") as f:
            for line in f:
                m = LINE.match(line.rstrip("\n"))
                if m and not m.group(3):
                    (passes if m.group(1) == "ok" else failures)[m.group(2) or ""] += 1
    try:
        with open(os.path.join(out, side, program + ".rc")) as f:
            rc = int(f.read().strip() or -1)
    except (OSError, ValueError):
        rc = -1
    return passes, failures, rc


def known(path):
    """{(program, description or "*"): reason} of the table's "known:" lines: compare-tap.py's
    reading of the same "known: WHERE: WHAT | REASON" format."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "compare_tap", os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare-tap.py"))
    tap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tap)
    return tap.known(path)


def main(out, table_path, programs):
    table = known(table_path)
    totals = {side: collections.Counter() for side in SIDES}
    failures, listed = [], []
    whole = collections.Counter()  # assertions listed by a whole program's line
    for program in programs:
        runs = {side: results(out, side, program) for side in SIDES}
        for side, (passes, fails, rc) in runs.items():
            t = totals[side]
            t["ok"] += sum(passes.values())
            t["not ok"] += sum(fails.values())
            t["programs passed"] += rc == 0 and bool(passes) and not fails
        ours = runs["zygote-runc"][0]
        for description in sorted(set().union(*(runs[p][0] for p in PEERS))):
            best = max(runs[p][0][description] for p in PEERS)
            if ours[description] >= best:
                continue
            who = ", ".join(f"{p} {runs[p][0][description]}" for p in PEERS)
            what = f"{program}: {description}: passes {who}, zygote-runc {ours[description]}"
            if (program, description) in table:
                listed.append(f"{what}: {table[(program, description)]}")
            elif (program, "*") in table:
                whole[program] += 1
            else:
                failures.append(what)
    print(f"OCI runtime-tools validation, {len(programs)} programs:")
    for side in SIDES:
        t = totals[side]
        print(f"  {side:12} programs passed {t['programs passed']:3}, assertions ok {t['ok']:5}, "
              f"not ok {t['not ok']:4}")
    print(f"  assertions a peer passes and zygote-runc fails: listed {len(listed) + sum(whole.values())}, "
          f"not listed {len(failures)}")
    for program, count in sorted(whole.items()):
        print(f"known: {program}: {count} assertions: {table[(program, '*')]}")
    for line in listed:
        print("known: " + line)
    for line in failures:
        print("FAIL: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
