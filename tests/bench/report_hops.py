"""The per-hop breakdown of the benchmark report (report.py): perf script output joined with
zygote-bench hops' stamps into one chain of hops per spawn, their statistics and their table.
"""
import re

from report_stats import stats


# ---- per-hop breakdown ------------------------------------------------------------------------------
#
# zygote-bench hops stamps each spawn in the client (CLOCK_MONOTONIC: send, first reply, exit
# known) and names the worker's pid; `perf record -k mono` (the same clock) records the
# scheduler's fork, exec and exit tracepoints and every syscall's entry and exit of the bench
# client, the daemons, their references and (inherited) every worker. hop_chain() joins
# the two into one chain of hops per spawn: each hop ends where the next begins, so a spawn's
# hops add up to its spawn-to-exit exactly.

# x86_64 syscall numbers the chain is anchored on
NR = {"read": 0, "write": 1, "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47, "clone": 56,
      "fork": 57, "vfork": 58, "execve": 59, "wait4": 61, "waitid": 247, "execveat": 322, "clone3": 435}
FORKS = {NR["clone"], NR["fork"], NR["vfork"], NR["clone3"]}
EXECS = {NR["execve"], NR["execveat"]}
RECVS = {NR["recvmsg"], NR["recvfrom"], NR["read"]}
SENDS = {NR["sendmsg"], NR["sendto"], NR["write"]}

HOPS = [
    # key, label, what
    ("client_to_daemon", "client → daemon", "send until the daemon's read of the request returns "
     "(wake-up, read)"),
    ("request", "parse, authorize, plan", "until the daemon sends the request to the reference or "
     "forks the worker itself (posix_spawn: glibc's preparation)"),
    ("to_reference", "daemon → reference", "until the reference's clone starts (its wake-up, read, "
     "plan unpack)"),
    ("fork", "fork", "clone's entry until the new task exists (sched_process_fork)"),
    ("first_run", "worker's first run", "until the worker's first syscall (wake-up, copy-on-write "
     "faults of returning from clone)"),
    ("pre_gate", "worker steps before the gate", "every step child.c makes before the gate "
     "(all of them when there is no gate)"),
    ("gate", "gate wait", "the worker's read of its gate pipe: until the daemon has the pid and "
     "opens it"),
    ("post_gate", "worker steps after the gate", "from the gate to execve's entry"),
    ("execve", "execve", "execve's entry until the new program runs (sched_process_exec)"),
    ("run", "run of /bin/true", "from exec to the exit (sched_process_exit)"),
    ("reap", "exit → reaped", "until the daemon's waitid returns (posix_spawn: waitpid)"),
    ("reply", "reply built and sent", "until the daemon sends the exit reply"),
    ("to_client", "daemon → client", "until the client has read the exit reply"),
]
HOP_KEYS = [h[0] for h in HOPS]


_PERF_LINE = re.compile(r"^\s*(?P<tid>\d+)\s+(?P<sec>\d+)\.(?P<nsec>\d{9}):\s+(?P<ev>[\w:]+):\s*(?P<rest>.*)$")
_SYS_ENTER = re.compile(r"NR (\d+) \(")
_SYS_EXIT = re.compile(r"NR (\d+) = (-?\d+)")
_KV = re.compile(r"(\w+)=(\S+)")


def parse_perf_script(lines):
    """Events from `perf script --ns -F tid,time,event,trace`: dicts with tid, t (ns), ev and
    either nr (syscalls; ret on exits) or the tracepoint's key=value fields. Other lines are
    ignored."""
    out = []
    for line in lines:
        m = _PERF_LINE.match(line)
        if not m:
            continue
        e = {"tid": int(m["tid"]), "t": int(m["sec"]) * 1_000_000_000 + int(m["nsec"]), "ev": m["ev"]}
        rest = m["rest"]
        if e["ev"] == "raw_syscalls:sys_enter":
            s = _SYS_ENTER.search(rest)
            if not s:
                continue
            e["nr"] = int(s.group(1))
        elif e["ev"] == "raw_syscalls:sys_exit":
            s = _SYS_EXIT.search(rest)
            if not s:
                continue
            e["nr"], e["ret"] = int(s.group(1)), int(s.group(2))
        else:
            e.update({k: v for k, v in _KV.findall(rest)})
        out.append(e)
    out.sort(key=lambda e: e["t"])
    return out


def _index_events(events):
    by_tid, forks, execs, exits = {}, {}, {}, {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
        if e["ev"] == "sched:sched_process_fork" and "child_pid" in e:
            forks[int(e["child_pid"])] = e
        elif e["ev"] == "sched:sched_process_exec":
            execs.setdefault(int(e.get("pid", e["tid"])), e)
        elif e["ev"] == "sched:sched_process_exit":
            exits.setdefault(int(e.get("pid", e["tid"])), e)
    return by_tid, forks, execs, exits


def _first(evs, after, pred, before=None):
    for e in evs:
        if e["t"] < after:
            continue
        if before is not None and e["t"] > before:
            return None
        if pred(e):
            return e
    return None


def _last(evs, after, before, pred):
    found = None
    for e in evs:
        if e["t"] < after:
            continue
        if e["t"] > before:
            break
        if pred(e):
            found = e
    return found


def _enter(nrs):
    return lambda e: e["ev"] == "raw_syscalls:sys_enter" and e["nr"] in nrs


def _exit(nrs, positive=False):
    return lambda e: e["ev"] == "raw_syscalls:sys_exit" and e["nr"] in nrs and (not positive or e["ret"] > 0)


def hop_chain(sample, idx, daemon_tid=None, client_tid=None):
    """One spawn's hops in ns ({key: ns}), or None when an anchor is missing. sample: a
    zygote-bench hops sample (send_ns, exit_ns, pid); daemon_tid: the daemon's thread (None for
    posix_spawn, whose parent is client_tid)."""
    by_tid, forks, execs, exits = idx
    pid = sample["pid"]
    S, X = sample["send_ns"], sample["exit_ns"]
    fork_ev, exec_ev, exit_ev = forks.get(pid), execs.get(pid), exits.get(pid)
    if not fork_ev or not exec_ev or not exit_ev or not (S <= fork_ev["t"] <= exec_ev["t"] <= exit_ev["t"] <= X):
        return None
    parent = fork_ev["tid"]
    pevs = by_tid.get(parent, [])
    wevs = [e for e in by_tid.get(pid, []) if e["t"] <= exec_ev["t"]]
    t = {"send": S}
    if daemon_tid is None:
        t["recv"] = S
        clone_in = _last(pevs, S, fork_ev["t"], _enter(FORKS))
        if not clone_in:
            return None
        t["req"] = t["ref"] = clone_in["t"]
        reaper = client_tid
    else:
        devs = by_tid.get(daemon_tid, [])
        recv = _first(devs, S, _exit(RECVS, True), fork_ev["t"])
        if not recv:
            return None
        t["recv"] = recv["t"]
        clone_in = _last(pevs, recv["t"], fork_ev["t"], _enter(FORKS))
        if not clone_in:
            return None
        if parent == daemon_tid:
            t["req"] = t["ref"] = clone_in["t"]
        else:
            req = _last(devs, recv["t"], clone_in["t"], _enter(SENDS))
            if not req:
                return None
            t["req"], t["ref"] = req["t"], clone_in["t"]
        reaper = daemon_tid
    t["fork"] = fork_ev["t"]
    first = _first(wevs, fork_ev["t"], lambda e: e["ev"] == "raw_syscalls:sys_enter")
    execve_in = _last(wevs, fork_ev["t"], exec_ev["t"], _enter(EXECS))
    if not first or not execve_in:
        return None
    t["first"] = first["t"]
    gate_in = _last(wevs, first["t"], execve_in["t"], _enter({NR["read"]}))
    gate_out = gate_in and _first(wevs, gate_in["t"], _exit({NR["read"]}), execve_in["t"])
    if gate_in and gate_out:
        t["gate_in"], t["gate_out"] = gate_in["t"], gate_out["t"]
    else:
        t["gate_in"] = t["gate_out"] = execve_in["t"]
    t["execve"] = execve_in["t"]
    t["exec"] = exec_ev["t"]
    t["exit"] = exit_ev["t"]
    reap = _first(by_tid.get(reaper, []), exit_ev["t"], _exit({NR["waitid"], NR["wait4"]}), X)
    if not reap:
        return None
    t["reap"] = reap["t"]
    if daemon_tid is None:
        t["reply"] = t["reap"]
    else:
        # the last send before the client has it: the exit reply (the spawn reply may come later
        # than the reap when the worker's exec and exit are seen in one loop iteration)
        reply = _last(by_tid.get(daemon_tid, []), reap["t"], X, _enter(SENDS))
        if not reply:
            return None
        t["reply"] = reply["t"]
    t["end"] = X
    t["syscalls"] = sum(1 for e in wevs if e["ev"] == "raw_syscalls:sys_enter" and e["t"] < execve_in["t"])
    marks = ["send", "recv", "req", "ref", "fork", "first", "gate_in", "gate_out", "execve", "exec",
             "exit", "reap", "reply", "end"]
    if any(t[a] > t[b] for a, b in zip(marks, marks[1:])):
        return None
    chain = {k: t[b] - t[a] for k, a, b in zip(HOP_KEYS, marks, marks[1:])}
    chain["worker_syscalls"] = t["syscalls"]
    return chain


def analyse_hops(raw, events, daemon_tids):
    """raw: zygote-bench hops output; events: parse_perf_script(); daemon_tids: {tier: the
    daemon's pid}. Per variant: each hop's median and p10/p90 in µs, the median spawn-to-exit,
    how many spawns had every anchor; deltas of each tier's hop medians over posix_spawn's."""
    idx = _index_events(events)
    out = {"unit": "us", "rounds": raw.get("rounds"), "variants": {}, "hops": [
        {"key": k, "label": label, "what": what} for k, label, what in HOPS]}
    for name, samples in raw["samples"].items():
        chains = []
        for s in samples:
            c = hop_chain(s, idx, daemon_tids.get(name), raw.get("pid"))
            if c:
                chains.append(c)
        v = {"n": len(chains), "samples": len(samples)}
        if chains:
            v["hops"] = {k: stats([c[k] / 1000.0 for c in chains]) for k in HOP_KEYS}
            v["total"] = stats([sum(c[k] for k in HOP_KEYS) / 1000.0 for c in chains])
            v["worker_syscalls"] = stats([c["worker_syscalls"] for c in chains])
            v["sum_of_medians"] = sum(v["hops"][k]["median"] for k in HOP_KEYS)
        out["variants"][name] = v
    base = out["variants"].get("posix_spawn", {}).get("hops")
    if base:
        for name, v in out["variants"].items():
            if name != "posix_spawn" and "hops" in v:
                v["delta"] = {k: v["hops"][k]["median"] - base[k]["median"] for k in HOP_KEYS}
    return out


def hops_markdown(h):
    """The breakdown as one table: per hop, each variant's median µs (p10–p90 in results.json),
    and each tier's difference to posix_spawn."""
    names = [n for n, v in h["variants"].items() if "hops" in v]
    if not names:
        return "No spawn had every anchor event: no breakdown.\n"
    tiers = [n for n in names if n != "posix_spawn"]
    lines = ["| hop | " + " | ".join(names) + "".join(f" | {t} − posix_spawn" for t in tiers if "delta" in
                                                       h["variants"][t]) + " |"]
    ncols = len(names) + sum(1 for t in tiers if "delta" in h["variants"][t])
    lines.append("|---" * (ncols + 1) + "|")
    for k, label, _ in HOPS:
        cells = [f'{h["variants"][n]["hops"][k]["median"]:.0f}' for n in names]
        cells += [f"{h['variants'][t]['delta'][k]:+.0f}" for t in tiers if "delta" in h["variants"][t]]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [f'{h["variants"][n]["sum_of_medians"]:.0f}' for n in names]
    base = h["variants"].get("posix_spawn", {}).get("sum_of_medians")
    cells += [f"{h['variants'][t]['sum_of_medians'] - base:+.0f}" for t in tiers if "delta" in h["variants"][t]]
    lines.append("| **sum of the hop medians** | " + " | ".join(cells) + " |")
    cells = [f'{h["variants"][n]["total"]["median"]:.0f}' for n in names] + ["" for t in tiers if "delta" in h["variants"][t]]
    lines.append("| spawn-to-exit under perf (median) | " + " | ".join(cells) + " |")
    cells = [f'{h["variants"][n]["worker_syscalls"]["median"]:.0f}' for n in names]
    cells += [f"{h['variants'][t]['worker_syscalls']['median'] - h['variants']['posix_spawn']['worker_syscalls']['median']:+.0f}"
              for t in tiers if "delta" in h["variants"][t]]
    lines.append("| the worker's syscalls before execve (count) | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Medians in µs over " + ", ".join(f"{n} {h['variants'][n]['n']}/{h['variants'][n]['samples']}"
                                                     for n in names)
                 + " spawns with every anchor event; perf's tracing of every syscall makes each one "
                 "slower, so the totals exceed the untraced figures above. Hops: "
                 + "; ".join(f"*{label}*: {what}" for _, label, what in HOPS) + ".")
    return "\n".join(lines) + "\n"
