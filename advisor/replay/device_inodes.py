"""The device as inode writeback shows it, for a capture without block events.

Users often record `-e writeback` and a filesystem's events but not `-e block`. Such a
capture still shows when each inode's data went under writeback and when it came back:
sb_mark_inode_writeback fires as an inode with no page under writeback gets its first,
sb_clear_inode_writeback as its last one completes (both since Linux 4.19, commit
6c60d2b5746c "fs/fs-writeback.c: add a new writeback list for sync"). Between the two the
inode's pages are in the block layer or the device: one "episode" per inode, here a
4 KiB file of fs_mark's put under writeback by the flusher during a sync, back 2.8 ms later:

    kworker/u8:1-29867 [000] 24535.030573: sb_mark_inode_writeback: dev 7,0 ino 393219 ...
    kworker/u8:0-12    [000] 24535.033407: sb_clear_inode_writeback: dev 7,0 ino 393219 ...

The pages an episode carried are those the capture shows dirtied in that inode since its
previous episode began (its dirtying events, distinct page indices). From these the
device is measured as from block requests (advisor.replay.device): the rate over the
periods when at least BACKLOG_REQUESTS median episodes' worth of data was in flight (a
sync's sweep through 20,000 small files on an 8 MiB/s-throttled loop device: 6.9 MB/s),
else over the time any inode was under writeback (a lower bound: the device may have
waited on the writer). Episodes that wrote nothing (ext4's journal commit marking and
clearing an inode whose pages it re-dirtied: advisor.replay.redirty) are left out. What
an episode cannot show: requests (an inode's pages may go out as one request or many),
metadata and journal writes (no inode episode carries them), and the time the data spent
queued above the device, which is part of each episode. So latency and queue depth are
per inode, not per request, and said to be.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.asof import first_at_or_after, last_at_or_before
from advisor.replay.device import Device
from advisor.replay.drain import BACKLOG_REQUESTS, MIN_BACKLOGGED_REQUESTS, backlogged
from advisor.replay.drain import busy_ns as _busy_ns

# Fewer episodes than this say too little about the device.
MIN_EPISODES = 16


def episodes(marked_ts, marked_ino, completed_ts, completed_ino, dirty_ts, dirty_ino, dirty_idx):
    """(start, end, pages) of each inode writeback episode that carried dirtied pages, by
    start. Each completion pairs with the inode's latest mark at or before it (marks and
    clears alternate per inode: a mark needs the inode to have no page under writeback, a
    clear leaves it with none), and each dirtied page with the first episode of its inode
    that starts at or after it."""
    z = np.zeros(0, np.int64)
    mark = last_at_or_before(marked_ino, marked_ts, completed_ino, completed_ts)
    paired = mark >= 0
    if not paired.any():
        return z, z, z
    by_mark = np.lexsort((completed_ts[paired], mark[paired]))
    m, c = mark[paired][by_mark], completed_ts[paired][by_mark]
    first = np.concatenate(([True], m[1:] != m[:-1]))
    marks, end = m[first], c[first]  # each mark's first completion; marks come in time order
    start, ino = marked_ts[marks], marked_ino[marks]
    data = dirty_idx >= 0
    ep = first_at_or_after(ino, start, dirty_ino[data], dirty_ts[data])
    has = ep >= 0
    pairs = np.unique(np.stack((ep[has], dirty_idx[data][has])), axis=1)  # distinct (episode, page)
    pages = np.bincount(pairs[0], minlength=len(marks)) if pairs.size else np.zeros(len(marks), np.int64)
    keep = (pages > 0) & (end > start)
    return start[keep], end[keep], pages[keep]


def fit_from_inodes(marked_ts, marked_ino, completed_ts, completed_ino, dirty_ts, dirty_ino, dirty_idx,
                    page_size: int) -> Device | None:
    """The device measured from inode writeback episodes (the workload's, without those
    that wrote nothing: advisor.replay.redirty), or None when there are too few."""
    start, end, pages = episodes(marked_ts, marked_ino, completed_ts, completed_ino, dirty_ts, dirty_ino, dirty_idx)
    nbytes = pages.astype(np.float64) * page_size
    if len(start) < MIN_EPISODES:
        return None
    dur = end - start
    busy = _busy_ns(start, end)
    bandwidth, how = _rate(start, end, nbytes, busy)
    depth = max(1.0, dur.sum() / busy)
    fixed, samples, sample_bytes, alone = _latency(start, end, nbytes, bandwidth)
    return Device(
        name="capture",
        bandwidth=float(bandwidth),
        latency_ns=int(max(fixed, 1_000)),
        queue_depth=float(depth),
        source=(f"measured from {len(start)} inode writebacks (sb_mark_inode_writeback -> sb_clear_inode_writeback, "
                f"pages from the inodes' dirtying): {how}; {alone}; queue depth in inodes, not requests"),
        latency_samples_ns=samples,
        median_request_bytes=sample_bytes,
    )


def _rate(start, end, nbytes, busy) -> tuple[float, str]:
    """Bytes/s while backlogged when the capture was, else over the busy time."""
    threshold = BACKLOG_REQUESTS * float(np.median(nbytes))
    windows = backlogged(start, end, nbytes, threshold)
    if windows is not None:
        lo, hi = windows
        order = np.argsort(end, kind="stable")
        done_at, done = end[order], np.concatenate(([0.0], np.cumsum(nbytes[order])))
        first, last = np.searchsorted(done_at, lo, side="right"), np.searchsorted(done_at, hi, side="right")
        n, length = int((last - first).sum()), float((hi - lo).sum())
        if n >= MIN_BACKLOGGED_REQUESTS and length > 0:
            return (float((done[last] - done[first]).sum()) * 1e9 / length,
                    f"data completed while {BACKLOG_REQUESTS}+ median inodes' worth was in flight")
    return float(nbytes.sum()) * 1e9 / busy, "data over the time any inode was under writeback (never backlogged: a lower bound)"


def _latency(start, end, nbytes, bandwidth) -> tuple[float, np.ndarray, float, str]:
    """A write's fixed cost beyond its transfer, the times of writes made one at a time
    (the inodes written while no other was under writeback: an fsync's, a
    sync_file_range's) and their median size, from those episodes. One that overlaps
    another includes time queued behind it (a sync that puts 120,000 inodes under
    writeback at once onto a throttled device: each one's episode is mostly the wait for
    those before it), so it says nothing about one write's cost."""
    reach = np.maximum.accumulate(end)
    before = np.concatenate(([False], start[1:] < reach[:-1]))  # overlaps an earlier episode
    after = np.concatenate((start[1:] < end[:-1], [False]))  # the next one starts before it ends
    alone = ~before & ~after
    if alone.sum() < MIN_EPISODES:
        return 0.0, np.zeros(0, np.int64), 0.0, (f"{int(alone.sum())} inodes written alone, too few to time one write: "
                                                  "writes cost their transfer only")
    dur, size = (end - start)[alone], nbytes[alone]
    small = size <= np.percentile(size, 25)
    fixed = float(np.median(dur[small] - size[small] * 1e9 / bandwidth))
    return fixed, np.sort(dur), float(np.median(size)), f"one write's time from the {int(alone.sum())} inodes written alone"
