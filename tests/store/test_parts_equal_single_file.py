"""The default store (Parquet parts beside a DuckDB catalog) answers exactly as the
self-contained one (`ingest --single-file`: every table inside DuckDB), which is
how stores were written before the parts: on every sample, every table and view
has the same columns, the same types and the same rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from advisor.store import ingest
from tests.store.test_capture_order import INPUTS

#: Differ between any two ingests: the time, and the name of the parts directory.
VOLATILE = ("ingested_at", "parts_token")


def _relations(con, alias: str) -> dict[tuple[str, str], list[tuple[str, str]]]:
    rows = con.execute(
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_catalog = ? ORDER BY table_schema, table_name, ordinal_position",
        [alias],
    ).fetchall()
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, column, dtype in rows:
        out.setdefault((schema, table), []).append((column, dtype))
    return out


def assert_same_stores(a: Path, b: Path, a_is: str, b_is: str) -> None:
    """Every table and view of two stores: the same columns and types, the same rows (as
    a multiset; trace_info without its VOLATILE keys). `a_is`/`b_is` name each store in
    a failure ("in the parts store")."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{a}' AS a (READ_ONLY); ATTACH '{b}' AS b (READ_ONLY)")
    tables_a = _relations(con, "a")
    assert tables_a == _relations(con, "b")
    for (schema, table), columns in tables_a.items():
        name = f'{schema}."{table}"'
        where = f" WHERE key NOT IN {VOLATILE}" if table == "trace_info" else ""
        cols = ", ".join(f'"{c}"' for c, _ in columns)
        n_a, n_b = (con.execute(f"SELECT count(*) FROM {db}.{name}{where}").fetchone()[0] for db in ("a", "b"))
        assert n_a == n_b, f"{name}: {n_a} rows {a_is}, {n_b} {b_is}"
        diff = con.execute(
            f"SELECT count(*) FROM (SELECT {cols} FROM a.{name}{where} EXCEPT ALL SELECT {cols} FROM b.{name}{where})"
        ).fetchone()[0]
        assert diff == 0, f"{name}: {diff} rows differ"
    con.close()


@pytest.mark.parametrize("sample", sorted(INPUTS))
def test_parts_store_equals_single_file_store(sample, tmp_path):
    parts_store, single = tmp_path / "parts.duckdb", tmp_path / "single.duckdb"
    ingest(INPUTS[sample], parts_store)
    ingest(INPUTS[sample], single, single_file=True)
    assert list(tmp_path.glob("parts.duckdb.*.parts")), "the default store writes its tables as Parquet"
    assert not list(tmp_path.glob("single.duckdb.*.parts"))
    assert_same_stores(parts_store, single, "in the parts store", "in the single file")
