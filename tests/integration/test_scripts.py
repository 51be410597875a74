# SPDX-License-Identifier: MIT
"""scripts/test.sh's helpers on a ctest tree of the test's own (a CTestTestfile.cmake of shell
one-liners, no build): scripts/check-collected.py leaves the lane's LastTest.log as the lane left
it, and scripts/ctest-skips.py lists each skip with its reason and counts the pytest cases that
ctest's entry count hides.

Run: /usr/bin/python3 -m pytest -q tests/integration/test_scripts.py
"""
import os
import shutil
import subprocess
import sys

import pytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(SOURCE_DIR, "scripts")

# name, shell line, skip code: what the suite's entries print (pytest -q -rs; a C test's reason)
ENTRIES = [
    ("py-all-skipped", "echo ss; echo 'SKIPPED [2] tests/runtime/test_x.py:3: podman is not installed'; "
                       "echo '2 skipped in 0.10s'; exit 77"),
    ("py-some-skipped", "echo 'SKIPPED [3] tests/integration/test_y.py:9: kernel without pidfd_getfd'; "
                        "echo '5 passed, 3 skipped in 0.30s'"),
    ("c-skipped", "echo '[==========] Running 1 test(s).'; echo 'no bpf(2) here: the program is not loaded'; exit 77"),
    ("py-failed", "echo '1 failed, 4 passed in 0.20s'; exit 1"),
    ("plain", "true"),
]


@pytest.fixture
def tree(tmp_path):
    if not shutil.which("ctest"):
        pytest.skip("no ctest (cmake)")
    with open(tmp_path / "CTestTestfile.cmake", "w") as f:
        for name, line in ENTRIES:
            quoted = line.replace("\\", "\\\\").replace('"', '\\"')
            f.write(f'add_test({name} "/bin/sh" "-c" "{quoted}")\n'
                    f"set_tests_properties({name} PROPERTIES SKIP_RETURN_CODE 77)\n")
    r = subprocess.run(["ctest", "--output-on-failure"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    (tmp_path / "ctest.log").write_text(r.stdout + r.stderr)
    return tmp_path


def test_check_collected_keeps_the_lanes_outputs(tree):
    """ctest --show-only (how check-collected reads a lane's entries) empties LastTest.log; the
    script puts it back, so the outputs of the lane that ran stay readable after test.sh."""
    log = tree / "Testing" / "Temporary" / "LastTest.log"
    before = log.read_bytes()
    assert b"kernel without pidfd_getfd" in before
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "check-collected.py"), f"main={tree}"],
                   capture_output=True, text=True, timeout=120)
    assert log.read_bytes() == before


def test_each_skip_is_listed_with_its_reason_and_the_cases_counted(tree):
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "ctest-skips.py"), str(tree)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "skipped: c-skipped: no bpf(2) here: the program is not loaded",
        "skipped: py-all-skipped: [2] tests/runtime/test_x.py:3: podman is not installed",
        "skipped inside py-some-skipped: [3] tests/integration/test_y.py:9: kernel without pidfd_getfd",
        "pytest cases: 9 passed, 5 skipped, 1 failed in 3 entries",
    ]


def test_without_a_lane_log_it_says_so(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "ctest-skips.py"), str(tmp_path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "pytest cases: 0 passed, 0 skipped, 0 failed in 0 entries"
