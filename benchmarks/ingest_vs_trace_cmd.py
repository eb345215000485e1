"""Ingest speed and memory against `trace-cmd report`, on the same files, in one run.

    python benchmarks/ingest_vs_trace_cmd.py [--sizes 650000,2600000] [--repeat 3]

For each size a real trace is recorded once (benchmarks/capture_big_trace.sh,
kept in benchmarks/data/), then, for that file:

* read floor: `cat FILE > /dev/null` (the file is in the page cache),
* trace-cmd: `trace-cmd report FILE > /dev/null`,
* parse only: the Rust parser decoding every event into Arrow batches, no store,
* ingest: `advisor ingest FILE -o STORE --force` (the full job: parse, DuckDB
  store on disk, views, metadata; includes Python start-up),

each run --repeat times (median wall time), with peak RSS of each child
process. Events/s use the event count of the store. Results are printed and
written to benchmarks/results/ingest_vs_trace_cmd.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, median_run  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RESULTS = HERE / "results"
PY = sys.executable


PARSE_ONLY = """
import sys
from advisor import _parsers
t = _parsers.open_trace(sys.argv[1])
n = 0
from advisor.store.ingest import BATCH_ROWS, MAX_PENDING_BYTES
it = t.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES)
for name, reader in it:
    pass
print(it.report()["events"])
"""


def ensure_trace(writes: int) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"dd-{writes}.dat"
    if not path.exists():
        print(f"recording {path} ({writes} writes) ...", file=sys.stderr)
        subprocess.run([str(HERE / "capture_big_trace.sh"), str(path), str(writes)], check=True)
    return path


def bench(path: Path, repeat: int) -> dict:
    store = Path(tempfile.mkdtemp()) / "bench.duckdb"
    advisor = shutil.which("advisor", path=str(Path(PY).parent)) or "advisor"
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    cat_s, _ = median_run(["cat", str(path)], repeat)
    tc_s, tc_rss = median_run(["trace-cmd", "report", str(path)], repeat)
    parse_s, parse_rss = median_run([PY, "-c", PARSE_ONLY, str(path)], repeat)
    ingest_s, ingest_rss = median_run([advisor, "ingest", str(path), "-o", str(store), "--force"], repeat)
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        events = con.execute("SELECT count(*) FROM events").fetchone()[0]
    size = store.stat().st_size
    shutil.rmtree(store.parent)
    eps = lambda s: events / s
    return {
        "file": str(path.relative_to(HERE.parent)),
        "file_bytes": path.stat().st_size,
        "events": events,
        "store_bytes": size,
        "read_floor": {"seconds": cat_s},
        "trace_cmd_report": {"seconds": tc_s, "events_per_s": eps(tc_s), "peak_rss_mib": tc_rss / 1024},
        "parse_only": {"seconds": parse_s, "events_per_s": eps(parse_s), "peak_rss_mib": parse_rss / 1024, "ratio_vs_trace_cmd": tc_s / parse_s},
        "ingest": {"seconds": ingest_s, "events_per_s": eps(ingest_s), "peak_rss_mib": ingest_rss / 1024, "ratio_vs_trace_cmd": tc_s / ingest_s},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="650000,2600000", help="dd writes per trace (≈3.3 events each)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results = {"machine": machine({"trace_cmd": ["trace-cmd", "--version"]}), "repeat": args.repeat, "runs": []}
    for writes in (int(x) for x in args.sizes.split(",")):
        r = bench(ensure_trace(writes), args.repeat)
        results["runs"].append(r)
        print(
            f"{r['file']}: {r['events']:,} events, {r['file_bytes'] / 1e6:.1f} MB\n"
            f"  read floor (cat)        {r['read_floor']['seconds']:7.3f} s\n"
            f"  trace-cmd report        {r['trace_cmd_report']['seconds']:7.3f} s  {r['trace_cmd_report']['events_per_s'] / 1e6:6.2f} M events/s  RSS {r['trace_cmd_report']['peak_rss_mib']:6.1f} MiB\n"
            f"  parse only (Rust)       {r['parse_only']['seconds']:7.3f} s  {r['parse_only']['events_per_s'] / 1e6:6.2f} M events/s  RSS {r['parse_only']['peak_rss_mib']:6.1f} MiB  {r['parse_only']['ratio_vs_trace_cmd']:5.1f}x trace-cmd\n"
            f"  advisor ingest (store)  {r['ingest']['seconds']:7.3f} s  {r['ingest']['events_per_s'] / 1e6:6.2f} M events/s  RSS {r['ingest']['peak_rss_mib']:6.1f} MiB  {r['ingest']['ratio_vs_trace_cmd']:5.1f}x trace-cmd",
            flush=True,
        )
    print(json.dumps(results["machine"]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ingest_vs_trace_cmd.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
