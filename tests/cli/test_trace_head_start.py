"""`advisor ingest` and `advisor analyze` on a trace.dat: its reading begins before the
CLI loads (advisor/cli/head_start.py), and the store built from that early reading is
the store built without it. Every CLI test that ingests a trace.dat on a plain command
line goes through it too (tests.helpers.advisor runs the installed entry point)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from advisor import parsers
from advisor.cli import head_start
from advisor.store import ingest, store_for
from advisor.store_settings import BATCH_ROWS, MAX_PENDING_BYTES
from tests.conftest import SAMPLES

TRACE = str(SAMPLES / "fio-ext4-v7-zstd.dat")
TEXT = str(SAMPLES / "tracefs-ext4.trace.txt")


@pytest.fixture(autouse=True)
def nothing_started(monkeypatch, tmp_path):
    monkeypatch.setattr(parsers, "_early", {})
    monkeypatch.setattr(parsers, "_digests", {})
    monkeypatch.setenv("WRITEBACK_ADVISOR_CACHE", str(tmp_path / "cache"))


def contents(store: Path) -> list:
    """Every table's rows, as sorted text: the store's whole content."""
    with duckdb.connect(str(store), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'raw' ORDER BY 1").fetchall()]
        assert len(names) > 10, names
        return [(n, sorted(map(str, con.execute(f"SELECT * FROM {n}").fetchall()))) for n in names]


@pytest.mark.parametrize("argv", [
    ["ingest", TRACE, "-o", "{out}"],
    ["ingest", "--json", TRACE, "--output={out}", "-n", "5", "--strict", "--store-format", "duckdb"],
    ["ingest", TRACE, "--force"],
    ["analyze", TRACE],
    ["analyze", "-k", "5.10.7", TRACE, "--json", "--rule", "stable-page-wait", "--fail-on", "affected"],
])
def test_plain_lines_start_reading_and_ingest_takes_it_over(argv, tmp_path):
    out = tmp_path / "early.duckdb"
    head_start.start([a.format(out=out) for a in argv])
    assert list(parsers._early) == [TRACE]
    ingest([Path(TRACE)], out)
    assert parsers._early == {}  # taken over, once
    ingest([Path(TRACE)], tmp_path / "plain.duckdb")  # read from the start, no head start
    assert contents(out) == contents(tmp_path / "plain.duckdb")


@pytest.mark.parametrize("argv", [
    ["ingest", TRACE, "--single-file", "-o", "{out}"],  # an option it does not know
    ["ingest", TRACE, "--store-format", "parquet", "-o", "{dir}"],
    ["ingest", TRACE, "-o"],  # no value
    ["ingest", TRACE, TRACE, "-o", "{out}"],  # two captures
    ["ingest", "-", "-o", "{out}"],  # stdin
    ["ingest", TEXT, "-o", "{out}"],  # ftrace text, not a trace.dat
    ["ingest", str(SAMPLES), "-o", "{out}"],  # a directory
    ["ingest", str(SAMPLES / "no-such.dat"), "-o", "{out}"],
    ["ingest", TRACE, "-o", "{existing}"],  # the command refuses to overwrite it
    ["ingest", "{fifo}", "-o", "{out}"],  # a pipe: what is read here is gone for the command
    ["analyze", TRACE, "--help"],
    ["analyze", TRACE, "--plots", "-x"],
    ["sql", TRACE, "select 1"],
])
def test_other_lines_leave_the_work_to_the_command(argv, tmp_path):
    existing = tmp_path / "existing.duckdb"
    existing.write_bytes(b"")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    head_start.start([a.format(out=tmp_path / "s.duckdb", dir=tmp_path, existing=existing, fifo=fifo) for a in argv])
    assert parsers._early == {}


def test_a_cached_capture_is_not_read_again():
    first = store_for([Path(TRACE)])
    assert not first.cached
    head_start.start(["analyze", TRACE])
    assert parsers._early == {}
    head_start.start(["ingest", TRACE, "--force"])  # --force reads it again
    assert list(parsers._early) == [TRACE]


def test_other_limits_read_the_trace_anew():
    parsers.read_early(TRACE, BATCH_ROWS, MAX_PENDING_BYTES, 1)
    early = parsers.open_trace(Path(TRACE))
    assert isinstance(early, parsers.EarlyTrace) and parsers._early == {}
    plain = parsers.open_trace(Path(TRACE))
    assert [t["name"] for t in early.tables()] == [t["name"] for t in plain.tables()] and early.total_bytes == plain.total_bytes

    def rows(batches) -> dict:
        import pyarrow as pa

        n: dict = {}
        for name, reader in batches:
            n[name] = n.get(name, 0) + pa.RecordBatchReader.from_stream(reader).read_all().num_rows
        return n

    assert rows(early.batches(1000, MAX_PENDING_BYTES, 1)) == rows(plain.batches(BATCH_ROWS, MAX_PENDING_BYTES, 1))


def test_a_digest_is_read_again_when_the_file_changed(tmp_path):
    f = tmp_path / "capture.dat"
    f.write_bytes(b"a" * 4096)
    first = parsers.file_digest(f)
    assert parsers.file_digest(f) == first
    with open(f, "r+b") as w:  # the same size, another byte
        w.write(b"b")
    os.utime(f, ns=(1, 1))  # even with its time set back
    assert parsers.file_digest(f) != first
