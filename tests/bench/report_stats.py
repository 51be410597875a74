"""The statistics of the benchmark report (report.py): quantiles, medians with their spread,
paired ratios, target verdicts.
"""
import math


def quantile(values, q):
    """Linear interpolation between closest ranks (numpy's default), q in [0, 1]."""
    if not values:
        raise ValueError("no samples")
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def stats(values):
    """{n, median, p10, p90} of a list of numbers."""
    return {
        "n": len(values),
        "median": quantile(values, 0.5),
        "p10": quantile(values, 0.1),
        "p90": quantile(values, 0.9),
    }


def ratio(num, den):
    """Ratio of the medians, with the spread of the per-round ratios when the samples are paired
    (same length: sample i of each was taken in round i, next to each other)."""
    r = {"ratio": quantile(num, 0.5) / quantile(den, 0.5)}
    if len(num) == len(den) and num:
        per_round = [a / b for a, b in zip(num, den) if b > 0]
        r["p10"] = quantile(per_round, 0.1)
        r["p90"] = quantile(per_round, 0.9)
        r["paired"] = True
    return r


def verdict(value, bound, kind):
    """(met, miss) where miss says by how much a missed target is missed, as a fraction of the
    bound (0.25 = 25 % short of a "min" target or over a "max" one)."""
    if kind == "max":
        met = value <= bound
        miss = 0.0 if met else value / bound - 1.0
    else:
        met = value >= bound
        miss = 0.0 if met else 1.0 - value / bound
    return met, miss
