"""Ingest speed and memory against `blkparse`, on the same blktrace capture, in one run.

    python benchmarks/ingest_vs_blkparse.py [--repeat 3] [--data DIR ...]

The captures are real ones (null_blk in the vm-run VM,
benchmarks/capture_blktrace_big.sh): benchmarks/data/blktrace-big/ (about 2.4
million records, recorded once), and benchmarks/data/blktrace-4m/ (4.2 million
records: NUMBER_IOS=2400000, which fio caps at the 1,048,576 4 KiB blocks of
the 4 GiB device) when it has been recorded. On each, each
--repeat times (median wall time, largest peak RSS of the child process):

* read floor: `cat` of the per-CPU files (they are in the page cache),
* blkparse: `blkparse -i big -D DIR -o /dev/null` (the issue's peer command),
* blkparse -d + btt: the two steps btt needs for its phase times, for scale,
* parse only: the Rust parser turning every record into Arrow batches
  (blk_events, io_requests, io_phases), no store (a Python process that
  imports only the parser module),
* ingest: `advisor ingest DIR/big -o STORE --force`: the full job, store on
  disk, request tracking included, Python start-up included.

Records/s use the records blkparse reads (every record but the process-name
notes), counted in our store. The load average before each capture's runs is
noted (the machine is shared). Results go to benchmarks/results/ingest_vs_blkparse.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BLKPARSE_D_BTT, machine, median_run  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "blktrace-big"
RESULTS = HERE / "results"
PY = sys.executable

# The batch limits ingest uses come in as arguments: importing advisor.store
# here would load DuckDB and pyarrow, which parsing does not need.
PARSE_ONLY = """
import sys
from advisor import _parsers
t = _parsers.open_blktrace([sys.argv[1]])
it = t.batches(batch_rows=int(sys.argv[2]), max_pending_bytes=int(sys.argv[3]))
for name, reader in it:
    pass
print(it.report()["events"])
"""



def ensure_capture(data: Path) -> Path:
    files = sorted(data.glob("big.blktrace.*"))
    if not files or not (data / "big.blkparse-summary.txt").exists():
        print(f"recording {data} (vm-run, a few minutes) ...", file=sys.stderr)
        subprocess.run([str(HERE / "capture_blktrace_big.sh"), str(data)], check=True)
    return data / "big"


def bench(base: Path, repeat: int) -> dict:
    files = sorted(str(p) for p in base.parent.glob("big.blktrace.*"))
    load = os.getloadavg()[0]
    store = Path(tempfile.mkdtemp()) / "bench.duckdb"
    advisor = shutil.which("advisor", path=str(Path(PY).parent)) or "advisor"
    subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    cat_s, _ = median_run(["cat", *files], repeat)
    bp_s, bp_rss = median_run(["blkparse", "-i", base.name, "-D", str(base.parent), "-o", "/dev/null"], repeat)
    btt_s, btt_rss = median_run(["bash", "-c", BLKPARSE_D_BTT, "bash", str(base.parent)], repeat)
    from advisor.store.ingest import BATCH_ROWS, MAX_PENDING_BYTES

    parse_s, parse_rss = median_run([PY, "-c", PARSE_ONLY, str(base), str(BATCH_ROWS), str(MAX_PENDING_BYTES)], repeat)
    ingest_s, ingest_rss = median_run([advisor, "ingest", str(base), "-o", str(store), "--force"], repeat)
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        records = con.execute("SELECT count(*) FROM blk_events").fetchone()[0]
        requests = con.execute("SELECT count(*) FROM io_requests").fetchone()[0]
    size = store.stat().st_size
    shutil.rmtree(store.parent)
    rps = lambda s: records / s
    return {
        "load_average_before": load,
        "files": [os.path.relpath(f, HERE.parent) for f in files],
        "file_bytes": sum(Path(f).stat().st_size for f in files),
        "records": records,
        "io_requests": requests,
        "store_bytes": size,
        "read_floor": {"seconds": cat_s},
        "blkparse": {"seconds": bp_s, "records_per_s": rps(bp_s), "peak_rss_mib": bp_rss / 1024},
        "blkparse_d_and_btt": {"seconds": btt_s, "records_per_s": rps(btt_s), "peak_rss_mib": btt_rss / 1024},
        "parse_only": {"seconds": parse_s, "records_per_s": rps(parse_s), "peak_rss_mib": parse_rss / 1024, "ratio_vs_blkparse": bp_s / parse_s},
        "ingest": {"seconds": ingest_s, "records_per_s": rps(ingest_s), "peak_rss_mib": ingest_rss / 1024, "ratio_vs_blkparse": bp_s / ingest_s},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--data", type=Path, nargs="+", help="capture directories (default: blktrace-big, and blktrace-4m if recorded)"
    )
    args = ap.parse_args()
    datas = args.data or [DATA] + [d for d in [HERE / "data" / "blktrace-4m"] if (d / "DONE").exists()]
    tools = {"blkparse": ["blkparse", "-V"], "btt": ["btt", "-V"]}
    runs = []
    for data in (d.absolute() for d in datas):
        r = bench(ensure_capture(data), args.repeat)
        runs.append(r)
        line = lambda k, label: (
            f"  {label:<24}{r[k]['seconds']:7.3f} s  {r[k]['records_per_s'] / 1e6:6.2f} M records/s  RSS {r[k]['peak_rss_mib']:6.1f} MiB"
        )
        print(
            f"{os.path.relpath(data, HERE.parent)}/big: {r['records']:,} records, {r['file_bytes'] / 1e6:.1f} MB, "
            f"{r['io_requests']:,} requests, load average {r['load_average_before']:.2f}\n"
            f"  {'read floor (cat)':<24}{r['read_floor']['seconds']:7.3f} s\n"
            + line("blkparse", "blkparse -o /dev/null") + "\n"
            + line("blkparse_d_and_btt", "blkparse -d + btt") + "\n"
            + line("parse_only", "parse only (Rust)") + f"  {r['parse_only']['ratio_vs_blkparse']:5.1f}x blkparse\n"
            + line("ingest", "advisor ingest (store)") + f"  {r['ingest']['ratio_vs_blkparse']:5.1f}x blkparse",
            flush=True,
        )
    results = {"machine": machine(tools), "repeat": args.repeat, "runs": runs}
    print(json.dumps(results["machine"]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ingest_vs_blkparse.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
