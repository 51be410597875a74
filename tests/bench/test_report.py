"""Tests of report.py: the statistics, target verdicts, Docker profile resolution and README
rewriting that turn raw benchmark samples into the published figures.

Run: /usr/bin/python3 -m pytest -q tests/bench/test_report.py (ctest -C Bench -L bench).
"""

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

DOCKER_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "shared", "reference", "docker-default.json")


def test_quantile_interpolates_between_ranks():
    v = list(range(1, 11))  # 1..10
    assert report.quantile(v, 0.5) == pytest.approx(5.5)
    assert report.quantile(v, 0.1) == pytest.approx(1.9)
    assert report.quantile(v, 0.9) == pytest.approx(9.1)
    assert report.quantile([3], 0.9) == 3
    assert report.quantile([5, 1, 3], 0.5) == 3  # order of the input does not matter
    with pytest.raises(ValueError):
        report.quantile([], 0.5)


def test_ratio_pairs_samples_by_round():
    base = [100.0, 200.0, 100.0, 200.0, 100.0]
    # Each tier sample is 1.1x its own round's baseline: drift cancels in the per-round ratio.
    tier = [x * 1.1 for x in base]
    r = report.ratio(tier, base)
    assert r["ratio"] == pytest.approx(1.1)
    assert r["p10"] == pytest.approx(1.1)
    assert r["p90"] == pytest.approx(1.1)
    assert r["paired"]
    unpaired = report.ratio([1.0, 2.0, 3.0], [1.0, 2.0])
    assert "p10" not in unpaired


def test_verdict_says_by_how_much():
    assert report.verdict(1.05, 1.10, "max") == (True, 0.0)
    met, miss = report.verdict(1.32, 1.10, "max")
    assert not met and miss == pytest.approx(0.2)
    met, miss = report.verdict(3.0, 4.0, "min")
    assert not met and miss == pytest.approx(0.25)
    assert report.verdict(4.0, 4.0, "min")[0]


README = """# zygote

## Benchmarks

<!-- bench:begin -->
Not measured yet.
<!-- bench:end -->

## Layout
"""


def test_readme_region_is_the_only_thing_rewritten():
    out = report.replace_readme_region(README, "| a | b |\n")
    assert out.startswith("# zygote\n\n## Benchmarks\n\n<!-- bench:begin -->\n| a | b |\n<!-- bench:end -->")
    assert out.endswith("<!-- bench:end -->\n\n## Layout\n")
    assert "Not measured yet" not in out
    # Rewriting again replaces, never appends.
    again = report.replace_readme_region(out, "x\n")
    assert again.count("bench:begin") == 1 and "| a | b |" not in again


@pytest.mark.parametrize("text", [
    "no markers",
    README.replace(report.README_END, ""),
    README + report.README_BEGIN,
    "<!-- bench:end -->\n<!-- bench:begin -->\n",
])
def test_readme_without_proper_markers_is_refused(text):
    with pytest.raises(ValueError):
        report.replace_readme_region(text, "x")


DOCKER_LIKE = {
    "defaultAction": "SCMP_ACT_ERRNO",
    "defaultErrnoRet": 1,
    "archMap": [
        {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]},
        {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]},
    ],
    "syscalls": [
        {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}},
        {"names": ["newfeature"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "9.0"}},
        {"names": ["arch_prctl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["amd64", "x32"]}},
        {"names": ["breakpoint"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["arm64"]}},
        {"names": ["bpf"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
        {"names": ["chroot"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_CHROOT"]}},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38, "excludes": {"caps": ["CAP_SYS_ADMIN"]}},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]},
    ],
}


def test_docker_profile_resolves_like_docker_for_runc():
    oci = report.docker_to_oci(DOCKER_LIKE, "x86_64", "6.18.0")
    assert oci["architectures"] == ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]
    assert oci["defaultErrnoRet"] == 1
    names = [n for c in oci["syscalls"] for n in c["names"]]
    assert names == ["read", "write", "ptrace", "arch_prctl", "chroot", "clone3", "personality"]
    clone3 = next(c for c in oci["syscalls"] if c["names"] == ["clone3"])
    assert clone3["errnoRet"] == 38 and clone3["action"] == "SCMP_ACT_ERRNO"
    assert "includes" not in str(oci) and "archMap" not in oci
    # Another machine, another answer: the resolution is not hard-wired to x86_64.
    arm = report.docker_to_oci(DOCKER_LIKE, "aarch64", "4.4")
    arm_names = [n for c in arm["syscalls"] for n in c["names"]]
    assert "breakpoint" in arm_names and "arch_prctl" not in arm_names and "ptrace" not in arm_names
    # With CAP_SYS_ADMIN kept, clone3 is no longer refused and bpf is allowed.
    admin = report.docker_to_oci(DOCKER_LIKE, "x86_64", "6.1", report.DOCKER_DEFAULT_CAPS + ["CAP_SYS_ADMIN"])
    admin_names = [n for c in admin["syscalls"] for n in c["names"]]
    assert "bpf" in admin_names and "clone3" not in admin_names


@pytest.mark.skipif(not os.path.exists(DOCKER_FILE), reason="Docker's reference profile is not here")
def test_docker_reference_file_resolves():
    oci = report.docker_to_oci(report.load_json(DOCKER_FILE), "x86_64", "6.18.0")
    names = {n for c in oci["syscalls"] for n in c["names"] if c["action"] == "SCMP_ACT_ALLOW"}
    assert {"read", "execve", "personality", "chroot"} <= names
    assert not {"bpf", "mount", "reboot", "ptrace_attach"} & names  # CAP_SYS_ADMIN / CAP_SYS_BOOT rules
    assert all("includes" not in c and "excludes" not in c for c in oci["syscalls"])


def fake_results(spawn_ratio=1.05, bwrap=5.0, crun=None, tp16=0.95, pss_kib=3000, ref_kib=200):
    base = [1000.0 + i for i in range(20)]
    raw = {"rounds": 20, "warmup": 2, "samples": {
        "posix_spawn": base,
        "inherit": [x * spawn_ratio for x in base],
        "load": [x * (spawn_ratio + 0.2) for x in base],
        "libseccomp_fork": [x * 8 for x in base],
        "filter_load": [300.0] * 20,
        "libseccomp_build_load": [7000.0] * 20,
        "libseccomp_load_only": [3000.0] * 20,
    }}
    results = {
        "machine": {"cpu": "Test CPU", "cores": 2, "kernel": "6.18", "os": "Debian", "commit": "abc",
                    "date": "today", "loadavg_start": 0.5, "loadavg_end": 0.6},
        "config": {"quick": False},
        "spawn": report.analyse_spawn(raw, ["inherit", "load"], {"clone": "kernel lacks it"}),
        "throughput": report.analyse_throughput({"rounds": 3, "tasks_per_round": {"16": 160}, "samples": {
            "16": {"posix_spawn": [100.0, 100.0, 100.0], "inherit": [100.0 * tp16] * 3, "load": [30.0] * 3}}},
            ["inherit", "load"]),
        "footprint": {"daemons": {"auto": {"rss_kib": 9000, "pss_kib": pss_kib, "private_kib": 1}},
                      "references": {"auto/default": {"rss_kib": 900, "pss_kib": 1, "private_kib": ref_kib}}},
        "notes": [],
    }
    passes = [{"true": [0.001] * 5, "launchctl": [0.002] * 5, "bwrap": [0.002 * bwrap] * 5}]
    if crun:
        passes[0]["crun"] = [0.002 * crun] * 5
    results["cli"] = report.analyse_cli(passes, {} if crun else {"crun": "crun fails here: cgroups"})
    results["cli"]["command_lines"] = {}
    results["targets"] = report.targets(results)
    return results


def test_targets_met_missed_and_skipped():
    t = {x["key"]: x for x in fake_results()["targets"]}
    assert t["spawn_ratio"]["met"] and t["spawn_ratio"]["which"] == "inherit"
    assert t["spawn_ratio"]["measured"] == pytest.approx(1.05)
    # /bin/true 1 ms, launchctl 2 ms, bwrap 10 ms: overheads 1 and 9 ms
    assert t["cli_bwrap"]["met"] and t["cli_bwrap"]["measured"] == pytest.approx(1 / 9)
    assert t["cli_crun"]["skipped"] == "crun fails here: cgroups"
    assert t["throughput_16"]["met"] and t["throughput_16"]["which"] == "inherit"
    assert t["footprint_daemon"]["met"] and t["footprint_reference"]["met"]

    t = {x["key"]: x for x in fake_results(spawn_ratio=1.32, crun=10, tp16=0.45, pss_kib=5120)["targets"]}
    assert not t["spawn_ratio"]["met"] and t["spawn_ratio"]["miss"] == pytest.approx(0.2)
    # crun 20 ms: overhead 19 ms against launchctl's 1 ms, 1/19 > 1/20
    assert not t["cli_crun"]["met"] and t["cli_crun"]["measured"] == pytest.approx(1 / 19)
    assert t["cli_crun"]["miss"] == pytest.approx(20 / 19 - 1)
    # judged on Pss: the RSS of 9000 KiB counts shared libraries and is not what is judged
    assert not t["throughput_16"]["met"] and t["throughput_16"]["miss"] == pytest.approx(0.5)
    assert not t["footprint_daemon"]["met"] and t["footprint_daemon"]["measured"] == pytest.approx(5.0)


def test_summary_states_misses_and_the_machine():
    md = report.summary_markdown(fake_results(spawn_ratio=1.32), "tests/bench/results/plot.png")
    assert "Test CPU, 2 cores" in md
    assert "missed by 20 %" in md
    assert "Missed targets:" in md and "20 % over" in md
    assert "![benchmark plot](tests/bench/results/plot.png)" in md
    assert "skipped: crun fails here: cgroups" in md
    ok = report.summary_markdown(fake_results(), None)
    assert "Missed targets" not in ok and "![" not in ok
    assert "shared the machine" not in ok
    busy = fake_results()
    busy["machine"]["loadavg_end"] = 9.0  # 2 cores
    assert "shared the machine" in report.summary_markdown(busy, None)


def test_filter_step_from_forced_tiers():
    fs = fake_results()["spawn"]["filter_step_us"]
    assert fs["inherit"]["median"] == 0.0
    assert fs["load"]["median"] == 300.0
    assert fs["clone"]["skipped"] == "kernel lacks it"
    # load ran at 1.25x and inherit at 1.05x of the same baseline: the difference is 0.2x of it.
    assert fs["load_minus_inherit_spawn"]["median"] == pytest.approx(0.2 * 1009.5)


@pytest.mark.skipif(not shutil.which("gnuplot"), reason="gnuplot is not installed")
def test_plot_renders(tmp_path):
    results = fake_results(crun=25)
    results["syscall_overhead"] = report.analyse_syscall({
        "calls_per_batch": 10, "rounds": 1, "batches": 3, "profile_longest_path": 24,
        "paths": {"zygote": {"bpf_instructions": 10}},
        "samples": {"getpid": {"none": [100.0, 101.0, 99.0], "zygote": [110.0, 111.0, 109.0],
                               "libseccomp_linear": [120.0, 121.0, 119.0]}}})
    for name, text in report.plot_data(results).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "plot.gp").write_text(report.gnuplot_script(results, "plot.png"))
    p = subprocess.run(["gnuplot", "plot.gp"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = report.full_markdown(results, "plot.png")
    assert "| getpid |" in md and "(+10.0)" in md


def test_missing_names_what_a_run_lacks():
    r = fake_results()
    probs = report.missing(r)
    # The fake run has no syscall figures and no runc: both must be named, nothing else.
    assert any(p.startswith("syscall_overhead.personality.none") for p in probs)
    assert "cli.runc: neither measured nor skipped" in probs
    assert not any(p.startswith(("spawn", "throughput.16", "footprint", "target")) for p in probs)
    assert any(p.startswith("throughput.1:") for p in probs)  # only 16 clients were faked
    del r["spawn"]
    assert "spawn: not measured" in report.missing(r)


def test_clone_tier_step_when_the_kernel_has_it():
    base = [1000.0] * 10
    raw = {"rounds": 10, "warmup": 0, "samples": {
        "posix_spawn": base, "inherit": [1050.0] * 10, "load": [1300.0] * 10, "clone": [1052.0] * 10,
        "libseccomp_fork": [9000.0] * 10, "filter_load": [250.0] * 10,
        "libseccomp_build_load": [7000.0] * 10, "libseccomp_load_only": [3000.0] * 10}}
    sp = report.analyse_spawn(raw, ["clone", "inherit", "load"], {})
    assert sp["filter_step_us"]["clone"]["median"] == pytest.approx(2.0)
    assert sp["best_tier"] == "inherit"
    assert sp["spawn_ratio"]["clone"]["ratio"] == pytest.approx(1.052)


# ---- per-hop breakdown -------------------------------------------------------------------------------

# Fixed `perf script --ns -F tid,time,event,trace` text for one spawn of each kind, times in µs
# after 1000 s: posix_spawn from client 100 (child 200); inherit through daemon 300 and its
# reference 400 (worker 500, gated); load forked by daemon 600 (worker 700). Noise that must not
# be taken as an anchor: a daemon read before the send, a worker read that is not the last before
# execve.
def _perf_line(tid, us, ev, trace):
    ns = 1_000_000_000_000 + us * 1000
    return f"{tid:>7} {ns // 1_000_000_000}.{ns % 1_000_000_000:09d}: {ev}: {trace}"


def _enter(tid, us, nr):
    return _perf_line(tid, us, "raw_syscalls:sys_enter", f"NR {nr} (0, 0, 0, 0, 0, 0)")


def _exit(tid, us, nr, ret=0):
    return _perf_line(tid, us, "raw_syscalls:sys_exit", f"NR {nr} = {ret}")


def _fork(tid, us, child):
    return _perf_line(tid, us, "sched:sched_process_fork", f"comm=x pid={tid} child_comm=x child_pid={child}")


def _exec(tid, us):
    return _perf_line(tid, us, "sched:sched_process_exec", f"filename=/bin/true pid={tid} old_pid={tid}")


def _exitp(tid, us):
    return _perf_line(tid, us, "sched:sched_process_exit", f"comm=true pid={tid} prio=120 group_dead=true")


HOPS_PERF = [
    # posix_spawn: send at 0, exit known at 1000
    _enter(100, 10, 435), _fork(100, 50, 200), _enter(200, 60, 33), _enter(200, 100, 59), _exec(200, 300),
    _exitp(200, 700), _exit(100, 800, 61, 200),
    # inherit: send at 2000, exit known at 4000
    _exit(300, 1990, 47, 10),  # before the send: not this spawn's
    _exit(300, 2100, 47, 500), _enter(300, 2300, 46), _enter(400, 2400, 56), _fork(400, 2500, 500),
    _enter(500, 2600, 157), _enter(500, 2650, 0), _exit(500, 2660, 0, 1),  # an early read: not the gate
    _enter(500, 2800, 0), _exit(500, 3000, 0, 1), _enter(500, 3050, 59), _exec(500, 3250), _exitp(500, 3600),
    _exit(300, 3700, 247), _enter(300, 3750, 46), _enter(300, 3800, 46),
    # load: send at 5000, exit known at 6000
    _exit(600, 5050, 47, 500), _enter(600, 5200, 56), _fork(600, 5300, 700), _enter(700, 5350, 317),
    _enter(700, 5500, 59), _exec(700, 5600), _exitp(700, 5800), _exit(600, 5850, 247), _enter(600, 5900, 46),
    "not a perf line",
]

HOPS_RAW = {"rounds": 1, "pid": 100, "samples": {
    "posix_spawn": [{"round": 0, "pid": 200, "send_ns": 1_000_000_000_000, "exit_ns": 1_000_001_000_000}],
    "inherit": [{"round": 0, "pid": 500, "send_ns": 1_000_002_000_000, "exit_ns": 1_000_004_000_000}],
    "load": [{"round": 0, "pid": 700, "send_ns": 1_000_005_000_000, "exit_ns": 1_000_006_000_000}],
}}


def test_perf_script_lines_parse():
    ev = report.parse_perf_script(HOPS_PERF)
    assert len(ev) == len(HOPS_PERF) - 1
    assert ev[0] == {"tid": 100, "t": 1_000_000_010_000, "ev": "raw_syscalls:sys_enter", "nr": 435}
    fork = next(e for e in ev if e["ev"] == "sched:sched_process_fork")
    assert fork["child_pid"] == "200"
    assert next(e for e in ev if e["ev"] == "raw_syscalls:sys_exit")["ret"] == 200


def test_hops_chain_each_spawn_and_add_up():
    h = report.analyse_hops(HOPS_RAW, report.parse_perf_script(HOPS_PERF), {"inherit": 300, "load": 600})
    p, i, lo = (h["variants"][k]["hops"] for k in ("posix_spawn", "inherit", "load"))
    med = lambda hops: {k: v["median"] for k, v in hops.items()}  # noqa: E731
    assert med(p) == {"client_to_daemon": 0, "request": 10, "to_reference": 0, "fork": 40, "first_run": 10,
                      "pre_gate": 40, "gate": 0, "post_gate": 0, "execve": 200, "run": 400, "reap": 100,
                      "reply": 0, "to_client": 200}
    assert med(i) == {"client_to_daemon": 100, "request": 200, "to_reference": 100, "fork": 100,
                      "first_run": 100, "pre_gate": 200, "gate": 200, "post_gate": 50, "execve": 200,
                      "run": 350, "reap": 100, "reply": 100, "to_client": 200}
    assert med(lo)["to_reference"] == 0 and med(lo)["gate"] == 0 and med(lo)["request"] == 150
    for k in ("posix_spawn", "inherit", "load"):
        v = h["variants"][k]
        assert v["n"] == 1
        assert v["total"]["median"] == pytest.approx(sum(med(v["hops"]).values()))
    assert h["variants"]["inherit"]["total"]["median"] == 2000
    assert h["variants"]["inherit"]["delta"]["gate"] == 200
    assert h["variants"]["inherit"]["delta"]["fork"] == 60


def test_hops_drop_a_spawn_without_its_anchors():
    lines = [l for l in HOPS_PERF if not l.startswith("    300 1000.003700")]  # inherit's reap unseen
    h = report.analyse_hops(HOPS_RAW, report.parse_perf_script(lines), {"inherit": 300, "load": 600})
    assert h["variants"]["inherit"] == {"n": 0, "samples": 1}
    assert h["variants"]["load"]["n"] == 1
    md = report.hops_markdown(h)
    assert "inherit" not in md.splitlines()[0]
    assert "| gate wait | 0 | 0 | +0 |" in md


def test_hops_table_has_every_hop_and_the_deltas():
    h = report.analyse_hops(HOPS_RAW, report.parse_perf_script(HOPS_PERF), {"inherit": 300, "load": 600})
    md = report.hops_markdown(h)
    head = md.splitlines()[0]
    assert head == "| hop | posix_spawn | inherit | load | inherit − posix_spawn | load − posix_spawn |"
    for _, label, _ in report.HOPS:
        assert f"| {label} |" in md
    assert "| gate wait | 0 | 200 | 0 | +200 | +0 |" in md
    assert "| **sum of the hop medians** | 1000 | 2000 | 1000 | +1000 | +0 |" in md


def test_cli_overhead_over_true_per_pass():
    passes = [{"true": [0.001] * 3, "launchctl": [0.0014] * 3, "bwrap": [0.002] * 3},
              {"true": [0.002] * 3, "launchctl": [0.0024] * 3, "bwrap": [0.004] * 3}]
    cli = report.analyse_cli(passes, {})
    assert cli["commands"]["launchctl"]["overhead_ms"] == pytest.approx(1.9 - 1.5)
    r = cli["ratios"]["bwrap"]
    assert r["overhead_pass_min"] == pytest.approx(0.2) and r["overhead_pass_max"] == pytest.approx(0.4)
    assert r["overhead_ratio"] == pytest.approx(0.4 / (3.0 - 1.5))


def test_cpu_targets():
    raw = {"spawns": 100, "samples": {
        "1": {"posix_spawn": {"parent": [20.0, 22.0], "child": [300.0, 310.0]},
              "inherit": {"client": [40.0], "zygoted": [150.0], "reference": [50.0], "worker_task": [400.0]},
              "load": {"client": [40.0], "zygoted": [300.0], "reference": [0.0], "worker_task": [900.0]}},
        "16": {"posix_spawn": {"parent": [20.0], "child": [300.0]},
               "inherit": {"client": [40.0], "zygoted": [50.0], "reference": [10.0], "worker_task": [260.0]}}}}
    results = {"cpu": report.analyse_cpu(raw)}
    lv = results["cpu"]["threads"]["1"]
    assert lv["total_us"]["posix_spawn"] == pytest.approx(326.0)
    assert lv["ratio"]["inherit"] == pytest.approx(640.0 / 326.0)
    t = {x["key"]: x for x in report.targets(results)}
    assert t["cpu_1"]["which"] == "inherit" and not t["cpu_1"]["met"]
    assert t["zygoted_cpu_1"]["measured"] == pytest.approx(150.0) and not t["zygoted_cpu_1"]["met"]
    assert t["cpu_16"]["met"] and t["cpu_16"]["measured"] == pytest.approx(360.0 / 320.0)
    assert t["zygoted_cpu_16"]["met"]
    assert t["cpu_1"]["which"] == "inherit"
    assert "skipped" in {x["key"]: x for x in report.targets({})}["cpu_16"]
