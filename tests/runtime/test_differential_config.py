# SPDX-License-Identifier: MIT
"""zygote-runc against runc, config by config, beyond linux.resources (test_differential.py): each
row of ROWS patches the busybox bundle (namespaces joined by path, no mount namespace, the root's
propagation, device modes under the runtime's umask, process.user.umask, HOME, sysctls,
domainname, personality, the time namespace, scheduler, ioPriority, the createContainer and
startContainer hooks, tmpcopyup, a mount destination through a dangling symlink), runs a probe in
it under build/zygote-runc and under Debian's runc, and compares the exit status of create and of run and
each `key=value` line the probe printed. A difference fails unless the row marks it intended with
the reason; a difference marked intended that is not there fails too. A row may also say what
zygote-runc itself must print (`expect`) or that it must refuse, naming a field (`refused`).
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field

import pytest

import containertools as ct
from test_differential import run_if_created

RUNC = "/usr/sbin/runc"
RUNC_11 = "runc 1.1 (Debian 12's) "


@dataclass
class Row:
    name: str
    patch: object                                   # callable(config, rootfs, joined) or None
    probe: str                                      # shell; prints key=value lines
    intended: dict = field(default_factory=dict)    # {observation: reason}
    expect: dict = field(default_factory=dict)      # zygote-runc's own {observation: value}
    refused: str = ""                               # zygote-runc must refuse, naming this
    runtime_umask: int = 0o022                      # the umask both runtimes run under
    needs: str = ""                                 # a file of /proc the kernel must have


def ns_join(kind, spec_kind, keep_hostname=False):
    def patch(config, rootfs, joined):
        nss = config["linux"]["namespaces"]
        nss[:] = [n for n in nss if n["type"] != spec_kind]
        nss.append({"type": spec_kind, "path": joined[kind]})
        if spec_kind == "uts" and not keep_hostname:
            config.pop("hostname", None)
        elif spec_kind == "uts":
            config["hostname"] = "zpod"
    return patch


def drop_ns(kind):
    def patch(config, rootfs, joined):
        config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"] if n["type"] != kind]
    return patch


def propagation(value):
    def patch(config, rootfs, joined):
        config["linux"]["rootfsPropagation"] = value
    return patch


def merge(path, value):
    """config[path...] = value (path: "linux.sysctl"); None deletes it."""
    def patch(config, rootfs, joined):
        keys = path.split(".")
        d = config
        for k in keys[:-1]:
            d = d.setdefault(k, {})
        if value is None:
            d.pop(keys[-1], None)
        else:
            d[keys[-1]] = value
    return patch


def chain(*patches):
    def patch(config, rootfs, joined):
        for p in patches:
            p(config, rootfs, joined)
    return patch


def passwd(text):
    def patch(config, rootfs, joined):
        with open(os.path.join(rootfs, "etc", "passwd"), "w") as f:
            f.write(text)
        config["process"]["env"] = [e for e in config["process"]["env"] if not e.startswith("HOME=")]
    return patch


def device(mode):
    def patch(config, rootfs, joined):
        config["linux"].setdefault("devices", []).append(
            {"path": "/dev/zfull", "type": "c", "major": 1, "minor": 7, "fileMode": mode, "uid": 0, "gid": 0})
    return patch


def image_dir(options):
    """A directory of the image at /data (modes, owners, a set-gid directory, an old file, symlinks
    in and out of it, a dangling one) and a tmpfs mounted over it with options."""
    def patch(config, rootfs, joined):
        d = os.path.join(rootfs, "data")
        os.makedirs(os.path.join(d, "sub", "deep"))
        os.makedirs(os.path.join(d, "sgid"))
        for path, text, mode, owner in (("f", "hello\n", 0o644, (12, 13)), ("exe", "#!/bin/sh\n", 0o755, (0, 0)),
                                        ("sub/deep/g", "x\n", 0o600, (0, 0))):
            with open(os.path.join(d, path), "w") as f:
                f.write(text)
            os.chmod(os.path.join(d, path), mode)
            os.chown(os.path.join(d, path), *owner)
        os.utime(os.path.join(d, "f"), (978307200, 978307200))
        os.symlink("../etc", os.path.join(d, "link"))
        os.symlink("/etc/passwd", os.path.join(d, "abs"))
        os.symlink("/nonexistent", os.path.join(d, "dangling"))
        os.chmod(os.path.join(d, "sub"), 0o700)
        os.chmod(os.path.join(d, "sgid"), 0o2775)
        os.chown(os.path.join(d, "sgid"), 0, 1001)
        os.chmod(d, 0o750)
        os.chown(d, 1000, 1001)
        config["mounts"].append({"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": options})
    return patch


def dangling_links(config, rootfs, joined):
    """Mount destinations through symlinks to directories the image lacks: an absolute link and a
    relative one (from /etc)."""
    os.symlink("/var/lib/notthere", os.path.join(rootfs, "lnk"))
    os.symlink("../opt/made", os.path.join(rootfs, "etc", "rel"))
    for dest in ("/lnk/x", "/etc/rel/m"):
        config["mounts"].append({"destination": dest, "type": "tmpfs", "source": "tmpfs", "options": ["size=64k"]})


# every entry below /data: type, mode, owner, size, symlink target; the file system; a file's
# content and mtime; whether it is writable
LIST_DATA = ("cd /data && for p in $(find . | sort); do echo \"$p=$(stat -c '%F %a %u:%g %s' $p) $(readlink $p)\"; "
             "done; echo fs=$(stat -f -c %T /data); echo f=$(cat /data/f); echo mtime=$(stat -c %Y /data/f); "
             "echo write=$(touch /data/new 2>/dev/null && echo yes || echo no)")
COPYUP_SGID_11 = (RUNC_11 + "makes each directory with mkdir under its umask and never sets its mode: a set-gid "
                  "directory loses the bit (fixed in later runc, opencontainers/runc#3991)")
COPYUP_TIMES_11 = RUNC_11 + "does not keep times in the copy; zygote-runc keeps atime and mtime"

# the root mount's propagation as /proc/self/mountinfo says it, peer group numbers left out
ROOT_PROPAGATION = ("echo root=$(awk '$5==\"/\" {for (i=7; $i!=\"-\"; i++) printf \"%s \", $i}' "
                    "/proc/self/mountinfo | sed 's/:[0-9]*//g')")
NS = "echo {0}=$(readlink /proc/self/ns/{0})"
PERSONALITY_11 = RUNC_11 + "ignores linux.personality; zygote-runc applies it (runc 1.2 does too)"
SCHED_11 = RUNC_11 + "ignores process.scheduler; zygote-runc applies it (runc 1.2 does too)"
IOPRIO_11 = RUNC_11 + "ignores process.ioPriority; zygote-runc applies it (runc 1.2 does too)"
TIME_11 = RUNC_11 + "does not know the time namespace; zygote-runc makes it and writes linux.timeOffsets (as runc 1.2)"
ROOT_PROPAGATION_11 = (RUNC_11 + "leaves the container's / private whatever rootfsPropagation asks; zygote-runc "
                       "applies it to / after pivot_root, once / and the rootfs's parent mount are made private "
                       "for pivot_root (as runc 1.2)")
UNBINDABLE_11 = (RUNC_11 + "fails: an unbindable / cannot give the rootfs bind; zygote-runc keeps / private until "
                 "pivot_root and makes the container's / unbindable after it")
DOMAIN_11 = RUNC_11 + "leaves domainname unset; zygote-runc sets it in the container's uts namespace"
BIND_11 = (RUNC_11 + "passes an option it does not know to the kernel, which ignores a bind's data; it ignores "
           "a mount's id mappings")
IDMAP_11 = RUNC_11 + "ignores a mount's id mappings; zygote-runc applies them (as runc 1.2)"
REFUSED = "zygote-runc refuses what it cannot apply, naming the field; runc 1.1 ignores it"
HOOK_PID_11 = (RUNC_11 + "gives createContainer and startContainer hooks the init's pid in its own pid namespace (1); "
               "zygote-runc gives the pid as the host sees it, as the runtime spec says of the state's pid")


def hook(kind, script):
    """A hook of kind running script: createContainer with the host's /bin/sh, startContainer with
    the container's (busybox, which picks its applet by argv[0])."""
    def patch(config, rootfs, joined):
        os.makedirs(os.path.join(rootfs, "mnt"), exist_ok=True)
        config.setdefault("hooks", {}).setdefault(kind, []).append(
            {"path": "/bin/sh", "args": ["sh", "-c", script], "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]})
    return patch


# What a hook's state said, from the copy it left: its status, whether its pid is 1
STATE_OF = ("echo {0}_status=$(sed 's/.*\"status\": *\"\\([a-z]*\\)\".*/\\1/' {1}) "
            "{0}_pid_is_1=$(grep -c '\"pid\": *1[,}}]' {1})")

ROWS = [
    Row("baseline", None, "echo ok=1"),
    # namespaces by path: joined, not refused; the kernel's type checked
    Row("join-uts", ns_join("uts", "uts"), NS.format("uts") + "; echo hostname=$(hostname)",
        expect={"out:uts": "JOINED:uts", "out:hostname": "zjoined"}),
    # a pod's container: the pod's uts namespace, given its hostname (runc sets it there too; both
    # runtimes share the namespace here, so only zygote-runc's own setting is proven by `expect`)
    Row("join-uts-with-hostname", ns_join("uts", "uts", keep_hostname=True),
        NS.format("uts") + "; echo hostname=$(hostname)", expect={"out:uts": "JOINED:uts", "out:hostname": "zpod"}),
    Row("join-ipc", ns_join("ipc", "ipc"), NS.format("ipc"), expect={"out:ipc": "JOINED:ipc"}),
    Row("join-net", ns_join("net", "network"), NS.format("net"), expect={"out:net": "JOINED:net"}),
    Row("join-cgroup", ns_join("cgroup", "cgroup"), NS.format("cgroup"), expect={"out:cgroup": "JOINED:cgroup"}),
    Row("join-wrong-type", ns_join("net", "uts"), "echo ok=1", refused="uts namespace path"),
    # no new mount namespace
    Row("no-mount-namespace", drop_ns("mount"), "echo ok=1", refused="linux.namespaces"),
    # the root's propagation
    Row("rootfs-propagation-shared", propagation("shared"), ROOT_PROPAGATION, expect={"out:root": "shared"},
        intended={"out:root": ROOT_PROPAGATION_11}),
    Row("rootfs-propagation-slave", propagation("slave"), ROOT_PROPAGATION),
    Row("rootfs-propagation-private", propagation("private"), ROOT_PROPAGATION),
    Row("rootfs-propagation-unbindable", propagation("unbindable"), ROOT_PROPAGATION, expect={"out:root": "unbindable"},
        intended={"create": UNBINDABLE_11, "run": UNBINDABLE_11}),
    Row("rootfs-propagation-rshared", propagation("rshared"), ROOT_PROPAGATION, expect={"out:root": "shared"},
        intended={"out:root": ROOT_PROPAGATION_11}),
    Row("rootfs-propagation-unknown", propagation("sideways"), "echo ok=1", refused="linux.rootfsPropagation"),
    # device nodes keep config.json's mode whatever the runtime's umask
    Row("device-mode-0660-umask-077", device(0o660), "echo mode=$(stat -c %a /dev/zfull)", runtime_umask=0o077,
        expect={"out:mode": "660"}),
    Row("device-mode-0666-umask-027", device(0o666), "echo mode=$(stat -c %a /dev/zfull)", runtime_umask=0o027,
        expect={"out:mode": "666"}),
    # the process's umask, HOME
    Row("process-umask", merge("process.user.umask", 0o077), "echo umask=$(umask)", expect={"out:umask": "0077"}),
    Row("process-umask-default", None, "echo umask=$(umask)", runtime_umask=0o077, expect={"out:umask": "0022"}),
    Row("home-from-passwd", passwd("root:x:0:0:root:/root:/bin/sh\n"), "echo home=$HOME",
        expect={"out:home": "/root"}),
    Row("home-from-passwd-user", chain(passwd("root:x:0:0::/root:/bin/sh\nzu:x:1234:1234::/home/zu:/bin/sh\n"),
                                       merge("process.user", {"uid": 1234, "gid": 1234})),
        "echo home=$HOME", expect={"out:home": "/home/zu"}),
    Row("home-without-passwd", passwd(""), "echo home=$HOME", expect={"out:home": "/"}),
    Row("home-given", chain(passwd("root:x:0:0::/root:/bin/sh\n"),
                            lambda c, r, j: c["process"]["env"].append("HOME=/given")),
        "echo home=$HOME", expect={"out:home": "/given"}),
    # sysctls and domainname
    Row("sysctl-net-ipc", merge("linux.sysctl", {"net.ipv4.ip_forward": "1", "kernel.msgmax": "4096"}),
        "echo fwd=$(cat /proc/sys/net/ipv4/ip_forward) msgmax=$(cat /proc/sys/kernel/msgmax)",
        expect={"out:fwd": "1 msgmax=4096"}),
    Row("domainname", merge("domainname", "zdomain"), "echo domain=$(cat /proc/sys/kernel/domainname)",
        expect={"out:domain": "zdomain"}, intended={"out:domain": DOMAIN_11}),
    # personality, scheduler, ioPriority, time namespace
    Row("personality-linux32", merge("linux.personality", {"domain": "LINUX32"}), "echo machine=$(uname -m)",
        intended={"out:machine": PERSONALITY_11}, expect={"out:machine": "i686"}),
    Row("personality-linux", merge("linux.personality", {"domain": "LINUX"}), "echo machine=$(uname -m)"),
    Row("personality-flags", merge("linux.personality", {"domain": "LINUX", "flags": ["ADDR_NO_RANDOMIZE"]}),
        "echo ok=1", refused="linux.personality.flags", intended={"create": REFUSED, "run": REFUSED}),
    Row("personality-unknown-domain", merge("linux.personality", {"domain": "SVR4"}), "echo ok=1",
        refused="linux.personality.domain", intended={"create": REFUSED, "run": REFUSED}),
    Row("scheduler-batch-nice", merge("process.scheduler", {"policy": "SCHED_BATCH", "nice": 7}),
        "echo policy=$(awk '{print $41}' /proc/self/stat) nice=$(awk '{print $19}' /proc/self/stat)",
        intended={"out:policy": SCHED_11}, expect={"out:policy": "3 nice=7"}),
    Row("scheduler-unknown-policy", merge("process.scheduler", {"policy": "SCHED_NOPE"}), "echo ok=1",
        refused="process.scheduler.policy", intended={"create": REFUSED, "run": REFUSED}),
    Row("io-priority-be", merge("process.ioPriority", {"class": "IOPRIO_CLASS_BE", "priority": 5}),
        "echo ioprio=$(ionice -p $$ 2>&1 || echo none)", intended={"out:ioprio": IOPRIO_11},
        expect={"out:ioprio": "best-effort: prio 5"}),
    Row("io-priority-unknown-class", merge("process.ioPriority", {"class": "IOPRIO_CLASS_NOPE", "priority": 1}),
        "echo ok=1", refused="process.ioPriority.class", intended={"create": REFUSED, "run": REFUSED}),
    Row("time-namespace-offsets",
        chain(lambda c, r, j: c["linux"]["namespaces"].append({"type": "time"}),
              merge("linux.timeOffsets", {"monotonic": {"secs": 86400 * 365, "nanosecs": 0},
                                           "boottime": {"secs": 86400 * 365, "nanosecs": 5}})),
        "echo days=$(awk '{print (int($1/86400) >= 365)}' /proc/uptime)", needs="/proc/self/ns/time",
        intended={"create": TIME_11, "run": TIME_11}, expect={"out:days": "1"}),
    Row("time-namespace-unknown-clock",
        chain(lambda c, r, j: c["linux"]["namespaces"].append({"type": "time"}),
              merge("linux.timeOffsets", {"realtime": {"secs": 1}})),
        "echo ok=1", needs="/proc/self/ns/time", refused="linux.timeOffsets.realtime"),
    Row("join-time", ns_join("time", "time"),
        NS.format("time") + "; echo days=$(awk '{print (int($1/86400) >= 400)}' /proc/uptime)",
        needs="/proc/self/ns/time", expect={"out:time": "JOINED:time", "out:days": "1"},
        intended={"create": TIME_11, "run": TIME_11}),
    # a bind's filesystem data, which the kernel ignores: accepted as runc accepts it (and logged)
    Row("bind-data-options", lambda c, r, j: c["mounts"].append(
        {"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind", "mode=700", "size=1m"]}),
        "echo ok=1"),
    # what would change the mount the container gets and cannot be made (an id mapping with no
    # user namespace to take it from) is refused, not dropped
    Row("bind-unknown-option", lambda c, r, j: c["mounts"].append(
        {"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind", "idmap"]}), "echo ok=1",
        refused="mounts[", intended={"create": BIND_11, "run": BIND_11}),
    # an id-mapped bind: /tmp (owned by root on disk) is seen owned by 1000 (test_idmap_mounts.py)
    Row("bind-id-mapped", lambda c, r, j: c["mounts"].append(
        {"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind"],
         "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
         "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}), "echo owner=$(stat -c %u:%g /mnt)",
        expect={"out:owner": "1000:1000"}, intended={"out:owner": IDMAP_11}),
    # the hooks the init runs: createContainer in the container's mount namespace before pivot_root,
    # at the rootfs (it mounts a tmpfs there that the container then has), startContainer inside the
    # container as its process (the spec's /dev/shm is where it may write)
    Row("hooks-create-container", hook("createContainer", "mount -t tmpfs cc mnt && pwd > mnt/cwd && cat > mnt/state"),
        "echo cwd_is_rootfs=$(grep -c '/rootfs$' /mnt/cwd) mnt=$(awk '$2==\"/mnt\" {print $1}' /proc/mounts); "
        + STATE_OF.format("cc", "/mnt/state"), expect={"out:cwd_is_rootfs": "1 mnt=cc", "out:cc_status": "creating cc_pid_is_1=0"},
        intended={"out:cc_status": HOOK_PID_11}),
    Row("hooks-start-container", hook("startContainer", "cat > /dev/shm/state; ls / > /dev/shm/root"),
        "echo root=$(cat /dev/shm/root); " + STATE_OF.format("sc", "/dev/shm/state"),
        expect={"out:sc_status": "created sc_pid_is_1=0"},
        intended={"out:sc_status": HOOK_PID_11}),
    Row("hooks-create-container-fails", hook("createContainer", "exit 3"), "echo ok=1",
        refused="createContainer hook 0 (/bin/sh) failed: exit status 3"),
    # tmpcopyup: the tmpfs starts as a copy of the image's directory (podman's --tmpfs)
    Row("tmpcopyup", image_dir(["nosuid", "nodev", "tmpcopyup", "size=1m"]), LIST_DATA,
        expect={"out:fs": "tmpfs", "out:.": "directory 750 0:0 180", "out:./f": "regular file 644 12:13 6",
                "out:./abs": "symbolic link 777 0:0 11 /etc/passwd", "out:./sgid": "directory 2775 0:1001 40",
                "out:mtime": "978307200", "out:write": "yes"},
        intended={"out:./sgid": COPYUP_SGID_11, "out:mtime": COPYUP_TIMES_11}),
    Row("tmpcopyup-readonly", image_dir(["ro", "tmpcopyup"]), LIST_DATA,
        expect={"out:./sub/deep/g": "regular file 600 0:0 2", "out:write": "no"},
        intended={"out:./sgid": COPYUP_SGID_11, "out:mtime": COPYUP_TIMES_11}),
    # a plain tmpfs over a directory of the image starts empty, with that directory's mode
    Row("tmpfs-takes-the-directory-mode", image_dir(["nosuid", "nodev"]),
        "echo mode=$(stat -c %a /data) entries=$(ls -A /data | wc -l) fs=$(stat -f -c %T /data)",
        expect={"out:mode": "750 entries=0 fs=tmpfs"}),
    Row("tmpcopyup-on-a-bind", lambda c, r, j: c["mounts"].append(
        {"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind", "tmpcopyup"]}), "echo ok=1",
        refused="mounts[", intended={"create": REFUSED, "run": REFUSED}),
    # a destination through a symlink to a directory the image lacks: made where the link leads
    Row("mount-through-dangling-symlinks", dangling_links,
        "echo abs=$(stat -f -c %T /var/lib/notthere/x); echo rel=$(stat -f -c %T /opt/made/m)",
        expect={"out:abs": "tmpfs", "out:rel": "tmpfs"}),
    Row("time-offsets-without-namespace", merge("linux.timeOffsets", {"boottime": {"secs": 10, "nanosecs": 0}}),
        "echo ok=1", refused="linux.timeOffsets", intended={"create": REFUSED, "run": REFUSED}),
]


class Side:
    """One runtime with its own --root and the umask the row gives it."""

    def __init__(self, name, binary, tmp, umask):
        self.name, self.binary, self.umask = name, binary, umask
        self.root = str(tmp / f"{name}-state")
        self.log = str(tmp / f"{name}-log.json")

    def __call__(self, *args, timeout=60):
        argv = [self.binary, "--root", self.root, "--log", self.log, "--log-format", "json", *args]
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            r = subprocess.run(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, timeout=timeout, text=True,
                               preexec_fn=lambda: os.umask(self.umask))
            out.seek(0)
            err.seek(0)
            r.stdout, r.stderr = out.read(), err.read()
        return r


def observe(side, bundle, tag):
    cid = f"zdc-{tag}-{side.name}"
    obs = {}
    r = side("create", "--bundle", bundle, cid)
    obs["create"] = "ok" if r.returncode == 0 else "failed"
    error = r.stderr
    side("delete", "--force", cid)
    r = run_if_created(side, bundle, cid, r, obs)
    if r is None:
        return obs, error
    for line in r.stdout.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            obs["out:" + k.strip()] = v.strip()
    if r.returncode != 0:
        error = r.stderr
    return obs, error


@pytest.fixture(scope="module")
def runc_binary():
    if not os.access(RUNC, os.X_OK):
        pytest.skip(f"no {RUNC} (Debian's runc package): nothing to compare with")
    return RUNC


@pytest.fixture(scope="module")
def joined():
    """Namespaces to join by path: a process of their own (uts, ipc, net, cgroup), named by kind,
    with their /proc/PID/ns link texts (what a container that joined them reads) as JOINED:kind."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    p = subprocess.Popen(["unshare", "--uts", "--ipc", "--net", "--cgroup", "sh", "-c",
                          "hostname zjoined && echo up && exec sleep 600"], stdout=subprocess.PIPE, text=True)
    # a time namespace whose boot time is 400 days on, where the kernel has them
    t = subprocess.Popen(["unshare", "--time", "--boottime", str(86400 * 400), "sh", "-c", "echo up && exec sleep 600"],
                         stdout=subprocess.PIPE, text=True) if os.path.exists("/proc/self/ns/time") else None
    try:
        assert p.stdout.readline().strip() == "up"
        paths = {k: f"/proc/{p.pid}/ns/{k}" for k in ("uts", "ipc", "net", "cgroup")}
        if t and t.stdout.readline().strip() == "up":
            paths["time"] = f"/proc/{t.pid}/ns/time"
        paths.update({f"JOINED:{k}": os.readlink(v) for k, v in list(paths.items())})
        yield paths
    finally:
        for q in (p, t):
            if q:
                q.send_signal(signal.SIGKILL)
                q.wait()


def resolve(value, joined):
    return joined.get(value, value) if isinstance(value, str) else value


@pytest.mark.timeout(120)
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_config_same_as_runc(row, bundle, runc_bin, runc_binary, joined, tmp_path):
    if row.needs and not os.path.exists(row.needs):
        pytest.skip(f"the kernel lacks {row.needs}")
    if row.name == "join-time" and "time" not in joined:
        pytest.skip("unshare(1) cannot make a time namespace here")
    if row.name == "bind-id-mapped" and ct.userns_refused():
        pytest.skip(f"no user namespace can be made here ({ct.userns_refused()}): an id-mapped mount needs one")
    bundle.set_args("sh", "-c", row.probe)
    if row.patch:
        row.patch(bundle.config, bundle.rootfs, joined)
    bundle.save()
    tag = uuid.uuid4().hex[:8]
    ours, our_error = observe(Side("zygote", runc_bin, tmp_path, row.runtime_umask), bundle.path, tag)
    theirs, _ = observe(Side("runc", runc_binary, tmp_path, row.runtime_umask), bundle.path, tag)
    print(json.dumps({"zygote-runc": ours, "runc": theirs, "zygote-runc stderr": our_error}, indent=1))
    if row.refused:
        assert ours["create"] == "failed", f"zygote-runc accepted what it must refuse ({row.refused})"
        assert row.refused in our_error, f"the refusal does not name {row.refused}: {our_error}"
    else:
        assert ours["run"] == "exit 0", f"zygote-runc: {our_error}"
    for key, value in row.expect.items():
        assert ours.get(key) == resolve(value, joined), f"zygote-runc's {key}: {ours.get(key)!r}, not {value!r}"
    unexpected, stale = [], []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, "<not observed>"), theirs.get(key, "<not observed>")
        if "<not observed>" in (a, b) and (ours["create"] != theirs["create"] or ours["run"] != theirs["run"]):
            continue
        if a != b and key not in row.intended:
            unexpected.append(f"{key}: zygote-runc {a!r}, runc {b!r}")
        if a == b and key in row.intended:
            stale.append(f"{key}: marked intended ({row.intended[key]}) but both gave {a!r}")
    assert not unexpected, "differences from runc:\n" + "\n".join(unexpected)
    assert not stale, "the table marks differences that are not there:\n" + "\n".join(stale)
    # what a refusal names is a field of config.json
    assert not re.search(r"panic|goroutine", our_error)
