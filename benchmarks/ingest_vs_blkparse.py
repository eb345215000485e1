"""Ingest speed and memory against `blkparse`, on the same blktrace capture, in one run.

    python benchmarks/ingest_vs_blkparse.py [--repeat 3]

The capture is a real one of about 2.4 million records (null_blk in the
vm-run VM, benchmarks/capture_blktrace_big.sh), recorded once into
benchmarks/data/blktrace-big/. On it, each --repeat times (median wall time,
largest peak RSS of the child process):

* read floor: `cat` of the per-CPU files (they are in the page cache),
* blkparse: `blkparse -i big -D DIR -o /dev/null` (the issue's peer command),
* blkparse -d + btt: the two steps btt needs for its phase times, for scale,
* parse only: the Rust parser turning every record into Arrow batches
  (blk_events, io_requests, io_phases), no store,
* ingest: `advisor ingest DIR/big -o STORE --force`: the full job, store on
  disk, request tracking included, Python start-up included.

Records/s use the records blkparse reads (every record but the process-name
notes), counted in our store. Results go to benchmarks/results/ingest_vs_blkparse.json.
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
DATA = HERE / "data" / "blktrace-big"
RESULTS = HERE / "results"
PY = sys.executable

PARSE_ONLY = """
import sys
from advisor import _parsers
from advisor.store.ingest import BATCH_ROWS, MAX_PENDING_BYTES
t = _parsers.open_blktrace([sys.argv[1]])
it = t.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES)
for name, reader in it:
    pass
print(it.report()["events"])
"""

BLKPARSE_D_BTT = """
set -e
d=$(mktemp -d)
blkparse -i big -D "$1" -d "$d/m.bin" -O > /dev/null
cd "$d" && btt -i m.bin > /dev/null
rm -rf "$d"
"""


def ensure_capture() -> Path:
    files = sorted(DATA.glob("big.blktrace.*"))
    if not files or not (DATA / "big.blkparse-summary.txt").exists():
        print(f"recording {DATA} (vm-run, a few minutes) ...", file=sys.stderr)
        subprocess.run([str(HERE / "capture_blktrace_big.sh"), str(DATA)], check=True)
    return DATA / "big"


def bench(base: Path, repeat: int) -> dict:
    files = sorted(str(p) for p in base.parent.glob("big.blktrace.*"))
    store = Path(tempfile.mkdtemp()) / "bench.duckdb"
    advisor = shutil.which("advisor", path=str(Path(PY).parent)) or "advisor"
    subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    cat_s, _ = median_run(["cat", *files], repeat)
    bp_s, bp_rss = median_run(["blkparse", "-i", base.name, "-D", str(base.parent), "-o", "/dev/null"], repeat)
    btt_s, btt_rss = median_run(["bash", "-c", BLKPARSE_D_BTT, "bash", str(base.parent)], repeat)
    parse_s, parse_rss = median_run([PY, "-c", PARSE_ONLY, str(base)], repeat)
    ingest_s, ingest_rss = median_run([advisor, "ingest", str(base), "-o", str(store), "--force"], repeat)
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        records = con.execute("SELECT count(*) FROM blk_events").fetchone()[0]
        requests = con.execute("SELECT count(*) FROM io_requests").fetchone()[0]
    size = store.stat().st_size
    shutil.rmtree(store.parent)
    rps = lambda s: records / s
    return {
        "files": [str(Path(f).relative_to(HERE.parent)) for f in files],
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
    args = ap.parse_args()
    tools = {"blkparse": ["blkparse", "-V"], "btt": ["btt", "-V"]}
    r = bench(ensure_capture(), args.repeat)
    line = lambda k, label: (
        f"  {label:<24}{r[k]['seconds']:7.3f} s  {r[k]['records_per_s'] / 1e6:6.2f} M records/s  RSS {r[k]['peak_rss_mib']:6.1f} MiB"
    )
    print(
        f"{DATA.relative_to(HERE.parent)}/big: {r['records']:,} records, {r['file_bytes'] / 1e6:.1f} MB, {r['io_requests']:,} requests\n"
        f"  {'read floor (cat)':<24}{r['read_floor']['seconds']:7.3f} s\n"
        + line("blkparse", "blkparse -o /dev/null") + "\n"
        + line("blkparse_d_and_btt", "blkparse -d + btt") + "\n"
        + line("parse_only", "parse only (Rust)") + f"  {r['parse_only']['ratio_vs_blkparse']:5.1f}x blkparse\n"
        + line("ingest", "advisor ingest (store)") + f"  {r['ingest']['ratio_vs_blkparse']:5.1f}x blkparse",
        flush=True,
    )
    results = {"machine": machine(tools), "repeat": args.repeat, "run": r}
    print(json.dumps(results["machine"]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ingest_vs_blkparse.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
