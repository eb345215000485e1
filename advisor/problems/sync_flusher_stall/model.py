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
and takes what was dirtied meanwhile (its dirtied_before is its own start): under
fs_mark creating ~11,000 files/s, a sync whose first pass wrote 82,000 inodes in 3.35 s
wrote 38,000 more in its second. Which pass comes first is a race the capture shows
(`_synced`); the first pass ends where the capture shows the WB_SYNC_ALL work begin, or
lasts as long as the flusher's pace through its lists. Every inode costs
the flusher a fixed CPU time (writepages, bio building: measured from the capture's
writeback_single_inode rate), and writes its pages still dirty. Waiting per
inode (only in the WB_SYNC_ALL pass: the WB_SYNC_NONE pass never waited), each inode's
requests are submitted and waited for before the next inode: n x (cpu + latency) +
bytes / bandwidth, and no request can merge with another inode's. With
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
->sync_fs is replayed as the capture recorded it, from where the capture shows it began
(`_recorded_sync_fs_ns`, advisor.replay.sync_fs: ext4_sync_fs or btrfs_sync_fs): on ext4
and XFS a journal commit or a log force, under dbench on ext4 0.30 s of an 11.37 s sync;
on btrfs under fs_mark, 3.40 s of a 5.03 s sync. A btrfs capture without btrfs_sync_fs
takes the commit from btrfs_transaction_commit (`_recorded_commit_ns`), one without
either gets none, and its assumptions say so.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.device import requests_for
from advisor.replay.distinct import union
from advisor.replay.pages import dirty_at, dirty_inodes_at, inodes_dirtied, key_bytes, not_evicted
from advisor.replay.model import Policy, ProblemModel, longest_observed, needs_op, seconds
from advisor.replay.workload import BTRFS_BTREE_INODE, Workload

WAIT_PER_INODE = Policy("wait-per-inode", False, "__writeback_single_inode: filemap_fdatawait per inode for every WB_SYNC_ALL pass, inside the flusher")
FOR_SYNC = Policy("for-sync", True, "wbc->for_sync: the flusher submits all IO; wait_sb_inodes waits once, outside the flusher")


def _simulate(w: Workload, policy: Policy) -> dict:
    ops = w.op("sync")
    i = ops.longest()
    t0 = int(ops.start[i])
    t_end = int(ops.end[i]) if ops.end[i] >= 0 else w.end_ts
    keys, inodes, by_all, later = _synced(w, t0, t_end)
    if w.metadata_bytes_per_inode and w.records("btrfs"):
        # btrfs's metadata blocks are the btree inode's pages: the metadata bytes per
        # inode written (below) are those writes, so the btree inode is not counted twice.
        by_all = by_all[inodes != BTRFS_BTREE_INODE]
        inodes = inodes[inodes != BTRFS_BTREE_INODE]
        keys = keys[(keys >> 32) != BTRFS_BTREE_INODE]
    nbytes = _inode_bytes(w, keys, inodes, t_end)
    total = float(nbytes.sum())
    # Which part goes at the metadata rate: btrfs's tree blocks only (module docstring).
    meta_per_inode = w.metadata_bytes_per_inode if w.records("btrfs") else 0.0
    dev, cpu = w.device, w.inode_writeback_ns * len(inodes)
    if not len(inodes):
        dur = flusher_waiting = 0.0
    elif policy.fixed:
        dur = cpu + _batch_ns(dev, nbytes, meta_per_inode)
        flusher_waiting = 0.0
    else:
        # Only the WB_SYNC_ALL pass waits per inode; the WB_SYNC_NONE pass submits as
        # the fixed kernel does.
        flusher_waiting = _per_inode_ns(dev, nbytes[by_all], meta_per_inode)
        dur = cpu + _batch_ns(dev, nbytes[~by_all], meta_per_inode) + flusher_waiting
    backlog = _backlog_waited_ns(w, int(ops.pid[i]), t0, t_end)
    dur += backlog
    if backlog:
        text = (f"the sync's caller waited {backlog / 1e6:,.1f} ms into the sync for a page submitted before the sync began "
                "(folio_wait_writeback on a page extent_writepage had sent earlier): the device served those first, under "
                "every policy, so that time is replayed as recorded and the sync's own writes come after it")
        if text not in w.assumptions:
            w.assumptions.append(text)
    if later is not None:
        dur, flusher_waiting = _after_recorded_first_pass(w, policy, later, meta_per_inode, t_end, dur, flusher_waiting)
    sync_fs = _recorded_sync_fs_ns(w, i, t_end)
    commit = 0.0 if sync_fs else _recorded_commit_ns(w, t0, t_end)
    metrics = {
        "sync_seconds": seconds(dur + commit + sync_fs),
        "inodes_written_during_sync": int(len(inodes)),
        "sync_written_bytes": int(total),
        "flusher_waiting_seconds": seconds(flusher_waiting),
        "writer_stall_seconds": seconds(_writer_stall(w, t0, len(keys), flusher_waiting)),
    }
    if backlog:
        metrics["backlog_wait_seconds"] = seconds(backlog)
    if commit:
        metrics["transaction_commit_seconds"] = seconds(commit)
    if sync_fs:
        metrics["sync_fs_seconds"] = seconds(sync_fs)
    return metrics


def _after_recorded_first_pass(w: Workload, policy: Policy, later: tuple[float, np.ndarray, np.ndarray], meta_per_inode: float,
                               t_end: int, dur: float, flusher_waiting: float) -> tuple[float, float]:
    """The sync's flusher time and its waiting, when the capture shows the WB_SYNC_NONE
    pass and where the WB_SYNC_ALL work began: no shorter than the time before that, as
    recorded, and then the WB_SYNC_ALL pass over every inode dirty at its start. The model's time for
    the device to write everything (`dur`) stays the bound when longer: a pass only
    submits, and the IO it queued (82,000 inodes in 3.35 s under fs_mark on xfs) is still
    draining while the WB_SYNC_ALL pass runs."""
    first_ns, keys, inodes = later
    if w.metadata_bytes_per_inode and w.records("btrfs"):
        inodes = inodes[inodes != BTRFS_BTREE_INODE]
    if not len(inodes):
        return max(dur, first_ns), flusher_waiting
    nbytes = _inode_bytes(w, keys, inodes, t_end)
    waiting = 0.0 if policy.fixed else _per_inode_ns(w.device, nbytes, meta_per_inode)
    second = _batch_ns(w.device, nbytes, meta_per_inode) if policy.fixed else waiting
    recorded = first_ns + w.inode_writeback_ns * len(inodes) + second
    return (recorded, waiting) if recorded > dur else (dur, flusher_waiting)


def _backlog_waited_ns(w: Workload, pid: int, t0: int, t_end: int) -> float:
    """How long into the sync its caller still waited for pages submitted before the sync
    began, as recorded: the same under both policies. wait_sb_inodes waits for every page
    of the filesystem under writeback, and the device, or a throttle before it, serves
    those before the sync's own. Under fs_mark on a 4 MiB/s-capped btrfs, the sync's caller
    waited 1,278.6 ms into the sync on a page background writeback submitted 165 ms before
    the sync began; the pages the sync's own pass submitted 5 ms in were done after.

    Needs the waits' pages (folio_wait_writeback's ino and index) and page-level
    submissions (btrfs extent_writepage); 0 without them. A wait is traced as it begins,
    so this is a lower bound."""
    if not len(w.page_wb_ts) or not len(w.page_wait_key):
        return 0.0
    mine = (w.page_wait_pid == pid) & (w.page_wait_ts >= t0) & (w.page_wait_ts <= t_end) & (w.page_wait_key >= 0)
    if not mine.any():
        return 0.0
    waited = np.isin(w.page_wb_key, w.page_wait_key[mine])  # only the pages waited on: a few, of every page written
    order = np.lexsort((w.page_wb_ts[waited], w.page_wb_key[waited]))
    keys, ts = w.page_wb_key[waited][order], w.page_wb_ts[waited][order]
    last = t0
    for when, key in zip(w.page_wait_ts[mine], w.page_wait_key[mine]):
        lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
        j = lo + int(np.searchsorted(ts[lo:hi], when, "right")) - 1
        if j >= lo and ts[j] < t0:  # the page's latest submission before the wait came before the sync
            last = max(last, int(when))
    return float(last - t0)


def _batch_ns(dev, nbytes: np.ndarray, meta_per_inode: float) -> float:
    """The device's time for these inodes' bytes submitted together, merged (for_sync);
    meta_per_inode of each at the metadata rate. 0 without inodes."""
    if not len(nbytes):
        return 0.0
    total, meta = float(nbytes.sum()), meta_per_inode * len(nbytes)
    return dev.batch_ns(int(requests_for(total)), total - meta, meta)


def _per_inode_ns(dev, nbytes: np.ndarray, meta_per_inode: float) -> float:
    """The device's time for these inodes written and waited for one at a time, no
    request merging with another inode's (wait per inode). 0 without inodes."""
    if not len(nbytes):
        return 0.0
    total, meta = float(nbytes.sum()), meta_per_inode * len(nbytes)
    return dev.serial_ns(int(requests_for(nbytes).sum()), total - meta, meta)


def _inode_bytes(w: Workload, keys: np.ndarray, inodes: np.ndarray, t: int) -> np.ndarray:
    """Per inode (sorted), the bytes of its pages among `keys` as dirtied by t, plus the
    filesystem's metadata bytes per inode written (log, inode clusters, tree blocks): an
    inode on the lists is written even with no page dirty."""
    data = np.zeros(len(inodes))
    keys = keys[np.isin(keys >> 32, inodes)]
    with_pages, of_inode = np.unique(keys >> 32, return_inverse=True)
    data[np.searchsorted(inodes, with_pages)] = np.bincount(of_inode, weights=key_bytes(w, keys, t), minlength=len(with_pages))
    return data + w.metadata_bytes_per_inode


def _synced(w: Workload, t0: int, t_end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, np.ndarray, np.ndarray] | None]:
    """The dirty pages and inodes (sorted) a sync starting at t0 writes, which of
    the inodes the WB_SYNC_ALL pass writes, and, when the capture shows the WB_SYNC_NONE
    pass first and where the WB_SYNC_ALL work began, the recorded time before it and the
    pages and inodes the WB_SYNC_ALL pass found dirty (None otherwise). The inodes: those dirty at t0
    (the WB_SYNC_NONE pass), then those dirty when the WB_SYNC_ALL pass starts, when the
    flusher has been through the first set.

    Which pass runs first is a race the capture shows. wakeup_flusher_threads only sets
    WB_start_all and wakes the flusher; sync_inodes_sb then queues the WB_SYNC_ALL work,
    and wb_do_writeback runs queued works before the start-all pass. A flusher that wakes
    on another CPU before the work is queued starts the WB_SYNC_NONE pass first (sync
    under fs_mark on the host: 81,978 inodes in 3.35 s, then 38,022 by WB_SYNC_ALL); one
    that wakes after finds the WB_SYNC_ALL work first (lab stock run 2: WB_SYNC_ALL from
    4 ms, WB_SYNC_NONE after it), and that pass, whose dirtied_before is its own start,
    writes only what was dirty at t0. The WB_SYNC_NONE pass's length does not depend on
    the policy (no per-inode waits there), so when the capture shows when the
    WB_SYNC_ALL work began, that is the cut-off, and the time before it is replayed as
    recorded: the first pass, and whatever sync(2) did before it reached this filesystem.
    iterate_supers syncs one superblock after another and waits for each, so on a loop
    device whose disk's own filesystem had 600 MB dirty, the loop device's WB_SYNC_ALL work
    began 261 ms into a 266 ms sync (capture 42), where the device model writes the loop
    filesystem's 1 MB in milliseconds. The WB_SYNC_ALL pass then finds every inode dirty at
    its start, the first pass's included when written to again (a writer appending to a
    file the first pass wrote)."""
    keys0, inodes0 = dirty_at(w, t0), dirty_inodes_at(w, t0)
    in_sync = (w.sync_work_start_ts >= t0) & (w.sync_work_start_ts <= t_end)
    modes, starts = w.sync_work_mode[in_sync], w.sync_work_start_ts[in_sync]
    if len(modes) and modes[0] == 1:
        return keys0, inodes0, np.ones(len(inodes0), bool), None
    recorded = None
    if len(modes) and (modes == 1).any():
        t1 = int(starts[np.argmax(modes == 1)])
        at_t1 = dirty_inodes_at(w, t1)
        keys_t1 = dirty_at(w, t1)
        recorded = (float(t1 - t0), keys_t1[np.isin(keys_t1 >> 32, at_t1)], at_t1)
    else:
        t1 = t0 + int(_first_pass_ns(w, keys0, inodes0, t0))
    later = inodes_dirtied(w, t0, t1)
    if not len(later):
        return keys0, inodes0, np.zeros(len(inodes0), bool), recorded
    new = not_evicted(w, np.setdiff1d(later, inodes0), t1)
    keys1 = dirty_at(w, t1)
    keys1 = keys1[np.isin(keys1 >> 32, new)]
    inodes = union(inodes0, new)
    return union(keys0, keys1), inodes, np.isin(inodes, new), recorded


def _first_pass_ns(w: Workload, keys0: np.ndarray, inodes0: np.ndarray, t0: int) -> float:
    """How long the WB_SYNC_NONE pass over what was dirty at t0 takes: the capture's pace
    through the flusher's lists when it shows one; without, the flusher's CPU per inode
    or, when longer, the device's time for those bytes, since the pass's submissions
    block once the device's queue is full (request tags, wbt)."""
    if w.flusher_pace_ns:
        return w.flusher_pace_ns * len(inodes0)
    nbytes = float(key_bytes(w, keys0, t0).sum()) + w.metadata_bytes_per_inode * len(inodes0)
    device = w.device.batch_ns(int(requests_for(nbytes)), nbytes) if nbytes else 0.0
    return max(w.inode_writeback_ns * len(inodes0), device)


def _recorded_commit_ns(w: Workload, t0: int, t1: int) -> float:
    """The btrfs transaction commit that ended this sync, as recorded, for a capture
    without btrfs_sync_fs. sync_inodes_sb waits for the flusher's WB_SYNC_ALL work before
    ->sync_fs starts the commit, so the commit began after the flusher's last writeback
    work ending before it (writeback_written); btrfs_transaction_commit fires as the commit
    ends. That span also holds the caller's wait_sb_inodes. 0 without such a commit."""
    commits = w.transaction_commit_ts[(w.transaction_commit_ts > t0) & (w.transaction_commit_ts <= t1)]
    if not len(commits):
        return 0.0
    end = int(commits[-1])
    works = w.writeback_work_end_ts[(w.writeback_work_end_ts >= t0) & (w.writeback_work_end_ts < end)]
    return float(end - (int(works[-1]) if len(works) else t0))


def _recorded_sync_fs_ns(w: Workload, i: int, t_end: int) -> float:
    """The ->sync_fs that ended sync i, as recorded
    (advisor.replay.sync_fs): from where it began to the sync's return. 0 when unknown."""
    if i >= len(w.sync_fs_start_ts) or w.sync_fs_start_ts[i] < 0:
        return 0.0
    return float(t_end - int(w.sync_fs_start_ts[i]))


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


# Before the fix __writeback_single_inode waits on the pages of every inode the flusher
# writes in WB_SYNC_ALL work; with wbc->for_sync it waits there only for a page it finds
# still under writeback from an earlier pass (write_cache_pages), and sync's caller waits
# for the rest in wait_sb_inodes. On 6.1 with the fix reverted the flusher waited on 627
# of the 627 inodes it wrote in that work; on the same build with the fix, on none.
_MIN_WAITED_INODES = 10


def _shown_policy(w: Workload) -> tuple[str, str] | None:
    if w.sync_all_waited_inodes is None:
        return None
    waited, written = w.sync_all_waited_inodes
    if waited >= _MIN_WAITED_INODES and 2 * waited >= written:
        return WAIT_PER_INODE.id, (f"the flusher waited on the pages of {waited:,} of the {written:,} inodes it wrote in its "
                                   "WB_SYNC_ALL sync work, as __writeback_single_inode does before wbc->for_sync")
    return None


MODEL = ProblemModel(
    problem="sync-flusher-stall",
    commit="sync: don't block the flusher thread waiting on IO (3.12, wbc->for_sync)",
    policies=(WAIT_PER_INODE, FOR_SYNC),
    not_applicable=lambda w: needs_op(w, "sync", "sync(2)/syncfs(2)"),
    observed=lambda w: longest_observed(w, "sync", "sync"),
    simulate=_simulate,
    shown_policy=_shown_policy,
)
