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


def fake_results(spawn_ratio=1.05, bwrap=5.0, crun=None, tp16=0.95, rss_kib=3000, ref_kib=200):
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
        "footprint": {"daemons": {"auto": {"rss_kib": rss_kib, "pss_kib": 1, "private_kib": 1}},
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
    assert t["cli_bwrap"]["met"] and t["cli_bwrap"]["measured"] == pytest.approx(5.0)
    assert t["cli_crun"]["skipped"] == "crun fails here: cgroups"
    assert t["throughput_16"]["met"] and t["throughput_16"]["which"] == "inherit"
    assert t["footprint_daemon"]["met"] and t["footprint_reference"]["met"]

    t = {x["key"]: x for x in fake_results(spawn_ratio=1.32, crun=10, tp16=0.45, rss_kib=5120)["targets"]}
    assert not t["spawn_ratio"]["met"] and t["spawn_ratio"]["miss"] == pytest.approx(0.2)
    assert not t["cli_crun"]["met"] and t["cli_crun"]["miss"] == pytest.approx(0.5)
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
