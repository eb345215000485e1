"""Threshold fixtures of sync-flusher-stall: sync(2) while flusher threads run WB_SYNC_ALL work."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet


def sync_stall(sync_ns: int, all_work_ns: int, flushers: int = 1, waits: tuple[int, int] | None = None,
               waited_inodes: tuple[int, int] | None = None) -> Snippet:
    """sync(2) lasting sync_ns while each of `flushers` flusher threads (one per bdi: a sync
    across that many filesystems) runs WB_SYNC_ALL work for all_work_ns. With `waits`
    (flusher, caller): that many page-writeback waits by the first flusher and by sync's
    caller during the sync (without: the capture has no page-wait event). With
    `waited_inodes` (waited, written): the first flusher writes that many inodes and waits
    on a page of each of the first `waited`, as the code before the fix does."""
    s = Snippet()
    waited, written = waited_inodes or (0, 3)
    for i in range(waited):
        s.event(T0 + 3_000 + i, "kworker/u8:2", 30, "folio_wait_writeback", name="7:0", ino=100 + i, index=0)
    s.event(T0, "sync", 300, "sys_enter_sync", __syscall_nr=162)
    for who, n in zip((("kworker/u8:2", 30), ("sync", 300)), waits or ()):
        for i in range(n):
            s.event(T0 + 1_000 + i, *who, "folio_wait_writeback", name="7:0", ino=100, index=i)
    for f in range(flushers):
        comm, pid, bdi = f"kworker/u8:{2 + f}", 30 + f, f"7:{f}"
        s.event(T0, comm, pid, "writeback_start", name=bdi, nr_pages=1024, sb_dev=0, sync_mode=1,
                for_kupdate=0, range_cyclic=0, for_background=0, reason=2, cgroup_ino=1)
        for i in range(written if f == 0 else 3):
            s.event(T0 + 2_000 + i, comm, pid, "writeback_single_inode", name=bdi, ino=100 + 1000 * f + i, state=0,
                    dirtied_when=0, writeback_index=0, nr_to_write=1024, wrote=4, cgroup_ino=1)
        s.event(T0 + all_work_ns, comm, pid, "writeback_written", name=bdi, nr_pages=0, sb_dev=0,
                sync_mode=1, for_kupdate=0, range_cyclic=0, for_background=0, reason=2, cgroup_ino=1)
    s.event(T0 + sync_ns, "sync", 300, "sys_exit_sync", __syscall_nr=162, ret=0)
    return s


CASES = [
    # two flushers (a sync across two filesystems) keep 2 x 0.999 s of WB_SYNC_ALL work in a 0.999 s sync
    Case("sync-flusher-stall", "min_sync_seconds", "3.10.108", "3.11",
         lambda: sync_stall(1_000 * MS, 1_000 * MS, flushers=2), lambda: sync_stall(999 * MS, 999 * MS, flushers=2)),
    Case("sync-flusher-stall", "min_stall_seconds", "3.10.108", "3.11",
         lambda: sync_stall(1_000 * MS, 1_000 * MS), lambda: sync_stall(1_000 * MS, 999 * MS)),
    Case("sync-flusher-stall", "min_stall_fraction", "3.10.108", "3.11",
         lambda: sync_stall(2_000 * MS, 1_000 * MS), lambda: sync_stall(2_002 * MS, 1_000 * MS)),
    # half the waits by the flusher, then one fewer
    Case("sync-flusher-stall", "min_flusher_wait_share", "3.10.108", "3.11",
         lambda: sync_stall(2_000 * MS, 2_000 * MS, waits=(10, 10)), lambda: sync_stall(2_000 * MS, 2_000 * MS, waits=(9, 10))),
    # The code before the fix shown on a kernel whose release has it: the flusher waited on
    # 10 inodes of the 10 it wrote, then on 9 of 9; on 10 of 20, then 10 of 21.
    Case("sync-flusher-stall", "min_waited_inodes", "3.10.108", "3.11",
         lambda: sync_stall(2_000 * MS, 2_000 * MS, waited_inodes=(10, 10)),
         lambda: sync_stall(2_000 * MS, 2_000 * MS, waited_inodes=(9, 9)), code_path=True),
    Case("sync-flusher-stall", "min_waited_inode_share", "3.10.108", "3.11",
         lambda: sync_stall(2_000 * MS, 2_000 * MS, waited_inodes=(10, 20)),
         lambda: sync_stall(2_000 * MS, 2_000 * MS, waited_inodes=(10, 21)), code_path=True),
]
