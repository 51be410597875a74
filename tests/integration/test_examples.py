# SPDX-License-Identifier: MIT
"""The configuration examples for Podman, Docker, containerd and Kubernetes (examples/), as
`cmake --install` installs them under the doc directory.

Each file is parsed as the tool reads it (TOML with tomllib, JSON, YAML with python3-yaml) and
must add a runtime named "zygote" whose path is the installed zygote-runc (the install prefix's
bin/zygote-runc, which the install put there). Where the tool is on the machine it reads the file
too: `containerd config dump` shows the runtime with its BinaryName, and `podman info` (root, a
private vfs storage in a temporary directory) runs the installed zygote-runc as runtime "zygote"
from the drop-in. Docker's file is parsed here; dockerd runs the example itself (its .in, naming
the build's zygote-runc) in tests/runtime/test_docker.py.

Run: /usr/bin/python3 -m pytest -q tests/integration/test_examples.py --build-dir build
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import tomllib

import pytest

from cmakeinstall import cache_value, cmake_install

TIMEOUT = 120
EXPECTED = {"README.md", "podman-zygote.conf", "docker-daemon.json", "containerd-config.toml",
            "containerd-shim-config.toml", "kubernetes-runtimeclass.yaml"}


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
    assert containerd_runtime(tomllib.loads(r.stdout))["runtime_type"] == "io.containerd.zygote.v2", r.stdout
