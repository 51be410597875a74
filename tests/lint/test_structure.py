# SPDX-License-Identifier: MIT
"""The structure the project holds itself to (docs/CODING_STYLE.md), read from the sources.

- no component configures another through a global or an environment variable: a call of
  setenv/putenv, or a global function pointer in a header, stands only where ALLOWED says why;
- the containerd shim writes no cgroup file itself: a file of its folder that names a cgroup file
  opens nothing for writing and writes nothing (the container library's manager does);
- no file over 700 lines, no function over 150;
- the prefix follows the folder: a global function (or a header's inline one) of a component
  folder is named with its prefix (docs/CODING_STYLE.md's table), but UNPREFIXED's;
- every daemon file has a row in docs/ARCHITECTURE.md's who-calls-whom table;
- no cycle between the files of one folder (a file calls a function another defines, by name),
  but those KNOWN_CYCLES lists with the reason they stay.

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


def sources(exts=(".c", ".h"), tests=False):
    for top, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(top, ROOT)
        first = rel.split(os.sep)[0]
        if (first in SKIP_DIRS and not (tests and first == "tests")) or rel.startswith("build"):
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
SHIM_DIRS = ("client/containerd-shim",)
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


# Files over the limit for now, each with the reason; one back under it fails until taken out.
KNOWN_LARGE: set[str] = set()


def test_top_level_is_the_design_cards():
    """DESIGN.md's layout: daemon/, client/ (everything that calls zygoted as its client),
    profiles/, systemd/, tests/ at the top; no client component outside client/."""
    for d in ("daemon", "client", "profiles", "systemd", "tests"):
        assert os.path.isdir(os.path.join(ROOT, d)), f"no {d}/ at the top level"
    for d in ("libzygote", "cli", "shim"):
        # sources there (an empty folder a checkout left after the move is no component)
        left = [f for _, _, fs in os.walk(os.path.join(ROOT, d)) for f in fs if f.endswith((".c", ".h", ".txt"))]
        assert not left, f"{d}/ at the top level: it belongs under client/ ({left})"


def test_file_size():
    bad, large = [], set()
    for rel, path in sources((".c", ".h", ".py"), tests=True):
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            large.add(rel)
            if rel not in KNOWN_LARGE:
                bad.append(f"{rel}: {n} lines")
    assert not bad, f"files over {MAX_FILE_LINES} lines:\n" + "\n".join(bad)
    gone = sorted(KNOWN_LARGE - large)
    assert not gone, "KNOWN_LARGE lists a file no longer over the limit (take it out): " + ", ".join(gone)


def functions(path):
    """(name, first line, length, static) of each function definition: a body opened at brace
    depth 0 whose header (from the last line at column 0 before it) has a parameter list and is
    not a struct, enum, union or initializer; the length runs from the header to the closing
    brace."""
    lines = code_lines(path)
    depth, header = 0, None
    start = None
    for i, line in enumerate(lines):
        if depth == 0:
            if line[:1] not in ("", " ", "\t", "#", "}") or (header is not None and line.strip()):
                if header is None or line[:1] not in ("", " ", "\t"):
                    header = i
            if not line.strip() or line.startswith("#"):
                header = None if not line.strip() else header
        opens, closes = line.count("{"), line.count("}")
        if depth == 0 and opens > closes and header is not None:
            text = " ".join(lines[header:i + 1])
            m = re.search(r"(\w+)\s*\(", text)
            if m and not re.match(r"^\s*(typedef\s+)?(static\s+)?(const\s+)?(struct|enum|union)\s+\w*\s*\{", text) \
                    and "=" not in text.split("(")[0]:
                start = (m.group(1), header, re.search(r"\bstatic\b", text.split(m.group(1))[0]) is not None)
        depth += opens - closes
        if depth == 0 and start is not None and closes:
            name, first, static = start
            yield name, first + 1, i - first + 1, static
            start = None
        if depth == 0 and (";" in line or "}" in line):
            header = None


def test_function_size():
    bad = []
    for rel, path in sources((".c",), tests=True):
        for name, first, length, _ in functions(path):
            if length > MAX_FUNCTION_LINES:
                bad.append(f"{rel}:{first}: {name}: {length} lines")
    assert not bad, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(bad)


# Cycles left on purpose, each a set of files of one folder.
KNOWN_CYCLES = set()


def call_graph(folder):
    """{file: {file it calls}} for the .c files of one folder, by the global functions each
    defines and the names each calls."""
    files = {rel: path for rel, path in sources((".c",)) if os.path.dirname(rel) == folder}
    defined = {}
    for rel, path in files.items():
        for name, _, _, static in functions(path):
            if not static:
                defined.setdefault(name, rel)
    graph = {}
    for rel, path in files.items():
        called = set(re.findall(r"\b(\w+)\s*\(", "\n".join(code_lines(path))))
        graph[rel] = {defined[n] for n in called if n in defined and defined[n] != rel}
    return graph


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_cycle_between_files_of_a_folder():
    folders = sorted({os.path.dirname(rel) for rel, _ in sources((".c",))})
    found = [c for f in folders for c in cycles(call_graph(f))]
    new = [" <-> ".join(sorted(c)) for c in found if c not in KNOWN_CYCLES]
    assert not new, "files of one folder that call each other (a cycle):\n" + "\n".join(new)
    gone = [" <-> ".join(sorted(c)) for c in KNOWN_CYCLES if c not in found]
    assert not gone, "KNOWN_CYCLES lists a cycle that is gone (take it out):\n" + "\n".join(gone)


PREFIXES = {
    "common": ("zc_",), "engine": ("ze_",), "profile": ("zp_",), "reference": ("zr_",), "daemon": ("zd_",),
    "container": ("zct_",), "runc": ("zrc_",),
    "client/libzygote": ("zy_", "lzy_"), "client/launchctl": ("lc_",), "client/containerd-shim": ("zs_",),
}
UNPREFIXED = {
    # systemd's names for the cleanup helpers, which every C programmer of the field reads at once
    "freep", "safe_close", "closep", "close_pairp", "negative_errno", "streq_ptr", "json_object_putp",
    # common's fd and pidfd helpers: used in every folder, to be zc_ when none of those is changed
    "close_many", "send_fds", "recv_fds", "clone_with_pidfd", "pidfd_open_pid", "pidfd_kill", "pidfd_wait",
    "pidfd_reap", "pidfd_exit_status",
}


def test_prefix_follows_the_folder():
    bad = []
    for rel, path in sources():
        folder = next((f for f in sorted(PREFIXES, key=len, reverse=True) if rel.startswith(f + "/")), None)
        if not folder:
            continue
        for name, first, _, static in functions(path):
            if (static and not rel.endswith(".h")) or name in ("main", "__attribute__") or name in UNPREFIXED:
                continue
            if not name.startswith(PREFIXES[folder]):
                bad.append(f"{rel}:{first}: {name} (prefix {' or '.join(PREFIXES[folder])})")
    assert not bad, "names without their folder's prefix:\n" + "\n".join(bad)


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
