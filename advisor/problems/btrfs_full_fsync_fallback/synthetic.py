"""The benchmark published with 5e548b3201: fio jobs each writing its own file
sequentially in 64 KiB buffered writes with an fsync after every write (fsync=1), 32 GiB
in all on a 16 GiB machine, so page release runs all the time.

    [writers] rw=write fsync=1 bs=64k ioengine=sync direct=0 size=32G/NUM_JOBS
              numjobs=NUM_JOBS thread

The published runs: 1, 2, 4, 8, 16 jobs with 32 GiB in all; 32 and 64 jobs with 64 GiB.
Each job's timeline: a write (`bs` at `write_rate`), then its fsync; the fsync spans are
laid out at the device's cost of one fsync (data, log and superblock writes) with the
jobs out of phase, and the full-fsync model re-runs each job's fsyncs under each policy
on the job's own clock, keeping the writes between them.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.synthetic.description import Param
from advisor.replay.synthetic.machine import Machine, check_size
from advisor.replay.workload import Ops, Workload

NAME = "fsync-jobs"
SUMMARY = "fio jobs writing 64 KiB and fsyncing after each write, data 2x memory (the benchmark published with 5e548b3201)"
DEVICE = "nvme"
PARAMS = {
    "jobs": Param("1", "count", "fio numjobs, each its own file"),
    "bs": Param("64k", "size", "fio bs"),
    "total": Param("32G", "size", "bytes written by all jobs (size = total / jobs)"),
    "write_rate": Param("1G", "rate", "one job's buffered write speed (copy into the page cache)"),
}
FIRST_INODE = 257


def build(v: dict, m: Machine) -> Workload:
    page = 4096
    jobs, bs = max(1, v["jobs"]), max(page, v["bs"])
    per_job = max(1, check_size(NAME, v["total"] // bs) // jobs)
    dev = m.device
    write_ns = bs * 1e9 / v["write_rate"]
    fsync_ns = dev.latency_ns + dev.transfer_ns(bs) + 2 * max(dev.latency_ns, dev.flush_ns)
    # The device serves all jobs: a round of every job's fsync cannot be faster than it.
    cycle = max(write_ns + fsync_ns, jobs * (dev.transfer_ns(bs) + 3 * dev.latency_ns / max(1.0, dev.queue_depth)))
    k = np.arange(per_job, dtype=np.float64)
    job = np.repeat(np.arange(jobs, dtype=np.int64), per_job)
    phase = job * (cycle / jobs)
    dirty = (np.tile(k, jobs) * cycle + phase + write_ns).astype(np.int64)
    start = dirty + 1
    end = start + int(fsync_ns)
    order = np.argsort(dirty, kind="stable")
    ino = FIRST_INODE + job
    idx = np.tile(np.arange(per_job, dtype=np.int64), jobs)
    assumptions = []
    released = v["total"] > m.mem
    if released:
        assumptions.append(f"pages are released all the time: {v['total'] / 2**30:g} GiB written on a "
                           f"{m.mem / 2**30:g} GiB machine")
    write_start = dirty - int(write_ns)
    return Workload(
        source=f"synthetic {NAME}: {jobs} job(s) x {per_job:,} writes of {bs} bytes, each followed by fsync",
        page_size=page, start_ts=0, end_ts=int(end.max()),
        dirty_ts=dirty[order], dirty_ino=ino[order], dirty_idx=idx[order], dirty_pid=job[order],
        device=dev,
        ops={"fsync": Ops(job[order], start[order], end[order], ino[order]),
             "write": Ops(job[order], write_start[order], dirty[order], ino[order])},
        dirty_limit_pages=int(m.limit_bytes // page), folio_bytes=bs,
        reclaim_events=1 if released else 0, assumptions=assumptions,
    )
