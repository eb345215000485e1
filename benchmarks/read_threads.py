"""Reading a trace.dat on 1, 2, ... threads: the parser alone and the whole ingest.

    python benchmarks/read_threads.py [--runs 3] [--threads 1,2] [CAPTURE.dat ...]

Inputs (without CAPTURE arguments): benchmarks/data/real-*.dat and the dd traces
(capture_real.sh, capture_big_trace.sh), those present. Per capture, runs interleaved
(one run of every command at every thread count, then the next run), median wall time
and the largest peak RSS:

* parse only: the parser's Arrow batches drained in a Python process
  (`Trace.batches(threads=N)`), as in real_captures.py,
* ingest: `advisor ingest FILE -o STORE --force` with WRITEBACK_ADVISOR_THREADS=N.

With N threads one thread merges the CPUs' events in time order, N-1 decode them
(parsers/src/tracedat/parallel.rs) and N-1 inflate each CPU's next compressed chunk
(prefetch.rs); ingest's own thread encodes Parquet meanwhile.
The CPU count and load average go with the results: on a machine with fewer CPUs
than busy threads, the threads take turns.

Results: benchmarks/results/read_threads.json; a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_captures import DATA, LOCK, PY, RESULTS, ROOT, advisor_cmd, heavy_lock, run, summarize  # noqa: E402

PARSE = """
import sys
import pyarrow as pa
from advisor import _parsers
from advisor.store.ingest import BATCH_ROWS, MAX_PENDING_BYTES
it = _parsers.open_trace(sys.argv[1]).batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES, threads=int(sys.argv[2]))
rows = 0
for name, reader in it:
    for batch in pa.RecordBatchReader.from_stream(reader):
        rows += batch.num_rows
print(it.report()["events"], rows)
"""


def default_captures() -> list[Path]:
    return sorted(DATA.glob("real-*.dat"), key=lambda p: p.stat().st_size) + sorted(DATA.glob("dd-*.dat"))


def bench(trace: Path, runs: int, threads: list[int]) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="wa-threads-"))
    try:
        store = tmp / "store.duckdb"
        steps = {}
        for n in threads:
            steps[f"parse_{n}"] = {"cmd": [PY, "-c", PARSE, str(trace), str(n)]}
            steps[f"ingest_{n}"] = {"cmd": [*advisor_cmd(), "ingest", str(trace), "-o", str(store), "--force"],
                                    "env": {**os.environ, "WRITEBACK_ADVISOR_THREADS": str(n)}}
        samples: dict[str, list] = {k: [] for k in steps}
        load_before = os.getloadavg()
        for i in range(runs):
            for name, s in steps.items():
                samples[name].append(run(s["cmd"], env=s.get("env")))
            print(f"  run {i + 1}/{runs}: " + ", ".join(f"{k} {v[-1][0]:.2f}s" for k, v in samples.items()), file=sys.stderr, flush=True)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = {name: summarize(v) for name, v in samples.items()}
    one = threads[0]
    for name in res:
        kind, n = name.rsplit("_", 1)
        res[name]["speedup_over_" + str(one)] = round(res[f"{kind}_{one}"]["seconds"] / res[name]["seconds"], 2)
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "file": os.path.relpath(trace, ROOT),
            "file_bytes": trace.stat().st_size, "runs": runs, "cpus": os.cpu_count(),
            "load_average_before": load_before, "load_average_after": load_after, "results": res}


def markdown(rows: list[dict], threads: list[int]) -> str:
    head = "| capture | MB | " + " | ".join(f"parse {n} thr" for n in threads) + " | " + \
           " | ".join(f"ingest {n} thr" for n in threads) + " |"
    out = [head, "|" + "---|" * (2 + 2 * len(threads))]
    for r in rows:
        res = r["results"]

        def cell(kind: str, n: int) -> str:
            x = res[f"{kind}_{n}"]
            speed = x[f"speedup_over_{threads[0]}"]
            rss = f", {x['peak_rss_mib']:.0f} MiB" if x["peak_rss_mib"] else ""
            return f"{x['seconds']:.2f} s ({speed:.2f}x{rss})"

        out.append(f"| {Path(r['file']).name} | {r['file_bytes'] / 1e6:.1f} | "
                   + " | ".join(cell("parse", n) for n in threads) + " | " + " | ".join(cell("ingest", n) for n in threads) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("captures", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (the first is the baseline)")
    ap.add_argument("--output", type=Path, default=RESULTS / "read_threads.json")
    ap.add_argument("--no-lock", action="store_true", help=f"do not take {LOCK}")
    a = ap.parse_args()
    threads = [int(x) for x in a.threads.split(",")]
    caps = a.captures or default_captures()
    if not caps:
        sys.exit("no captures: give CAPTURE.dat files or run benchmarks/capture_real.sh")
    for trace in caps:
        if not trace.is_file():
            print(f"read_threads.py: {trace}: no such file", file=sys.stderr)
            sys.exit(2)
    rows = []
    for trace in caps:
        print(f"{trace}:", file=sys.stderr)
        with heavy_lock(not a.no_lock):
            rows.append(bench(trace, a.runs, threads))
    a.output.parent.mkdir(parents=True, exist_ok=True)
    a.output.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(rows, threads))


if __name__ == "__main__":
    main()
