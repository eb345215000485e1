"""Is a difference larger than the noise? A percentile bootstrap, over runs and operations.

Each side is one or more captures of the same setting (repeat runs). A replicate first
resamples a side's runs with replacement, then the operations of the runs drawn; the
statistic is recomputed on them, and the 95% interval of (after - before) over the
replicates is reported. The difference is flagged when that interval excludes 0. With one
run per side only the sampling noise of each capture is in the interval; the variation
from run to run (often larger: one dbench run's median fsync is twice another's) enters
only when repeat runs are given. Operations are resampled exactly, without materialising
the resamples:

- A percentile: a resample of n values is n uniform draws mapped through the sample's
  inverse CDF, so its k-th smallest value is x_(ceil(n*U)), U the k-th smallest of n
  uniforms, which is Beta(k, n-k+1) distributed. Percentiles are nearest-rank
  (k = ceil(p*n)), the definition under which this holds.
- A fraction (writes that stalled): the count in a resample is Binomial(n, k/n).

Seeded (SEED), so the same captures give the same intervals on every run. What this
measures is how well each capture pins its own distribution; run-to-run variation of
the workload is larger, and only repeat captures of one setting show it.
"""

from __future__ import annotations

import math

import numpy as np

SEED = 20_250_501
RESAMPLES = 4000
LEVEL = 0.95


def method(runs_before: int, runs_after: int) -> str:
    over = "runs, then operations" if max(runs_before, runs_after) > 1 else "operations (one run per side: sampling noise only, not run-to-run variation)"
    return (f"bootstrap over {over}: {RESAMPLES} replicates per side (seed {SEED}), nearest-rank percentiles; "
            f"flagged when the {LEVEL:.0%} interval of after - before excludes 0")


def nearest_rank(sorted_values: np.ndarray, p: float) -> float:
    n = len(sorted_values)
    return float(sorted_values[max(1, math.ceil(p * n)) - 1])


def _run_draws(runs: int, rng: np.random.Generator) -> dict[tuple[int, ...], int]:
    """How many replicates draw each multiset of runs (runs resampled with replacement)."""
    picks = np.sort(rng.integers(0, runs, (RESAMPLES, runs)), axis=1)
    keys, counts = np.unique(picks, axis=0, return_counts=True)
    return {tuple(int(i) for i in k): int(c) for k, c in zip(keys, counts)}


def percentile_draws(runs: list[np.ndarray], p: float, rng: np.random.Generator) -> np.ndarray:
    """RESAMPLES bootstrap replicates of the nearest-rank p-th percentile of the pooled
    operations of resampled runs (each run's array sorted)."""
    out = []
    for pick, times in _run_draws(len(runs), rng).items():
        pooled = np.sort(np.concatenate([runs[i] for i in pick]))
        n = len(pooled)
        if n == 0:
            continue
        k = max(1, math.ceil(p * n))
        u = rng.beta(k, n - k + 1, times)
        out.append(pooled[np.clip(np.ceil(u * n).astype(np.int64) - 1, 0, n - 1)])
    # Grouped by multiset above: shuffled, so that pairing with the other side is random.
    return rng.permutation(np.concatenate(out)) if out else np.array([np.nan])


def fraction_draws(hits: list[int], totals: list[int], rng: np.random.Generator) -> np.ndarray:
    """Replicates of hits/total over resampled runs, then Binomial within them."""
    out = []
    for pick, times in _run_draws(len(hits), rng).items():
        h, n = sum(hits[i] for i in pick), sum(totals[i] for i in pick)
        if n:
            out.append(rng.binomial(n, h / n, times) / n)
    return rng.permutation(np.concatenate(out)) if out else np.array([np.nan])


def interval(before: np.ndarray, after: np.ndarray) -> tuple[float, float]:
    # Independent sides: the replicates pair up in any order.
    d = after[: min(len(after), len(before))] - before[: min(len(after), len(before))]
    lo, hi = np.quantile(d, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def rng_for(name: str, stat: str) -> np.random.Generator:
    """One generator per statistic, so adding a distribution does not move the others'
    intervals (a stable hash: Python's hash() of a str changes between runs)."""
    key = sum((i + 1) * b for i, b in enumerate(f"{name}/{stat}".encode()))
    return np.random.default_rng([SEED, key])
