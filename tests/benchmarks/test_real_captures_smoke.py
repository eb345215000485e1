"""benchmarks/real_captures.py runs end to end on one small sample (--runs 1); it times
nothing that is checked: only that every step ran and the counts agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "real_captures.py"

pytestmark = pytest.mark.skipif(
    not (shutil.which("trace-cmd") and shutil.which("zstd")), reason="needs trace-cmd and zstd"
)


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--no-lock", "--no-trace-dump", "--output", str(tmp_path / "out.json"), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )


def test_one_zstd_sample(tmp_path):
    p = run(tmp_path, "sample_traces/fsync-reclaim-btrfs-v7-zstd.dat")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out.json").read_text())
    (cap,) = res["captures"]
    # the store holds every event the parser decoded
    assert cap["events"] == cap["events_parsed"] > 0
    fly = cap["flyrecord"]
    assert fly["compression"] == "zstd"
    assert 0 < fly["compressed_bytes"] < cap["file_bytes"] < fly["uncompressed_bytes"]
    steps = cap["results"]
    for step in ("floor", "trace_cmd_report", "trace_cmd_report_raw", "parse_only", "ingest", "analyze_first"):
        assert len(steps[step]["runs"]) == 1
    # A peak RSS is known only above the script's own (a child's ru_maxrss starts from
    # its parent's peak resident size); the advisor's steps load Python, DuckDB and
    # pyarrow. Run from here, the script's getrusage() peak is this pytest process's.
    for step in ("parse_only", "ingest", "analyze_first"):
        assert steps[step]["peak_rss_mib"] > 60
    assert steps["floor"]["peak_rss_mib"] is None or steps["floor"]["peak_rss_mib"] > 0
    assert set(steps["queries"]) == {"event_counts", "block_latency", "events_per_second"}
    assert cap["cache_bytes"] > 0 and cap["store_bytes"] > 0
    assert "fsync-reclaim-btrfs-v7-zstd.dat" in p.stdout


def test_missing_file_is_one_line_exit_2(tmp_path):
    p = run(tmp_path, "sample_traces/no-such.dat")
    assert p.returncode == 2
    assert p.stderr.strip() == "real_captures.py: sample_traces/no-such.dat: no such file"


@pytest.mark.skipif(not (shutil.which("blkparse") and shutil.which("btt")), reason="needs blkparse and btt")
def test_one_blktrace_sample(tmp_path):
    # The layout capture_blktrace_big.sh writes (big.blktrace.N), made of a sample's files.
    data = tmp_path / "blk"
    data.mkdir()
    for cpu in (0, 1):
        (data / f"big.blktrace.{cpu}").symlink_to(ROOT / "sample_traces" / f"blk-ext4-fsync.blktrace.{cpu}")
    p = run(tmp_path, "--blktrace", str(data))
    assert p.returncode == 0, p.stderr
    (blk,) = json.loads((tmp_path / "out.json").read_text())["blktrace"]
    # the store's records: blkparse's "Events (blk-ext4-fsync): 9425 entries" (no notes)
    manifest = json.loads((ROOT / "sample_traces" / "manifest.json").read_text())
    assert blk["records"] == next(m for m in manifest if m["file"] == "blk-ext4-fsync")["blkparse_events_entries"]
    for step in ("blkparse_d_btt", "advisor_io", "advisor_io_btt_compat", "advisor_io_store"):
        assert len(blk["results"][step]["runs"]) == 1
    for step in ("advisor_io", "advisor_io_btt_compat", "advisor_io_store"):
        assert blk["results"][step]["blkparse_btt_over_this"] > 0
        assert len(blk["results"][step]["ratio_runs"]) == 1
    assert "| advisor io STORE (SQL) |" in p.stdout
