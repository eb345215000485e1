"""Where each sync's ->sync_fs began, as the capture recorded it.

sync(2) (ksys_sync) first writes the inodes and waits for their pages (sync_inodes_sb),
then calls every superblock's ->sync_fs (ext4: a commit of the running jbd2 transaction
and a cache flush; XFS: a synchronous log force), then writes the block devices' own
page cache. The flusher policies replayed change only the first part, so the rest is
replayed as recorded. Where it began, best first:

* ext4_sync_fs (view sync_fs_calls), the first call's entry. Under dbench on ext4 a
  11.37 s sync reached it 11,067.73 ms in and returned 0.30 s later.
* Without it, the later of the sync's last data write completion (block_requests, RWBS
  without M) and the end of the flusher's last work item within the sync: wait_sb_inodes
  returns once the last page it waits for is written. On the same sync: 11,067.43 ms.
  On the blk-ext4-fsync VM capture, a 10.19 ms sync wrote its last data 2.80 ms in, then
  five journal writes (RWBS WSM, the commit block with FUA) took the rest.

On btrfs ->sync_fs is a transaction commit. btrfs_sync_fs traces its entry; without it
the commit is read from btrfs_transaction_commit instead, which fires as the commit ends
(problems/sync_flusher_stall/model.py), and everything after the flusher's last work item
counts as commit: on a 5.03 s sync under fs_mark on btrfs that took 1.62 s of the sync
caller's waits on pages still under writeback (wait_sb_inodes) for 3.40 s of ->sync_fs.
"""

from __future__ import annotations

import numpy as np


def read(con, views, w) -> None:
    """Set w.writeback_work_end_ts and, per sync (w.op("sync")), w.sync_fs_start_ts."""
    ops = w.op("sync")
    if not len(ops):
        return
    if views.met("writeback_works"):
        w.writeback_work_end_ts = np.asarray(con.execute(
            "SELECT end_ts FROM writeback_works WHERE end_ts IS NOT NULL ORDER BY end_ts").fetchnumpy()["end_ts"], np.int64)
    complete = ops.end >= 0
    calls = np.zeros(0, np.int64)
    if views.met("sync_fs_calls"):
        calls = np.asarray(con.execute("SELECT ts FROM sync_fs_calls ORDER BY ts").fetchnumpy()["ts"], np.int64)
    if w.records("btrfs") and not len(calls):
        return  # the transaction commit's end stands in for it (module docstring)
    if len(calls):
        j = np.searchsorted(calls, ops.start, "left")
        at = calls[np.minimum(j, len(calls) - 1)]
        start = np.where((j < len(calls)) & (at <= ops.end), at, -1)
        source = f"from its first ->sync_fs call (ext4_sync_fs, btrfs_sync_fs: {len(calls)} recorded)"
    elif views.met("block_requests"):
        data = _last_within(w.write_done_ts, ops.start, ops.end)
        work = _last_within(w.writeback_work_end_ts, ops.start, ops.end)
        # Neither the sync's data nor its flusher work in the capture: nothing says where
        # the inodes' part ended.
        start = np.where((data >= 0) | (work >= 0), np.maximum(np.maximum(data, work), ops.start), -1)
        source = ("from the sync's last data write completion or flusher work end, whichever is later "
                  "(no ext4_sync_fs in the capture; another task's data write completing after the sync's own would shorten it)")
    else:
        w.assumptions.append("the filesystems' ->sync_fs after a sync's inodes (ext4's journal commit, XFS's log force) is not "
                             "replayed: the capture shows neither ext4:ext4_sync_fs nor block requests to tell when it began")
        return
    w.sync_fs_start_ts = np.where(complete, start, -1)
    if (w.sync_fs_start_ts >= 0).any():
        w.assumptions.append("each sync's ->sync_fs (journal commit, log force, cache flush) is replayed as recorded, "
                             f"{source}: the sync policies change the flusher's pass, not the commit")


def _last_within(ts: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per interval [start, end], the last of the sorted times ts inside it, else -1."""
    if not len(ts):
        return np.full(len(start), -1, np.int64)
    k = np.searchsorted(ts, end, "right") - 1
    last = ts[np.maximum(k, 0)]
    return np.where((k >= 0) & (last >= start), last, -1)
