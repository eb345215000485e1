"""The benchmark published with the stable-pages series (7d311cdab663): dbench, 4 clients, on ext2
or XFS on a laptop hard disk; the published table gives the maximum WriteX latency.

dbench's NetBench load makes each client write into many files of its own and fsync
("Flush") only some of them, about one Flush per 7 WriteX in the published table. Here a
client writes `write_size` at the next offset of one of its `files` files (chosen at
random, wrapping at `file_size`), spends `op_gap` on its other operations (reads, opens,
closes), and after every `writes_per_flush` writes fsyncs the file it wrote last. The
fsync waits for the disk (one FIFO, queue depth 1 on the laptop disk). Files that are
never fsynced are written by the flusher: every dirty_writeback_centisecs (5 s) it starts
writeback of each inode dirty for longer than dirty_expire_centisecs (30 s), without
waiting. That submission is the same operation as sync_file_range(SYNC_FILE_RANGE_WRITE)
and is recorded as one (pid -1), so the stable-pages model places it like any other.
Writes to a page whose writeback is still in flight are what waits under `always-wait`.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.synthetic.description import Param
from advisor.replay.synthetic.machine import DIRTY_EXPIRE_NS, Machine, check_size
from advisor.replay.workload import Ops, Workload

NAME = "dbench"
SUMMARY = "dbench clients rewriting their files, fsyncing some (the stable-pages series' benchmark: 4 clients, laptop disk)"
DEVICE = "hdd"
PARAMS = {
    "clients": Param("4", "count", "dbench clients"),
    "files": Param("100", "count", "files each client writes into"),
    "file_size": Param("1M", "size", "a file's size; writes wrap within it"),
    "write_size": Param("64k", "size", "one WriteX"),
    "writes_per_flush": Param("7", "count", "WriteX per Flush (the published benchmark's table: ~7)"),
    "op_gap": Param("10ms", "duration", "a client's time between two writes, on its other operations", zero_ok=True),
    "runtime": Param("120s", "duration", "how long the clients run"),
    "write_rate": Param("1G", "rate", "buffered write speed (copy into the page cache)"),
    "stable_writes": Param("no", "no|yes", "does the device need stable pages (a laptop disk does not)"),
    "seed": Param("1", "count", "file choice seed", zero_ok=True),
}
WRITEBACK_INTERVAL_NS = 5_000_000_000  # vm.dirty_writeback_centisecs = 500
FLUSHER_PID = -1


class _Disk:
    """One FIFO queue (queue depth 1): when a write of n bytes submitted at t is done."""

    def __init__(self, latency_ns: float, bandwidth: float):
        self.latency_ns, self.bandwidth, self.free = latency_ns, bandwidth, 0.0

    def submit(self, t: float, nbytes: float) -> float:
        self.free = max(t, self.free) + self.latency_ns + nbytes * 1e9 / self.bandwidth
        return self.free


def build(v: dict, m: Machine) -> Workload:
    page = 4096
    rng = np.random.default_rng(v["seed"])
    clients, files = max(1, v["clients"]), max(1, v["files"])
    pages_per_write = max(1, v["write_size"] // page)
    pages_per_file = max(pages_per_write, v["file_size"] // page)
    write_ns = v["write_size"] * 1e9 / v["write_rate"]
    check_size(NAME, clients * v["runtime"] / (write_ns + v["op_gap"]) * pages_per_write)
    disk = _Disk(m.device.latency_ns, m.device.bandwidth)
    clock = np.zeros(clients)
    offset = np.zeros((clients, files), dtype=np.int64)
    dirty_pages: dict[int, set] = {}  # inode → dirty page indexes
    dirty_since: dict[int, float] = {}  # inode → when it last went clean → dirty
    events, writes, fsyncs, flusher = [], [], [], []
    next_tick = float(WRITEBACK_INTERVAL_NS)
    n_writes = np.zeros(clients, dtype=np.int64)
    while clock.min() < v["runtime"]:
        c = int(np.argmin(clock))
        t = clock[c]
        while next_tick <= t:  # the flusher's periodic pass (wb_check_old_data_flush)
            for ino in [i for i, since in dirty_since.items() if next_tick - since > DIRTY_EXPIRE_NS]:
                disk.submit(next_tick, len(dirty_pages[ino]) * page)
                flusher.append((next_tick, ino))
                del dirty_since[ino], dirty_pages[ino]
            next_tick += WRITEBACK_INTERVAL_NS
        f = int(rng.integers(files))
        ino = 1000 + c * files + f
        first = offset[c, f]
        idx = (first + np.arange(pages_per_write)) % pages_per_file
        offset[c, f] = (first + pages_per_write) % pages_per_file
        end = t + write_ns
        writes.append((c, t, end, ino))
        events.extend((end, ino, int(i), c) for i in idx)
        dirty_since.setdefault(ino, end)
        dirty_pages.setdefault(ino, set()).update(int(i) for i in idx)
        t = end
        n_writes[c] += 1
        if n_writes[c] % max(1, v["writes_per_flush"]) == 0:
            done = disk.submit(t, len(dirty_pages.pop(ino, ())) * page)
            dirty_since.pop(ino, None)
            fsyncs.append((c, t, done, ino))
            t = done
        clock[c] = t + v["op_gap"]
    ev = np.array(events, dtype=np.float64)
    order = np.argsort(ev[:, 0], kind="stable")
    ev = ev[order].astype(np.int64)
    return Workload(
        source=f"synthetic {NAME}: {clients} clients, {len(writes):,} writes, {len(fsyncs):,} fsyncs",
        page_size=page, start_ts=0, end_ts=int(clock.max()),
        dirty_ts=ev[:, 0], dirty_ino=ev[:, 1], dirty_idx=ev[:, 2], dirty_pid=ev[:, 3],
        device=m.device,
        ops={"write": _ops(writes), "fsync": _ops(fsyncs),
             "sync_file_range": _ops([(FLUSHER_PID, t, t, ino) for t, ino in flusher])},
        dirty_limit_pages=int(m.limit_bytes // page), folio_bytes=page, reclaim_events=0,
        stable_writes=v["stable_writes"] == "yes",
        assumptions=["the flusher's periodic writeback of expired inodes is placed as sync_file_range(WRITE) "
                     "submissions (pid -1)"],
    )


def _ops(rows: list[tuple]) -> Ops:
    if not rows:
        return Ops.empty()
    a = np.array(rows, dtype=np.float64)
    a = a[np.argsort(a[:, 1], kind="stable")].astype(np.int64)
    return Ops(a[:, 0], a[:, 1], a[:, 2], a[:, 3])
