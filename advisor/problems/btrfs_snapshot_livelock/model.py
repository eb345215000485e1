"""btrfs-snapshot-livelock: the snapshot's delalloc flush, untagged vs tagged.

Kernel path: btrfs_mksubvol → create_snapshot → btrfs_start_delalloc_snapshot →
start_delalloc_inodes → filemap_flush (range 0..LLONG_MAX, not cyclic) →
extent_writepages → extent_write_cache_pages, then btrfs_wait_ordered_extents.
Before 3cd24c698004 ("btrfs: use tagged writepage to mitigate livelock of snapshot",
5.0-rc1, 4.20.8) the sweep looked pages up by the DIRTY tag as it went, so pages a
writer dirtied ahead of the cursor were written too; after it the sweep tags the dirty
pages TOWRITE when it starts and writes only those.

The model: the dirty set at the ioctl's start (from the capture's dirtying and
writeback events) is swept in (inode, index) order at the device's bandwidth; the
dirtying the capture recorded after the start is replayed open-loop (as recorded: the
writers' throttling is not re-simulated). The ioctl ends when the last page is written
and its IO has completed, plus the transaction commit that creates the snapshot: measured
in the capture (ioctl exit minus the completion of its last page write, the same for
both policies), or four device requests (tree blocks, superblock with flush) without it.
"""

from __future__ import annotations

from advisor.replay.pages import dirty_at, page_ranks, sweep
from advisor.replay.model import Policy, ProblemModel, longest_observed, needs_op, seconds
from advisor.replay.workload import BTRFS_BTREE_INODE, Workload

UNTAGGED = Policy("untagged", False, "extent_write_cache_pages looks up PAGECACHE_TAG_DIRTY as it sweeps: pages dirtied after the snapshot began are written too")
TAGGED = Policy("tagged", True, "tag_pages_for_writeback() marks the dirty set TOWRITE first; the sweep writes only those pages")


def _simulate(w: Workload, policy: Policy) -> dict:
    ops = w.op("snapshot")
    i = ops.longest()
    t0 = int(ops.start[i])
    # The flush starts delalloc of the subvolume's data inodes; the btree inode's pages
    # (btrfs's metadata, inode 1) go out with the transaction commit, not in the sweep:
    # under four random writers a third of the pages dirty at the snapshot were tree blocks.
    start = dirty_at(w, t0)
    start = start[(start >> 32) != BTRFS_BTREE_INODE]
    page_ns = w.device.transfer_ns(w.folio_bytes)
    after = (w.dirty_ts > t0) & (w.dirty_ino != BTRFS_BTREE_INODE)
    pages, page_of_event = page_ranks(w)
    end, written, late, consumed = sweep(pages, start, w.dirty_ts[after], page_of_event[after], t0, page_ns, policy.fixed)
    end += w.device.latency_ns  # btrfs_wait_ordered_extents: the last IO completes
    end += _commit_ns(w, i)
    n_after = int(after.sum())
    # Untagged, the sweep consumed every recorded dirtying up to its end: if it was still
    # chasing when the recorded writing stopped, the capture's end bounds the prediction.
    # (A synthetic workload's writers really stop where its description says.)
    bounded = (not policy.fixed) and not w.params and n_after > 0 and consumed >= n_after and w.dirty_ts[-1] >= w.end_ts - (w.end_ts - t0) // 10
    return {
        "snapshot_seconds": seconds(end - t0),
        "dirty_at_start_bytes": int(len(start)) * w.folio_bytes,
        "written_during_snapshot_bytes": int(written) * w.folio_bytes,
        "written_dirtied_after_start_bytes": int(late) * w.folio_bytes,
        "late_written_fraction": round(late / written, 4) if written else None,
        "lower_bound": bool(bounded),
    }


def _commit_ns(w: Workload, i: int) -> float:
    """What the ioctl does after its flush: the transaction commit that creates the
    snapshot. Measured as the ioctl's end less the completion of its last data write (the
    device's completions when the capture has them; extent_writepage marks a page's
    submission, which a throttled or slow device can complete seconds later)."""
    ops = w.op("snapshot")
    if ops.complete[i]:
        done = w.write_done_ts[(w.write_done_ts >= ops.start[i]) & (w.write_done_ts <= ops.end[i])]
        if len(done):
            return max(0.0, float(ops.end[i] - done.max()))
        inside = (w.page_wb_ts >= ops.start[i]) & (w.page_wb_ts <= ops.end[i])
        if inside.any():
            last_io_done = w.page_wb_ts[inside].max() + w.device.transfer_ns(w.folio_bytes) + w.device.latency_ns
            return max(0.0, float(ops.end[i] - last_io_done))
    if "snapshot commit" not in " ".join(w.assumptions):
        w.assumptions.append("snapshot commit = 4 device requests (the capture does not show the commit phase)")
    return 4.0 * w.device.latency_ns


MODEL = ProblemModel(
    problem="btrfs-snapshot-livelock",
    commit="3cd24c698004d2f7668e0eb9fc1f096f533c791b",
    policies=(UNTAGGED, TAGGED),
    not_applicable=lambda w: needs_op(w, "snapshot", "btrfs snapshot ioctl (BTRFS_IOC_SNAP_CREATE)"),
    observed=lambda w: longest_observed(w, "snapshot", "snapshot"),
    simulate=_simulate,
)
