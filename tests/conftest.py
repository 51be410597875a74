# SPDX-License-Identifier: MIT
"""What every pytest session under tests/ shares (tests/ is pytest's rootdir: tests/pytest.ini).

A session exits 77 (ctest: skipped) when nothing passed and something was skipped, so that a
ctest entry whose every test lacked something of this machine says "skipped", never "passed".
"""
_outcomes = {"passed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    # A strict xfail ran its check and saw the known failure: it counts as run, not skipped.
    ran = report.passed or hasattr(report, "wasxfail")
    if report.when == "call" and ran:
        _outcomes["passed"] += 1
    elif report.skipped:
        _outcomes["skipped"] += 1


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _outcomes["passed"] == 0 and _outcomes["skipped"] > 0:
        print("\nevery test was skipped (see the reasons above): exit 77 for ctest")
        session.exitstatus = 77
