"""btrfs-full-fsync-fallback: fsync after page release, full vs fast.

Kernel path: btrfs_sync_file → btrfs_log_dentry_safe → btrfs_log_inode. Page release
under memory pressure (btrfs_releasepage → try_release_extent_mapping) set
BTRFS_INODE_NEEDS_FULL_SYNC before 5e548b3201 ("btrfs: do not set the full sync flag on
the inode during page release", 5.9-rc1), so the next fsync logged every extent the
inode has in the current transaction, looking up each extent's checksums in the csum
tree (btrfs_lookup_csums_range) while other inodes' ordered extents insert checksums
into it: the lookups of concurrent fsyncs contend on the csum tree's locks.

The model, per fsync: the data dirtied since the inode's previous fsync is written
(one merged request), then the log tree and the superblock: two requests that flush the
device cache, each taking what the capture's flushing requests took (RWBS F). `full-sync-on-release` adds, when pages are being released (the workload
shows reclaim), one checksum lookup per extent of the inode in the current transaction
(one extent per fsync'd write since the transaction began; btrfs commits a transaction
every 30 s), each costing CSUM_LOOKUP_NS times the number of fsyncs running at once
(the lock contention, serialised). CSUM_LOOKUP_NS is an assumption, not a measurement:
no capture here shows the lookups, and the seed gives only end-to-end throughput.

Closed loop per writer: each writer keeps its recorded work between fsyncs and runs
its fsyncs at the policy's cost on its own clock, which also decides how many fsyncs
fall in one transaction; `fsync_writer_mib_s` is the fsync'd bytes over the busiest
writer's time (fio's group throughput for fsync=1 jobs).
"""

from __future__ import annotations

import numba
import numpy as np

from advisor.replay.policies.base import Policy, ProblemModel, ms
from advisor.replay.workload import Workload

COMMIT_INTERVAL_NS = 30_000_000_000  # btrfs default commit=30
CSUM_LOOKUP_NS = 2_000  # one extent's csum btree search in memory (assumed)

FULL_SYNC = Policy("full-sync-on-release", False, "before 5.9-rc1",
                   "try_release_extent_mapping sets BTRFS_INODE_NEEDS_FULL_SYNC; btrfs_log_inode logs every extent of the transaction")
FAST = Policy("fast-fsync", True, "5.9-rc1 and later", "page release leaves the flag alone; fsync logs only the extents new since the last one")


def _not_applicable(w: Workload) -> str | None:
    f = w.op("fsync")
    if not len(f) or not (f.ino >= 0).any():
        return "no fsync of a file the workload dirtied"
    return None


def _observed(w: Workload) -> dict:
    d = w.op("fsync").durations_ns()
    if not len(d):
        return {}
    return {"fsync_count": int(len(d)), "fsync_mean_ms": ms(d.mean()), "fsync_p50_ms": ms(np.percentile(d, 50)),
            "fsync_p99_ms": ms(np.percentile(d, 99)), "fsync_max_ms": ms(d.max())}


def _concurrency(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each fsync, how many fsyncs (itself included) were running when it started."""
    s = np.sort(start)
    e = np.sort(end)
    return np.searchsorted(s, start, side="right") - np.searchsorted(e, start, side="right")


def _simulate(w: Workload, policy: Policy) -> dict:
    f = w.op("fsync")
    known = f.ino >= 0
    start, ino = f.start[known], f.ino[known]
    end = np.where(f.end[known] >= 0, f.end[known], start)
    order = np.lexsort((start, ino))  # each writer's fsyncs together, in time order
    start, ino, end = start[order], ino[order], end[order]
    data = _data_since_previous(w, start, ino)
    dev = w.device
    base = dev.latency_ns + data * 1e9 / dev.bandwidth + 2 * max(dev.latency_ns, dev.flush_ns)
    releasing = bool(w.reclaim_events)
    per_extent = CSUM_LOOKUP_NS * _concurrency(start, end) if (releasing and not policy.fixed) else np.zeros(len(start))
    cost, busy = _closed_loop(ino, start, base, per_extent, _think_ns(ino, start, end), COMMIT_INTERVAL_NS)
    return {
        "fsync_count": int(len(cost)),
        "fsync_mean_ms": ms(cost.mean()),
        "fsync_p50_ms": ms(np.percentile(cost, 50)),
        "fsync_p99_ms": ms(np.percentile(cost, 99)),
        "fsync_max_ms": ms(cost.max()),
        # fio's group figure: all fsync'd bytes over the busiest writer's time.
        "fsync_writer_mib_s": round(float(data.sum()) / 2**20 / (busy.max() / 1e9), 3) if busy.max() > 0 else None,
        "pages_released": releasing,
    }


def _data_since_previous(w: Workload, start: np.ndarray, ino: np.ndarray) -> np.ndarray:
    """Bytes each fsync writes: its inode's dirtying since the inode's previous fsync."""
    data = np.zeros(len(start))
    for x in np.unique(ino):
        mine = np.flatnonzero(ino == x)
        ev_ts = w.dirty_ts[w.dirty_ino == x]
        counts = np.diff(np.searchsorted(ev_ts, np.concatenate(([-1], start[mine])), side="right"))
        data[mine] = counts * w.folio_bytes
    return data


def _think_ns(ino: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """What each writer did between its previous fsync's return and this fsync (its
    writes, as recorded): kept as it was, whatever the policy."""
    gap = np.zeros(len(start))
    if len(start) > 1:
        same = ino[1:] == ino[:-1]
        gap[1:] = np.where(same, np.maximum(0, start[1:] - end[:-1]), 0)
    return gap


@numba.njit(cache=True)
def _closed_loop(ino, start, base, per_extent, think_ns, txn_ns):
    """Each writer (inode) runs on its own clock from its first recorded fsync: its
    recorded work between fsyncs (`think_ns`), then the fsync. An fsync costs `base`
    plus, when the inode must log the whole transaction, one checksum lookup
    (`per_extent`) per extent the inode has in it: one per fsync'd write since the last
    commit (every txn_ns). The count follows the writer's own clock, so a slower policy
    sees fewer fsyncs per transaction. Returns each fsync's cost and its writer's busy
    time up to the fsync's return."""
    n = len(ino)
    cost = np.zeros(n)
    busy = np.zeros(n)
    i = 0
    while i < n:
        t = np.float64(start[i])
        first = t
        extents = 0
        txn = np.int64(t // txn_ns)
        j = i
        while j < n and ino[j] == ino[i]:
            t += think_ns[j]
            if np.int64(t // txn_ns) != txn:
                txn = np.int64(t // txn_ns)
                extents = 0
            extents += 1
            cost[j] = base[j] + extents * per_extent[j]
            t += cost[j]
            busy[j] = t - first
            j += 1
        i = j
    return cost, busy


MODEL = ProblemModel(
    problem="btrfs-full-fsync-fallback",
    commit="5e548b3201 (btrfs: do not set the full sync flag on the inode during page release)",
    policies=(FULL_SYNC, FAST),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
