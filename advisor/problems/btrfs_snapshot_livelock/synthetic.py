"""The benchmark published with 3cd24c698004: fio buffered writers into a btrfs
subvolume, and a read-only snapshot of it taken a few seconds in.

    fio --ioengine=libaio --iodepth=32 --bs=4k --rw=write --size=64G --direct=0
        --numjobs=1 --time_based --runtime=120 --filename=/mnt/sub/testfile & sleep 5;
    time btrfs sub snap -r /mnt/sub /mnt/snap

(the random case: --rw=randwrite --numjobs=4). All jobs write the one file, as
--filename makes them; sequential jobs each start at their own 1/jobs of it. fio stops
writing at `runtime` (time_based). Buffered writes are paced by balance_dirty_pages
(machine.py); the snapshot ioctl starts at `snapshot_at`.

A sequential writer's dirtying is generated in 1 MiB units: a writeback sweep treats 256
consecutive pages dirtied one after another exactly as one unit of 256 pages, and the
replay stays small. Random writes are generated page by page (`bs`).
"""

from __future__ import annotations

import numpy as np

from advisor.replay.synthetic.description import Param
from advisor.replay.synthetic.machine import Machine, check_size, throttled
from advisor.replay.workload import Ops, Workload

NAME = "fio-snapshot"
SUMMARY = "btrfs snapshot under fio buffered writers (the benchmark published with 3cd24c698004: rw=write jobs=1, or rw=randwrite jobs=4)"
DEVICE = "ssd"
PARAMS = {
    "rw": Param("write", "write|randwrite", "fio --rw"),
    "jobs": Param("1", "count", "fio --numjobs, all writing the one file"),
    "bs": Param("4k", "size", "fio --bs"),
    "size": Param("64G", "size", "fio --size: the file"),
    "runtime": Param("120s", "duration", "fio --runtime (time_based): when the writers stop"),
    "snapshot_at": Param("5s", "duration", "when the snapshot ioctl starts (the published job's sleep 5)", zero_ok=True),
    "write_rate": Param("1G", "rate", "how fast the writers together fill the page cache when not throttled"),
    "seed": Param("1", "count", "random offsets' seed", zero_ok=True),
}
SEQ_UNIT = 1 << 20
INODE = 257  # btrfs: the first inode of a subvolume


def build(v: dict, m: Machine) -> Workload:
    page = 4096
    sequential = v["rw"] == "write"
    unit = SEQ_UNIT if sequential else max(page, v["bs"])
    jobs = max(1, v["jobs"])
    runtime = float(v["runtime"])
    flow = throttled(m, float(v["write_rate"]), runtime)
    n = check_size(NAME, flow.dirtied[-1] // unit)
    pos = (np.arange(n, dtype=np.float64) + 1) * unit
    ts = flow.times_of(pos).astype(np.int64)
    units_in_file = max(1, v["size"] // unit)
    job = np.arange(n, dtype=np.int64) % jobs
    if sequential:
        # Job j writes its own region from its start, wrapping within it.
        per_job = max(1, units_in_file // jobs)
        idx = job * per_job + (np.arange(n) // jobs) % per_job
    else:
        idx = np.random.default_rng(v["seed"]).integers(0, units_in_file, n)
    ino = np.full(n, INODE, dtype=np.int64)
    cleaned = flow.cleaned_at(pos, ts.astype(np.float64)).astype(np.int64)
    snap = int(v["snapshot_at"])
    none = np.array([-1], dtype=np.int64)
    w = Workload(
        source=f"synthetic {NAME}: {v['rw']}, {jobs} job(s), {n:,} dirtying events of {unit // 1024} KiB",
        page_size=page, start_ts=0, end_ts=int(runtime),
        dirty_ts=ts, dirty_ino=ino, dirty_idx=idx.astype(np.int64), dirty_pid=job,
        device=m.device,
        ops={"snapshot": Ops(np.array([jobs]), np.array([snap]), none, none)},
        page_wb_ts=cleaned, page_wb_key=(ino << 32) | idx.astype(np.int64),
        dirty_limit_pages=int(m.limit_bytes // page), folio_bytes=unit, reclaim_events=0,
    )
    order = np.argsort(w.page_wb_ts, kind="stable")
    w.page_wb_ts, w.page_wb_key = w.page_wb_ts[order], w.page_wb_key[order]
    return w
