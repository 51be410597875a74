#!/usr/bin/python3
"""Runs the zygote benchmarks and writes results.json, results.md and plot.png.

Front end: tests/bench/run.sh (builds what is missing, then runs `bench.py run`). Method and
definitions: docs/BENCHMARKS.md. Measuring is zygote-bench's job (C, CLOCK_MONOTONIC) and
hyperfine's; this script starts the daemons, prepares the peers, and turns raw samples into
figures with report.py.

  bench.py run --build DIR [--out DIR] [--quick] [--no-readme] [--docker-profile FILE]
  bench.py hops --build DIR [--out DIR] [--rounds N]
  bench.py same-profile --build DIR [--docker-profile FILE]
"""

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DOCKER_PROFILE = os.path.join(os.path.dirname(REPO), "shared", "reference", "docker-default.json")
RESULTS_DIR = os.path.join(HERE, "results")  # what the README shows
README = os.path.join(REPO, "README.md")

# Sample sizes. The spawn rounds stop early, at whole rounds, when spawn_seconds run out (never
# below 200 rounds): on a loaded machine a full run must still end within about ten minutes.
PRESETS = {
    "full": dict(spawn_rounds=2000, spawn_warmup=50, spawn_seconds=240, cpu_spawns=1000, cpu_rounds=3,
                 tp_rounds=8, tp_tasks=64,
                 sc_rounds=9, sc_batches=100, sc_calls=500,
                 cli_passes=5, cli_runs=30, cli_warmup=5, hops_rounds=300),
    "quick": dict(spawn_rounds=150, spawn_warmup=10, spawn_seconds=0, cpu_spawns=300, cpu_rounds=1,
                  tp_rounds=3, tp_tasks=48,
                  sc_rounds=2, sc_batches=30, sc_calls=500,
                  cli_passes=1, cli_runs=10, cli_warmup=2, hops_rounds=30),
}
CLI_NAMESPACE_NOTE = ("all CLI commands run in one private mount namespace (unshare -m) with "
                      "/sys/fs/cgroup/unified unmounted there: crun 1.8.1 refuses the hybrid cgroup layout")


class BenchError(Exception):
    pass


START = time.monotonic()


def log(msg):
    print(f"bench: [{time.monotonic() - START:5.0f} s] {msg}", file=sys.stderr, flush=True)


def run(cmd, timeout=3600, env=None, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise BenchError(f"{' '.join(cmd[:3])}... exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p


def bench_tool(build, *args, timeout=3600):
    p = run([os.path.join(build, "zygote-bench"), *args], timeout=timeout)
    if p.stderr.strip():
        log(p.stderr.strip())
    return json.loads(p.stdout)


def first_line(text):
    lines = [x.strip() for x in (text or "").strip().splitlines() if x.strip()]
    return lines[-1][:200] if lines else "no message"


# ---- the daemons -----------------------------------------------------------------------------------


class Daemon:
    """zygoted on a socket we create and pass in (socket activation, LISTEN_FDS): the first call
    on it waits for the daemon to be ready, so readiness needs no polling."""

    def __init__(self, build, tier, rundir):
        self.tier = tier
        self.sock = os.path.join(rundir, f"{tier}.sock")
        self.log_path = os.path.join(rundir, f"zygoted-{tier}.log")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.sock)
        listener.listen(128)
        fd = listener.fileno()

        def as_fd3():
            # fd 3 is the only fd zygoted inherits from us: dup2 clears CLOEXEC, but dup2(3, 3)
            # does nothing, so the listener that already is fd 3 is made inheritable by hand.
            if fd == 3:
                os.set_inheritable(3, True)
            else:
                os.dup2(fd, 3)

        env = {k: v for k, v in os.environ.items() if not k.startswith(("LISTEN_", "NOTIFY_SOCKET"))}
        env.update(LISTEN_FDS="1", ZYGOTE_LOG_LEVEL="warning")
        self.logf = open(self.log_path, "w")
        # sh's $$ is the pid zygoted will have after exec: sd_listen_fds() checks LISTEN_PID.
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"', os.path.join(build, "zygoted"),
             "--socket", self.sock, "--profiles", os.path.join(REPO, "profiles"), "--tier", tier],
            env=env, stdin=subprocess.DEVNULL, stdout=self.logf, stderr=self.logf,
            preexec_fn=as_fd3, close_fds=False)
        listener.close()
        self.pid = self.proc.pid

    def status(self, build):
        try:
            return bench_tool(build, "status", self.sock, timeout=120)
        except (BenchError, subprocess.TimeoutExpired) as e:
            raise BenchError(f"zygoted --tier {self.tier} did not answer: {e}; its log: {self.log_tail()}")

    def log_tail(self):
        try:
            with open(self.log_path) as f:
                return first_line(f.read())
        except OSError:
            return "(no log)"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        try:
            os.unlink(self.sock)
        except FileNotFoundError:
            pass


def smaps(pid):
    vals = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                vals[parts[0].rstrip(":")] = int(parts[1])
    return {"rss_kib": vals.get("Rss", 0), "pss_kib": vals.get("Pss", 0),
            "private_kib": vals.get("Private_Clean", 0) + vals.get("Private_Dirty", 0)
            + vals.get("Private_Hugetlb", 0)}


def footprint_refs(status, prefix):
    refs = {}
    for p in status["profiles"]:
        if p.get("reference_pid"):
            try:
                refs[f"{prefix}/{p['name']}"] = smaps(p["reference_pid"])
            except OSError:
                pass
    return refs


# ---- the peers ----------------------------------------------------------------------------------------


# ---- the per-hop breakdown -----------------------------------------------------------------------------

PERF_EVENTS = ("sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,"
               "raw_syscalls:sys_enter,raw_syscalls:sys_exit")


def measure_hops(build, daemons, tiers, rounds, work, seed):
    """zygote-bench hops under `perf record -k mono` attached to it, the tier daemons and their
    references (workers are followed as their children). Returns (analysed, None) or (None, why
    it was skipped)."""
    perf = shutil.which("perf")
    if not perf:
        return None, "perf is not installed (linux-perf)"
    if platform.machine() != "x86_64":
        return None, f"the hop anchors are x86_64 syscall numbers; this is {platform.machine()}"
    pids = []
    for t in tiers:
        pids.append(daemons[t].pid)
        pids.extend(p["reference_pid"] for p in daemons[t].status(build)["profiles"] if p.get("reference_pid"))
    data = os.path.join(work, "hops.perf.data")
    tier_args = [a for t in tiers for a in ("--tier", f"{t}={daemons[t].sock}")]
    bench = subprocess.Popen([os.path.join(build, "zygote-bench"), "hops", "--handshake", *tier_args,
                              "--rounds", str(rounds), "--seed", str(seed)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rec = None
    try:
        line = bench.stderr.readline()
        if line.strip() != "ready":
            bench.kill()
            out, err = bench.communicate(timeout=60)
            raise BenchError(f"zygote-bench hops: {first_line(line + err)}")
        # -m: a buffer large enough that perf seldom wakes up to drain it (it shares the CPUs)
        rec = subprocess.Popen([perf, "record", "-q", "-k", "mono", "-m", "16M", "-e", PERF_EVENTS, "-o", data,
                                "-p", ",".join(str(p) for p in [bench.pid, *pids])],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # perf opens its events per task of each pid: until it has, nothing would be recorded
        time.sleep(2.0)
        if rec.poll() is not None:
            bench.kill()
            bench.communicate(timeout=60)
            return None, f"perf record failed: {first_line(rec.stderr.read())}"
        out, err = bench.communicate("go\n", timeout=1800)
        if bench.returncode != 0:
            raise BenchError(f"zygote-bench hops exited {bench.returncode}: {first_line(err)}")
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
        if rec and rec.poll() is None:
            rec.send_signal(signal.SIGINT)
            try:
                rec.wait(timeout=120)
            except subprocess.TimeoutExpired:
                rec.kill()
                rec.wait()
    raw = json.loads(out)
    p = run([perf, "script", "-i", data, "--ns", "-F", "tid,time,event,trace"], timeout=1800)
    events = report.parse_perf_script(p.stdout.splitlines())
    os.unlink(data)
    hops = report.analyse_hops(raw, events, {t: daemons[t].pid for t in tiers})
    hops["perf_events"] = len(events)
    return hops, None


def make_bundle(path, oci_seccomp):
    """An OCI bundle running /bin/true with the host's /usr read-only and the Docker profile."""
    rootfs = os.path.join(path, "rootfs")
    for d in ("usr", "proc", "dev", "sys", "tmp"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"), ("sbin", "usr/sbin")):
        if os.path.lexists(os.path.join("/", link)):
            os.symlink(target, os.path.join(rootfs, link))
    spec_tool = shutil.which("crun") or shutil.which("runc")
    p = subprocess.run([spec_tool, "spec"], cwd=path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise BenchError(f"{spec_tool} spec: {first_line(p.stderr)}")
    cfg = report.load_json(os.path.join(path, "config.json"))
    cfg["process"]["args"] = ["/bin/true"]
    cfg["process"]["terminal"] = False
    caps = report.DOCKER_DEFAULT_CAPS
    cfg["process"]["capabilities"] = {k: list(caps) for k in ("bounding", "effective", "permitted")}
    cfg["mounts"].append({"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]})
    cfg.setdefault("linux", {})["seccomp"] = oci_seccomp
    report.write_json(os.path.join(path, "config.json"), cfg)


def version(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        return p.stdout.strip().splitlines()[0] if p.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def cli_bench(build, work, rundir, auto_sock, bpf, oci_seccomp, cfg, seed):
    """hyperfine over the CLI: launchctl against /bin/true, bwrap, crun and runc."""
    skipped = {}
    if not shutil.which("hyperfine"):
        return None, {"all": "hyperfine is not installed (scripts/deps.sh --test)"}
    cmds = {
        "true": ("/bin/true", "/bin/true"),
        "launchctl": (f"{build}/launchctl run -- /bin/true", "launchctl run -- /bin/true"),
    }
    root = os.geteuid() == 0
    if shutil.which("bwrap"):
        cmds["bwrap"] = (f"bwrap --dev-bind / / --seccomp 9 /bin/true 9< {bpf}",
                         "bwrap --dev-bind / / --seccomp 9 /bin/true 9< default.bpf")
    else:
        skipped["bwrap"] = "bwrap is not installed"
    have_oci = [t for t in ("crun", "runc") if shutil.which(t)]
    for t in ("crun", "runc"):
        if t not in have_oci:
            skipped[t] = f"{t} is not installed"
    if have_oci and not root:
        for t in have_oci:
            skipped[t] = f"{t} needs root here"
        have_oci = []
    if have_oci:
        bundle = os.path.join(work, "bundle")
        shutil.rmtree(bundle, ignore_errors=True)
        make_bundle(bundle, oci_seccomp)
        for t in have_oci:
            cmds[t] = (f"{t} run --bundle {bundle} zygote-bench-{t}",
                       f"{t} run zygote-bench-{t} (OCI bundle, Docker's profile)")

    # crun refuses the hybrid cgroup layout; in a private mount namespace without the v2 mount it
    # runs in v1 mode. Everything runs in that namespace so that all commands share conditions.
    wrap = []
    notes = []
    if root and shutil.which("unshare") and os.path.ismount("/sys/fs/cgroup/unified"):
        wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                'umount /sys/fs/cgroup/unified && exec "$@"', "sh"]
        notes.append(CLI_NAMESPACE_NOTE)
    env = dict(os.environ, ZYGOTE_SOCKET=auto_sock)

    for name in list(cmds):
        p = subprocess.run(wrap + ["sh", "-c", cmds[name][0]], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            if name in ("true", "launchctl"):
                raise BenchError(f"{cmds[name][1]} failed: {first_line(p.stderr)}")
            skipped[name] = f"`{cmds[name][1]}` fails here: {first_line(p.stderr or p.stdout)}"
            del cmds[name]

    rng = random.Random(seed)
    passes = []
    for i in range(cfg["cli_passes"]):
        names = list(cmds)
        rng.shuffle(names)  # drift must not always hit the same command last
        out = os.path.join(work, f"hyperfine-{i}.json")
        args = ["hyperfine", "--export-json", out, "--warmup", str(cfg["cli_warmup"]), "--runs",
                str(cfg["cli_runs"]), "--style", "basic"]
        for n in names:
            args += ["-n", n, cmds[n][0]]
        log(f"hyperfine pass {i + 1}/{cfg['cli_passes']}: {', '.join(names)}")
        p = subprocess.run(wrap + args, env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                           stderr=subprocess.PIPE, text=True, timeout=3600)
        if p.returncode != 0:
            raise BenchError(f"hyperfine failed: {first_line(p.stderr)}")
        data = report.load_json(out)
        passes.append({r["command"]: r["times"] for r in data["results"]})
    result = report.analyse_cli(passes, skipped)
    result["command_lines"] = {k: v[1] for k, v in cmds.items()}
    result["shell"] = "hyperfine's default (sh -c, its spawn time subtracted), the same for every command"
    result["notes"] = notes
    return result, skipped


# ---- machine -------------------------------------------------------------------------------------------


def machine_info(build):
    m = {"kernel": platform.release(), "arch": platform.machine(), "cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    m["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            m["memory_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    m["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    v = version(["systemd-detect-virt"])
    m["virtualization"] = v or "none"
    head = version(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    dirty = version(["git", "-C", REPO, "status", "--porcelain", "--", "daemon", "engine", "reference", "profile", "common", "protocol", "libzygote", "cli", "shim", "runc", "profiles",
                     "tests/bench", "CMakeLists.txt"])
    m["commit"] = (head or "unknown") + (" + uncommitted changes" if dirty else "")
    m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cache = {}
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if ":" in line and "=" in line and not line.startswith(("#", "//")):
                    k, val = line.rstrip("\n").split("=", 1)
                    cache[k.split(":")[0]] = val
    except OSError:
        pass
    m["build_type"] = cache.get("CMAKE_BUILD_TYPE", "?")
    m["compiler"] = cache.get("CMAKE_C_COMPILER", "?")
    m["sanitizers"] = cache.get("ZYGOTE_SANITIZE", "OFF")
    m["tools"] = {
        "libseccomp": version(["pkg-config", "--modversion", "libseccomp"]),
        "hyperfine": version(["hyperfine", "--version"]),
        "bwrap": version(["bwrap", "--version"]),
        "crun": version(["crun", "--version"]),
        "runc": version(["runc", "--version"]),
    }
    return m


# ---- run ------------------------------------------------------------------------------------------------


def oci_profile(args, work, notes):
    """The peers' profile: Docker's default file resolved as Docker resolves it for runc."""
    src = args.docker_profile
    if not os.path.exists(src):
        src = os.path.join(REPO, "profiles", "default.json")
        notes.append(f"{args.docker_profile} is missing: the peers use the seccomp object of "
                     "profiles/default.json instead")
        docker = report.load_json(src)["seccomp"]
    else:
        docker = report.load_json(src)
    oci = report.docker_to_oci(docker, platform.machine(), platform.release())
    path = os.path.join(work, "oci-seccomp.json")
    report.write_json(path, oci)
    return src, oci, path


def cmd_run(args):
    build = os.path.abspath(args.build)
    cfg = PRESETS["quick" if args.quick else "full"]
    out_dir = os.path.abspath(args.out or os.path.join(build, "bench"))
    work = os.path.join(out_dir, "work")
    raw_dir = os.path.join(out_dir, "raw")
    os.makedirs(work, exist_ok=True)
    os.makedirs(raw_dir, exist_ok=True)
    default_profile = os.path.join(REPO, "profiles", "default.json")
    seed = args.seed

    machine = machine_info(build)
    machine["loadavg_start"] = os.getloadavg()[0]
    if machine["sanitizers"] not in ("OFF", "0", "FALSE", "NO", ""):
        raise BenchError(f"{build} is a sanitizer build (ZYGOTE_SANITIZE={machine['sanitizers']}): "
                         "its timings mean nothing; use a RelWithDebInfo build")
    results = {"machine": machine, "config": dict(cfg, quick=args.quick, seed=seed), "notes": [], "skipped": {}}
    notes = results["notes"]

    src, oci, oci_path = oci_profile(args, work, notes)
    same = bench_tool(build, "same-profile", default_profile, oci_path)
    results["profile"] = {"zygote": "profiles/default.json", "peers": src, "same_decisions": same}
    if not same["equal"]:
        notes.append(f"zygote's default and the peers' profile differ in {same['differences']} of "
                     f"{same['checked']} checked decisions (see zygote-bench same-profile)")
    bpf = os.path.join(work, "default.bpf")
    results["profile"]["compiled"] = bench_tool(build, "compile", default_profile, bpf)

    rundir = tempfile.mkdtemp(prefix="zygote-bench.")  # short paths: sockaddr_un holds 108 bytes
    daemons = {}
    try:
        log("starting zygoted (auto tier)")
        daemons["auto"] = Daemon(build, "auto", rundir)
        status = daemons["auto"].status(build)
        default = next((p for p in status["profiles"] if p["name"] == "default"), None)
        if not default:
            raise BenchError("zygoted serves no 'default' profile")
        results["daemon"] = {"version": status["version"], "features": status["features"],
                             "auto_tier": default["tier"], "auto_tier_reason": default["tier_reason"]}
        fp = {"daemons": {"auto (just started)": smaps(daemons["auto"].pid)},
              "references": footprint_refs(status, "auto"), "profiles": [p["name"] for p in status["profiles"]]}

        tiers, skipped_tiers = [], {}
        for t in ("clone", "inherit", "load"):
            if t == "clone" and not status["features"]["clone_filter"]:
                skipped_tiers[t] = (f"Linux {platform.release()} lacks SECCOMP_CLONE_FILTER "
                                    "(an RFC; zygoted's probe says no)")
                continue
            log(f"starting zygoted --tier {t}")
            d = Daemon(build, t, rundir)
            daemons[t] = d
            st = d.status(build)
            dp = next((p for p in st["profiles"] if p["name"] == "default"), None)
            if not dp or dp["tier"] != t:
                skipped_tiers[t] = f"the daemon cannot serve 'default' in tier {t}: {d.log_tail()}"
                continue
            tiers.append(t)
        if not tiers:
            raise BenchError("no tier could serve the default profile")

        log(f"spawn: {cfg['spawn_rounds']} rounds of posix_spawn, {', '.join(tiers)}, fork+libseccomp, "
            "filter steps")
        tier_args = [a for t in tiers for a in ("--tier", f"{t}={daemons[t].sock}")]
        raw_spawn = bench_tool(build, "spawn", *tier_args, "--profile", default_profile, "--oci", oci_path,
                               "--rounds", str(cfg["spawn_rounds"]), "--warmup", str(cfg["spawn_warmup"]),
                               "--max-seconds", str(cfg["spawn_seconds"]), "--seed", str(seed))
        if raw_spawn["rounds"] < raw_spawn["rounds_asked"]:
            notes.append(f"spawn: {raw_spawn['rounds']} of {raw_spawn['rounds_asked']} rounds, the "
                         f"{cfg['spawn_seconds']} s budget ran out (a loaded machine)")
        report.write_json(os.path.join(raw_dir, "spawn.json"), raw_spawn)
        results["spawn"] = report.analyse_spawn(raw_spawn, tiers, skipped_tiers)

        log(f"per-hop breakdown: {cfg['hops_rounds']} rounds under perf")
        hops, why = measure_hops(build, daemons, tiers, cfg["hops_rounds"], work, seed)
        if hops:
            results["hops"] = hops
        else:
            results["skipped"]["hops"] = why

        log(f"throughput: 1, 4, 16 clients, {cfg['tp_rounds']} rounds")
        raw_tp = bench_tool(build, "throughput", *tier_args, "--clients", "1,4,16", "--rounds",
                            str(cfg["tp_rounds"]), "--tasks", str(cfg["tp_tasks"]), "--seed", str(seed))
        report.write_json(os.path.join(raw_dir, "throughput.json"), raw_tp)
        results["throughput"] = report.analyse_throughput(raw_tp, tiers)

        log(f"CPU per spawn: callers of 1 and 16 threads, {cfg['cpu_rounds']} x {cfg['cpu_spawns']} spawns")
        pid_args = [a for t in tiers for a in ("--pid", f"{t}={daemons[t].pid}")]
        raw_cpu = bench_tool(build, "cpu", *tier_args, *pid_args, "--threads", "1,16",
                             "--spawns", str(cfg["cpu_spawns"]), "--rounds", str(cfg["cpu_rounds"]))
        report.write_json(os.path.join(raw_dir, "cpu.json"), raw_cpu)
        results["cpu"] = report.analyse_cpu(raw_cpu)

        log("syscall overhead")
        raw_sc = bench_tool(build, "syscall", "--profile", default_profile, "--rounds", str(cfg["sc_rounds"]),
                            "--batches", str(cfg["sc_batches"]), "--calls", str(cfg["sc_calls"]),
                            "--seed", str(seed))
        report.write_json(os.path.join(raw_dir, "syscall.json"), raw_sc)
        results["syscall_overhead"] = report.analyse_syscall(raw_sc)

        log("command line (hyperfine)")
        cli, cli_skipped = cli_bench(build, work, rundir, daemons["auto"].sock, bpf, oci, cfg, seed)
        if cli is None:
            results["skipped"]["cli"] = cli_skipped["all"]
        else:
            results["cli"] = cli
            notes.extend(cli.pop("notes"))

        for name, d in daemons.items():
            fp["daemons"][f"{name} (after the run)"] = smaps(d.pid)
        if "inherit" in daemons:
            fp["references"].update(footprint_refs(daemons["inherit"].status(build), "inherit"))
        results["footprint"] = fp
    finally:
        for d in daemons.values():
            d.stop()
        shutil.rmtree(rundir, ignore_errors=True)

    machine["loadavg_end"] = os.getloadavg()[0]
    results["config"]["elapsed_s"] = round(time.monotonic() - START)
    results["targets"] = report.targets(results)
    problems = report.missing(results)
    if problems:
        results["incomplete"] = problems
    report.write_json(os.path.join(out_dir, "results.json"), results)

    plot = render_plot(results, out_dir)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(report.full_markdown(results, "plot.png" if plot else None))
    log(f"results: {out_dir}/results.json, results.md" + (", plot.png" if plot else " (no plot)"))
    if problems:
        raise BenchError("incomplete run, nothing published: " + "; ".join(problems))

    if args.no_readme:
        return 0
    if args.quick:
        log("quick run: README.md and tests/bench/results/ are left as they are")
        return 0
    publish(out_dir, results, plot)
    return 0


def render_plot(results, out_dir):
    if not shutil.which("gnuplot"):
        results["notes"].append("no plot: gnuplot is not installed (scripts/deps.sh --test)")
        return False
    for name, text in report.plot_data(results).items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
    script = os.path.join(out_dir, "plot.gp")
    with open(script, "w") as f:
        f.write(report.gnuplot_script(results, "plot.png"))
    p = subprocess.run(["gnuplot", "plot.gp"], cwd=out_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        results["notes"].append(f"no plot: gnuplot failed: {first_line(p.stderr)}")
        return False
    return True


def publish(out_dir, results, plot):
    """The README shows the latest full run: copy it next to the bench code, rewrite the region."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    shutil.copy(os.path.join(out_dir, "results.json"), RESULTS_DIR)
    if plot:
        shutil.copy(os.path.join(out_dir, "plot.png"), RESULTS_DIR)
    rel = os.path.relpath(RESULTS_DIR, REPO)
    with open(os.path.join(RESULTS_DIR, "results.md"), "w") as f:
        f.write(report.full_markdown(results, "plot.png" if plot else None))
    body = report.summary_markdown(results, f"{rel}/plot.png" if plot else None)
    minutes = results["config"].get("elapsed_s", 0) / 60
    body += f"\nAll figures: [{rel}/results.md]({rel}/results.md). Reproduce with `tests/bench/run.sh` " \
            f"(this run took {minutes:.0f} min; `--quick` for a smoke run).\n"
    with open(README) as f:
        text = f.read()
    with open(README + ".tmp", "w") as f:
        f.write(report.replace_readme_region(text, body))
    os.replace(README + ".tmp", README)
    log(f"README.md and {rel}/ updated")


def cmd_hops(args):
    """The per-hop breakdown alone, on daemons of its own; merged into DIR/results.json (and
    results.md re-rendered) when a run left one there."""
    build = os.path.abspath(args.build)
    out_dir = os.path.abspath(args.out or os.path.join(build, "bench"))
    work = os.path.join(out_dir, "work")
    os.makedirs(work, exist_ok=True)
    rundir = tempfile.mkdtemp(prefix="zygote-bench.")
    daemons, tiers = {}, []
    load = os.getloadavg()[0]
    try:
        for t in ("inherit", "load"):
            d = Daemon(build, t, rundir)
            daemons[t] = d
            dp = next((p for p in d.status(build)["profiles"] if p["name"] == "default"), None)
            if dp and dp["tier"] == t:
                tiers.append(t)
        log(f"per-hop breakdown: {args.rounds} rounds of posix_spawn, {', '.join(tiers)} under perf")
        hops, why = measure_hops(build, daemons, tiers, args.rounds, work, args.seed)
    finally:
        for d in daemons.values():
            d.stop()
        shutil.rmtree(rundir, ignore_errors=True)
    if not hops:
        log(f"skipped: {why}")
        return 77
    hops["loadavg"] = [load, os.getloadavg()[0]]
    report.write_json(os.path.join(out_dir, "hops.json"), hops)
    print(report.hops_markdown(hops))
    path = os.path.join(out_dir, "results.json")
    if os.path.exists(path):
        results = report.load_json(path)
        results["hops"] = hops
        results.get("skipped", {}).pop("hops", None)
        report.write_json(path, results)
        with open(os.path.join(out_dir, "results.md"), "w") as f:
            f.write(report.full_markdown(results, "plot.png" if os.path.exists(os.path.join(out_dir, "plot.png"))
                                         else None))
        log(f"{path} and results.md updated")
    return 0


def cmd_same_profile(args):
    build = os.path.abspath(args.build)
    if not os.path.exists(args.docker_profile):
        print(f"skip: {args.docker_profile} is missing (the peers' profile; see docs/BENCHMARKS.md)",
              file=sys.stderr)
        return 77
    work = tempfile.mkdtemp(prefix="zygote-bench-same.")
    tool = [os.path.join(build, "zygote-bench"), "same-profile", os.path.join(REPO, "profiles", "default.json")]
    try:
        _, oci, oci_path = oci_profile(args, work, [])
        p = subprocess.run(tool + [oci_path])
        if p.returncode != 0:
            return p.returncode
        # The comparison must be able to fail: take getpid out of the peers' rules and expect
        # zygote-bench to see the difference.
        for c in oci["syscalls"]:
            if "getpid" in c["names"] and c["action"] == "SCMP_ACT_ALLOW":
                c["names"].remove("getpid")
                break
        else:
            print("the peers' profile does not allow getpid: cannot build the control case", file=sys.stderr)
            return 1
        mutated = os.path.join(work, "oci-without-getpid.json")
        report.write_json(mutated, oci)
        p = subprocess.run(tool + [mutated], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 1 or "differ:" not in p.stderr:
            print(f"control case: a profile without getpid was not reported as different "
                  f"(exit {p.returncode}): {p.stdout}{p.stderr}", file=sys.stderr)
            return 1
        print("control case: a profile without getpid is reported as different, as it must be")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", required=True)
    r.add_argument("--out")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--no-readme", action="store_true")
    r.add_argument("--seed", type=int, default=20251)
    r.add_argument("--docker-profile", default=DOCKER_PROFILE)
    h = sub.add_parser("hops")
    h.add_argument("--build", required=True)
    h.add_argument("--out")
    h.add_argument("--rounds", type=int, default=300)
    h.add_argument("--seed", type=int, default=20251)
    s = sub.add_parser("same-profile")
    s.add_argument("--build", required=True)
    s.add_argument("--docker-profile", default=DOCKER_PROFILE)
    args = ap.parse_args()
    try:
        return {"run": cmd_run, "hops": cmd_hops, "same-profile": cmd_same_profile}[args.cmd](args)
    except BenchError as e:
        log(f"error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
