"""Operation latency distributions compared: percentiles of each side and whether their
difference is larger than the noise (noise.py). A side is one or more repeat runs.

Each distribution reads the domain views only, when the capture fills them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.compare import noise

PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))


@dataclass(frozen=True)
class Distribution:
    name: str
    text: str
    needs: tuple[str, ...]
    sql: str  # one column, durations in ns
    # For operations that are a subset of others (writes that stalled): the count of all,
    # so the fraction that stalled is compared too, and a side with none is comparable.
    of_all: str | None = None


_COMPLETE = "SELECT dur_ns FROM {view} WHERE complete AND dur_ns IS NOT NULL"

# A write that waited on page writeback: a wait of the same task between the write's entry
# and return (the pairing the stable-page-wait rule counts).
_STALLED_WRITES = "SELECT dur_ns FROM stalled_writes()"

DISTRIBUTIONS = (
    Distribution("sync", "sync(2)/syncfs(2), entry to return", ("sync_ops.dur_ns",), _COMPLETE.format(view="sync_ops")),
    Distribution("fsync", "fsync(2)/fdatasync(2), entry to return", ("fsync_ops.dur_ns",), _COMPLETE.format(view="fsync_ops")),
    Distribution("snapshot", "btrfs snapshot ioctls, entry to return", ("snapshot_ops.dur_ns",), _COMPLETE.format(view="snapshot_ops")),
    Distribution("write", "write(2) family calls, entry to return", ("write_ops.dur_ns",), _COMPLETE.format(view="write_ops")),
    Distribution("write_stall", "writes that waited on page writeback (stalls), entry to return",
                 ("write_ops.dur_ns", "page_waits"), _STALLED_WRITES,
                 of_all="SELECT count(*) FROM write_ops WHERE complete AND dur_ns IS NOT NULL"),
    Distribution("block_d2c", "block requests, issue to completion (D2C)", ("block_requests.d2c_ns",),
                 "SELECT d2c_ns FROM block_requests WHERE d2c_ns IS NOT NULL"),
    Distribution("block_q2c", "block requests, queued to completion (Q2C)", ("block_requests.q2c_ns",),
                 "SELECT q2c_ns FROM block_requests WHERE q2c_ns IS NOT NULL"),
)


@dataclass
class Samples:
    """One run's operations."""
    durations_ms: np.ndarray | None  # sorted; None: the capture cannot show them
    of_all: int | None
    why: str | None  # what is missing, when None


def samples(con, views, d: Distribution) -> Samples:
    unmet = views.unmet(d.needs)
    if unmet:
        return Samples(None, None, "; ".join(u.why for u in unmet))
    ns = np.array([r[0] for r in con.execute(d.sql).fetchall()], dtype=np.float64)
    total = con.execute(d.of_all).fetchone()[0] if d.of_all else None
    return Samples(np.sort(ns) / 1e6, total, None)


def summary(runs: list[Samples]) -> dict | None:
    """The side's operations pooled over its runs."""
    if any(s.durations_ms is None for s in runs):
        return None
    v = np.sort(np.concatenate([s.durations_ms for s in runs]))
    out: dict = {"runs": len(runs), "count": int(len(v))}
    if runs[0].of_all is not None:
        total = sum(s.of_all for s in runs)
        out["of"] = int(total)
        out["fraction"] = len(v) / total if total else None
    for name, p in PERCENTILES:
        out[f"{name}_ms"] = noise.nearest_rank(v, p) if len(v) else None
    out["max_ms"] = float(v[-1]) if len(v) else None
    return out


def compare(d: Distribution, before: list[Samples], after: list[Samples]) -> dict:
    """Both sides' summaries and, per statistic both sides have, the change with its interval."""
    sb, sa = summary(before), summary(after)
    doc = {"name": d.name, "text": d.text, "unit": "ms", "before": sb, "after": sa,
           "unmeasured": {side: next(s.why for s in runs if s.why) for side, runs in (("before", before), ("after", after))
                          if any(s.why for s in runs)},
           "changes": []}
    if sb is None or sa is None:
        doc["flagged"] = False
        return doc
    b, a = [s.durations_ms for s in before], [s.durations_ms for s in after]
    if d.of_all is not None and sb["of"] and sa["of"]:
        # The fraction of all operations: comparable even when one side has none.
        draws = [noise.fraction_draws([len(x) for x in runs], [s.of_all for s in side], noise.rng_for(d.name, f"fraction/{tag}"))
                 for runs, side, tag in ((b, before, "b"), (a, after, "a"))]
        doc["changes"].append(_change("fraction", sb["fraction"], sa["fraction"], *noise.interval(*draws)))
    if sb["count"] and sa["count"]:
        for name, p in PERCENTILES:
            draws = [noise.percentile_draws(runs, p, noise.rng_for(d.name, f"{name}/{tag}")) for runs, tag in ((b, "b"), (a, "a"))]
            doc["changes"].append(_change(f"{name}_ms", sb[f"{name}_ms"], sa[f"{name}_ms"], *noise.interval(*draws)))
    doc["flagged"] = any(c["flagged"] for c in doc["changes"])
    return doc


def _change(stat: str, before: float, after: float, lo: float, hi: float) -> dict:
    return {"stat": stat, "before": before, "after": after, "change": after - before,
            "ratio": after / before if before else None, "interval": [lo, hi], "flagged": bool(lo > 0 or hi < 0)}
