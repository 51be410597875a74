# SPDX-License-Identifier: MIT
"""The structure the project holds itself to (docs/CODING_STYLE.md), read from the sources.

- no component configures another through a global or an environment variable: a call of
  setenv/putenv, or a global function pointer in a header, stands only where ALLOWED says why;
- the containerd shim writes no cgroup file itself: a file of its folder that names a cgroup file
  opens nothing for writing and writes nothing (the container library's manager does);
- no file over 700 lines, no function over 150;
- every daemon file has a row in docs/ARCHITECTURE.md's who-calls-whom table.

Plain text reads of the tree: no build needed. Run from ctest (lint-structure) or
`python3 -m pytest tests/lint/test_structure.py`.
"""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The program's own code; tests/ and the build are not.
SKIP_DIRS = {"tests", "build", ".git", "examples", "man", "completions", "packaging", "scripts", "docs"}
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 150

# Each allowed place says why it configures no other component.
ALLOWED_SETENV = {
    # its own marker across its own execve (the sealed copy of itself)
    "sealed-copy.c": "the program's own marker for its re-execution",
    # the user's ZYGOTE_REF_HELPER kept across the daemon's own re-execution from a sealed copy
    "daemon/main.c": "the daemon's own setting across its own execve",
}
ALLOWED_HOOKS = {
    # the fuzzer's stand-in for a worker's fork (tests/fuzz/fuzz-daemon.c), set by no component
    "zd_spawn_fork_hook",
}


def sources(exts=(".c", ".h")):
    for top, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(top, ROOT)
        if rel.split(os.sep)[0] in SKIP_DIRS or rel.startswith("build"):
            dirs[:] = []
            continue
        dirs.sort()
        for f in sorted(files):
            if f.endswith(exts):
                path = os.path.join(top, f)
                yield os.path.relpath(path, ROOT), path


def code_lines(path):
    """The file's lines with comments and string literals blanked (line count kept)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return text.split("\n")


def allowed(rel, table):
    return any(rel == k or rel.endswith("/" + k) for k in table)


def test_no_component_configured_by_environment():
    bad = []
    for rel, path in sources((".c",)):
        for n, line in enumerate(code_lines(path), 1):
            if re.search(r"\b(setenv|putenv)\s*\(", line) and not allowed(rel, ALLOWED_SETENV):
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert not bad, "setenv/putenv configuring another component (pass an argument):\n" + "\n".join(bad)


def test_no_component_configured_by_global_hook():
    bad = []
    for rel, path in sources((".h",)):
        for n, line in enumerate(code_lines(path), 1):
            m = re.search(r"^\s*extern\b[^;]*\(\s*\*\s*(\w+)\s*\)", line)
            if m and m.group(1) not in ALLOWED_HOOKS:
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert not bad, "a global function pointer set by another component (pass it in a struct):\n" + "\n".join(bad)


# The folder of the containerd shim (containerd-shim-zygote-v2's sources).
SHIM_DIRS = ("shim", "client/shim")
CGROUP_FILE = re.compile(r'"(/sys/fs/cgroup[^"]*|(cgroup|memory|cpu|cpuset|cpuacct|pids|freezer|io|blkio|hugetlb|rdma|misc|'
                         r'net_cls|net_prio)\.[a-z_.]+)"')
WRITES = re.compile(r'\b(O_WRONLY|O_RDWR|O_APPEND|O_TRUNC|write|pwrite|writev|dprintf|fputs|fprintf|fwrite)\b\s*[(|,)]?'
                    r'|fopen\s*\([^;]*"[wa+]|fopen\s*\([^;]*"r\+')


def test_shim_writes_no_cgroup_file():
    checked = 0
    bad = []
    for rel, path in sources((".c",)):
        if not any(rel.startswith(d + "/") for d in SHIM_DIRS):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if not CGROUP_FILE.search(text):
            continue
        checked += 1
        for n, line in enumerate(code_lines(path), 1):
            # fprintf(stderr, ...) is the log, not a file
            if WRITES.search(line) and "stderr" not in line:
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert checked, "no shim file names a cgroup file: has the shim moved (SHIM_DIRS)?"
    assert not bad, ("the shim writes in a file that names cgroup files (go through the container library's "
                     "cgroup manager):\n" + "\n".join(bad))


def test_file_size():
    bad = []
    for rel, path in sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            bad.append(f"{rel}: {n} lines")
    assert not bad, f"files over {MAX_FILE_LINES} lines:\n" + "\n".join(bad)


def functions(path):
    """(name, first line, length) of each function definition: a line at column 0 that opens a
    body (ends with '{', is not a struct/enum/union/initializer) up to the next '}' at column 0."""
    lines = code_lines(path)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.endswith("{") and line[:1] not in ("", " ", "\t", "#", "}") and ")" in line \
                and not re.match(r"^(static\s+)?(const\s+)?(struct|enum|union)\s+\w+\s*\{", line) and "=" not in line:
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            m = re.search(r"(\w+)\s*\(", line)
            yield (m.group(1) if m else "?"), start + 1, j - start + 1
            i = j
        i += 1


def test_function_size():
    bad = []
    for rel, path in sources((".c",)):
        for name, first, length in functions(path):
            if length > MAX_FUNCTION_LINES:
                bad.append(f"{rel}:{first}: {name}: {length} lines")
    assert not bad, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(bad)


def architecture_table():
    """The modules named in the first column of docs/ARCHITECTURE.md's who-calls-whom table (the
    one whose header is `| module | calls |`), and the rows' texts."""
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if re.match(r"^\|\s*module\s*\|\s*calls\s*\|", line))
    named, rows = set(), []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = line.split("|")
        named.update(re.findall(r"`([\w.-]+\.c)`", cells[1]))
        rows.append(line)
    return named, rows


def test_every_daemon_file_in_architecture_table():
    named, _ = architecture_table()
    files = sorted(f for f in os.listdir(os.path.join(ROOT, "daemon")) if f.endswith(".c"))
    missing = [f for f in files if f not in named]
    gone = sorted(n for n in named if n not in files)
    assert not missing, "daemon files without a row in docs/ARCHITECTURE.md's who-calls-whom table: " + \
        ", ".join(missing)
    assert not gone, "rows of docs/ARCHITECTURE.md's who-calls-whom table for no daemon file: " + ", ".join(gone)


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
