"""Replay of 10 million dirtying events under all ten policies: wall time and peak RSS.

The workload is generated, not captured (no sample trace holds 10 M dirtying events):
8 writers each rewriting its own 640 MiB file sequentially for 100 s, a sync, a btrfs
snapshot and a space flush mid-way, an fsync and a sync_file_range per writer every
4 MiB, on the 'ssd' device preset. Targets (issue 5): under 30 s and 2 GiB peak RSS on
this 2-core machine.

    .venv/bin/python benchmarks/replay_10m.py [--events N]
"""

from __future__ import annotations

import argparse
import platform
import resource
import time

import numpy as np

from advisor.replay import device, engine
from advisor.replay.workload import FlushRequests, Ops, Workload


def build(n: int, writers: int = 8, span_s: float = 100.0) -> Workload:
    per = n // writers
    t = np.linspace(0, span_s * 1e9, n, dtype=np.int64)
    writer = np.arange(n) % writers
    idx = (np.arange(n) // writers) % (per // 4 + 1)  # each file rewritten ~4 times
    every = 1024  # pages between a writer's fsync / sync_file_range (4 MiB)
    first = writer < writers  # all
    marks = np.flatnonzero(first & ((np.arange(n) // writers) % every == every - 1))
    ino = 1000 + writer
    ops = {
        "fsync": Ops(writer[marks].astype(np.int64), t[marks] + 1, t[marks] + 2_000_000, ino[marks].astype(np.int64)),
        "sync_file_range": Ops(writer[marks].astype(np.int64), t[marks] + 1, t[marks] + 50_000, ino[marks].astype(np.int64)),
        "sync": Ops(np.array([99]), np.array([int(span_s * 0.3e9)]), np.array([-1]), np.array([-1])),
        "snapshot": Ops(np.array([98]), np.array([int(span_s * 0.5e9)]), np.array([-1]), np.array([-1])),
    }
    return Workload(
        source=f"generated: {n:,} dirtying events, {writers} sequential rewriters",
        page_size=4096, start_ts=0, end_ts=int(t[-1]),
        dirty_ts=t, dirty_ino=ino.astype(np.int64), dirty_idx=idx.astype(np.int64), dirty_pid=writer.astype(np.int64),
        device=device.preset("ssd"), ops=ops,
        flush=FlushRequests(np.array([int(span_s * 0.7e9)]), ["FLUSH_DELALLOC"], np.array([64 << 20])),
        reclaim_events=1, dirty_limit_pages=800_000,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    w = build(args.events)
    t1 = time.perf_counter()
    doc = engine.replay(w, engine.select(None, None), kernel="6.18")
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"machine: {platform.node()} {platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores, python {platform.python_version()}")
    print(f"events: {args.events:,}; policies run: {len(doc['results'])}; skipped: {doc['not_applicable']}")
    print(f"build {t1 - t0:.2f} s; replay {t2 - t1:.2f} s (includes numba compile on a cold cache); peak RSS {rss:.0f} MiB")
    print(f"target: replay < 30 s, peak RSS < 2048 MiB -> {'met' if t2 - t1 < 30 and rss < 2048 else 'NOT met'}")
    for r in doc["results"]:
        print(f"  {r['problem']:28} {r['policy']:22} {r['metrics']}")


if __name__ == "__main__":
    main()
