# SPDX-License-Identifier: MIT
"""The man pages (man/*.scd, rendered by scdoc at build time) agree with the programs.

For zygoted, launchctl (and each of its verbs) and zygote-runc (and each of its commands), every
long option that --help prints appears in the program's page, and every long option the page
names is one that --help prints: neither can gain or lose an option alone. The verbs and commands
that --help lists each have their entry in the page, and every key that the bundled profiles use
is described in zygote.profile(5). `cmake --install` puts the pages in the man directory.

Needs neither root nor a daemon. Skipped (77) when scdoc is not installed.
Run: /usr/bin/python3 -m pytest -q tests/integration/test_manpages.py --build-dir build
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from cmakeinstall import cmake_install

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = {"zygoted": "zygoted.8", "launchctl": "launchctl.1", "zygote-runc": "zygote-runc.8"}
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
TIMEOUT = 60


@pytest.fixture(scope="module")
def build(request):
    b = os.path.abspath(request.config.getoption("--build-dir"))
    for prog in PAGES:
        if not os.access(os.path.join(b, prog), os.X_OK):
            pytest.fail(f"not built: {b}/{prog}")
    if not os.path.isdir(os.path.join(b, "man")) or not shutil.which("scdoc"):
        pytest.skip("scdoc is not installed (Debian package scdoc): the build made no man pages")
    return b


def page_text(build, page):
    """The rendered page as a reader sees its words: roff fonts and escapes removed."""
    path = os.path.join(build, "man", page)
    assert os.path.exists(path), f"the build did not render {page}"
    text = open(path).read()
    text = re.sub(r"\\f[BIRP]", "", text)
    text = text.replace("\\-", "-").replace("\\&", "").replace("\\(em", "-")
    return text


def helptext(build, *args):
    r = subprocess.run([os.path.join(build, args[0]), *args[1:]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=TIMEOUT, text=True)
    assert r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}\n{r.stdout}"
    return r.stdout


def section(text, title):
    """The lines of a --help section ("Verbs:") up to the next blank line."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        out.append(line)
    return out


def launchctl_helps(build):
    main = helptext(build, "launchctl", "--help")
    verbs = [line.split()[0] for line in section(main, "Verbs:")]
    assert "run" in verbs and "status" in verbs, main
    return main, verbs, {v: helptext(build, "launchctl", v, "--help") for v in verbs}


def runc_helps(build):
    main = helptext(build, "zygote-runc", "--help")
    commands = []
    for line in section(main, "COMMANDS:"):  # runc's shape of --help
        for word in re.findall(r"^\s+(\w+)|/ (\w+) ID", line):
            commands += [w for w in word if w]
    assert {"create", "start", "exec", "features", "resume"} <= set(commands), commands
    return main, commands, {c: helptext(build, "zygote-runc", c, "--help") for c in commands}


def check_agree(prog, helps, page):
    in_help = set()
    for h in helps:
        in_help |= set(OPTION.findall(h))
    in_page = set(OPTION.findall(page))
    assert in_help, f"{prog} --help printed no option"
    assert not in_help - in_page, f"{prog}: options --help prints but the page lacks: {sorted(in_help - in_page)}"
    assert not in_page - in_help, f"{prog}: options the page names but --help does not: {sorted(in_page - in_help)}"


def test_zygoted_page_and_help_agree(build):
    check_agree("zygoted", [helptext(build, "zygoted", "--help")], page_text(build, "zygoted.8"))


# A program with verbs or commands: how to read its --help, and the start of the line that is a
# verb's or command's own entry in the page (launchctl's VERBS section starts each with its name;
# zygote-runc's may name it after others on the line, "a, b").
WITH_COMMANDS = [
    ("launchctl", launchctl_helps, ""),
    ("zygote-runc", runc_helps, "(.*, )?"),
]


@pytest.mark.parametrize("prog,helps,entry", WITH_COMMANDS, ids=[w[0] for w in WITH_COMMANDS])
def test_page_and_help_agree_with_commands(build, prog, helps, entry):
    main, commands, per_command = helps(build)
    page_name = PAGES[prog]
    page = page_text(build, page_name)
    check_agree(prog, [main, *per_command.values()], page)
    for c in commands:
        assert re.search(rf"^{entry}{re.escape(c)}\b", page, re.M), f"{page_name} has no entry for {c}"


def test_the_check_catches_a_missing_option(build):
    """The comparison is real: a page without one option, or with one too many, fails it."""
    help_ = helptext(build, "zygoted", "--help")
    page = page_text(build, "zygoted.8")
    with pytest.raises(AssertionError, match="--tier"):
        check_agree("zygoted", [help_], page.replace("--tier", "the tier option"))
    with pytest.raises(AssertionError, match="--made-up"):
        check_agree("zygoted", [help_], page + "\n--made-up\n")


def json_keys(o, out):
    if isinstance(o, dict):
        for k, v in o.items():
            out.add(k)
            json_keys(v, out)
    elif isinstance(o, list):
        for v in o:
            json_keys(v, out)
    return out


def test_profile_page_names_every_key_the_bundled_profiles_use(build):
    page = page_text(build, "zygote.profile.5")
    keys = set()
    profiles = os.path.join(SOURCE_DIR, "profiles")
    for f in sorted(os.listdir(profiles)):
        if f.endswith(".json"):
            with open(os.path.join(profiles, f)) as fh:
                json_keys(json.load(fh), keys)
    # The README's example adds the keys the bundled files do not use.
    keys |= {"access", "users", "groups"}
    assert {"name", "seccomp", "capabilities"} <= keys
    missing = sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", page))
    assert not missing, f"zygote.profile.5 does not describe: {missing}"
    for name in ("default", "nonet", "strict"):
        assert re.search(rf"^{name}$", page, re.M), f"zygote.profile.5 does not describe the bundled profile {name}"


def test_install_puts_the_pages_in_the_man_directory(build, tmp_path):
    cmake_install(build, tmp_path)
    found = {os.path.relpath(os.path.join(d, f), tmp_path) for d, _, fs in os.walk(tmp_path) for f in fs}
    for page in ("launchctl.1", "zygoted.8", "zygote-runc.8", "zygote.profile.5"):
        section_dir = "man" + page[-1]
        assert any(p.endswith(f"/share/man/{section_dir}/{page}") for p in found), \
            f"{page} not installed under share/man/{section_dir}: {sorted(p for p in found if '/man/' in p)}"
