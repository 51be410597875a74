# SPDX-License-Identifier: MIT
"""The bash completions (completions/launchctl, completions/zygote-runc) as bash runs them.

Each case sources the file in a plain `bash --norc` (no bash-completion loaded: the files stand
alone), sets COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT as readline would for the words typed so
far, calls the function that `complete -p` names, and reads COMPREPLY. The options offered for
each verb and command are compared with what the program's --help prints, so that the two cannot
drift apart; task ids, profile names and container ids come from a stand-in program named as the
first word, which records the arguments it was run with. `cmake --install` puts both files in
the bash-completion directory.

Needs neither root nor a daemon.
Run: /usr/bin/python3 -m pytest -q tests/integration/test_completions.py --build-dir build
"""
import os
import re
import shlex
import subprocess

import pytest

from cmakeinstall import cmake_install

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPLETIONS = os.path.join(SOURCE_DIR, "completions")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
TIMEOUT = 60


@pytest.fixture(scope="module")
def build(request):
    b = os.path.abspath(request.config.getoption("--build-dir"))
    for prog in ("launchctl", "zygote-runc"):
        if not os.access(os.path.join(b, prog), os.X_OK):
            pytest.fail(f"not built: {b}/{prog}")
    return b


def complete(prog, words, path=None):
    """COMPREPLY for the command line `words`, the last one being the word under the cursor."""
    line = " ".join(words)
    script = (f"source {shlex.quote(os.path.join(COMPLETIONS, prog))}\n"
              f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              f"COMP_LINE={shlex.quote(line)}\nCOMP_POINT={len(line)}\n"
              f"fn=$(complete -p {shlex.quote(prog)} | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')\n"
              f"[ -n \"$fn\" ] || {{ echo 'no completion function' >&2; exit 3; }}\n"
              f"\"$fn\" {shlex.quote(prog)} {shlex.quote(words[-1])} {shlex.quote(words[-2])}\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = dict(os.environ, PATH=(path + ":" if path else "") + os.environ.get("PATH", "/usr/bin:/bin"))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, env=env)
    assert r.returncode == 0 and r.stderr == "", f"{words}: exit {r.returncode}: {r.stderr}"
    return sorted(w for w in r.stdout.split("\n") if w)


def helptext(build, *args):
    r = subprocess.run([os.path.join(build, args[0]), *args[1:]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout
    return r.stdout


def help_section(text, title):
    lines = text.splitlines()
    out = []
    for line in lines[lines.index(title) + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


# ---- launchctl --------------------------------------------------------------------------------

def launchctl_verbs(build):
    return [line.split()[0] for line in help_section(helptext(build, "launchctl", "--help"), "Verbs:")]


def test_launchctl_verbs(build):
    verbs = launchctl_verbs(build)
    assert complete("launchctl", ["launchctl", ""]) == sorted(verbs + ["help"])
    assert complete("launchctl", ["launchctl", "st"]) == ["start", "state", "status"]
    # after a global option and its argument, the verb is still completed
    assert complete("launchctl", ["launchctl", "--socket", "/x.sock", "pr"]) == ["profile", "profiles"]
    assert complete("launchctl", ["launchctl", "profile", "ch"]) == ["check"]


def test_launchctl_global_options_are_the_helps(build):
    main = helptext(build, "launchctl", "--help")
    opts = sorted(set(OPTION.findall("\n".join(help_section(main, "Options:")))))
    assert complete("launchctl", ["launchctl", "--"]) == opts


def test_launchctl_each_verbs_options_are_its_helps(build):
    for verb in launchctl_verbs(build):
        # the options the help defines: lines that start with one (not those its text mentions)
        want = sorted(set(re.findall(r"^\s+(--[a-z][a-z0-9-]*)", helptext(build, "launchctl", verb, "--help"), re.M)))
        assert complete("launchctl", ["launchctl", verb, "--"]) == want, verb
    assert complete("launchctl", ["launchctl", "run", "--pro"]) == ["--profile"]
    assert complete("launchctl", ["launchctl", "kill", "--a"]) == ["--all"]


def test_launchctl_arguments(build):
    assert complete("launchctl", ["launchctl", "run", "--drop-cap", "CAP_NET_R"]) == ["CAP_NET_RAW"]
    assert "root" in complete("launchctl", ["launchctl", "run", "--user", "roo"])
    assert "KILL" in complete("launchctl", ["launchctl", "kill", "t1", "KI"])
    assert "SIGKILL" in complete("launchctl", ["launchctl", "kill", "--all", "t1", "SIGK"])
    # The command and its own arguments after run's options.
    assert "true" in complete("launchctl", ["launchctl", "run", "--profile", "strict", "tru"])
    assert complete("launchctl", ["launchctl", "run", "--", "tru"]).count("true") >= 1


def test_launchctl_asks_the_daemon_for_ids_and_profiles(tmp_path):
    """Task ids from `launchctl ps`, profiles from `launchctl profiles`, through the socket given."""
    log = tmp_path / "calls"
    fake = tmp_path / "launchctl"
    fake.write_text("#!/bin/sh\n"
                    f"echo \"$*\" >> {shlex.quote(str(log))}\n"
                    "case \"$*\" in\n"
                    "*ps) printf 'ID PID STATE\\nweb-1 10 running\\nweb-2 11 stopped\\njob 12 held\\n' ;;\n"
                    "*profiles) printf 'PROFILE TIER\\ndefault inherit\\nstrict load\\n' ;;\n"
                    "esac\n")
    fake.chmod(0o755)
    assert complete("launchctl", [str(fake), "wait", "web"]) == ["web-1", "web-2"]
    assert complete("launchctl", [str(fake), "--socket", "/s.sock", "run", "--profile", ""]) == ["default", "strict"]
    assert complete("launchctl", [str(fake), "delete", "--socket", "/t.sock", "j"]) == ["job"]
    assert log.read_text().splitlines() == ["ps", "--socket /s.sock profiles", "--socket /t.sock ps"]
    # Only the first argument of these verbs is a task id.
    assert complete("launchctl", [str(fake), "state", "job", ""]) == []


# ---- zygote-runc ------------------------------------------------------------------------------

def runc_commands(build):
    out = []
    for line in help_section(helptext(build, "zygote-runc", "--help"), "COMMANDS:"):
        for pair in re.findall(r"^\s+(\w+)|/ (\w+) ID", line):
            out += [w for w in pair if w]
    return out


def test_zygote_runc_commands(build):
    commands = runc_commands(build)
    assert len(commands) >= 13, commands
    assert complete("zygote-runc", ["zygote-runc", ""]) == sorted(commands)
    assert complete("zygote-runc", ["zygote-runc", "--root", "/run/x", "--debug", "de"]) == ["delete"]


def test_zygote_runc_options_are_the_helps(build):
    text = helptext(build, "zygote-runc", "--help")
    glob = sorted(set(OPTION.findall("\n".join(help_section(text, "GLOBAL OPTIONS:")))))
    assert complete("zygote-runc", ["zygote-runc", "--"]) == glob
    # Each command's line (and its continuation lines) in the help lists its options.
    lines = help_section(text, "COMMANDS:")
    for cmd in runc_commands(build):
        i = next(k for k, l in enumerate(lines) if re.match(rf"\s+{cmd}\b", l) or f"/ {cmd} " in l)
        block = [lines[i]]
        for line in lines[i + 1:]:
            if not re.match(r"\s{5,}\[", line):
                break
            block.append(line)
        want = sorted(set(OPTION.findall("\n".join(block))) | {"--help"})
        assert complete("zygote-runc", ["zygote-runc", cmd, "--"]) == want, cmd


def test_zygote_runc_arguments(tmp_path):
    assert complete("zygote-runc", ["zygote-runc", "--log-format", ""]) == ["json", "text"]
    assert complete("zygote-runc", ["zygote-runc", "list", "--format", "j"]) == ["json"]
    assert complete("zygote-runc", ["zygote-runc", "exec", "--t"]) == ["--tty"]
    d = tmp_path / "bundle-dir"
    d.mkdir()
    assert complete("zygote-runc", ["zygote-runc", "run", "--bundle", str(tmp_path / "bund")]) == [str(d)]
    # container ids from `list -q` under the --root given; kill's second word is a signal
    log = tmp_path / "calls"
    fake = tmp_path / "zygote-runc"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {shlex.quote(str(log))}\nprintf 'c1\\nc2\\nother\\n'\n")
    fake.chmod(0o755)
    assert complete("zygote-runc", [str(fake), "--root", "/r", "kill", "c"]) == ["c1", "c2"]
    assert "KILL" in complete("zygote-runc", [str(fake), "kill", "c1", "K"])
    assert complete("zygote-runc", [str(fake), "exec", "--tty", "--cwd", "/", "c1", "tru"]).count("true") >= 1
    assert complete("zygote-runc", [str(fake), "create", "--bundle", "/b", "n"]) == []  # a new id
    assert log.read_text().splitlines() == ["--root /r list -q"]


# ---- install ----------------------------------------------------------------------------------

def test_install_puts_both_in_the_completions_dir(build, tmp_path):
    cmake_install(build, tmp_path)
    found = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    for prog in ("launchctl", "zygote-runc"):
        hits = [p for p in found if p.endswith(f"/bash-completion/completions/{prog}")]
        assert hits, f"{prog}'s completion not installed"
        with open(hits[0]) as a, open(os.path.join(COMPLETIONS, prog)) as b:
            assert a.read() == b.read()
