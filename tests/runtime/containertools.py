# SPDX-License-Identifier: MIT
"""podman, containerd and Docker, each with a configuration and state of its own under a temp dir,
driving an OCI runtime binary: the fixtures of test_podman.py, test_containerd.py (see conftest.py)
and test_docker.py.

Nothing of the machine's is used: podman gets its own --root/--runroot/tmpdir and a CONTAINERS_CONF
(cgroupfs, file events, no network, default ulimits under the machine's hard NOFILE limit); each
session starts its own containerd (own root, state, sockets, no CRI plugin) and stops it by pid;
test_docker.py starts its own dockerd (own data and exec roots, socket, daemon.json) with the
containerd dockerd manages, and stops it by its pid.
"""
import glob
import json
import os
import select
import shlex
import shutil
import subprocess
import tempfile
import sys
import threading
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from zytest import chrooted  # noqa: E402,F401  (ct.chrooted(): the suite's one probe)

IMAGE = "localhost/zygote-busybox:latest"
PODMAN_PROFILE = "/usr/share/containers/seccomp.json"
# One test run's own: another run on the same machine (another checkout's suite) has others, so
# that neither takes the other's containers, cgroups or processes for its leftovers.
RUN_TAG = f"{os.getpid():x}"
PODMAN_CGROUP_PARENT = f"/zygote-podman-test-{RUN_TAG}"
CTR_CGROUP_PARENT = f"/zygote-ctr-test-{RUN_TAG}"
PODMAN_NAME_PREFIX = f"zyg-pm-{RUN_TAG}-"
CTR_NAMESPACE = "zygote-test"
# containerd's CRI plugin: its namespace, a parent cgroup for the pods, the pod sandbox's image
# (make-image.sh --pause)
CRI_NAMESPACE = "k8s.io"
CRI_CGROUP_PARENT = f"/zygote-cri-test-{RUN_TAG}"
PAUSE_IMAGE = "localhost/zygote-pause:latest"
# Docker: the programs of Debian's docker.io, named by path (`dpkg -L docker.io`): another docker
# client on the PATH (a newer one in /usr/local/bin) speaks an API version dockerd 20.10 refuses.
DOCKERD = "/usr/sbin/dockerd"
DOCKER_CLIENT = "/usr/bin/docker"
DOCKER_CGROUP_PARENT = f"/zygote-docker-test-{RUN_TAG}"
DOCKER_NAME_PREFIX = f"zyg-dk-{RUN_TAG}-"


_USERNS_REFUSED = []


def userns_refused():
    """Why a new user namespace cannot be made here, or None (asked once): a chroot
    (scripts/fresh-check.sh's rehearsal) refuses unshare(CLONE_NEWUSER) to everyone, and every id
    mapping (a container's, an id-mapped mount's) needs one."""
    if not _USERNS_REFUSED:
        r = subprocess.run(["unshare", "--user", "true"], capture_output=True, text=True, timeout=30)
        _USERNS_REFUSED.append(None if r.returncode == 0 else f"unshare --user: {r.stderr.strip() or r.returncode}")
    return _USERNS_REFUSED[0]


def container_id(prefix="c-"):
    """A container id of this run's alone: prefix and 12 random hex digits."""
    return prefix + uuid.uuid4().hex[:12]


def run_to_files(argv, timeout=60, env=None, input=None):
    """subprocess.run with stdout/stderr in files: a detached container's processes may keep the
    stdio they were given, so a pipe would not see EOF when the tool exits."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        kw = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
        r = subprocess.run(argv, stdout=out, stderr=err, timeout=timeout, env=env, text=True, **kw)
        out.seek(0)
        err.seek(0)
        r.stdout, r.stderr = out.read(), err.read()
        return r


def under_script(argv, timeout=60, env=None):
    """Runs argv with a terminal as stdio (util-linux `script`), as a person typing `-it` would;
    returns the CompletedProcess (script -e: the command's exit status)."""
    return run_to_files(["script", "-qefc", shlex.join(argv), "/dev/null"], timeout=timeout, env=env)


# ---- what a container may leave behind -----------------------------------------------------------

def processes_naming(text):
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(p))
        except OSError:
            pass
    return found


def processes_naming_after(text, timeout=15.0):
    """processes_naming(text) once it is empty, or what is still there after timeout seconds, as
    "pid: cmdline" strings. A process of the runtime's caller can outlive the container for a
    moment (conmon, whose -n names it, runs podman's exit command after the container ends)."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        left = processes_naming(text)
        if not left or time.monotonic() >= deadline:
            return [f"{p}: {cmdline(p)}" for p in left]
        time.sleep(0.05)


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def wait_gone(pid, timeout):
    """Waits (on a pidfd, bounded) for a process that is not our child to exit."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def start_logged(argv, env, log_path, marker, timeout):
    """Starts a daemon (stdout discarded) whose stderr a thread copies line by line into
    log_path for as long as it runs, so that the pipe never fills, and waits until a line holds
    marker, the daemon closes stderr (it exited), or timeout: (Popen, the thread, whether the
    marker came)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    done, seen = threading.Event(), threading.Event()

    def drain():
        with open(log_path, "wb") as log:
            for line in proc.stderr:
                log.write(line)
                log.flush()
                if marker.encode() in line:
                    seen.set()
                    done.set()
        done.set()

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    done.wait(timeout)
    return proc, drainer, seen.is_set()


def mounts_naming(text):
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if text in l]


def cgroups_naming(parent, text):
    """Directories below PARENT (in every v1 hierarchy and the cgroup2 one) whose name holds TEXT."""
    pats = [f"/sys/fs/cgroup/*{parent}/*{text}*", f"/sys/fs/cgroup{parent}/*{text}*"]
    return [d for p in pats for d in glob.glob(p) if os.path.isdir(d)]


def remove_cgroup_parent(parent):
    """Session end: the parent cgroup made for the tests and what is left below it (conmon's
    child of it, the pods of the CRI tests)."""
    for base in glob.glob("/sys/fs/cgroup/*") + ["/sys/fs/cgroup"]:
        d = base + parent
        if not os.path.isdir(d):
            continue
        for sub, _, _ in sorted(os.walk(d), reverse=True):  # the deepest first (PARENT/POD/ID)
            if sub == d:
                continue
            try:
                os.rmdir(sub)
            except OSError:
                pass
        try:
            os.rmdir(d)
        except OSError:
            pass


def is_frozen(pid):
    """Whether the cgroup freezer holds PID: v1 freezer.state, or cgroup.events of cgroup2."""
    with open(f"/proc/{pid}/cgroup") as f:
        lines = [l.rstrip("\n").split(":", 2) for l in f]
    for _, controllers, path in lines:
        if "freezer" in controllers.split(","):
            with open(f"/sys/fs/cgroup/freezer{path}/freezer.state") as f:
                if f.read().strip() == "FROZEN":
                    return True
        elif controllers == "":
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                ev = f"{root}{path}/cgroup.events"
                if os.path.exists(ev):
                    with open(ev) as f:
                        if "frozen 1" in f.read():
                            return True
                    break
    return False


def profile_with_errno(errno):
    """Podman's profile with a distinct default errno: its default (ENOSYS) is also what a kernel
    without the call answers, so the filter's own answer would not show."""
    with open(PODMAN_PROFILE) as f:
        profile = json.load(f)
    profile["defaultErrnoRet"] = errno
    profile.pop("defaultErrno", None)
    return profile


# ---- podman --------------------------------------------------------------------------------------

class Podman:
    def __init__(self, runtime, workdir):
        self.runtime = runtime
        self.dir = workdir
        self.root = os.path.join(workdir, "root")
        self.runroot = os.path.join(workdir, "run")  # podman refuses a runroot over 50 characters
        conf = os.path.join(workdir, "containers.conf")
        with open(conf, "w") as f:
            f.write(f"""[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
netns = "none"
seccomp_profile = "{PODMAN_PROFILE}"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "{workdir}/events.log"
tmp_dir = "{workdir}/tmp"
volume_path = "{workdir}/volumes"
""")
        storage = os.path.join(workdir, "storage.conf")
        with open(storage, "w") as f:
            # vfs: the image is a few MB, and no overlay mount can outlive a container
            f.write(f'[storage]\ndriver = "vfs"\ngraphroot = "{self.root}"\nrunroot = "{self.runroot}"\n')
        self.env = dict(os.environ, CONTAINERS_CONF=conf, CONTAINERS_STORAGE_CONF=storage)

    def argv(self, *args, runtime=None):
        if args and args[0] in ("run", "create"):
            # below a parent of the tests' own, where what a container leaves is looked for
            args = (args[0], "--cgroup-parent", PODMAN_CGROUP_PARENT, *args[1:])
        return ["podman", "--root", self.root, "--runroot", self.runroot,
                "--runtime", runtime or self.runtime, *args]

    def __call__(self, *args, runtime=None, timeout=60, input=None):
        return run_to_files(self.argv(*args, runtime=runtime), timeout=timeout, env=self.env, input=input)

    def inspect(self, name, fmt):
        r = self("inspect", "--format", fmt, name)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def leftovers(self, marker):
        """What is left of the containers once they are removed: a process naming MARKER or this
        podman's store, a mount below the store, a libpod cgroup below the tests' parent."""
        left = []
        # conmon outlives its container by the exit command it runs (`podman container cleanup`)
        for pid in processes_naming(self.root):
            if cmdline(pid).startswith("/usr/bin/conmon"):
                wait_gone(pid, timeout=60)
        procs = set(processes_naming(marker) + processes_naming(self.root))
        if procs:
            left.append("processes " + "; ".join(f"{p}: {cmdline(p)}" for p in sorted(procs)))
        if mounts_naming(self.root) or mounts_naming(self.runroot):
            left.append(f"mounts {mounts_naming(self.root) + mounts_naming(self.runroot)}")
        cg = cgroups_naming(PODMAN_CGROUP_PARENT, "libpod-")
        if cg:
            left.append(f"cgroups {cg}")
        r = self("ps", "-a", "-q")
        if r.stdout.strip():
            left.append(f"containers {r.stdout.split()}")
        return left


# ---- containerd ----------------------------------------------------------------------------------

class Containerd:
    """A containerd of the test session's own; `ctr` calls go to its socket."""

    BOOTED = "containerd successfully booted"

    def __init__(self, workdir, env=None):
        self.dir = workdir
        self.sock = os.path.join(workdir, "containerd.sock")
        self.runc_root = os.path.join(workdir, "runc")
        self.log = os.path.join(workdir, "containerd.log")
        self.proc = None
        self.env = env  # containerd's environment, which its shims inherit (None: ours)
        conf = os.path.join(workdir, "config.toml")
        with open(conf, "w") as f:
            f.write(f"""version = 2
root = "{workdir}/root"
state = "{workdir}/state"
disabled_plugins = [{self.disabled_cri()}"io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{self.sock}"
[ttrpc]
  address = "{self.sock}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
{self.plugins()}""")
        self.conf = conf

    def disabled_cri(self):
        return '"io.containerd.grpc.v1.cri", '

    def plugins(self):
        """More of config.toml: the plugins' sections."""
        return ""

    def start(self, timeout=60):
        """Starts containerd and returns once it says it booted (its log line, read as it comes);
        raises RuntimeError with the log's tail if it exits or stays silent."""
        self.proc, self.drainer, booted = start_logged(["containerd", "--config", self.conf], self.env, self.log,
                                                       self.BOOTED, timeout)
        if not booted or self.proc.poll() is not None:
            self.stop()
            with open(self.log, errors="replace") as f:
                raise RuntimeError("containerd did not boot: " + f.read()[-2000:])

    def restart(self):
        """containerd alone stopped and started again: its shims and their containers run on, as
        when a node's containerd is upgraded or crashes."""
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.drainer.join(timeout=30)
        self.start()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.drainer.join(timeout=30)
        # the shims of containers a failed test left: each is a child of no one of ours any more;
        # they name this containerd's socket in their command line
        for pid in processes_naming(self.sock):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        for line in reversed(mounts_naming(self.dir)):
            subprocess.run(["umount", "-l", line.split()[4]], stderr=subprocess.DEVNULL)

    namespace = CTR_NAMESPACE  # of the ctr calls

    def ctr_argv(self, *args):
        return ["ctr", "--address", self.sock, "-n", self.namespace, *args]

    def ctr(self, *args, timeout=60, input=None):
        return run_to_files(self.ctr_argv(*args), timeout=timeout, input=input)

    def run_argv(self, runtime, cid, *args, opts=()):
        """`ctr run` of the test image with RUNTIME as the runc v2 shim's binary; the cgroup is
        below the tests' parent, the runtime's state below this containerd's dir."""
        return self.ctr_argv("run", "--runc-binary", runtime, "--runc-root", self.runc_root,
                             "--cgroup", f"{CTR_CGROUP_PARENT}/{cid}", *opts, IMAGE, cid, *args)

    def run(self, runtime, cid, *args, opts=(), timeout=60, input=None):
        return run_to_files(self.run_argv(runtime, cid, *args, opts=opts), timeout=timeout, input=input)

    def task_pid(self, cid):
        r = self.ctr("task", "ls")
        for line in r.stdout.splitlines()[1:]:
            f = line.split()
            if f and f[0] == cid:
                return int(f[1]), f[2]
        raise AssertionError(f"no task {cid} in {r.stdout!r}")

    def cgroups_of(self, cid):
        return cgroups_naming(CTR_CGROUP_PARENT, cid)

    def leftovers(self, cid):
        """What is left of container CID once removed: its processes, mounts, cgroups (once its
        shim is gone), runtime state, and containerd's record of it."""
        left = []
        # the shim exits once containerd has deleted the task, not necessarily before ctr does
        for pid in processes_naming(cid):
            if "containerd-shim" in cmdline(pid):
                wait_gone(pid, timeout=60)
        procs = processes_naming(cid)
        if procs:
            left.append("processes " + "; ".join(f"{p}: {cmdline(p)}" for p in procs))
        if mounts_naming(cid):
            left.append(f"mounts {mounts_naming(cid)}")
        cg = self.cgroups_of(cid)
        if cg:
            left.append(f"cgroups {cg}")
        state = glob.glob(os.path.join(self.runc_root, "*", cid))
        if state:
            left.append(f"runtime state {state}")
        r = self.ctr("containers", "ls", "-q")
        if cid in r.stdout.split():
            left.append("the container in containerd")
        return left


class CriContainerd(Containerd):
    """A containerd of its own with the CRI plugin, the kubelet's runtime (ctr calls go to its
    `k8s.io` namespace): runtime handlers `runc` (the runc v2 shim with runc, its state below the
    workdir; the default) and RUNTIMES ({handler: runtime_type}, found as shims on the PATH of
    ENV; SETTINGS: {handler: {key: [strings]}}, such as container_annotations, the annotations a
    container's CRI config may pass into its OCI spec), the pod sandbox image PAUSE_IMAGE, no CNI network (pods on the host's network only: no
    network configuration is read), the streaming server on a port of the kernel's choice,
    neither AppArmor nor SELinux, oom_score_adj kept at or above containerd's own."""

    namespace = CRI_NAMESPACE

    def __init__(self, workdir, runtimes=None, env=None, settings=None):
        self.runtimes = dict(runtimes or {})
        self.settings = dict(settings or {})
        super().__init__(workdir, env)
        self.address = "unix://" + self.sock

    def disabled_cri(self):
        return ""

    def plugins(self):
        cri = '[plugins."io.containerd.grpc.v1.cri"'
        text = f"""{cri}]
  sandbox_image = "{PAUSE_IMAGE}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  enable_selinux = false
  # the sandbox's oom_score_adj (-998) no lower than containerd's: lowering it needs
  # CAP_SYS_RESOURCE, which root in a container may lack
  restrict_oom_score_adj = true
{cri}.cni]
  bin_dir = "{self.dir}/cni/bin"
  conf_dir = "{self.dir}/cni/net.d"
{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
{cri}.containerd.runtimes.runc.options]
  BinaryName = "{shutil.which("runc") or "runc"}"
  Root = "{self.runc_root}"
  SystemdCgroup = false
"""
        for handler, runtime_type in self.runtimes.items():
            text += f'{cri}.containerd.runtimes.{handler}]\n  runtime_type = "{runtime_type}"\n'
            for key, values in self.settings.get(handler, {}).items():
                text += f"  {key} = {json.dumps(list(values))}\n"
        return text

    def cgroups_of(self, cid):
        """The cgroups of a CRI container or pod sandbox (CID, its 64-digit id): PARENT/POD/ID."""
        return [d for base in glob.glob("/sys/fs/cgroup/*") + ["/sys/fs/cgroup"]
                for d in glob.glob(f"{base}{CRI_CGROUP_PARENT}/*/{cid}")]


# ---- Docker ---------------------------------------------------------------------------------------

class Docker:
    """A dockerd of its own (data root, exec root, socket and pid file in WORKDIR) and the
    containerd it starts and manages itself; runtimes from DAEMON_JSON (the example's text with
    the runtime's path filled in), everything else on the command line (dockerd refuses an option
    given both ways). No iptables, no bridge; the cgroupfs driver, every container's cgroup below
    DOCKER_CGROUP_PARENT; vfs storage: a container's rootfs is a plain directory, no overlay mount
    (with overlay2, about one container in a thousand or more started without its image, under
    runc as under zygote-runc, on a machine busy with other tests: `exec: "sh": executable file
    not found`, the bare mount point as its root). `docker` calls go to its socket with a client
    configuration of its own."""

    READY = "Daemon has completed initialization"

    def __init__(self, workdir, daemon_json):
        self.dir = workdir
        self.sock = os.path.join(workdir, "docker.sock")
        self.exec_root = os.path.join(workdir, "exec")
        self.data_root = os.path.join(workdir, "root")
        self.log = os.path.join(workdir, "dockerd.log")
        self.conf = os.path.join(workdir, "daemon.json")
        with open(self.conf, "w") as f:
            f.write(daemon_json)
        self.proc = None
        self.containerd_pid = None
        # Debian's containerd, runc, shim and docker-init, whatever else is on the caller's PATH
        self.daemon_env = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
        self.env = dict(os.environ, DOCKER_CONFIG=os.path.join(workdir, "client"))
        for k in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_API_VERSION", "DOCKER_TLS_VERIFY"):
            self.env.pop(k, None)

    def start(self, timeout=90):
        """Starts dockerd and returns once it says it is initialized (its log line, read as it
        comes); raises RuntimeError with the log's tail if it exits or stays silent."""
        argv = [DOCKERD, "--config-file", self.conf, "--data-root", self.data_root, "--exec-root", self.exec_root,
                "--pidfile", os.path.join(self.dir, "dockerd.pid"), "-H", "unix://" + self.sock,
                "--iptables=false", "--ip6tables=false", "--bridge=none", "--exec-opt", "native.cgroupdriver=cgroupfs",
                "--cgroup-parent", DOCKER_CGROUP_PARENT, "--shutdown-timeout", "10", "--storage-driver", "vfs"]
        self.proc, self.drainer, ready = start_logged(argv, self.daemon_env, self.log, self.READY, timeout)
        if not ready or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError("dockerd did not start: " + self.log_tail())
        try:
            with open(os.path.join(self.exec_root, "containerd", "containerd.pid")) as f:
                self.containerd_pid = int(f.read())
        except (OSError, ValueError):
            self.containerd_pid = None

    def log_tail(self, n=2000):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return "(no log)"

    def stop(self):
        """SIGTERM to dockerd, which stops its containerd, and a bounded wait for both; returns
        what had to be killed or unmounted by force (empty when the stop was clean)."""
        forced = []
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                forced.append("dockerd (no exit 60 s after SIGTERM)")
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.drainer.join(timeout=30)
        if self.containerd_pid:
            wait_gone(self.containerd_pid, timeout=30)
        # containerd, the shims and containers' processes name this workdir in their command lines
        for pid in processes_naming(self.dir):
            forced.append(f"process {pid}: {cmdline(pid)}")
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        for line in reversed(mounts_naming(self.dir)):
            forced.append(f"mount {line.split()[4]}")
            subprocess.run(["umount", "-l", line.split()[4]], stderr=subprocess.DEVNULL)
        return forced

    def argv(self, *args):
        return [DOCKER_CLIENT, "-H", "unix://" + self.sock, *args]

    def __call__(self, *args, timeout=60, input=None):
        return run_to_files(self.argv(*args), timeout=timeout, env=self.env, input=input)

    def inspect(self, name, fmt):
        r = self("inspect", "--format", fmt, name)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def runtime_root(self):
        """The --root the runc v2 shim gives the runtime (in containerd's namespace moby): dockerd
        20.10 names the same root for every runtime of daemon.json, EXEC_ROOT/runtime-runc."""
        return os.path.join(self.exec_root, "runtime-runc", "moby")

    def leftovers(self):
        """What is left once every container of the test is removed: a container, a shim or a
        container's process, a mount below the workdir but dockerd's own bind of its data root, a
        cgroup below the tests' parent, a runtime's state."""
        left = []
        shim_address = os.path.join(self.exec_root, "containerd", "containerd.sock")
        for pid in processes_naming(shim_address):  # a shim exits once its task is deleted
            wait_gone(pid, timeout=60)
        procs = processes_naming(shim_address) + processes_naming(DOCKER_NAME_PREFIX)
        if procs:
            left.append("processes " + "; ".join(f"{p}: {cmdline(p)}" for p in sorted(set(procs))))
        mounts = [l for l in mounts_naming(self.dir) if l.split()[4] != self.data_root]
        if mounts:
            left.append(f"mounts {mounts}")
        cg = cgroups_naming(DOCKER_CGROUP_PARENT, "")
        if cg:
            left.append(f"cgroups {cg}")
        state = glob.glob(os.path.join(self.exec_root, "runtime-*", "moby", "*"))
        if state:
            left.append(f"runtime state {state}")
        r = self("ps", "-a", "-q")
        if r.returncode != 0 or r.stdout.strip():
            left.append(f"containers {r.stdout.split()} {r.stderr.strip()}")
        return left


def make_workdir(prefix):
    # short and in /tmp: podman's runroot and the shims' socket paths have length limits
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


def remove_workdir(path):
    if mounts_naming(path):
        return  # never rm -rf through a mount; the failing test already said what was left
    shutil.rmtree(path, ignore_errors=True)
