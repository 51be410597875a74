# SPDX-License-Identifier: MIT
"""Fixtures of zygoted's integration tests.

Run: /usr/bin/python3 -m pytest -q tests/integration --build-dir build
Each test gets its own daemon(s) on its own socket in its own directory; at the end of the test
every daemon must still be running (it never crashed), and then exits cleanly on SIGTERM. A
failed test prints the daemons' stderr.

The session exits 77 (ctest: skipped) when nothing passed and something was skipped
(tests/conftest.py), so that a run without root never reports a pass for nothing.
"""
import os

import pytest

import zytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_addoption(parser):
    parser.addoption("--build-dir", default=os.environ.get("ZYGOTE_BUILD_DIR", os.path.join(SOURCE_DIR, "build")),
                     help="the CMake build directory holding zygoted, launchctl, zygote-ref, try-syscall")


@pytest.fixture(scope="session")
def bins(request):
    """The build's programs and profiles, as copies every uid may reach (zytest.stage_build):
    the tests run them as other users, wherever the tree lies. "build" is the copies' directory."""
    build = os.path.abspath(request.config.getoption("--build-dir"))
    missing = [os.path.join(build, n) for n in ("zygoted", "launchctl", "zygote-ref", "try-syscall")
               if not os.access(os.path.join(build, n), os.X_OK)]
    if missing:
        pytest.fail(f"not built: {', '.join(missing)} (build first: cmake --build {build})")
    stage, b = zytest.stage_build(build, SOURCE_DIR)
    b["build"] = stage
    b["source"] = SOURCE_DIR
    yield b
    zytest.remove_workdir(stage)


@pytest.fixture
def needs_root():
    if not zytest.is_root():
        pytest.skip("needs root: starts daemons and callers under other uids")


# Results of each phase, for the fixtures' teardown (print logs only for a failed test).
@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


class DaemonFactory:
    def __init__(self, bins):
        self.bins = bins
        self.daemons = []
        self.dirs = []

    def workdir(self, owner=None):
        d = zytest.make_workdir()
        if owner is not None:
            os.chown(d, owner, owner)
        self.dirs.append(d)
        return d

    def __call__(self, tier=None, profile_dirs=None, as_uid=None, env=None, args=(), start=True, bins=None):
        """Starts a daemon and waits until it listens. as_uid: run it as that uid (setup (b)).
        bins: other programs than the session's."""
        if as_uid is not None and not zytest.is_root():
            pytest.skip("needs root to run zygoted as another user")
        d = zytest.Daemon(bins or self.bins, self.workdir(owner=as_uid), tier=tier, profile_dirs=profile_dirs,
                          as_uid=as_uid, env=env, args=args)
        self.daemons.append(d)
        if start:
            d.start()
        return d

    def finish(self, failed):
        """Every daemon still running must stop cleanly; returns the problems found."""
        problems = []
        for d in self.daemons:
            if d.proc is None or d.stopped:
                continue
            try:
                rc = d.stop()
                if rc != 0:
                    problems.append(f"zygoted on {d.socket} exited with status {rc} on SIGTERM")
            except zytest.DaemonDied as e:
                problems.append(f"zygoted on {d.socket}: {e}")
        for d in self.daemons:
            # A sanitizer build (ZYGOTE_SANITIZE) reports on stderr and may go on running.
            log = d.log()
            for mark in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                if mark in log:
                    problems.append(f"zygoted on {d.socket}: sanitizer report ({mark})")
        if failed or problems:
            for d in self.daemons:
                print(f"\n----- zygoted {' '.join(d.command())} stderr -----\n{d.log()}", end="")
        for w in self.dirs:
            zytest.remove_workdir(w)
        return problems


@pytest.fixture
def daemons(bins, request):
    """A factory: daemons(tier=..., as_uid=...) starts one more daemon for this test."""
    f = DaemonFactory(bins)
    yield f
    rep = getattr(request.node, "rep_call", None)
    problems = f.finish(failed=rep is None or rep.failed)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def daemon(daemons, needs_root):
    """The common case: a root zygoted, automatic tiers, the bundled profiles."""
    return daemons()
