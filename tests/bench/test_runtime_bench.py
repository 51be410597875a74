"""Tests of runtime-bench.py's CPU per exec: the idle baseline subtracted, the division by the
execs, the per-round ratios, and the exec probe's target verdict in the table.

Run: /usr/bin/python3 -m pytest -q tests/bench/test_runtime_bench.py (ctest -R bench-report).
"""

import argparse
import importlib.util
import os
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("runtime_bench", os.path.join(HERE, "runtime-bench.py"))
rb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rb)

IDLE_NS_PER_S = 1e9  # one whole CPU busy in the background: an exec's figure must not carry it
COST_MS = {rb.ZD: 0.5, "runc": 2.0}


class FakeAccount:
    """usage(): a background that burns IDLE_NS_PER_S, plus each exec's cost when its argv is made."""

    def __init__(self):
        self.t0, self.spent, self.client = time.monotonic(), 0, 0

    def usage(self):
        return {"daemons": int((time.monotonic() - self.t0) * IDLE_NS_PER_S) + self.spent, "clients": self.client}

    def into_clients(self):
        pass


def test_exec_cpu_subtracts_the_idle_rate_and_divides_by_the_execs():
    acct = FakeAccount()

    def argv(name, tag):
        acct.spent += int(COST_MS[name] * 1e6)
        acct.client += 1000000  # the ctr client's own 1 ms, the same for every runtime
        return ["true"]

    args = argparse.Namespace(cpu_rounds=3, cpu_execs=4, cpu_idle=0.05)
    out = rb.exec_cpu([rb.ZD, "runc"], argv, acct, args)
    assert out["execs"] == 4
    assert out["idle_us_per_s"]["median"] == pytest.approx(IDLE_NS_PER_S / 1000, rel=0.05)
    # without the subtraction each figure would carry a few ms of the background's CPU
    assert out[rb.ZD]["median"] == pytest.approx(1.5, abs=0.1)
    assert out["runc"]["median"] == pytest.approx(3.0, abs=0.1)
    assert out[rb.ZD]["ratio_to_runc"]["median"] == pytest.approx(0.5, abs=0.06)
    assert out[rb.ZD]["n"] == 3
    assert out["runc"]["parts"]["clients"] == pytest.approx(1.0, abs=0.01)  # each part's own idle rate
    assert out["runc"]["parts"]["daemons"] == pytest.approx(2.0, abs=0.1)
    assert out[rb.ZD]["server_ratio_to_runc"]["median"] == pytest.approx(0.25, abs=0.06)  # the client left out
    assert "ratio_to_zygoted" not in out["runc"]  # ratios are zygote's over the others'


def test_exec_cpu_raises_on_a_failed_exec():
    acct = FakeAccount()
    args = argparse.Namespace(cpu_rounds=1, cpu_execs=2, cpu_idle=0.0)
    with pytest.raises(RuntimeError, match="ctr task exec failed"):
        rb.exec_cpu(["runc"], lambda n, tag: ["false"], acct, args)


def row(ratio):
    q = lambda m: {"median": m, "p10": m, "p90": m, "n": 7}  # noqa: E731
    d = q(1.0)
    d["parts"] = {"clients": 0.25, "daemons": 0.5, "zygoted": 0.25}
    d["ratio_to_runc"] = q(ratio)
    return {"exec_cpu": {"execs": 20, "idle_us_per_s": q(100.0), rb.ZD: d, "runc": q(1.0 / ratio)}}


def test_the_table_states_the_exec_probe_target_met_or_missed():
    text = "\n".join(rb.cpu_table({"met view": row(0.25), "missed view": row(0.6)}, {"cpu_rounds": 7}))
    assert "met view: an exec probe's CPU through zygoted's shim ≤ 0.3× runc's: 0.25, met." in text
    assert "missed view: an exec probe's CPU through zygoted's shim ≤ 0.3× runc's: 0.60, **missed by 100 %**" in text
    assert "| met view | 100.0 [100.0–100.0] | 1.0 [1.0–1.0] |" in text
    assert "| met view | zygoted | 0.2 | 0.5 | 0.2 | 0.0 | 1.0 |" in text
    assert rb.cpu_table({"v": {}}, {}) == []  # no CPU measured (no containerd): no table
