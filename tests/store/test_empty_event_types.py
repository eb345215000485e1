"""An event type the capture recorded but never saw has no stored table, and its view is
still there, empty, with the columns it would have had: on the `-e all` sample, 2,025
of 2,323 recorded types. The populated views of the same store are the reference: the
same common columns, and each field's C type gives the same SQL type in both."""

from __future__ import annotations

import duckdb
import pytest

from advisor.store import ingest
from tests.conftest import SAMPLES

COMMON = ("id", "ts", "cpu", "pid", "tgid", "comm", "flags", "preempt_count")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("all-events") / "store.duckdb"
    ingest([SAMPLES / "all-events-ext4-v7-zstd.dat"], path)
    con = duckdb.connect(str(path), read_only=True)
    yield con
    con.close()


def _columns(con) -> dict[tuple[str, str], list[tuple[str, str]]]:
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, column, dtype in con.execute(
            "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns"
            " ORDER BY table_schema, table_name, ordinal_position").fetchall():
        out.setdefault((schema, table), []).append((column, dtype))
    return out


def test_a_recorded_event_type_without_events_has_an_empty_view_and_no_table(store):
    formats = store.execute("SELECT table_name, events, fields FROM event_formats").fetchall()
    columns = _columns(store)
    empty = [t for t, n, _f in formats if n == 0]
    assert len(formats) == 2323 and len(empty) == 2025
    for table in empty:
        assert ("raw", table) not in columns, f"raw.{table} stored for an event type without events"
        assert store.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] == 0
    assert store.execute("SELECT count(*) FROM events WHERE event IN (SELECT event FROM event_formats WHERE events = 0)").fetchone()[0] == 0


def test_an_empty_view_has_the_columns_the_event_would_have(store):
    formats = store.execute("SELECT table_name, events, fields FROM event_formats").fetchall()
    columns = _columns(store)
    sql_type_of: dict[tuple[str, int, bool], str] = {}  # C type, size, signed → from the populated views
    common_types = None
    for table, events, fields in sorted(formats, key=lambda f: f[1] == 0):  # populated first
        view = columns[("main", table)]
        own = [f for f in fields if not f["name"].startswith("common_")]
        names = {f["name"] for f in own}
        expected_common = [f"common_{c}" if c in names else c for c in COMMON]
        assert [c for c, _t in view[:8]] == expected_common, table
        common_types = common_types or [t for _c, t in view[:8]]
        assert [t for _c, t in view[:8]] == common_types, table
        assert [c for c, _t in view[8:]] == [f["name"] for f in own], table
        for f, (_c, sql_type) in zip(own, view[8:]):
            key = (f["type"], f["size"], f["signed"])
            if events:
                sql_type_of.setdefault(key, sql_type)
            if key in sql_type_of:
                assert sql_type == sql_type_of[key], f"{table}.{f['name']} ({f['type']}): {sql_type}, elsewhere {sql_type_of[key]}"
