"""The benchmark published with "sync: don't block the flusher thread waiting on IO" (7747bd4bceb3):
fs_mark creating 4 KiB files on XFS at about 36,000 files/s, and one sync(2) run
concurrently, after about 880,000 files.

Each file is a new inode with one dirty page, created at `files_per_s` (fs_mark's
rate before the sync, from the published table) by `threads` threads in turn. Background
writeback keeps the dirty count near the background threshold, oldest file first
(machine.py); the files still dirty when sync starts are what it must write.
`inode_cpu` is the flusher's CPU per inode (writepages, bio building) without waiting:
sample_traces/sync-xfs-v6.dat measures 6.3 us on this project's 2-core machine; the
default is the replay's general default, 20 us, because the published benchmark's machine is unknown.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.synthetic.description import Param
from advisor.replay.synthetic.machine import Machine, check_size, throttled
from advisor.replay.workload import Ops, Workload

NAME = "fsmark-sync"
SUMMARY = "sync(2) while fs_mark creates small files (the benchmark published with 7747bd4bceb3: 36k files/s of 4 KiB, sync after ~880k files)"
DEVICE = "ssd"
PARAMS = {
    "files_per_s": Param("36000", "number", "fs_mark's file creation rate"),
    "file_size": Param("4k", "size", "fs_mark -s"),
    "threads": Param("8", "count", "fs_mark threads (-t)"),
    "sync_at": Param("24s", "duration", "when sync(2) starts (880,000 files at 36,000 files/s)", zero_ok=True),
    "inode_cpu": Param("20us", "duration", "flusher CPU per inode written, without the IO wait"),
    "metadata_per_inode": Param("0", "size", "metadata bytes written per inode (inode cluster, log)", zero_ok=True),
}
FIRST_INODE = 1000
SYNC_PID = -2  # the task running sync(2): none of the fs_mark threads


def build(v: dict, m: Machine) -> Workload:
    page = 4096
    size = max(page, v["file_size"])
    sync_at = int(v["sync_at"])
    # Keep creating for as long again after the sync starts: the sync must not see them.
    until = 2.0 * sync_at
    flow = throttled(m, v["files_per_s"] * size, until)
    n = check_size(NAME, flow.dirtied[-1] // size)
    pos = (np.arange(n, dtype=np.float64) + 1) * size
    ts = flow.times_of(pos).astype(np.int64)
    ino = FIRST_INODE + np.arange(n, dtype=np.int64)
    cleaned = flow.cleaned_at(pos, ts.astype(np.float64)).astype(np.int64)
    order = np.argsort(cleaned, kind="stable")
    none = np.array([-1], dtype=np.int64)
    return Workload(
        source=f"synthetic {NAME}: {n:,} files of {size} bytes at {v['files_per_s']:,.0f} files/s",
        page_size=page, start_ts=0, end_ts=int(until),
        dirty_ts=ts, dirty_ino=ino, dirty_idx=np.zeros(n, np.int64),
        dirty_pid=np.arange(n, dtype=np.int64) % max(1, v["threads"]),
        device=m.device,
        ops={"sync": Ops(np.array([SYNC_PID]), np.array([sync_at]), none, none)},
        inode_wb_ts=cleaned[order], inode_wb_ino=ino[order], inode_wb_all_written=np.ones(n, bool),
        dirty_limit_pages=int(m.limit_bytes // page), folio_bytes=size, reclaim_events=0,
        inode_writeback_ns=float(v["inode_cpu"]), metadata_bytes_per_inode=float(v["metadata_per_inode"]),
    )
