# SPDX-License-Identifier: MIT
"""ReloadProfiles: root only; a new or changed file loads, a broken one is reported and keeps its
old version in service; an unchanged profile keeps its reference process."""
import json
import os
import shutil

import pytest

import zytest
from zytest import NOBODY, NOGROUP

L = "io.zygote.Launcher."


def mine(blocked):
    return {"name": "mine", "capabilities": ["CAP_KILL"], "noNewPrivileges": True,
            "seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
                        "syscalls": [{"names": blocked, "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}}


def write(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    os.rename(tmp, path)  # a reload never sees half a file


def errno_of(d, bins, profile, call):
    with d.connect() as c:
        out, final, _ = zytest.run_task(c, [bins["try-syscall"], call], profile=profile)
    assert final["exitCode"] == 0
    return int(out.decode().split("errno=")[1])


def reload(d, uid=0):
    with d.connect_as(uid, uid) as c:
        return c.call(L + "ReloadProfiles", check=False)


def test_reload(daemons, bins, needs_root):
    pdir = daemons.workdir()
    for n in ("default", "nonet"):
        shutil.copy(os.path.join(bins["profiles"], f"{n}.json"), pdir)
    write(os.path.join(pdir, "mine.json"), mine(["add_key"]))
    d = daemons(profile_dirs=[pdir])
    before = d.profiles()
    assert set(before) == {"default", "nonet", "mine"}
    assert errno_of(d, bins, "mine", "add_key") == 1 and errno_of(d, bins, "mine", "keyctl") != 1

    # Non-root: refused, nothing changes.
    e = reload(d, NOBODY)
    assert e.error == L + "PermissionDenied", dict(e)

    # Nothing changed: same profiles, same references.
    r = reload(d)
    assert not r.error and set(r.parameters["loaded"]) == {"default", "nonet", "mine"}
    assert r.parameters["failed"] == []
    after = d.profiles()
    for n in before:
        assert after[n]["hash"] == before[n]["hash"]
        assert after[n].get("referencePid") == before[n].get("referencePid"), n

    # A changed file: a new program, a new reference, new decisions.
    write(os.path.join(pdir, "mine.json"), mine(["keyctl"]))
    r = reload(d)
    assert not r.error and "mine" in r.parameters["loaded"], dict(r)
    p = d.profiles()["mine"]
    assert p["hash"] != before["mine"]["hash"]
    assert p.get("referencePid") != before["mine"].get("referencePid")
    assert errno_of(d, bins, "mine", "keyctl") == 1 and errno_of(d, bins, "mine", "add_key") != 1
    good_hash = p["hash"]

    # A new broken file is reported (naming the file) and loads nothing.
    write(os.path.join(pdir, "broken.json"), '{"defaultAction": ')
    # A file that turns bad keeps its previous version in service.
    write(os.path.join(pdir, "mine.json"), '{"name": "mine", "seccomp": 5}')
    r = reload(d)
    assert not r.error, dict(r)
    failed = " ".join(r.parameters["failed"])
    assert "broken.json" in failed and "mine.json" in failed, r.parameters
    profiles = d.profiles()
    assert "broken" not in profiles
    assert profiles["mine"]["hash"] == good_hash
    assert errno_of(d, bins, "mine", "keyctl") == 1

    # launchctl reload says so with exit 1.
    lr = d.launchctl("reload")
    assert lr.returncode == 1, (lr.stdout, lr.stderr)

    # A removed file: the profile goes away.
    os.unlink(os.path.join(pdir, "broken.json"))
    os.unlink(os.path.join(pdir, "mine.json"))
    r = reload(d)
    assert not r.error and r.parameters["failed"] == []
    assert "mine" not in d.profiles()
    with d.connect() as c:
        e = c.call_error(L + "Spawn", {"argv": ["true"], "profile": "mine"})
        assert e.error == L + "NoSuchProfile"
    # default still serves.
    assert errno_of(d, bins, "default", "mount") == 1


def test_a_file_that_fails_is_named_to_callers(daemons, bins, needs_root):
    """A profile file that does not parse names no profile: a call for the profile it was meant
    to be is told that files failed, and which, beside NoSuchProfile; `launchctl profiles` and
    `status` list them, from the start-up load and from each reload."""
    pdir = daemons.workdir()
    shutil.copy(os.path.join(bins["profiles"], "default.json"), pdir)
    broken = os.path.join(pdir, "web.json")
    write(broken, '{"name": "web", "capabilities": [')
    d = daemons(profile_dirs=[pdir])
    with d.connect() as c:
        e = c.call(L + "ListProfiles", check=False)
    assert [f.split(":")[0] for f in e.parameters["failedFiles"]] == [broken], dict(e)
    r = d.launchctl("run", "--profile", "web", "--", "/bin/true")
    assert r.returncode != 0
    lines = r.stderr.decode().splitlines()
    assert lines[:2] == ["launchctl: run: no such profile 'web'", "launchctl: 1 profile file failed to load:"], lines
    assert lines[2].startswith(f"  {broken}: "), lines
    for verb in ("profiles", "status"):
        out = d.launchctl(verb).stdout.decode()
        assert f"failed to load: {broken}: " in out, out
    st = json.loads(d.launchctl("status", "--json").stdout)
    assert [f.split(":")[0] for f in st["failed_files"]] == [broken], st
    # fixed and reloaded: nothing failed any more, and the profile is there
    write(broken, mine(["add_key"]) | {"name": "web"})
    assert reload(d).parameters["failed"] == []
    assert "failed to load" not in d.launchctl("profiles").stdout.decode()
    assert d.launchctl("run", "--profile", "web", "--", "/bin/true").returncode == 0
