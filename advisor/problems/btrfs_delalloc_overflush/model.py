"""btrfs-delalloc-overflush: space reclaim's delalloc flush, whole inodes vs pages.

Kernel path: btrfs_reserve_metadata_bytes → (ticket) → btrfs_async_reclaim_metadata_space
/ priority reclaim → flush_space(FLUSH_DELALLOC, num_bytes) → shrink_delalloc →
btrfs_start_delalloc_roots(fs_info, nr, ...). 5.10's 38d715f494f2 passed `nr` = the
metadata items to reclaim (2 per 256 KiB asked), which start_delalloc_inodes counts in
*inodes*, each flushed whole; "btrfs: shrink delalloc pages instead of full inodes"
(e076ab2a2ca7, 5.11-rc4, 5.10.8) went back to writing a number of pages through sync_inode.

A capture is replayed open-loop: at each space flush request it recorded (btrfs_flush_space
FLUSH_DELALLOC* states, num_bytes asked), the data pages dirty when the step began (oldest
inode first) are written: `flush-inodes` writes `items` whole inodes a loop (up to 3
loops, _whole_inodes), `flush-pages` about num_bytes of their pages. btrfs_flush_space is
traced when the step ends, after the step's own writeback, so "dirty when it began"
counts the capture's writebacks only up to the step's start (the task's previous step;
FlushRequests.since), and a page this replay flushed stays clean until it is dirtied
again. The reserving task waits for that IO (device model, one merged batch). The
capture's requests stay as recorded: what each policy flushes would have changed when
the next request came, which a capture cannot tell.

A synthetic workload that carries its metadata reservations (`untar`) is replayed
closed-loop instead (closed_loop.py): the writer's tickets, the async reclaim worker and
shrink_delalloc decide when each request comes, so the policy changes how many come.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.device import requests_for
from advisor.replay.pages import dirty_at
from advisor.problems.btrfs_delalloc_overflush import closed_loop as delalloc_loop
from advisor.problems.btrfs_delalloc_overflush.space import insert_size
from advisor.replay.model import Policy, ProblemModel, seconds
from advisor.replay.workload import BTRFS_BTREE_INODE, Workload

# mkfs.btrfs's default node size (btrfs-progs 3.12 and later); a capture does not record it.
BTRFS_DEFAULT_NODESIZE = 16384
FLUSH_INODES = Policy("flush-inodes", False, "shrink_delalloc → btrfs_start_delalloc_roots(items) flushes `items` whole inodes a loop")
FLUSH_PAGES = Policy("flush-pages", True, "shrink_delalloc flushes about nr pages (wbc.nr_to_write) through sync_inode")


def _requests(w: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The FLUSH_DELALLOC* steps: end time, bytes asked, start time at the latest."""
    if w.flush is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    keep = w.flush.delalloc
    return w.flush.ts[keep], w.flush.num_bytes[keep], w.flush.since[keep]


def _whole_inodes(keys: np.ndarray, want: int, folio_bytes: int) -> np.ndarray:
    """The inodes one 5.10 shrink_delalloc call flushes whole: `items` per loop
    (calc_reclaim_items_nr(to_reclaim) * 2: to_reclaim over one item's insert size, 256 KiB
    at mkfs.btrfs's default 16 KiB nodes), oldest first, looping again (at most 3 times)
    while the reserving ticket still waits, taken here as while less than `want` bytes
    have been flushed. A 640 KiB request flushes 4 inodes a loop: on 6.1 with the fix
    undone, an untar's reclaim steps wrote 12 inodes each (median), 31 pages."""
    items = 2 * max(1, want // int(insert_size(BTRFS_DEFAULT_NODESIZE, 1)))
    # Keys sort by inode, and inode numbers ascend with creation: oldest first.
    inodes, pages = np.unique(keys >> 32, return_counts=True)
    flushed = np.cumsum(pages) * folio_bytes
    n = 0
    for _ in range(delalloc_loop.LOOPS_PER_CALL):
        n = min(len(inodes), n + items)
        if flushed[n - 1] >= want or n == len(inodes):
            break
    return inodes[:n]


def _not_applicable(w: Workload) -> str | None:
    if w.reservations is not None:
        return None
    if not len(_requests(w)[0]):
        return "no btrfs space flush of delalloc (btrfs_flush_space FLUSH_DELALLOC*) in the workload"
    if not len(w.dirty_ts):
        return "no page dirtying in the workload"
    return None


def _observed(w: Workload) -> dict:
    ts, nbytes, _ = _requests(w)
    return {"flush_space_count": int(len(ts)), "reclaim_requested_bytes": int(nbytes[nbytes > 0].sum())} if len(ts) else {}


def _simulate(w: Workload, policy: Policy) -> dict:
    if w.reservations is not None:
        return delalloc_loop.simulate(w.reservations, w.device, w.inode_writeback_ns, flush_pages=policy.fixed)
    ts, asked, since = _requests(w)
    flushed, waited, requested, bounded_flushed = 0.0, 0.0, 0.0, 0.0
    done_keys, done_ts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    for t, want, t0 in zip(ts, asked, since):
        keys = dirty_at(w, int(t), clean_by=int(t0), written=(done_keys, done_ts))
        # The btree inode's pages (extent buffers) are dirtied through the page cache too,
        # but they are metadata: shrink_delalloc starts delalloc inodes only.
        keys = keys[(keys >> 32) != BTRFS_BTREE_INODE]
        if not len(keys):
            continue
        full = want < 0  # (u64)-1: everything, under either policy
        if full:
            want = len(keys) * w.folio_bytes
        if policy.fixed:
            chosen = keys[: max(1, -(-int(want) // w.folio_bytes))]
        else:
            chosen = keys if full else keys[np.isin(keys >> 32, _whole_inodes(keys, int(want), w.folio_bytes))]
        nbytes = float(len(chosen) * w.folio_bytes)
        done_keys = np.concatenate((done_keys, chosen))
        done_ts = np.concatenate((done_ts, np.full(len(chosen), int(t), np.int64)))
        flushed += nbytes
        if not full:  # the ratio, like the rule's, is over the steps asked for an amount
            requested += want
            bounded_flushed += nbytes
        waited += w.device.batch_ns(int(requests_for(nbytes)), nbytes)
    return {
        "flush_space_count": int(len(ts)),
        "reclaim_requested_bytes": int(asked[asked > 0].sum()),
        "delalloc_flushed_bytes": int(flushed),
        "overflush_ratio": round(bounded_flushed / requested, 3) if requested else None,
        "flush_wait_seconds": seconds(waited),
    }


MODEL = ProblemModel(
    problem="btrfs-delalloc-overflush",
    commit="e076ab2a2ca7 (btrfs: shrink delalloc pages instead of full inodes)",
    policies=(FLUSH_INODES, FLUSH_PAGES),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
