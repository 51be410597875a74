# SPDX-License-Identifier: MIT
"""Id-mapped bind mounts (mounts[].uidMappings/gidMappings, the "idmap" and "ridmap" options of
runtime-spec 1.1), as runc 1.2 and crun make them: the runtime gives a detached copy of the source
its mapping before the init is cloned (container/idmap-userns.c: only a caller outside any user
namespace may), and the init attaches it (engine/sandbox-mount.c). A mapping {containerID C,
hostID H} shows a file owned on disk by C + i as owned by H + i, before the container's own user
namespace (if any) maps that id. Root tests; the user-namespace ones skip where a user namespace
is refused (a chroot). Run by ctest runtime-cli."""
import json
import os
import subprocess
import uuid

import pytest

import containertools as ct
from containertools import processes_naming

NOBODY = 65534  # the overflow id: an owner the mount does not map


def cid():
    return "im-" + uuid.uuid4().hex[:12]


def mapping(container, host, size):
    return [{"containerID": container, "hostID": host, "size": size}]


def source_tree(open_tmp, owners):
    """A source directory with a file per (name, uid, gid); readable by everyone."""
    src = open_tmp / "src"
    src.mkdir()
    os.chmod(src, 0o777)
    for name, uid, gid in owners:
        p = src / name
        p.write_text(name + "\n")
        os.chown(p, uid, gid)
    return src


@pytest.fixture(autouse=True)
def _userns_possible():
    """Every id-mapped mount takes a user namespace of its mappings (container/idmap-userns.c): none
    can be made here, none can be tested (the refusals of bad mappings: unit-runc-config-idmap)."""
    why = ct.userns_refused()
    if why:
        pytest.skip(f"no user namespace can be made here ({why}): an id-mapped mount needs one")


def bind(bundle, src, dest="/mnt", options=("bind",), uid_map=None, gid_map=None):
    # made here: a user namespace's root may not make it in the image's root
    os.makedirs(os.path.join(bundle.rootfs, dest.lstrip("/")), exist_ok=True)
    m = {"destination": dest, "type": "bind", "source": str(src), "options": list(options)}
    if uid_map is not None:
        m["uidMappings"] = uid_map
    if gid_map is not None:
        m["gidMappings"] = gid_map
    bundle.config["mounts"].append(m)


def user_namespace(bundle, base=100000, size=65536):
    bundle.config["linux"]["namespaces"].append({"type": "user"})
    bundle.config["linux"]["uidMappings"] = mapping(0, base, size)
    bundle.config["linux"]["gidMappings"] = mapping(0, base, size)


def run(runc, bundle, script, userns=False):
    bundle.set_args("sh", "-c", script)
    name = cid()
    r = runc("run", "--bundle", bundle.path, name)
    if userns and r.returncode != 0 and "clone3: operation not permitted" in r.stderr:
        pytest.skip(f"user namespace refused here: {r.stderr}")
    if r.returncode != 0 and "a filesystem without id-mapped mounts" in r.stderr and "/proc/" not in r.stderr:
        pytest.skip(f"the test directory's filesystem takes no id mapping here: {r.stderr}")
    assert not os.path.exists(os.path.join(runc.root, name)), "state directory left behind"
    assert processes_naming(name) == [], "a process of the container is left"
    return r


def owners(r):
    """`stat -c '%n=%u:%g'` lines as a dict."""
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.split())


STAT = "cd /mnt && stat -c '%n=%u:%g' *"


@pytest.mark.timeout(60)
def test_mapped_without_a_user_namespace(runc, bundle, open_tmp):
    # disk 1000..1009 show as 2000..2009; what the mapping leaves out shows as nobody
    src = source_tree(open_tmp, [("a", 1000, 1000), ("b", 1005, 1007), ("root", 0, 0)])
    bind(bundle, src, options=("bind", "idmap"), uid_map=mapping(1000, 2000, 10), gid_map=mapping(1000, 3000, 10))
    assert owners(run(runc, bundle, STAT)) == {"a": "2000:3000", "b": "2005:3007", "root": f"{NOBODY}:{NOBODY}"}
    # the host's view is untouched
    assert os.stat(src / "a").st_uid == 1000


@pytest.mark.timeout(60)
def test_container_holds_no_copy_of_the_runtimes(runc, bundle, open_tmp):
    """The detached copies the init attached are closed before anything of the container runs:
    pid 1 (the shell, exec'd by the init) has stdio and nothing else."""
    src = source_tree(open_tmp, [("a", 1000, 1000)])
    for i in range(3):
        bind(bundle, src, dest=f"/m{i}", options=("rbind", "ridmap"), uid_map=mapping(1000, 2000, 1),
             gid_map=mapping(1000, 2000, 1))
    # pid 1 is the shell; ls, its child, lists pid 1's fds
    r = run(runc, bundle, "echo pid=$$; ls /proc/1/fd; stat -c owner=%u /m2/a")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["pid=1", "0", "1", "2", "owner=2000"], r.stdout


@pytest.mark.timeout(60)
def test_mappings_alone_imply_idmap_and_options_apply(runc, bundle, open_tmp):
    """uidMappings without idmap or ridmap is an idmap (runc 1.2); "ro" goes on the mapped copy."""
    src = source_tree(open_tmp, [("a", 1000, 1000)])
    bind(bundle, src, options=("bind", "ro"), uid_map=mapping(1000, 2000, 1), gid_map=mapping(1000, 2000, 1))
    r = run(runc, bundle, STAT + "; touch /mnt/new 2>/dev/null && echo rw=1 || echo rw=0")
    assert owners(r) == {"a": "2000:2000", "rw": "0"}


@pytest.mark.timeout(60)
def test_idmap_takes_the_containers_user_namespace(runc, bundle, open_tmp):
    """Kubernetes' case: files show inside with the ids they have on disk, and what the container
    writes is owned on disk by the container's ids, not the user namespace's host ids."""
    src = source_tree(open_tmp, [("root", 0, 0), ("user", 1000, 1000)])
    user_namespace(bundle)
    bind(bundle, src, options=("bind", "idmap"))
    r = run(runc, bundle, "touch /mnt/made; " + STAT, userns=True)
    assert owners(r) == {"root": "0:0", "user": "1000:1000", "made": "0:0"}
    st = os.stat(src / "made")
    assert (st.st_uid, st.st_gid) == (0, 0)  # not 100000: the user namespace's host id
    # and as the container's user 1000
    bundle.config["process"]["user"] = {"uid": 1000, "gid": 1000}
    r = run(runc, bundle, "touch /mnt/by-user && echo made=1", userns=True)
    assert r.returncode == 0 and r.stdout == "made=1\n", r.stderr
    st = os.stat(src / "by-user")
    assert (st.st_uid, st.st_gid) == (1000, 1000)


@pytest.mark.timeout(60)
def test_without_idmap_the_same_mount_shows_nobody(runc, bundle, open_tmp):
    """The control of the test above: a plain bind in the same user namespace."""
    src = source_tree(open_tmp, [("root", 0, 0)])
    user_namespace(bundle)
    bind(bundle, src)
    assert owners(run(runc, bundle, STAT, userns=True)) == {"root": f"{NOBODY}:{NOBODY}"}


@pytest.mark.timeout(60)
def test_mount_mapping_other_than_the_containers(runc, bundle, open_tmp):
    # disk 0 -> kernel 100500 -> the container's 500
    src = source_tree(open_tmp, [("root", 0, 0)])
    user_namespace(bundle)
    bind(bundle, src, options=("bind", "idmap"), uid_map=mapping(0, 100500, 10), gid_map=mapping(0, 100600, 10))
    assert owners(run(runc, bundle, STAT, userns=True)) == {"root": "500:600"}


@pytest.fixture
def tree_with_submount(open_tmp):
    """src/top (1000) and a tmpfs on src/sub holding inner (1000): a mount below the source."""
    src = source_tree(open_tmp, [("top", 1000, 1000)])
    sub = src / "sub"
    sub.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=777", "sub", str(sub)], check=True)
    try:
        (sub / "inner").write_text("inner\n")
        os.chown(sub / "inner", 1000, 1000)
        yield src
    finally:
        subprocess.run(["umount", "-l", str(sub)], check=True)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("option,inner", [("ridmap", "2000:2000"), ("idmap", "1000:1000")])
def test_ridmap_maps_the_mounts_below(runc, bundle, tree_with_submount, option, inner):
    """rbind with ridmap maps every mount of the tree; with idmap the top one alone."""
    bind(bundle, tree_with_submount, options=("rbind", option), uid_map=mapping(1000, 2000, 1),
         gid_map=mapping(1000, 2000, 1))
    r = run(runc, bundle, "stat -c '%n=%u:%g' /mnt/top /mnt/sub/inner")
    assert owners(r) == {"/mnt/top": "2000:2000", "/mnt/sub/inner": inner}


def refused(runc, bundle, words, userns=False):
    r = run(runc, bundle, "echo ran", userns=userns)
    assert r.returncode != 0 and "ran" not in r.stdout
    for w in words:
        assert w in r.stderr, r.stderr
    return r


@pytest.mark.timeout(60)
@pytest.mark.parametrize("options,uid_map,gid_map,words", [
    (("bind", "idmap"), mapping(0, 1000, 1), None, ["mounts[", "both uidMappings and gidMappings"]),
    (("bind", "idmap"), None, None, ["mounts[", "idmap without uidMappings", "has none"]),
    (("rbind", "ridmap"), None, None, ["ridmap without uidMappings"]),
    (("bind",), mapping(0, -1, 1), mapping(0, 0, 1), ["mounts[", ".uidMappings[0]"]),
    (("bind",), mapping(0, 0, 1), mapping(0, 0, 0), [".gidMappings[0]"]),
    (("bind",), mapping(4294967290, 0, 10), mapping(0, 0, 1), [".uidMappings[0]"]),
    (("bind",), [], mapping(0, 0, 1), [".uidMappings: an array of 1 to 340 mappings"]),
    (("bind", "idmap", "ridmap"), mapping(0, 0, 1), mapping(0, 0, 1), ["idmap or ridmap, not both"]),
])
def test_bad_mappings_refused(runc, bundle, open_tmp, options, uid_map, gid_map, words):
    bind(bundle, source_tree(open_tmp, []), options=options, uid_map=uid_map, gid_map=gid_map)
    refused(runc, bundle, words)


@pytest.mark.timeout(60)
def test_idmap_on_a_filesystem_mount_refused(runc, bundle):
    bundle.config["mounts"].append({"destination": "/mnt", "type": "tmpfs", "source": "tmpfs",
                                    "options": ["idmap"], "uidMappings": mapping(0, 1000, 1),
                                    "gidMappings": mapping(0, 1000, 1)})
    refused(runc, bundle, ["mounts[", "bind mounts only"])


@pytest.mark.timeout(60)
def test_kernel_refusal_named(runc, bundle):
    """procfs takes no id mapping: the kernel's EINVAL, said with the mount, nothing left behind
    (the helper process of the mapping reaped)."""
    bind(bundle, "/proc/sys", options=("bind", "idmap"), uid_map=mapping(0, 1000, 1), gid_map=mapping(0, 1000, 1))
    r = refused(runc, bundle, ["id-mapped mount of /proc/sys", "without id-mapped mounts"])
    assert processes_naming(bundle.path) == []


@pytest.mark.timeout(60)
def test_features_advertises_idmap(runc):
    r = runc("features")
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)
    assert f["linux"]["mountExtensions"]["idmap"]["enabled"] is True
    assert {"idmap", "ridmap"} <= set(f["mountOptions"])
