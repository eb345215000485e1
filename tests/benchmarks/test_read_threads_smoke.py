"""benchmarks/read_threads.py runs end to end on one small sample (--runs 1); it times
nothing that is checked: only that every step ran at every thread count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "read_threads.py"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--runs", "1", "--no-lock", "--output", str(tmp_path / "out.json"), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_one_sample_at_two_thread_counts(tmp_path):
    p = run(tmp_path, "--threads", "1,2", "sample_traces/fsync-reclaim-btrfs-v7-zstd.dat")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads((tmp_path / "out.json").read_text())
    assert set(row["results"]) == {"parse_1", "parse_2", "ingest_1", "ingest_2"}
    for step in row["results"].values():
        assert len(step["runs"]) == 1 and step["seconds"] > 0
    assert row["results"]["parse_1"]["speedup_over_1"] == 1.0
    assert "fsync-reclaim-btrfs-v7-zstd.dat" in p.stdout


def test_missing_file_is_one_line_exit_2(tmp_path):
    p = run(tmp_path, "sample_traces/no-such.dat")
    assert p.returncode == 2
    assert p.stderr.strip() == "read_threads.py: sample_traces/no-such.dat: no such file"
