# SPDX-License-Identifier: MIT
"""zygote installed from its Debian package on a Debian 12 booted under a real systemd as PID 1
(systemd-nspawn -b), checked as a user meets it (issue #27; docs/SYSTEMD.md, "Tests").

The module's fixture builds the package from this build tree (cpack, as test_package.py does),
makes or reuses a debootstrapped bookworm (machine.cached_root), installs the package with dpkg
in a chroot on a fresh overlay of it (its postinst enables zygoted.socket), adds one drop-in (the
watchdog's, below), boots it and records the units' states before anything calls zygoted. Each
test then checks one thing in the running system; the teardown powers the container off and
fails the module if a process, mount, cgroup or file of it is left.

Commands run in the container through nsenter, as root. Those that call zygoted run in a scope of
the container's systemd (`systemd-run --scope`, machine.shell), as an administrator's login shell
runs in a unit: zygoted starts a task in its caller's cgroup, and the test's own cgroup is not in
the container's hierarchy.

Skipped, with the reason, where the machine cannot boot it: not root, no systemd-nspawn or
debootstrap, chrooted (scripts/fresh-check.sh's rehearsal), no overlayfs or cgroup hierarchy, no
Debian mirror for the first debootstrap. A boot that fails is a failure.

Run: ZYGOTE_BUILD_DIR=build /usr/bin/python3 -m pytest -q -rs tests/system/test_systemd_boot.py
"""
import json
import os
import re
import time

import pytest

import machine as mc

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOCKET = "/run/zygote/zygoted.sock"
USER = "zyuser"
# Fixture work (package, debootstrap, boot, teardown) is bounded by its own commands' timeouts and
# by the ctest entry's bound; each check by this.
pytestmark = pytest.mark.timeout(180, func_only=True)

# The unit's WatchdogSec=30s would make the watchdog check wait half a minute for systemd to
# notice a stopped daemon. 6 s keeps it short and still twice the daemon's ping interval (it pings
# every WATCHDOG_USEC / 2, from its event loop), so a daemon that is merely slow on a loaded machine
# is not taken for a stuck one. The whole run uses it, so a daemon whose pings came late would be
# restarted in any check (and the watchdog check counts NRestarts exactly).
WATCHDOG_DROPIN = """\
# test_systemd_boot.py: a short watchdog, so that the check of a stopped daemon waits 6 s, not 30.
[Service]
WatchdogSec=6s
"""


def build_dir():
    return os.path.abspath(os.environ.get("ZYGOTE_BUILD_DIR") or os.path.join(SOURCE_DIR, "build"))


@pytest.fixture(scope="module")
def machine(request, tmp_path_factory):
    reason = mc.why_not_here()
    if reason:
        pytest.skip(reason)
    build = build_dir()
    if not os.access(os.path.join(build, "zygoted"), os.X_OK):
        pytest.fail(f"not built: {build}/zygoted (build first: cmake --build {build})")
    mc.private_mounts()
    t0 = time.monotonic()
    deb, depends = mc.build_package(build, tmp_path_factory.mktemp("deb"))
    mc.timed("cpack", time.monotonic() - t0)
    lower, took = mc.cached_root(depends)
    if lower is None:
        pytest.skip(took)
    mc.timed(f"debootstrap of {lower}" if took else f"root reused from the cache ({lower})", took)
    m = mc.Machine(lower)
    try:
        t0 = time.monotonic()
        m.mount()
        m.install(deb)
        m.write("/etc/systemd/system/zygoted.service.d/50-test-watchdog.conf", WATCHDOG_DROPIN)
        mc.timed("overlay and dpkg -i in the chroot", time.monotonic() - t0)
        took, state = m.boot()
        mc.timed(f"boot (systemd-nspawn -b to is-system-running: {state})", took)
        m.before_first_call = {u: m.run("systemctl", "is-active", u).stdout.strip()
                               for u in ("zygoted.socket", "zygoted.service")}
        m.failed_units = m.run("systemctl", "--failed", "--plain", "--no-legend", "--no-pager").stdout
        m.units = [f for f in m.run("dpkg", "-L", "zygote").stdout.split()
                   if re.search(r"/systemd/(system|user)/zygoted\.(socket|service)$", f)]
        t_checks = time.monotonic()
        yield m
        mc.timed("checks", time.monotonic() - t_checks)
    finally:
        problems, took = m.teardown()
        mc.timed("teardown (poweroff, unmount, cgroups)", took)
    if problems:
        pytest.fail("the teardown found: " + "; ".join(problems), pytrace=False)


# ---- helpers ---------------------------------------------------------------------------------------

def show(m, unit, *props):
    r = m.run("systemctl", "show", unit, *(f"--property={p}" for p in props))
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)


def ok(r, what):
    assert r.returncode == 0, f"{what}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def activate(m):
    """zygoted serving (started by a call if it is not yet)."""
    ok(m.shell("launchctl status >/dev/null"), "launchctl status")


def tasks(m):
    """launchctl ps --json: {id: task}."""
    out = ok(m.shell("launchctl ps --json"), "launchctl ps --json")
    reply = json.loads(out)
    return {t["id"]: t for t in reply.get("tasks", [])}


def start_detached(m, task_id, seconds=1000):
    """A `sleep` started with `launchctl run --detach` from a root shell's scope; its stdio is
    /dev/null (a detached task keeps launchctl's). Returns its pid as the container sees it."""
    ok(m.shell(f"launchctl run --detach --id {task_id} -- sleep {seconds} </dev/null >/dev/null 2>&1"),
       f"launchctl run --detach {task_id}")
    t = tasks(m)[task_id]
    assert t["state"] == "running", t
    return t["pid"]


def alive(m, pid):
    r = m.run("cat", f"/proc/{pid}/cmdline")
    return r.returncode == 0 and r.stdout.split("\0")[0] == "sleep"


def main_pid(m):
    return int(show(m, "zygoted.service", "MainPID")["MainPID"])


# ---- the checks ------------------------------------------------------------------------------------

def test_activation_on_the_first_call(machine):
    """(a) After the boot the socket listens and the daemon does not run; the first call starts it."""
    m = machine
    assert m.before_first_call == {"zygoted.socket": "active", "zygoted.service": "inactive"}, \
        f"{m.before_first_call}; failed units: {m.failed_units}"
    assert "zygoted" not in m.failed_units, m.failed_units
    r = m.shell("launchctl run -- /bin/echo hello from the sandbox")
    assert ok(r, "launchctl run") == "hello from the sandbox\n"
    assert m.run("systemctl", "is-active", "zygoted.service").stdout.strip() == "active"
    p = show(m, "zygoted.service", "MainPID", "TriggeredBy")
    assert int(p["MainPID"]) > 0 and "zygoted.socket" in p["TriggeredBy"], p
    status = ok(m.shell("launchctl status"), "launchctl status")
    assert f"socket: {SOCKET}" in status, status
    # systemd-nspawn's own filter is off (machine.boot): zygoted must not run under one
    assert "seccomp filter of its own" not in status, status


def test_notify_status_text(machine):
    """(b) Type=notify: the daemon's STATUS= line is the unit's StatusText."""
    m = machine
    activate(m)
    p = show(m, "zygoted.service", "Type", "NotifyAccess", "StatusText", "ActiveState", "SubState")
    assert (p["Type"], p["NotifyAccess"], p["ActiveState"], p["SubState"]) == ("notify", "main", "active",
                                                                              "running"), p
    assert re.fullmatch(r"\d+ profiles \(clone \d+, inherit \d+, load \d+\), \d+ tasks, \d+ spawned",
                        p["StatusText"]), p["StatusText"]
    assert not p["StatusText"].startswith("0 profiles"), p["StatusText"]


def test_watchdog_restarts_a_stopped_daemon_and_tasks_are_adopted(machine):
    """(c) A SIGSTOPped daemon misses its watchdog pings: systemd kills it (SIGABRT, then SIGCONT)
    and restarts it (Restart=on-failure); a task started before keeps running and the new daemon
    lists it (its pidfd came back from the fd store)."""
    m = machine
    pid = start_detached(m, "wd-sleep")
    p = show(m, "zygoted.service", "MainPID", "NRestarts", "WatchdogUSec")
    assert p["WatchdogUSec"] == "6s", p
    old, restarts = int(p["MainPID"]), int(p["NRestarts"])
    t0 = time.monotonic()
    ok(m.run("kill", "-STOP", str(old)), "kill -STOP")
    # This call waits in the socket's backlog: the stopped daemon cannot accept it, the restarted
    # one does. So it returns once systemd has restarted the daemon, and the ps is the new one's.
    listed = tasks(m)
    mc.timed("watchdog: SIGSTOP to the restarted daemon's answer", time.monotonic() - t0)
    p = show(m, "zygoted.service", "MainPID", "NRestarts", "ActiveState")
    assert int(p["MainPID"]) not in (0, old) and p["ActiveState"] == "active", p
    assert int(p["NRestarts"]) == restarts + 1, p
    assert m.run("test", "-d", f"/proc/{old}").returncode != 0, "the stopped daemon is still there"
    ok(m.run("journalctl", "--sync"), "journalctl --sync")
    journal = m.run("journalctl", "-u", "zygoted.service", "--no-pager", "-o", "cat").stdout
    assert "Watchdog timeout" in journal, journal[-3000:]
    assert alive(m, pid), "the detached task died with the daemon"
    assert "wd-sleep" in listed and listed["wd-sleep"]["state"] == "running" and listed["wd-sleep"]["pid"] == pid, \
        listed


def test_restart_keeps_a_detached_task(machine):
    """(d) systemctl restart signals only zygoted (KillMode=process); the task stays and is adopted."""
    m = machine
    pid = start_detached(m, "restart-sleep")
    old = main_pid(m)
    t0 = time.monotonic()
    ok(m.run("systemctl", "restart", "zygoted.service", timeout=120), "systemctl restart zygoted")
    mc.timed("systemctl restart zygoted", time.monotonic() - t0)
    assert main_pid(m) not in (0, old)
    assert alive(m, pid), "the detached task died with the restart"
    t = tasks(m).get("restart-sleep")
    assert t is not None and t["state"] == "running" and t["pid"] == pid, t


def test_group_member_calls_through_the_system_socket(machine):
    """(e) A member of group zygote with no daemon of their own reaches the system socket and
    gets tasks that run as themselves."""
    m = machine
    r = m.run("getent", "passwd", USER)
    if r.returncode != 0:
        ok(m.run("useradd", "--create-home", "--groups", "zygote", USER), "useradd -G zygote")
    uid = int(ok(m.run("id", "-u", USER), "id -u").strip())
    assert uid != 0
    out = ok(m.shell(f"runuser -u {USER} -- launchctl run id -u"), "runuser launchctl run id -u")
    assert out.strip() == str(uid), out
    status = ok(m.shell(f"runuser -u {USER} -- launchctl status"), "runuser launchctl status")
    assert f"socket: {SOCKET}" in status, status
    # and a user outside the group cannot connect at all
    if m.run("getent", "passwd", "zyother").returncode != 0:
        ok(m.run("useradd", "zyother"), "useradd zyother")
    r = m.shell("runuser -u zyother -- launchctl run id -u")
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)


def test_analyze_verify_is_clean(machine):
    """(f) systemd-analyze verify of the installed units, system and user, says nothing."""
    m = machine
    system = [u for u in m.units if "/systemd/system/" in u]
    user = [u for u in m.units if "/systemd/user/" in u]
    assert len(system) == 2 and len(user) == 2, m.units
    r = m.run("systemd-analyze", "verify", *system)
    assert (r.returncode, r.stdout + r.stderr) == (0, ""), r.stdout + r.stderr
    # a user manager's view needs a runtime directory; root has none without a session
    r = m.run("sh", "-c", 'd=$(mktemp -d) && XDG_RUNTIME_DIR=$d systemd-analyze --user verify "$@"; rc=$?; '
              'rm -rf "$d"; exit $rc', "sh", *user)
    assert (r.returncode, r.stdout + r.stderr) == (0, ""), r.stdout + r.stderr


def test_journal_has_the_start_up_lines(machine):
    """(g) The daemon's start-up lines, and a task's audit lines with their fields, are in the
    journal of the unit."""
    m = machine
    activate(m)
    # a task that runs until killed: its start line names the path executed (a task that has
    # already exited when the line is written is logged with the name as given, docs/SYSTEMD.md)
    start_detached(m, "journal-sleep")
    ok(m.shell("launchctl kill journal-sleep KILL"), "launchctl kill")
    r = m.shell("launchctl wait journal-sleep")
    assert r.returncode == 128 + 9, (r.returncode, r.stdout, r.stderr)
    ok(m.shell("launchctl delete journal-sleep"), "launchctl delete")
    ok(m.run("journalctl", "--sync"), "journalctl --sync")
    text = m.run("journalctl", "-u", "zygoted.service", "--no-pager", "-o", "cat").stdout
    assert re.search(r"^kernel: SECCOMP_CLONE_FILTER ", text, re.M), text[-3000:]
    assert re.search(rf"^listening on a socket from systemd, {SOCKET} with \d+ profiles", text, re.M), text[-3000:]
    events = {}
    for event in ("start", "exit"):
        r = m.run("journalctl", "-u", "zygoted.service", "--no-pager", "-o", "json", "ZYGOTE_TASK=journal-sleep",
                  f"ZYGOTE_EVENT={event}")
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        assert len(lines) == 1, f"ZYGOTE_EVENT={event}: {r.stdout}{r.stderr}"
        events[event] = e = lines[0]
        assert (e["SYSLOG_IDENTIFIER"], e["PRIORITY"], e["ZYGOTE_UID"]) == ("zygoted", "6", "0"), e
    assert events["start"]["ZYGOTE_EXE"] == "/usr/bin/sleep", events["start"]
    assert (events["exit"]["ZYGOTE_EXIT"], events["exit"]["ZYGOTE_SIGNAL"]) == ("137", "9"), events["exit"]


# ---- where tasks live: scopes of their own (issue #27; docs/SYSTEMD.md) ------------------------------

LOGIN_USER = "zylogin"


def test_kill_of_the_daemon_keeps_a_detached_task(machine):
    """(h) `systemctl kill -s KILL zygoted` signals every process of the service's cgroup (the
    default --kill-whom=all). A crash or a kill of the daemon must lose no task: a detached task
    stays alive and the restarted daemon (Restart=on-failure) lists it, adopted."""
    m = machine
    pid = start_detached(m, "kill-sleep")
    p = show(m, "zygoted.service", "MainPID", "NRestarts")
    old, restarts = int(p["MainPID"]), int(p["NRestarts"])
    ok(m.run("systemctl", "kill", "--signal=KILL", "zygoted.service"), "systemctl kill -s KILL zygoted")
    # waits in the socket's backlog until the restarted daemon answers
    listed = tasks(m)
    p = show(m, "zygoted.service", "MainPID", "NRestarts", "ActiveState")
    assert int(p["MainPID"]) not in (0, old) and p["ActiveState"] == "active", p
    assert int(p["NRestarts"]) == restarts + 1, p
    assert alive(m, pid), "the detached task died with systemctl kill -s KILL zygoted"
    t = listed.get("kill-sleep")
    assert t is not None and t["state"] == "running" and t["pid"] == pid, t
    # the profiles' pid namespace inits, which the kill must not reach, are not in the service
    inits = m.run("systemctl", "list-units", "--plain", "--no-legend", "--state=active", "zygote-init-*.scope").stdout
    assert inits.strip(), "no zygote-init-*.scope is active"
    service = m.run("systemctl", "show", "--property=ControlGroup", "--value", "zygoted.service").stdout.strip()
    procs = m.run("sh", "-c", f"cat /sys/fs/cgroup/unified{service}/cgroup.procs 2>/dev/null || "
                  f"cat /sys/fs/cgroup{service}/cgroup.procs").stdout.split()
    for p in procs:
        comm = m.run("cat", f"/proc/{p}/cmdline").stdout.split("\0")
        assert "--init" not in comm, f"a pid namespace init is in the service's cgroup: {p} {comm}"


def test_detached_task_outlives_its_callers_unit(machine):
    """(i) A task started with `launchctl run --detach` from a service (here a `systemd-run
    --wait` unit; a cron job or an SSH session alike) survives the end of that unit: the unit's
    stop kills what is left in its cgroup, and a detached task must not be there, in any
    hierarchy. Twenty units, one after the other: the task's move out of its caller's cgroup
    must not depend on timing (a race loses about one task in ten)."""
    m = machine
    activate(m)
    lost = []
    for i in range(20):
        r = m.run("systemd-run", "--wait", "--quiet", "--collect", f"--unit=zygote-detach-caller-{i}", "--",
                  "/bin/sh", "-c", f"launchctl run --detach --id unit-sleep-{i} -- sleep 1000 </dev/null >/dev/null 2>&1",
                  timeout=120)
        ok(r, "systemd-run --wait launchctl run --detach")
    # each --wait returned once its unit was inactive: its cgroup had been emptied by then
    listed = tasks(m)
    for i in range(20):
        t = listed.get(f"unit-sleep-{i}")
        assert t is not None, f"unit-sleep-{i} is not listed"
        if not alive(m, t["pid"]) or t["state"] != "running":
            lost.append(t)
            continue
        # in a scope of its own, in the slice of its caller's unit, in every hierarchy systemd uses
        cgroup = m.run("cat", f"/proc/{t['pid']}/cgroup").stdout
        for line in cgroup.splitlines():
            _, ctl, path = line.split(":", 2)
            if ctl in ("", "name=systemd"):
                slice_ = f"system-zygote-zygote\\x2ddetach\\x2dcaller\\x2d{i}.service.slice"
                assert path == f"/system.slice/system-zygote.slice/{slice_}/zygote-task-{t['pid']}.scope", cgroup
    assert not lost, f"{len(lost)} of 20 detached tasks died with their caller's unit: {lost}"


def cgroup_file(m, pid, controller, name):
    """The content of a cgroup file of pid's cgroup: the unified hierarchy's, or controller's v1
    one; None where neither is there."""
    for line in m.run("cat", f"/proc/{pid}/cgroup").stdout.splitlines():
        _, ctl, path = line.split(":", 2)
        base = "/sys/fs/cgroup" if ctl == "" else f"/sys/fs/cgroup/{controller}" if controller in ctl.split(",") else None
        if base is None:
            continue
        r = m.run("cat", f"{base}{path}/{name}")
        if r.returncode == 0:
            return r.stdout.strip()
    return None


def test_detached_task_keeps_its_units_limits(machine):
    """Detached tasks of a `systemd-run -p TasksMax=8 -p MemoryMax=64M -p DevicePolicy=closed -p
    IPAddressDeny=any` caller in zylimited.slice keep those limits, as systemd shows them and as
    the kernel applies them (pids.max, memory.max), and share them, as the unit's own processes
    did: two of them are in one slice of the unit's detached tasks below zylimited.slice, which
    carries the limits (before, each scope had a TasksMax=8 of its own: 8 more tasks per detached
    task), and whose pids.current counts both. Once both are gone, systemd stops that slice."""
    m = machine
    activate(m)
    unit = "zygote-limited-caller"
    slice_ = "zylimited-zygote-zygote\\x2dlimited\\x2dcaller.service.slice"
    # a slice of its own, whose limits must still count the task: its Slice comes from the
    # manager (a scope in the default system.slice would be out of it)
    ok(m.run("systemctl", "set-property", "--runtime", "zylimited.slice", "TasksMax=50"), "set-property")
    detach = "launchctl run --detach --id {} -- sleep 1000 </dev/null >/dev/null 2>&1"
    r = m.run("systemd-run", "--wait", "--quiet", "--collect", f"--unit={unit}", "--slice=zylimited", "-p",
              "TasksMax=8", "-p",
              "MemoryMax=64M", "-p", "DevicePolicy=closed", "-p", "IPAddressDeny=any", "--", "/bin/sh", "-c",
              detach.format("limited-sleep") + " && " + detach.format("limited-sleep-2"), timeout=120)
    ok(r, "systemd-run -p TasksMax=8 ... launchctl run --detach, twice")
    listed = tasks(m)
    t, t2 = listed["limited-sleep"], listed["limited-sleep-2"]
    try:
        assert alive(m, t["pid"]) and t["state"] == "running", t
        assert alive(m, t2["pid"]) and t2["state"] == "running", t2
        for task in (t, t2):
            scope = f"zygote-task-{task['pid']}.scope"
            p = show(m, scope, "Slice", "TasksMax", "MemoryMax", "DevicePolicy", "IPAddressDeny", "ActiveState")
            assert p["ActiveState"] == "active" and p["Slice"] == slice_, p
            assert p["TasksMax"] == "8" and p["MemoryMax"] == str(64 << 20), p
            assert p["DevicePolicy"] == "closed", p
            assert "0.0.0.0/0" in p["IPAddressDeny"] and "::/0" in p["IPAddressDeny"], p
        p = show(m, slice_, "Slice", "TasksMax", "MemoryMax", "DevicePolicy", "IPAddressDeny", "ActiveState",
                 "Transient", "StopWhenUnneeded", "ControlGroup")
        assert p["ActiveState"] == "active" and p["Slice"] == "zylimited-zygote.slice", p
        assert (p["Transient"], p["StopWhenUnneeded"]) == ("yes", "yes"), p
        assert p["TasksMax"] == "8" and p["MemoryMax"] == str(64 << 20), p
        assert p["DevicePolicy"] == "closed" and "0.0.0.0/0" in p["IPAddressDeny"], p
        assert p["ControlGroup"] == f"/zylimited.slice/zylimited-zygote.slice/{slice_}", p
        # the kernel's side: where the container's systemd has the controllers (cgroup2 at
        # /sys/fs/cgroup; on a hybrid host's container it has none to set, for any unit)
        pids_max = cgroup_file(m, t["pid"], "pids", "pids.max")
        memory_max = cgroup_file(m, t["pid"], "memory", "memory.max")
        if m.run("stat", "-fc", "%T", "/sys/fs/cgroup").stdout.strip() == "cgroup2fs":
            assert (pids_max, memory_max) == ("8", str(64 << 20)), (pids_max, memory_max)
            shared = {f: m.run("cat", f"/sys/fs/cgroup{p['ControlGroup']}/{f}").stdout.strip()
                      for f in ("pids.max", "pids.current", "memory.max")}
            assert shared == {"pids.max": "8", "pids.current": "2", "memory.max": str(64 << 20)}, shared
        else:
            assert pids_max in ("8", None) and memory_max in (str(64 << 20), None), (pids_max, memory_max)
    finally:
        for name in ("limited-sleep", "limited-sleep-2"):
            m.shell(f"launchctl kill {name} KILL; launchctl wait {name}; launchctl delete {name}")
    # its last scope gone, the slice is not needed: systemd stops it and lets it go
    deadline = time.monotonic() + 30
    while show(m, slice_, "ActiveState")["ActiveState"] != "inactive" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert show(m, slice_, "ActiveState", "LoadState")["ActiveState"] == "inactive"


def test_detached_task_of_a_delegated_subcgroup_is_refused(machine):
    """A caller in a subtree delegated to its unit names no slice: a user (in group zygote) runs
    `launchctl run --detach` against the system zygoted from its own manager, in a unit of the
    user's `machine.slice` (`systemd-run --user --slice=machine`), below user@UID.service,
    which the system manager delegated to the user. Before, its task went to the system
    manager's /machine.slice; now it is refused, saying why, and nothing of it runs."""
    m = machine
    activate(m)
    if m.run("getent", "passwd", USER).returncode != 0:
        ok(m.run("useradd", "--create-home", "--groups", "zygote", USER), "useradd -G zygote")
    uid = int(ok(m.run("id", "-u", USER), "id -u").strip())
    ok(m.run("loginctl", "enable-linger", USER), "loginctl enable-linger")
    ok(m.run("systemctl", "start", f"user@{uid}.service", timeout=120), f"systemctl start user@{uid}")
    env = [f"XDG_RUNTIME_DIR=/run/user/{uid}", f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{uid}/bus"]
    script = ("grep -E '^0::|name=systemd' /proc/self/cgroup; launchctl --socket /run/zygote/zygoted.sock run "
              "--detach --id user-delegated -- sleep 1000 </dev/null >/dev/null 2>/tmp/zy-delegated.err; "
              "echo rc=$?; cat /tmp/zy-delegated.err; rm -f /tmp/zy-delegated.err")
    r = m.run("runuser", "-u", USER, "--", "env", *env, "systemd-run", "--user", "--wait", "--pipe", "--quiet",
              "--collect", "--slice=machine", "--", "/bin/sh", "-c", script, timeout=120)
    try:
        assert f"/user@{uid}.service/machine.slice/" in r.stdout, (r.stdout, r.stderr)
        assert "rc=" in r.stdout and "rc=0" not in r.stdout, (r.stdout, r.stderr)
        assert "delegated" in r.stdout, (r.stdout, r.stderr)
        assert "user-delegated" not in tasks(m), tasks(m)
    finally:
        m.shell(f"launchctl kill {uid}:user-delegated KILL; launchctl delete {uid}:user-delegated")
        m.run("loginctl", "disable-linger", USER)


def user_daemon(m):
    """LOGIN_USER (made if missing) with its manager running (lingering) and zygoted.socket
    enabled in it, as docs/SYSTEMD.md tells a user to (systemctl --user enable --now
    zygoted.socket): its uid, and the command prefix that runs a command as the user in reach of
    that manager."""
    if m.run("getent", "passwd", LOGIN_USER).returncode != 0:
        ok(m.run("useradd", "--create-home", "--shell", "/bin/bash", LOGIN_USER), f"useradd {LOGIN_USER}")
    uid = int(ok(m.run("id", "-u", LOGIN_USER), "id -u").strip())
    ok(m.run("loginctl", "enable-linger", LOGIN_USER), "loginctl enable-linger")
    ok(m.run("systemctl", "start", f"user@{uid}.service", timeout=120), f"systemctl start user@{uid}")
    env = [f"XDG_RUNTIME_DIR=/run/user/{uid}", f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{uid}/bus"]
    user = ["runuser", "-u", LOGIN_USER, "--", "env", *env]
    ok(m.run(*user, "systemctl", "--user", "enable", "--now", "zygoted.socket", timeout=120),
       "systemctl --user enable --now zygoted.socket")
    return uid, user


def test_user_daemon_serves_a_login_shell(machine):
    """(j) The per-user units, enabled for a user's manager, serve that user's login shell: a real
    session through PAM (`su -l`, pam_systemd puts it in session-N.scope, which belongs to root,
    not to the user's manager). The user is not in group zygote: only their own daemon can serve
    them."""
    m = machine
    uid, _ = user_daemon(m)
    script = ("cat /proc/self/cgroup; echo ---; launchctl status; echo ---; launchctl run -- id -u; "
              "echo \"exit $?\"")
    r = m.run("su", "--login", LOGIN_USER, "--command", script, timeout=120)
    cgroup, status, served = (r.stdout.split("---\n") + ["", "", ""])[:3]
    assert re.search(r"/session-[^/]+\.scope$", cgroup, re.M), f"not in a login session: {r.stdout}{r.stderr}"
    assert f"socket: /run/user/{uid}/zygote/zygoted.sock" in status, r.stdout + r.stderr
    assert served == f"{uid}\nexit 0\n", r.stdout + r.stderr


def test_user_daemon_detaches_from_a_login_shell(machine):
    """A user's own zygoted asked `launchctl run --detach` from a login shell (`su -l`: the
    caller's unit, session-N.scope, is the system manager's, and the user's manager has no unit
    for its cgroup). Before, the task was refused ("no unit"). Now zygoted reads the session's
    limits from the system manager (the system bus) and its own manager makes the scope, in a
    slice of that manager's, `zygote-session\x2dN.scope.slice` below user@UID.service (itself in
    user-UID.slice with the session), which carries them: TasksMax=8 and MemoryMax=64M, set on
    every session by a session-.scope.d drop-in here (logind sets none). Two such tasks share it.
    A session with IPAddressDeny=any, which a user's manager cannot enforce, is refused."""
    m = machine
    uid, user = user_daemon(m)
    dropin = "/etc/systemd/system/session-.scope.d/50-zygote-test.conf"
    m.write(dropin, "[Scope]\nTasksMax=8\nMemoryMax=64M\n")
    ok(m.run("systemctl", "daemon-reload", timeout=120), "systemctl daemon-reload")
    script = ("cat /proc/self/cgroup; s=$(sed -n 's|.*/\\(session-[^/]*\\.scope\\)$|\\1|p' /proc/self/cgroup | head -n 1); "
              "systemctl show \"$s\" --property=TasksMax --property=MemoryMax; echo ---; for i in 1 2; do launchctl run --detach --id login-sleep-$i -- "
              "sleep 1000 </dev/null >/dev/null 2>/tmp/zy-login.err || { echo \"refused $i\"; cat /tmp/zy-login.err; }; "
              "done; rm -f /tmp/zy-login.err; echo ---; launchctl ps --json")
    r = m.run("su", "--login", LOGIN_USER, "--command", script, timeout=120)
    try:
        cgroup, refused, ps = (r.stdout.split("---\n") + ["", "", ""])[:3]
        found = re.search(r"/(session-[^/]+\.scope)$", cgroup, re.M)
        assert found, f"not in a login session: {r.stdout}{r.stderr}"
        session = found.group(1)
        assert refused == "", r.stdout + r.stderr
        # as the system manager said it while the session ran (it has stopped by now)
        p = dict(line.split("=", 1) for line in cgroup.splitlines() if line.startswith(("TasksMax=", "MemoryMax=")))
        assert p == {"TasksMax": "8", "MemoryMax": str(64 << 20)}, p
        listed = {t["id"]: t for t in json.loads(ps).get("tasks", [])}
        slice_ = "zygote-" + session.replace("-", "\\x2d") + ".slice"
        for i in (1, 2):
            t = listed[f"login-sleep-{i}"]
            assert alive(m, t["pid"]) and t["state"] == "running", t
            for line in m.run("cat", f"/proc/{t['pid']}/cgroup").stdout.splitlines():
                _, ctl, path = line.split(":", 2)
                if ctl in ("", "name=systemd"):
                    assert path == (f"/user.slice/user-{uid}.slice/user@{uid}.service/zygote.slice/{slice_}/"
                                    f"zygote-task-{t['pid']}.scope"), line
        r = m.run(*user, "systemctl", "--user", "show", slice_, "--property=TasksMax", "--property=MemoryMax",
                  "--property=StopWhenUnneeded", "--property=ActiveState")
        p = dict(line.split("=", 1) for line in ok(r, "systemctl --user show").splitlines() if "=" in line)
        assert p == {"TasksMax": "8", "MemoryMax": str(64 << 20), "StopWhenUnneeded": "yes",
                     "ActiveState": "active"}, p
        # a session whose limit the user's manager could not enforce (a BPF program): refused
        m.write(dropin, "[Scope]\nTasksMax=8\nIPAddressDeny=any\n")
        ok(m.run("systemctl", "daemon-reload", timeout=120), "systemctl daemon-reload")
        r = m.run("su", "--login", LOGIN_USER, "--command",
                  "launchctl run --detach --id login-sleep-3 -- sleep 1000 </dev/null >/dev/null", timeout=120)
        assert r.returncode != 0 and "IPAddressDeny" in r.stderr, (r.returncode, r.stdout, r.stderr)
    finally:
        for i in (1, 2, 3):
            m.run(*user, "sh", "-c", f"launchctl kill login-sleep-{i} KILL; launchctl wait login-sleep-{i}; "
                  f"launchctl delete login-sleep-{i}")
        os.unlink(m.root + dropin)
        m.run("systemctl", "daemon-reload", timeout=120)
        m.run("loginctl", "disable-linger", LOGIN_USER)


def test_attached_task_stops_with_its_callers_unit(machine):
    """The other half of (i): a task its caller did not detach lives in the caller's cgroup (the
    unit's limits count it) and stops with the caller's unit, as the caller's own child would."""
    m = machine
    activate(m)
    unit = "zygote-attached-caller"
    ok(m.run("systemd-run", "--quiet", "--collect", f"--unit={unit}", "--", "/bin/sh", "-c",
             "launchctl run --id attached-sleep -- sleep 1000 </dev/null >/dev/null 2>&1 & sleep 1000"),
       "systemd-run launchctl run")
    deadline = time.monotonic() + 30
    while "attached-sleep" not in tasks(m) and time.monotonic() < deadline:
        time.sleep(0.1)
    t = tasks(m)["attached-sleep"]
    cgroup = m.run("cat", f"/proc/{t['pid']}/cgroup").stdout
    assert f"/system.slice/{unit}.service" in cgroup, cgroup
    ok(m.run("systemctl", "stop", f"{unit}.service", timeout=60), f"systemctl stop {unit}")
    deadline = time.monotonic() + 10
    while alive(m, t["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(m, t["pid"]), "a task that was not detached outlived its caller's unit"


# The example unit's test drop-in: mkdir and mkdirat denied with EDOM, an errno nothing else gives
# mkdir, so that the job's failure can only be the unit's filter, carried.
JOBS_DROPIN = """\
# test_systemd_boot.py: a denial of the unit's own that a job must keep
[Service]
SystemCallFilter=~mkdir mkdirat
SystemCallErrorNumber=EDOM
"""

ZYGOTED_DROPIN = "/etc/systemd/system/zygoted.service.d/50-test-no-caller-filters.conf"

JOB = """\
grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status
echo "uid $(id -u)"
mkdir /tmp/zyjob-made 2>&1 || true
setarch x86_64 /bin/true 2>&1 || true
"""


def test_hardened_service_runs_its_jobs_with_its_filters(machine):
    """(j) examples/zygote-jobs.service (DynamicUser=, NoNewPrivileges=, SystemCallFilter=) runs a
    job through zygoted with the example profile: the job runs as the unit's dynamic user, with
    no_new_privs, and more filters than the unit's own process; mkdir, which the unit denies with
    EDOM, is denied to the job with EDOM (the unit's filter carried), and personality, which the
    profile denies, with EPERM (the profile's on top). The fallback, forced
    (ZYGOTE_DISABLE_FEATURES=caller_filters, what the old zygoted did): the unit's call is refused
    with CallerConfined, saying why and what to do."""
    m = machine
    activate(m)
    unit, dropin = "zygote-jobs.service", "/etc/systemd/system/zygote-jobs.service.d/50-test.conf"
    with open(os.path.join(SOURCE_DIR, "examples", "zygote-jobs.service")) as f:
        m.write(f"/etc/systemd/system/{unit}", f.read())
    with open(os.path.join(SOURCE_DIR, "examples", "zygote-jobs-profile.json")) as f:
        m.write("/etc/zygote/profiles/jobs.json", f.read())
    m.write(dropin, JOBS_DROPIN)
    m.write("/etc/zygote-jobs/check.sh", JOB)
    try:
        r = m.run("systemd-analyze", "verify", f"/etc/systemd/system/{unit}", timeout=120)
        assert (r.returncode, r.stdout + r.stderr) == (0, ""), r.stdout + r.stderr
        ok(m.run("systemctl", "daemon-reload", timeout=120), "daemon-reload")
        # zygoted looks at /etc/zygote/profiles when it starts
        ok(m.run("systemctl", "restart", "zygoted.service", timeout=120), "restart zygoted")
        activate(m)
        ok(m.shell("launchctl profiles | grep -w jobs"), "the jobs profile is loaded")
        # the unit's own process, for the count of its filters (the same settings, a transient unit)
        own = ok(m.run("systemd-run", "--quiet", "--wait", "--pipe", "--collect", "-p", "DynamicUser=yes",
                       "-p", "NoNewPrivileges=yes", "-p", "SystemCallFilter=@system-service", "-p",
                       "SystemCallArchitectures=native", "-p", "SystemCallFilter=~mkdir mkdirat", "-p",
                       "SystemCallErrorNumber=EDOM", "--", "grep", "^Seccomp_filters:", "/proc/self/status",
                       timeout=120), "the unit's own filters")
        unit_filters = int(own.split()[1])
        ok(m.run("systemctl", "start", unit, timeout=120), f"systemctl start {unit}")
        ok(m.run("journalctl", "--sync"), "journalctl --sync")
        out = m.run("journalctl", "-u", unit, "--no-pager", "-o", "cat").stdout
        assert "job /etc/zygote-jobs/check.sh" in out and "check.sh failed" not in out and "CallerConfined" not in out, out
        st = dict(line.split(":\t", 1) for line in out.splitlines() if ":\t" in line)
        assert st.get("NoNewPrivs") == "1" and st.get("Seccomp") == "2", out
        assert int(st["Seccomp_filters"]) == unit_filters + 1, (unit_filters, out)
        uid = int(re.search(r"^uid (\d+)$", out, re.M).group(1))
        assert uid >= 61184, f"the job ran as uid {uid}, not a dynamic user's: {out}"
        assert "Numerical argument out of domain" in out, out  # mkdir: the unit's EDOM
        assert "Operation not permitted" in out and "personality" in out, out  # setarch: the profile's
        # the fallback, forced: a zygoted that does not read the filters refuses the unit, saying why
        m.write(ZYGOTED_DROPIN, "[Service]\nEnvironment=ZYGOTE_DISABLE_FEATURES=caller_filters\n")
        ok(m.run("systemctl", "daemon-reload", timeout=120), "daemon-reload")
        ok(m.run("systemctl", "restart", "zygoted.service", timeout=120), "restart zygoted")
        ok(m.run("systemctl", "start", unit, timeout=120), f"systemctl start {unit}")
        ok(m.run("journalctl", "--sync"), "journalctl --sync")
        again = m.run("journalctl", "-u", unit, "--no-pager", "-o", "cat").stdout[len(out):]
        assert "check.sh failed" in again and "CallerConfined" in again, again
        assert "ZYGOTE_DISABLE_FEATURES=caller_filters" in again and "NoNewPrivs" not in again, again
    finally:
        if os.path.exists(m.root + ZYGOTED_DROPIN):
            os.unlink(m.root + ZYGOTED_DROPIN)
            m.run("systemctl", "daemon-reload", timeout=120)
            m.run("systemctl", "restart", "zygoted.service", timeout=120)
        for path in (dropin, f"/etc/systemd/system/{unit}", "/etc/zygote/profiles/jobs.json",
                     "/etc/zygote-jobs/check.sh"):
            if os.path.exists(m.root + path):
                os.unlink(m.root + path)
        m.run("systemctl", "daemon-reload", timeout=120)
