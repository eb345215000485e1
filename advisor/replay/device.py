"""The device model the policies write to: bandwidth, per-request latency, queue depth.

Fitted from the capture's block layer when it has one (trace.dat `block_rq_issue` /
`block_rq_complete`, or blktrace's `io_requests`), otherwise a named preset or the
workload description's figures; `source` says which, so every replay states it.

The model is a FIFO server: a write of `n` bytes submitted at `t` completes at
`max(t, free) + n / bandwidth + latency`, where `free` is when the device finished its
previous transfer. `latency` is the fixed part of one request (what a 4 KiB write at
queue depth 1 costs beyond its transfer); `queue_depth` is how many requests overlap
(Little's law over the capture: busy-time-weighted requests in flight), which is what
lets a batch of small writes finish in n*latency/queue_depth rather than n*latency.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.replay.drain import busy_ns as _busy_ns
from advisor.replay.drain import drained_rate


# Datasheet-class figures for devices a description can name. They are assumptions,
# stated wherever they are used; a capture's own block events always take precedence.
PRESETS = {
    # SATA SSD: ~500 MB/s sequential write, ~50 us 4 KiB write at QD1, NCQ depth 32.
    "ssd": dict(bandwidth=500e6, latency_ns=50_000, queue_depth=32.0),
    # NVMe SSD: ~2 GB/s sustained write, ~20 us 4 KiB write at QD1, deep queues.
    "nvme": dict(bandwidth=2000e6, latency_ns=20_000, queue_depth=128.0),
    # 2.5" laptop hard disk: ~80 MB/s streaming, ~12 ms average seek + rotation, one head.
    "hdd": dict(bandwidth=80e6, latency_ns=12_000_000, queue_depth=1.0),
}


# A common max_sectors_kb: writeback goes out in requests of at most this many bytes.
MAX_REQUEST_BYTES = 512 * 1024


def requests_for(nbytes):
    """Requests needed to write nbytes (a number or an array), at least one each."""
    return np.maximum(1, np.ceil(np.asarray(nbytes, dtype=np.float64) / MAX_REQUEST_BYTES)).astype(np.int64)


@dataclass(frozen=True)
class Device:
    name: str
    bandwidth: float  # bytes per second the device writes while busy
    latency_ns: int  # fixed cost of one request
    queue_depth: float  # requests the device overlaps
    source: str  # where the figures come from
    requests: int = 0  # write requests the fit saw
    latency_samples_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    stable_writes: bool | None = None  # does the device need stable pages (None: unknown)
    median_request_bytes: float = 0.0
    flush_ns: int = 0  # a cache flush (REQ_PREFLUSH / FUA) as the capture saw it; 0: included in latency
    # Metadata writes (RWBS 'M') over their own busy time; 0: the capture had too few.
    metadata_bandwidth: float = 0.0

    def transfer_ns(self, nbytes: float, metadata_bytes: float = 0.0) -> float:
        """Busy time for nbytes of data and metadata_bytes of metadata, each class at the
        rate the capture showed for it (metadata at the overall rate when not fitted)."""
        return nbytes * 1e9 / self.bandwidth + metadata_bytes * 1e9 / (self.metadata_bandwidth or self.bandwidth)

    def batch_ns(self, requests: int, nbytes: float, metadata_bytes: float = 0.0) -> float:
        """Submit `requests` writes of `nbytes` (+ `metadata_bytes`) at once, wait for all of them."""
        overlap = max(1.0, min(self.queue_depth, float(requests)))
        return max(self.transfer_ns(nbytes, metadata_bytes), requests * self.latency_ns / overlap) + self.latency_ns

    def serial_ns(self, requests: int, nbytes: float, metadata_bytes: float = 0.0) -> float:
        """The same writes submitted one at a time, each waited for before the next."""
        return self.transfer_ns(nbytes, metadata_bytes) + requests * self.latency_ns

    def service_times_ns(self, nbytes: np.ndarray, seed: int = 0) -> np.ndarray:
        """Submission to completion of each of these requests (bytes), in submission order.

        With the capture's own request latencies, each request takes one of them (a fixed
        permutation of the empirical quantiles, so the capture's tail, up to its slowest
        request, is replayed, not averaged away) plus the transfer of any bytes beyond
        the capture's median request. Without, latency + transfer. The quantiles are
        sample values, not interpolated between neighbours: as many requests as the
        capture has take each of its latencies once, the slowest included (interpolating
        would give the mean of the two slowest instead)."""
        nbytes = np.asarray(nbytes, dtype=np.float64)
        samples = self.latency_samples_ns
        if not len(samples):
            return self.latency_ns + nbytes * 1e9 / self.bandwidth
        drawn = permuted_quantiles(samples, len(nbytes), seed)
        extra = np.maximum(0.0, nbytes - self.median_request_bytes) * 1e9 / self.bandwidth
        return drawn + extra

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "bandwidth_mb_s": round(self.bandwidth / 1e6, 3),
            "metadata_bandwidth_mb_s": round(self.metadata_bandwidth / 1e6, 3) if self.metadata_bandwidth else None,
            "latency_ms": round(self.latency_ns / 1e6, 4),
            "queue_depth": round(self.queue_depth, 2),
            "write_requests": self.requests,
            "stable_writes": self.stable_writes,
            "source": self.source,
        }


def permuted_quantiles(samples: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n draws from the samples: their n evenly spaced quantiles (sample values, not
    interpolated) in a fixed random order, so the draws span the whole distribution,
    its extremes included, and the same seed gives the same order."""
    q = (np.random.default_rng(seed).permutation(n) + 0.5) / max(1, n)
    return np.quantile(samples, q, method="inverted_cdf")


def preset(name: str, **overrides) -> Device:
    if name not in PRESETS:
        raise KeyError(name)
    figures = {**PRESETS[name], **{k: v for k, v in overrides.items() if v is not None}}
    return Device(name=name, source=f"preset '{name}' (datasheet-class figures, an assumption)", **figures)


_REQUESTS = """
SELECT issue_ts AS start_ts, complete_ts AS end_ts, CAST(bytes AS BIGINT) AS bytes, meta
FROM block_requests WHERE write AND issue_ts IS NOT NULL AND complete_ts IS NOT NULL AND bytes > 0
ORDER BY issue_ts
"""


def fit(con, views) -> Device | None:
    """The device as the capture saw it (its block_requests view, advisor.views), or
    None without write requests in the capture (or with block events whose fields the
    capture did not keep)."""
    if not views.met("block_requests"):
        return None
    rows = con.execute(_REQUESTS).fetchnumpy()
    source = "blktrace D->C" if views.built["block_requests"].source == "blktrace" else "block_rq_issue->block_rq_complete"
    start, end = np.asarray(rows["start_ts"], dtype=np.int64), np.asarray(rows["end_ts"], dtype=np.int64)
    nbytes = np.asarray(rows["bytes"], dtype=np.float64)
    meta = np.asarray(rows["meta"], dtype=bool)
    keep = end > start
    start, end, nbytes, meta = start[keep], end[keep], nbytes[keep], meta[keep]
    if len(start) < 2:
        return None
    lat = end - start
    busy = _busy_ns(start, end)
    bandwidth = nbytes.sum() * 1e9 / busy
    drain = drained_rate(con, views, start, end, nbytes, meta)
    if drain is not None and drain[0] < bandwidth:
        source += f"; data drained at {drain[0] / 1e6:.0f} MB/s {drain[1]}"
        bandwidth = drain[0]
    # Little's law over the busy time: the mean number of requests in flight.
    depth = max(1.0, lat.sum() / busy)
    # The fixed cost: the median small request's time, less its transfer. Requests queue
    # behind each other in the device, so this is an upper bound of the true QD1 cost.
    small = nbytes <= np.percentile(nbytes, 25)
    fixed = np.median(lat[small] - nbytes[small] * 1e9 / bandwidth)
    return Device(
        flush_ns=_flush_ns(con),
        name="capture",
        bandwidth=float(bandwidth),
        latency_ns=int(max(fixed, 1_000)),
        queue_depth=float(depth),
        source=f"fitted from the capture's {len(lat)} write requests ({source})",
        requests=int(len(lat)),
        latency_samples_ns=np.sort(lat),
        median_request_bytes=float(np.median(nbytes)),
        metadata_bandwidth=_metadata_bandwidth(start[meta], end[meta], nbytes[meta]),
    )


# Fewer metadata requests than this say too little about their rate: keep the overall one.
_MIN_METADATA_REQUESTS = 32


def _metadata_bandwidth(start: np.ndarray, end: np.ndarray, nbytes: np.ndarray) -> float:
    """Metadata bytes over the time metadata requests were in flight. A filesystem writes
    its metadata in bursts of its own (btrfs's tree blocks at a transaction commit, XFS's
    inode clusters, ext4's journal), at a rate of their own: on the untar capture btrfs's
    16 KiB tree blocks went out 96 at a time at 552 MB/s while the reclaim-driven data
    writes around them ran at 82 MB/s of their busy time."""
    if len(start) < _MIN_METADATA_REQUESTS:
        return 0.0
    return float(nbytes.sum() * 1e9 / _busy_ns(start, end))


def _flush_ns(con) -> int:
    """Median duration of the capture's requests that flush the cache: RWBS 'FF' (an
    empty preflush), a leading F (REQ_PREFLUSH) or a trailing F (FUA), as fsync's log
    and superblock writes are."""
    v = con.execute("SELECT median(d2c_ns) FROM block_requests WHERE flush AND d2c_ns IS NOT NULL").fetchone()[0]
    return int(v) if v else 0
