"""Threshold fixtures of btrfs-delalloc-overflush: Space-reclaim delalloc flush steps and the pages written in their windows."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet

LONG_MAX = 2**63 - 1
U64_MAX = 2**64 - 1


def delalloc(asked_pages: int, written_pages: int, steps: int = 1, whole: int | None = None, data_steps: int = 0) -> Snippet:
    """`steps` FLUSH_DELALLOC steps, 500 ms apart, each asking for asked_pages pages while
    written_pages are written in its window, the first `whole` of them (all by default) by
    a whole-inode flush (nr_to_write counting down from LONG_MAX), the rest under a page
    budget (nr_to_write counting down from 1024). steps=0: the pages are written and space
    reclaim runs one step that is not a delalloc flush (FLUSH_DELAYED_ITEMS_NR).
    Then `data_steps` steps of data-space reclaim, which asks every step for (u64)-1 bytes
    (flags=1, DATA), each writing written_pages pages under a budget of all of them."""
    whole = written_pages if whole is None else whole
    s = Snippet()
    for k in range(max(steps, 1) + data_steps):
        t, data = T0 + k * 500 * MS, k >= max(steps, 1)
        for i in range(written_pages):
            budget = (LONG_MAX - i if i < whole else 1024 - (i - whole)) if not data else written_pages - i
            s.event(t + 1_000 + i, "kworker/u8:3", 32, "extent_writepage", ino=258 + k, index=i, nr_to_write=budget,
                    pages_skipped=0, range_start=0, range_end=-1, for_kupdate=0, range_cyclic=0, writeback_index=0, root_objectid=5)
        s.event(t + 500 * MS, "kworker/u8:3", 32, "btrfs_flush_space", fsid="0", flags=1 if data else 4,
                num_bytes=U64_MAX if data else asked_pages * 4096, state=5 if steps or data else 1, ret=0, for_preempt=0)
    return s


CASES = [
    Case("btrfs-delalloc-overflush", "min_whole_inode_share", "5.10.7", "5.10.8",
         lambda: delalloc(10, 40, whole=20), lambda: delalloc(10, 40, whole=19)),
    Case("btrfs-delalloc-overflush", "min_whole_inode_share", "5.11-rc3", "5.11-rc4",
         lambda: delalloc(10, 40, whole=20), lambda: delalloc(10, 40, whole=19)),
    Case("btrfs-delalloc-overflush", "min_flush_steps", "5.10.7", "5.10.8",
         lambda: delalloc(10, 40, steps=1), lambda: delalloc(10, 40, steps=0), coupled=("min_whole_inode_share",)),
    Case("btrfs-delalloc-overflush", "min_flush_steps", "5.10.7", "5.10.8",
         lambda: delalloc(10, 40, steps=2), lambda: delalloc(10, 40, steps=1), value=2.0),
]
