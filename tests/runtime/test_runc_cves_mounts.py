# SPDX-License-Identifier: MIT
"""zygote-runc against the classes of runc's CVEs on the image's files (test_runc_cves.py has
the runtime's own processes, fds as cwd, namespaces and devices):

- CVE-2021-30465: mount destinations through symlinks of the image, swapped during setup;
- CVE-2019-16884 / CVE-2025-52881: /proc and /sys as the image makes them, masked and read-only
  paths through its symlinks;
- CVE-2025-31133 / CVE-2025-52565: /dev/null and /dev/console as the image makes them;
- root.path a symlink: refused towards the host's root, resolved once.
"""
import contextlib
import os
import threading

import pytest

from containertools import container_id as cid
import zytest


# ---- CVE-2021-30465: mount destinations through symlinks of the image -----------------------------

RENAME_EXCHANGE = 2


def renameat2_exchange(a, b):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, a.encode(), -100, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), a)


@contextlib.contextmanager
def flipping(bundle):
    """While the body runs, a thread swaps the image's /flip and /flip-other (a symlink to /srv)
    back and forth, as a container process racing the runtime's mounts would."""
    stop = threading.Event()

    def flipper():
        a, b = os.path.join(bundle.rootfs, "flip"), os.path.join(bundle.rootfs, "flip-other")
        while not stop.is_set():
            renameat2_exchange(a, b)

    t = threading.Thread(target=flipper)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()


@pytest.fixture
def host_victim(tmp_path):
    """A host directory an escaping mount would land in (or create its target in)."""
    d = tmp_path / "host-victim"
    d.mkdir()
    (d / "host-file").write_text("host\n")
    return str(d)


def bind_mount(source, dest):
    return {"destination": dest, "type": "bind", "source": source, "options": ["rbind", "rw"]}


def test_mount_destination_through_an_image_symlink_stays_inside(runc, bundle, host_victim, tmp_path):
    """mounts[] destinations whose path in the rootfs passes through a symlink of the image that
    points outside it (absolute, `..` past the root, a magic link of /proc): the mount lands inside
    the rootfs, where the symlink resolves with the rootfs as "/", or the container is refused;
    nothing is created or mounted in the host's directory."""
    src = tmp_path / "mount-src"
    src.mkdir()
    (src / "from-source").write_text("source\n")
    links = {"abs": host_victim, "up": "../../../../../../../../.." + host_victim,
             "procroot": "/proc/self/root" + host_victim, "rootlink": "/", "fdlink": "/proc/self/fd/3"}
    for name, target in links.items():
        os.symlink(target, os.path.join(bundle.rootfs, name))
    before = sorted(os.listdir(host_victim))
    for name in links:
        for dest in (f"/{name}/zyg-m", f"/{name}/deeper/zyg-m"):
            bundle.config["mounts"] = [m for m in bundle.config["mounts"] if m["type"] != "bind"]
            bundle.config["mounts"].append(bind_mount(str(src), dest))
            bundle.set_args("sh", "-c", f"cat {dest}/from-source; ls {dest}/host-file 2>/dev/null && echo HOST; true")
            r = runc("run", "--bundle", bundle.path, cid())
            assert sorted(os.listdir(host_victim)) == before, (dest, os.listdir(host_victim))
            if r.returncode == 0:
                assert r.stdout.splitlines() == ["source"], (dest, r.stdout)
            else:
                assert "mount" in r.stderr, (dest, r.stderr)
    # an ordinary symlink of the image, inside it, still works
    os.makedirs(os.path.join(bundle.rootfs, "srv", "data"))
    os.symlink("/srv/data", os.path.join(bundle.rootfs, "data"))
    bundle.config["mounts"][-1] = bind_mount(str(src), "/data/zyg-m")
    bundle.set_args("cat", "/srv/data/zyg-m/from-source")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0 and r.stdout == "source\n", (r.stdout, r.stderr)


def test_mount_destination_swapped_to_a_symlink_during_setup(runc, bundle, host_victim, tmp_path):
    """A component of a mount destination flips between a directory and a symlink to the host
    (atomic rename exchange, as a second container sharing the volume did in the exploit) while
    containers start: no run may create or mount anything in the host's directory."""
    src = tmp_path / "mount-src"
    src.mkdir()
    (src / "from-source").write_text("source\n")
    os.mkdir(os.path.join(bundle.rootfs, "flip"))
    os.symlink(host_victim, os.path.join(bundle.rootfs, "flip-other"))
    stop = threading.Event()
    flips = [0]

    def flipper():
        a, b = os.path.join(bundle.rootfs, "flip"), os.path.join(bundle.rootfs, "flip-other")
        while not stop.is_set():
            renameat2_exchange(a, b)
            flips[0] += 1

    t = threading.Thread(target=flipper)
    t.start()
    try:
        results = []
        for i in range(12):
            bundle.config["mounts"] = [m for m in bundle.config["mounts"] if m["type"] != "bind"]
            bundle.config["mounts"].append(bind_mount(str(src), f"/flip/zyg-race-{i}"))
            bundle.set_args("true")
            results.append(runc("run", "--bundle", bundle.path, cid()).returncode)
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()
    assert flips[0] > 0
    assert sorted(os.listdir(host_victim)) == ["host-file"], os.listdir(host_victim)


def test_readonly_bind_stays_readonly_while_its_destination_flips(runc, bundle, tmp_path):
    """A read-only bind whose destination's parent flips between a directory and a symlink to
    another directory of the image while containers start: the flags must go on the bind that was
    made (not onto whatever a second lookup finds), so the source is never written through it."""
    src = tmp_path / "ro-src"
    src.mkdir()
    os.makedirs(os.path.join(bundle.rootfs, "flip", "zyg-ro"))
    os.makedirs(os.path.join(bundle.rootfs, "srv", "zyg-ro"))
    os.symlink("/srv", os.path.join(bundle.rootfs, "flip-other"))
    bundle.config["root"]["readonly"] = False
    bundle.config["mounts"].append({"destination": "/flip/zyg-ro", "type": "bind", "source": str(src),
                                    "options": ["rbind", "ro"]})
    bundle.set_args("sh", "-c", "touch /flip/zyg-ro/probe-a /srv/zyg-ro/probe-b /flip-other/zyg-ro/probe-c "
                    "2>/dev/null; true")
    with flipping(bundle):
        for _ in range(12):
            runc("run", "--bundle", bundle.path, cid())
    assert os.listdir(src) == [], os.listdir(src)


def in_user_namespace_on_host_network(bundle):
    """A user namespace (identity map, so the image's files stay root's) and the host's network
    namespace: the kernel refuses sysfs there, and the runtime binds the host's /sys instead."""
    ns = [n for n in bundle.config["linux"]["namespaces"] if n["type"] != "network"]
    bundle.config["linux"]["namespaces"] = ns + [{"type": "user"}]
    for k in ("uidMappings", "gidMappings"):
        bundle.config["linux"][k] = [{"containerID": 0, "hostID": 0, "size": 65536}]


def writable_sysfs_mounts(mountinfo):
    """Mount points of the sysfs binds (and what is below them) that are not read-only."""
    found = []
    for line in mountinfo.splitlines():
        pre, post = line.split(" - ", 1)
        fields = pre.split()
        if post.split()[0] == "sysfs" and "ro" not in fields[5].split(","):
            found.append(fields[4])
    return found


def test_sysfs_fallback_bind_is_readonly_while_its_destination_flips(runc, bundle, tmp_path):
    """The bind of the host's /sys made where a sysfs mount is refused (a user namespace on the
    host's network): read-only with everything below it, on /sys and on a destination whose parent
    flips between a directory and a symlink to a directory holding a writable bind of the config
    (where flags applied by a second lookup would land)."""
    from test_runtime import needs_user_namespaces
    needs_user_namespaces()
    in_user_namespace_on_host_network(bundle)
    bundle.set_args("cat", "/proc/self/mountinfo")
    r = runc("run", "--bundle", bundle.path, cid())
    if r.returncode != 0 and "user" in r.stderr and "not permitted" in r.stderr.lower():
        pytest.skip(f"no user namespace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    assert " /sys " in r.stdout and writable_sysfs_mounts(r.stdout) == [], r.stdout
    src = tmp_path / "rw-src"
    src.mkdir()
    os.makedirs(os.path.join(bundle.rootfs, "flip", "zyg-sys"))
    os.makedirs(os.path.join(bundle.rootfs, "srv", "zyg-sys"))
    os.symlink("/srv", os.path.join(bundle.rootfs, "flip-other"))
    bundle.config["mounts"] += [
        {"destination": "/srv/zyg-sys", "type": "bind", "source": str(src), "options": ["rbind", "rw"]},
        {"destination": "/flip/zyg-sys", "type": "sysfs", "source": "sysfs", "options": ["ro", "nosuid"]}]
    bundle.save()
    outs = []
    with flipping(bundle):
        for _ in range(12):
            r = runc("run", "--bundle", bundle.path, cid())
            if r.returncode == 0:
                outs.append(r.stdout)
    for out in outs:
        assert writable_sysfs_mounts(out) == [], out


# ---- CVE-2019-16884 / CVE-2025-52881: /proc and /sys as the image makes them ----------------------

@pytest.mark.parametrize("entry", ["proc", "sys"])
@pytest.mark.parametrize("target", ["/", "..", "tmp/fake", "/tmp/fake", "etc"])
def test_proc_and_sys_on_an_image_symlink_are_refused(runc, bundle, entry, target):
    """The image makes /proc or /sys a symlink (to its root, past it, to a directory of its own): the
    runtime must not mount procfs or sysfs wherever the symlink leads (masked and read-only paths
    would then miss the real files); the container is refused, as runc refuses it."""
    os.rmdir(os.path.join(bundle.rootfs, entry))
    os.makedirs(os.path.join(bundle.rootfs, "tmp", "fake"))
    os.symlink(target, os.path.join(bundle.rootfs, entry))
    bundle.set_args("sh", "-c", "stat -f -c %T /proc/ /sys/ /tmp/fake/ /etc/ /")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0, r.stdout
    assert "mount" in r.stderr, r.stderr


def test_masked_and_readonly_proc_paths_hold(runc, bundle):
    """The default maskedPaths and readonlyPaths: /proc/timer_list reads nothing (/proc/kcore is not
    on every kernel), /proc/sys refuses a write; /sys/firmware is empty."""
    bundle.set_args("sh", "-c", "wc -c < /proc/timer_list; stat -c %t:%T /proc/timer_list; "
                    "echo 1 > /proc/sys/kernel/ns_last_pid && echo WROTE-SYS; "
                    "ls -A /sys/firmware | wc -l; exit 0")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines[0] == "0" and lines[1] == "1:3", r.stdout
    assert "WROTE" not in r.stdout, r.stdout
    assert lines[-1] == "0", r.stdout


def test_masked_and_readonly_paths_through_image_symlinks(runc, bundle):
    """maskedPaths and readonlyPaths that the image makes symlinks (to its /etc/passwd, past the
    root, through a magic link): each is masked or read-only where it resolves inside the root, or
    the container is refused; never skipped."""
    etc = os.path.join(bundle.rootfs, "etc")
    with open(os.path.join(etc, "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    os.makedirs(os.path.join(bundle.rootfs, "srv", "rw"))
    variants = {"/etc/passwd": "/etc/zyg-masked", "../../../../../../etc/passwd": "/etc/zyg-masked",
                "/proc/self/root/etc/passwd": "/etc/zyg-masked"}
    for target, path in variants.items():
        link = os.path.join(bundle.rootfs, path.lstrip("/"))
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
        bundle.config["linux"]["maskedPaths"] = ["/proc/timer_list", path]
        bundle.set_args("sh", "-c", f"wc -c < {path}")
        r = runc("run", "--bundle", bundle.path, cid())
        if r.returncode == 0:
            assert r.stdout.strip() == "0", (target, r.stdout)
        else:
            assert "maskedPaths" in r.stderr, (target, r.stderr)
    for target in ("/srv/rw", "../../../../srv/rw"):
        link = os.path.join(bundle.rootfs, "zyg-ro")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
        bundle.config["linux"]["maskedPaths"] = ["/proc/timer_list"]
        bundle.config["linux"]["readonlyPaths"] = ["/proc/sys", "/zyg-ro"]
        bundle.config["root"]["readonly"] = False
        bundle.set_args("sh", "-c", "touch /srv/rw/x && echo WROTE; exit 0")
        r = runc("run", "--bundle", bundle.path, cid())
        if r.returncode == 0:
            assert "WROTE" not in r.stdout, (target, r.stdout)
        else:
            assert "readonlyPaths" in r.stderr, (target, r.stderr)


# ---- CVE-2025-31133 / CVE-2025-52565: /dev/null and /dev/console as the image makes them ----------

def without_dev_tmpfs(bundle):
    """The image's own /dev (no tmpfs over it): what it ships there is what setup meets."""
    bundle.config["mounts"] = [m for m in bundle.config["mounts"] if m["destination"] != "/dev"]
    bundle.config["root"]["readonly"] = False
    bundle.save()


@pytest.mark.parametrize("target", ["/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger", "../proc/self/environ"])
def test_mask_source_is_the_real_dev_null(runc, bundle, target):
    """The image ships /dev/null as a symlink to a procfs file: masking (which binds /dev/null over
    /proc/timer_list and the others) must not bind that file instead, which would open a writable
    core_pattern to the container at /proc/timer_list; masked paths read nothing or the container
    is refused."""
    without_dev_tmpfs(bundle)
    os.symlink(target, os.path.join(bundle.rootfs, "dev", "null"))
    bundle.set_args("sh", "-c", "wc -c < /proc/timer_list; stat -c %t:%T /proc/timer_list")
    r = runc("run", "--bundle", bundle.path, cid())
    if r.returncode == 0:
        assert r.stdout.split() == ["0", "1:3"], (target, r.stdout)
    else:
        assert "maskedPaths" in r.stderr or "device" in r.stderr, (target, r.stderr)


def run_with_terminal(runc, bundle, tmp_path, script):
    """create with a console socket, start, and what the pty shows until the process exits; or the
    failed create."""
    import socket
    name = cid()
    path = str(tmp_path / f"console-{name}.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    bundle.config["process"]["terminal"] = True
    bundle.set_args("sh", "-c", script + "; echo END-OF-PROBE")
    try:
        r = runc("create", "--bundle", bundle.path, "--console-socket", path, name)
        if r.returncode != 0:
            return r, None
        srv.settimeout(30)
        conn, _ = srv.accept()
        _, fds, _, _ = socket.recv_fds(conn, 16, 1)
        conn.close()
        master = fds[0]
        assert runc("start", name).returncode == 0
        out = zytest.read_until(master, b"END-OF-PROBE\r\n", 60)
        os.close(master)
        return r, out.decode(errors="replace")
    finally:
        srv.close()
        runc("delete", "--force", name)


@pytest.mark.parametrize("variant", ["console-abs", "console-up", "console-proc", "dev-symlink"])
def test_console_lands_on_dev_console_only(runc, bundle, tmp_path, variant):
    """terminal: true with an image that ships /dev/console as a symlink (to its /etc/passwd, past
    the root, to a procfs file) or /dev itself as a symlink: the pty is bound over /dev/console of
    the container only, or the container is refused; never over what the symlink names."""
    without_dev_tmpfs(bundle)
    with open(os.path.join(bundle.rootfs, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    dev = os.path.join(bundle.rootfs, "dev")
    if variant == "dev-symlink":
        os.rmdir(dev)
        os.symlink("/etc", dev)
    else:
        target = {"console-abs": "/etc/passwd", "console-up": "../../../../etc/passwd",
                  "console-proc": "/proc/sys/kernel/core_pattern"}[variant]
        os.symlink(target, os.path.join(dev, "console"))
    r, out = run_with_terminal(runc, bundle, tmp_path,
                               "head -c 5 /etc/passwd; echo; stat -c %t /dev/console; "
                               "stat -c %t /proc/sys/kernel/core_pattern")
    if out is None:
        # refused: at the console, or (a /dev that is a symlink) already where masking looks for
        # the real /dev/null
        assert "console" in r.stderr or "maskedPaths" in r.stderr, r.stderr
        return
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "root:", out
    assert lines[1] == "88", out  # 136: a pty of the container's devpts
    assert lines[2] == "0", out   # core_pattern is still procfs's own file


# ---- root.path a symlink ------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["/", "../../../../../../../..", "/proc/self/root", "/proc/1/root"])
def test_rootfs_symlink_to_the_host_root_is_refused(runc, bundle, target):
    """root.path is a symlink to the host's "/" (directly, by `..`, by a magic link): refused."""
    link = os.path.join(bundle.path, "rootfs-link")
    os.symlink(target, link)
    bundle.config["root"]["path"] = "rootfs-link"
    bundle.set_args("true")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode != 0
    assert "rootfs" in r.stderr, r.stderr


def test_rootfs_symlink_is_resolved_once(runc, bundle):
    """root.path a symlink to another directory works; one that flips between the image and the
    host's "/" while containers start gives each either the image or a refusal, never the host."""
    with open(os.path.join(bundle.rootfs, "zyg-image-marker"), "w") as f:
        f.write("image\n")
    os.symlink("rootfs", os.path.join(bundle.path, "rootfs-link"))
    bundle.config["root"]["path"] = "rootfs-link"
    bundle.config["root"]["readonly"] = True
    bundle.set_args("sh", "-c", "cat /zyg-image-marker || echo NOT-THE-IMAGE")
    r = runc("run", "--bundle", bundle.path, cid())
    assert r.returncode == 0 and r.stdout == "image\n", (r.stdout, r.stderr)

    other = os.path.join(bundle.path, "rootfs-other")
    os.symlink("/", other)
    link = os.path.join(bundle.path, "rootfs-link")
    stop = threading.Event()

    def flipper():
        while not stop.is_set():
            renameat2_exchange(link, other)

    t = threading.Thread(target=flipper)
    t.start()
    try:
        outs = [runc("run", "--bundle", bundle.path, cid()) for _ in range(12)]
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()
    for r in outs:
        if r.returncode == 0:
            assert r.stdout == "image\n", r.stdout
        else:
            assert "rootfs" in r.stderr, r.stderr


# ---- CVE-2025-52881: the runtime's writes into procfs, with a mount over /proc ---------------------

SYSCTLS = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234", "kernel.domainname": "zyg-domain"}
SYS_FSOPEN = 430  # the same number on every architecture


def without_fsopen():
    """preexec_fn: a seccomp filter that fails fsopen(2) with EPERM, as a runtime without
    CAP_SYS_ADMIN over its pid namespace finds it: the runtime falls back to the mounted /proc."""
    import ctypes
    import errno

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    insns = (Filter * 4)(Filter(0x20, 0, 0, 0),                    # A = seccomp_data.nr
                         Filter(0x15, 0, 1, SYS_FSOPEN),           # A == fsopen ?
                         Filter(0x06, 0, 0, 0x00050000 | errno.EPERM),
                         Filter(0x06, 0, 0, 0x7fff0000))
    prog = Prog(4, insns)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        os._exit(126)


@pytest.mark.parametrize("tier", ["own-procfs", "mounted-proc"])
@pytest.mark.parametrize("over", ["/proc/sys", "/proc/sys/net", "/proc/sys/net/ipv4", "/proc/sys/kernel"])
def test_sysctl_writes_ignore_a_mount_over_proc(runc, bundle, tmp_path, over, tier):
    """A directory mounted over /proc/sys or part of it in the mount namespace the runtime runs in
    (as a volume with shared propagation lets another container do): the runtime's sysctl writes
    must reach the container's namespaces, never the files of that mount. With a procfs of its own
    they go where they belong; forced onto the mounted /proc (fsopen refused), a write that would
    cross into the mount is refused, and the container with it."""
    import subprocess
    decoy = tmp_path / "decoy"
    rel_over = os.path.relpath(over, "/proc/sys")
    planted = []
    for key in list(SYSCTLS) + ["kernel.cap_last_cap"]:
        rel = os.path.relpath(os.path.join(*key.split(".")), rel_over if rel_over != "." else "")
        if rel.startswith(".."):
            continue
        path = decoy / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open("/proc/sys/" + key.replace(".", "/")) as f:
            real = f.read()
        # what the runtime itself reads there stays true; the rest is bait
        path.write_text(real if key == "kernel.cap_last_cap" else "untouched\n")
        planted.append(path)
    bundle.config["linux"]["sysctl"] = SYSCTLS
    bundle.set_args("cat", *("/proc/sys/" + k.replace(".", "/") for k in SYSCTLS))
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount --bind {decoy} {over} && exec "$@"', "sh",
            runc.binary, "--root", runc.root, "--log", runc.log, "run", "--bundle", bundle.path, cid()]
    if tier == "mounted-proc":
        # masked directories are empty tmpfs made with fsopen too
        bundle.config["linux"]["maskedPaths"] = []
        bundle.save()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       preexec_fn=without_fsopen if tier == "mounted-proc" else None)
    for path in planted:
        if path.name != "cap_last_cap":
            assert path.read_text() == "untouched\n", f"the write for {path} went into the mount over {over}"
    if r.returncode != 0 and tier == "mounted-proc":
        assert "sysctl" in r.stderr, r.stderr
        return
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == list(SYSCTLS.values()), r.stdout
