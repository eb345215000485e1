"""`advisor ingest --format parquet`: two real captures written into one dataset
directory and queried together by DuckDB, as a fleet would be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from advisor import api
from advisor.store import parquet
from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error

A, B = "sync-xfs-v6.dat", "tracefs-ext4.dat"


def _fleet(tmp_path):
    out = tmp_path / "fleet"
    for sample in (A, B):
        r = advisor("ingest", "--format", "parquet", "-o", str(out), str(SAMPLES / sample))
        assert r.code == 0, r.err
    return out


def _events_per_capture(pattern: str) -> dict:
    rows = duckdb.sql(f"SELECT host, capture, count(*) FROM read_parquet('{pattern}', hive_partitioning = true, "
                      "hive_types_autocast = false) GROUP BY ALL").fetchall()
    return {(h, c): n for h, c, n in rows}


def _truth(sample: str) -> tuple[int, str]:
    r = advisor("sql", str(SAMPLES / sample), "select count(*) from events", "--format", "csv")
    info = advisor("sql", str(SAMPLES / sample), "select value from trace_info where key = 'uname'", "--format", "csv")
    assert r.code == 0 and info.code == 0, r.err + info.err
    return int(r.out.splitlines()[1]), info.out.splitlines()[1].split()[1]


def test_two_captures_queried_together(tmp_path):
    out = _fleet(tmp_path)
    got = _events_per_capture(f"{out}/events/**/*.parquet")
    assert len(got) == 2
    expected = [_truth(A), _truth(B)]
    assert sorted(got.values()) == sorted(n for n, _ in expected)
    assert {h for h, _ in got} == {host for _, host in expected}
    # Every table is its own directory (their columns differ), partitioned host=/capture=.
    for f in out.rglob("*.parquet"):
        table, host, capture = f.relative_to(out).parts[:3]
        assert host.startswith("host=") and capture.startswith("capture=") and f.name == "data.parquet"
    joined = duckdb.sql(
        f"SELECT count(DISTINCT capture) FROM read_parquet('{out}/trace_info/**/*.parquet', hive_partitioning = true) "
        "WHERE key = 'kernel_release'").fetchall()[0][0]
    assert joined == 2


def test_writing_a_capture_again_replaces_it(tmp_path):
    out = _fleet(tmp_path)
    before = _events_per_capture(f"{out}/events/**/*.parquet")
    r = advisor("ingest", "-f", "parquet", "-o", str(out), str(SAMPLES / A))
    assert r.code == 0, r.err
    assert _events_per_capture(f"{out}/events/**/*.parquet") == before


def test_parquet_needs_a_directory(tmp_path):
    line = one_line_error(advisor("ingest", "--format", "parquet", str(SAMPLES / A)))
    assert "-o DIR" in line
    f = tmp_path / "file"
    f.write_text("x")
    assert str(f) in one_line_error(advisor("ingest", "--format", "parquet", "-o", str(f), str(SAMPLES / A)))
    assert "--store-format" in one_line_error(advisor("ingest", "--store-format", "csv", str(SAMPLES / A)))
    assert "--store-format" in one_line_error(advisor("ingest", "--format", "csv", str(SAMPLES / A)))  # the old name


@pytest.mark.parametrize("sample", ["sync-xfs-v6.dat", "tracefs-ext4.trace.txt", "blk-ext4-fsync.bin"])
def test_every_table_is_the_stores(tmp_path, sample):
    """Each file holds its table as `advisor sql` shows it: the same columns, types and rows."""
    out = tmp_path / "fleet"
    r = advisor("ingest", "--store-format", "parquet", "-o", str(out), str(SAMPLES / sample))
    assert r.code == 0, r.err
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "the staging directory is left"
    codecs: set[str] = set()
    with api.open(SAMPLES / sample) as capture:
        con = capture.con
        assert sorted(p.name for p in out.iterdir()) == sorted(parquet.tables_of(con))
        for table in out.iterdir():
            [f] = table.rglob(parquet.FILE)
            file = f"read_parquet('{f}', hive_partitioning = false)"
            assert con.execute(f"DESCRIBE SELECT * FROM {file}").fetchall() == \
                con.execute(f'DESCRIBE SELECT * FROM "{table.name}"').fetchall(), table.name
            differ = con.execute(f'SELECT (SELECT count(*) FROM (SELECT * FROM "{table.name}" EXCEPT ALL SELECT * FROM {file})), '
                                 f'(SELECT count(*) FROM (SELECT * FROM {file} EXCEPT ALL SELECT * FROM "{table.name}"))').fetchall()[0]
            assert differ == (0, 0), table.name
            codecs |= {r[0] for r in con.execute(f"SELECT DISTINCT compression FROM parquet_metadata('{f}')").fetchall()}
    # zstd, which Parquet readers of the last years all take (the store's own files are LZ4).
    assert codecs == {"ZSTD"}, codecs


def test_a_killed_exports_staging_is_removed_by_the_next(tmp_path):
    """SIGKILL leaves the hidden staging directory and its lock file; the next export
    removes them once no process holds the lock, and leaves a live writer's alone."""
    out = tmp_path / "fleet"
    killed, running, unlocked = (out / f".writing-0123456789abcdef-{n}-00c0ffee" for n in (1, 2, 3))
    for d in (killed, running, unlocked):
        (d / "events").mkdir(parents=True)
        (d / "events" / "part.parquet").write_bytes(b"PAR1")
    for d in (killed, running):
        Path(str(d) + ".lock").touch()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)", str(running) + ".lock"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = advisor("ingest", "--store-format", "parquet", "-o", str(out), str(SAMPLES / A))
        assert r.code == 0, r.err
        assert not killed.exists() and not Path(str(killed) + ".lock").exists()
        assert not unlocked.exists()  # a writer takes its lock before making the directory
        assert running.exists() and Path(str(running) + ".lock").exists()
        assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [running.name, running.name + ".lock"]
    finally:
        holder.kill()
        holder.wait()
