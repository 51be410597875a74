#!/usr/bin/env python3
"""The recording benchmark of issue 38 (docs/RECORDING.md, docs/BENCHMARKS.md): a build of 200
one-line C files with `make -j2`, run as a zygote task unrecorded, recorded through zygoted's
eBPF tracer (--record-via bpf) and through seccomp user notification (--record-via notify), every
compile recorded (the whole make is the task: its descendants are recorded with it). Rounds are
interleaved, the modes rotated within each round so that drift in the machine's load spreads over
all of them; the figures are medians. Also the size of the profile each path wrote (zygoted
--check-profile's rules and instructions) against Docker's default profile.

  record-bench.py --build DIR [--rounds N] [--files N] [--out FILE]

Run as root (the eBPF path needs a root zygoted), on a machine as idle as can be had; it starts
its own zygoted on a private socket. A script, not a test: it asserts nothing but that each run
succeeded and that both paths wrote the same profile.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import DOCKER_PROFILE, REPO, Daemon, machine_info  # noqa: E402

MODES = ("unrecorded", "bpf", "notify")


def make_tree(work, n):
    """n one-line C files and a Makefile that compiles each to an object."""
    src = os.path.join(work, "src")
    os.makedirs(src)
    for i in range(n):
        with open(os.path.join(src, f"f{i}.c"), "w") as f:
            f.write(f"int f{i}(int x) {{ return x * {i} + 1; }}\n")
    objs = " ".join(f"f{i}.o" for i in range(n))
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write(f"all: {objs}\n%.o: %.c\n\tcc -O1 -c $< -o $@\nclean:\n\trm -f *.o\n")
    return src


def check_profile(build, path):
    """zygoted --check-profile's rules and instructions of a profile file."""
    out = subprocess.run([os.path.join(build, "zygoted"), "--check-profile", path], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=120)
    fields = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    if out.returncode != 0:
        raise SystemExit(f"zygoted --check-profile {path}: {out.stdout.strip()}")
    return {"rules": int(fields["rules"].split()[0]), "instructions": int(fields["instructions"].split()[0])}


def names(path):
    with open(path) as f:
        p = json.load(f)
    return sorted({n for r in p["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]})


def one_build(build, sock, src, mode, profile_out, probe=False):
    """Seconds of one `launchctl run [--record ...] -- make -j2` (the objects removed before);
    with probe, zygote-record's reason (a string) where zygoted cannot record with eBPF."""
    subprocess.run(["make", "-s", "clean"], cwd=src, check=True, stdout=subprocess.DEVNULL)
    if os.path.exists(profile_out):
        os.unlink(profile_out)
    cmd = [os.path.join(build, "launchctl"), "--socket", sock, "run", "--cwd", src]
    if mode != "unrecorded":
        cmd += ["--record", profile_out, "--record-via", mode]
    cmd += ["--", "make", "-s", "-j2"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1800)
    t = time.monotonic() - t0
    if p.returncode == 77 and mode == "bpf" and probe:
        return p.stderr.strip().splitlines()[-1]
    if p.returncode != 0:
        raise SystemExit(f"{mode}: exited {p.returncode}: {p.stderr.strip()[-1500:]}")
    if mode != "unrecorded" and f"({'eBPF' if mode == 'bpf' else 'user notification'})" not in p.stderr:
        raise SystemExit(f"{mode}: another path recorded: {p.stderr.strip()}")
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--out", help="results as JSON (default BUILD/bench/record.json)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    out = args.out or os.path.join(build, "bench", "record.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if os.geteuid() != 0:
        raise SystemExit("run as root: the eBPF path needs a root zygoted")
    work = tempfile.mkdtemp(prefix="zy-record-bench-")
    daemon = None
    try:
        src = make_tree(work, args.files)
        daemon = Daemon(build, "auto", work)
        daemon.status(build)  # ready
        # warm-up (caches, the pool), and whether zygoted has its tracer
        one_build(build, daemon.sock, src, "unrecorded", "")
        why = one_build(build, daemon.sock, src, "bpf", os.path.join(work, "probe.json"), probe=True)
        no_bpf = why if isinstance(why, str) else None
        modes = [m for m in MODES if m != "bpf" or not no_bpf]
        samples = {m: [] for m in modes}
        profiles = {m: os.path.join(work, f"{m}.json") for m in modes}
        for r in range(args.rounds):
            for k in range(len(modes)):
                m = modes[(r + k) % len(modes)]
                samples[m].append(one_build(build, daemon.sock, src, m, profiles[m]))
            print(f"round {r + 1}/{args.rounds}: " +
                  ", ".join(f"{m} {samples[m][-1]:.2f} s" for m in modes), file=sys.stderr)
        med = {m: statistics.median(v) for m, v in samples.items()}
        result = {
            "machine": machine_info(build),
            "load_before": os.getloadavg(),
            "files": args.files, "rounds": args.rounds,
            "bpf_unavailable": no_bpf,
            "seconds": samples, "median": med,
            "overhead": {m: med[m] / med["unrecorded"] - 1 for m in modes if m != "unrecorded"},
            "profile": {m: check_profile(build, profiles[m]) for m in modes if m != "unrecorded"},
            "same_profile": len({tuple(names(profiles[m])) for m in modes if m != "unrecorded"}) == 1,
        }
        docker = DOCKER_PROFILE if os.path.exists(DOCKER_PROFILE) else os.path.join(REPO, "profiles", "default.json")
        result["docker_default"] = dict(check_profile(build, docker), file=docker)
        with open(out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"| mode | median (s) | runs (s) | overhead | profile rules / BPF instructions |")
        print("|---|---|---|---|---|")
        for m in modes:
            ov = f"{result['overhead'][m] * 100:+.1f} %" if m != "unrecorded" else ""
            pr = result["profile"].get(m)
            prs = f"{pr['rules']} / {pr['instructions']}" if pr else ""
            print(f"| {m} | {med[m]:.2f} | {', '.join(f'{x:.2f}' for x in samples[m])} | {ov} | {prs} |")
        d = result["docker_default"]
        print(f"| Docker's default profile | | | | {d['rules']} / {d['instructions']} |")
        print(f"same profile from both paths: {result['same_profile']}; results in {out}", file=sys.stderr)
    finally:
        if daemon:
            daemon.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
