# SPDX-License-Identifier: MIT
"""linux.memoryPolicy (runtime-spec 1.3): the NUMA memory policy the container's process runs
under, set by the init with set_mempolicy(2) before it runs anything of the container
(engine/sandbox-numa.c), as runc 1.3 and crun set it; read back from inside in
/proc/self/numa_maps, which shows the task's policy on every mapping that has none of its own.
Bad modes, node lists and flags are refused naming the field, before any process exists. What
needs a second NUMA node skips, saying so, on a host with one. Run by ctest runtime-cli."""
import ctypes
import json
import os
import platform
import uuid

import pytest

from containertools import processes_naming


SYS_set_mempolicy = {"x86_64": 238, "aarch64": 237}.get(platform.machine(), 238)


def cid():
    return "mp-" + uuid.uuid4().hex[:12]


def online_nodes():
    try:
        with open("/sys/devices/system/node/online") as f:
            text = f.read().strip()
    except OSError:
        return []
    nodes = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        nodes += range(int(a), int(b or a) + 1)
    return nodes


@pytest.fixture
def numa():
    if not os.path.exists("/proc/self/numa_maps"):
        pytest.skip("this kernel has no NUMA support (no /proc/self/numa_maps)")
    return online_nodes()


def with_policy(bundle, policy, script="head -n 1 /proc/self/numa_maps"):
    if policy is not None:
        bundle.config["linux"]["memoryPolicy"] = policy
    bundle.set_args("sh", "-c", script)


def policy_word(line):
    """numa_maps' policy field: what follows the address, up to the first key=value."""
    rest = line.split(" ", 1)[1]
    words = []
    for w in rest.split(" "):
        if "=" in w and not w.startswith(("bind=", "interleave=", "prefer=", "weighted")):
            break
        words.append(w)
    return " ".join(words)


def run_policy(runc, bundle, policy):
    with_policy(bundle, policy)
    name = cid()
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    return policy_word(r.stdout.splitlines()[0])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy,shown", [
    ({"mode": "MPOL_BIND", "nodes": "0"}, "bind:0"),
    ({"mode": "MPOL_INTERLEAVE", "nodes": "0"}, "interleave:0"),
    ({"mode": "MPOL_PREFERRED", "nodes": "0"}, "prefer:0"),
    ({"mode": "MPOL_PREFERRED"}, "local"),  # no node: local allocation
    ({"mode": "MPOL_LOCAL"}, "local"),
    ({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES"]}, "bind=static:0"),
    ({"mode": "MPOL_INTERLEAVE", "nodes": "0", "flags": ["MPOL_F_RELATIVE_NODES"]}, "interleave=relative:0"),
    ({"mode": "MPOL_PREFERRED_MANY", "nodes": "0"}, "prefer (many):0"),
])
def test_policy_read_back_inside(runc, bundle, numa, policy, shown):
    assert 0 in numa, f"node 0 is not online here ({numa})"
    assert run_policy(runc, bundle, policy) == shown


@pytest.fixture
def interleaved_runtime(numa):
    """This thread (and so the runtime it starts) under MPOL_INTERLEAVE on node 0, for the test."""
    libc = ctypes.CDLL(None, use_errno=True)
    mask = (ctypes.c_ulong * 1)(1)
    if libc.syscall(SYS_set_mempolicy, 3, mask, ctypes.c_ulong(2)) != 0:  # MPOL_INTERLEAVE
        pytest.skip(f"set_mempolicy: {os.strerror(ctypes.get_errno())}")
    yield
    assert libc.syscall(SYS_set_mempolicy, 0, None, ctypes.c_ulong(0)) == 0  # MPOL_DEFAULT


@pytest.mark.timeout(60)
def test_default_resets_the_runtimes(runc, bundle, interleaved_runtime):
    # no memoryPolicy leaves the one the runtime runs under (inherited, as runc leaves it);
    # MPOL_DEFAULT is set, not skipped as "nothing to do"
    assert run_policy(runc, bundle, None) == "interleave:0"
    assert run_policy(runc, bundle, {"mode": "MPOL_DEFAULT"}) == "default"


@pytest.mark.timeout(60)
def test_exec_gets_the_policy(runc, bundle, numa):
    with_policy(bundle, {"mode": "MPOL_INTERLEAVE", "nodes": "0"}, "sleep 1000")
    name = cid()
    assert runc("run", "--detach", "--bundle", bundle.path, name).returncode == 0
    try:
        r = runc("exec", name, "head", "-n", "1", "/proc/self/numa_maps")
        assert r.returncode == 0, r.stderr
        assert policy_word(r.stdout) == "interleave:0"
    finally:
        assert runc("delete", "--force", name).returncode == 0


@pytest.mark.timeout(60)
def test_interleave_across_two_nodes(runc, bundle, numa):
    if len(numa) < 2:
        pytest.skip(f"needs two online NUMA nodes, this host has {len(numa)} ({numa})")
    nodes = f"{numa[0]},{numa[1]}"
    assert run_policy(runc, bundle, {"mode": "MPOL_INTERLEAVE", "nodes": nodes}) == f"interleave:{nodes}"


def refused(runc, bundle, policy, words):
    with_policy(bundle, policy, "echo ran")
    name = cid()
    r = runc("run", "--bundle", bundle.path, name)
    assert r.returncode != 0
    assert "ran" not in r.stdout
    for w in words:
        assert w in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(runc.root, name)), "state directory left behind"
    assert processes_naming(name) == []
    return r


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy,words", [
    ({"mode": "MPOL_WHATEVER", "nodes": "0"}, ["linux.memoryPolicy.mode", "MPOL_WHATEVER"]),
    ({"mode": "MPOL_BIND"}, ["linux.memoryPolicy", "MPOL_BIND needs nodes"]),
    ({"mode": "MPOL_LOCAL", "nodes": "0"}, ["MPOL_LOCAL takes no nodes"]),
    ({"mode": "MPOL_BIND", "nodes": "0-"}, ["linux.memoryPolicy.nodes", "0-"]),
    ({"mode": "MPOL_BIND", "nodes": "70000"}, ["linux.memoryPolicy.nodes"]),
    ({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_BOGUS"]}, ["linux.memoryPolicy.flags[0]"]),
    ({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES"]},
     ["exclude each other"]),
    ({"mode": "MPOL_BIND", "nodes": "1000"}, ["linux.memoryPolicy.nodes", "node 1000 is not online"]),
])
def test_bad_policy_refused_by_name(runc, bundle, numa, policy, words):
    refused(runc, bundle, policy, words)


@pytest.mark.timeout(60)
def test_kernel_refusal_is_the_inits_report(runc, bundle, numa):
    # static nodes are not checked against the online ones (the kernel takes them as given), and
    # none of these is: the kernel refuses a bind to no usable node (EINVAL), in the init, which
    # reports the step
    if 1000 in numa:
        pytest.skip("node 1000 is online here")
    refused(runc, bundle, {"mode": "MPOL_BIND", "nodes": "1000", "flags": ["MPOL_F_STATIC_NODES"]},
            ["memoryPolicy", "invalid argument"])


@pytest.mark.timeout(60)
def test_features_lists_modes_and_flags(runc):
    r = runc("features")
    assert r.returncode == 0, r.stderr
    mp = json.loads(r.stdout)["linux"]["memoryPolicy"]
    assert set(mp["modes"]) == {"MPOL_DEFAULT", "MPOL_BIND", "MPOL_INTERLEAVE", "MPOL_WEIGHTED_INTERLEAVE",
                                "MPOL_PREFERRED", "MPOL_PREFERRED_MANY", "MPOL_LOCAL"}
    assert set(mp["flags"]) == {"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES", "MPOL_F_STATIC_NODES"}
