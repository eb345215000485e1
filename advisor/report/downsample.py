"""Long time series cut to what a chart can show: a fixed number of time buckets.

A 5-second capture can hold 100,000 `global_dirty_state` samples; an SVG with a point
per sample is megabytes and shows nothing more than a min–max band per pixel column.
So series are binned into at most `buckets` equal time buckets, keeping each bucket's
minimum and maximum (spikes survive), and the chart says that it did so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Time buckets per chart: about one per horizontal pixel of the report's charts.
BUCKETS = 1000


@dataclass
class Envelope:
    """A series as min/max per time bucket (or the samples themselves when few)."""

    t: np.ndarray  # seconds, bucket start (or sample time)
    lo: np.ndarray
    hi: np.ndarray
    samples: int
    bucket_s: float | None  # None: not downsampled

    @property
    def note(self) -> str:
        if self.bucket_s is None:
            return f"all {self.samples:,} samples"
        return f"downsampled: {self.samples:,} samples → min–max per {_duration(self.bucket_s)} bucket"


def envelope(t: np.ndarray, v: np.ndarray, span: tuple[float, float], buckets: int = BUCKETS) -> Envelope:
    """Min and max of `v` per time bucket over `span` (seconds); empty buckets are dropped."""
    t, v = np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if len(t) <= buckets:
        return Envelope(t, v, v, len(t), None)
    lo_t, hi_t = span
    width = max(hi_t - lo_t, 1e-9) / buckets
    idx = np.clip(((t - lo_t) / width).astype(np.int64), 0, buckets - 1)
    lo = np.full(buckets, np.inf)
    hi = np.full(buckets, -np.inf)
    np.minimum.at(lo, idx, v)
    np.maximum.at(hi, idx, v)
    keep = np.isfinite(lo)
    starts = lo_t + np.arange(buckets) * width
    return Envelope(starts[keep], lo[keep], hi[keep], len(t), width)


def rate(t: np.ndarray, amount: np.ndarray, span: tuple[float, float], buckets: int = 200) -> tuple[np.ndarray, np.ndarray, float]:
    """Sum of `amount` per time bucket divided by the bucket's length: (bucket starts, per second, bucket s)."""
    lo_t, hi_t = span
    width = max(hi_t - lo_t, 1e-9) / buckets
    idx = np.clip(((np.asarray(t, dtype=np.float64) - lo_t) / width).astype(np.int64), 0, buckets - 1)
    total = np.bincount(idx, weights=np.asarray(amount, dtype=np.float64), minlength=buckets)
    return lo_t + np.arange(buckets) * width, total / width, width


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"
