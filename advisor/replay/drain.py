"""How fast the device drains a backlog of writeback: the rate a sweep of many dirty
pages (a snapshot's flush, a sync) actually gets, which a request's own time in the
device can hide.

A throttle upstream of the request queue (blk-throttle, a cgroup's io.max) holds bios
before block_bio_queue, so the device idles between short requests while writeback
waits: on a 40 MiB/s io.max-capped loop device a snapshot's 118 MB were submitted in
87 ms and completed over 2.84 s, each ~470 KiB request taking 2.7 ms in the device
(877 MB/s of busy time, 42 MB/s drained). So the rate is measured over the periods when
data was backlogged (at least BACKLOG_REQUESTS requests' worth submitted and not yet
completed), and used when the device sat idle for most of them: there the limit is
upstream of the device (the throttled snapshot's device was busy 5% of its backlogged
time). A device busy through its backlog (92% on an unthrottled snapshot, 88% under an XFS
sync) is its own limit, measured by its busy time; a latency-bound workload (fsyncs
writing 16 KiB at a time) is never backlogged.

When data was submitted is known from page-level events (btrfs's extent_writepage, the
pages writeback_single_inode wrote), matched to completions in order; without them, from
the kernel's count of pages under writeback (global_dirty_state's nr_writeback).

A throttle can also hold the flusher itself, so that nothing piles up between its
submissions and their completions: under sync on an 8 MiB/s-capped loop device, ext4's
flusher wrote 1,024 8 KiB files a second, in bursts 9.8 us an inode apart, while each
~575 KiB request took 0.4 ms in the device. Then the rate is the one writes completed at
while the flusher's writeback work ran, when neither the device (busy) nor the flusher's
CPU (its inodes at the burst pace) filled that time.
"""

from __future__ import annotations

import numpy as np

# Backlogged: at least this many median requests' worth of data submitted, not completed.
BACKLOG_REQUESTS = 4
# Fewer requests completed while backlogged than this say too little about the rate.
MIN_BACKLOGGED_REQUESTS = 16
# The limit is upstream of the device when it was idle for most of the backlogged time.
MAX_BUSY_WHILE_BACKLOGGED = 0.5
# Submitted and completed data may differ (compression, writes of other devices in the
# capture): beyond this ratio either way the matching in order means nothing.
MAX_COVERAGE_RATIO = 2.0
# The flusher's CPU fills its work when its inodes, at the pace of its bursts, take more
# than this share of the work's time: its pace is its own, not a throttle's.
MAX_CPU_WHILE_WORKING = 0.5
# Consecutive inodes one flusher thread wrote less than this apart are one burst of
# submissions (no IO wait between them): the median gap is its CPU per inode.
BURST_GAP_NS = 1_000_000
# Matched submissions must precede their requests: when more of the data than this is
# matched to a submission after its request was issued, the submission events do not
# describe the same flow (fsync-driven writes that no writeback event shows, or events
# traced when a submission ends, as writeback_single_inode is).
MAX_LATE_MATCHED = 0.10


def busy_ns(start: np.ndarray, end: np.ndarray) -> float:
    """Length of the union of [start, end) intervals (start sorted): time with IO in flight."""
    reach = np.maximum.accumulate(end)
    # A new busy period starts where a request begins after everything before it ended.
    gap_before = np.concatenate(([True], start[1:] > reach[:-1]))
    idx = np.flatnonzero(gap_before)
    period_end = np.concatenate((reach[idx[1:] - 1], [reach[-1]]))
    return float((period_end - start[idx]).sum())


def drained_rate(con, views, start, end, nbytes, meta) -> tuple[float, str] | None:
    """(bytes/s, when and how it was measured) over the backlogged periods or while the
    flusher worked at a pace set upstream of the device, whichever more completed requests
    show; None when the capture shows neither (or cannot tell when data was submitted),
    or when the device was busy through its backlog (its own limit)."""
    data = ~meta
    if data.sum() < MIN_BACKLOGGED_REQUESTS:
        return None
    order = np.argsort(end[data], kind="stable")
    c_start, c_end, c_bytes = start[data][order], end[data][order], nbytes[data][order]
    threshold = BACKLOG_REQUESTS * float(np.median(c_bytes))
    matched = _fifo_submission(con, views, c_start, c_bytes)
    if matched is not None:
        sub_at, what = matched
        windows = backlogged(np.minimum(sub_at, c_start), c_end, c_bytes, threshold)
    else:
        windows, what = _counter_windows(con, views, c_end, c_bytes, threshold), \
            "the kernel's count of pages under writeback (global_dirty_state nr_writeback)"
    measured = []
    if windows is not None:
        lo, hi = windows
        if _overlap(lo, hi, *merged(start, end)) > MAX_BUSY_WHILE_BACKLOGGED * float((hi - lo).sum()):
            return None  # the device itself was the limit
        # Every write completed inside the windows (metadata too: a throttle holds it back
        # alike; XFS wrote 256 MB of log and inode clusters beside 491 MB of data under one
        # sync), over the windows' length.
        n, completed = _completed_in(lo, hi, end, nbytes)
        length = float((hi - lo).sum())
        if n >= MIN_BACKLOGGED_REQUESTS and length > 0:
            measured.append((n, completed * 1e9 / length, f"while backlogged, from {what}"))
    # A throttle that holds the flusher itself leaves few backlogged moments (under a sync
    # of 22.5 s on an 8 MiB/s-capped loop device: 1.2 s of them, 17 requests, drained at
    # 6.6 MB/s): the rate over the flusher's whole work, when more requests show it, is the
    # better measure (7.8 MB/s there).
    paced = _paced_upstream(con, views, start, end, nbytes)
    if paced is not None:
        measured.append(paced)
    if not measured:
        return None
    _, rate, how = max(measured, key=lambda m: m[0])
    return rate, how


def _completed_in(lo: np.ndarray, hi: np.ndarray, end: np.ndarray, nbytes: np.ndarray) -> tuple[int, float]:
    """How many requests completed inside the sorted disjoint intervals, and their bytes."""
    order = np.argsort(end, kind="stable")
    done_at, done = end[order], np.concatenate(([0.0], np.cumsum(nbytes[order])))
    first, last = np.searchsorted(done_at, lo, side="right"), np.searchsorted(done_at, hi, side="right")
    return int((last - first).sum()), float((done[last] - done[first]).sum())


def _paced_upstream(con, views, start, end, nbytes) -> tuple[int, float, str] | None:
    """(requests completed, bytes/s, how) for the writes that completed while the flusher's
    writeback work ran, over that time less its CPU time, when the device was idle for
    most of it and the flusher's CPU filled less than half of it; None otherwise."""
    if not (views.met("writeback_works") and views.met("inode_writeback")):
        return None
    r = con.execute("SELECT start_ts, end_ts FROM writeback_works WHERE end_ts > start_ts").fetchnumpy()
    if not len(r["start_ts"]):
        return None
    lo, hi = merged(np.asarray(r["start_ts"], np.int64), np.asarray(r["end_ts"], np.int64))
    length = float((hi - lo).sum())
    busy = _overlap(lo, hi, *merged(start, end))
    if busy > MAX_BUSY_WHILE_BACKLOGGED * length:
        return None
    per_inode = flusher_cpu_per_inode(con)
    if per_inode is None or per_inode[1] < MIN_BACKLOGGED_REQUESTS:
        return None
    ts = np.asarray(con.execute("SELECT ts FROM inode_writeback WHERE kind = 'written' ORDER BY ts").fetchnumpy()["ts"], np.int64)
    inodes = int(_inside_count(ts, lo, hi))
    cpu = inodes * per_inode[0]
    if cpu > MAX_CPU_WHILE_WORKING * length:
        return None
    n, completed = _completed_in(lo, hi, end, nbytes)
    if n < MIN_BACKLOGGED_REQUESTS:
        return None
    return n, completed * 1e9 / (length - cpu), (
        f"while the flusher's writeback work ran ({length / 1e9:.1f} s, the device busy {busy / length:.0%} "
        f"of it and the flusher's CPU about {cpu / length:.0%}, {inodes:,} inodes at {per_inode[0] / 1e3:.1f} us: "
        "its submissions were paced upstream of the device)")


def flusher_cpu_per_inode(con) -> tuple[float, int] | None:
    """(ns, gaps): the median gap between consecutive inodes one flusher thread wrote in
    one burst (less than BURST_GAP_NS apart), and how many such gaps; None without any."""
    row = con.execute(
        "SELECT median(gap), count(gap) FROM (SELECT ts - lag(ts) OVER (PARTITION BY pid ORDER BY ts) AS gap "
        f"FROM inode_writeback WHERE kind = 'written') WHERE gap > 0 AND gap < {BURST_GAP_NS}").fetchone()
    return (float(row[0]), int(row[1])) if row and row[1] else None


def _inside_count(ts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> int:
    """How many of the sorted times fall in the sorted disjoint intervals [lo, hi]."""
    return int((np.searchsorted(ts, hi, side="right") - np.searchsorted(ts, lo, side="left")).sum())


def merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of [start, end) intervals as sorted disjoint intervals."""
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    new = np.concatenate(([True], start[1:] > reach[:-1]))
    idx = np.flatnonzero(new)
    return start[idx], np.concatenate((reach[idx[1:] - 1], [reach[-1]]))


def _overlap(a_lo, a_hi, b_lo, b_hi) -> float:
    """Total length of the intersection of two sets of sorted disjoint intervals."""
    total, j = 0.0, 0
    for lo, hi in zip(a_lo, a_hi):
        while j < len(b_hi) and b_hi[j] <= lo:
            j += 1
        k = j
        while k < len(b_lo) and b_lo[k] < hi:
            total += max(0, min(hi, b_hi[k]) - max(lo, b_lo[k]))
            k += 1
    return total


def backlogged(pending_start, pending_end, pending_bytes, threshold) -> tuple[np.ndarray, np.ndarray] | None:
    """The intervals during which at least `threshold` bytes were pending."""
    t = np.concatenate((pending_start, pending_end))
    delta = np.concatenate((pending_bytes, -pending_bytes))
    order = np.lexsort((delta, t))  # at one instant, completions before submissions
    t, level = t[order], np.cumsum(delta[order])
    above = level >= threshold
    if not above.any():
        return None
    # An interval runs from each step that rises to the threshold to the next that falls below.
    rise = np.flatnonzero(above & np.concatenate(([True], ~above[:-1])))
    fall = np.flatnonzero(~above & np.concatenate(([False], above[:-1])))
    ends = np.concatenate((t[fall], [t[-1]]))[: len(rise)]
    return t[rise], ends


def _counter_windows(con, views, c_end, c_bytes, threshold) -> tuple[np.ndarray, np.ndarray] | None:
    """Intervals between consecutive global_dirty_state samples that both count at least
    `threshold` bytes under writeback, and at least as much as this device completed
    meanwhile (the counter is global: pages stuck under writeback on another device must
    not make this one look backlogged), with completions in them."""
    if not views.met("dirty_state.nr_writeback"):
        return None
    r = con.execute("SELECT ts, nr_writeback * page_bytes() AS wb FROM dirty_state ORDER BY ts").fetchnumpy()
    ts, wb = np.asarray(r["ts"], np.int64), np.asarray(r["wb"], np.float64)
    if len(ts) < 2:
        return None
    done = np.concatenate(([0.0], np.cumsum(c_bytes)))
    first, last = np.searchsorted(c_end, ts[:-1], side="right"), np.searchsorted(c_end, ts[1:], side="right")
    completed = done[last] - done[first]
    ok = (wb[:-1] >= threshold) & (wb[1:] >= threshold) & (wb[:-1] >= completed) & (completed > 0)
    return (ts[:-1][ok], ts[1:][ok]) if ok.any() else None


def _submissions(con, views) -> tuple[np.ndarray, np.ndarray, str] | None:
    """When data was handed to the block layer, before anything holds it back: btrfs's
    per-page extent_writepage, else the pages each inode writeback wrote."""
    sources = (("pages_written", "SELECT ts, page_bytes() AS bytes FROM pages_written WHERE ino <> 1 ORDER BY ts",
                "pages submitted (extent_writepage)"),
               ("inode_writeback.wrote", "SELECT ts, wrote * page_bytes() AS bytes FROM inode_writeback "
                "WHERE kind = 'written' AND wrote > 0 ORDER BY ts", "pages each inode writeback wrote (writeback_single_inode)"))
    for need, sql, what in sources:
        if views.met(need):
            r = con.execute(sql).fetchnumpy()
            if len(r["ts"]) >= 2:
                return np.asarray(r["ts"], np.int64), np.asarray(r["bytes"], np.float64), what
    return None


def _fifo_submission(con, views, c_start: np.ndarray, c_bytes: np.ndarray) -> tuple[np.ndarray, str] | None:
    """For each completed data request (in completion order), when its data was submitted,
    matching submissions to completions in order; None when the two do not match up."""
    subs = _submissions(con, views)
    if subs is None:
        return None
    sub_ts, sub_bytes, what = subs
    ratio = sub_bytes.sum() / c_bytes.sum()
    if not (1 / MAX_COVERAGE_RATIO <= ratio <= MAX_COVERAGE_RATIO):
        return None
    completed_before = np.concatenate(([0.0], np.cumsum(c_bytes)[:-1])) * ratio
    k = np.minimum(np.searchsorted(np.cumsum(sub_bytes), completed_before, side="right"), len(sub_ts) - 1)
    late = sub_ts[k] > c_start
    if c_bytes[late].sum() > MAX_LATE_MATCHED * c_bytes.sum():
        return None
    return sub_ts[k], what
