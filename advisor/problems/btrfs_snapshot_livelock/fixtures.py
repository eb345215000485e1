"""Threshold fixtures of btrfs-snapshot-livelock: A snapshot ioctl during which btrfs writes pages, some dirtied after it began."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet

# BTRFS_IOC_SNAP_CREATE_V2 = _IOW(0x94, 23, struct btrfs_ioctl_vol_args_v2)
SNAP_CREATE_V2 = 0x50009417


def snapshot(snap_ns: int, pages: int, late: int) -> Snippet:
    """A snapshot ioctl of snap_ns during which btrfs writes `pages` pages, `late` of them dirtied after it began."""
    s = Snippet()
    for i in range(pages):
        s.event(T0 - 10_000 + i, "fio", 400, "writeback_dirty_folio", name="btrfs-1", ino=257, index=i)
    s.event(T0, "btrfs", 401, "sys_enter_ioctl", __syscall_nr=16, fd=3, cmd=SNAP_CREATE_V2, arg=0x7FFF0000)
    for i in range(late):
        s.event(T0 + 1_000 + i, "fio", 400, "writeback_dirty_folio", name="btrfs-1", ino=257, index=i)
    for i in range(pages):
        s.event(T0 + 10_000 + i, "kworker/u8:1", 31, "extent_writepage", ino=257, index=i, nr_to_write=1024,
                pages_skipped=0, range_start=0, range_end=-1, for_kupdate=0, range_cyclic=0, writeback_index=0, root_objectid=256)
    s.event(T0 + snap_ns, "btrfs", 401, "sys_exit_ioctl", __syscall_nr=16, ret=0)
    return s


CASES = [
    Case("btrfs-snapshot-livelock", "min_snapshot_seconds", "4.20.7", "4.20.8",
         lambda: snapshot(1_000 * MS, 8, 2), lambda: snapshot(999 * MS, 8, 2)),
    Case("btrfs-snapshot-livelock", "min_late_fraction", "4.19.20", "4.19.21",
         lambda: snapshot(1_000 * MS, 8, 2), lambda: snapshot(1_000 * MS, 8, 1)),
]
