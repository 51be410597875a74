# SPDX-License-Identifier: MIT
"""A Debian 12 machine booted under a real systemd as PID 1, for test_systemd_boot.py
(docs/SYSTEMD.md, "Tests").

- `why_not_here()`: the reason this machine cannot boot one (not root, a tool missing, a chroot,
  no overlayfs, no cgroup hierarchy for the container), or None.
- `build_package()`: the build tree's Debian package (cpack, as test_package.py makes it) and the
  packages its Depends names.
- `cached_root()`: a debootstrapped bookworm (minbase plus systemd, logind, PAM and the package's
  libraries) under /var/tmp/zygote-systemd-boot, one per package list (its hash names it), built
  once and then only read: every run works on an overlay of it.
- `Machine`: that overlay, the package installed in it with dpkg in a chroot, booted with
  `systemd-nspawn -b`, commands run in it with nsenter, and its teardown, which checks that no
  process, mount or cgroup of it is left.

All of it runs in a private mount namespace of the test process (`private_mounts()`), so that a
test killed halfway leaves no mount behind on the host.
"""
import ctypes
import errno
import fcntl
import hashlib
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from zytest import chrooted  # noqa: E402  (the suite's one probe)

SUITE = "bookworm"
# What a small Debian server with systemd has; man-db because `systemd-analyze verify` looks up
# each unit's Documentation=man: page with man(1) and reports it missing when there is no man.
BASE_PACKAGES = ("systemd", "systemd-sysv", "dbus", "dbus-user-session", "libpam-systemd", "login", "passwd",
                 "procps", "util-linux", "man-db")
CACHE_DIR = os.environ.get("ZYGOTE_BOOT_CACHE", "/var/tmp/zygote-systemd-boot")
MIRROR = os.environ.get("ZYGOTE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("systemd-nspawn", "debootstrap", "nsenter", "chroot", "mount", "umount", "cpack", "dpkg-deb")
DEBOOTSTRAP_TIMEOUT = 1200
BOOT_TIMEOUT = 180
CLONE_NEWNS = 0x00020000

# What the tests timed, printed at the end of the session (conftest.py).
TIMINGS = []


def timed(what, seconds):
    TIMINGS.append(f"{what}: {seconds:.1f} s")


# ---- can this machine boot one? --------------------------------------------------------------

def cgroup_mounts():
    """The hierarchies systemd-nspawn puts a container's cgroup in: the cgroup2 mount and, on a
    hybrid or legacy host, the name=systemd one ({kind: mount point})."""
    found = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            fstype, opts = fields[sep + 1], fields[sep + 3]
            if fields[3] != "/":
                continue
            if fstype == "cgroup2":
                found.setdefault("unified", fields[4])
            elif fstype == "cgroup" and "name=systemd" in opts.split(","):
                found.setdefault("systemd", fields[4])
    return found


def overlayfs():
    def listed():
        with open("/proc/filesystems") as f:
            return any(line.split()[-1] == "overlay" for line in f if line.strip())
    if not listed():
        subprocess.run(["modprobe", "overlay"], capture_output=True, timeout=30)
    return listed()


def why_not_here():
    """Why this machine cannot boot the test's container, or None when it can."""
    if os.geteuid() != 0:
        return "needs root: debootstrap, an overlayfs mount, chroot and systemd-nspawn"
    for tool in TOOLS:
        if not shutil.which(tool, path=PATH):
            hint = {"systemd-nspawn": " (apt-get install systemd-container)",
                    "debootstrap": " (apt-get install debootstrap)"}.get(tool, "")
            return f"no {tool}{hint}"
    if chrooted():
        # tried: where the root is no mount point, systemd-nspawn's first step (making / a slave
        # mount) fails with EINVAL; where it is one (scripts/fresh-check.sh's rehearsal), the
        # container boots but what the test runs in it through nsenter finds its systemd
        # "offline"
        return ("chrooted (as in scripts/fresh-check.sh's rehearsal): a container booted by systemd-nspawn from a "
                "chroot cannot be driven as on a host (nspawn fails, or its systemd answers 'offline' to nsenter)")
    if not overlayfs():
        return "no overlayfs in this kernel: the container runs on an overlay of the cached root"
    if not cgroup_mounts():
        return "no cgroup2 and no name=systemd hierarchy mounted: the container's systemd would have no cgroup"
    return None


def private_mounts():
    """Moves the test process into a mount namespace of its own, with every mount private: the
    overlay and what systemd-nspawn mounts exist only there and vanish with the process, whatever
    ends it. Needs a single-threaded process (pytest with the signal timeout method is)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"unshare(CLONE_NEWNS): {os.strerror(e)}")
    subprocess.run(["mount", "--make-rprivate", "/"], check=True, capture_output=True, timeout=30)


# ---- the package ---------------------------------------------------------------------------

def build_package(build, out):
    """The build tree's .deb (cpack -G DEB into out) and the package names of its Depends."""
    r = subprocess.run(["cpack", "-G", "DEB", "-B", str(out)], cwd=build, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"cpack failed:\n{r.stdout}{r.stderr}"
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    assert len(debs) == 1, debs
    deb = os.path.join(out, debs[0])
    depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True, check=True,
                             timeout=60).stdout
    # "libc6 (>= 2.34), libcap2 (>= 1:2.10), systemd": the names; of alternatives, the first
    names = [re.match(r"\s*([a-z0-9.+-]+)", d.split("|")[0]).group(1) for d in depends.split(",") if d.strip()]
    return deb, names


# ---- the cached root ---------------------------------------------------------------------------

def _mirror_unreachable():
    url = f"{MIRROR}/dists/{SUITE}/InRelease"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read(1)
        return None
    except (urllib.error.URLError, OSError) as e:
        return f"cannot reach the Debian mirror {MIRROR} ({url}: {e})"


def cached_root(packages):
    """The debootstrapped root for this package list: (path, seconds spent building it, 0 when it
    was cached), or (None, reason) when the mirror cannot be reached to build it. The path holds
    a finished root only: it is built next to it and renamed."""
    pkgs = sorted(set(BASE_PACKAGES) | set(packages))
    key = hashlib.sha256("\n".join([SUITE, "minbase", *pkgs]).encode()).hexdigest()[:16]
    path = os.path.join(CACHE_DIR, f"{SUITE}-{key}")
    os.makedirs(CACHE_DIR, mode=0o755, exist_ok=True)
    with open(os.path.join(CACHE_DIR, ".lock"), "w") as lock:
        # one debootstrap at a time; a second run waits for it and then uses its root
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(path):
            return path, 0.0
        reason = _mirror_unreachable()
        if reason:
            return None, reason
        partial = path + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        t0 = time.monotonic()
        log = path + ".debootstrap.log"
        with open(log, "w") as out:
            r = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(pkgs)}", SUITE, partial,
                                MIRROR], stdout=out, stderr=subprocess.STDOUT, timeout=DEBOOTSTRAP_TIMEOUT,
                               env={"PATH": PATH, "LANG": "C.UTF-8"})
        if r.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            reason = _mirror_unreachable()
            if reason:
                return None, reason
            with open(log) as f:
                tail = f.read()[-3000:]
            raise AssertionError(f"debootstrap failed (exit {r.returncode}) with the mirror reachable; {log}:\n{tail}")
        os.rename(partial, path)
        return path, time.monotonic() - t0


# ---- the machine ---------------------------------------------------------------------------------

class BootFailed(AssertionError):
    pass


class Machine:
    """An overlay of the cached root (lower) with its upper layer in a temporary directory,
    booted with systemd-nspawn -b in a cgroup of its own."""

    def __init__(self, lower, name="zygote-boot"):
        self.lower = lower
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="zygote-systemd-boot-", dir="/var/tmp")
        os.chmod(self.dir, 0o755)
        self.upper, self.work, self.root = (os.path.join(self.dir, d) for d in ("upper", "work", "root"))
        for d in (self.upper, self.work, self.root):
            os.mkdir(d)
        self.log_path = os.path.join(self.dir, "nspawn.log")
        self.mounted = False
        self.nspawn = None
        self.leader = None
        self.pidns = None
        self.cgroups = []
        self.inner_cgroups = []

    # -- before the boot ---------------------------------------------------------------------------
    def mount(self):
        opts = f"lowerdir={self.lower},upperdir={self.upper},workdir={self.work}"
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, self.root], check=True, capture_output=True,
                       timeout=60)
        self.mounted = True

    def chroot(self, *argv, timeout=300):
        """argv in the root as a chroot, with a clean environment (dpkg as a user runs it)."""
        return subprocess.run(["chroot", self.root, "/usr/bin/env", "-i", f"PATH={PATH}", "LANG=C.UTF-8",
                               "DEBIAN_FRONTEND=noninteractive", *argv], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)

    def install(self, deb):
        """dpkg -i of the package in the root: its postinst creates the group through sysusers and
        enables zygoted.socket, as on a user's machine before a reboot."""
        inside = "/tmp/" + os.path.basename(deb)
        shutil.copy(deb, self.root + inside)
        try:
            r = self.chroot("dpkg", "-i", inside)
        finally:
            os.unlink(self.root + inside)
        assert r.returncode == 0, f"dpkg -i {os.path.basename(deb)} in the chroot failed:\n{r.stdout}{r.stderr}"
        return r

    def write(self, path, text, mode=0o644):
        full = self.root + path
        os.makedirs(os.path.dirname(full), mode=0o755, exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
        os.chmod(full, mode)

    # -- the boot ----------------------------------------------------------------------------------
    def _make_cgroups(self):
        # systemd-nspawn --keep-unit puts the container in a "payload" child of its own cgroup:
        # one of our own keeps two runs apart and lets the teardown remove what it made.
        for kind, mnt in sorted(cgroup_mounts().items()):
            d = os.path.join(mnt, f"{self.name}-{os.getpid()}")
            os.mkdir(d)
            self.cgroups.append(d)

    def _enter_cgroups(self):
        # in the child, before exec: nothing but writes of "0" (this process)
        for d in self.cgroups:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write("0")

    def boot(self):
        """systemd-nspawn -b, until the container's systemd says that start-up finished.

        --register=no and --keep-unit: no machined and no system bus on the host (its PID 1 need
        not be systemd). --notify-ready=yes: systemd-nspawn passes the container's READY=1 on to
        our NOTIFY_SOCKET, with X_NSPAWN_LEADER_PID= (the container's PID 1, as the host sees
        it) before. SYSTEMD_SECCOMP=0: no system call filter of systemd-nspawn's own, so that
        zygoted runs as on a host (under one, it warns and serves through it: docs/SYSTEMD.md)."""
        self._make_cgroups()
        notify_path = os.path.join(self.dir, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        pidfd = None
        t0 = time.monotonic()
        try:
            sock.bind(notify_path)
            env = {"PATH": PATH, "LANG": "C.UTF-8", "NOTIFY_SOCKET": notify_path, "SYSTEMD_SECCOMP": "0"}
            log = open(self.log_path, "w")
            with log:
                self.nspawn = subprocess.Popen(
                    ["systemd-nspawn", "--quiet", "--register=no", "--keep-unit", "--console=pipe",
                     "--notify-ready=yes", f"--machine={self.name}", "-D", self.root, "-b"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                    preexec_fn=self._enter_cgroups)
            ready = False
            deadline = t0 + BOOT_TIMEOUT
            pidfd = os.pidfd_open(self.nspawn.pid)
            while not ready:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BootFailed(f"the container did not report READY=1 within {BOOT_TIMEOUT} s\n{self.log()}")
                # the notify socket, or systemd-nspawn's exit (its pidfd)
                r, _, _ = select.select([sock, pidfd], [], [], left)
                if sock in r:
                    msg = sock.recv(4096).decode(errors="replace")
                    for line in msg.splitlines():
                        k, _, v = line.partition("=")
                        if k == "X_NSPAWN_LEADER_PID":
                            self.leader = int(v)
                            self.pidns = os.readlink(f"/proc/{self.leader}/ns/pid")
                        elif k == "READY" and v == "1":
                            ready = True
                elif r:
                    raise BootFailed(f"systemd-nspawn exited with status {self.nspawn.wait()} before the container "
                                     f"was ready\n{self.log()}")
        finally:
            sock.close()
            if pidfd is not None:
                os.close(pidfd)
        if self.leader is None:
            raise BootFailed(f"systemd-nspawn said READY=1 but never named the container's leader\n{self.log()}")
        self.inner_cgroups = self._leader_cgroups()
        # READY=1 comes when the container's manager is up; the boot's jobs may still run
        r = self.run("systemctl", "is-system-running", "--wait", timeout=BOOT_TIMEOUT)
        state = r.stdout.strip()
        if state not in ("running", "degraded"):
            raise BootFailed(f"the container's systemd is '{state}' after the boot (exit {r.returncode})\n"
                             f"{self.run('systemctl', '--failed', '--no-pager').stdout}\n{self.log()}")
        return time.monotonic() - t0, state

    def _leader_cgroups(self):
        """The directories of the container's PID 1's cgroups (init.scope) in our hierarchies."""
        mounts = cgroup_mounts()
        out = []
        with open(f"/proc/{self.leader}/cgroup") as f:
            for line in f:
                _, ctl, path = line.rstrip("\n").split(":", 2)
                kind = "unified" if ctl == "" else "systemd" if ctl == "name=systemd" else None
                if kind in mounts:
                    out.append(os.path.join(mounts[kind], path.lstrip("/")))
        return out

    def _enter_inner_cgroups(self):
        # in the child, before exec: nothing but writes of "0" (this process)
        for d in self.inner_cgroups:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write("0")

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                text = f.read()[-4000:]
        except OSError:
            text = ""
        return f"----- systemd-nspawn's output -----\n{text}"

    # -- inside --------------------------------------------------------------------------------------
    def run(self, *argv, timeout=60, input=None):
        """argv in the container's namespaces, as root, with a clean environment, in the cgroup of
        the container's PID 1 (init.scope): inside the container's hierarchy, so that its
        systemd may move it into a unit (systemd-run --scope, a PAM session), which a cgroup
        outside its namespace would forbid where cgroup2 is mounted with nsdelegate."""
        cmd = ["nsenter", "-t", str(self.leader), "-a", "--", "/usr/bin/env", "-i", f"PATH={PATH}", "LANG=C.UTF-8",
               *argv]
        return subprocess.run(cmd, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, preexec_fn=self._enter_inner_cgroups)

    def shell(self, script, timeout=60):
        """script run by sh in a scope of the container's systemd (`systemd-run --scope`), as an
        administrator's shell runs in a unit of its own: a task it starts joins that scope, which
        lasts as long as something runs in it."""
        return self.run("systemd-run", "--scope", "--quiet", "--collect", "--", "/bin/sh", "-c", script,
                        timeout=timeout)

    # -- the end -----------------------------------------------------------------------------------
    @staticmethod
    def _children(pid):
        out = []
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out += [int(x) for x in f.read().split()]
        except OSError:
            pass
        return out

    def _pidns_members(self):
        if self.pidns is None:
            return []
        out = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    if os.readlink(f"/proc/{p}/ns/pid") == self.pidns:
                        out.append(int(p))
                except OSError:
                    pass
        return out

    def _cgroup_members(self):
        out = []
        for top in self.cgroups:
            for d, _, files in os.walk(top):
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        out += [int(x) for x in f.read().split()]
                except OSError:
                    pass
        return out

    def teardown(self):
        """Powers the container off (bounded), else kills its PID 1 and then systemd-nspawn;
        unmounts the overlay, removes the cgroups and the directory. Returns what was left or
        went wrong (empty when all is clean) and the seconds it took."""
        t0 = time.monotonic()
        problems = []
        if self.nspawn is not None and self.nspawn.poll() is None:
            if self.leader is not None:
                try:
                    self.run("systemctl", "poweroff", timeout=30)
                except subprocess.TimeoutExpired:
                    problems.append("systemctl poweroff did not return within 30 s")
                except (subprocess.SubprocessError, OSError) as e:
                    # the container is ending on its own (its cgroups are going away)
                    problems.append(f"systemctl poweroff could not run: {e}")
            try:
                self.nspawn.wait(timeout=90)
            except subprocess.TimeoutExpired:
                problems.append("the container did not power off within 90 s: killed")
                # SIGKILL of systemd-nspawn alone would leave the container's systemd running:
                # its PID 1 first (the kernel then kills its whole pid namespace), then nspawn.
                # A boot that failed early may not have named it: then nspawn's children.
                leaders = [self.leader] if self.leader is not None else self._children(self.nspawn.pid)
                for pid in leaders:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                try:
                    self.nspawn.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.nspawn.kill()
                    self.nspawn.wait(timeout=30)
        left = self._pidns_members() + self._cgroup_members()
        if left:
            problems.append(f"processes of the container left after its end: {sorted(set(left))}")
            for p in set(left):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.mounted:
            r = subprocess.run(["umount", self.root], capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                problems.append(f"umount {self.root}: {r.stderr.strip()}")
                subprocess.run(["umount", "-l", self.root], capture_output=True, timeout=60)
            self.mounted = False
        for top in self.cgroups:
            # children first
            for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                try:
                    os.rmdir(d)
                except OSError as e:
                    if e.errno != errno.ENOENT:
                        problems.append(f"cannot remove cgroup {d}: {e}")
        with open("/proc/self/mountinfo") as f:
            mounts = [line for line in f if self.dir in line]
        if mounts:
            problems.append(f"mounts left: {mounts}")
        shutil.rmtree(self.dir, ignore_errors=True)
        for what in [self.dir, *self.cgroups]:
            if os.path.exists(what):
                problems.append(f"left: {what}")
        return problems, time.monotonic() - t0
