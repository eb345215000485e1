"""Ingest, first analyze and queries on real captures, against the floor and the peers.

    python benchmarks/real_captures.py [--runs 3] [--runs-large 1] [--samples 3]
        [--trace-dump PATH] [--blktrace DIR] [CAPTURE.dat ...]

Inputs (without CAPTURE arguments): benchmarks/data/real-*.dat (capture_real.sh),
the --samples largest sample_traces/*.dat, benchmarks/data/dd-*.dat
(capture_big_trace.sh, the dd bs=512 traces of ingest_vs_trace_cmd.py), and the
blktrace capture benchmarks/data/blktrace-big/ (capture_blktrace_big.sh).

Per capture, runs interleaved (one run of every command, then the next run),
median wall time of --runs runs (--runs-large for captures of 10 M events or
more, where one trace-cmd report takes minutes), the largest peak RSS of the
child process (wait4 rusage):

* floor: the flyrecord chunks through `zstd -d -c --no-asyncio > /dev/null` (the chunks are
  copied out of the trace.dat beforehand, from the per-CPU offsets and sizes
  `trace-cmd dump --flyrecord` prints; each chunk is a zstd frame), or
  `cat FILE` for an uncompressed trace,
* `trace-cmd report FILE` and `trace-cmd report -R FILE`, stdout to /dev/null,
* LISA's `trace-dump parquet` (snappy, its default) when --trace-dump is given
  or found, in an empty directory,
* parse only: the Rust parser's Arrow batches drained in a Python process,
* ingest: `advisor ingest FILE -o STORE --force`,
* first analyze: `advisor analyze FILE` with an empty cache directory
  (WRITEBACK_ADVISOR_CACHE), so it ingests the unseen capture first,
* three `advisor sql` queries on the capture cached by that analyze,
* the cache directory's size against the input's.

The advisor is run through its command line only, so the numbers follow
whatever store the installed code builds. Each capture's runs hold
/tmp/wa-heavy.lock (other heavy jobs on the machine wait, and we wait for
them). On a blktrace capture (--blktrace DIR, a capture_blktrace_big.sh
directory), `advisor io DIR/big` (read from the files: no store), the same with
--btt-compat, and `advisor io STORE` on the capture's store (its SQL summary) are
set against `blkparse -d` then `btt -i`.

Results: benchmarks/results/real_captures.json; a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BLKPARSE_D_BTT, machine  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "results"
PY = sys.executable
LOCK = "/tmp/wa-heavy.lock"
LARGE_EVENTS = 10_000_000
DEFAULT_TRACE_DUMP = Path("/work/lisa-build/tools/trace-parser/trace-tools/target/release/trace-dump")

# Drains the parser's batches (every Arrow batch of every table, through pyarrow). The batch limits are ingest's when it still exposes
# them under these names; the defaults are the values it used when this was written.
PARSE_ONLY = """
import sys
import pyarrow as pa
from advisor import _parsers
try:
    from advisor.store.ingest import BATCH_ROWS, MAX_PENDING_BYTES
except ImportError:
    BATCH_ROWS, MAX_PENDING_BYTES = 262144, 64 << 20
t = _parsers.open_trace(sys.argv[1])
it = t.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES)
rows = 0
for name, reader in it:
    for batch in pa.RecordBatchReader.from_stream(reader):
        rows += batch.num_rows
print(it.report()["events"], rows)
"""

# Three queries a user runs on a capture: what was recorded, block latency, and a
# per-second time series over every event.
QUERIES = {
    "event_counts": "select event, count(*) as n from events group by event order by n desc",
    "block_latency": (
        "select dev, write, count(*) as n, quantile_cont(d2c_ns, 0.5) as d2c_p50, "
        "quantile_cont(d2c_ns, 0.99) as d2c_p99, max(q2c_ns) as q2c_max "
        "from block_requests group by all order by all"
    ),
    "events_per_second": (
        "select ts // 1000000000 as second, event, count(*) as n from events group by all order by all"
    ),
}



def compile_bytecode() -> None:
    """Compile the advisor's modules once before measuring. An installed package
    carries its bytecode (pip compiles at install time), but a checkout run with
    PYTHONDONTWRITEBYTECODE=1 (set on the machine of the README's runs) recompiles
    its 40-odd imported modules in every command: 40 ms of a 0.4 s ingest of a
    32 KB capture. Python reads existing .pyc files even when it may not write them."""
    subprocess.run([PY, "-c", "import compileall, os, advisor; "
                    "compileall.compile_dir(os.path.dirname(advisor.__file__), quiet=1)"],
                   check=True, stdout=subprocess.DEVNULL)


def advisor_cmd() -> list[str]:
    script = Path(PY).parent / "advisor"
    return [str(script)] if script.exists() else [PY, "-m", "advisor"]


@contextmanager
def heavy_lock(take: bool = True):
    """Hold the machine's shared lock for heavy jobs while one capture is measured."""
    if not take:
        yield
        return
    with open(LOCK, "a") as f:
        t = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        waited = time.monotonic() - t
        if waited > 1:
            print(f"  (waited {waited:.0f} s for {LOCK})", file=sys.stderr)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run(cmd: list[str], env: dict | None = None, cwd: str | None = None) -> tuple[float, int | None]:
    """Wall seconds and peak RSS (KiB) of one child process, its stdout to /dev/null."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["(no message)"]
        raise RuntimeError(f"exit {code}: {' '.join(cmd)}: {tail[0]}")
    # A child's ru_maxrss starts from the peak resident size of the address space
    # it was forked with (this process's VmHWM: at exec the kernel keeps the old
    # one's high-water mark): at or below that, the child's own peak is unknown and
    # the figure would be ours, so None. This script streams what it reads; only
    # children smaller than it (zstd -d) go unmeasured.
    return wall, usage.ru_maxrss if usage.ru_maxrss > _own_peak_kib() else None


def _own_peak_kib() -> int:
    """This process's own peak RSS (VmHWM). Not getrusage(RUSAGE_SELF): that starts
    from the peak of whatever process started this one (pytest's, under the tests)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def path_bytes(path: Path) -> int:
    return tree_bytes(path) if path.is_dir() else path.stat().st_size


def flyrecord_chunks(trace: Path, out: Path) -> dict:
    """Copy the zstd frames of every CPU's flyrecord data into `out`.

    trace.dat v7 (trace-cmd.dat.v7(5)): a compressed buffer's per-CPU data is a u32 count of
    chunks, then per chunk a u32 compressed size, a u32 uncompressed size and the
    compressed bytes; with zstd each chunk is one frame (magic 28 b5 2f fd), so the
    concatenated frames are one stream `zstd -d` reads. `trace-cmd dump --flyrecord`
    prints each CPU's data offset and size, e.g. "   1 1216512	1703053	[id, data offset and size]".
    """
    summary = subprocess.run(["trace-cmd", "dump", "--summary", str(trace)], capture_output=True, text=True).stdout
    m = re.search(r"^\s*(\S+)\s+\[Compression algorithm\]", summary, re.M)
    algo = m.group(1) if m else "none"
    if algo == "none":
        return {"compression": "none", "compressed_bytes": 0, "uncompressed_bytes": 0}
    if algo != "zstd":
        raise RuntimeError(f"{trace}: {algo} compression, the floor is measured for zstd only")
    dump = subprocess.run(["trace-cmd", "dump", "--flyrecord", str(trace)], capture_output=True, text=True).stdout
    spans = [(int(a), int(b)) for a, b in re.findall(r"^\s+\d+\s+(\d+)\s+(\d+)\s+\[id, data offset and size\]", dump, re.M)]
    if not spans:
        raise RuntimeError(f"{trace}: trace-cmd dump --flyrecord printed no per-CPU data offsets")
    comp = uncomp = 0
    # Frame by frame, never a CPU's whole data at once: this process's own peak RSS
    # must stay below every child's it measures (see run()).
    with open(trace, "rb") as f, open(out, "wb") as o:
        for offset, _size in spans:
            f.seek(offset)
            count = int.from_bytes(f.read(4), "little")
            for _ in range(count):
                head = f.read(8)
                c = int.from_bytes(head[:4], "little")
                uncomp += int.from_bytes(head[4:8], "little")
                at = f.tell()
                frame = f.read(c)
                if frame[:4] != b"\x28\xb5\x2f\xfd":
                    raise RuntimeError(f"{trace}: no zstd frame at offset {at}")
                o.write(frame)
                comp += c
    return {"compression": "zstd", "compressed_bytes": comp, "uncompressed_bytes": uncomp, "cpus": len(spans)}


def _zstd_decompress() -> list[str]:
    """zstd -d at its fastest. From 1.5.3 the CLI hands reads and writes to a second
    thread (asyncio): on this 2-CPU VM, kernel 6.18.44-fc-v669, 7.7 MB of flyrecord
    chunks (110 MB out) took 0.28-0.34 s with it (5,621 context switches) and 0.06-0.07 s
    with --no-asyncio (4), the speed of `zstd -b`'s in-memory decompression."""
    help_text = subprocess.run(["zstd", "-H"], capture_output=True, text=True).stdout
    return ["zstd", "-q", "-d", "-c", *(["--no-asyncio"] if "[no-]asyncio" in help_text else [])]


ZSTD_DECOMPRESS = _zstd_decompress() if shutil.which("zstd") else ["zstd", "-q", "-d", "-c"]


def summarize(samples: list[tuple[float, int]]) -> dict:
    return {
        "seconds": statistics.median(s for s, _ in samples),
        "runs": [round(s, 4) for s, _ in samples],
        "peak_rss_mib": None if any(r is None for _, r in samples) else round(max(r for _, r in samples) / 1024, 1),
    }


def bench_capture(trace: Path, runs: int, runs_large: int, trace_dump: Path | None) -> dict:
    adv = advisor_cmd()
    tmp = Path(tempfile.mkdtemp(prefix="wa-real-"))
    try:
        chunks = tmp / "flyrecord.zst"
        floor_info = flyrecord_chunks(trace, chunks)
        floor_cmd = [*ZSTD_DECOMPRESS, str(chunks)] if floor_info["compression"] == "zstd" else ["cat", str(trace)]
        subprocess.run(["cat", str(trace)], stdout=subprocess.DEVNULL, check=True)  # page cache warm
        events_seen = int(subprocess.run([PY, "-c", PARSE_ONLY, str(trace)], capture_output=True, text=True, check=True).stdout.split()[0])
        n = runs_large if events_seen >= LARGE_EVENTS else runs
        cache = tmp / "cache"
        store = tmp / "store.duckdb"
        env_cache = {**os.environ, "WRITEBACK_ADVISOR_CACHE": str(cache)}
        steps: dict[str, dict] = {
            "floor": {"cmd": floor_cmd},
            "trace_cmd_report": {"cmd": ["trace-cmd", "report", str(trace)]},
            "trace_cmd_report_raw": {"cmd": ["trace-cmd", "report", "-R", str(trace)]},
            "parse_only": {"cmd": [PY, "-c", PARSE_ONLY, str(trace)]},
            "ingest": {"cmd": [*adv, "ingest", str(trace), "-o", str(store), "--force"], "env": env_cache},
            "analyze_first": {"cmd": [*adv, "analyze", str(trace)], "env": env_cache, "fresh_cache": True},
        }
        if trace_dump:
            steps["trace_dump_parquet"] = {
                "cmd": [str(trace_dump), "parquet", "--trace", str(trace), "--trace-format", "tracedat"],
                "cwd_fresh": True,
            }
        samples: dict[str, list] = {k: [] for k in steps}
        sizes: dict[str, int] = {}
        peer_error = None
        load_before = os.getloadavg()
        for i in range(n):
            for name, s in steps.items():
                cwd = None
                if s.get("fresh_cache"):
                    shutil.rmtree(cache, ignore_errors=True)
                if s.get("cwd_fresh"):
                    cwd = tmp / "parquet"
                    shutil.rmtree(cwd, ignore_errors=True)
                    cwd.mkdir()
                try:
                    samples[name].append(run(s["cmd"], env=s.get("env"), cwd=str(cwd) if cwd else None))
                except RuntimeError as e:
                    if name != "trace_dump_parquet":
                        raise
                    # the peer failing on a capture is a result, not the end of the run
                    peer_error = str(e)
                    print(f"  trace-dump failed: {e}", file=sys.stderr)
                if name == "ingest":
                    # a file, or whatever the store puts beside or under its path
                    sizes["store_bytes"] = sum(path_bytes(p) for p in tmp.glob("store.duckdb*"))
                if name == "trace_dump_parquet" and peer_error is None:
                    sizes["parquet_bytes"] = tree_bytes(cwd)
            print(f"  run {i + 1}/{n}: " + ", ".join(f"{k} {v[-1][0]:.2f}s" for k, v in samples.items() if v), file=sys.stderr, flush=True)
        sizes["cache_bytes"] = tree_bytes(cache)
        # the capture is now in the cache (the last first-analyze put it there)
        q_samples: dict[str, list] = {k: [] for k in QUERIES}
        for _ in range(n):
            for name, q in QUERIES.items():
                q_samples[name].append(run([*adv, "sql", str(trace), q, "-f", "csv"], env=env_cache))
        count = subprocess.run(
            [*adv, "sql", str(trace), "select count(*) from events", "-f", "csv"],
            env=env_cache, capture_output=True, text=True, check=True,
        ).stdout.split()
        events = int(count[-1])
        load_after = os.getloadavg()
        if tree_bytes(cache) != sizes["cache_bytes"]:
            sizes["cache_bytes_after_queries"] = tree_bytes(cache)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = {k: summarize(v) for k, v in samples.items() if v}
    if peer_error:
        res["trace_dump_parquet_error"] = peer_error
    res["queries"] = {k: summarize(v) for k, v in q_samples.items()}
    floor = res["floor"]["seconds"]
    tc_raw = res["trace_cmd_report_raw"]["seconds"]
    for k in ("trace_cmd_report", "trace_cmd_report_raw", "trace_dump_parquet", "parse_only", "ingest", "analyze_first"):
        if k in res:
            res[k]["x_floor"] = round(res[k]["seconds"] / floor, 2)
            res[k]["trace_cmd_raw_over_this"] = round(tc_raw / res[k]["seconds"], 2)
    file_bytes = trace.stat().st_size
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "file": os.path.relpath(trace, ROOT),
        "file_bytes": file_bytes,
        "events": events,
        "events_parsed": events_seen,
        "runs": n,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "flyrecord": floor_info,
        **sizes,
        "cache_over_input": round(sizes["cache_bytes"] / file_bytes, 2),
        "results": res,
    }


def bench_blktrace(data: Path, runs: int) -> dict:
    base = data / "big"
    files = sorted(data.glob("big.blktrace.*"))
    if not files:
        raise RuntimeError(f"{data}: no big.blktrace.N files (record them with benchmarks/capture_blktrace_big.sh {data})")
    adv = advisor_cmd()
    tmp = Path(tempfile.mkdtemp(prefix="wa-blk-"))
    cache = tmp / "cache"
    # The advisor's modules run from their compiled bytecode, as an installed package's
    # do: PYTHONDONTWRITEBYTECODE (set in some shells) would have an editable checkout
    # compile them again on every run (about 0.1 s). One warm-up run writes them.
    env_cache = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env_cache["WRITEBACK_ADVISOR_CACHE"] = str(cache)
    subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)
    samples: dict[str, list] = {"blkparse_d_btt": [], "advisor_io": [], "advisor_io_btt_compat": [], "advisor_io_store": []}
    load_before = os.getloadavg()
    try:
        run([*adv, "io", str(base)], env=env_cache)
        store = tmp / "big.duckdb"
        subprocess.run([*adv, "ingest", str(base), "-o", str(store)], env=env_cache, check=True, stdout=subprocess.DEVNULL)
        for _ in range(runs):
            samples["blkparse_d_btt"].append(run(["bash", "-c", BLKPARSE_D_BTT, "bash", str(data)]))
            samples["advisor_io"].append(run([*adv, "io", str(base)], env=env_cache))
            samples["advisor_io_btt_compat"].append(run([*adv, "io", str(base), "--btt-compat"], env=env_cache))
            samples["advisor_io_store"].append(run([*adv, "io", str(store)], env=env_cache))
        records = subprocess.run(
            [*adv, "sql", str(base), "select count(*) from blk_events", "-f", "csv"],
            env=env_cache, capture_output=True, text=True, check=True,
        ).stdout.split()[-1]
        cache_bytes = tree_bytes(cache)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = {k: summarize(v) for k, v in samples.items()}
    for k in ("advisor_io", "advisor_io_btt_compat", "advisor_io_store"):
        # Run by run: each round runs the peer, then each advisor command, so a ratio
        # of one round's times holds when the machine's speed drifts between rounds
        # (shared cores: one round's blkparse + btt took 2.6 s, the next 4.0 s).
        pairs = [bt / io for (bt, _), (io, _) in zip(samples["blkparse_d_btt"], samples[k])]
        res[k]["blkparse_btt_over_this"] = round(statistics.median(pairs), 2)
        res[k]["ratio_runs"] = [round(x, 2) for x in pairs]
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "capture": os.path.relpath(data, ROOT),
        "file_bytes": sum(f.stat().st_size for f in files),
        "records": int(records),
        "cache_bytes": cache_bytes,
        "runs": runs,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "results": res,
    }


def default_captures(samples: int) -> list[Path]:
    real = sorted(DATA.glob("real-*.dat"), key=lambda p: p.stat().st_size)
    dats = sorted((ROOT / "sample_traces").glob("*.dat"), key=lambda p: p.stat().st_size, reverse=True)
    dd = sorted(DATA.glob("dd-*.dat"), key=lambda p: p.stat().st_size)
    return real + dats[:samples] + dd


def markdown(caps: list[dict], blk: list[dict]) -> str:
    """Two tables: wall times with ratios, then memory, queries and sizes."""
    def t(r: dict, k: str, ratios: bool = True) -> str:
        if k not in r:
            return "–"
        x = r[k]
        return f"{x['seconds']:.2f} s" + (f" ({x['x_floor']}×, {x['trace_cmd_raw_over_this']}×)" if ratios else "")

    rows = [
        "Wall time, median; in brackets: × the floor, and how many times faster than `trace-cmd report -R`.",
        "",
        "| capture | events | file | floor | trace-cmd report | report -R | trace-dump → Parquet | parse only | **ingest** | **first analyze** |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in caps:
        r = c["results"]
        floor = "zstd -d" if c["flyrecord"]["compression"] == "zstd" else "cat"
        rows.append(
            f"| {Path(c['file']).name}{' (1 run)' if c['runs'] == 1 else ''} | {c['events'] / 1e6:.2f} M | {c['file_bytes'] / 1e6:.1f} MB "
            f"| {r['floor']['seconds']:.2f} s ({floor}) | {t(r, 'trace_cmd_report')} | {r['trace_cmd_report_raw']['seconds']:.2f} s "
            f"| {t(r, 'trace_dump_parquet')} | {t(r, 'parse_only')} | **{t(r, 'ingest')}** | **{t(r, 'analyze_first')}** |"
        )
    rows += [
        "",
        "Peak RSS (MiB); the three `advisor sql` queries on the cached capture (event counts / block latency / events per second, and their largest peak RSS); sizes.",
        "",
        "| capture | report -R | trace-dump | parse only | **ingest** | **first analyze** | queries | store (ingest -o) | cache | cache / input | Parquet (trace-dump) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    def mib(step: dict | None) -> str:
        """A step's peak RSS; "–" when not run or not measurable (see run())."""
        return "–" if not step or step.get("peak_rss_mib") is None else f"{step['peak_rss_mib']:.0f}"

    for c in caps:
        r = c["results"]
        q = " / ".join(format(v["seconds"], ".2f") for v in r["queries"].values())
        q += f" s, {max(v['peak_rss_mib'] or 0 for v in r['queries'].values()):.0f} MiB"
        pq = f"{c['parquet_bytes'] / 1e6:.1f} MB" if "parquet_bytes" in c else "–"
        rows.append(
            f"| {Path(c['file']).name} | {mib(r.get('trace_cmd_report_raw'))} | {mib(r.get('trace_dump_parquet'))} | {mib(r.get('parse_only'))} "
            f"| **{mib(r.get('ingest'))}** | **{mib(r.get('analyze_first'))}** | {q} | {c['store_bytes'] / 1e6:.1f} MB "
            f"| {c['cache_bytes'] / 1e6:.1f} MB | {c['cache_over_input']}× | {pq} |"
        )
    if blk:
        rows += [
            "",
            "| blktrace capture | records | blkparse -d + btt | **advisor io** (× faster) | advisor io --btt-compat | advisor io STORE (SQL) | RSS: blkparse+btt / advisor io / on the store |",
            "|---|---|---|---|---|---|---|",
        ]
        for b in blk:
            r = b["results"]

            def io(k: str) -> str:
                return f"{r[k]['seconds']:.2f} s ({r[k]['blkparse_btt_over_this']}×)"

            rows.append(
                f"| {b['capture']} ({b['file_bytes'] / 1e6:.0f} MB) | {b['records'] / 1e6:.2f} M | {r['blkparse_d_btt']['seconds']:.2f} s "
                f"| **{io('advisor_io')}** | {io('advisor_io_btt_compat')} | {io('advisor_io_store')} "
                f"| {mib(r['blkparse_d_btt'])} / {mib(r['advisor_io'])} / {mib(r['advisor_io_store'])} MiB |"
            )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("captures", nargs="*", type=Path, help="trace.dat files (default: real, samples, dd)")
    ap.add_argument("--runs", type=int, default=3, help="runs per command (median)")
    ap.add_argument("--runs-large", type=int, default=1, help=f"runs for captures of {LARGE_EVENTS:,} events or more")
    ap.add_argument("--samples", type=int, default=3, help="how many of the largest sample_traces/*.dat")
    ap.add_argument("--trace-dump", type=Path, help=f"LISA's trace-dump binary (default {DEFAULT_TRACE_DUMP} if built)")
    ap.add_argument("--no-trace-dump", action="store_true", help="leave LISA's trace-dump out")
    ap.add_argument(
        "--blktrace", type=Path, action="append", default=[],
        help="a capture_blktrace_big.sh directory (default without CAPTURE arguments: data/blktrace-big if recorded)",
    )
    ap.add_argument("--output", type=Path, default=RESULTS / "real_captures.json")
    ap.add_argument("--append", action="store_true", help="add to the captures already in --output (a later invocation)")
    ap.add_argument("--no-lock", action="store_true", help=f"do not take {LOCK} (a quick check on a small file)")
    args = ap.parse_args()
    trace_dump = args.trace_dump or (DEFAULT_TRACE_DUMP if DEFAULT_TRACE_DUMP.exists() else None)
    if args.no_trace_dump:
        trace_dump = None
    if trace_dump and not trace_dump.exists():
        print(f"real_captures.py: {trace_dump}: no such file", file=sys.stderr)
        raise SystemExit(2)
    for tool in ("trace-cmd", "zstd"):
        if not shutil.which(tool):
            print(f"real_captures.py: {tool} not found on PATH", file=sys.stderr)
            raise SystemExit(2)
    # --blktrace alone measures only the blktrace captures.
    captures = args.captures or ([] if args.blktrace else default_captures(args.samples))
    if not args.captures and not args.blktrace and list((DATA / "blktrace-big").glob("big.blktrace.*")):
        args.blktrace = [DATA / "blktrace-big"]
    for c in captures:
        if not c.is_file():
            print(f"real_captures.py: {c}: no such file", file=sys.stderr)
            raise SystemExit(2)
    compile_bytecode()
    tools = {"trace_cmd": ["trace-cmd", "--version"], "zstd": ["zstd", "--version"]}
    if args.blktrace:
        tools |= {"blkparse": ["blkparse", "-V"], "btt": ["btt", "-V"]}
    now = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(tools),
        "trace_dump": str(trace_dump) if trace_dump else None,
        "load_average_start": os.getloadavg(),
    }
    if args.append and args.output.exists():
        results = json.loads(args.output.read_text())
        # A capture measured again replaces its earlier row.
        again = {os.path.relpath(t.absolute(), ROOT) for t in captures}
        results["captures"] = [c for c in results["captures"] if c["file"] not in again]
        again = {os.path.relpath(d.absolute(), ROOT) for d in args.blktrace}
        results["blktrace"] = [b for b in results.get("blktrace", []) if b["capture"] not in again]
        results.setdefault("invocations", [])
        results["invocations"].append(now)
    else:
        results = {**now, "captures": [], "blktrace": []}

    def save() -> None:
        # after every capture, so an interrupted run keeps what it measured
        results["load_average_end"] = os.getloadavg()
        results["markdown"] = markdown(results["captures"], results["blktrace"])
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")

    try:
        for trace in captures:
            print(f"{trace}", file=sys.stderr, flush=True)
            with heavy_lock(not args.no_lock):
                results["captures"].append(bench_capture(trace.absolute(), args.runs, args.runs_large, trace_dump))
            save()
        for data in args.blktrace:
            print(f"{data}", file=sys.stderr, flush=True)
            with heavy_lock(not args.no_lock):
                results["blktrace"].append(bench_blktrace(data.absolute(), args.runs))
            save()
    except (RuntimeError, subprocess.CalledProcessError, ValueError) as e:
        print(f"real_captures.py: {e}", file=sys.stderr)
        raise SystemExit(2)
    save()
    print(results["markdown"])
    m = now["machine"]
    print(
        f"\n{now['date']}: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, kernel {m['kernel']}; "
        f"load average {now['load_average_start'][0]:.2f} at start, {results['load_average_end'][0]:.2f} at end"
    )


if __name__ == "__main__":
    main()
