"""Tiny trace snippets in `trace-cmd report -R` text form, for rule thresholds.

The values are invented to sit exactly at (or just off) a rule's threshold;
everything else about them (field names, line layout) is what trace-cmd prints
for these events, and they go through the real text parser and store.
"""

from __future__ import annotations

from pathlib import Path

SNAP_CREATE_V2 = 0x50009417
MS = 1_000_000


class Snippet:
    def __init__(self):
        self.lines: list[tuple[int, str]] = []

    def event(self, ts_ns: int, comm: str, pid: int, event: str, /, **fields) -> "Snippet":
        body = " ".join(f"{k}={v}" for k, v in fields.items())
        line = f"{comm:>16}-{pid:<5} [000] {ts_ns // 10**9:>5}.{ts_ns % 10**9:09d}: {event + ':':<22} {body}"
        self.lines.append((ts_ns, line))
        return self

    def syscall(self, start: int, end: int, comm: str, pid: int, name: str, nr: int, **fields) -> "Snippet":
        self.event(start, comm, pid, f"sys_enter_{name}", __syscall_nr=nr, **fields)
        return self.event(end, comm, pid, f"sys_exit_{name}", __syscall_nr=nr, ret=0)

    def write(self, path: Path) -> Path:
        path.write_text("cpus=1\n" + "\n".join(line for _, line in sorted(self.lines, key=lambda x: x[0])) + "\n")
        return path


T0 = 100 * 10**9


def stable_page_wait(stall_ns: int, stalls: int = 1) -> Snippet:
    """`stalls` pwrite64s that each wait on page writeback and last stall_ns, plus 50 fast writes."""
    s = Snippet()
    t = T0
    for i in range(50):
        s.syscall(t, t + 10_000, "fio", 200, "pwrite64", 18, fd=3, buf=0x1000, count=4096, pos=4096 * i)
        t += 100_000
    for i in range(stalls):
        s.syscall(t, t + stall_ns, "fio", 200, "pwrite64", 18, fd=3, buf=0x1000, count=4096, pos=4096 * i)
        s.event(t + 1_000, "fio", 200, "folio_wait_writeback", name="7:0", ino=12, index=i)
        t += stall_ns + 100_000
    if not stalls:
        # a text capture shows an event only if it fired: without any page wait the capture
        # would read as "not recorded"; this one is the flusher's, outside every write
        s.event(t, "kworker/u8:1", 31, "folio_wait_writeback", name="7:0", ino=12, index=0)
    return s


def sync_stall(sync_ns: int, all_work_ns: int, flushers: int = 1) -> Snippet:
    """sync(2) lasting sync_ns while each of `flushers` flusher threads (one per bdi: a sync
    across that many filesystems) runs WB_SYNC_ALL work for all_work_ns."""
    s = Snippet()
    s.event(T0, "sync", 300, "sys_enter_sync", __syscall_nr=162)
    for f in range(flushers):
        comm, pid, bdi = f"kworker/u8:{2 + f}", 30 + f, f"7:{f}"
        s.event(T0, comm, pid, "writeback_start", name=bdi, nr_pages=1024, sb_dev=0, sync_mode=1,
                for_kupdate=0, range_cyclic=0, for_background=0, reason=2, cgroup_ino=1)
        for i in range(3):
            s.event(T0 + 2_000 + i, comm, pid, "writeback_single_inode", name=bdi, ino=100 + 10 * f + i, state=0,
                    dirtied_when=0, writeback_index=0, nr_to_write=1024, wrote=4, cgroup_ino=1)
        s.event(T0 + all_work_ns, comm, pid, "writeback_written", name=bdi, nr_pages=0, sb_dev=0,
                sync_mode=1, for_kupdate=0, range_cyclic=0, for_background=0, reason=2, cgroup_ino=1)
    s.event(T0 + sync_ns, "sync", 300, "sys_exit_sync", __syscall_nr=162, ret=0)
    return s


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


def delalloc(asked_pages: int, written_pages: int, steps: int = 1) -> Snippet:
    """`steps` FLUSH_DELALLOC steps, 500 ms apart, each asking for asked_pages pages while
    written_pages are written in its window. steps=0: the pages are written and space
    reclaim runs one step that is not a delalloc flush (FLUSH_DELAYED_ITEMS_NR)."""
    s = Snippet()
    for k in range(max(steps, 1)):
        t = T0 + k * 500 * MS
        for i in range(written_pages):
            s.event(t + 1_000 + i, "kworker/u8:3", 32, "extent_writepage", ino=258 + k, index=i, nr_to_write=1024,
                    pages_skipped=0, range_start=0, range_end=-1, for_kupdate=0, range_cyclic=0, writeback_index=0, root_objectid=5)
        s.event(t + 500 * MS, "kworker/u8:3", 32, "btrfs_flush_space", fsid="0", flags=4, num_bytes=asked_pages * 4096,
                state=5 if steps else 1, ret=0, for_preempt=0)
    return s
