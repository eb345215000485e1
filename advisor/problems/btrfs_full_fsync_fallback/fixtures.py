"""Threshold fixtures of btrfs-full-fsync-fallback: fsyncs on btrfs, slow ones during memory reclaim."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet

def fsyncs(n: int, slow_ns: int, reclaim: bool) -> Snippet:
    """n fsyncs on btrfs: n-2 of 1 ms and two of slow_ns (p99 = slow_ns, p50 = 1 ms); direct reclaim
    during the last one, or (reclaim=False) only after the fsyncs (a text capture shows an event
    only if it fired, so "recorded but no reclaim during fsyncs" needs one outside them)."""
    s = Snippet()
    t = T0
    for i in range(n):
        dur = slow_ns if i >= n - 2 else 1 * MS
        s.syscall(t, t + dur, "dbench", 500, "fsync", 74, fd=3)
        s.event(t + 100, "dbench", 500, "btrfs_sync_file", fsid="0", ino=300, parent=256, datasync=0, root_objectid=5)
        if reclaim and i == n - 1:
            s.event(t + 200, "dbench", 500, "mm_vmscan_direct_reclaim_begin", order=0, gfp_flags=0)
        t += dur + 10_000
    s.event(t, "kswapd0", 40, "mm_vmscan_kswapd_wake", nid=0, zid=0, order=0)
    if not reclaim:
        s.event(t + 1, "dbench", 500, "mm_vmscan_direct_reclaim_begin", order=0, gfp_flags=0)
    return s


CASES = [
    Case("btrfs-full-fsync-fallback", "min_tail_ratio", "5.8.18", "5.9",
         lambda: fsyncs(100, 4 * MS, True), lambda: fsyncs(100, 4 * MS - 10_000, True)),
    Case("btrfs-full-fsync-fallback", "min_reclaim_fsyncs", "5.8.18", "5.9",
         lambda: fsyncs(100, 4 * MS, True), lambda: fsyncs(100, 4 * MS, False)),
    Case("btrfs-full-fsync-fallback", "min_fsyncs", "5.8.18", "5.9",
         lambda: fsyncs(100, 4 * MS, True), lambda: fsyncs(99, 4 * MS, True)),
]
