"""Statistics, targets and rendering for the zygote benchmarks (tests/bench/run.sh).

Pure functions over the raw samples that zygote-bench and hyperfine produce: nothing here runs
a process, so tests/bench/test_report.py checks it without a daemon. Every figure is a median with
its 10th and 90th percentiles; every ratio is taken between samples of one run.
"""

import json
import math
import os
import statistics

# Re-exported: bench.py and test_report.py use them as report.NAME.
from report_stats import quantile, stats, ratio, verdict  # noqa: F401
from report_hops import HOPS, parse_perf_script, analyse_hops, hops_markdown  # noqa: F401
from report_docker import DOCKER_DEFAULT_CAPS, docker_to_oci  # noqa: F401

README_BEGIN = "<!-- bench:begin -->"
README_END = "<!-- bench:end -->"

# The targets (docs/BENCHMARKS.md): the command line is judged on its overhead
# over /bin/true's own run (a ratio of times would reward a slow /bin/true), the daemon on its own
# memory (Pss: RSS counts every shared library in full). "max": the measured value must not
# exceed it; "min": must reach it.
TARGETS = [
    # key, description, bound, kind, unit
    ("spawn_ratio", "spawn-to-exit vs posix_spawn, best tier", 1.10, "max", "x"),
    ("cli_bwrap", "launchctl run's overhead over /bin/true, relative to bwrap's", 0.4, "max", "x"),
    ("cli_crun", "launchctl run's overhead over /bin/true, relative to crun run's", 0.05, "max", "x"),
    ("throughput_16", "throughput at 16 clients vs posix_spawn, best tier", 0.90, "min", "x"),
    ("cpu_1", "CPU per spawn, all processes, vs posix_spawn's, 1-thread caller, best tier", 1.15, "max", "x"),
    ("cpu_16", "CPU per spawn, all processes, vs posix_spawn's, 16-thread caller, best tier", 1.15, "max", "x"),
    ("zygoted_cpu_1", "zygoted's CPU per Spawn, 1-thread caller, best tier", 40.0, "max", "us"),
    ("zygoted_cpu_16", "zygoted's CPU per Spawn, 16-thread caller, best tier", 60.0, "max", "us"),
    ("footprint_daemon", "zygoted Pss", 4.0, "max", "MiB"),
    ("footprint_reference", "private memory of each reference process (largest)", 1.0, "max", "MiB"),
]


# ---- analysis -----------------------------------------------------------------------------------


def analyse_spawn(raw, tiers, skipped_tiers):
    s = raw["samples"]
    base = s["posix_spawn"]
    out = {
        "unit": "us",
        "rounds": raw["rounds"],
        "warmup": raw["warmup"],
        "spawn_to_exit_us": {k: stats(v) for k, v in s.items() if v},
    }
    spawn_ratio, build_ratio = {}, {}
    for t in tiers:
        spawn_ratio[t] = ratio(s[t], base)
        build_ratio[t] = ratio(s[t], s["libseccomp_fork"])
        build_ratio[t]["speedup"] = 1.0 / build_ratio[t]["ratio"]
    for t, why in skipped_tiers.items():
        spawn_ratio[t] = {"skipped": why}
        build_ratio[t] = {"skipped": why}
    out["spawn_ratio"] = spawn_ratio
    out["build_ratio"] = build_ratio
    measured = {t: spawn_ratio[t]["ratio"] for t in tiers}
    if measured:
        best = min(measured, key=measured.get)
        out["best_tier"] = best

    step = {
        "inherit": {"median": 0.0, "method": "none: the worker inherits the reference's filter at fork"},
        "load": dict(stats(s["filter_load"]),
                     method="seccomp(SECCOMP_SET_MODE_FILTER) of the precompiled program, timed in a child"),
        "libseccomp_build_load": dict(stats(s["libseccomp_build_load"]),
                                      method="libseccomp rule adds + seccomp_load, timed inside each "
                                             "fork+libseccomp launch"),
        "libseccomp_load_only": dict(stats(s["libseccomp_load_only"]),
                                     method="its seccomp_load part (BPF generation + load)"),
    }
    if "clone" in skipped_tiers:
        step["clone"] = {"skipped": skipped_tiers["clone"]}
    elif "clone" in tiers and "inherit" in tiers:
        # Not timed inside the worker (that is child.c's), so seen from outside: the clone
        # tier's worker does everything the inherit tier's does plus the clone call.
        diff = [a - b for a, b in zip(s["clone"], s["inherit"])]
        step["clone"] = dict(stats(diff), method="per-round difference clone - inherit spawn-to-exit")
    if "inherit" in tiers and "load" in tiers:
        diff = [a - b for a, b in zip(s["load"], s["inherit"])]
        step["load_minus_inherit_spawn"] = dict(
            stats(diff), method="per-round difference of the two forced tiers' spawn-to-exit")
    out["filter_step_us"] = step
    return out


def analyse_throughput(raw, tiers):
    levels = {}
    for level, variants in raw["samples"].items():
        base = variants["posix_spawn"]
        entry = {"tasks_per_round": raw["tasks_per_round"][level],
                 "tasks_per_s": {k: stats(v) for k, v in variants.items()}, "ratio": {}}
        for t in tiers:
            if t in variants:
                entry["ratio"][t] = ratio(variants[t], base)
        levels[level] = entry
    return {"unit": "tasks/s", "rounds": raw["rounds"], "clients": levels}


def analyse_cpu(raw):
    """CPU per spawn (zygote-bench cpu): the median of each process class per caller size and
    variant, their sum, and each tier's sum over posix_spawn's."""
    levels = {}
    for threads, variants in raw["samples"].items():
        entry = {"us": {}, "total_us": {}, "ratio": {}}
        for name, classes in variants.items():
            entry["us"][name] = {c: statistics.median(v) for c, v in classes.items() if v}
            entry["total_us"][name] = sum(entry["us"][name].values())
        base = entry["total_us"].get("posix_spawn")
        for name, total in entry["total_us"].items():
            if name != "posix_spawn" and base:
                entry["ratio"][name] = total / base
        levels[threads] = entry
    return {"unit": "us CPU per spawn", "spawns": raw["spawns"], "threads": levels}


def analyse_syscall(raw):
    out = {"unit": "ns per call", "calls_per_batch": raw["calls_per_batch"],
           "batches": raw["rounds"] * raw["batches"], "paths": raw["paths"],
           "profile_longest_path": raw["profile_longest_path"], "syscalls": {}}
    for name, filters in raw["samples"].items():
        none = quantile(filters["none"], 0.5)
        entry = {}
        for f, v in filters.items():
            st = stats(v)
            st["overhead_ns"] = st["median"] - none
            entry[f] = st
        z, lin = entry.get("zygote"), entry.get("libseccomp_linear")
        if z and lin:
            entry["zygote_vs_linear"] = z["median"] / lin["median"]
        out["syscalls"][name] = entry
    return out


def analyse_cli(passes, skipped):
    """passes: list of {command name: [seconds...]} (one per hyperfine invocation)."""
    merged = {}
    for p in passes:
        for k, v in p.items():
            merged.setdefault(k, []).extend(v)
    out = {"unit": "ms", "passes": len(passes),
           "commands": {k: stats([x * 1e3 for x in v]) for k, v in merged.items()},
           "skipped": dict(skipped), "ratios": {}}
    if "launchctl" in merged:
        for peer in ("bwrap", "crun", "runc", "true"):
            if peer not in merged:
                continue
            per_pass = [quantile(p[peer], 0.5) / quantile(p["launchctl"], 0.5)
                        for p in passes if peer in p and "launchctl" in p]
            out["ratios"][peer] = {
                "times_faster": quantile(merged[peer], 0.5) / quantile(merged["launchctl"], 0.5),
                "pass_min": min(per_pass), "pass_max": max(per_pass),
            }
    if "true" in merged:
        # overhead: what a command costs beyond running /bin/true itself
        base = quantile(merged["true"], 0.5) * 1e3
        for k, st in out["commands"].items():
            st["overhead_ms"] = st["median"] - base
        lc = out["commands"].get("launchctl")
        for peer in ("bwrap", "crun", "runc"):
            if lc is None or peer not in out["commands"] or out["commands"][peer]["overhead_ms"] <= 0:
                continue
            per_pass = []
            for p in passes:
                if peer in p and "launchctl" in p and "true" in p:
                    t = quantile(p["true"], 0.5)
                    d = quantile(p[peer], 0.5) - t
                    if d > 0:
                        per_pass.append((quantile(p["launchctl"], 0.5) - t) / d)
            out["ratios"][peer].update(
                overhead_ratio=lc["overhead_ms"] / out["commands"][peer]["overhead_ms"],
                overhead_pass_min=min(per_pass) if per_pass else None,
                overhead_pass_max=max(per_pass) if per_pass else None)
    return out


def targets(results):
    """The verdict on each target, from the analysed results."""
    measured = {}
    sp = results.get("spawn", {})
    if sp.get("best_tier"):
        measured["spawn_ratio"] = (sp["spawn_ratio"][sp["best_tier"]]["ratio"], sp["best_tier"])
    cli = results.get("cli", {}).get("ratios", {})
    if "overhead_ratio" in cli.get("bwrap", {}):
        measured["cli_bwrap"] = (cli["bwrap"]["overhead_ratio"], None)
    if "overhead_ratio" in cli.get("crun", {}):
        measured["cli_crun"] = (cli["crun"]["overhead_ratio"], None)
    tp = results.get("throughput", {}).get("clients", {}).get("16")
    if tp and tp["ratio"]:
        best = max(tp["ratio"], key=lambda t: tp["ratio"][t]["ratio"])
        measured["throughput_16"] = (tp["ratio"][best]["ratio"], best)
    for threads, lv in (results.get("cpu") or {}).get("threads", {}).items():
        if lv["ratio"]:
            best = min(lv["ratio"], key=lv["ratio"].get)
            measured[f"cpu_{threads}"] = (lv["ratio"][best], best)
            if "zygoted" in lv["us"].get(best, {}):
                measured[f"zygoted_cpu_{threads}"] = (lv["us"][best]["zygoted"], best)
    fp = results.get("footprint", {})
    daemons = fp.get("daemons") or {}
    if daemons:
        worst = max(daemons, key=lambda k: daemons[k]["pss_kib"])
        measured["footprint_daemon"] = (daemons[worst]["pss_kib"] / 1024.0, worst)
    refs = fp.get("references") or {}
    if refs:
        worst = max(refs, key=lambda k: refs[k]["private_kib"])
        measured["footprint_reference"] = (refs[worst]["private_kib"] / 1024.0, worst)

    out = []
    for key, desc, bound, kind, unit in TARGETS:
        t = {"key": key, "description": desc, "target": bound, "kind": kind, "unit": unit}
        if key in measured:
            value, which = measured[key]
            met, miss = verdict(value, bound, kind)
            t.update(measured=value, met=met, miss=miss)
            if which:
                t["which"] = which
        else:
            t["skipped"] = skip_reason(key, results)
        out.append(t)
    return out


def skip_reason(key, results):
    cli_skips = results.get("cli", {}).get("skipped", {})
    if key == "cli_bwrap":
        return cli_skips.get("bwrap", "not measured")
    if key == "cli_crun":
        return cli_skips.get("crun", "not measured")
    return results.get("skipped", {}).get(key, "not measured")


def missing(results):
    """What a finished run lacks: every target's figure must be a number or a stated skip."""
    problems = []

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    sp = results.get("spawn")
    if not sp:
        problems.append("spawn: not measured")
    else:
        for t in ("clone", "inherit", "load"):
            for key in ("spawn_ratio", "build_ratio"):
                r = sp.get(key, {}).get(t)
                if not r or not (number(r.get("ratio")) or r.get("skipped")):
                    problems.append(f"{key}.{t}: neither a number nor a skip")
        for step in ("inherit", "load", "libseccomp_build_load"):
            if not number(sp.get("filter_step_us", {}).get(step, {}).get("median")):
                problems.append(f"filter_step_us.{step}: missing")
    cli = results.get("cli")
    if not cli:
        if not results.get("skipped", {}).get("cli"):
            problems.append("cli: neither measured nor skipped")
    else:
        for c in ("true", "launchctl", "bwrap", "crun", "runc"):
            if c not in cli["commands"] and not cli["skipped"].get(c):
                problems.append(f"cli.{c}: neither measured nor skipped")
    tp = results.get("throughput", {}).get("clients", {})
    for level in ("1", "4", "16"):
        if not tp.get(level, {}).get("ratio"):
            problems.append(f"throughput.{level}: missing")
    sc = results.get("syscall_overhead", {}).get("syscalls", {})
    for name in ("personality", "getpid"):
        for f in ("none", "zygote", "libseccomp_linear"):
            if not number(sc.get(name, {}).get(f, {}).get("median")):
                problems.append(f"syscall_overhead.{name}.{f}: missing")
    paths = results.get("syscall_overhead", {}).get("paths", {})
    if not number(paths.get("zygote", {}).get("longest")):
        problems.append("syscall_overhead: longest BPF path missing")
    fp = results.get("footprint", {})
    if not fp.get("daemons") or not fp.get("references"):
        problems.append("footprint: daemon or reference processes missing")
    for t in results.get("targets", []):
        if not number(t.get("measured")) and not t.get("skipped"):
            problems.append(f"target {t['key']}: neither measured nor skipped")
    return problems


# ---- rendering ------------------------------------------------------------------------------------


def fmt(v, digits=3):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits - 1}f}" if abs(v) >= 1 else f"{v:.{digits}f}"


def fmt_stats(st, scale=1.0):
    return f"{fmt(st['median'] * scale)} [{fmt(st['p10'] * scale)}–{fmt(st['p90'] * scale)}]"


def fmt_ratio(r):
    if "skipped" in r:
        return "skipped: " + r["skipped"]
    s = f"{r['ratio']:.3f}"
    if "p10" in r:
        s += f" [{r['p10']:.3f}–{r['p90']:.3f}]"
    return s


def target_line(t):
    bound = f"{'≤' if t['kind'] == 'max' else '≥'} {t['target']:g}{' ' + t['unit'] if t['unit'] != 'x' else ''}"
    if "skipped" in t:
        return bound, "skipped: " + t["skipped"]
    value = f"{t['measured']:.2f}{' ' + t['unit'] if t['unit'] != 'x' else ''}"
    if t.get("which"):
        value += f" ({t['which']})"
    if t["met"]:
        return bound, f"{value}: met"
    return bound, f"{value}: **missed by {t['miss'] * 100:.0f} %**"


def machine_line(m):
    load = ""
    if m.get("loadavg_start") is not None:
        load = f", load average {m['loadavg_start']:.2f} at start and {m.get('loadavg_end', 0):.2f} at end"
    return (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB, "
            f"Linux {m.get('kernel', '?')}, {m.get('os', '?')}"
            f"{' (' + m['virtualization'] + ')' if m.get('virtualization') not in (None, 'none') else ''}{load}; "
            f"commit {m.get('commit', '?')}, {m.get('date', '?')}")


def summary_markdown(results, plot_path=None):
    """The short form for the README: machine, targets, plot."""
    lines = []
    m = results["machine"]
    quick = " (quick run: few samples)" if results["config"].get("quick") else ""
    lines.append(f"Latest run{quick}: {machine_line(m)}. "
                 "Medians with [p10–p90]; ratios from one run. "
                 "Method and definitions: [docs/BENCHMARKS.md](docs/BENCHMARKS.md).")
    if m.get("loadavg_start") is not None and m.get("cores") and \
            max(m["loadavg_start"], m.get("loadavg_end", 0)) > m["cores"]:
        lines.append("")
        lines.append("Other work shared the machine during this run (load average above its core count): "
                     "absolute times are inflated; the ratios compare samples taken side by side.")
    lines.append("")
    lines.append("| target | bound | measured |")
    lines.append("|---|---|---|")
    for t in results["targets"]:
        bound, value = target_line(t)
        lines.append(f"| {t['description']} | {bound} | {value} |")
    tables = headline_tables(results)
    if tables:
        lines.append("")
        lines.extend(tables)
    if results.get("hops"):
        lines.append("")
        lines.append("Where each microsecond of a spawn goes (medians, µs; "
                     "[method](docs/BENCHMARKS.md#where-the-time-goes-per-hop)):")
        lines.append("")
        lines.append(hops_markdown(results["hops"]).rstrip("\n"))
    missed = [t for t in results["targets"] if "met" in t and not t["met"]]
    if missed:
        lines.append("")
        lines.append("Missed targets: " + "; ".join(
            f"{t['description']} is {t['measured']:.2f}{' ' + t['unit'] if t['unit'] != 'x' else ''} "
            f"against {'≤' if t['kind'] == 'max' else '≥'} {t['target']:g}, "
            f"{t['miss'] * 100:.0f} % {'over' if t['kind'] == 'max' else 'short'}"
            for t in missed) + ".")
    if plot_path:
        lines.append("")
        lines.append(f"![benchmark plot]({plot_path})")
    return "\n".join(lines) + "\n"


def headline_tables(results):
    lines = []
    sp = results.get("spawn")
    if sp:
        lines.append("| spawn-to-exit of /bin/true | µs | ratio to posix_spawn | ratio to fork+libseccomp |")
        lines.append("|---|---|---|---|")
        st = sp["spawn_to_exit_us"]
        for k, label in (("posix_spawn", "posix_spawn, no sandbox"),
                         ("libseccomp_fork", "fork + libseccomp build/load + exec")):
            if k in st:
                lines.append(f"| {label} | {fmt_stats(st[k])} | | |")
        for t, r in sp["spawn_ratio"].items():
            if "skipped" in r:
                lines.append(f"| zygote, tier `{t}` | skipped: {r['skipped']} | | |")
                continue
            lines.append(f"| zygote, tier `{t}` | {fmt_stats(st[t])} | {fmt_ratio(r)} | "
                         f"{fmt_ratio(sp['build_ratio'][t])} |")
    return lines


def full_markdown(results, plot_path=None):
    """Everything: the summary plus each benchmark's table."""
    lines = [summary_markdown(results, plot_path)]
    sp = results.get("spawn")
    if sp:
        st = sp["spawn_to_exit_us"]
        lines.append("### Where the time goes (µs)\n")
        lines.append("To exec'd: until posix_spawn returns (glibc waits for the child's exec) or until "
                     "Spawn's first reply (the daemon sends it at EOF on the worker's status pipe, i.e. "
                     "after its exec). The rest is the program's run, its exit and the exit reaching "
                     "the caller.\n")
        lines.append("| variant | to exec'd | to exit |")
        lines.append("|---|---|---|")
        for k in [k for k in st if k.endswith("_to_exec")]:
            base = k[: -len("_to_exec")]
            if base in st:
                lines.append(f"| {base} | {fmt_stats(st[k])} | {fmt_stats(st[base])} |")
        lines.append("")
        fs = sp["filter_step_us"]
        lines.append("### Filter step (µs)\n")
        lines.append("| step | µs | how |")
        lines.append("|---|---|---|")
        for k, v in fs.items():
            if "skipped" in v:
                lines.append(f"| {k} | skipped: {v['skipped']} | |")
            elif "p10" in v:
                lines.append(f"| {k} | {fmt_stats(v)} | {v['method']} |")
            else:
                lines.append(f"| {k} | {fmt(v['median'])} | {v['method']} |")
        lines.append("")
    if results.get("hops") or results.get("skipped", {}).get("hops"):
        lines.append("### Per hop (µs, perf tracepoints)\n")
        if results.get("hops"):
            lines.append(hops_markdown(results["hops"]))
        else:
            lines.append(f"Skipped: {results['skipped']['hops']}\n")
    cli = results.get("cli")
    if cli:
        lines.append("### Command line, end to end (hyperfine, ms)\n")
        lines.append("| command | ms | overhead over /bin/true, ms | launchctl's overhead / this one's "
                     "(range over passes) | launchctl is N× faster |")
        lines.append("|---|---|---|---|---|")
        for k, v in cli["commands"].items():
            r = cli["ratios"].get(k)
            rr = f"{r['times_faster']:.2f} ({r['pass_min']:.2f}–{r['pass_max']:.2f})" if r else ""
            orr = ""
            if r and r.get("overhead_ratio") is not None:
                orr = f"{r['overhead_ratio']:.3f}"
                if r.get("overhead_pass_min") is not None:
                    orr += f" ({r['overhead_pass_min']:.3f}–{r['overhead_pass_max']:.3f})"
            oh = fmt(v["overhead_ms"]) if "overhead_ms" in v else ""
            lines.append(f"| `{cli['command_lines'].get(k, k)}` | {fmt_stats(v)} | {oh} | {orr} | {rr} |")
        for k, why in cli["skipped"].items():
            lines.append(f"| {k} | skipped: {why} | | | |")
        lines.append("")
    tp = results.get("throughput")
    if tp:
        lines.append("### Throughput (tasks/s)\n")
        names = []
        for lv in tp["clients"].values():
            for k in lv["tasks_per_s"]:
                if k not in names:
                    names.append(k)
        lines.append("| clients | " + " | ".join(names) + " | best tier / posix_spawn |")
        lines.append("|---" * (len(names) + 2) + "|")
        for level, lv in tp["clients"].items():
            cells = [fmt_stats(lv["tasks_per_s"][k]) if k in lv["tasks_per_s"] else "-" for k in names]
            best = max(lv["ratio"], key=lambda t: lv["ratio"][t]["ratio"]) if lv["ratio"] else None
            rr = f"{fmt_ratio(lv['ratio'][best])} ({best})" if best else "-"
            lines.append(f"| {level} | " + " | ".join(cells) + f" | {rr} |")
        lines.append("")
    cpu = results.get("cpu")
    if cpu:
        lines.append("### CPU per spawn (us, kernel accounting)\n")
        lines.append("| caller threads | variant | per class | all | vs posix_spawn |")
        lines.append("|---|---|---|---|---|")
        for threads, lv in cpu["threads"].items():
            for name, classes in lv["us"].items():
                parts = ", ".join(f"{c} {fmt(v)}" for c, v in classes.items())
                rr = fmt(lv["ratio"][name]) + "x" if name in lv["ratio"] else ""
                lines.append(f"| {threads} | {name} | {parts} | {fmt(lv['total_us'][name])} | {rr} |")
        lines.append("")
    sc = results.get("syscall_overhead")
    if sc:
        lines.append("### Syscall overhead (ns per call)\n")
        filters = list(next(iter(sc["syscalls"].values())).keys())
        filters = [f for f in filters if f != "zygote_vs_linear"]
        lines.append("| syscall | " + " | ".join(filters) + " |")
        lines.append("|---" * (len(filters) + 1) + "|")
        for name, entry in sc["syscalls"].items():
            lines.append(f"| {name} | " + " | ".join(
                fmt_stats(entry[f]) + (f" (+{fmt(entry[f]['overhead_ns'])})" if f != "none" else "")
                for f in filters) + " |")
        lines.append("")
        lines.append("BPF instructions executed: by the measured call, and at most for any arguments of "
                     "that syscall; longest over syscall numbers 0-1023 (which one).\n")
        lines.append("| BPF program | instructions | personality(0xffffffff) (any args) | getpid (any args) "
                     "| longest path (nr) |")
        lines.append("|---|---|---|---|---|")
        for f, p in sc["paths"].items():
            lines.append(f"| {f} | {p.get('bpf_instructions', '-')} | {p.get('personality', '-')} "
                         f"({p.get('personality_longest', '-')}) | {p.get('getpid', '-')} "
                         f"({p.get('getpid_longest', '-')}) | {p.get('longest', '-')} ({p.get('longest_nr', '-')}) |")
        lines.append("")
    fp = results.get("footprint")
    if fp and fp.get("daemons"):
        lines.append("### Footprint (KiB, /proc/PID/smaps_rollup)\n")
        if fp.get("profiles"):
            lines.append("Bundled profiles loaded: " + ", ".join(fp["profiles"]) + ".\n")
        lines.append("| process | Rss | Pss | private |")
        lines.append("|---|---|---|---|")
        for name, d in fp["daemons"].items():
            lines.append(f"| zygoted {name} | {d['rss_kib']} | {d['pss_kib']} | {d['private_kib']} |")
        for name, r in fp.get("references", {}).items():
            lines.append(f"| zygote-ref {name} | {r['rss_kib']} | {r['pss_kib']} | {r['private_kib']} |")
        lines.append("")
    if results.get("notes"):
        lines.append("### Notes\n")
        lines.extend(f"- {n}" for n in results["notes"])
        lines.append("")
    return "\n".join(lines)


def replace_readme_region(text, body):
    """The README with the region between the bench markers replaced by body. Raises ValueError
    when the markers are missing, repeated or out of order: never guess where to write."""
    if text.count(README_BEGIN) != 1 or text.count(README_END) != 1:
        raise ValueError("README must hold each bench marker exactly once")
    b = text.index(README_BEGIN)
    e = text.index(README_END)
    if e < b:
        raise ValueError("bench markers out of order")
    return text[: b + len(README_BEGIN)] + "\n" + body.rstrip("\n") + "\n" + text[e:]


# ---- plot ------------------------------------------------------------------------------------------


def plot_data(results):
    """{file name: text} of the gnuplot data files."""
    files = {}
    sp = results.get("spawn")
    if sp:
        rows = []
        for k, st in sp["spawn_to_exit_us"].items():
            if k == "libseccomp_load_only" or k.endswith("_to_exec"):
                continue
            rows.append(f'"{k}" {st["median"]:.3f} {st["p10"]:.3f} {st["p90"]:.3f}')
        files["spawn.dat"] = "\n".join(rows) + "\n"
    cli = results.get("cli")
    if cli and cli["commands"]:
        files["cli.dat"] = "\n".join(
            f'"{k}" {st["median"]:.3f} {st["p10"]:.3f} {st["p90"]:.3f}' for k, st in cli["commands"].items()) + "\n"
    tp = results.get("throughput")
    if tp:
        names = list(next(iter(tp["clients"].values()))["tasks_per_s"].keys())
        rows = ["# clients " + " ".join(names)]
        for level, lv in tp["clients"].items():
            rows.append(level + " " + " ".join(
                f'{lv["tasks_per_s"][n]["median"]:.1f} {lv["tasks_per_s"][n]["p10"]:.1f} {lv["tasks_per_s"][n]["p90"]:.1f}'
                for n in names))
        files["throughput.dat"] = "\n".join(rows) + "\n"
        files["throughput.names"] = "\n".join(names) + "\n"
    sc = results.get("syscall_overhead")
    if sc:
        rows = []
        for name, entry in sc["syscalls"].items():
            for f, st in entry.items():
                if isinstance(st, dict):
                    rows.append(f'"{name}\\n{f}" {st["median"]:.2f} {st["p10"]:.2f} {st["p90"]:.2f}')
        files["syscall.dat"] = "\n".join(rows) + "\n"
    return files


def gnuplot_script(results, png):
    tp_names = []
    tp = results.get("throughput")
    if tp:
        tp_names = list(next(iter(tp["clients"].values()))["tasks_per_s"].keys())
    m = results["machine"]
    title = f"zygote benchmarks: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, Linux {m.get('kernel', '?')}"
    s = [
        "set terminal pngcairo noenhanced size 1400,1000 font 'sans,10'",
        f"set output '{png}'",
        "set multiplot layout 2,2 title '" + title.replace("'", "") + "'",
        "set style fill solid 0.6 border -1",
        "set boxwidth 0.6",
        "set grid ytics",
        "set xtics rotate by -30",
        "set key off",
    ]
    if "spawn" in results:
        s += ["set title 'spawn-to-exit of /bin/true (median, p10-p90), us'", "set yrange [0:*]",
              "plot 'spawn.dat' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc black pt 0"]
    else:
        s += ["set multiplot next"]
    if "cli" in results and results["cli"]["commands"]:
        s += ["set title 'command line end to end (hyperfine), ms, log scale'", "set logscale y",
              "set yrange [*:*]",
              "plot 'cli.dat' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc black pt 0",
              "unset logscale y"]
    else:
        s += ["set multiplot next"]
    if tp_names:
        s += ["set title 'throughput, tasks/s (median, p10-p90)'", "set key top left", "set xtics norotate",
              "set logscale x 2", "set xrange [0.8:20]", "set xlabel 'concurrent clients'",
              "set yrange [0:*]"]
        parts = []
        for i, n in enumerate(tp_names):
            c = 2 + 3 * i
            parts.append(f"'throughput.dat' using 1:{c}:{c + 1}:{c + 2} with yerrorlines title '{n}'")
        s += ["plot " + ", ".join(parts), "unset logscale x", "set xrange [*:*]", "unset xlabel", "set key off",
              "set xtics rotate by -30"]
    else:
        s += ["set multiplot next"]
    if "syscall_overhead" in results:
        # Preempted batches make p90 many times the median on a loaded machine: clip the axis so
        # that the medians stay readable, and say so.
        sts = [st for e in results["syscall_overhead"]["syscalls"].values() for st in e.values()
               if isinstance(st, dict)]
        top = 1.5 * max(st["median"] for st in sts)
        clipped = " (p90 clipped)" if any(st["p90"] > top for st in sts) else ""
        s += [f"set title 'ns per syscall under each filter (median, p10-p90){clipped}'",
              f"set yrange [0:{top:.0f}]",
              "plot 'syscall.dat' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc black pt 0"]
    s += ["unset multiplot", ""]
    return "\n".join(s)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)
