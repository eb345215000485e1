"""Threshold fixtures of btrfs-full-fsync-fallback: fsyncs on btrfs, the slow ones during memory reclaim."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet


def fsyncs(n: int, during: int, slow_ns: int) -> Snippet:
    """n fsyncs on btrfs: the last `during` of them slow_ns long, each with direct reclaim
    beginning inside it; the others 1 ms with no reclaim near them. So the median fsync
    during reclaim over the others' is slow_ns / 1 ms. A kswapd wake-up follows them."""
    s = Snippet()
    t = T0
    for i in range(n):
        slow = i >= n - during
        dur = slow_ns if slow else 1 * MS
        s.syscall(t, t + dur, "dbench", 500, "fsync", 74, fd=3)
        s.event(t + 100, "dbench", 500, "btrfs_sync_file", fsid="0", ino=300, parent=256, datasync=0, root_objectid=5)
        if slow:
            s.event(t + 200, "dbench", 500, "mm_vmscan_direct_reclaim_begin", order=0, gfp_flags=0)
        t += dur + 10_000
    s.event(t, "kswapd0", 40, "mm_vmscan_kswapd_wake", nid=0, zid=0, order=0)
    return s


CASES = [
    Case("btrfs-full-fsync-fallback", "min_reclaim_slowdown", "5.8.18", "5.9",
         lambda: fsyncs(100, 20, 3 * MS // 2), lambda: fsyncs(100, 20, 3 * MS // 2 - 10_000)),
    # At the rule's 1 fsync the comparison (10 fsyncs a side at least) would go too: raised to 20.
    Case("btrfs-full-fsync-fallback", "min_reclaim_fsyncs", "5.8.18", "5.9",
         lambda: fsyncs(100, 20, 2 * MS), lambda: fsyncs(100, 19, 2 * MS), value=20.0),
    Case("btrfs-full-fsync-fallback", "min_fsyncs", "5.8.18", "5.9",
         lambda: fsyncs(100, 20, 2 * MS), lambda: fsyncs(99, 20, 2 * MS)),
]
