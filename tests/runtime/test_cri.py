# SPDX-License-Identifier: MIT
"""Kubernetes' path to zygote: the CRI calls the kubelet makes for a pod with one container, sent to
containerd's CRI plugin (a containerd of the test's own) with the runtime handler `zygote`
(containerd-shim-zygote-v2 and a zygoted of the test's own) and, as the baseline, `runc` (the runc
v2 shim with runc). Each sequence is timed; the medians are printed for the benchmark table.

The client is grpc's generic unary calls on `runtime.v1.RuntimeService` with the messages the test
sends and receives, built here from their field numbers in the published runtime.v1 API (the CRI
.proto is not packaged in Debian 12). Pods use the host's network (no CNI plugin needed); the
sandbox image is the offline busybox rootfs with `sleep` as its entrypoint (make-image.sh --pause).

Needs root, containerd (with its CRI plugin), runc, python3-grpcio and python3-protobuf; skips,
with the reason, where one is missing or where containerd cannot run a pod even with runc.
"""
import json
import os
import statistics
import sys
import time
import uuid

import pytest

import containertools as ct
from conftest import BUILD_DIR, SOURCE_DIR

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import zytest  # noqa: E402

# Imported here, missing ones reported by the fixture as the tests' skip (a module skipped at
# collection would leave pytest without a test, which ctest would count as a failure).
try:
    import grpc
except ImportError:
    grpc = None
try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError:
    descriptor_pb2 = None

pytestmark = pytest.mark.timeout(240)

RUNS = int(os.environ.get("ZYGOTE_CRI_RUNS", "5"))  # sequences per handler, for the medians
SHIM = "containerd-shim-zygote-v2"
# podman's recording annotation, which zygoted honours (docs/RECORDING.md); containerd's CRI puts a
# container's annotation into its OCI spec only where the handler's container_annotations lists it
TRACE = "io.containers.trace-syscall"

# ---- the messages of runtime.v1 that the test uses ------------------------------------------------
# Field numbers as the API publishes them (k8s.io/cri-api, runtime/v1); enums are sent as int32,
# which has the same encoding. Each field: (name, number, type), type a scalar name, a message
# name, "[]" before it for a repeated field, or "map" for a map<string, string>.

NODE, CONTAINER, POD = 2, 1, 0  # NamespaceMode
RUNTIME_DEFAULT, LOCALHOST = 0, 2  # SecurityProfile.ProfileType
CREATED, RUNNING, EXITED = 0, 1, 2  # ContainerState
SANDBOX_READY, SANDBOX_NOTREADY = 0, 1  # PodSandboxState

MESSAGES = {
    "VersionRequest": [("version", 1, "string")],
    "VersionResponse": [("version", 1, "string"), ("runtime_name", 2, "string"), ("runtime_version", 3, "string"),
                        ("runtime_api_version", 4, "string")],
    "PodSandboxMetadata": [("name", 1, "string"), ("uid", 2, "string"), ("namespace", 3, "string"),
                           ("attempt", 4, "uint32")],
    "NamespaceOption": [("network", 1, "int32"), ("pid", 2, "int32"), ("ipc", 3, "int32")],
    "LinuxSandboxSecurityContext": [("namespace_options", 1, "NamespaceOption")],
    "LinuxPodSandboxConfig": [("cgroup_parent", 1, "string"), ("security_context", 2, "LinuxSandboxSecurityContext")],
    "PodSandboxConfig": [("metadata", 1, "PodSandboxMetadata"), ("hostname", 2, "string"),
                         ("log_directory", 3, "string"), ("labels", 6, "map"), ("annotations", 7, "map"),
                         ("linux", 8, "LinuxPodSandboxConfig")],
    "RunPodSandboxRequest": [("config", 1, "PodSandboxConfig"), ("runtime_handler", 2, "string")],
    "RunPodSandboxResponse": [("pod_sandbox_id", 1, "string")],
    "StopPodSandboxRequest": [("pod_sandbox_id", 1, "string")],
    "StopPodSandboxResponse": [],
    "RemovePodSandboxRequest": [("pod_sandbox_id", 1, "string")],
    "RemovePodSandboxResponse": [],
    "PodSandboxStatusRequest": [("pod_sandbox_id", 1, "string"), ("verbose", 2, "bool")],
    "PodSandboxStatus": [("id", 1, "string"), ("state", 3, "int32"), ("runtime_handler", 9, "string")],
    "PodSandboxStatusResponse": [("status", 1, "PodSandboxStatus"), ("info", 2, "map")],
    "ImageSpec": [("image", 1, "string")],
    "KeyValue": [("key", 1, "string"), ("value", 2, "string")],
    "ContainerMetadata": [("name", 1, "string"), ("attempt", 2, "uint32")],
    "SecurityProfile": [("profile_type", 1, "int32"), ("localhost_ref", 2, "string")],
    "Mount": [("container_path", 1, "string"), ("host_path", 2, "string"), ("readonly", 3, "bool")],
    "LinuxContainerSecurityContext": [("namespace_options", 3, "NamespaceOption"), ("seccomp", 15, "SecurityProfile")],
    "LinuxContainerConfig": [("security_context", 2, "LinuxContainerSecurityContext")],
    "ContainerConfig": [("metadata", 1, "ContainerMetadata"), ("image", 2, "ImageSpec"), ("command", 3, "[]string"),
                        ("args", 4, "[]string"), ("envs", 6, "[]KeyValue"), ("mounts", 7, "[]Mount"),
                        ("labels", 9, "map"),
                        ("annotations", 10, "map"), ("log_path", 11, "string"), ("linux", 15, "LinuxContainerConfig")],
    "CreateContainerRequest": [("pod_sandbox_id", 1, "string"), ("config", 2, "ContainerConfig"),
                               ("sandbox_config", 3, "PodSandboxConfig")],
    "CreateContainerResponse": [("container_id", 1, "string")],
    "StartContainerRequest": [("container_id", 1, "string")],
    "StartContainerResponse": [],
    "StopContainerRequest": [("container_id", 1, "string"), ("timeout", 2, "int64")],
    "StopContainerResponse": [],
    "RemoveContainerRequest": [("container_id", 1, "string")],
    "RemoveContainerResponse": [],
    "ContainerStatusRequest": [("container_id", 1, "string"), ("verbose", 2, "bool")],
    "ContainerStatus": [("id", 1, "string"), ("state", 3, "int32"), ("created_at", 4, "int64"),
                        ("started_at", 5, "int64"), ("finished_at", 6, "int64"), ("exit_code", 7, "int32"),
                        ("reason", 10, "string"), ("message", 11, "string")],
    "ContainerStatusResponse": [("status", 1, "ContainerStatus"), ("info", 2, "map")],
    "ExecSyncRequest": [("container_id", 1, "string"), ("cmd", 2, "[]string"), ("timeout", 3, "int64")],
    "ExecSyncResponse": [("stdout", 1, "bytes"), ("stderr", 2, "bytes"), ("exit_code", 3, "int32")],
}

# the calls: method -> (request, response)
METHODS = {name: (name + "Request", name + "Response") for name in (
    "Version", "RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "PodSandboxStatus", "CreateContainer",
    "StartContainer", "StopContainer", "RemoveContainer", "ContainerStatus", "ExecSync")}


def build_messages(package="runtime.v1"):
    F = descriptor_pb2.FieldDescriptorProto
    scalars = {"string": F.TYPE_STRING, "bool": F.TYPE_BOOL, "int32": F.TYPE_INT32, "int64": F.TYPE_INT64,
               "uint32": F.TYPE_UINT32, "bytes": F.TYPE_BYTES}
    fdp = descriptor_pb2.FileDescriptorProto(name="zygote-test-cri-runtime-v1.proto", package=package,
                                             syntax="proto3")
    for mname, fields in MESSAGES.items():
        m = fdp.message_type.add(name=mname)
        for fname, number, ftype in fields:
            f = m.field.add(name=fname, number=number, label=F.LABEL_OPTIONAL)
            if ftype == "map":
                entry = "".join(p.capitalize() for p in fname.split("_")) + "Entry"
                e = m.nested_type.add(name=entry)
                e.options.map_entry = True
                e.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING)
                e.field.add(name="value", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING)
                f.label, f.type, f.type_name = F.LABEL_REPEATED, F.TYPE_MESSAGE, f".{package}.{mname}.{entry}"
                continue
            if ftype.startswith("[]"):
                f.label, ftype = F.LABEL_REPEATED, ftype[2:]
            if ftype in scalars:
                f.type = scalars[ftype]
            else:
                f.type, f.type_name = F.TYPE_MESSAGE, f".{package}.{ftype}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    get = getattr(message_factory, "GetMessageClass", None)  # protobuf >= 4.21
    factory = None if get else message_factory.MessageFactory(pool)
    classes = {}
    for mname in MESSAGES:
        d = pool.FindMessageTypeByName(f"{package}.{mname}")
        classes[mname] = get(d) if get else factory.GetPrototype(d)
    return classes


class Cri:
    """runtime.v1.RuntimeService over containerd's socket: cri.Call(field=value, ...) returns the
    response message; cri.msg(name, ...) makes a message to put in a request."""

    def __init__(self, address, timeout=60):
        self.types = build_messages()
        self.channel = grpc.insecure_channel(address)
        self.timeout = timeout
        self.calls = {}
        for method, (req, resp) in METHODS.items():
            self.calls[method] = self.channel.unary_unary(
                f"/runtime.v1.RuntimeService/{method}", request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=self.types[resp].FromString)

    def msg(self, message, /, **fields):
        return self.types[message](**fields)

    def __getattr__(self, method):
        if method not in METHODS:
            raise AttributeError(method)
        req = METHODS[method][0]
        return lambda **fields: self.calls[method](self.types[req](**fields), timeout=self.timeout)

    def close(self):
        self.channel.close()


# ---- fixtures ------------------------------------------------------------------------------------

def image_archive(*args):
    import subprocess
    r = subprocess.run([os.path.join(SOURCE_DIR, "tests", "runtime", "make-image.sh"), BUILD_DIR, *args],
                       capture_output=True, text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.fixture(scope="module")
def zygoted():
    if grpc is None or descriptor_pb2 is None:
        pytest.skip("no python3-grpcio or python3-protobuf (scripts/deps.sh --test)")
    if os.geteuid() != 0:
        pytest.skip("containerd's CRI plugin and zygoted's containers need root")
    shim = os.path.join(BUILD_DIR, SHIM)
    if not os.access(shim, os.X_OK):
        pytest.fail(f"not built: {shim}")
    stage, bins = zytest.stage_build(BUILD_DIR, SOURCE_DIR)
    d = zytest.Daemon(bins, zytest.make_workdir())
    try:
        d.start()
        yield d
        assert d.stop() == 0, d.log()
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()
        zytest.remove_workdir(d.dir)
        zytest.remove_workdir(stage)


@pytest.fixture(scope="module")
def cri(zygoted):
    """containerd with the CRI plugin; handlers runc and zygote (the shim by its name on the PATH
    of containerd, a directory with a symlink to the build's shim first; the shim talks to the
    test's zygoted through $ZYGOTE_SOCKET, containerd's environment being its own)."""
    import shutil
    for tool in ("containerd", "ctr", "containerd-shim-runc-v2", "runc"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (Debian packages containerd, runc)")
    busybox, pause = image_archive(), image_archive("--pause")
    workdir = ct.make_workdir("zyg-cri.")
    bindir = os.path.join(workdir, "bin")
    os.mkdir(bindir)
    os.symlink(os.path.join(BUILD_DIR, SHIM), os.path.join(bindir, SHIM))
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
               ZYGOTE_SOCKET=zygoted.socket)
    cd = ct.CriContainerd(workdir, runtimes={"zygote": "io.containerd.zygote.v2"}, env=env,
                          settings={"zygote": {"container_annotations": [TRACE]}})
    client = None
    try:
        try:
            cd.start()
        except RuntimeError as e:
            pytest.skip(str(e))
        for archive in (busybox, pause):
            r = cd.ctr("image", "import", archive, timeout=120)
            assert r.returncode == 0, r.stderr
        client = Cri(cd.address)
        client.containerd = cd
        client.zygoted = zygoted
        yield client
    finally:
        if client:
            client.close()
        cd.stop()
        ct.remove_workdir(cd.dir)
        ct.remove_cgroup_parent(ct.CRI_CGROUP_PARENT)


# ---- what is looked at ---------------------------------------------------------------------------

def ns_inode(pid, ns):
    return os.stat(f"/proc/{pid}/ns/{ns}").st_ino


def ppid(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise AssertionError(f"no PPid in /proc/{pid}/status")


def info_pid(info):
    """The pid in the verbose status's `info` (containerd: a JSON object with "pid")."""
    return json.loads(info["info"])["pid"]


def zygoted_tasks(zygoted):
    import varlink
    with varlink.connect(zygoted.socket) as c:
        return [t["id"] for t in c.call("io.zygote.Launcher.List").parameters["tasks"]]


class Sequence:
    """One pod with one container, driven the way the kubelet does; the time of each call."""

    def __init__(self, cri, handler):
        self.cri = cri
        self.handler = handler
        self.times = {}
        self.pod = None
        self.ctr = None
        uid = uuid.uuid4().hex
        self.pod_config = cri.msg(
            "PodSandboxConfig",
            metadata=cri.msg("PodSandboxMetadata", name=f"zyg-cri-{handler}", uid=uid, namespace="zygote-test"),
            log_directory=os.path.join(cri.containerd.dir, "pods", uid),
            labels={"zygote-test": ct.RUN_TAG},
            linux=cri.msg("LinuxPodSandboxConfig", cgroup_parent=f"{ct.CRI_CGROUP_PARENT}/pod{uid}",
                          security_context=cri.msg("LinuxSandboxSecurityContext", namespace_options=self.namespaces())))

    def namespaces(self):
        # as the kubelet sets them for a pod with hostNetwork: the node's network, a pid namespace
        # per container (the v1.PodSpec default), the pod's IPC namespace
        return self.cri.msg("NamespaceOption", network=NODE, pid=CONTAINER, ipc=POD)

    def call(self, method, **fields):
        t = time.monotonic()
        r = getattr(self.cri, method)(**fields)
        self.times[method] = self.times.get(method, 0.0) + time.monotonic() - t
        return r

    def container_config(self):
        cri = self.cri
        sc = cri.msg("LinuxContainerSecurityContext", namespace_options=self.namespaces(),
                     seccomp=cri.msg("SecurityProfile", profile_type=RUNTIME_DEFAULT))
        sc.seccomp.SetInParent()  # RuntimeDefault is 0: present, with nothing in it
        # a container that ends by itself on SIGTERM, with a code of its own
        return cri.msg("ContainerConfig", metadata=cri.msg("ContainerMetadata", name="sleeper"),
                       image=cri.msg("ImageSpec", image=ct.IMAGE),
                       command=["sh", "-c", 'trap "exit 3" TERM; echo started; sleep 1000 & wait'],
                       envs=[cri.msg("KeyValue", key="ZYG_CRI", value="1")], log_path="sleeper/0.log",
                       linux=cri.msg("LinuxContainerConfig", security_context=sc))

    def run(self, check):
        start = time.monotonic()
        self.pod = self.call("RunPodSandbox", config=self.pod_config, runtime_handler=self.handler).pod_sandbox_id
        self.ctr = self.call("CreateContainer", pod_sandbox_id=self.pod, config=self.container_config(),
                             sandbox_config=self.pod_config).container_id
        self.call("StartContainer", container_id=self.ctr)
        r = self.call("ExecSync", container_id=self.ctr, cmd=["echo", "hi"], timeout=30)
        assert (r.stdout, r.stderr, r.exit_code) == (b"hi\n", b"", 0)
        r = self.call("ExecSync", container_id=self.ctr, cmd=["cat", "/proc/self/status"], timeout=30)
        seccomp = [line for line in r.stdout.decode().splitlines() if line.startswith("Seccomp:")]
        assert (r.exit_code, seccomp) == (0, ["Seccomp:\t2"]), r
        r = self.call("ExecSync", container_id=self.ctr, cmd=["sh", "-c", "echo err >&2; exit 5"], timeout=30)
        assert (r.stdout, r.stderr, r.exit_code) == (b"", b"err\n", 5)
        status = self.call("ContainerStatus", container_id=self.ctr, verbose=bool(check))
        assert status.status.state == RUNNING, status.status
        if check:
            check(self, info_pid(status.info))
        self.call("StopContainer", container_id=self.ctr, timeout=10)
        status = self.call("ContainerStatus", container_id=self.ctr).status
        assert (status.state, status.exit_code) == (EXITED, 3), status
        assert status.finished_at >= status.started_at > 0, status
        self.call("RemoveContainer", container_id=self.ctr)
        self.call("StopPodSandbox", pod_sandbox_id=self.pod)
        self.call("RemovePodSandbox", pod_sandbox_id=self.pod)
        self.times["total"] = time.monotonic() - start
        return self.times

    def cleanup(self):
        """After a failure: what the sequence left, removed as the kubelet would."""
        for method, field, ident in (("StopContainer", "container_id", self.ctr),
                                     ("RemoveContainer", "container_id", self.ctr),
                                     ("StopPodSandbox", "pod_sandbox_id", self.pod),
                                     ("RemovePodSandbox", "pod_sandbox_id", self.pod)):
            if ident:
                try:
                    getattr(self.cri, method)(**{field: ident})
                except grpc.RpcError:
                    pass


def check_pod(cri, handler):
    def check(seq, pid):
        sandbox = cri.PodSandboxStatus(pod_sandbox_id=seq.pod, verbose=True)
        assert (sandbox.status.state, sandbox.status.runtime_handler) == (SANDBOX_READY, handler), sandbox.status
        spid = info_pid(sandbox.info)
        # the pod's containers share the sandbox's IPC namespace (the pod's, not the host's) and,
        # on the host's network, the host's UTS and network namespaces; each has its pid namespace
        me = os.getpid()
        assert ns_inode(pid, "ipc") == ns_inode(spid, "ipc") != ns_inode(me, "ipc")
        assert ns_inode(pid, "uts") == ns_inode(spid, "uts") == ns_inode(me, "uts")
        assert ns_inode(pid, "net") == ns_inode(spid, "net") == ns_inode(me, "net")
        assert len({ns_inode(pid, "pid"), ns_inode(spid, "pid"), ns_inode(me, "pid")}) == 3
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert b"ZYG_CRI=1" in f.read().split(b"\0")
        # each in its cgroup below the pod's (cgroupfs: PARENT/ID in every hierarchy)
        pod_cgroup = seq.pod_config.linux.cgroup_parent
        for p, cid in ((pid, seq.ctr), (spid, seq.pod)):
            with open(f"/proc/{p}/cgroup") as f:
                paths = {line.rstrip("\n").split(":", 2)[2] for line in f}
            assert f"{pod_cgroup}/{cid}" in paths, paths
        if handler == "zygote":
            # zygoted started both: the sandbox's and the container's first processes are its
            # children, and its tasks, by containerd's ids
            assert ppid(pid) == ppid(spid) == cri.zygoted.proc.pid
            tasks = zygoted_tasks(cri.zygoted)
            assert seq.pod in tasks and seq.ctr in tasks, tasks
        else:
            assert "containerd-shim-runc-v2" in ct.cmdline(ppid(pid))
    return check


def leftovers(cri, seq):
    left = {i: cri.containerd.leftovers(i) for i in (seq.pod, seq.ctr) if i}
    if seq.handler == "zygote":
        tasks = zygoted_tasks(cri.zygoted)
        for i in left:
            left[i] += [f"zygoted's task {t}" for t in tasks if t == i or t.startswith(i + ".")]
    return {i: l for i, l in left.items() if l}


def median_ms(samples):
    return statistics.median(samples) * 1000


def run_sequence(cri, handler, check=False):
    """One pod through its life (the checks of check_pod with CHECK); nothing may be left after
    it. Returns the time of each call and the total, in seconds."""
    seq = Sequence(cri, handler)
    try:
        times = seq.run(check_pod(cri, handler) if check else None)
    except BaseException:
        seq.cleanup()
        raise
    assert leftovers(cri, seq) == {}, "left behind"
    return times


@pytest.fixture(scope="module")
def baseline(cri):
    """The runc handler's pod, once: where containerd cannot run it, every test skips."""
    v = cri.Version(version="v1")
    assert (v.runtime_name, v.runtime_api_version) == ("containerd", "v1"), v
    try:
        run_sequence(cri, "runc", check=True)
    except grpc.RpcError as e:
        pytest.skip(f"containerd's CRI plugin cannot run a pod here even with runc: {e.details()}")
    return v


def test_pod_with_runc(baseline):
    pass  # the baseline's sequence and checks


def test_pod_with_zygote(cri, baseline):
    run_sequence(cri, "zygote", check=True)


def test_timings(cri, baseline, capsys):
    """RUNS sequences of each handler, alternating (a load that changes meanwhile weighs on both
    alike); the median of each call, for the benchmark table. No bound is asserted."""
    runs = {"runc": [], "zygote": []}
    for _ in range(RUNS):
        for handler, samples in runs.items():
            samples.append(run_sequence(cri, handler))
    with capsys.disabled():
        print(f"\nCRI pod lifecycle through containerd {baseline.runtime_version}, median of {RUNS} (ms; "
              "ExecSync: 3 calls, ContainerStatus: 2):")
        steps = list(runs["runc"][0])
        print(f"  {'handler':8}" + "".join(f"{s:>{max(len(s), 6) + 1}}" for s in steps))
        for handler, samples in runs.items():
            print(f"  {handler:8}" + "".join(f"{median_ms([r[s] for r in samples]):>{max(len(s), 6) + 1}.1f}"
                                             for s in steps))


# ---- a pod annotated to record (io.containers.trace-syscall) --------------------------------------

def read_to_end(path, bound=60):
    """What the writers of the fifo PATH (opened here first, so that its end is the last writer's
    close, not the absence of one yet) wrote, up to that close, within BOUND seconds."""
    import select
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    data, deadline = b"", time.monotonic() + bound
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no end of {path} within {bound} s: {data!r}"
            chunk = os.read(fd, 65536)
            if not chunk:
                return data.decode()
            data += chunk
    finally:
        os.close(fd)


class Shell(Sequence):
    """A zygote pod whose one container runs `sh -c COMMAND` with its output and errors to a fifo
    of the host's (DIR, bind-mounted at /x), read to its end: the container's init is done when
    run() stops it, without polling its state. ANNOTATIONS for the container, SECCOMP its
    SecurityProfile (RuntimeDefault without)."""

    def __init__(self, cri, shared, command, annotations=None, seccomp=None):
        super().__init__(cri, "zygote")
        self.shared, self.command = shared, command
        self.annotations, self.seccomp = annotations or {}, seccomp

    def container_config(self):
        cri = self.cri
        sc = cri.msg("LinuxContainerSecurityContext", namespace_options=self.namespaces(),
                     seccomp=self.seccomp or cri.msg("SecurityProfile", profile_type=RUNTIME_DEFAULT))
        sc.seccomp.SetInParent()
        return cri.msg("ContainerConfig", metadata=cri.msg("ContainerMetadata", name="recorded"),
                       image=cri.msg("ImageSpec", image=ct.IMAGE),
                       command=["sh", "-c", f"{{ {self.command}; }} >/x/out 2>&1"],
                       mounts=[cri.msg("Mount", container_path="/x", host_path=self.shared)],
                       annotations=self.annotations, log_path="recorded/0.log",
                       linux=cri.msg("LinuxContainerConfig", security_context=sc))

    def run(self):
        fifo = os.path.join(self.shared, "out")
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo, 0o600)
        try:
            self.pod = self.cri.RunPodSandbox(config=self.pod_config, runtime_handler=self.handler).pod_sandbox_id
            self.ctr = self.cri.CreateContainer(pod_sandbox_id=self.pod, config=self.container_config(),
                                                sandbox_config=self.pod_config).container_id
            self.cri.StartContainer(container_id=self.ctr)
            out = read_to_end(fifo)
            # the init has closed the fifo: it is exiting or gone; StopContainer waits for it,
            # RemoveContainer is zygoted's Delete, where the recording is written
            self.cri.StopContainer(container_id=self.ctr, timeout=10)
            self.cri.RemoveContainer(container_id=self.ctr)
            self.cri.StopPodSandbox(pod_sandbox_id=self.pod)
            self.cri.RemovePodSandbox(pod_sandbox_id=self.pod)
        except BaseException:
            self.cleanup()
            raise
        assert leftovers(self.cri, self) == {}, "left behind"
        return out


def allowed(path):
    with open(path) as f:
        p = json.load(f)
    return {n for r in p["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" and not r.get("args") for n in r["names"]}


def test_pod_annotated_to_record(cri, baseline, tmp_path):
    """A CRI container annotated io.containers.trace-syscall=of:FILE (passed into its OCI spec by
    the handler's container_annotations) is recorded by zygoted's eBPF tracer and FILE written
    once it is removed; the same annotation on the pod, which pod_annotations does not list,
    records nothing. A container under FILE as its Localhost seccomp profile then runs the same
    command, and a mkdir the recording did not see is refused."""
    rec = cri.zygoted.status()["recording"]
    if not rec["bpf"]:
        pytest.skip(f"zygoted has no eBPF tracer: {rec['reason']}")
    os.chmod(tmp_path, 0o755)
    shared, out, pod_out = str(tmp_path), str(tmp_path / "rec.json"), str(tmp_path / "pod.json")
    pipe = "echo hi; seq 3 | wc -l"
    seq = Shell(cri, shared, pipe, annotations={TRACE: f"of:{out}"})
    seq.pod_config.annotations[TRACE] = f"of:{pod_out}"
    assert seq.run().split() == ["hi", "3"]
    n = allowed(out)
    assert {"execve", "wait4", "pipe2"} <= n, n
    assert "mkdirat" not in n and "mkdir" not in n, n
    assert not os.path.exists(pod_out)  # a pod annotation not listed never reaches the spec
    assert cri.zygoted.status()["recording"]["active"] == 0
    # FILE as the container's profile: the same command runs, a new call is refused
    profile = cri.msg("SecurityProfile", profile_type=LOCALHOST, localhost_ref=out)
    assert Shell(cri, shared, pipe, seccomp=profile).run().split() == ["hi", "3"]
    text = Shell(cri, shared, "mkdir /tmp/new && echo made", seccomp=profile).run()
    assert "made" not in text and "Operation not permitted" in text, text
