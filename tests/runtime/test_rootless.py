# SPDX-License-Identifier: MIT
"""zygote-runc run by a user, as rootless podman runs it: as nobody, and as root of a user
namespace that nobody made (podman's rootless runtime runs there, uid 0 without a host cgroup).
The state root follows runc's ($XDG_RUNTIME_DIR/zygote-runc where runc takes
$XDG_RUNTIME_DIR/runc), cgroups it may not make are gone without, a limit asked for is refused by
name, a cgroup delegated to the user is used; runc (Debian's 1.1) beside it on the same bundle."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import uuid

import pytest

from conftest import rootless_config  # noqa: E402
from test_runtime import needs_user_namespaces  # noqa: E402

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
# root of a user namespace of nobody's: the host's cgroups and /run are not its to write
IN_USERNS = AS_NOBODY + ["unshare", "--user", "--map-root-user"]


def cid():
    return "rl-" + uuid.uuid4().hex[:10]


@pytest.fixture
def user(runc_bin, bundle, open_tmp):
    """The bundle as nobody's, its config `spec --rootless`'s without /sys mounts (runc binds the
    host's /sys there, this runtime mounts a sysfs: not what is compared here), the runtime
    copied where nobody reaches it, and an XDG_RUNTIME_DIR of nobody's."""
    needs_user_namespaces()
    binary = str(open_tmp / "zygote-runc")
    shutil.copy(runc_bin, binary)
    # root of nobody's user namespace is nobody on the host: the container maps its root there
    cfg = rootless_config(runc_bin, bundle, 0)
    cfg["mounts"] = [m for m in cfg["mounts"] if not m["destination"].startswith("/sys")]
    cfg["process"]["args"] = ["sh", "-c", "id -u; cat /proc/self/uid_map"]
    xdg = open_tmp / "xdg"
    xdg.mkdir(mode=0o700)
    u = type("User", (), {})()
    u.binary, u.cfg, u.bundle, u.xdg, u.states = binary, cfg, bundle, str(xdg), []
    yield u
    # a container a failed test left behind, as the user who made it
    for root, c in u.states:
        run_as(IN_USERNS, [binary, "--root", root, "delete", "--force", c], timeout=30)


def save(u, host_id=0):
    """Writes the config, the container's root mapped to host_id: 0 for a runtime that is root of
    nobody's user namespace (nobody on the host), NOBODY for one that is nobody."""
    for m in u.cfg["linux"]["uidMappings"] + u.cfg["linux"]["gidMappings"]:
        m["hostID"] = host_id
    with open(os.path.join(u.bundle.path, "config.json"), "w") as f:
        json.dump(u.cfg, f)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", u.bundle.path, u.xdg], check=True)


def run_as(prefix, argv, env=None, timeout=60):
    """prefix + argv in an environment of env only (and PATH); output through files, as a created
    container's init keeps the runtime's stdio (conftest.Runtime)."""
    e = {"PATH": os.environ["PATH"]}
    e.update(env or {})
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        r = subprocess.run(prefix + argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True,
                           timeout=timeout, env=e)
        out.seek(0)
        err.seek(0)
        r.stdout, r.stderr = out.read(), err.read()
        return r


@pytest.mark.parametrize("who", ["nobody", "userns-root"])
def test_state_root_follows_xdg_runtime_dir(user, who):
    """Without --root, a user's containers are in $XDG_RUNTIME_DIR/zygote-runc (sticky, as runc
    marks its own so that the directory is not pruned), and every command finds them there."""
    save(user, NOBODY if who == "nobody" else 0)
    prefix = AS_NOBODY if who == "nobody" else IN_USERNS
    env = {"XDG_RUNTIME_DIR": user.xdg, "USER": "nobody"}
    c = cid()
    user.states.append((os.path.join(user.xdg, "zygote-runc"), c))
    r = run_as(prefix, [user.binary, "create", "--bundle", user.bundle.path, c], env)
    assert r.returncode == 0, r.stderr
    root = os.path.join(user.xdg, "zygote-runc")
    assert os.path.isdir(os.path.join(root, c))
    assert os.stat(root).st_mode & (stat.S_ISVTX | 0o777) == stat.S_ISVTX | 0o700
    r = run_as(prefix, [user.binary, "state", c], env)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "created", r.stderr
    r = run_as(prefix, [user.binary, "delete", "--force", c], env)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(os.path.join(root, c))


@pytest.mark.parametrize("env", [{}, {"XDG_RUNTIME_DIR": "XDG", "USER": "root"}], ids=["no-xdg", "userns-user-root"])
def test_state_root_refusal_says_what_to_do(user, env):
    """A user whose default state root is /run/zygote-runc (no XDG_RUNTIME_DIR; or root of a user
    namespace whose USER is root, which runc keeps on /run too): the message names the path and
    the way out, and nothing is left behind."""
    save(user, 0 if env else NOBODY)
    env = {k: (user.xdg if v == "XDG" else v) for k, v in env.items()}
    c = cid()
    r = run_as(IN_USERNS if env else AS_NOBODY, [user.binary, "run", "--bundle", user.bundle.path, c], env)
    assert r.returncode != 0
    assert "state root /run/zygote-runc: permission denied; as a user pass --root DIR or set XDG_RUNTIME_DIR" \
        in r.stderr, r.stderr
    assert os.listdir(user.xdg) == []


def runc_beside(user, root):
    """Debian's runc on the same bundle in the same place (None where it is not installed)."""
    if not shutil.which("runc"):
        return None
    return run_as(IN_USERNS, ["runc", "--root", root, "run", "--bundle", user.bundle.path, cid()])


def test_userns_root_goes_without_cgroups(user):
    """Root of a user namespace (podman's rootless runtime) may not make cgroups on the host: the
    container runs without (no limits were asked for), as with runc."""
    save(user)
    root = os.path.join(user.xdg, "state")
    r = run_as(IN_USERNS, [user.binary, "--root", root, "run", "--bundle", user.bundle.path, cid()])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "0"
    assert r.stdout.split("\n")[1].split() == ["0", "0", "1"]
    rr = runc_beside(user, os.path.join(user.xdg, "runc"))
    assert rr is None or (rr.returncode == 0 and rr.stdout == r.stdout), rr.stderr


def test_rootless_limit_is_refused_by_name(user):
    """A limit asked for is never dropped: without a cgroup of its own in the memory hierarchy,
    the start fails naming the field and what to do; nothing is left behind. runc refuses too."""
    user.cfg["linux"]["resources"] = {"memory": {"limit": 64 << 20}}
    save(user)
    root = os.path.join(user.xdg, "state")
    r = run_as(IN_USERNS, [user.binary, "--root", root, "run", "--bundle", user.bundle.path, cid()])
    assert r.returncode != 0
    assert "linux.resources.memory.limit: the container has no cgroup in the memory hierarchy" in r.stderr
    assert "delegated" in r.stderr
    assert os.listdir(root) == []
    rr = runc_beside(user, os.path.join(user.xdg, "runc"))
    assert rr is None or (rr.returncode != 0 and "cannot set memory limit" in rr.stderr), rr.stdout


def own_cgroup(controller):
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctls, path = line.rstrip("\n").split(":", 2)
            if controller in ctls.split(","):
                return path
    return None


@pytest.fixture
def delegated_memory_cgroup():
    """A v1 memory cgroup given to nobody (what systemd's Delegate= does for a user's service)."""
    own = own_cgroup("memory")
    base = "/sys/fs/cgroup/memory"
    if own is None or not os.path.isdir(base):
        pytest.skip("no cgroup v1 memory hierarchy here (the delegated case on cgroup2 is the unified one)")
    d = os.path.join(base + (own if own != "/" else ""), "zytest-deleg-" + uuid.uuid4().hex[:8])
    os.mkdir(d)
    os.chown(d, NOBODY, NOBODY)
    yield d
    for sub in os.listdir(d):
        if os.path.isdir(os.path.join(d, sub)):
            os.rmdir(os.path.join(d, sub))
    os.rmdir(d)


def test_delegated_cgroup_is_used(user, delegated_memory_cgroup):
    """Started from a memory cgroup nobody may write: the container's cgroup is made below it and
    the limit applied there, while the hierarchies nobody may not write are gone without."""
    user.cfg["linux"]["resources"] = {"memory": {"limit": 64 << 20}}
    save(user)
    root = os.path.join(user.xdg, "state")
    c = cid()
    user.states.append((root, c))
    # the caller (root) steps into the delegated cgroup, then becomes nobody's user namespace root
    step_in = ["sh", "-c", f'echo $$ > {delegated_memory_cgroup}/cgroup.procs && exec "$@"', "sh"]
    r = run_as(step_in + IN_USERNS, [user.binary, "--root", root, "create", "--bundle", user.bundle.path, c])
    assert r.returncode == 0, r.stderr
    mine = os.path.join(delegated_memory_cgroup, c)
    with open(os.path.join(mine, "memory.limit_in_bytes")) as f:
        assert int(f.read()) == 64 << 20
    pid = json.loads(run_as(IN_USERNS, [user.binary, "--root", root, "state", c]).stdout)["pid"]
    with open(os.path.join(mine, "cgroup.procs")) as f:
        assert str(pid) in f.read().split()
    r = run_as(IN_USERNS, [user.binary, "--root", root, "delete", "--force", c])
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(mine)


@pytest.mark.parametrize("who", ["nobody", "userns-root"])
def test_idmapped_mount_refused_by_name(user, open_tmp, who):
    """An id mapping needs CAP_SYS_ADMIN over the source's filesystem, which a rootless runtime
    lacks: refused by name before anything is made, as runc refuses it (test_idmap_mounts.py has
    root's)."""
    src = open_tmp / "idsrc"
    src.mkdir()
    os.makedirs(os.path.join(user.bundle.rootfs, "mnt"), exist_ok=True)
    user.cfg["mounts"].append({"destination": "/mnt", "type": "bind", "source": str(src), "options": ["bind", "idmap"]})
    save(user, NOBODY if who == "nobody" else 0)
    env = {"XDG_RUNTIME_DIR": user.xdg, "USER": "nobody"}
    c = cid()
    user.states.append((os.path.join(user.xdg, "zygote-runc"), c))
    r = run_as(AS_NOBODY if who == "nobody" else IN_USERNS, [user.binary, "run", "--bundle", user.bundle.path, c], env)
    assert r.returncode != 0
    assert "id-mapped mounts (mounts[" in r.stderr and "not supported for a rootless container" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(user.xdg, "zygote-runc", c))
