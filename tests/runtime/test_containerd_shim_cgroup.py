# SPDX-License-Identifier: MIT
"""containerd-shim-zygote-v2's cgroup calls on a running container (Stats, Pause and Resume,
Update, the OOM watch), through the container library's one cgroup manager: the Task service
spoken by hand, with tests/runtime/test_containerd_shim.py's shim and zygoted."""
import json
import os

import pytest

# its fixtures (and, on sys.path, tests/integration's helpers)
from test_containerd_shim import RUNNING, run, staged, zygoted  # noqa: F401
import shimv2  # noqa: E402
import ttrpcwire as w  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def test_stats_and_pause(run, bundle):
    """Stats: the cgroup's counters as containerd's metrics message of the host's hierarchy;
    Pause and Resume: the freezer, seen in State."""
    bundle.set_args("sleep", "1000")
    r = run()
    r.create()
    with pytest.raises(w.Error) as e:
        r.call("Stats")
    assert e.value.code == w.FAILED_PRECONDITION  # not running yet
    r.call("Start")
    try:
        stats = w.decode(w.first(r.call("Stats"), 1))
    except w.Error as e:
        if e.code == w.PERMISSION_DENIED:
            pytest.skip(f"the container has no cgroup of its own here: {e.message}")
        raise
    url = w.first(stats, 1).decode()
    metrics = w.decode(w.first(stats, 2))
    pids = {"io.containerd.cgroups.v1.Metrics": 2, "io.containerd.cgroups.v2.Metrics": 1}[url]
    assert w.first(w.decode(w.first(metrics, pids)), 1) == 1, metrics  # pids.current: sleep alone
    percpu = "/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu"  # v1: per_cpu as runc fills it, adding up
    if url == "io.containerd.cgroups.v1.Metrics" and os.path.exists(percpu):
        usage, n = w.decode(w.first(w.decode(w.first(metrics, 3)), 1)), len(open(percpu).read().split())
        values = w.packed_varints(w.first(usage, 4, b""))
        assert len(values) == n and sum(values) == w.first(usage, 1) > 0, usage  # sleep is idle
    r.call("Pause")
    assert w.first(r.call("State"), 4) == 4  # PAUSED
    r.call("Resume")
    assert w.first(r.call("State"), 4) == RUNNING
    topics = [t for t, _, _, _ in shimv2.events(r.dir)]
    assert topics[-2:] == ["/tasks/paused", "/tasks/resumed"], topics


def test_update(run, bundle):
    """Update: memory and pids limits written to the container's cgroup by the container library's
    manager, read back with Stats; what it cannot apply is refused by name, in the words of
    `zygote-runc update` (the same manager), and nothing is written then."""
    bundle.set_args("sleep", "1000")
    r = run()
    r.create()
    r.call("Start")
    url = "types.containerd.io/opencontainers/runtime-spec/1/LinuxResources"

    def update(resources):
        data = resources.encode() if isinstance(resources, str) else json.dumps(resources).encode()
        return r.call("Update", (2, [(1, url), (2, data)]))

    def limits():  # the pids and memory limits, as Stats reads them on the host's hierarchy
        stats = w.decode(w.first(r.call("Stats"), 1))
        m, v1 = w.decode(w.first(stats, 2)), w.first(stats, 1) == b"io.containerd.cgroups.v1.Metrics"
        pids = w.decode(w.first(m, 2 if v1 else 1))
        memory = w.first(w.decode(w.first(w.decode(w.first(m, 4)), 33)), 1) if v1 else w.first(w.decode(w.first(m, 4)), 33)
        return w.first(pids, 2), memory

    try:
        update({"memory": {"limit": 48 << 20}, "pids": {"limit": 42}, "devices": []})
    except w.Error as e:
        if e.code == w.PERMISSION_DENIED:
            pytest.skip(f"the container has no cgroup of its own here: {e.message}")
        raise
    assert limits() == (42, 48 << 20)
    refused = "not supported by zygote-runc"
    for bad, code, what in (
            ({"pids": {"limit": 7}, "memory": {"checkBeforeUpdate": True}}, w.UNIMPLEMENTED,
             f"update: linux.resources.memory.checkBeforeUpdate: {refused}"),
            ({"pids": {"limit": 7}, "intelRdt": {}}, w.UNIMPLEMENTED, f"update: linux.resources.intelRdt: {refused}"),
            ({"pids": {"limit": 7}, "devices": [{"allow": True, "access": "rwm"}]}, w.UNIMPLEMENTED,
             f"update: linux.resources.devices: changing the device rules of a container is {refused}"),
            ({"pids": {"limit": "7"}}, w.INVALID_ARGUMENT, "update: linux.resources.pids.limit: not an integer"),
            ("[", w.INVALID_ARGUMENT, "update: linux.resources: not JSON")):
        with pytest.raises(w.Error) as e:
            update(bad)
        assert (e.value.code, e.value.message) == (code, what)
    assert limits() == (42, 48 << 20)  # refused before anything was written


def test_oom_event(run, bundle):
    """A container killed by the kernel for its memory limit: /tasks/oom for each kill (the kernel
    may kill more than one of its processes; the kills and the exit are seen by two threads, so
    either event may go out first)."""
    bundle.config["linux"].setdefault("resources", {})["memory"] = {"limit": 16 << 20}
    bundle.set_args("sh", "-c", 'x=$(head -c 64000000 /dev/zero | tr "\\0" a); echo survived')
    r = run()
    r.create()
    r.call("Start")
    status = w.first(r.call("Wait"), 1, 0)
    if status != 137:
        pytest.skip(f"the memory limit did not end the container here (status {status}: swap?)")
    events = shimv2.events(r.dir)
    topics = [t for t, _, _, _ in events]
    assert topics[:2] == ["/tasks/create", "/tasks/start"], topics
    assert topics.count("/tasks/exit") == 1 and "/tasks/oom" in topics, topics
    assert set(topics[2:]) == {"/tasks/exit", "/tasks/oom"}, topics
    oom = events[topics.index("/tasks/oom")]
    assert (oom[2], w.first(oom[3], 1)) == ("containerd.events.TaskOOM", r.id.encode())
    oom = events[topics.index("/tasks/oom")]
    assert (oom[2], w.first(oom[3], 1)) == ("containerd.events.TaskOOM", r.id.encode())
