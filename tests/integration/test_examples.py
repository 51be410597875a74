# SPDX-License-Identifier: MIT
"""The configuration examples for Podman, Docker, containerd and Kubernetes (examples/), as
`cmake --install` installs them under the doc directory.

Each file is parsed as the tool reads it (TOML with tomllib, JSON, YAML with python3-yaml) and
must add a runtime named "zygote" whose path is the installed zygote-runc (the install prefix's
bin/zygote-runc, which the install put there). Where the tool is on the machine it reads the file
too: `containerd config dump` shows the runtime with its BinaryName, and `podman info` (root, a
private vfs storage in a temporary directory) runs the installed zygote-runc as runtime "zygote"
from the drop-in; each containerd fragment, merged into Debian's config.toml as packaged and into
`containerd config default`'s, keeps the CRI plugin loading in a containerd of the test's own.
Docker's file is parsed here; dockerd runs the example itself (its .in, naming
the build's zygote-runc) in tests/runtime/test_docker.py.

Run: /usr/bin/python3 -m pytest -q tests/integration/test_examples.py --build-dir build
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

import pytest

from cmakeinstall import cache_value, cmake_install

TIMEOUT = 120
EXPECTED = {"README.md", "podman-zygote.conf", "docker-daemon.json", "containerd-config.toml",
            "containerd-shim-config.toml", "kubernetes-runtimeclass.yaml", "zygote-jobs.service",
            "zygote-jobs-profile.json"}


@pytest.fixture(scope="module")
def installed(request, tmp_path_factory):
    """(examples dir in DESTDIR, DESTDIR, the zygote-runc path the examples must name)."""
    build = os.path.abspath(request.config.getoption("--build-dir"))
    if not os.access(os.path.join(build, "zygote-runc"), os.X_OK):
        pytest.fail(f"not built: {build}/zygote-runc")
    dest = str(tmp_path_factory.mktemp("install"))
    cmake_install(build, dest)
    prefix = cache_value(build, "CMAKE_INSTALL_PREFIX")
    # GNUInstallDirs' DOCDIR, DATAROOTDIR/doc/PROJECT_NAME unless set otherwise.
    docdir = cache_value(build, "CMAKE_INSTALL_DOCDIR") or os.path.join(
        cache_value(build, "CMAKE_INSTALL_DATAROOTDIR") or "share", "doc", "zygote")
    examples = os.path.join(dest + prefix, docdir, "examples")
    runc = os.path.join(prefix, "bin", "zygote-runc")
    assert os.access(dest + runc, os.X_OK), f"the install did not put zygote-runc at {runc}"
    return examples, dest, runc


def test_every_example_is_installed(installed):
    examples, _, _ = installed
    assert os.path.isdir(examples), f"no examples directory at {examples}"
    assert set(os.listdir(examples)) == EXPECTED
    for f in EXPECTED:
        assert not re.search(r"@[A-Z_]+@", open(os.path.join(examples, f)).read()), f"{f}: unconfigured @VAR@"


def test_podman_drop_in(installed):
    examples, _, runc = installed
    with open(os.path.join(examples, "podman-zygote.conf"), "rb") as f:
        conf = tomllib.load(f)
    assert conf["engine"]["runtimes"]["zygote"] == [runc]


def test_podman_drop_in_and_its_documentation_agree(installed):
    """docs/CONTAINERS.md's containers.conf names the runtime as the drop-in does ("zygote"), and
    the drop-in carries the default_ulimits line the documentation says some hosts need,
    commented out: uncommented, it is what the documentation shows."""
    examples, _, _ = installed
    with open(os.path.join(examples, "podman-zygote.conf")) as f:
        text = f.read()
    docs = open(os.path.join(os.path.dirname(examples), "docs", "CONTAINERS.md")).read()
    block = docs.split("Podman: `podman --runtime", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    documented = tomllib.loads(block)
    assert set(documented["engine"]["runtimes"]) == set(tomllib.loads(text)["engine"]["runtimes"]) == {"zygote"}
    assert documented["engine"]["runtime"] == "zygote"
    enabled = tomllib.loads(re.sub(r"^# (default_ulimits = )", r"\1", text, flags=re.M))
    assert enabled["containers"]["default_ulimits"] == documented["containers"]["default_ulimits"]


def test_docker_daemon_json(installed):
    examples, _, runc = installed
    with open(os.path.join(examples, "docker-daemon.json")) as f:
        conf = json.load(f)
    assert conf == {"runtimes": {"zygote": {"path": runc}}}


def containerd_runtime(conf):
    return conf["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["zygote"]


def test_containerd_config(installed):
    examples, _, runc = installed
    with open(os.path.join(examples, "containerd-config.toml"), "rb") as f:
        conf = tomllib.load(f)
    assert conf["version"] == 2
    rt = containerd_runtime(conf)
    assert rt["runtime_type"] == "io.containerd.runc.v2"
    assert rt["options"]["BinaryName"] == runc


def test_kubernetes_runtimeclass(installed):
    yaml = pytest.importorskip("yaml", reason="python3-yaml is not installed (scripts/deps.sh --test)")
    examples, _, _ = installed
    with open(os.path.join(examples, "kubernetes-runtimeclass.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    assert len(docs) == 1
    rc = docs[0]
    assert rc["apiVersion"] == "node.k8s.io/v1" and rc["kind"] == "RuntimeClass"
    assert rc["metadata"]["name"] == "zygote"
    # The handler is the runtime's name in containerd's config, either of them.
    for name in ("containerd-config.toml", "containerd-shim-config.toml"):
        with open(os.path.join(examples, name), "rb") as f:
            runtimes = tomllib.load(f)["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
        assert rc["handler"] in runtimes, name


def test_containerd_reads_it(installed):
    if not shutil.which("containerd"):
        pytest.skip("containerd is not installed (scripts/deps.sh --test)")
    examples, _, runc = installed
    r = subprocess.run(["containerd", "--config", os.path.join(examples, "containerd-config.toml"), "config", "dump"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout
    rt = containerd_runtime(tomllib.loads(r.stdout))
    assert rt["runtime_type"] == "io.containerd.runc.v2" and rt["options"]["BinaryName"] == runc, r.stdout
    assert rt["container_annotations"] == ["io.containers.trace-syscall"], r.stdout


def test_podman_runs_the_installed_runtime_from_the_drop_in(installed):
    if not shutil.which("podman"):
        pytest.skip("podman is not installed (scripts/deps.sh --test)")
    if os.geteuid() != 0:
        pytest.skip("needs root: rootless podman needs subordinate ids for its storage")
    examples, dest, runc = installed
    # The drop-in as installed, but naming the binary where DESTDIR put it. CONTAINERS_CONF
    # replaces podman's configuration by this file alone (Podman 4.3 has no CONTAINERS_CONF_OVERRIDE).
    text = open(os.path.join(examples, "podman-zygote.conf")).read()
    assert text.count(f'"{runc}"') == 1
    # podman refuses a runroot path longer than 50 characters: a short directory of its own.
    tmp = tempfile.mkdtemp(prefix="zy-podman-")
    try:
        r = run_podman_info(tmp, text.replace(f'"{runc}"', f'"{dest + runc}"'))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert r.returncode == 0, r.stdout
    name, path, version = r.stdout.split(" ", 2)
    assert (name, path) == ("zygote", dest + runc) and version.startswith("zygote-runc version"), r.stdout


def run_podman_info(tmp, conf_text):
    conf = os.path.join(tmp, "containers.conf")
    with open(conf, "w") as f:
        f.write(conf_text)
    return subprocess.run(["podman", "--root", os.path.join(tmp, "root"), "--runroot", os.path.join(tmp, "run"),
                           "--storage-driver", "vfs", "--runtime", "zygote", "info", "--format",
                           "{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}} {{.Host.OCIRuntime.Version}}"],
                          env=dict(os.environ, CONTAINERS_CONF=conf), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)


def test_containerd_reads_the_shim_config(installed):
    """The CRI plugin's runtime "zygote" is the shim's runtime type (test_cri.py runs pods with it)."""
    if not shutil.which("containerd"):
        pytest.skip("containerd is not installed (scripts/deps.sh --test)")
    examples, _, _ = installed
    r = subprocess.run(["containerd", "--config", os.path.join(examples, "containerd-shim-config.toml"), "config",
                        "dump"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout
    rt = containerd_runtime(tomllib.loads(r.stdout))
    assert rt["runtime_type"] == "io.containerd.zygote.v2", r.stdout
    # a container annotated to record passes its annotation on (test_cri.py's recorded pod)
    assert rt["container_annotations"] == ["io.containers.trace-syscall"], r.stdout


# /etc/containerd/config.toml as Debian 12's containerd 1.6.20 package installs it: a CRI section
# that declares no runtime
DEBIAN_CONFIG_TOML = """version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
"""


def merged(base, fragment):
    """fragment merged into base as a person merges a config.toml fragment: tables both have are
    merged key by key, the fragment's values win."""
    out = dict(base)
    for k, v in fragment.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def toml_text(d, path=()):
    """d as TOML (tables, strings, numbers, booleans, arrays of those: what containerd's config
    holds)."""
    def key(k):
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list) and not any(isinstance(x, dict) for x in v):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise ValueError(f"{'.'.join(path)}: {v!r} is not written here")

    lines = ["[" + ".".join(key(p) for p in path) + "]"] if path else []
    lines += [f"{key(k)} = {value(v)}" for k, v in d.items() if not isinstance(v, dict)]
    for k, v in d.items():
        if isinstance(v, dict):
            lines += toml_text(v, path + (k,))
    return lines


def cri_plugin_status(conf, workdir):
    """Starts a containerd of its own on conf (its root, state, sockets in workdir, as
    tests/runtime/containertools.py's) and returns the CRI plugin's status in `ctr plugins ls`."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime"))
    from containertools import start_logged
    sock = os.path.join(workdir, "containerd.sock")
    conf = merged(conf, {"root": f"{workdir}/root", "state": f"{workdir}/state", "grpc": {"address": sock},
                         "ttrpc": {"address": sock + ".ttrpc"}, "debug": {"address": ""},
                         "metrics": {"address": ""},
                         "plugins": {"io.containerd.internal.v1.opt": {"path": f"{workdir}/opt"}}})
    path = os.path.join(workdir, "config.toml")
    with open(path, "w") as f:
        f.write("\n".join(toml_text(conf)) + "\n")
    log = os.path.join(workdir, "containerd.log")
    proc, drainer, booted = start_logged(["containerd", "--config", path], None, log,
                                         "containerd successfully booted", TIMEOUT)
    try:
        assert booted and proc.poll() is None, open(log, errors="replace").read()[-2000:]
        r = subprocess.run(["ctr", "--address", sock, "plugins", "ls"], capture_output=True, text=True,
                           timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        rows = [line.split() for line in r.stdout.splitlines()]
        status = [f[-1] for f in rows if f[:2] == ["io.containerd.grpc.v1", "cri"]]
        errors = [line for line in open(log, errors="replace") if "io.containerd.grpc.v1.cri" in line]
        return (status[0] if status else None), errors
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
        drainer.join(timeout=TIMEOUT)


@pytest.mark.parametrize("fragment", ["containerd-config.toml", "containerd-shim-config.toml"])
@pytest.mark.parametrize("base", ["debian-package", "config-default"])
def test_the_cri_plugin_loads_with_the_fragment_merged(installed, base, fragment, tmp_path):
    """Merged into Debian's config.toml as packaged (no runtime declared) or into `containerd config
    default`'s, each fragment keeps containerd's CRI plugin loading (its default runtime, runc,
    still declared), beside the runtime "zygote": Kubernetes keeps its runtime on the node."""
    if not shutil.which("containerd") or not shutil.which("ctr"):
        pytest.skip("containerd is not installed (scripts/deps.sh --test)")
    if os.geteuid() != 0:
        pytest.skip("containerd's snapshotters need root")
    examples, _, _ = installed
    if base == "debian-package":
        conf = tomllib.loads(DEBIAN_CONFIG_TOML)
    else:
        r = subprocess.run(["containerd", "config", "default"], capture_output=True, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        conf = tomllib.loads(r.stdout)
    with open(os.path.join(examples, fragment), "rb") as f:
        conf = merged(conf, tomllib.load(f))
    status, errors = cri_plugin_status(conf, str(tmp_path))
    assert status == "ok", errors
    assert set(containerd_runtime(conf).keys()) >= {"runtime_type"}
    assert set(conf["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]) >= {"runc", "zygote"}


def markdown_links(path):
    """The relative links of a markdown file (no scheme, no bare anchor), their anchors cut."""
    with open(path) as f:
        text = f.read()
    return [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]


def test_the_installed_readmes_links_hold(installed):
    """The installed README and docs link to files the install put there (the package's docs/ is
    the source tree's). Links into tests/ name the source tree's results and are left out."""
    examples, _, _ = installed
    docdir = os.path.dirname(examples)
    pages = [os.path.join(docdir, "README.md")] + [os.path.join(docdir, "docs", f)
                                                  for f in os.listdir(os.path.join(docdir, "docs"))]
    broken = [(os.path.relpath(p, docdir), link) for p in pages for link in markdown_links(p)
              if not link.startswith("tests/") and not os.path.exists(os.path.join(os.path.dirname(p), link))]
    assert broken == []
    # every page of docs/ that a link names is installed, not only some
    assert set(os.listdir(os.path.join(docdir, "docs"))) >= {
        os.path.basename(link) for link in markdown_links(pages[0]) if link.startswith("docs/")}


def test_readme_install_routes_start_with_the_build_dependencies(installed):
    """Each way to install in the README (from the clone, as a Debian package) runs
    scripts/deps.sh before its first build: a fresh Debian 12 has neither compiler nor libraries."""
    examples, _, _ = installed
    with open(os.path.join(os.path.dirname(examples), "README.md")) as f:
        install = f.read().split("## Install", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"((?:^    .*\n)+)", install, re.M)
    builds = [b for b in blocks if "cmake -S" in b]
    assert len(builds) == 2, install
    for b in builds:
        assert "scripts/deps.sh" in b.split("cmake -S")[0], b
