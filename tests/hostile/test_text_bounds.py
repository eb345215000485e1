"""ftrace text beyond what the bounds of the hostile-input table show: a
column's type is what most of its lines say (one line cannot retype it), and
a text with old Mac line ends (CR alone) reads like the same text with LF."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.conftest import SAMPLES
from tests.helpers import advisor
from tests.hostile.cases import TEXT, text_retyping_value


def column_type(store: Path, table: str, column: str) -> str:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute(
            "select data_type from information_schema.columns where table_name = ? and column_name = ?", [table, column]
        ).fetchone()[0]


def test_one_hostile_line_does_not_retype_a_column(tmp_path):
    (path,) = text_retyping_value(tmp_path)
    store = tmp_path / "s.duckdb"
    r = advisor("ingest", path, "-o", str(store))
    assert r.code == 2, r.err
    assert column_type(store, "global_dirty_state", "dirty") == "BIGINT"
    with duckdb.connect(str(store), read_only=True) as con:
        nulls, total = con.execute("select count(*) filter (where dirty is null), count(*) from global_dirty_state").fetchone()
        bad = con.execute("select sum(count) from parse_stats where name = 'bad_values'").fetchone()[0]
        partial = con.execute("select value from trace_info where key = 'partial'").fetchone()[0]
    assert (nulls, bad, partial) == (1, 1, "true") and total > 1


def test_cr_only_line_ends(tmp_path):
    lf = (SAMPLES / TEXT).read_bytes()
    cr = tmp_path / "cr.trace.txt"
    cr.write_bytes(lf.replace(b"\n", b"\r"))
    a, b = tmp_path / "lf.duckdb", tmp_path / "cr.duckdb"
    assert advisor("ingest", str(SAMPLES / TEXT), "-o", str(a)).code == 0
    r = advisor("ingest", str(cr), "-o", str(b))
    assert r.code == 0, r.err
    q = "select event, count(*), sum(ts) from events group by 1 order by 1"
    with duckdb.connect(str(a), read_only=True) as ca, duckdb.connect(str(b), read_only=True) as cb:
        assert ca.execute(q).fetchall() == cb.execute(q).fetchall()
