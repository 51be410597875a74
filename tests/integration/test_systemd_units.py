# SPDX-License-Identifier: MIT
"""The systemd unit files, as `cmake --install` installs them (docs/SYSTEMD.md).

The build is installed with DESTDIR into a temporary directory. `systemd-analyze verify` then
checks the installed units in a private mount namespace where the installed sbin directory is
bind-mounted at the configured one, so that ExecStart= names exactly the binary the install put
there (verify refuses a unit whose ExecStart binary does not exist). verify exits 0 even for
unknown keys and bad values (it only warns), so any output at all is a failure; a deliberately
broken copy shows that such warnings are caught. man:zygoted(8) in Documentation= is looked up
in the installed man pages; the SYSTEMD.md it names is installed. `systemctl --root` on the
install tree shows that enabling zygoted.service enables only the socket (no start at boot).

Run: /usr/bin/python3 -m pytest -q tests/integration/test_systemd_units.py (ZYGOTE_BUILD_DIR=build)
"""
import os
import re
import shutil
import subprocess

import pytest

from cmakeinstall import cache_value, cmake_install

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 120

# Options systemd implements with a seccomp filter (systemd.exec(5)), and NoNewPrivileges=,
# which every task would inherit. None may appear in zygoted's units (docs/ARCHITECTURE.md).
SECCOMP_BACKED = {
    "SystemCallFilter", "SystemCallArchitectures", "SystemCallErrorNumber", "SystemCallLog",
    "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID",
    "MemoryDenyWriteExecute", "LockPersonality", "PrivateDevices", "ProtectKernelModules",
    "ProtectKernelTunables", "ProtectKernelLogs", "ProtectClock", "ProtectHostname", "DynamicUser",
    "NoNewPrivileges",
}


def build_dir(config):
    opt = getattr(config.option, "build_dir", None)
    return os.path.abspath(os.environ.get("ZYGOTE_BUILD_DIR") or opt or os.path.join(SOURCE_DIR, "build"))


@pytest.fixture(scope="module")
def installed(request, tmp_path_factory):
    """DESTDIR install of the build; returns (destdir, prefix)."""
    build = build_dir(request.config)
    if not os.path.exists(os.path.join(build, "zygoted")):
        pytest.fail(f"not built: {build}/zygoted")
    dest = str(tmp_path_factory.mktemp("install"))
    cmake_install(build, dest)
    return dest, cache_value(build, "CMAKE_INSTALL_PREFIX")


def unit_dir(installed, kind):
    dest, prefix = installed
    return os.path.join(dest + prefix, "lib", "systemd", kind)


def read_unit(path):
    """Unit file -> {section: {key: [values]}} (keys may repeat)."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = out.setdefault(line.strip("[]"), {})
                continue
            k, _, v = line.partition("=")
            section.setdefault(k.strip(), []).append(v.strip())
    return out


def exec_start(unit):
    return read_unit(unit)["Service"]["ExecStart"][0].split()[0]


@pytest.fixture(scope="module")
def verify(installed):
    """Runs systemd-analyze verify on unit files with the installed ExecStart binary in place."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1): a private mount namespace puts the installed zygoted at "
                    "its configured path")
    dest, _ = installed

    def run(units, user=False, runtime_dir=None):
        binary = exec_start(next(u for u in units if u.endswith(".service")))
        bindir = os.path.dirname(binary)
        if not os.path.isdir(bindir):
            pytest.skip(f"{bindir} does not exist on this machine to mount the installed one over")
        assert os.access(dest + binary, os.X_OK), f"the install did not put ExecStart's {binary} in place"
        # Documentation=man:zygoted(8) is checked with man(1): against the installed pages, or
        # not at all when the build had no scdoc to make them or the machine has no man(1) (a
        # minimal Debian; that the page is installed is checked on its own below).
        mandir = os.path.join(dest + installed[1], "share", "man")
        has_page = os.path.exists(os.path.join(mandir, "man8", "zygoted.8"))
        look_up = has_page and shutil.which("man") is not None
        cmd = (["systemd-analyze", "--no-pager"] + (["--user"] if user else []) + ["verify"] +
               ([] if look_up else ["--man=no"]) + units)
        env = dict(os.environ, SYSTEMD_LOG_COLOR="0", MANPATH=mandir)
        if runtime_dir:
            env["XDG_RUNTIME_DIR"] = runtime_dir
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", dest + bindir, bindir, *cmd],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
        return r.returncode, r.stdout.decode()
    return run


def test_verify_system_units(installed, verify):
    d = unit_dir(installed, "system")
    rc, out = verify([os.path.join(d, "zygoted.socket"), os.path.join(d, "zygoted.service")])
    assert rc == 0 and out == "", out


def test_verify_user_units(installed, verify, tmp_path):
    d = unit_dir(installed, "user")
    rt = tmp_path / "runtime"
    rt.mkdir(mode=0o700)
    rc, out = verify([os.path.join(d, "zygoted.socket"), os.path.join(d, "zygoted.service")], user=True,
                     runtime_dir=str(rt))
    assert rc == 0 and out == "", out


def test_verify_catches_mistakes(installed, verify, tmp_path):
    """The check above is real: a misspelt key and a bad value in a copy are reported."""
    d = unit_dir(installed, "system")
    shutil.copy(os.path.join(d, "zygoted.socket"), tmp_path / "zygoted.socket")
    text = open(os.path.join(d, "zygoted.service")).read()
    text = text.replace("KillMode=process", "KillMode=procss\nWatchdogSecs=30s")
    (tmp_path / "zygoted.service").write_text(text)
    rc, out = verify([str(tmp_path / "zygoted.socket"), str(tmp_path / "zygoted.service")])
    assert "procss" in out and "WatchdogSecs" in out, out


def test_units_say_what_the_issue_asks(installed):
    system, user = unit_dir(installed, "system"), unit_dir(installed, "user")
    sock = read_unit(os.path.join(system, "zygoted.socket"))["Socket"]
    assert sock["ListenStream"] == ["/run/zygote/zygoted.sock"]
    assert sock["SocketMode"] == ["0660"] and sock["SocketGroup"] == ["zygote"]
    # stopped (the package's removal stops it), the unit takes its socket away: none left stale
    assert sock["RemoveOnStop"] == ["yes"]
    usock = read_unit(os.path.join(user, "zygoted.socket"))["Socket"]
    assert usock["ListenStream"] == ["%t/zygote/zygoted.sock"]

    dest, prefix = installed
    with open(os.path.join(SOURCE_DIR, "daemon", "task.h")) as f:
        max_tasks = int(re.search(r"#define ZD_MAX_TASKS (\d+)", f.read()).group(1))
    for path, store_min in ((os.path.join(system, "zygoted.service"), max_tasks),
                            (os.path.join(user, "zygoted.service"), 1024)):
        unit = read_unit(path)
        svc = unit["Service"]
        assert svc["Type"] == ["notify"] and svc["NotifyAccess"] == ["main"]
        assert svc["KillMode"] == ["process"], "tasks must outlive the daemon"
        assert int(svc["FileDescriptorStoreMax"][0]) > store_min
        assert svc["WatchdogSec"] and svc["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
        assert svc["ExecStart"] == [os.path.join(prefix, "sbin", "zygoted")]
        assert os.access(dest + svc["ExecStart"][0], os.X_OK)
        assert unit["Unit"]["Requires"] == ["zygoted.socket"]
        present = {k for section in unit.values() for k in section}
        assert not present & SECCOMP_BACKED, f"{path}: {present & SECCOMP_BACKED} would filter every task"
        # The comment that says why they are absent.
        assert "SystemCallFilter=" in open(path).read()


def test_sysusers_creates_the_group(installed, tmp_path):
    tool = shutil.which("systemd-sysusers")
    if not tool:
        pytest.skip("systemd-sysusers is not installed")
    dest, prefix = installed
    conf = os.path.join(dest + prefix, "lib", "sysusers.d", "zygote.conf")
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    r = subprocess.run([tool, f"--root={root}", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout.decode()
    groups = {line.split(":")[0]: int(line.split(":")[2]) for line in open(root / "etc" / "group")}
    assert "zygote" in groups and groups["zygote"] < 1000, groups  # a system group


def test_each_unit_names_its_installed_documentation(installed, request):
    """Documentation= names zygoted(8) and the installed SYSTEMD.md, which the install put there."""
    dest, prefix = installed
    for kind in ("system", "user"):
        for name in ("zygoted.socket", "zygoted.service"):
            docs = " ".join(read_unit(os.path.join(unit_dir(installed, kind), name))["Unit"]["Documentation"]).split()
            assert "man:zygoted(8)" in docs, (kind, name, docs)
            files = [d[len("file://"):] for d in docs if d.startswith("file://")]
            assert files and all(os.path.isfile(dest + f) for f in files), (kind, name, docs)
            assert any(f.endswith("/SYSTEMD.md") and f.startswith(prefix + "/") for f in files), (kind, name, docs)
    # the page the units name is installed too (when scdoc built it)
    build = build_dir(request.config)
    if os.path.isdir(os.path.join(build, "man")) and os.path.exists(os.path.join(build, "man", "zygoted.8")):
        assert any(f == "zygoted.8" for _, _, fs in os.walk(dest) for f in fs)


def test_enabling_the_service_enables_only_the_socket(installed):
    """`systemctl enable zygoted.service` (and --user) makes the daemon start on the first call, not
    at boot or login: the service's [Install] has Also=zygoted.socket and no WantedBy=, the socket
    is wanted by sockets.target. Checked on the units' text and by systemctl --root on the
    install tree, which makes the links it would make on a real system."""
    for kind in ("system", "user"):
        svc = read_unit(os.path.join(unit_dir(installed, kind), "zygoted.service"))["Install"]
        assert svc == {"Also": ["zygoted.socket"]}, (kind, svc)
        sock = read_unit(os.path.join(unit_dir(installed, kind), "zygoted.socket"))["Install"]
        assert sock == {"WantedBy": ["sockets.target"]}, (kind, sock)

    tool = shutil.which("systemctl")
    if not tool:
        pytest.skip("systemctl is not installed (Debian package systemd)")
    dest, prefix = installed
    if prefix not in ("/usr", "/usr/local"):
        pytest.skip(f"systemd looks for units under /usr and /usr/local only, not under {prefix}")

    def links(top):
        out = {}
        for d, _, fs in os.walk(os.path.join(dest, top)):
            for f in fs:
                p = os.path.join(d, f)
                if os.path.islink(p):
                    out[os.path.relpath(p, os.path.join(dest, top))] = os.readlink(p)
        return out

    for args, top in ((["--root", dest], "etc/systemd/system"), (["--root", dest, "--global"], "etc/systemd/user")):
        r = subprocess.run([tool, *args, "enable", "zygoted.service"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stdout
        made = links(top)
        assert list(made) == ["sockets.target.wants/zygoted.socket"], (args, made, r.stdout)
        assert made["sockets.target.wants/zygoted.socket"].endswith("/zygoted.socket")
        # Disabling the service disables the socket with it.
        r = subprocess.run([tool, *args, "disable", "zygoted.service"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stdout
        assert links(top) == {}, (args, links(top), r.stdout)
