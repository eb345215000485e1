#!/usr/bin/env python3
"""The two store layouts side by side on the same captures, in one run, interleaved:
the default (Parquet parts written while parsing, views in a DuckDB catalog) and
`--single-file` (every table inserted into DuckDB, how stores were written before).

Per capture and layout: `advisor ingest -o` (wall, peak RSS, bytes on disk), then on
that store `advisor analyze STORE` and three typical `advisor sql` queries. Median of
--runs, runs interleaved so load drifts hit both layouts alike.

    .venv/bin/python benchmarks/store_layouts.py sample_traces/sync-fsmark-xfs-run1-v7-zstd.dat ...

Results: benchmarks/results/store_layouts.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, timed  # noqa: E402

QUERIES = {
    "events per type": "select event, count(*) from events group by all order by 2 desc",
    "dirtied pages per inode": "select ino, count(*) as pages from writeback_dirty_folio group by ino order by pages desc limit 10",
    "first 1000 events": "select * from events limit 1000",
}
LAYOUTS = {"parts": [], "single-file": ["--single-file"]}


def advisor() -> list[str]:
    return [sys.executable, "-m", "advisor"]


def store_bytes(store: Path) -> int:
    total = store.stat().st_size
    for d in store.parent.glob(store.name + ".*.parts"):
        total += sum(f.stat().st_size for f in d.iterdir())
    return total


def one_capture(trace: Path, runs: int, work: Path) -> dict:
    samples: dict[str, dict[str, list]] = {name: {} for name in LAYOUTS}
    for _ in range(runs):
        for name, flags in LAYOUTS.items():
            s = samples[name]
            store = work / f"{name}.duckdb"
            wall, rss = timed([*advisor(), "ingest", str(trace), "-o", str(store), "--force", *flags])
            s.setdefault("ingest_s", []).append(wall)
            s.setdefault("ingest_rss_kib", []).append(rss)
            s["store_bytes"] = [store_bytes(store)]
            wall, rss = timed([*advisor(), "analyze", str(store)])
            s.setdefault("analyze_s", []).append(wall)
            s.setdefault("analyze_rss_kib", []).append(rss)
            for label, q in QUERIES.items():
                wall, _ = timed([*advisor(), "sql", str(store), q, "--format", "csv"])
                s.setdefault(f"sql {label} s", []).append(wall)
    out = {}
    for name, s in samples.items():
        out[name] = {k: (max(v) if "rss" in k or k == "store_bytes" else round(statistics.median(v), 3)) for k, v in s.items()}
    return {"file": str(trace), "bytes": trace.stat().st_size, "layouts": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "store_layouts.json")
    args = ap.parse_args()
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="store-layouts-"))
    try:
        results = [one_capture(t, args.runs, work) for t in args.traces]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    doc = {"machine": machine({}), "load_before": load_before, "load_after": os.getloadavg(), "runs": args.runs,
           "captures": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    for r in results:
        p, s = r["layouts"]["parts"], r["layouts"]["single-file"]
        print(f"{Path(r['file']).name}  ({r['bytes'] / 1e6:.1f} MB)")
        for k in p:
            print(f"  {k:34s} parts {p[k]:>12}  single-file {s[k]:>12}")


if __name__ == "__main__":
    main()
