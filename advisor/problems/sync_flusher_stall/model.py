"""sync-flusher-stall: sync(2)'s WB_SYNC_ALL pass, waiting per inode vs once.

Kernel path: sync → ksys_sync → wakeup_flusher_threads(WB_REASON_SYNC) (a WB_SYNC_NONE
pass over what is dirty) → sync_inodes_sb → bdi_split_work_to_wbs (WB_SYNC_ALL,
older_than_this = now) → wb_writeback → writeback_sb_inodes → __writeback_single_inode
→ do_writepages, then wait_sb_inodes. Before "sync: don't block the flusher thread
waiting on IO" (Dave Chinner, 3.11: wbc->for_sync) __writeback_single_inode called
filemap_fdatawait for every inode in WB_SYNC_ALL mode, inside the flusher: one inode's
IO at a time, and no background writeback meanwhile. With for_sync the flusher submits
every inode's IO and wait_sb_inodes waits once.

The model: the inodes on the writeback lists when sync starts (dirtied since the last
inode-level writeback visited them, pages written elsewhere or not: pages.dirty_inodes_at)
are written by the WB_SYNC_NONE pass, which takes inodes dirtied before it started
(wb_writeback's dirtied_before); the WB_SYNC_ALL pass runs after it on the same flusher
and takes what was dirtied meanwhile (its older_than_this is its own start): under
fs_mark creating ~11,000 files/s, a sync whose first pass wrote 82,000 inodes in 3.35 s
wrote 38,000 more in its second. The first pass lasts as long as the flusher's pace
through its lists (the capture's own, when it shows the flusher at work). Every inode costs
the flusher a fixed CPU time (writepages, bio building: measured from the capture's
writeback_single_inode rate), and writes its pages still dirty. Waiting per
inode, each inode's requests are submitted and waited for before the next inode: n x (cpu +
latency) + bytes / bandwidth, and no request can merge with another inode's. With
for_sync the submissions are plugged and merge (files laid out one after another, as
the allocators place a file-creating workload) and the device overlaps them to its queue
depth: n x cpu + batch time. CPU and IO are added, not overlapped, under both policies:
the flusher is one thread and blk-mq/wbt throttle its submissions while its IO is in
flight (sample_traces/sync-xfs-v6.dat shows the flusher idle in gaps of over 1 ms, with
requests in flight, between bursts of writeback_single_inode). While the flusher waits, writers that
reach the dirty limit stall: their stall is the part of the sync after the dirty count,
growing at the writers' recorded rate, would have reached the limit. Each inode also
carries the metadata bytes per inode the capture's block events show (RWBS 'M').

On btrfs those metadata bytes are the btree inode's pages (tree blocks), which the flusher
writes in the same pass (btree_writepages) as requests of their own: they go at the rate
the capture's metadata requests ran (device.metadata_bandwidth). ext4's and XFS's metadata
goes out through the journal/log at their commits, whose rate is set by the cache flushes
each commit waits for (blk-ext4-fsync: 10.7 MB/s), not by transfer, so there it stays
at the device's overall rate. sync(2) then calls ->sync_fs: on btrfs a transaction commit
(btrfs_commit_transaction: delayed items and refs, the remaining tree blocks, the
superblock with its cache flushes). The two policies differ only in the flusher's pass, so
the commit is replayed as the capture recorded it (`_recorded_commit_ns`); a btrfs
capture without btrfs_transaction_commit gets none, and its assumptions say so.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.device import requests_for
from advisor.replay.pages import dirty_at, dirty_inodes_at
from advisor.replay.model import Policy, ProblemModel, longest_observed, needs_op, seconds
from advisor.replay.workload import BTRFS_BTREE_INODE, Workload

WAIT_PER_INODE = Policy("wait-per-inode", False, "__writeback_single_inode: filemap_fdatawait per inode for every WB_SYNC_ALL pass, inside the flusher")
FOR_SYNC = Policy("for-sync", True, "wbc->for_sync: the flusher submits all IO; wait_sb_inodes waits once, outside the flusher")


def _simulate(w: Workload, policy: Policy) -> dict:
    ops = w.op("sync")
    i = ops.longest()
    t0 = int(ops.start[i])
    keys, inodes = _synced(w, t0)
    if w.metadata_bytes_per_inode and w.records("btrfs"):
        # btrfs's metadata blocks are the btree inode's pages: the metadata bytes per
        # inode written (below) are those writes, so the btree inode is not counted twice.
        inodes = inodes[inodes != BTRFS_BTREE_INODE]
        keys = keys[(keys >> 32) != BTRFS_BTREE_INODE]
    pages = np.zeros(len(inodes))
    with_pages, counts = np.unique(keys >> 32, return_counts=True)
    pages[np.searchsorted(inodes, with_pages)] = counts  # an inode with dirty pages is on the lists
    # Each inode also costs the filesystem metadata writes (log, inode clusters, tree blocks).
    nbytes = pages * w.folio_bytes + w.metadata_bytes_per_inode
    total = float(nbytes.sum())
    # Which part goes at the metadata rate: btrfs's tree blocks only (module docstring).
    metadata = w.metadata_bytes_per_inode * len(inodes) if w.records("btrfs") else 0.0
    dev, cpu = w.device, w.inode_writeback_ns * len(inodes)
    if not len(inodes):
        dur = flusher_waiting = 0.0
    elif policy.fixed:
        merged = int(requests_for(total))
        dur = cpu + dev.batch_ns(merged, total - metadata, metadata)
        flusher_waiting = 0.0
    else:
        per_inode = int(requests_for(nbytes).sum())
        dur = cpu + dev.serial_ns(per_inode, total - metadata, metadata)
        flusher_waiting = dur
    commit = _recorded_commit_ns(w, t0, int(ops.end[i]) if ops.end[i] >= 0 else w.end_ts)
    metrics = {
        "sync_seconds": seconds(dur + commit),
        "inodes_written_during_sync": int(len(inodes)),
        "sync_written_bytes": int(total),
        "flusher_waiting_seconds": seconds(flusher_waiting),
        "writer_stall_seconds": seconds(_writer_stall(w, t0, len(keys), flusher_waiting)),
    }
    if commit:
        metrics["transaction_commit_seconds"] = seconds(commit)
    return metrics


def _synced(w: Workload, t0: int) -> tuple[np.ndarray, np.ndarray]:
    """The dirty pages and inodes a sync starting at t0 writes: those dirty at t0 (the
    WB_SYNC_NONE pass), then those dirtied before the WB_SYNC_ALL pass starts, when the
    flusher has been through the first set."""
    keys0, inodes0 = dirty_at(w, t0), dirty_inodes_at(w, t0)
    t1 = t0 + int((w.flusher_pace_ns or w.inode_writeback_ns) * len(inodes0))
    later = (w.dirty_ts > t0) & (w.dirty_ts <= t1)
    if not later.any():
        return keys0, inodes0
    new = np.setdiff1d(np.unique(w.dirty_ino[later]), inodes0)
    keys1 = dirty_at(w, t1)
    keys1 = keys1[np.isin(keys1 >> 32, new)]
    return np.union1d(keys0, keys1), np.union1d(inodes0, new)


def _recorded_commit_ns(w: Workload, t0: int, t1: int) -> float:
    """The btrfs transaction commit that ended this sync, as recorded. sync_inodes_sb waits
    for the flusher's WB_SYNC_ALL work before ->sync_fs starts the commit, so the commit
    began after the flusher's last writeback work ending before it (writeback_written);
    btrfs_transaction_commit fires as the commit ends. 0 without such a commit."""
    commits = w.transaction_commit_ts[(w.transaction_commit_ts > t0) & (w.transaction_commit_ts <= t1)]
    if not len(commits):
        return 0.0
    end = int(commits[-1])
    works = w.writeback_work_end_ts[(w.writeback_work_end_ts >= t0) & (w.writeback_work_end_ts < end)]
    return float(end - (int(works[-1]) if len(works) else t0))


def _writer_stall(w: Workload, t0: int, dirty_pages: int, blocked_ns: float) -> float:
    """How long writers sit in balance_dirty_pages while the flusher is blocked: the
    dirty count grows at the writers' rate just before the sync until the limit."""
    if blocked_ns <= 0 or w.dirty_limit_pages is None:
        return 0.0
    window = w.dirty_ts[(w.dirty_ts > t0 - 1_000_000_000) & (w.dirty_ts <= t0)]
    if len(window) < 2:
        return 0.0
    rate = len(window) / max(1.0, float(t0 - window[0]))  # pages per ns
    headroom = max(0, w.dirty_limit_pages - dirty_pages)
    return max(0.0, blocked_ns - headroom / rate)


MODEL = ProblemModel(
    problem="sync-flusher-stall",
    commit="sync: don't block the flusher thread waiting on IO (3.12, wbc->for_sync)",
    policies=(WAIT_PER_INODE, FOR_SYNC),
    not_applicable=lambda w: needs_op(w, "sync", "sync(2)/syncfs(2)"),
    observed=lambda w: longest_observed(w, "sync", "sync"),
    simulate=_simulate,
)
