# SPDX-License-Identifier: MIT
"""Fixtures of the tests under a real systemd as PID 1 (tests/system/).

Run: ZYGOTE_BUILD_DIR=build /usr/bin/python3 -m pytest -q -rs tests/system
The session exits 77 (ctest: skipped) when nothing passed and something was skipped
(tests/conftest.py), and prints how long the boot and the checks took (machine.TIMINGS) at its
end.
"""
import pytest

import machine


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def pytest_terminal_summary(terminalreporter):
    if machine.TIMINGS:
        terminalreporter.write_sep("-", "timings")
        for line in machine.TIMINGS:
            terminalreporter.write_line(line)

