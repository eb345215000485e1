"""`advisor sql`: results on stdout in each format, errors as one line."""

from __future__ import annotations

import builtins
import csv
import io
import json

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor, one_line_error

SAMPLE = "tracefs-ext4.dat"
COUNTS = "select event, count(*) as n from events group by 1 order by 1"


def _truth(store_of):
    with duckdb.connect(str(store_of(SAMPLE)), read_only=True) as con:
        return dict(con.execute("select event, count(*) from events group by 1").fetchall())


def test_table_output_has_the_counts(store_of):
    r = advisor("sql", str(SAMPLES / SAMPLE), COUNTS)
    assert r.code == 0, r.err
    truth = _truth(store_of)
    for event, n in truth.items():
        assert any(event in line and str(n) in line for line in r.out.splitlines()), event
    assert sum(truth.values()) == next(m for m in samples() if m["file"] == SAMPLE)["event_count"]


def test_json_is_valid_and_alone_on_stdout(store_of):
    r = advisor("sql", str(SAMPLES / SAMPLE), COUNTS, "--format", "json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert {x["event"]: x["n"] for x in rows} == _truth(store_of)


def test_csv(store_of):
    r = advisor("sql", str(SAMPLES / SAMPLE), COUNTS, "-f", "csv")
    assert r.code == 0, r.err
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert {x["event"]: int(x["n"]) for x in rows} == _truth(store_of)


def test_parquet_to_file(tmp_path, store_of):
    out = tmp_path / "counts.parquet"
    r = advisor("sql", str(SAMPLES / SAMPLE), COUNTS, "-f", "parquet", "-o", str(out))
    assert r.code == 0, r.err
    t = pq.read_table(out).to_pylist()
    assert {x["event"]: x["n"] for x in t} == _truth(store_of)


def test_parquet_needs_a_file():
    line = one_line_error(advisor("sql", str(SAMPLES / SAMPLE), COUNTS, "-f", "parquet"))
    assert "-o" in line


@pytest.mark.parametrize("query", ["select * from no_such_table", "selec 1", "select 1/'a'"])
def test_query_error_is_one_line(query):
    line = one_line_error(advisor("sql", str(SAMPLES / SAMPLE), query))
    assert line.startswith("advisor: error:")


def test_unknown_format():
    line = one_line_error(advisor("sql", str(SAMPLES / SAMPLE), "select 1", "-f", "xml"))
    assert "unknown format" in line


def test_query_from_stdin(store_of):
    r = advisor("sql", str(SAMPLES / SAMPLE), "-f", "json", stdin="select count(*) as n from events")
    assert r.code == 0, r.err
    assert json.loads(r.out) == [{"n": sum(_truth(store_of).values())}]


def test_a_store_file_is_queried_directly(store_of):
    r = advisor("sql", str(store_of(SAMPLE)), "select value from trace_info where key = 'format'", "-f", "csv")
    assert r.code == 0, r.err
    assert r.out.splitlines() == ["value", "trace.dat"]


def test_data_contract_tables(store_of):
    """events, one view per event type with typed fields, trace_info, parse_stats."""
    with duckdb.connect(str(store_of("fio-ext4-v7-zstd.dat")), read_only=True) as con:
        cols = {r[0]: r[1] for r in con.execute("DESCRIBE events").fetchall()}
        assert list(cols) == ["id", "ts", "cpu", "pid", "tgid", "comm", "system", "event", "flags", "preempt_count"]
        assert cols["ts"] == "BIGINT"
        wb = {r[0]: r[1] for r in con.execute("DESCRIBE writeback_dirty_folio").fetchall()}
        assert wb["name"] == "VARCHAR" and wb["ino"] == "UBIGINT" and wb["index"] == "UBIGINT"
        info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
        assert info["kernel_release"] == "6.18.44-fc-v669" and info["clock"] == "local"
        assert con.execute("SELECT count(*) FROM parse_stats WHERE name = 'events'").fetchone()[0] == 2
        # comm comes from saved_cmdlines: fio's events are fio's.
        assert con.execute("SELECT count(*) FROM sys_enter_pwrite64 WHERE comm <> 'fio'").fetchone()[0] == 0


def test_interactive_shell(monkeypatch, capsys, store_of):
    from advisor.cli.repl import Shell

    lines = iter([".tables", ".schema writeback_dirty_folio", "select count(*)", "  from events;", ".mode csv", "select 42 as x;", ".nope", ".quit"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
    with duckdb.connect(str(store_of(SAMPLE)), read_only=True) as con:
        Shell(con, 100).loop()
    out = capsys.readouterr()
    assert "writeback_dirty_folio" in out.out and "view" in out.out
    assert "index" in out.out  # from .schema
    assert "2754" in out.out  # the multi-line query
    assert "x\n42" in out.out  # csv mode
    assert "unknown command" in out.err


def test_device_macros(store_of):
    """Kernel dev_t (major << 20 | minor): block_rq_issue's dev of the loop device is 7:0."""
    with duckdb.connect(str(store_of(SAMPLE)), read_only=True) as con:
        rows = con.execute("SELECT DISTINCT dev_name(dev), dev_major(dev), dev_minor(dev) FROM block_rq_issue").fetchall()
        assert rows == [("7:0", 7, 0)]
        assert con.execute("SELECT ns_to_ms(1500000)").fetchone()[0] == 1.5


BLOCK_LATENCY = "select dev, write, count(*) as n, quantile_cont(d2c_ns, 0.5) as p50 from block_requests group by all order by all"


def test_memory_limit_spills_and_keeps_the_answer(store_of, tmp_path):
    """--memory-limit: DuckDB's limit for the queries; the block-latency query's ASOF
    joins spill to STORE.tmp under it and give the same rows; the sandbox stays locked."""
    store = tmp_path / "s.duckdb"
    store.symlink_to(store_of("sync-fsmark-xfs-run1-v7-zstd.dat"))
    free = advisor("sql", str(store), BLOCK_LATENCY, "-f", "csv")
    assert free.code == 0, free.err
    assert len(free.out.splitlines()) > 1
    bounded = advisor("sql", str(store), BLOCK_LATENCY, "-f", "csv", "--memory-limit", "40MB")
    assert bounded.code == 0, bounded.err
    assert bounded.out == free.out
    setting = advisor("sql", str(store), "select current_setting('memory_limit') as m", "-f", "csv", "--memory-limit", "40MB")
    assert setting.out.splitlines() == ["m", "38.1 MiB"], setting.out
    assert "locked" in one_line_error(advisor("sql", str(store), "set memory_limit = '10GB'", "--memory-limit", "40MB"))


def test_memory_limit_too_small_or_bad_is_one_line(store_of):
    store = str(store_of("sync-fsmark-xfs-run1-v7-zstd.dat"))
    assert "Out of Memory" in one_line_error(advisor("sql", store, BLOCK_LATENCY, "--memory-limit", "5MB"))
    line = one_line_error(advisor("sql", store, "select 1", "--memory-limit", "lots"))
    assert "--memory-limit 'lots'" in line


def test_a_wide_result_on_a_narrow_terminal_keeps_every_column_and_number():
    """40 columns at COLUMNS=80 printed only the last, and a timestamp folded over lines
    ("8222/6891/8275/77"): every column and every number comes out whole, the table
    wider than the terminal."""
    query = "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(40)) + ", 1320670565467 AS ts"
    r = advisor("sql", str(SAMPLES / "sync-xfs-v6.dat"), query, env={"COLUMNS": "80"})
    assert r.code == 0, r.err
    header, values = r.out.splitlines()[:2]
    assert header.split() == [f"c{i}" for i in range(40)] + ["ts"]
    assert values.split() == [str(i) for i in range(40)] + ["1320670565467"]
