#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Container start-up through zygote-runc against runc and crun, in one run on one machine.

    tests/bench/runtime-bench.py [--build DIR] [--runs N] [--ctr-runs M] [--no-readme]

Two measurements, each timed from the caller's side (fork of the tool to its exit):
  bundle:  `RUNTIME run --bundle B ID` of one busybox bundle whose command is /bin/true and whose
           config.json carries Podman's seccomp profile (/usr/share/containers/seccomp.json);
  ctr:     `ctr run --rm --runc-binary RUNTIME --seccomp --seccomp-profile PODMAN IMAGE ID true`
           against a containerd of this run's own, on the offline busybox image.
The runtimes take turns within each round (the order rotates), so that the ratios compare samples
taken side by side; ratios are medians of the per-round ratios. Medians with [p10-p90].

crun 1.8 refuses hybrid cgroup hosts (cgroup v1 controllers with cgroup2 mounted at
/sys/fs/cgroup/unified). On such a host the whole set is measured twice: as the host is (crun
reported as refused), and in a private mount namespace without the cgroup2 mount, where the host
looks like plain cgroup v1 to every runtime alike and crun runs.

Writes the table into README.md's and docs/CONTAINERS.md's runtime-bench regions and the raw
figures to tests/bench/results/runtime.json (not with --no-readme). Root; about 2 minutes.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "runtime"))
import containertools as ct  # noqa: E402

RUNTIMES = ("zygote-runc", "runc", "crun")
BEGIN, END = "<!-- runtime-bench:begin -->", "<!-- runtime-bench:end -->"


def log(msg):
    print(f"runtime-bench: {msg}", file=sys.stderr, flush=True)


def quantiles(xs):
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]  # noqa: E731
    return {"median": statistics.median(xs), "p10": q(0.1), "p90": q(0.9), "n": len(xs)}


def is_hybrid():
    with open("/proc/self/mountinfo") as f:
        mounts = {l.split(" - ")[0].split()[4]: l.split(" - ")[1].split()[0] for l in f}
    return mounts.get("/sys/fs/cgroup") == "tmpfs" and mounts.get("/sys/fs/cgroup/unified") == "cgroup2"


def make_bundle(path, zygote_runc):
    rootfs = os.path.join(path, "rootfs")
    os.makedirs(os.path.join(rootfs, "bin"))
    for d in ("proc", "sys", "dev", "tmp", "etc"):
        os.mkdir(os.path.join(rootfs, d))
    shutil.copy("/bin/busybox", os.path.join(rootfs, "bin", "busybox"))
    os.symlink("busybox", os.path.join(rootfs, "bin", "true"))
    subprocess.run([zygote_runc, "spec", "--bundle", path], check=True)
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    config["process"]["args"] = ["/bin/true"]
    with open(ct.PODMAN_PROFILE) as f:
        config["linux"]["seccomp"] = json.load(f)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)


def timed(argv, **kw):
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    return time.perf_counter() - t0, r


def rounds(names, one, runs, warmup=2):
    """one(name, i) -> seconds or an error string; returns {name: [ms] or refusal}, per-round ratios."""
    refused, times, ratios = {}, {n: [] for n in names}, []
    for n in names:  # a runtime that fails here is out of the set, with its message
        for i in range(warmup):
            t = one(n, f"w{i}")
            if isinstance(t, str):
                refused[n] = t
                break
    live = [n for n in names if n not in refused]
    for i in range(runs):
        k = i % len(live) if live else 0
        order = live[k:] + live[:k]
        got = {}
        for n in order:
            t = one(n, str(i))
            if isinstance(t, str):
                raise RuntimeError(f"{n} failed in round {i}: {t}")
            got[n] = t * 1000
            times[n].append(got[n])
        ratios.append(got)
    out = {}
    for n in names:
        if n in refused:
            out[n] = {"refused": refused[n]}
            continue
        out[n] = quantiles(times[n])
        for other in live:
            if other != n and n == "zygote-runc":
                out[n][f"ratio_to_{other}"] = quantiles([r[n] / r[other] for r in ratios])
    return out


def measure(args):
    """One set of measurements in the current mount namespace; JSON on stdout."""
    zr = os.path.join(args.build, "zygote-runc")
    paths = {"zygote-runc": zr, "runc": shutil.which("runc"), "crun": shutil.which("crun")}
    names = [n for n in RUNTIMES if paths[n]]
    work = tempfile.mkdtemp(prefix="zyg-bench.", dir="/tmp")
    result = {}
    try:
        bundle = os.path.join(work, "bundle")
        make_bundle(bundle, zr)

        def run_bundle(name, tag):
            t, r = timed([paths[name], "--root", os.path.join(work, "state-" + name), "run", "--bundle", bundle,
                          f"b-{name}-{tag}"])
            return t if r.returncode == 0 else (r.stderr.decode(errors="replace").strip() or f"exit {r.returncode}")

        log(f"bundle: {args.runs} rounds of {', '.join(names)}")
        result["bundle"] = rounds(names, run_bundle, args.runs)

        os.mkdir(os.path.join(work, "ctd"))
        cd = ct.Containerd(os.path.join(work, "ctd"))
        cd.start()
        try:
            r = cd.ctr("image", "import", args.image, timeout=120)
            if r.returncode != 0:
                raise RuntimeError(r.stderr)

            def run_ctr(name, tag):
                cid = f"c-{name}-{tag}"
                t, r = timed(cd.ctr_argv("run", "--rm", "--runc-binary", paths[name], "--runc-root", cd.runc_root,
                                         "--cgroup", f"{ct.CTR_CGROUP_PARENT}/{cid}", "--seccomp",
                                         "--seccomp-profile", ct.PODMAN_PROFILE, ct.IMAGE, cid, "true"), timeout=120)
                if r.returncode != 0:
                    cd.ctr("containers", "rm", cid)
                    return r.stderr.decode(errors="replace").strip() or f"exit {r.returncode}"
                return t

            log(f"ctr run --rm: {args.ctr_runs} rounds of {', '.join(names)}")
            result["ctr"] = rounds(names, run_ctr, args.ctr_runs)
        finally:
            cd.stop()
    finally:
        for line in reversed(ct.mounts_naming(work)):
            subprocess.run(["umount", "-l", line.split()[4]], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)
        ct.remove_cgroup_parent(ct.CTR_CGROUP_PARENT)
    json.dump(result, sys.stdout)


def cell(m):
    if "refused" in m:
        first = m["refused"].splitlines()[-1] if m["refused"] else "failed"
        return f"refused: \"{first[:90]}\""
    return f"{m['median']:.1f} [{m['p10']:.1f}–{m['p90']:.1f}]"


def ratio_cell(z, other):
    r = z.get(f"ratio_to_{other}")
    if not r:
        return "–"
    return f"{r['median']:.2f} [{r['p10']:.2f}–{r['p90']:.2f}]"


def table(sets, meta):
    lines = [f"Container start-up, {meta['when']}, commit {meta['commit']}, {meta['cpu']}, Linux {meta['kernel']}; "
             f"load average {meta['load_start']:.2f} at start and {meta['load_end']:.2f} at end; "
             f"{meta['runs']} rounds per bundle row, {meta['ctr_runs']} per ctr row, the runtimes taking turns. "
             f"{meta['versions']}. Milliseconds, median [p10–p90]; ratio = zygote-runc's time over the other's in "
             "the same round (below 1: zygote-runc is faster). Every container carries Podman's seccomp profile; "
             "zygote-runc compiles it itself (zygoted's compiled-profile method is not built yet). "
             "Reproduce: `tests/bench/runtime-bench.py`.", ""]
    lines += ["| cgroups | what | zygote-runc ms | runc ms | crun ms | zygote-runc / runc | zygote-runc / crun |",
              "|---|---|---|---|---|---|---|"]
    for view, res in sets.items():
        for what, label in (("bundle", "`RUNTIME run` of a bundle (/bin/true)"),
                            ("ctr", "`ctr run --rm` (containerd 1.6, runc v2 shim)")):
            if what not in res:
                continue
            row = res[what]
            z = row["zygote-runc"]
            lines.append(f"| {view} | {label} | " + " | ".join(cell(row[n]) if n in row else "not installed"
                                                            for n in RUNTIMES)
                         + f" | {ratio_cell(z, 'runc')} | {ratio_cell(z, 'crun')} |")
    return "\n".join(lines) + "\n"


def replace_region(path, text):
    with open(path) as f:
        s = f.read()
    if BEGIN not in s or END not in s:
        raise RuntimeError(f"{path} has no {BEGIN} ... {END} region")
    head, rest = s.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path + ".tmp", "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--ctr-runs", type=int, default=20)
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--image", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    if args.measure:
        return measure(args)
    if os.geteuid() != 0:
        sys.exit("runtime-bench: needs root (containers, cgroups, containerd)")
    for tool in ("containerd", "ctr", "runc"):
        if not shutil.which(tool):
            sys.exit(f"runtime-bench: no {tool} (scripts/deps.sh --test)")
    subprocess.run(["cmake", "--build", args.build, "--target", "zygote-runc", "try-syscall-static"],
                   check=True, stdout=subprocess.DEVNULL)
    image = subprocess.run([os.path.join(REPO, "tests", "runtime", "make-image.sh"), args.build],
                           check=True, capture_output=True, text=True).stdout.strip()
    me = [sys.executable, os.path.abspath(__file__), "--measure", "--build", args.build, "--image", image,
          "--runs", str(args.runs), "--ctr-runs", str(args.ctr_runs)]
    load_start = os.getloadavg()[0]
    sets = {}
    hybrid = is_hybrid()
    sets["hybrid (the host's)" if hybrid else "the host's"] = json.loads(subprocess.run(me, check=True,
                                                                                       stdout=subprocess.PIPE).stdout)
    if hybrid:
        # the same host seen as plain cgroup v1: crun 1.8 accepts that (it refuses hybrid)
        sh = "umount /sys/fs/cgroup/unified && exec \"$@\""
        sets["v1 (cgroup2 unmounted)"] = json.loads(subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", sh, "sh", *me],
            check=True, stdout=subprocess.PIPE).stdout)
    load_end = os.getloadavg()[0]

    def out(argv):
        r = subprocess.run(argv, capture_output=True, text=True)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"

    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    meta = {
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": out(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]) + (" + uncommitted changes" if dirty else ""),
        "cpu": f"{cpu}, {os.cpu_count()} cores", "kernel": os.uname().release,
        "load_start": load_start, "load_end": load_end, "runs": args.runs, "ctr_runs": args.ctr_runs,
        "versions": "; ".join([out(["runc", "--version"]), out(["crun", "--version"]),
                               "containerd " + out(["containerd", "--version"]).split()[-2]]),
    }
    text = table(sets, meta)
    print(text)
    if not args.no_readme:
        replace_region(os.path.join(REPO, "README.md"), text)
        replace_region(os.path.join(REPO, "docs", "CONTAINERS.md"), text)
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        with open(os.path.join(HERE, "results", "runtime.json"), "w") as f:
            json.dump({"meta": meta, "sets": sets}, f, indent=1)
        log("README.md, docs/CONTAINERS.md and tests/bench/results/runtime.json updated")


if __name__ == "__main__":
    main()
