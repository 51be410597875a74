# SPDX-License-Identifier: MIT
"""Helpers of the tests that check what `cmake --install` puts in place: run the install into a
DESTDIR, and read the install directories from the build's CMake cache."""
import os
import re
import subprocess

INSTALL_TIMEOUT = 120


def cache_value(build, key):
    """The value of a CMakeCache.txt entry of the build; KeyError when there is none."""
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"{key}:[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                return m.group(1)
    raise KeyError(key)


def cmake_install(build, dest, timeout=INSTALL_TIMEOUT):
    """`cmake --install build` with DESTDIR=dest; the install must succeed."""
    r = subprocess.run(["cmake", "--install", build], env=dict(os.environ, DESTDIR=str(dest)),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout
